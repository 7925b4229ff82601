"""Oh Hell records: the game's adapter (:class:`OhHellRules`), named by its description.

What only this game has in a record (docs/records.md): bids as numbers of
tricks (the dealer's hook rule checked on replay), the turned-up trump card
(never also dealt) and the tricks each seat took.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..config import OhHellConfig
from ..core import oh_hell
from ..core.cards import OH_HELL_DECK, OH_SUITS, oh_card_str, oh_parse_card
from .faults import HandFaults
from .rules import Entries, PreludeStore, RecordRules, bid_order, is_int_list, variant_record
from .steps import step_one

_OH_NAMES = tuple(oh_card_str(c) for c in range(oh_hell.N_CARDS))


class OhHellRules(RecordRules):
    """Oh Hell in records: numeric bids, the turned-up trump card and tricks taken per seat."""

    name = "oh_hell"
    module = oh_hell
    config_cls = OhHellConfig
    config_keys = ("players", "deal_style", "scoring", "first_dealer")
    hand_keys = ("number", "hand_size", "dealer", "trump_card", "deal", "bids", "tricks", "taken", "scores")
    names = np.array(_OH_NAMES, dtype=object)
    n_cards = oh_hell.N_CARDS
    deck = OH_HELL_DECK

    def parse_card(self, text: Any) -> int:
        return oh_parse_card(text)

    def suit_name(self, suit: int) -> str:
        return OH_SUITS[suit]

    def hand_size(self, cfg: OhHellConfig, hand_no: int) -> int:
        return cfg.hand_sizes[hand_no]

    def max_tricks(self, cfg: OhHellConfig) -> int:
        return max(cfg.hand_sizes)

    def config_record(self, cfg: OhHellConfig, first_dealer: int) -> dict[str, Any]:
        return {
            "players": cfg.players,
            "deal_style": cfg.deal_style,
            "scoring": cfg.scoring,
            "first_dealer": int(first_dealer),
            **variant_record(cfg, ("suits", "ranks", "start_size", "hands")),
        }

    # -- recorder
    def trump_of(self, state: oh_hell.State, g: np.ndarray) -> np.ndarray:
        return state.trump_card[g]

    def at_hand_start(self, prev_phase: np.ndarray, state: oh_hell.State, g: np.ndarray) -> np.ndarray:
        # After a hand's first bid exactly one bid is down (or, with one bid per
        # hand impossible, the phase moved on); later bids leave more.
        return (prev_phase[g] == oh_hell.BID) & (state.n_bids[g] == 1)

    def record_prelude(self, rec: PreludeStore, phase: np.ndarray, cur: np.ndarray, actions: np.ndarray) -> None:
        g = np.nonzero(phase == oh_hell.BID)[0]
        if g.size:
            rec.set_bids(g, cur[g], actions[g] - oh_hell.BID_BASE)

    def hand_records(self, entries: Entries, common: list[dict[str, Any]], tricks: list[list[dict]]) -> list:
        taken = entries.taken.tolist()  # the step's closing facts: tricks taken
        trump, bids = entries.trump.tolist(), entries.bids.tolist()
        return [
            {
                "number": c["number"],
                "hand_size": c["hand_size"],
                "dealer": c["dealer"],
                "trump_card": _OH_NAMES[trump[i]],
                "deal": c["deal"],
                "bids": bids[i],
                "tricks": tricks[i],
                "taken": taken[i],
                "scores": c["scores"],
            }
            for i, c in enumerate(common)
        ]

    # -- replay
    def parse_trump(self, hand: dict, fault: HandFaults) -> int | None:
        try:
            return oh_parse_card(hand["trump_card"])
        except ValueError as err:
            fault(f"trump_card: {err}")
            return None

    def check_trump_vs_deal(self, trump: int, owner: np.ndarray, fault: HandFaults) -> bool:
        if owner[trump] >= 0:
            fault(f"the trump card {oh_card_str(trump)} is also dealt to seat {int(owner[trump])}")
            return False
        return True

    def start_hand(
        self, cfg: OhHellConfig, hand_no: int, dealer: int, trump: int, hands: np.ndarray, ctx: dict
    ) -> oh_hell.State:
        st = oh_hell.init(cfg, np.zeros(1, dtype=np.uint64), auto_deal=False)
        st.hand_no[0] = hand_no
        st.dealer[0] = dealer
        oh_hell.deal(cfg, st, np.array([0]), np.array([trump]), hands[None])
        return st

    def replay_prelude(self, cfg: OhHellConfig, state: oh_hell.State, hand: dict, ctx: dict, fault: HandFaults) -> bool:
        P = cfg.players
        bids = hand["bids"]
        if not is_int_list(bids, P):
            fault(f"bids must be a list of {P} numbers of tricks, one per seat, got {bids!r}")
            return False
        size = int(state.hand_size[0])
        for seat in bid_order(state, P):
            bid = bids[seat]
            legal = oh_hell.legal_action_mask(cfg, state)[0]
            if not 0 <= bid <= size:
                fault(f"seat {seat} bid {bid}, but a bid is 0 to the hand size {size}")
                return False
            if not legal[oh_hell.BID_BASE + bid]:
                fault(
                    f"seat {seat} (the dealer) bid {bid}, which the hook rule forbids: "
                    f"the bids would add up to the hand size {size}"
                )
                return False
            step_one(oh_hell, cfg, state, oh_hell.BID_BASE + bid)
        return True

    def check_outcome(self, cfg: OhHellConfig, state: oh_hell.State, hand: dict, fault: HandFaults) -> None:
        want = state.taken[0].astype(int).tolist()
        taken = hand["taken"]
        if not is_int_list(taken, cfg.players):
            fault(f"taken must be {cfg.players} numbers of tricks, got {taken!r}")
        elif taken != want:
            fault(f"taken {taken} but the rules give {want}")
