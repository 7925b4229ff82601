"""Where's Bob's Hat? records: the game's adapter (:class:`BobsHatRules`), named by its description.

What only this game has in a record (docs/records.md): the dealer's hat
choice, bids as bid cards (``most_red``, ``fewest`` twice for double fewest,
``[]`` for the no-bid option, used once a game), the trump colour, the cards
each seat took by suit and who holds the hat.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..config import BobsHatConfig
from ..core import bobs_hat
from ..core.cards import (
    BH_SUITS,
    BH_TRUMPS,
    BOBS_HAT_DECK,
    bh_card_str,
    bh_hand_size,
    bh_parse_card,
)
from .faults import HandFaults
from .rules import Entries, PreludeStore, RecordRules, bid_order, is_int, is_int_list, variant_record
from .steps import step_one

_BH_NAMES = tuple(bh_card_str(c) for c in range(bobs_hat.N_CARDS))
_BH_BID_CARDS = {code: tuple(bobs_hat.bid_cards(code)) for code in range(bobs_hat.N_BID_CODES)}


class BobsHatRules(RecordRules):
    """Where's Bob's Hat? in records: the hat, bid cards, trump colours and cards taken by suit."""

    name = "bobs_hat"
    module = bobs_hat
    config_cls = BobsHatConfig
    config_keys = ("players", "hands", "first_dealer", "double_fewest", "no_bid", "secret_bidding", "negative_scoring")
    hand_keys = (
        "number",
        "hand_size",
        "dealer",
        "trump",
        "deal",
        "hat",
        "bids",
        "tricks",
        "hat_holder",
        "taken",
        "scores",
    )
    names = np.array(_BH_NAMES, dtype=object)
    n_cards = bobs_hat.N_CARDS
    deck = BOBS_HAT_DECK
    BID_CARDS = (*bobs_hat.BID_NAMES, "fewest")

    def parse_card(self, text: Any) -> int:
        return bh_parse_card(text)

    def suit_name(self, suit: int) -> str:
        return BH_SUITS[suit]

    def hand_size(self, cfg: BobsHatConfig, hand_no: int) -> int:
        return bh_hand_size(hand_no, cfg.hand_size_base)

    def max_tricks(self, cfg: BobsHatConfig) -> int:
        return cfg.max_hand_size

    def config_record(self, cfg: BobsHatConfig, first_dealer: int) -> dict[str, Any]:
        out = {
            "players": cfg.players,
            "hands": cfg.hands,
            "first_dealer": int(first_dealer),
            "double_fewest": cfg.double_fewest,
            "no_bid": cfg.no_bid,
            "secret_bidding": cfg.secret_bidding,
            "negative_scoring": cfg.negative_scoring,
        }
        if cfg.renege_mode:
            out["renege_mode"] = True
        out.update(variant_record(cfg, ("suits", "ranks", "hand_size_base")))
        return out

    # -- recorder
    def trump_of(self, state: bobs_hat.State, g: np.ndarray) -> np.ndarray:
        return state.trump[g]

    def at_hand_start(self, prev_phase: np.ndarray, state: bobs_hat.State, g: np.ndarray) -> np.ndarray:
        return prev_phase[g] == bobs_hat.HAT

    def record_prelude(self, rec: PreludeStore, phase: np.ndarray, cur: np.ndarray, actions: np.ndarray) -> None:
        g = np.nonzero(phase == bobs_hat.HAT)[0]
        if g.size:
            rec.set_extra(g, np.where(actions[g] == bobs_hat.HAT_PLUS, 10, -10))
        g = np.nonzero(phase == bobs_hat.BID)[0]
        if g.size:
            rec.set_bids(g, cur[g], actions[g] - bobs_hat.BID_BASE)

    def hand_records(self, entries: Entries, common: list[dict[str, Any]], tricks: list[list[dict]]) -> list:
        holder = entries.holder.tolist()  # the step's closing facts: taken by suit, the hat holder
        taken_l, trump, hats = entries.taken.tolist(), entries.trump.tolist(), entries.extra.tolist()
        bids = entries.bids.tolist()
        return [
            {
                "number": c["number"],
                "hand_size": c["hand_size"],
                "dealer": c["dealer"],
                "trump": BH_TRUMPS[trump[i]],
                "deal": c["deal"],
                "hat": hats[i],
                "bids": [list(_BH_BID_CARDS[b]) for b in bids[i]],  # fresh lists: records are edited
                "tricks": tricks[i],
                "hat_holder": holder[i] if holder[i] >= 0 else None,
                "taken": taken_l[i],
                "scores": c["scores"],
            }
            for i, c in enumerate(common)
        ]

    # -- replay
    def new_context(self, cfg: BobsHatConfig) -> dict[str, Any]:
        return {"no_bid_used": np.zeros(cfg.players, dtype=bool)}

    def parse_trump(self, hand: dict, fault: HandFaults) -> int | None:
        t = hand["trump"]
        if isinstance(t, str) and t in BH_TRUMPS:
            return BH_TRUMPS.index(t)
        fault(f"unknown trump {t!r}: expected one of {', '.join(BH_TRUMPS)}")
        return None

    def start_hand(
        self, cfg: BobsHatConfig, hand_no: int, dealer: int, trump: int, hands: np.ndarray, ctx: dict
    ) -> bobs_hat.State:
        st = bobs_hat.init(cfg, np.zeros(1, dtype=np.uint64), auto_deal=False)
        st.hand_no[0] = hand_no
        st.dealer[0] = dealer
        st.no_bid_used[0] = ctx["no_bid_used"]
        bobs_hat.deal(cfg, st, np.array([0]), np.array([trump]), hands[None])
        return st

    def _bid_code(self, bid: Any, seat: int, fault: HandFaults) -> int | None:
        if not isinstance(bid, list):
            fault(f"seat {seat}'s bid must be a list of bid cards, got {bid!r}")
            return None
        for b in bid:
            if b not in self.BID_CARDS:
                fault(f"seat {seat} bid {b!r}: a bid card is one of {', '.join(self.BID_CARDS)}")
                return None
        for name in bobs_hat.BID_NAMES:
            if bid.count(name) > 1:
                fault(f"seat {seat} bid {name} {bid.count(name)} times; each most bid card is played once at most")
                return None
        fewest = bid.count("fewest")
        if fewest > 2:
            fault(f"seat {seat} bid fewest {fewest} times; fewest can be bid twice at most (double fewest)")
            return None
        return bobs_hat.bid_code([b for b in bid if b != "fewest"], fewest)

    def replay_prelude(
        self, cfg: BobsHatConfig, state: bobs_hat.State, hand: dict, ctx: dict, fault: HandFaults
    ) -> bool:
        P = cfg.players
        hat = hand["hat"]
        if not is_int(hat) or hat not in (10, -10):
            fault(f"hat is {hat!r}; the dealer chooses 10 or -10")
            return False
        step_one(bobs_hat, cfg, state, bobs_hat.HAT_PLUS if hat == 10 else bobs_hat.HAT_MINUS)
        bids = hand["bids"]
        if not isinstance(bids, list) or len(bids) != P:
            fault(f"bids must be a list of {P} bids, one per seat")
            return False
        for seat in bid_order(state, P):
            code = self._bid_code(bids[seat], seat, fault)
            if code is None:
                return False
            legal = bobs_hat.legal_action_mask(cfg, state)[0]
            if not legal[bobs_hat.BID_BASE + code]:
                if code == 0 and not cfg.no_bid:
                    fault(f"seat {seat} bid nothing ([]), but the no_bid option is off")
                elif code == 0:
                    fault(f"seat {seat} bid nothing ([]), but it already used its no-bid in an earlier hand")
                elif code // 8 == 2:
                    fault(f"seat {seat} bid fewest twice (double fewest), but the double_fewest option is off")
                else:
                    fault(f"seat {seat}'s bid {bids[seat]} is not allowed")
                return False
            step_one(bobs_hat, cfg, state, bobs_hat.BID_BASE + code)
        return True

    def check_outcome(self, cfg: BobsHatConfig, state: bobs_hat.State, hand: dict, fault: HandFaults) -> None:
        P = cfg.players
        want_taken = state.taken[0].astype(int).tolist()
        taken = hand["taken"]
        if not (isinstance(taken, list) and len(taken) == P and all(is_int_list(t, 3) for t in taken)):
            fault(f"taken must be {P} lists of 3 counts (blue, red, black), got {taken!r}")
        elif taken != want_taken:
            fault(f"taken {taken} but the rules give {want_taken}")
        holder = int(state.hat_holder[0])
        want_holder = None if holder < 0 else holder
        got = hand["hat_holder"]
        if got is not None and not is_int(got):
            fault(f"hat_holder must be a seat or null, got {got!r}")
        elif got != want_holder:
            fault(f"hat_holder is {got} but the rules give {want_holder}")

    def after_hand(self, cfg: BobsHatConfig, state: bobs_hat.State | None, hand: dict, scored: bool, ctx: dict) -> None:
        if state is not None:
            ctx["no_bid_used"] = state.no_bid_used[0].copy()
        elif scored and isinstance(hand.get("bids"), list):
            # The hand could not be replayed: take the record's word for who bid nothing.
            for seat, bid in enumerate(hand["bids"][: cfg.players]):
                if bid == []:
                    ctx["no_bid_used"][seat] = True
