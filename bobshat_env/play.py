"""Play in the terminal against the bots: ``bobshat play``.

One human seat, every other seat a bot (any agent spec). Each time it is the
human's turn the table is drawn (trump, Bob's Hat and who holds it, bids, the
current trick, cards taken, scores; only the human's hand is shown) with the
legal moves numbered. A move is typed as its number or in card notation
(docs/rules.md): ``blue14`` / ``QS`` for cards, ``hat+10`` / ``hat-10``
for the dealer's hat choice, ``blue+fewest`` / ``none`` for Bob's Hat bids and
the number of tricks for an Oh Hell bid. Anything else is answered with a
clear message and the question again. After every hand the scoring is
explained bid by bid; at the end the game can be saved as a record
(docs/records.md) that ``bobshat replay`` checks.

Each game draws a fresh seed unless one is given, and prints it first, so
any game can be dealt again with ``--seed``. A ``save`` file is checked
before the first deal (a path that cannot be written is refused before
anyone plays); if saving still fails at the end (a full disk, a folder
removed meanwhile), the record goes to a new file in the current folder or
the temporary folder, and the message says where.

End of input (Ctrl-D) or Ctrl-C ends the game at once and saves nothing.

The input and output streams are parameters, so tests drive a whole game with
scripted input::

    from io import StringIO
    result = play(make_game("bobs_hat", players=3, hands=1), seat=0,
                  opponents=["random", "random"], input=StringIO("1\\n1\\n..."), output=StringIO())
"""

from __future__ import annotations

import json
import os
import re
import secrets
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TextIO

import numpy as np

from .core import bobs_hat as bh
from .core import rng
from .core.cards import (
    BH_IS_HAT_CARD,
    BH_RANKS,
    BH_SUITS,
    BH_TRUMPS,
    OH_HELL_DECK,
    OH_RANK_CHARS,
    OH_SUIT_CHARS,
    OH_SUITS,
    bh_card,
    bh_card_str,
    oh_card_str,
)
from .games import Game
from .paths import check_writable
from .render import bid_text, plural, render
from .seating import SeatDispatch

HUMAN = "human"
_HELP_COMMON = """\
  table (t)       draw the table again
  moves (m)       list your legal moves again
  help (?)        this help
  quit (q)        leave the game (nothing is saved)"""
_BOBS_HAT_HELP = (
    """\
Type your move as its number in the list, or by name:
  blue14, red3    a card: suit (blue, red, black; r, blu, bla will do) and rank 1-20
  hat+10, hat-10  the dealer's choice for Bob's Hat (also +10 / -10)
  blue+fewest     a bid: any of blue, red, black, fewest joined by + (or spaces);
                  fewest+fewest is double fewest, none is the no-bid option
"""
    + _HELP_COMMON
)
_OH_HELL_HELP = (
    """\
Type a card as its number in the list or by name; type a bid as the number of tricks:
  QS, TH, 10H, 2C a card: rank (2-9, T or 10, J, Q, K, A) and suit (C, D, H, S)
  3 (or bid 3)    a bid of three tricks
"""
    + _HELP_COMMON
)


class MoveError(ValueError):
    """Typed input that is not a legal move now; the message says why."""


class _Quit(Exception):
    """The human asked to leave (``quit``), or the input ended."""

    def __init__(self, how: str) -> None:
        super().__init__(how)
        self.how = how


@dataclass
class PlayResult:
    """How a terminal game ended.

    completed: the game was played to its end. totals: the final (or, when
    abandoned, current) totals by seat. record: the game record (docs/records.md),
    None when abandoned. saved: the file the record was appended to, if any
    (a fallback file when the ``save`` path failed at the end). how:
    ``"finished"``, ``"quit"``, ``"eof"`` or ``"interrupt"``. hands: hands
    scored. seed: the seed the game was dealt with (``--seed`` replays it).
    """

    completed: bool
    totals: list[int]
    record: dict | None = None
    saved: str | None = None
    how: str = "finished"
    hands: int = 0
    seed: int | None = None

    @property
    def exit_code(self) -> int:
        """0 for a finished game or ``quit``; 130 for Ctrl-C or end of input."""
        return 0 if self.how in ("finished", "quit") else 130


# ==========================================================================
# Per-game text: move names, parsing, events, hand summaries
def _seat_name(p: int, human: int) -> str:
    return f"player_{p} (you)" if p == human else f"player_{p}"


