"""The game's words for people: the table as text, move names, and the telling of each step.

One neutral module (this one) and a file per game, ``text/<name>.py``, which
its description names (:mod:`bobshat_env.games`: ``render`` and
``play_text``). A game's file defines, under the same names in every game:

- ``render(game, state, g, show_hands) -> str``: the table of one game of a
  batch, for terminals, logs and the PettingZoo ``render_mode="ansi"``;
- ``PlayText``: a class ``PlayText(game)`` (the :class:`GameText` protocol
  below) that names moves (``move_name``: as typed in the terminal and posted
  by the web page), reads them back (``parse``, with the reason a move is
  refused), tells what a step did (``event``, ``trick_line``, ``summary``:
  a hand's scoring bid by bid), and gives the web page the card faces and
  the table's facts.

Here: what every game says the same way (``plural``, ``ordinal``,
``seat_name``), the table pieces the renderers share, and
:func:`tell_step`, the story of one step that the terminal game, the web
app and its replays all tell. Everything is plain text: the terminal adds its
own decorations (the ``=== ... ===`` and ``--- ... ---`` rules around the headings).

An adapter floor module (docs/architecture.md): the PettingZoo env renders
through it, so it imports only the core and :mod:`bobshat_env.games`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from ..games import Game


def plural(n: int, word: str, words: str | None = None) -> str:
    """``n`` and the word in the number it takes: ``1 card``, ``2 cards``, ``0 tricks``, ``1 hand entry``.

    Every count the terminal, the web page and ``replay`` tell goes through
    it, so none says "1 cards". ``words``: the plural where it is not ``word + "s"``.
    """
    return f"{n} {word if n == 1 else (words or word + 's')}"


def ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``11th``, ``22nd``: a place in the final totals."""
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def seat_name(p: int, human: int) -> str:
    """How seat ``p`` is named to the person at seat ``human`` (-1: a spectator): ``player_2 (you)``."""
    return f"player_{p} (you)" if p == human else f"player_{p}"


# ==========================================================================
# The table as text (each game's ``render`` builds on these)
def cards_text(ids: np.ndarray, name: Any) -> str:
    """The cards of a 0/1 row, in notation (``name``: the game's ``card_str``), or ``-`` for none."""
    return " ".join(name(int(c)) for c in np.nonzero(ids)[0]) or "-"


def hand_text(state: Any, g: int, p: int, show_hands: bool | int, name: Any) -> str:
    """Seat ``p``'s cards, or just their number when the view hides them."""
    shown = show_hands is True or (show_hands is not False and int(show_hands) == p)
    n = int(state.hands[g, p].sum())
    return cards_text(state.hands[g, p], name) if shown else f"({plural(n, 'card')})"


def trick_text(state: Any, g: int, name: Any) -> str:
    """The current trick in play order, from its leader."""
    P = state.trick.shape[1]
    lead = int(state.leader[g])
    played = [
        f"player_{(lead + i) % P} {name(int(state.trick[g, (lead + i) % P]))}" for i in range(int(state.n_in_trick[g]))
    ]
    return f"Trick {int(state.tricks_done[g]) + 1} (led by player_{lead}): " + (", ".join(played) or "-")


def table_text(
    title: str, game: Game, state: Any, g: int, show_hands: bool | int, info: str, columns: str, row: Any
) -> str:
    """The table of game ``g`` as every game's ``render`` draws it, with the game's own parts.

    ``title``: the game's name on the first line; ``info``: the second line's
    start (trump, ...), before the phase and who is to act; ``columns``: the
    headings between ``seat`` and ``hand``; ``row(p)``: seat ``p``'s cells
    under them. The seat to act is marked ``*``; the current trick closes
    the table during the play.
    """
    mod = game.module
    P, phase, cur = game.config.players, int(state.phase[g]), int(state.cur[g])
    lines = [
        f"{title} - hand {int(state.hand_no[g]) + 1} of {game.config.hands} "
        f"({plural(int(state.hand_size[g]), 'card')} each), dealer: player_{int(state.dealer[g])}",
        f"{info}   Phase: {mod.PHASE_NAMES[phase]} ({'game over' if phase == mod.DONE else f'player_{cur} to act'})",
        f"{'seat':<10}{columns}   hand",
    ]
    for p in range(P):
        mark = "*" if p == cur and phase != mod.DONE else " "
        lines.append(f"{mark}player_{p:<2}{row(p)}   {hand_text(state, g, p, show_hands, mod.card_str)}")
    if phase == mod.PLAY:
        lines.append(trick_text(state, g, mod.card_str))
    return "\n".join(lines)


def render(game: Game, state: Any, g: int = 0, show_hands: bool | int = True) -> str:
    """Table of game ``g`` of a batch, for any game (its description names the renderer).

    show_hands: True shows every hand (spectator), a seat number shows only
    that seat's hand (a player's view), False shows none.
    """
    return game.render(state, g, show_hands)


# ==========================================================================
# Moves read back, and what each step did
class MoveError(ValueError):
    """Typed input that is not a legal move now; the message says why."""


