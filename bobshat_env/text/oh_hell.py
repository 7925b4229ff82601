"""Oh Hell in words: its table (``render``) and its play text (``PlayText``), see :mod:`bobshat_env.text`."""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from ..core.cards import OH_HELL_DECK, OH_RANK_CHARS, OH_SUIT_CHARS, OH_SUITS, oh_card_str
from ..games import Game
from . import MoveError, PlayTextBase, plural, seat_name, table_text

HELP = """\
Type a card as its number in the list or by name; type a bid as the number of tricks:
  QS, TH, 10H, 2C a card: rank (2-9, T or 10, J, Q, K, A) and suit (C, D, H, S)
  3 (or bid 3)    a bid of three tricks
"""


def render(game: Game, state: Any, g: int = 0, show_hands: bool | int = True) -> str:
    """Table of Oh Hell game ``g``: trump card, bids, tricks taken, scores."""
    trump = int(state.trump_card[g])

    def row(p: int) -> str:
        bid = int(state.bids[g, p])
        return f"{'-' if bid < 0 else str(bid):>5}{int(state.taken[g, p]):>7}{int(state.scores[g, p]):>7}"

    info = f"Trump card: {oh_card_str(trump) if trump >= 0 else '-'}"
    return table_text("Oh Hell", game, state, g, show_hands, info, f"{'bid':>5}{'taken':>7}{'total':>7}", row)


class PlayText(PlayTextBase):
    """Move names, input parsing and explanations for Oh Hell."""

    help = HELP

    _SUIT_SYMBOLS = {"♣": "C", "♦": "D", "♥": "H", "♠": "S"}

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
            return f"{seat_name(int(snap.cur[0]), human)} bids {action - self.mod.BID_BASE}."
        return None

    def after_step(self, snap: Any, state: Any, human: int) -> list[str]:
        return []

    def trick_line(
        self, cards: np.ndarray, leader: int, winner: int, human: int, n_trick: int, holder: int = -1
    ) -> str:
        """The trick in play order and who won it (``holder``: Bob's Hat's, unused here)."""
        return self.trick_play(cards, leader, winner, human, n_trick) + "."

    def hand_header(self, state: Any, human: int) -> str:
        trump = int(state.trump_card[0])
        return (
            f"{self.hand_heading(state, human)}, trump card {oh_card_str(trump)} "
            f"(trump {OH_SUITS[OH_HELL_DECK.suit_of[trump]]})"
        )

    def summary(self, snap: Any, res: Any, after: Any, human: int) -> list[str]:
        """The hand's scoring (see the Bob's Hat text's)."""
        scoring = self.cfg.scoring
        rule = {
            "positive": "one point per trick, +10 for making the bid exactly",
            "neutral": "10 + tricks for making the bid exactly, else 0",
            "negative": "10 for making the bid exactly, else -10 per trick off",
        }[scoring]
        lines = [f"Hand scoring ({scoring}: {rule})"]
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
                f"{seat_name(p, human)}: bid {bid}, took {took}: {verdict}, {how}; total {int(after.scores[0, p])}"
            )
        return lines

    def renege_lines(self, snap: Any, card: int, human: int) -> list[str]:
        return []
