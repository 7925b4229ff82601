"""Text rendering of one game of a batch: a readable table for terminals,
logs and the PettingZoo ``render_mode="ansi"`` / ``"human"``."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core import bobs_hat as bh
from ..core.cards import BH_TRUMPS, bh_card_str, oh_card_str
from ..games import Game


def plural(n: int, word: str, words: str | None = None) -> str:
    """``n`` and the word in the number it takes: ``1 card``, ``2 cards``, ``0 tricks``, ``1 hand entry``.

    Every count the terminal, the web page and ``replay`` tell goes through
    it, so none says "1 cards". ``words``: the plural where it is not ``word + "s"``.
    """
    return f"{n} {word if n == 1 else (words or word + 's')}"


def _cards(ids: np.ndarray, name: Any) -> str:
    return " ".join(name(int(c)) for c in np.nonzero(ids)[0]) or "-"


def _hand(state: Any, g: int, p: int, show_hands: bool | int, name: Any) -> str:
    """Seat ``p``'s cards, or just their number when the view hides them."""
    shown = show_hands is True or (show_hands is not False and int(show_hands) == p)
    n = int(state.hands[g, p].sum())
    return _cards(state.hands[g, p], name) if shown else f"({plural(n, 'card')})"


def bid_text(code: int) -> str:
    """A Bob's Hat bid as players type it in ``bobshat play``: ``red+fewest``, ``none``.

    Records keep the rules' names (``most_red``, docs/records.md); the screen
    shows what the player would type, so the table and the prompt agree.
    """
    return "+".join(n.removeprefix("most_") for n in bh.bid_cards(code)) or "none"


def _trick_line(state: Any, g: int, name: Any) -> str:
    """The current trick in play order, from its leader."""
    P = state.trick.shape[1]
    lead = int(state.leader[g])
    played = [
        f"player_{(lead + i) % P} {name(int(state.trick[g, (lead + i) % P]))}" for i in range(int(state.n_in_trick[g]))
    ]
    return f"Trick {int(state.tricks_done[g]) + 1} (led by player_{lead}): " + (", ".join(played) or "-")


def render_bobs_hat(game: Game, state: bh.State, g: int = 0, show_hands: bool | int = True) -> str:
    """Table of game ``g``: trump, hat, bids, trick, cards taken, scores.

    show_hands: True shows every hand (spectator), a seat number shows only
    that seat's hand (a player's view), False shows none.
    """
    cfg = game.config
    P = cfg.players
    phase = int(state.phase[g])
    lines = [
        f"Where's Bob's Hat? - hand {int(state.hand_no[g]) + 1} of {cfg.hands} "
        f"({plural(int(state.hand_size[g]), 'card')} each), dealer: player_{int(state.dealer[g])}"
    ]
    hat = int(state.hat_value[g])
    holder = int(state.hat_holder[g])
    hat_txt = (
        "not chosen yet"
        if hat == 0
        else f"{hat:+d}, " + ("in the centre" if holder < 0 else f"held by player_{holder}")
    )
    to_act = "game over" if phase == bh.DONE else f"player_{int(state.cur[g])} to act"
    lines.append(
        f"Trump: {BH_TRUMPS[int(state.trump[g])]}   Bob's Hat: {hat_txt}   Phase: {bh.PHASE_NAMES[phase]} ({to_act})"
    )
    lines.append(f"{'seat':<10}{'bid':<29}{'taken blue/red/black':<22}{'total':>6}   hand")
    secret = cfg.secret_bidding and phase == bh.BID
    for p in range(P):
        code = int(state.bids[g, p])
        own = show_hands is not True and show_hands is not False and int(show_hands) == p
        if code < 0:
            bid = "-"
        elif secret and not own:  # a player's view still shows the player's own bid
            bid = "(secret)"
        else:
            bid = bid_text(code)
        taken = "/".join(str(int(x)) for x in state.taken[g, p])
        hand = _hand(state, g, p, show_hands, bh_card_str)
        mark = "*" if p == int(state.cur[g]) and phase != bh.DONE else " "
        lines.append(f"{mark}player_{p:<2}{bid:<29}{taken:<22}{int(state.scores[g, p]):>6}   {hand}")
    if phase == bh.PLAY:
        lines.append(_trick_line(state, g, bh_card_str))
    return "\n".join(lines)


def render_oh_hell(game: Game, state: Any, g: int = 0, show_hands: bool | int = True) -> str:
    """Table of Oh Hell game ``g``: trump card, bids, tricks taken, scores."""
    from ..core import oh_hell as oh

    cfg = game.config
    P = cfg.players
    phase = int(state.phase[g])
    lines = [
        f"Oh Hell - hand {int(state.hand_no[g]) + 1} of {cfg.hands} "
        f"({plural(int(state.hand_size[g]), 'card')} each), dealer: player_{int(state.dealer[g])}"
    ]
    trump = int(state.trump_card[g])
    to_act = "game over" if phase == oh.DONE else f"player_{int(state.cur[g])} to act"
    lines.append(f"Trump card: {oh_card_str(trump) if trump >= 0 else '-'}   Phase: {oh.PHASE_NAMES[phase]} ({to_act})")
    lines.append(f"{'seat':<10}{'bid':>5}{'taken':>7}{'total':>7}   hand")
    for p in range(P):
        bid = int(state.bids[g, p])
        hand = _hand(state, g, p, show_hands, oh_card_str)
        mark = "*" if p == int(state.cur[g]) and phase != oh.DONE else " "
        bid_txt = "-" if bid < 0 else str(bid)
        lines.append(f"{mark}player_{p:<2}{bid_txt:>5}{int(state.taken[g, p]):>7}{int(state.scores[g, p]):>7}   {hand}")
    if phase == oh.PLAY:
        lines.append(_trick_line(state, g, oh_card_str))
    return "\n".join(lines)


def render(game: Game, state: Any, g: int = 0, show_hands: bool | int = True) -> str:
    """Table of game ``g`` of a batch, for any game (its description names the renderer)."""
    return game.render(state, g, show_hands)