class RenegeQuestion(MoveError):
    """A held card that breaks follow suit: an error, or (``allowed``: renege mode) a renege to confirm."""

    def __init__(self, card: int, message: str, allowed: bool) -> None:
        super().__init__(message)
        self.card = card
        self.allowed = allowed


class GameText(Protocol):
    """What a game's ``PlayText(game)`` answers (``text/bobs_hat.py``, ``text/oh_hell.py``); all plain text.

    ``help``: how to type a move in this game. ``human`` is the seat told as
    "you" (-1 for none); ``snap`` is the state before a step, ``state`` after.
    """

    help: str

    def move_label(self, action: int) -> str: ...  # as the terminal's numbered list shows it
    def move_name(self, action: int) -> str: ...  # its notation: as typed, and the web page's button
    def card_face(self, card: int) -> dict[str, Any]: ...
    def table_facts(self, state: Any, viewer: int | None, dealt: Any = None) -> dict[str, Any]: ...
    def moves_note(self, state: Any, legal: np.ndarray) -> str | None: ...
    def question(self, state: Any) -> str: ...
    def number_is_index(self, state: Any) -> bool: ...
    def parse(self, text: str, state: Any, seat: int, legal: np.ndarray) -> int: ...  # MoveError if refused
    def event(self, snap: Any, action: int, human: int) -> str | None: ...
    def after_step(self, snap: Any, state: Any, human: int) -> list[str]: ...
    def trick_line(
        self, cards: np.ndarray, leader: int, winner: int, human: int, n_trick: int, holder: int = -1
    ) -> str: ...
    def hand_header(self, state: Any, human: int) -> str: ...
    def summary(self, snap: Any, res: Any, after: Any, human: int) -> list[str]: ...
    def renege_lines(self, snap: Any, card: int, human: int) -> list[str]: ...


class PlayTextBase:
    """What every game's ``PlayText`` does alike: it holds the game, and words a trick and a hand's heading."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.cfg = game.config
        self.mod = game.module

    def trick_play(self, cards: np.ndarray, leader: int, winner: int, human: int, n_trick: int) -> str:
        """A finished trick in play order and who won it, without a full stop."""
        P, name = self.cfg.players, self.mod.card_str
        order = [(leader + i) % P for i in range(P)]
        played = ", ".join(f"{seat_name(p, human)} {name(int(cards[p]))}" for p in order)
        return f"Trick {n_trick}: {played} -> {seat_name(winner, human)} wins with {name(int(cards[winner]))}"

    def hand_heading(self, state: Any, human: int) -> str:
        """A new hand's heading, without its trump: ``Hand 2 of 12: 5 cards each, dealer player_1 (you)``."""
        return (
            f"Hand {int(state.hand_no[0]) + 1} of {self.cfg.hands}: "
            f"{plural(int(state.hand_size[0]), 'card')} each, "
            f"dealer {seat_name(int(state.dealer[0]), human)}"
        )


@dataclass
class StepStory:
    """What one step showed, in words: the terminal prints it, the web app logs it and replays show it.

    events: the action (a hat choice, a bid; cards are told with their
    trick), bids revealed, a renege, the trick the step completed.
    summary: the hand's scoring, bid by bid with its reason, when the step
    ended a hand (its first line the heading). header: the next hand's heading, when a new hand was dealt
    (None while it waits to be dealt: a step taken with ``auto_deal=False``).
    hand_scored: the step ended a hand (a renege ends it unscored).
    """

    events: list[str]
    summary: list[str]
    header: str | None
    hand_scored: bool


def tell_step(game: Game, text: GameText, snap: Any, action: int, res: Any, state: Any, human: int) -> StepStory:
    """The story of one step of game 0 of a batch: ``snap`` the state before it, ``state`` after.

    text: the game's play text (``game.play_text()``); human: the seat told
    as "you" (-1 for none). A finished hand's summary reads the step's
    closing facts (``res``), so ``state`` may already hold the next hand.
    """
    events = []
    line = text.event(snap, action, human)
    if line:
        events.append(line)
    events += text.after_step(snap, state, human)
    # the next hand's heading, once it is dealt (a step taken with auto_deal=False leaves it to deal)
    game_over = bool(res.game_done[0]) or int(state.phase[0]) == game.module.DEAL
    if bool(res.renege[0]):
        events += text.renege_lines(snap, action, human)
        return StepStory(events, [], None if game_over else text.hand_header(state, human), False)
    if bool(res.trick_done[0]):
        n_trick = int(snap.tricks_done[0]) + 1
        holder = int(game.module.role_holder(snap)[0])  # before the trick
        events.append(
            text.trick_line(
                res.trick_cards[0], int(res.trick_leader[0]), int(res.trick_winner[0]), human, n_trick, holder
            )
        )
    if not bool(res.hand_done[0]):
        return StepStory(events, [], None, False)
    summary = text.summary(snap, res, state, human)  # the step's closing facts: state may hold the next hand
    return StepStory(events, summary, None if game_over else text.hand_header(state, human), True)


__all__ = [
    "GameText",
    "MoveError",
    "PlayTextBase",
    "RenegeQuestion",
    "StepStory",
    "cards_text",
    "hand_text",
    "ordinal",
    "plural",
    "render",
    "seat_name",
    "table_text",
    "tell_step",
    "trick_text",
]