class _BobsHatText:
    """Move names, input parsing and explanations for Where's Bob's Hat?"""

    help = _BOBS_HAT_HELP

    def __init__(self, game: Game) -> None:
        self.game = game
        self.cfg = game.config

    # -- names
    @staticmethod
    def bid_label(code: int) -> str:
        return bid_text(code)  # as the table shows it

    def move_label(self, action: int) -> str:
        if action < bh.N_CARDS:
            return bh_card_str(action)
        if action == bh.HAT_PLUS:
            return "hat+10"
        if action == bh.HAT_MINUS:
            return "hat-10"
        return self.bid_label(action - bh.BID_BASE)

    def move_name(self, action: int) -> str:
        """The move's notation, as typed and as the web page's button is named (``blue14``, ``hat+10``, ``none``)."""
        return self.move_label(action)

    @staticmethod
    def card_face(card: int) -> dict[str, Any]:
        """How a card is drawn: notation, rank and suit (blue, red, black), and whether it carries Bob's Hat."""
        return {
            "name": bh_card_str(card),
            "rank": str(card % BH_RANKS + 1),
            "suit": BH_SUITS[card // BH_RANKS],
            "symbol": "",
            "hat": bool(BH_IS_HAT_CARD[card]),
        }

    def table_facts(self, state: bh.State, viewer: int | None, dealt: bh.State | None = None) -> dict[str, Any]:
        """What the table shows besides the cards and totals (the web page draws it as given).

        viewer: the seat whose view it is (a secret bid of another seat shows
        as ``(secret)`` during the bidding), None for a spectator who sees all.
        dealt: the state that says which hand it is (its trump), when
        ``state`` is a finished hand that the core has already moved past.
        """
        P = self.cfg.players
        dealt = state if dealt is None else dealt
        me = -1 if viewer is None else viewer
        hat, holder = int(state.hat_value[0]), int(state.hat_holder[0])
        where = "in the centre" if holder < 0 else f"held by {_seat_name(holder, me)}"
        secret = self.cfg.secret_bidding and int(state.phase[0]) == bh.BID
        bids: list[str | None] = []
        for p in range(P):
            code = int(state.bids[0, p])
            if code < 0:
                bids.append(None)
            elif secret and viewer is not None and p != viewer:
                bids.append("(secret)")
            else:
                bids.append(self.bid_label(code))
        return {
            "info": [
                ["Trump", BH_TRUMPS[int(dealt.trump[0])]],
                ["Bob's Hat", "not chosen yet" if hat == 0 else f"{hat:+d}, {where}"],
            ],
            "taken_label": "Taken (blue/red/black)",
            "bids": bids,
            "taken": ["/".join(str(int(x)) for x in state.taken[0, p]) for p in range(P)],
            "marks": [["holds Bob's Hat"] if p == holder else [] for p in range(P)],
        }

    def moves_note(self, state: bh.State, legal: np.ndarray) -> str | None:
        """A word on moves that are not offered (none in Bob's Hat: every option is in the list)."""
        return None

    def question(self, state: bh.State) -> str:
        ph = int(state.phase[0])
        if ph == bh.HAT:
            return "You deal: Bob's Hat at +10 or -10?"
        if ph == bh.BID:
            return "Your bid (e.g. blue+fewest)"
        return "Your card"

    def number_is_index(self, state: bh.State) -> bool:
        return True

    # -- parsing
    def parse(self, text: str, state: bh.State, seat: int, legal: np.ndarray) -> int:
        """The action typed as ``text`` (card, hat choice or bid); MoveError if not legal now."""
        ph = int(state.phase[0])
        t = text.strip().lower()
        hat = self._parse_hat(t)
        card = self._parse_card(t)
        if ph == bh.HAT:
            if hat is not None:
                return hat
            if card is not None:
                raise MoveError("you are the dealer and choose Bob's Hat first: type hat+10 or hat-10")
            raise MoveError(f"{text.strip()!r} is not a hat choice: type hat+10 or hat-10 (or 1 / 2)")
        if ph == bh.BID:
            if card is not None:
                raise MoveError("it is the bidding, not a card: bid e.g. blue, red+fewest or fewest")
            if hat is not None:
                raise MoveError("only the dealer chooses Bob's Hat, and that is done: now bid (e.g. blue+fewest)")
            code = self._parse_bid(t)
            action = bh.BID_BASE + code
            if not legal[action]:
                if code == 0:
                    if not self.cfg.no_bid:
                        raise MoveError("bidding nothing needs the no-bid option (--no-bid): bid at least one card")
                    raise MoveError("you have already used your no-bid this game: bid at least one card")
                if code // 8 == 2:
                    raise MoveError("fewest twice (double fewest) needs the --double-fewest option")
                raise MoveError(f"the bid {self.bid_label(code)} is not allowed")
            return action
        # Card play
        if card is None:
            if hat is not None:
                raise MoveError("Bob's Hat was chosen at the start of the hand: now play a card (e.g. blue14)")
            if self._looks_like_bid(t):
                raise MoveError("the bidding is over: now play a card (e.g. blue14)")
            raise MoveError(f"{text.strip()!r} is not a card: write a suit and a rank, like blue14 or red3")
        if not state.hands[0, seat, card]:
            raise MoveError(f"you do not hold {bh_card_str(card)}")
        if not legal[card]:
            led = BH_SUITS[int(state.led_suit[0])]
            have = " ".join(bh_card_str(c) for c in np.flatnonzero(legal[: bh.N_CARDS]))
            raise _RenegeQuestion(
                card, f"you must follow the suit led, {led}: you hold {have}", allowed=self.cfg.renege_mode
            )
        return card

    @staticmethod
    def _parse_hat(t: str) -> int | None:
        m = re.fullmatch(r"(?:hat\s*)?([+-])\s*(?:10)?|hat\s*(plus|minus)|(plus|minus)", t)
        if not m:
            return None
        sign = m.group(1) or m.group(2) or m.group(3)
        return bh.HAT_PLUS if sign in ("+", "plus") else bh.HAT_MINUS

    @staticmethod
    def _parse_card(t: str) -> int | None:
        m = re.fullmatch(r"([a-z]+)\s*([0-9]{1,2})", t)
        if not m:
            return None
        suits = [s for s, name in enumerate(BH_SUITS) if name.startswith(m.group(1))]
        rank = int(m.group(2))
        if len(suits) != 1 or not 1 <= rank <= BH_RANKS:
            return None
        return bh_card(suits[0], rank)

    @staticmethod
    def _looks_like_bid(t: str) -> bool:
        try:
            _BobsHatText._parse_bid(t)
        except MoveError:
            return False
        return True

    @staticmethod
    def _parse_bid(t: str) -> int:
        t = re.sub(r"^bid\s*:?\s*", "", t)
        if t in ("none", "nothing", "no bid", "no-bid", "no_bid", "nobid", "pass", "[]", "no"):
            return 0
        tokens = [x for x in re.split(r"[+,\s&]+", t) if x]
        if not tokens:
            raise MoveError("type a bid: any of blue, red, black, fewest joined by + (e.g. blue+fewest)")
        most: list[str] = []
        fewest = 0
        for tok in tokens:
            tok = tok.removeprefix("most_").removeprefix("most-").removeprefix("most")
            if tok in ("double_fewest", "double-fewest", "doublefewest", "2fewest", "fewest2"):
                fewest += 2
                continue
            if tok in ("fewest", "few", "f"):
                fewest += 1
                continue
            match = [name for name in BH_SUITS if tok and name.startswith(tok)]
            if len(match) != 1:
                raise MoveError(
                    f"{tok!r} is not a bid card: bid cards are blue, red, black and fewest (e.g. blue+fewest)"
                )
            if "most_" + match[0] in most:
                raise MoveError(f"you have one 'most {match[0]}' bid card: it can be bid once")
            most.append("most_" + match[0])
        if fewest > 2:
            raise MoveError("fewest can be bid twice at most (double fewest)")
        return bh.bid_code(most, fewest)

    # -- events
    def event(self, snap: bh.State, action: int, human: int) -> str | None:
        """One line for what the player to act in ``snap`` just did (None for a card: tricks are shown whole)."""
        p = int(snap.cur[0])
        who = _seat_name(p, human)
        ph = int(snap.phase[0])
        if ph == bh.HAT:
            return f"{who}, the dealer, puts Bob's Hat in the centre at {'+10' if action == bh.HAT_PLUS else '-10'}."
        if ph == bh.BID:
            if self.cfg.secret_bidding and p != human:
                return f"{who} has bid (secret)."
            return f"{who} bids {self.bid_label(action - bh.BID_BASE)}."
        return None

    def after_step(self, snap: bh.State, state: bh.State, human: int) -> list[str]:
        """Lines for what a step revealed beyond its own action (secret bids shown together)."""
        if (
            self.cfg.secret_bidding
            and int(snap.phase[0]) == bh.BID
            and int(snap.n_bids[0]) == self.cfg.players - 1
            and int(state.phase[0]) == bh.PLAY
        ):
            bids = ", ".join(
                f"{_seat_name(p, human)} {self.bid_label(int(state.bids[0, p]))}" for p in range(self.cfg.players)
            )
            return [f"Bids revealed: {bids}."]
        return []

    def trick_line(
        self, cards: np.ndarray, leader: int, winner: int, human: int, n_trick: int, holder: int = -1
    ) -> str:
        """The trick in play order and who won it; ``holder``: who held Bob's Hat before it (-1: the centre).

        A trick with a hat card moves Bob's Hat to its winner, who "takes"
        it, or "keeps" it when it was already theirs.
        """
        P = self.cfg.players
        order = [(leader + i) % P for i in range(P)]
        played = ", ".join(f"{_seat_name(p, human)} {bh_card_str(int(cards[p]))}" for p in order)
        line = f"Trick {n_trick}: {played} -> {_seat_name(winner, human)} wins with {bh_card_str(int(cards[winner]))}"
        hats = [bh_card_str(int(c)) for c in cards if c >= 0 and BH_IS_HAT_CARD[int(c)]]
        if hats:
            verb = "keeps" if winner == holder else "takes"
            line += f" and {verb} Bob's Hat ({' '.join(hats)} in the trick)"
        return line + "."

    def hand_header(self, state: bh.State, human: int) -> str:
        return (
            f"=== Hand {int(state.hand_no[0]) + 1} of {self.cfg.hands}: "
            f"{plural(int(state.hand_size[0]), 'card')} each, "
            f"dealer {_seat_name(int(state.dealer[0]), human)}, trump {BH_TRUMPS[int(state.trump[0])]} ==="
        )

    # -- scoring explained
    def summary(self, snap: bh.State, res: Any, after: bh.State, human: int) -> list[str]:
        """The hand's scoring, bid by bid: ``snap`` the state before the hand's last card, ``res`` that
        step's result (the hand's closing facts), ``after`` the state after it (the totals)."""
        P = self.cfg.players
        taken = res.hand_taken[0].astype(np.int64)  # (P, 3)
        total = taken.sum(axis=1)
        size = int(snap.hand_size[0])
        hat, holder = int(snap.hat_value[0]), int(res.role_holder[0])
        bids = snap.bids[0].astype(np.int64)
        scores = res.rewards[0].astype(np.int64)
        hat_txt = "stayed in the centre" if holder < 0 else f"ends with {_seat_name(holder, human)}"
        lines = [f"--- Hand scoring ({plural(size, 'card')} each; Bob's Hat {hat:+d} {hat_txt}) ---"]
        for p in range(P):
            code = int(bids[p])
            per_suit = ", ".join(f"{int(taken[p, s])} {BH_SUITS[s]}" for s in range(3))
            took = plural(int(total[p]), "card")
            lines.append(f"{_seat_name(p, human)}: bid {self.bid_label(code)}; took {took} ({per_suit})")
            if code == 0:
                lines.append("    no bid this hand: scores 0, Bob's Hat included")
            for s in range(3):
                if code >> s & 1:
                    lines.append("    " + self._most_line(p, s, taken, code, human))
            if code // 8:
                lines.append("    " + self._fewest_line(p, total, code // 8, size, human))
            if holder == p and code != 0:
                lines.append(f"    Bob's Hat: held at the end of the hand: {hat:+d}")
            cum = int(after.scores[0, p])
            lines.append(f"    hand {int(scores[p]):+d}, total {cum}")
        return lines

    def _points(self, p: int, code: int, taken: np.ndarray, size: int) -> int:
        """Points of one bid of seat ``p`` alone, by the core's own scoring."""
        bids = np.full((1, self.cfg.players), 1, dtype=np.int64)
        bids[0, p] = code
        pts = bh.score_hand(self.cfg, bids, taken[None], np.zeros(1), np.full(1, -1), np.array([size]))
        return int(pts[0, p])

    def _most_line(self, p: int, s: int, taken: np.ndarray, code: int, human: int) -> str:
        suit = BH_SUITS[s]
        mine = int(taken[p, s])
        others = [(int(taken[q, s]), q) for q in range(self.cfg.players) if q != p]
        best, best_seat = max(others)
        pts = self._points(p, 1 << s, taken, 1)
        if int(taken[:, s].sum()) == 0:
            return f"most {suit}: no {suit} card was dealt this hand, so the bid is made: {pts:+d}"
        if mine > best:
            return f"most {suit}: made, {mine} {suit} against at most {best} for anyone else: +5 + {mine} = {pts:+d}"
        rival = _seat_name(best_seat, human)
        why = "ties lose" if best == mine else "more"
        if self.cfg.negative_scoring:
            return f"most {suit}: missed, {mine} {suit} but {rival} took {best} ({why}): -5 - {mine} = {pts:+d}"
        return f"most {suit}: missed, {mine} {suit} but {rival} took {best} ({why}): {pts:+d}"

    def _fewest_line(self, p: int, total: np.ndarray, times: int, size: int, human: int) -> str:
        mine = int(total[p])
        others = [(int(total[q]), q) for q in range(self.cfg.players) if q != p]
        low, low_seat = min(others)
        taken = np.zeros((self.cfg.players, 3), dtype=np.int64)
        taken[:, 0] = total
        pts = self._points(p, 8 * times, taken, size)
        name = "double fewest" if times == 2 else "fewest"
        worth = f"2 x {size} = {pts:+d}" if times == 2 else f"{pts:+d} (the hand size)"
        if mine < low:
            return f"{name}: made, {plural(mine, 'card')} against at least {low} for anyone else: {worth}"
        why = "ties lose" if low == mine else "fewer"
        return f"{name}: missed, {plural(mine, 'card')} but {_seat_name(low_seat, human)} took {low} ({why}): {worth}"

    def renege_lines(self, snap: bh.State, card: int, human: int) -> list[str]:
        p = int(snap.cur[0])
        led = BH_SUITS[int(snap.led_suit[0])]
        return [
            f"{_seat_name(p, human)} reneged with {bh_card_str(card)} (did not follow {led}): {bh.RENEGE_PENALTY} "
            "points; the same dealer deals the hand again."
        ]


class _RenegeQuestion(MoveError):
    """A held card that breaks follow suit: an error, or (renege mode) a renege to confirm."""

    def __init__(self, card: int, message: str, allowed: bool) -> None:
        super().__init__(message)
        self.card = card
        self.allowed = allowed


class _OhHellText:
    """Move names, input parsing and explanations for Oh Hell."""

    help = _OH_HELL_HELP

    _SUIT_SYMBOLS = {"♣": "C", "♦": "D", "♥": "H", "♠": "S"}

    def __init__(self, game: Game) -> None:
        self.game = game
        self.cfg = game.config
        self.mod = game.module

    def move_label(self, action: int) -> str:
        if action < self.mod.N_CARDS:
            return oh_card_str(action)
        return f"bid {action - self.mod.BID_BASE}"

    def move_name(self, action: int) -> str:
        """The move's notation, as typed and as the web page's button is named (``QS``, or ``3`` for a bid)."""
        if action < self.mod.N_CARDS:
            return oh_card_str(action)
        return str(action - self.mod.BID_BASE)

    _SYMBOLS = {"clubs": "\u2663", "diamonds": "\u2666", "spades": "\u2660", "hearts": "\u2665"}

    def card_face(self, card: int) -> dict[str, Any]:
        """How a card is drawn: notation, rank (2-9, T, J, Q, K, A), suit name and symbol."""
        suit = OH_SUITS[int(OH_HELL_DECK.suit_of[card])]
        return {
            "name": oh_card_str(card),
            "rank": oh_card_str(card)[:-1],
            "suit": suit,
            "symbol": self._SYMBOLS[suit],
            "hat": False,
        }

    def table_facts(self, state: Any, viewer: int | None, dealt: Any = None) -> dict[str, Any]:
        """What the table shows besides the cards and totals (bids are public in Oh Hell); ``dealt`` as in Bob's Hat."""
        P = self.cfg.players
        trump = int((state if dealt is None else dealt).trump_card[0])
        card = "-" if trump < 0 else f"{oh_card_str(trump)} (trump {OH_SUITS[OH_HELL_DECK.suit_of[trump]]})"
        return {
            "info": [["Trump card", card], ["Scoring", self.cfg.scoring]],
            "taken_label": "Tricks taken",
            "bids": [None if int(state.bids[0, p]) < 0 else str(int(state.bids[0, p])) for p in range(P)],
            "taken": [str(int(state.taken[0, p])) for p in range(P)],
            "marks": [[] for _ in range(P)],
        }

    def moves_note(self, state: Any, legal: np.ndarray) -> str | None:
        """The dealer's barred bid (hook rule), when the bidding leaves one out."""
        if int(state.phase[0]) != self.mod.BID:
            return None
        base = self.mod.BID_BASE
        barred = [b for b in range(int(state.hand_size[0]) + 1) if not legal[base + b]]
        if not barred:
            return None
        return f"{barred[0]} is barred: the bids would add up to the tricks, hook rule"

    def question(self, state: Any) -> str:
        if int(state.phase[0]) == self.mod.BID:
            return f"Your bid, 0-{int(state.hand_size[0])} tricks"
        return "Your card"

    def number_is_index(self, state: Any) -> bool:
        return int(state.phase[0]) != self.mod.BID

    def _parse_card(self, t: str) -> int | None:
        t = t.strip().upper()
        for sym, ch in self._SUIT_SYMBOLS.items():
            t = t.replace(sym, ch)
        m = re.fullmatch(r"(10|[2-9TJQKA])\s*([CDHS])", t)
        if not m:
            return None
        rank = "T" if m.group(1) == "10" else m.group(1)
        return OH_RANK_CHARS.index(rank) * 4 + OH_SUIT_CHARS.index(m.group(2))

    def parse(self, text: str, state: Any, seat: int, legal: np.ndarray) -> int:
        """The action typed as ``text`` (a card, or a bid in the bidding); MoveError if not legal now."""
        mod = self.mod
        t = text.strip().lower()
        card = self._parse_card(t)
        if int(state.phase[0]) == mod.BID:
            if card is not None:
                raise MoveError("it is the bidding, not a card: type the number of tricks you bid")
            m = re.fullmatch(r"(?:bid\s*:?\s*)?([0-9]+)", t)
            if not m:
                raise MoveError(
                    f"{text.strip()!r} is not a bid: type the number of tricks, 0-{int(state.hand_size[0])}"
                )
            bid, size = int(m.group(1)), int(state.hand_size[0])
            if bid > size:
                raise MoveError(f"a bid is 0 to the hand size, {size}")
            if not legal[mod.BID_BASE + bid]:
                raise MoveError(
                    f"as the dealer you may not bid {bid}: the bids would add up to {size}, the number of tricks "
                    "(hook rule)"
                )
            return mod.BID_BASE + bid
        if card is None:
            if re.fullmatch(r"bid\s*:?\s*[0-9]+", t):
                raise MoveError("the bidding is over: now play a card (e.g. QS)")
            raise MoveError(f"{text.strip()!r} is not a card: write a rank and a suit, like QS, TH or 2C")
        if not state.hands[0, seat, card]:
            raise MoveError(f"you do not hold {oh_card_str(card)}")
        if not legal[card]:
            led = OH_SUITS[int(state.led_suit[0])]
            have = " ".join(oh_card_str(c) for c in np.flatnonzero(legal[: mod.N_CARDS]))
            raise MoveError(f"you must follow the suit led, {led}: you hold {have}")
        return card

    def event(self, snap: Any, action: int, human: int) -> str | None:
        if int(snap.phase[0]) == self.mod.BID:
            return f"{_seat_name(int(snap.cur[0]), human)} bids {action - self.mod.BID_BASE}."
        return None

    def after_step(self, snap: Any, state: Any, human: int) -> list[str]:
        return []

    def trick_line(
        self, cards: np.ndarray, leader: int, winner: int, human: int, n_trick: int, holder: int = -1
    ) -> str:
        """The trick in play order and who won it (``holder``: Bob's Hat's, unused here)."""
        P = self.cfg.players
        order = [(leader + i) % P for i in range(P)]
        played = ", ".join(f"{_seat_name(p, human)} {oh_card_str(int(cards[p]))}" for p in order)
        return f"Trick {n_trick}: {played} -> {_seat_name(winner, human)} wins with {oh_card_str(int(cards[winner]))}."

    def hand_header(self, state: Any, human: int) -> str:
        trump = int(state.trump_card[0])
        return (
            f"=== Hand {int(state.hand_no[0]) + 1} of {self.cfg.hands}: "
            f"{plural(int(state.hand_size[0]), 'card')} each, "
            f"dealer {_seat_name(int(state.dealer[0]), human)}, trump card {oh_card_str(trump)} "
            f"(trump {OH_SUITS[OH_HELL_DECK.suit_of[trump]]}) ==="
        )

    def summary(self, snap: Any, res: Any, after: Any, human: int) -> list[str]:
        """The hand's scoring (see the Bob's Hat text's)."""
        scoring = self.cfg.scoring
        rule = {
            "positive": "one point per trick, +10 for making the bid exactly",
            "neutral": "10 + tricks for making the bid exactly, else 0",
            "negative": "10 for making the bid exactly, else -10 per trick off",
        }[scoring]
        lines = [f"--- Hand scoring ({scoring}: {rule}) ---"]
        for p in range(self.cfg.players):
            bid, took = int(snap.bids[0, p]), int(res.hand_taken[0, p])
            pts = int(res.rewards[0, p])
            made = bid == took
            if scoring == "positive":
                how = f"{took} + 10 = {pts:+d}" if made else f"{plural(took, 'trick')} = {pts:+d}"
            elif scoring == "neutral":
                how = f"10 + {took} = {pts:+d}" if made else f"{pts:+d}"
            else:
                how = f"{pts:+d}" if made else f"-10 x {abs(took - bid)} = {pts:+d}"
            verdict = "made" if made else "missed"
            lines.append(
                f"{_seat_name(p, human)}: bid {bid}, took {took}: {verdict}, {how}; total {int(after.scores[0, p])}"
            )
        return lines

    def renege_lines(self, snap: Any, card: int, human: int) -> list[str]:
        return []


def _text_for(game: Game) -> _BobsHatText | _OhHellText:
    return game.play_text()  # the class the game's description names


@dataclass
class StepStory:
    """What one step showed, in the words of the terminal game (the web app tells it the same way).

    events: the action (a hat choice, a bid; cards are told with their
    trick), bids revealed, a renege, the trick the step completed.
    summary: the hand's scoring, bid by bid with its reason, when the step
    ended a hand. header: the next hand's heading, when a new hand was dealt
    (None while it waits to be dealt: a step taken with ``auto_deal=False``).
    hand_scored: the step ended a hand (a renege ends it unscored).
    """

    events: list[str]
    summary: list[str]
    header: str | None
    hand_scored: bool


def tell_step(game: Game, text: Any, snap: Any, action: int, res: Any, state: Any, human: int) -> StepStory:
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


# ==========================================================================
# The game loop
class TerminalGame:
    """One game between a human at ``seat`` and bots, over text streams.

    Args:
        game: the game and its options (:func:`~bobshat_env.games.make_game`).
        seat: the human's seat.
        opponents: one agent per other seat, in seat order (agents or specs
            such as ``"strong"`` or ``"ppo:runs/x/policy.pt"``).
        seed: seed of the deals (and of the bots built from specs); None
            draws a fresh one (:func:`new_seed`). It is printed first.
        input, output: text streams (default the terminal).
        save: JSON Lines file to append the finished game's record to;
            checked here, before any deal (``OutputPathError`` if it cannot
            be written).
    """

    def __init__(
        self,
        game: Game,
        seat: int = 0,
        opponents: Sequence[Any] | None = None,
        seed: int | None = None,
        input: TextIO | None = None,  # noqa: A002 - the natural name, mirrors print(file=)
        output: TextIO | None = None,
        save: str | None = None,
    ) -> None:
        P = game.players
        if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < P:
            raise ValueError(f"seat must be 0-{P - 1} for {P} players, got {seat!r}")
        opponents = list(opponents) if opponents is not None else ["random"] * (P - 1)
        if len(opponents) == 1 and P > 2:
            opponents = opponents * (P - 1)
        if len(opponents) != P - 1:
            raise ValueError(f"name {P - 1} opponents (one per other seat) or one for all, got {len(opponents)}")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
            raise ValueError(f"seed must be a non-negative integer or None (a fresh one), got {seed!r}")
        self.game = game
        self.seat = int(seat)
        self.seed = new_seed() if seed is None else int(seed)
        self.input = input
        self.out = output if output is not None else sys.stdout
        if save is not None:
            check_writable(save, "--save", append=True)
        self.save = save
        self.text = _text_for(game)
        self.state: Any = None  # the game being played (B = 1), set by run()
        self.agents: list[Any] = []
        self.names: list[str] = []
        it = iter(opponents)
        for p in range(P):
            if p == self.seat:
                self.agents.append(None)
                self.names.append(HUMAN)
                continue
            spec = next(it)
            if isinstance(spec, str):
                from agents import make_agent  # noqa: PLC0415 - agents sit above the env package

                self.agents.append(make_agent(spec, game, seed=self.seed * 1000 + p))
                self.names.append(spec)
            else:
                self.agents.append(spec)
                self.names.append(str(getattr(spec, "name", type(spec).__name__)))

    # -- io
    def say(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def ask(self, prompt: str) -> str:
        """One line of input; raises _Quit at the end of the input."""
        if self.input is None:
            if sys.stdin is None or sys.stdin.closed:  # started with stdin closed (`bobshat play <&-`)
                raise _Quit("eof")
            try:
                return input(prompt)
            except EOFError:
                raise _Quit("eof") from None
        self.out.write(prompt)
        self.out.flush()
        line = self.input.readline()
        if not line:
            raise _Quit("eof")
        return line.rstrip("\r\n")

    # -- the human's turn
    def _moves_text(self, legal: np.ndarray, state: Any) -> str:
        acts = np.flatnonzero(legal)
        if not self.text.number_is_index(state):  # Oh Hell bids: the number is the bid
            base = self.game.module.BID_BASE
            bids = " ".join(str(a - base) for a in acts)
            note = self.text.moves_note(state, legal)
            return f"Legal bids: {bids}" + (f" ({note})" if note else "")
        items = [f"{i + 1:>2}) {self.text.move_label(int(a)):<20}" for i, a in enumerate(acts)]
        per_row = 4
        rows = ["".join(items[i : i + per_row]).rstrip() for i in range(0, len(items), per_row)]
        return "Your moves:\n" + "\n".join(rows)

    def _table(self, state: Any) -> None:
        self.say()
        self.say(render(self.game, state, 0, show_hands=self.seat))

    def human_move(self, state: Any) -> int:
        """Show the table and ask until a legal move is typed."""
        legal = self.game.legal_action_mask(state)[0]
        acts = np.flatnonzero(legal)
        self._table(state)
        self.say(self._moves_text(legal, state))
        hint = "number or name, ? for help" if self.text.number_is_index(state) else "? for help"
        prompt = f"{self.text.question(state)} [{hint}]: "
        example = self.text.move_label(int(acts[-1]))
        while True:
            raw = self.ask(prompt)
            t = raw.strip().lower()
            if not t:
                self.say(f"Type a move: its number in the list or its name (e.g. {example}), or ? for help.")
                continue
            if t in ("q", "quit", "exit"):
                raise _Quit("quit")
            if t in ("?", "h", "help"):
                self.say(self.text.help)
                continue
            if t in ("t", "table"):
                self._table(state)
                continue
            if t in ("m", "moves"):
                self.say(self._moves_text(legal, state))
                continue
            if re.fullmatch(r"[0-9]+", t) and self.text.number_is_index(state):
                n = int(t)
                if 1 <= n <= len(acts):
                    return int(acts[n - 1])
                self.say(f"No move {n}: choose a number from 1 to {len(acts)}, or type the move's name.")
                continue
            try:
                return self.text.parse(raw, state, self.seat, legal)
            except _RenegeQuestion as err:
                if not err.allowed:
                    self.say(f"Not allowed: {err}.")
                    continue
                self.say(
                    f"{self.text.move_label(err.card)} breaks follow suit ({err}). With the renege option that is a "
                    f"renege: {self.game.module.RENEGE_PENALTY} points and the hand is dealt again."
                )
                if self.ask("Renege anyway? [y/N]: ").strip().lower() in ("y", "yes"):
                    return err.card
            except MoveError as err:
                self.say(f"Not allowed: {err}.")

    # -- the game
    def run(self) -> PlayResult:
        """Play the game to its end (or until the human leaves)."""
        from .records import Recorder  # noqa: PLC0415 - only a played game needs it

        game, P, human = self.game, self.game.players, self.seat
        state = self.state = game.init(rng.game_keys(self.seed, np.zeros(1, dtype=np.int64), 0))
        recorder = Recorder(game, state, agents=self.names)
        record: dict | None = None
        seats = ", ".join(f"player_{p}: {'you' if p == human else self.names[p]}" for p in range(P))
        self.say(f"{_title(game)} - {P} players ({seats}). Type ? at any prompt for help.")
        self.say(f"Seed {self.seed} (play these deals again with --seed {self.seed}).")
        self.say(self.text.hand_header(state, human))
        hands = 0
        # Bots that declare ``needs_public`` also get the public void record (as in the arena and training).
        dispatch = SeatDispatch(game, 1, self.agents)
        try:
            while not bool(game.done(state)[0]):
                p = int(state.cur[0])
                if p == human:
                    action = self.human_move(state)
                else:
                    legal = game.legal_action_mask(state)
                    obs = game.observe(state)
                    seat = state.cur.astype(np.int64)
                    action = int(dispatch.act_rows(self.agents[p], obs, legal, seat, np.zeros(1, dtype=np.int64))[0])
                snap = state.copy()
                dispatch.before_step(state, np.array([action]))
                res = game.step(state, np.array([action]))
                dispatch.after_step(res.new_hand)
                finished = recorder.record(snap.phase, snap.cur, np.array([action]), res, state)
                if finished:
                    record = finished[0]
                hands += self._report(snap, action, res, state)
        except _Quit as q:
            self.say()
            self.say("Game abandoned: nothing saved." if q.how != "quit" else "You left the game: nothing saved.")
            return PlayResult(False, state.scores[0].astype(int).tolist(), how=q.how, hands=hands, seed=self.seed)
        except KeyboardInterrupt:
            self.say()
            self.say("Interrupted: game abandoned, nothing saved.")
            return PlayResult(False, state.scores[0].astype(int).tolist(), how="interrupt", hands=hands, seed=self.seed)
        totals = state.scores[0].astype(int).tolist()
        self._final(totals)
        saved = self._save(record) if self.save and record is not None else None
        return PlayResult(True, totals, record, saved, hands=hands, seed=self.seed)

    def _save(self, record: dict) -> str | None:
        """Append the record to ``save``; if that fails, to a new file nearby. Returns where it went."""
        from .records import write_jsonl  # noqa: PLC0415

        try:
            write_jsonl(self.save, [record], append=True)
        except OSError as err:
            self.say(f"Could not save the game to {self.save}: {err.strerror or err}.")
        else:
            self.say(f"Game saved to {self.save} (check it with: bobshat replay {self.save}).")
            return self.save
        name = f"bobshat-game-{time.strftime('%Y%m%d-%H%M%S')}-seed{self.seed}.jsonl"
        for folder in (os.getcwd, tempfile.gettempdir):
            try:
                path = os.path.join(folder(), name)
                write_jsonl(path, [record], append=True)
            except OSError:
                continue
            self.say(f"Saved it to {path} instead (check it with: bobshat replay {path}).")
            return path
        self.say("No folder could take it either; here is the record, one JSON line to keep:")
        self.say(json.dumps(record, separators=(",", ":")))
        return None

    def _report(self, snap: Any, action: int, res: Any, state: Any) -> int:
        """Print what one step did; returns 1 if it ended a hand."""
        story = tell_step(self.game, self.text, snap, action, res, state, self.seat)
        for line in story.events:
            self.say(line)
        if story.summary:
            self.say()
            for line in story.summary:
                self.say(line)
        if story.header:
            if story.summary:
                self.say()
            self.say(story.header)
        return int(story.hand_scored)

    def _final(self, totals: list[int]) -> None:
        P = len(totals)
        best = max(totals)
        order = sorted(range(P), key=lambda p: -totals[p])
        self.say()
        self.say("=== Game over: final totals ===")
        for p in order:
            mark = "  <- winner" if totals[p] == best else ""
            name = self.names[p] if len(self.names[p]) <= 24 else "..." + self.names[p][-21:]
            self.say(f"{_seat_name(p, self.seat):<18}{name:<25}{totals[p]:>6}{mark}")
        winners = [p for p in range(P) if totals[p] == best]
        mine = totals[self.seat]
        if self.seat in winners:
            others = plural(len(winners) - 1, "other")
            self.say("You win!" if len(winners) == 1 else f"You share the win with {others}!")
        else:
            place = 1 + sum(t > mine for t in totals)
            self.say(f"You finished {_ordinal(place)} of {P}.")


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _title(game: Game) -> str:
    return game.title


def new_seed() -> int:
    """A fresh seed for a terminal game: 0 to 999,999,999, short enough to type back."""
    return secrets.randbelow(10**9)


def play(
    game: Game,
    seat: int = 0,
    opponents: Sequence[Any] | None = None,
    seed: int | None = None,
    input: TextIO | None = None,  # noqa: A002
    output: TextIO | None = None,
    save: str | None = None,
) -> PlayResult:
    """Play one game in the terminal (or over the given streams); see :class:`TerminalGame`."""
    return TerminalGame(game, seat, opponents, seed, input=input, output=output, save=save).run()


def default_opponent(game: Game) -> str:
    """The strongest bot registered that plays ``game``: ``strong``, else ``simple``, else ``random``."""
    from agents import available, make_agent  # noqa: PLC0415

    names = available()
    for name in ("strong", "simple"):
        if name in names:
            try:
                make_agent(name, game, seed=0)
            except ValueError:  # registered, but not for this game
                continue
            return name
    return "random"


__all__ = [
    "HUMAN",
    "MoveError",
    "PlayResult",
    "StepStory",
    "TerminalGame",
    "default_opponent",
    "new_seed",
    "play",
    "tell_step",
]
