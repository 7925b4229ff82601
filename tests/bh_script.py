"""Scripted games of Where's Bob's Hat? for the rules tests.

One game (B = 1) driven through the batched core with explicit deals:
``init(cfg, keys, auto_deal=False)``, then :func:`bobs_hat.deal` and
:func:`bobs_hat.step` with ``auto_deal=False``. Cards are written as in
the notation of docs/rules.md (``blue14``, ``red3``), trumps as ``blue``/``red``/
``black``/``none`` and bids as ``+``-joined bid cards: ``blue``, ``red``,
``black``, ``fewest`` (twice for double fewest), or ``none`` for no bid.
"""

from __future__ import annotations

from dataclasses import fields

import numpy as np

from bobshat_env.core import bobs_hat as bh
from bobshat_env.core.cards import BH_N_CARDS, BH_TRUMPS, bh_parse_card
from bobshat_env.core.config import BobsHatConfig

_MOST = {"blue": "most_blue", "red": "most_red", "black": "most_black"}


def cards(text: str) -> list[int]:
    """Card ids of a whitespace-separated list like ``"blue14 red3"``."""
    return [bh_parse_card(t) for t in text.split()]


def hand_row(text: str) -> np.ndarray:
    """(60,) bool: the cards of ``text``."""
    row = np.zeros(BH_N_CARDS, dtype=bool)
    row[cards(text)] = True
    return row


def trump_id(name: str) -> int:
    return BH_TRUMPS.index(name)


def bid_action(text: str) -> int:
    """Action id of a bid like ``"blue+red"``, ``"fewest+fewest"`` or ``"none"``."""
    if text == "none":
        return bh.BID_BASE
    parts = text.split("+")
    most = [_MOST[p] for p in parts if p != "fewest"]
    return bh.BID_BASE + bh.bid_code(most, parts.count("fewest"))


def card_action(text: str) -> int:
    return bh_parse_card(text)


def snapshot(state: bh.State) -> dict[str, np.ndarray]:
    """Copies of every array of the state."""
    return {f.name: getattr(state, f.name).copy() for f in fields(state)}


def assert_unchanged(state: bh.State, before: dict[str, np.ndarray]) -> None:
    for name, arr in before.items():
        now = getattr(state, name)
        assert now.dtype == arr.dtype, name
        assert np.array_equal(now, arr), f"field {name} changed"


class Game:
    """One scripted game (B = 1); every step is checked and recorded."""

    def __init__(self, cfg: BobsHatConfig, key: int = 0):
        self.cfg = cfg
        self.state = bh.init(cfg, np.array([key], dtype=np.uint64), auto_deal=False)
        self.results: list[bh.StepResult] = []
        self.hand_scores: list[list[int]] = []  # rewards of each scored hand
        self.renege_scores: list[list[int]] = []  # rewards of each renege

    # ---- views of game 0
    @property
    def phase(self) -> int:
        return int(self.state.phase[0])

    @property
    def cur(self) -> int:
        return int(self.state.cur[0])

    @property
    def dealer(self) -> int:
        return int(self.state.dealer[0])

    @property
    def scores(self) -> list[int]:
        return self.state.scores[0].tolist()

    @property
    def hat_holder(self) -> int:
        return int(self.state.hat_holder[0])

    def taken(self) -> list[list[int]]:
        return self.state.taken[0].tolist()

    def legal(self) -> list[int]:
        return np.nonzero(bh.legal_action_mask(self.cfg, self.state)[0])[0].tolist()

    def legal_cards(self) -> list[str]:
        return [bh.action_str(a) for a in self.legal() if a < bh.N_CARDS]

    def held(self, seat: int) -> set[str]:
        return {bh.action_str(int(c)) for c in np.nonzero(self.state.hands[0, seat])[0]}

    # ---- actions
    def deal(self, trump: str, hands: list[str]) -> None:
        """Deal the pending hand: ``hands[seat]`` is that seat's cards."""
        assert len(hands) == self.cfg.players
        rows = np.stack([hand_row(h) for h in hands])[None]
        bh.deal(self.cfg, self.state, np.array([0]), np.array([trump_id(trump)]), rows)

    def act(self, action: int) -> bh.StepResult:
        res = bh.step(self.cfg, self.state, np.array([action]), auto_deal=False)
        self.results.append(res)
        if res.hand_done[0]:
            self.hand_scores.append(res.rewards[0].tolist())
        if res.renege[0]:
            self.renege_scores.append(res.rewards[0].tolist())
        return res

    def hat(self, value: int) -> bh.StepResult:
        return self.act({10: bh.HAT_PLUS, -10: bh.HAT_MINUS}[value])

    def bid(self, *bids: str) -> None:
        """Bids in turn order, starting with the seat to act."""
        for b in bids:
            self.act(bid_action(b))

    def play(self, *played: str) -> list[bh.StepResult]:
        """Cards in turn order, starting with the seat to act."""
        return [self.act(card_action(c)) for c in " ".join(played).split()]

    def trick(self, text: str) -> int:
        """Play one whole trick (cards in turn order from the leader); its winner."""
        out = self.play(text)
        assert len(out) == self.cfg.players
        assert out[-1].trick_done[0]
        return int(out[-1].trick_winner[0])

    def hand(self, trump: str, hands: list[str], hat: int, bids: list[str], tricks: list[str]) -> list[int]:
        """A whole scripted hand; returns its scores per seat."""
        self.deal(trump, hands)
        self.hat(hat)
        self.bid(*bids)
        for t in tricks:
            self.trick(t)
        assert self.results[-1].hand_done[0]
        return self.hand_scores[-1]

    def play_out_hand(self, trump: str = "none") -> list[int]:
        """Deal the pending hand from the key's shuffle (given trump) and play it
        with the first legal action every time; returns the hand's scores."""
        tr, hands = bh.random_deal(self.cfg, self.state.key, self.state.hand_no, self.state.attempt)
        bh.deal(self.cfg, self.state, np.array([0]), np.array([trump_id(trump)]), hands)
        n = len(self.hand_scores)
        while len(self.hand_scores) == n:
            self.act(self.legal()[0])
        return self.hand_scores[-1]
