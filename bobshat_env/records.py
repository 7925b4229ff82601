"""Game records (docs/records.md): record batched play, write and read JSON Lines, replay.

A record is one finished game as a JSON object; a records file holds one per
line. Records are how games are shared, audited and turned into data sets, so
two things matter here: the recorder writes exactly the format of docs/records.md,
and the replay trusts nothing in a record but rebuilds every hand with the
batched rules core and reports every disagreement as a :class:`Fault`.

Recording (any batch size, games finishing at different steps)::

    state = bobs_hat.init(cfg, keys)
    rec = Recorder(cfg, state, agents=["random"] * cfg.players)
    while not (state.phase == bobs_hat.DONE).all():
        res, finished = rec.step(state, actions)   # or call record() around core.step
        records.extend(finished)

A driver that steps the core itself snapshots ``phase`` and ``cur`` before the
step and calls :meth:`Recorder.record` after it; a vector env that resets
finished slots calls :meth:`Recorder.start` for them (optional: a slot whose
game finished is ready for the next one). The per-step work is a few array
operations over the batch; Python only runs per finished game, to build its
dict.

Each record's ``seed`` is the game's 64-bit chance key: ``init(cfg,
np.array([seed], dtype=np.uint64))`` deals the same first hand again.

Replay (``bobshat replay FILE``) checks structure, every hat choice, bid and
card against the rules (renege entries included), recomputes every trick's
winner, the hat holder, the cards or tricks taken, every hand's scores and the
totals. It never raises on a corrupt record.

The game-specific parts (hat, bid cards, trump notation, taken by suit or by
trick) live in one small adapter per game (:class:`_BobsHatRules`,
:class:`_OhHellRules`); the recorder and the replay loop are shared.
"""

from __future__ import annotations

import contextvars
import functools
import io
import json
import os
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TextIO

import numpy as np

from .config import BobsHatConfig, ConfigError, OhHellConfig
from .core import bobs_hat, oh_hell
from .core.cards import (
    BH_SUITS,
    BH_TRUMPS,
    BOBS_HAT_DECK,
    OH_HELL_DECK,
    OH_SUITS,
    bh_card_str,
    bh_hand_size,
    bh_parse_card,
    oh_card_str,
    oh_parse_card,
)
from .core.tricks import follow_suit_mask, rotate_dealer
from .games import GAMES, GameDescription, describe, describe_config, load
from .paths import AtomicFile, append_lines, replace_bytes
from .render import plural

FORMAT = 1

__all__ = [
    "FORMAT",
    "Fault",
    "JsonlWriter",
    "Recorder",
    "RecordFormatError",
    "ReplayReport",
    "ReplayStep",
    "read_jsonl",
    "read_records",
    "replay_file",
    "replay_main",
    "replay_record",
    "replay_report",
    "replay_steps",
    "write_jsonl",
]


class RecordFormatError(ValueError):
    """A records file that cannot be read (bad JSON, not an object); the message names the line."""


@dataclass(frozen=True)
class Fault:
    """One disagreement between a record and the rules, or a broken record.

    record: 0-based index of the record in its file or list (None if unknown).
    line: 1-based line in the file (None if not read from a file).
    hand: 1-based hand number the fault is in (None for game-level faults).
    entry: 0-based index into the record's ``hands`` list (differs from
    ``hand - 1`` after a renege, when a hand is dealt again).
    trick: 1-based trick number within the hand (None if not about a trick).
    message: what is wrong, in plain words.
    """

    message: str
    record: int | None = None
    line: int | None = None
    hand: int | None = None
    entry: int | None = None
    trick: int | None = None

    def where(self) -> str:
        """Where the fault is, e.g. ``line 4, hand 3, trick 2``."""
        parts = []
        if self.line is not None:
            parts.append(f"line {self.line}")
        elif self.record is not None:
            parts.append(f"record {self.record}")
        if self.hand is not None:
            again = self.entry is not None and self.entry != self.hand - 1
            parts.append(f"hand {self.hand}" + (f" (hands[{self.entry}])" if again else ""))
        if self.trick is not None:
            parts.append(f"trick {self.trick}")
        return ", ".join(parts)

    def __str__(self) -> str:
        where = self.where()
        return f"{where}: {self.message}" if where else self.message


@dataclass
class ReplayReport:
    """The outcome of replaying one record: its faults and what the rules give."""

    faults: list[Fault]
    game: str | None = None
    players: int | None = None
    hands: int = 0  # hand entries in the record
    totals: list[int] | None = None  # totals by the rules (None if the game could not be set up)
    recorded_totals: list[int] | None = None  # the record's own totals, when they are a list of P integers
    agents: list[str] | None = None

    @property
    def ok(self) -> bool:
        return not self.faults


# ==========================================================================
# Small helpers
def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_int_list(x: Any, n: int) -> bool:
    return isinstance(x, list) and len(x) == n and all(_is_int(v) for v in x)


def _jsonable(x: Any) -> Any:
    """json.dumps fallback for NumPy scalars and arrays."""
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    if isinstance(x, np.bool_):
        return bool(x)
    if isinstance(x, np.ndarray):
        return x.tolist()
    raise TypeError(f"a record holds JSON values only, not {type(x).__name__}")


class _Sink:
    """Collects faults of one record, stamped with where they are."""

    def __init__(self, record: int | None, line: int | None) -> None:
        self.record, self.line = record, line
        self.faults: list[Fault] = []

    def add(self, message: str, hand: int | None = None, entry: int | None = None, trick: int | None = None) -> None:
        self.faults.append(Fault(message, self.record, self.line, hand, entry, trick))


class _HandSink:
    """The faults of one hand entry."""

    def __init__(self, sink: _Sink, hand: int, entry: int) -> None:
        self.sink, self.hand, self.entry = sink, hand, entry
        self.count = 0

    def __call__(self, message: str, trick: int | None = None) -> None:
        self.count += 1
        self.sink.add(message, self.hand, self.entry, trick)


# ==========================================================================
# Per-game adapters
class _GameRules:
    """What the recorder and the replay need to know about one game.

    The shared parts (deal, tricks, scores, totals) are written once in the
    :class:`Recorder` and in :func:`replay_report`; a subclass supplies the
    rest: the config's record form, the trump's notation, what happens
    before the first card (hat, bids) and what is taken.
    """

    name: str
    module: Any
    config_cls: type
    config_keys: tuple[str, ...]
    hand_keys: tuple[str, ...]
    names: np.ndarray  # (N,) object: notation of every card id, for fancy indexing
    n_cards: int
    deck: Any

    # -- notation
    def parse_card(self, text: Any) -> int:
        raise NotImplementedError

    def suit_name(self, suit: int) -> str:
        raise NotImplementedError

    # -- shape of a game
    def hand_size(self, cfg: Any, hand_no: int) -> int:
        raise NotImplementedError

    def max_tricks(self, cfg: Any) -> int:
        raise NotImplementedError

    def config_record(self, cfg: Any, first_dealer: int) -> dict[str, Any]:
        raise NotImplementedError

    def config_from_record(self, data: Any, sink: _Sink) -> Any:
        """The config of a record, or None after adding a fault."""
        if not isinstance(data, dict):
            sink.add(f"config must be an object, got {type(data).__name__}")
            return None
        missing = [k for k in self.config_keys if data.get(k) is None]
        if missing:
            sink.add(f"config is missing key(s) {', '.join(missing)}")
            return None
        try:
            cfg = self.config_cls.from_dict(dict(data))
        except (ConfigError, TypeError) as err:
            sink.add(f"bad config: {err}")
            return None
        if cfg.first_dealer < 0:
            sink.add(f"config first_dealer must be the seat that dealt first (0-{cfg.players - 1}), not -1")
            return None
        return cfg

    # -- recorder hooks
    def trump_of(self, state: Any, g: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def at_hand_start(self, prev_phase: np.ndarray, state: Any, g: np.ndarray) -> np.ndarray:
        """(n,) bool: the step just taken in games ``g`` was a hand's first action."""
        raise NotImplementedError

    def record_prelude(self, rec: Recorder, phase: np.ndarray, cur: np.ndarray, actions: np.ndarray) -> None:
        """Store the non-card actions (hat, bids) of this step; games not acting have phase -1."""
        raise NotImplementedError

    def hand_records(self, rec: Recorder, s: int, common: list[dict[str, Any]], tricks: list[list[dict]]) -> list:
        """The hand entries of finished slot ``s`` from the shared parts (``common``, ``tricks``) per entry."""
        raise NotImplementedError

    # -- replay hooks
    def new_context(self, cfg: Any) -> dict[str, Any]:
        return {}

    def parse_trump(self, hand: dict, fault: _HandSink) -> int | None:
        raise NotImplementedError

    def check_trump_vs_deal(self, trump: int, owner: np.ndarray, fault: _HandSink) -> bool:
        return True

    def start_hand(self, cfg: Any, hand_no: int, dealer: int, trump: int, hands: np.ndarray, ctx: dict) -> Any:
        """A B = 1 state at the start of the hand, dealt explicitly."""
        raise NotImplementedError

    def replay_prelude(self, cfg: Any, state: Any, hand: dict, ctx: dict, fault: _HandSink) -> bool:
        """Step the hat choice and bids; False (after a fault) if the hand cannot go on."""
        raise NotImplementedError

    def check_outcome(self, cfg: Any, state: Any, hand: dict, fault: _HandSink) -> None:
        """Compare what the record says was taken (and the hat) with the rules."""
        raise NotImplementedError

    def after_hand(self, cfg: Any, state: Any | None, hand: dict, scored: bool, ctx: dict) -> None:
        """Carry what later hands need (no-bid use) to the next hand."""


def _bid_order(state: Any, P: int) -> list[int]:
    first = int(state.cur[0])
    return [(first + i) % P for i in range(P)]


def _step1(module: Any, cfg: Any, state: Any, action: int) -> Any:
    watch = _WATCH.get()
    before = state.copy() if watch is not None else None
    res = module.step(cfg, state, np.array([action], dtype=np.int64), auto_deal=False)
    if watch is not None:
        watch.append(ReplayStep(watch.entry, before, action, res, state.copy()))
    return res


@dataclass
class ReplayStep:
    """One action of a replayed record, with the B = 1 states around it (:func:`replay_steps`).

    entry: index into the record's ``hands``. action: None for the deal that
    starts a hand entry (``before`` is then None and ``after`` the fresh
    hand). result: the core's StepResult of the action.
    """

    entry: int
    before: Any
    action: int | None
    result: Any
    after: Any


class _Steps(list):
    """The steps a replay took, kept while :func:`replay_steps` runs (see ``_WATCH``)."""

    entry = 0


# Set only inside replay_steps: the replay then keeps every state it passes through.
_WATCH: contextvars.ContextVar[_Steps | None] = contextvars.ContextVar("bobshat_replay_steps", default=None)


def _watch_deal(entry: int, state: Any) -> None:
    watch = _WATCH.get()
    if watch is not None:
        watch.entry = entry
        watch.append(ReplayStep(entry, None, None, None, state.copy()))


_BH_NAMES = tuple(bh_card_str(c) for c in range(bobs_hat.N_CARDS))
_OH_NAMES = tuple(oh_card_str(c) for c in range(oh_hell.N_CARDS))
_BH_BID_CARDS = {code: tuple(bobs_hat.bid_cards(code)) for code in range(bobs_hat.N_BID_CODES)}


class _BobsHatRules(_GameRules):
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
        return bh_hand_size(hand_no)

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
        return out

    # -- recorder
    def trump_of(self, state: bobs_hat.State, g: np.ndarray) -> np.ndarray:
        return state.trump[g]

    def at_hand_start(self, prev_phase: np.ndarray, state: bobs_hat.State, g: np.ndarray) -> np.ndarray:
        return prev_phase[g] == bobs_hat.HAT

    def record_prelude(self, rec: Recorder, phase: np.ndarray, cur: np.ndarray, actions: np.ndarray) -> None:
        g = np.nonzero(phase == bobs_hat.HAT)[0]
        if g.size:
            rec._extra[g, rec._n_entries[g]] = np.where(actions[g] == bobs_hat.HAT_PLUS, 10, -10)
        g = np.nonzero(phase == bobs_hat.BID)[0]
        if g.size:
            rec._bids[g, rec._n_entries[g], cur[g]] = actions[g] - bobs_hat.BID_BASE

    def hand_records(self, rec: Recorder, s: int, common: list[dict[str, Any]], tricks: list[list[dict]]) -> list:
        n = len(common)
        holder = rec._holder[s, :n].tolist()  # the step's closing facts: taken by suit, the hat holder
        taken_l, trump, hats = rec._taken[s, :n].tolist(), rec._trump[s, :n].tolist(), rec._extra[s, :n].tolist()
        bids = rec._bids[s, :n].tolist()
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

    def parse_trump(self, hand: dict, fault: _HandSink) -> int | None:
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

    def _bid_code(self, bid: Any, seat: int, fault: _HandSink) -> int | None:
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
        self, cfg: BobsHatConfig, state: bobs_hat.State, hand: dict, ctx: dict, fault: _HandSink
    ) -> bool:
        P = cfg.players
        hat = hand["hat"]
        if not _is_int(hat) or hat not in (10, -10):
            fault(f"hat is {hat!r}; the dealer chooses 10 or -10")
            return False
        _step1(bobs_hat, cfg, state, bobs_hat.HAT_PLUS if hat == 10 else bobs_hat.HAT_MINUS)
        bids = hand["bids"]
        if not isinstance(bids, list) or len(bids) != P:
            fault(f"bids must be a list of {P} bids, one per seat")
            return False
        for seat in _bid_order(state, P):
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
            _step1(bobs_hat, cfg, state, bobs_hat.BID_BASE + code)
        return True

    def check_outcome(self, cfg: BobsHatConfig, state: bobs_hat.State, hand: dict, fault: _HandSink) -> None:
        P = cfg.players
        want_taken = state.taken[0].astype(int).tolist()
        taken = hand["taken"]
        if not (isinstance(taken, list) and len(taken) == P and all(_is_int_list(t, 3) for t in taken)):
            fault(f"taken must be {P} lists of 3 counts (blue, red, black), got {taken!r}")
        elif taken != want_taken:
            fault(f"taken {taken} but the rules give {want_taken}")
        holder = int(state.hat_holder[0])
        want_holder = None if holder < 0 else holder
        got = hand["hat_holder"]
        if got is not None and not _is_int(got):
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


class _OhHellRules(_GameRules):
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
        }

    # -- recorder
    def trump_of(self, state: oh_hell.State, g: np.ndarray) -> np.ndarray:
        return state.trump_card[g]

    def at_hand_start(self, prev_phase: np.ndarray, state: oh_hell.State, g: np.ndarray) -> np.ndarray:
        # After a hand's first bid exactly one bid is down (or, with one bid per
        # hand impossible, the phase moved on); later bids leave more.
        return (prev_phase[g] == oh_hell.BID) & (state.n_bids[g] == 1)

    def record_prelude(self, rec: Recorder, phase: np.ndarray, cur: np.ndarray, actions: np.ndarray) -> None:
        g = np.nonzero(phase == oh_hell.BID)[0]
        if g.size:
            rec._bids[g, rec._n_entries[g], cur[g]] = actions[g] - oh_hell.BID_BASE

    def hand_records(self, rec: Recorder, s: int, common: list[dict[str, Any]], tricks: list[list[dict]]) -> list:
        n = len(common)
        taken = rec._taken[s, :n].tolist()  # the step's closing facts: tricks taken
        trump, bids = rec._trump[s, :n].tolist(), rec._bids[s, :n].tolist()
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
    def parse_trump(self, hand: dict, fault: _HandSink) -> int | None:
        try:
            return oh_parse_card(hand["trump_card"])
        except ValueError as err:
            fault(f"trump_card: {err}")
            return None

    def check_trump_vs_deal(self, trump: int, owner: np.ndarray, fault: _HandSink) -> bool:
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

    def replay_prelude(self, cfg: OhHellConfig, state: oh_hell.State, hand: dict, ctx: dict, fault: _HandSink) -> bool:
        P = cfg.players
        bids = hand["bids"]
        if not _is_int_list(bids, P):
            fault(f"bids must be a list of {P} numbers of tricks, one per seat, got {bids!r}")
            return False
        size = int(state.hand_size[0])
        for seat in _bid_order(state, P):
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
            _step1(oh_hell, cfg, state, oh_hell.BID_BASE + bid)
        return True

    def check_outcome(self, cfg: OhHellConfig, state: oh_hell.State, hand: dict, fault: _HandSink) -> None:
        want = state.taken[0].astype(int).tolist()
        taken = hand["taken"]
        if not _is_int_list(taken, cfg.players):
            fault(f"taken must be {cfg.players} numbers of tricks, got {taken!r}")
        elif taken != want:
            fault(f"taken {taken} but the rules give {want}")


def _rules_for(game: Any) -> tuple[_GameRules, Any]:
    """The adapter and config of a Game or of a game config."""
    cfg = getattr(game, "config", game)
    try:
        description = describe_config(cfg)
    except TypeError:
        got = type(game).__name__
        raise TypeError(f"expected a game (bobshat_env.games.Game) or a game config, got {got}") from None
    return _adapter(description), cfg


def _rules_named(name: Any) -> _GameRules | None:
    """The adapter of the game a record names, or None for an unknown game."""
    return _adapter(describe(name)) if isinstance(name, str) and name in GAMES else None


@functools.cache
def _adapter(description: GameDescription) -> _GameRules:
    """One (stateless) instance of the adapter class the game's description names."""
    return load(description.record_rules)()


# ==========================================================================
# Recording
_ENTRY_ARRAYS = (
    "_hand_no",
    "_dealer",
    "_trump",
    "_owner",
    "_extra",
    "_bids",
    "_plays",
    "_n_plays",
    "_leaders",
    "_winners",
    "_scores",
    "_renege",
    "_taken",
    "_holder",
)


class Recorder:
    """Turns batched play into record dicts (docs/records.md), one per finished game.

    Args:
        game: a :class:`~bobshat_env.games.Game` or a ``BobsHatConfig`` /
            ``OhHellConfig``.
        state: the batch's state right after ``init`` (gives the batch size).
        ids, seed: what the arena's ``recorder_factory(game, state, ids)``
            knows; accepted so that it can pass them, not needed: a record's
            ``seed`` is its game's own chance key, which redeals it whatever
            keys the driver chose (``rng.game_keys`` or explicit duplicates).
        agents: names of the agents by seat, written in every record
            (default ``"unknown"``); :meth:`start` can change them per slot.
        keep: keep finished records for :meth:`records` (else only returned
            by :meth:`record`).

    Record every step of a game from its first action: call :meth:`record`
    (or :meth:`observe_step`, or let :meth:`step` do both) after each core
    step. Per-hand data sits in arrays with a hand-entry axis that grows if
    reneges need more entries; nothing loops over the batch per step.
    """

    def __init__(
        self,
        game: Any,
        state: Any,
        ids: np.ndarray | None = None,
        *,
        seed: int | None = None,
        agents: list[str] | None = None,
        keep: bool = True,
    ) -> None:
        self.rules, self.cfg = _rules_for(game)
        self.players = P = self.cfg.players
        self.batch_size = B = int(state.phase.shape[0])
        default = self._check_agents(agents) if agents is not None else ["unknown"] * P
        self._agents: list[list[str]] = [list(default) for _ in range(B)]
        self._seeds: list[int | None] = [None] * B
        self.keep = keep
        self._done: list[dict] = []
        T = self.rules.max_tricks(self.cfg)
        E = self.cfg.hands + 2
        self._n_entries = np.zeros(B, dtype=np.int64)  # hand entries closed so far = index of the open one
        self._open = np.zeros(B, dtype=bool)  # a hand entry is being recorded
        self._skip = np.zeros(B, dtype=bool)  # joined mid-game: ignored until the game ends
        self._key = np.zeros(B, dtype=np.uint64)
        # (B, E, ...) per hand entry
        self._hand_no = np.zeros((B, E), dtype=np.int16)
        self._dealer = np.zeros((B, E), dtype=np.int8)
        self._trump = np.zeros((B, E), dtype=np.int8)
        self._owner = np.full((B, E, self.rules.n_cards), -1, dtype=np.int8)  # seat dealt each card, -1 undealt
        self._extra = np.zeros((B, E), dtype=np.int8)  # Bob's Hat: the hat value
        self._bids = np.full((B, E, P), -1, dtype=np.int8)
        self._plays = np.full((B, E, T * P), -1, dtype=np.int8)  # cards in play order
        self._n_plays = np.zeros((B, E), dtype=np.int16)
        self._leaders = np.full((B, E, T), -1, dtype=np.int8)
        self._winners = np.full((B, E, T), -1, dtype=np.int8)
        self._scores = np.zeros((B, E, P), dtype=np.int32)
        self._renege = np.zeros((B, E), dtype=bool)
        # the closing facts of each ended hand, as the core's step reported them
        self._taken = np.zeros((B, E, P, *state.taken.shape[2:]), dtype=np.int8)  # the hand's state.taken
        self._holder = np.full((B, E), -1, dtype=np.int8)  # Bob's Hat: the hat holder at the end, -1 centre

    # -- setup
    def _check_agents(self, agents: Any) -> list[str]:
        if not (isinstance(agents, (list, tuple)) and len(agents) == self.players):
            raise ValueError(f"agents must name one agent per seat ({self.players}), got {agents!r}")
        return [str(a) for a in agents]

    def start(
        self,
        slots: np.ndarray | list[int] | None = None,
        seeds: list[int | None] | None = None,
        agents: list[str] | list[list[str]] | None = None,
    ) -> None:
        """Record a fresh game in ``slots`` (default all), dropping anything in progress there.

        Call it when a slot is reset to a new game that is to be recorded with
        other names or seeds; a slot whose game finished is ready for the
        next game without it. seeds: one per slot (None = the game's key).
        agents: one list of names for all the slots, or one list per slot.
        """
        idx = np.arange(self.batch_size) if slots is None else np.asarray(slots, dtype=np.int64).reshape(-1)
        self._reset_slots(idx)
        if seeds is not None:
            if len(seeds) != idx.size:
                raise ValueError(f"seeds must give one seed per slot ({idx.size}), got {len(seeds)}")
            for i, s in zip(idx.tolist(), seeds):
                if s is not None and not _is_int(s):
                    raise ValueError(f"a seed is an integer or None, got {s!r}")
                self._seeds[i] = None if s is None else int(s)
        else:
            for i in idx.tolist():
                self._seeds[i] = None
        if agents is not None:
            per_slot = bool(agents) and isinstance(agents[0], (list, tuple))
            if per_slot and len(agents) != idx.size:
                raise ValueError(f"agents must give one list per slot ({idx.size}), got {len(agents)}")
            for n, i in enumerate(idx.tolist()):
                self._agents[i] = self._check_agents(agents[n] if per_slot else agents)

    def _reset_slots(self, idx: np.ndarray) -> None:
        self._n_entries[idx] = 0
        self._open[idx] = False
        self._skip[idx] = False

    def _grow(self) -> None:
        """Double the hand-entry axis (reneges can make a game longer than its hands)."""
        for name in _ENTRY_ARRAYS:
            a = getattr(self, name)
            setattr(self, name, np.concatenate([a, np.zeros_like(a)], axis=1))

    def _open_entries(self, g: np.ndarray, state: Any) -> None:
        if self._n_entries[g].max() >= self._hand_no.shape[1]:
            self._grow()
        e = self._n_entries[g]
        self._hand_no[g, e] = state.hand_no[g]
        self._dealer[g, e] = state.dealer[g]
        self._trump[g, e] = self.rules.trump_of(state, g)
        hands = state.hands[g]  # (n, P, N): untouched until the first card
        self._owner[g, e] = np.where(hands.any(axis=1), hands.argmax(axis=1), -1)
        self._extra[g, e] = 0
        self._bids[g, e] = -1
        self._plays[g, e] = -1
        self._n_plays[g, e] = 0
        self._leaders[g, e] = -1
        self._winners[g, e] = -1
        self._scores[g, e] = 0
        self._renege[g, e] = False
        self._taken[g, e] = 0
        self._holder[g, e] = -1
        first = g[e == 0]
        self._key[first] = state.key[first]
        self._open[g] = True

    # -- per step
    def record(
        self,
        prev_phase: np.ndarray,
        prev_cur: np.ndarray,
        actions: np.ndarray,
        result: Any,
        state: Any,
        active: np.ndarray | None = None,
    ) -> list[dict]:
        """Take in one core step; returns the records of the games it finished.

        prev_phase, prev_cur: copies of ``state.phase`` and ``state.cur``
        taken before the step (the core changes the state in place).
        actions, result, active: what went into and came out of ``step``;
        state: the state after it.
        """
        P = self.players
        mod = self.rules.module
        phase = np.asarray(prev_phase).astype(np.int64)
        cur = np.asarray(prev_cur).astype(np.int64)
        actions = np.asarray(actions).astype(np.int64).reshape(-1)
        acting = (phase == mod.BID) | (phase == mod.PLAY) | (phase == getattr(mod, "HAT", -99))
        if active is not None:
            acting &= np.asarray(active, dtype=bool)
        acting &= ~self._skip

        g = np.nonzero(acting & ~self._open)[0]
        if g.size:
            fresh = self.rules.at_hand_start(phase, state, g)
            # A game's first entry must be hand 1's first deal; else it joined mid-game.
            first_deal = state.hand_no[g] == 0
            if self.cfg.renege_mode:  # a renege deals hand 1 again (attempt 1, 2, ...)
                first_deal &= state.attempt[g] == 0
            fresh &= (self._n_entries[g] > 0) | first_deal
            self._skip[g[~fresh]] = True
            acting[g[~fresh]] = False
            if fresh.any():
                self._open_entries(g[fresh], state)

        self.rules.record_prelude(self, np.where(acting, phase, -1), cur, actions)

        g = np.nonzero(acting & (phase == mod.PLAY))[0]
        if g.size:
            e = self._n_entries[g]
            k = self._n_plays[g, e].astype(np.int64)
            self._plays[g, e, k] = actions[g]
            lead = k % P == 0
            self._leaders[g[lead], e[lead], k[lead] // P] = cur[g[lead]]
            self._n_plays[g, e] += 1
            t = np.nonzero(np.asarray(result.trick_done)[g])[0]
            if t.size:
                gt = g[t]
                self._winners[gt, e[t], k[t] // P] = np.asarray(result.trick_winner)[gt]

        renege = np.asarray(result.renege, dtype=bool)
        h = np.nonzero(acting & (np.asarray(result.hand_done, dtype=bool) | renege))[0]
        if h.size:
            e = self._n_entries[h]
            self._scores[h, e] = np.asarray(result.rewards)[h]
            self._renege[h, e] = renege[h]
            self._taken[h, e] = result.hand_taken[h]
            self._holder[h, e] = result.role_holder[h]
            self._n_entries[h] += 1
            self._open[h] = False

        done = np.asarray(result.game_done, dtype=bool)
        out: list[dict] = []
        over = np.nonzero(done & (acting | self._skip))[0]
        if over.size:
            for s in over.tolist():
                if not self._skip[s]:
                    out.append(self._build(s))
            self._reset_slots(over)
            if self.keep:
                self._done.extend(out)
        return out

    def observe_step(
        self, before: tuple[np.ndarray, np.ndarray], actions: Any, active: Any, res: Any, state: Any
    ) -> None:
        """The arena's hook: ``before`` is ``(phase, cur)`` copied before the step."""
        self.record(before[0], before[1], actions, res, state, active=active)

    def step(
        self, state: Any, actions: np.ndarray, active: np.ndarray | None = None, auto_deal: bool = True
    ) -> tuple[Any, list[dict]]:
        """Step the core and record the step: returns its StepResult and the games it finished."""
        phase, cur = state.phase.copy(), state.cur.copy()
        res = self.rules.module.step(self.cfg, state, actions, active=active, auto_deal=auto_deal)
        return res, self.record(phase, cur, actions, res, state, active=active)

    def records(self) -> list[dict]:
        """The finished games' records kept so far (and forget them)."""
        out, self._done = self._done, []
        return out

    # -- building a record (per finished game)
    def _build(self, s: int) -> dict:
        P = self.players
        rules = self.rules
        names = rules.names
        n = int(self._n_entries[s])
        n_plays = self._n_plays[s, :n].tolist()
        cards = names[self._plays[s, :n]].tolist()  # (n, T * P) notation; id -1 names the last card, never read
        leaders = self._leaders[s, :n].tolist()
        winners = self._winners[s, :n].tolist()
        hand_no = self._hand_no[s, :n].tolist()
        dealer = self._dealer[s, :n].tolist()
        scores = self._scores[s, :n].tolist()
        # Each seat's cards in id order: sort by (seat, id), undealt cards last.
        owner = self._owner[s, :n].astype(np.int64)
        N = owner.shape[1]
        order = np.argsort(np.where(owner >= 0, owner * N, P * N) + np.arange(N), axis=1)
        dealt = names[order].tolist()
        common, tricks = [], []
        for e in range(n):
            m = n_plays[e]
            tricks.append(
                [
                    {
                        "leader": leaders[e][k],
                        "cards": cards[e][k * P : min(m, (k + 1) * P)],
                        "winner": winners[e][k] if winners[e][k] >= 0 else None,
                    }
                    for k in range((m + P - 1) // P)
                ]
            )
            size = rules.hand_size(self.cfg, hand_no[e])
            common.append(
                {
                    "number": hand_no[e] + 1,
                    "hand_size": size,
                    "dealer": dealer[e],
                    "deal": [dealt[e][p * size : (p + 1) * size] for p in range(P)],
                    "scores": scores[e],
                }
            )
        hands = rules.hand_records(self, s, common, tricks)
        for e in np.nonzero(self._renege[s, :n])[0].tolist():
            last = tricks[e][-1]
            seat = (last["leader"] + len(last["cards"]) - 1) % P
            hands[e]["renege"] = {"seat": seat, "card": last["cards"][-1]}
        first_dealer = (dealer[0] - hand_no[0]) % P
        seed = self._seeds[s]
        return {
            "game": rules.name,
            "format": FORMAT,
            "config": rules.config_record(self.cfg, first_dealer),
            "seed": int(self._key[s]) if seed is None else seed,
            "agents": list(self._agents[s]),
            "hands": hands,
            "totals": self._scores[s, :n].sum(axis=0).tolist(),
        }


# ==========================================================================
# JSON Lines
def write_jsonl(path: str | os.PathLike, records: Iterable[dict], append: bool = False) -> int:
    """Write records to ``path``, one JSON object per line; returns how many.

    Every record is turned into JSON first, so a record that is not JSON
    changes nothing on disk. Overwriting goes through a temporary file in the
    same folder that is renamed over ``path`` only once everything is written
    (:func:`~bobshat_env.paths.replace_bytes`): a failure (a full disk) never
    leaves a half-written file or loses the old one. Appending adds whole
    lines under a file lock (:func:`~bobshat_env.paths.append_lines`), so
    several processes can append to one file at once (``play --save`` in two
    terminals) without losing or cutting a record; a line break is added
    first if the file did not end with one.
    """
    lines = [_json_line(r) for r in records]
    if append:
        append_lines(path, lines)
    else:
        replace_bytes(path, b"".join(lines))
    return len(lines)


def _json_line(record: dict) -> bytes:
    return (json.dumps(record, separators=(",", ":"), default=_jsonable, allow_nan=False) + "\n").encode("utf-8")


class JsonlWriter:
    """Stream records into a file that appears whole or not at all (``eval --records``).

    Records go to a temporary file beside ``path`` as they come;
    :meth:`commit` renames it over ``path``, :meth:`abort` (or leaving a
    ``with`` block by an exception) removes it and leaves the old file as
    it was. Two runs writing the same path each leave a complete file (the
    last to finish wins), never a mix.
    """

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = path
        self.count = 0
        self._file = AtomicFile(path)

    def write(self, records: Iterable[dict]) -> int:
        lines = [_json_line(r) for r in records]
        self._file.write(b"".join(lines))
        self.count += len(lines)
        return len(lines)

    def commit(self) -> None:
        self._file.commit()

    def abort(self) -> None:
        self._file.abort()

    def __enter__(self) -> JsonlWriter:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()


def read_records(source: str | os.PathLike | bytes) -> Iterator[tuple[int, dict | None, str | None]]:
    """``(line, record, None)`` for each record of a JSON Lines file (a path, or its bytes), and
    ``(line, None, why)`` for each line that is not a record, as ``bobshat replay`` reads them.

    Unlike :func:`read_jsonl` it goes on past a bad line, for listing a file's
    records (``bobshat serve``); blank lines are skipped.
    """
    if isinstance(source, bytes):
        return _iter_file(io.BytesIO(source))
    return _iter_lines(source)


def _iter_lines(path: str | os.PathLike) -> Iterator[tuple[int, Any, str | None]]:
    """(line number, parsed value or None, error or None) for every non-blank line."""
    with open(path, "rb") as f:
        yield from _iter_file(f)


def _iter_file(f: Any) -> Iterator[tuple[int, Any, str | None]]:
    """The records of an open binary file, line by line (see :func:`read_records`)."""
    for n, raw in enumerate(f, start=1):
        if n == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            yield n, None, f"line {n} is not UTF-8 text ({err.reason} at byte {err.start})"
            continue
        if not text.strip():
            continue
        try:
            value = json.loads(text)
        except json.JSONDecodeError as err:
            yield n, None, f"line {n} is not valid JSON: {err.msg} (column {err.colno})"
            continue
        except ValueError:  # Python refuses integers of more than 4,300 digits (sys.get_int_max_str_digits)
            yield n, None, f"line {n} holds a number too long to read (over {_max_digits():,} digits)"
            continue
        except RecursionError:  # e.g. 100,000 nested brackets: the parser gives up, the file goes on
            yield n, None, f"line {n} is nested too deeply to read (a record is a few levels deep)"
            continue
        if not isinstance(value, dict):
            yield n, None, f"line {n} is not a record: a record is a JSON object, got {type(value).__name__}"
            continue
        yield n, value, None


def _max_digits() -> int:
    return getattr(sys, "get_int_max_str_digits", lambda: 4300)() or 4300


def read_jsonl(path: str | os.PathLike) -> Iterator[tuple[int, dict]]:
    """Yield ``(line number, record)`` for each record of a JSON Lines file.

    Blank lines are skipped. A line that is not a JSON object raises
    :class:`RecordFormatError` naming the line.
    """
    for n, value, err in _iter_lines(path):
        if err is not None:
            raise RecordFormatError(f"{path}: {err}")
        yield n, value


# ==========================================================================
# Replay
def replay_record(record: Any, index: int | None = None, line: int | None = None) -> list[Fault]:
    """Every fault of one record against the rules; an empty list if it is valid."""
    return replay_report(record, index, line).faults


def replay_report(record: Any, index: int | None = None, line: int | None = None) -> ReplayReport:
    """Replay one record with the rules core; never raises on a corrupt record."""
    sink = _Sink(index, line)
    report = ReplayReport(sink.faults)
    try:
        _replay(record, sink, report)
    except Exception as err:  # a last resort: a corrupt record must become a fault, not a traceback
        sink.add(f"the replay could not go on ({type(err).__name__}: {err})")
    return report


def replay_steps(record: Any) -> tuple[ReplayReport, list[ReplayStep]]:
    """Replay one record (as :func:`replay_report`) and keep every state it passes through.

    Returns the report and, in order, a :class:`ReplayStep` for each hand
    entry's deal and each action (hat, bid, card) the replay stepped through
    the rules core: what a viewer needs to step through the game card by card
    (``bobshat serve``). Trust the steps only if ``report.ok``: a faulty
    record stops where the rules disagree with it.
    """
    steps = _Steps()
    token = _WATCH.set(steps)
    try:
        report = replay_report(record)
    finally:
        _WATCH.reset(token)
    return report, list(steps)


def _replay(record: Any, sink: _Sink, report: ReplayReport) -> None:
    if not isinstance(record, dict):
        sink.add(f"a record is a JSON object, got {type(record).__name__}")
        return
    game = record.get("game")
    rules = _rules_named(game)
    if rules is None:
        sink.add(f"unknown game {game!r}: expected one of {', '.join(GAMES)}")
        return
    report.game = game
    if record.get("format") != FORMAT or not _is_int(record.get("format")):
        sink.add(f"unknown format {record.get('format')!r}: this version reads format {FORMAT}")
        return
    missing = [k for k in ("config", "seed", "agents", "hands", "totals") if k not in record]
    if missing:
        sink.add(f"missing key(s) {', '.join(missing)}")
    if "config" not in record:
        return
    cfg = rules.config_from_record(record["config"], sink)
    if cfg is None:
        return
    P = cfg.players
    report.players = P
    seed = record.get("seed")
    if "seed" in record and seed is not None and not _is_int(seed):
        sink.add(f"seed must be an integer or null, got {seed!r}")
    agents = record.get("agents")
    if "agents" in record:
        if isinstance(agents, list) and len(agents) == P and all(isinstance(a, str) for a in agents):
            report.agents = agents
        else:
            sink.add(f"agents must be a list of {P} names, one per seat, got {agents!r}")
    hands = record.get("hands")
    if "hands" in record and not isinstance(hands, list):
        sink.add(f"hands must be a list of hands, got {type(hands).__name__}")
        hands = None
    totals = [0] * P
    unreplayed: list[int] = []  # hand entries whose scores the rules could not recompute
    if hands is not None:
        report.hands = len(hands)
        hand_no = 0  # 0-based number of the hand the next entry must be
        ctx = rules.new_context(cfg)
        for e, hand in enumerate(hands):
            if hand_no >= cfg.hands:
                sink.add(
                    f"the record has {len(hands) - e} hand(s) after the last hand: the config plays {cfg.hands}",
                    entry=e,
                )
                break
            fault = _HandSink(sink, hand_no + 1, e)
            scores, renege = _replay_hand(rules, cfg, hand, hand_no, ctx, fault)
            if scores is None and isinstance(hand, dict) and _is_int_list(hand.get("scores"), P):
                scores = hand["scores"]  # could not replay: carry the record's scores to the totals
                unreplayed.append(e)
            if scores is not None:
                totals = [a + int(b) for a, b in zip(totals, scores)]
            if not renege:
                hand_no += 1
        else:
            if hand_no < cfg.hands:
                if hands and isinstance(hands[-1], dict) and "renege" in hands[-1]:
                    sink.add(f"the record ends with a renege in hand {hand_no + 1}: that hand must be dealt again")
                else:
                    sink.add(f"the record has {hand_no} hand(s) but the config plays {cfg.hands}")
    if hands is None:
        return  # no hands to add up: the totals cannot be checked
    report.totals = totals
    if "totals" in record:
        got = record["totals"]
        if not _is_int_list(got, P):
            sink.add(f"totals must be a list of {P} integers, got {got!r}")
            return
        report.recorded_totals = got
        if got == totals:
            return
        if unreplayed:
            sink.add(
                f"totals {got} but the hands add up to {totals} "
                f"(using the record's own scores for hands[{', '.join(map(str, unreplayed))}], which could not be "
                "replayed)"
            )
        else:
            sink.add(f"totals {got} but the rules give {totals}")


def _replay_hand(
    rules: _GameRules, cfg: Any, hand: Any, hand_no: int, ctx: dict, fault: _HandSink
) -> tuple[list[int] | None, bool]:
    """Replay one hand entry: the rules' scores (None if it cannot be replayed) and whether it reneged."""
    P = cfg.players
    if not isinstance(hand, dict):
        fault(f"a hand is a JSON object, got {type(hand).__name__}")
        return None, False
    claims_renege = "renege" in hand
    missing = [k for k in rules.hand_keys if k not in hand]
    if missing:
        fault(f"missing key(s) {', '.join(missing)}")
        rules.after_hand(cfg, None, hand, not claims_renege, ctx)
        return None, claims_renege

    def give_up() -> tuple[None, bool]:
        rules.after_hand(cfg, None, hand, not claims_renege, ctx)
        return None, claims_renege

    number = hand["number"]
    if number != hand_no + 1 or not _is_int(number):
        fault(f"number is {number!r} but this entry is hand {hand_no + 1}")
    size = rules.hand_size(cfg, hand_no)
    if hand["hand_size"] != size or not _is_int(hand["hand_size"]):
        fault(f"hand_size is {hand['hand_size']!r} but hand {hand_no + 1} deals {size} cards each")
    dealer = int(rotate_dealer(np.array([cfg.first_dealer]), np.array([hand_no]), cfg.players)[0])
    if hand["dealer"] != dealer or not _is_int(hand["dealer"]):
        fault(f"dealer is {hand['dealer']!r} but the rules give seat {dealer}")

    # The deal.
    trump = rules.parse_trump(hand, fault)
    owner = _parse_deal(rules, hand["deal"], P, size, fault)
    if trump is None or owner is None or not rules.check_trump_vs_deal(trump, owner, fault):
        return give_up()
    cards_of = np.zeros((P, rules.n_cards), dtype=bool)
    dealt = np.nonzero(owner >= 0)[0]
    cards_of[owner[dealt], dealt] = True
    try:
        state = rules.start_hand(cfg, hand_no, dealer, trump, cards_of, ctx)
    except ValueError as err:
        fault(f"the deal cannot be played: {err}")
        return give_up()
    _watch_deal(fault.entry, state)

    if claims_renege and not cfg.renege_mode:
        fault("the hand has a renege entry, but reneges only happen with the renege_mode option")
        return give_up()

    # Hat choice, bids.
    if not rules.replay_prelude(cfg, state, hand, ctx, fault):
        return give_up()

    # Tricks.
    outcome = _replay_tricks(rules, cfg, state, hand, owner, fault)
    if outcome is None:
        return give_up()
    rewards, reneged = outcome

    # What the hand gives.
    want = [int(x) for x in rewards]
    scores = hand["scores"]
    if not _is_int_list(scores, P):
        fault(f"scores must be a list of {P} integers, got {scores!r}")
    elif scores != want:
        fault(f"scores {scores} but the rules give {want}")
    rules.check_outcome(cfg, state, hand, fault)
    rules.after_hand(cfg, state, hand, not reneged, ctx)
    return want, reneged


def _parse_deal(rules: _GameRules, deal: Any, P: int, size: int, fault: _HandSink) -> np.ndarray | None:
    """(N,) seat dealt each card (-1 undealt), or None after the faults."""
    if not isinstance(deal, list) or len(deal) != P or not all(isinstance(d, list) for d in deal):
        fault(f"deal must be a list of {P} lists of cards, one per seat")
        return None
    owner = np.full(rules.n_cards, -1, dtype=np.int64)
    ok = True
    for seat, cards in enumerate(deal):
        if len(cards) != size:
            fault(f"seat {seat} is dealt {len(cards)} cards; this hand deals {size} each")
            ok = False
        for text in cards:
            try:
                c = rules.parse_card(text)
            except ValueError as err:
                fault(f"deal of seat {seat}: {err}")
                ok = False
                continue
            if owner[c] >= 0:
                where = "twice to that seat" if owner[c] == seat else f"to seats {owner[c]} and {seat}"
                fault(f"card {text} is dealt twice ({where})")
                ok = False
                continue
            owner[c] = seat
    return owner if ok else None


def _replay_tricks(
    rules: _GameRules, cfg: Any, state: Any, hand: dict, owner: np.ndarray, fault: _HandSink
) -> tuple[np.ndarray, bool] | None:
    """Play the record's tricks with the core: (hand rewards, reneged), or None after a fault that stops the hand."""
    P = cfg.players
    mod = rules.module
    tricks = hand["tricks"]
    size = int(rules.hand_size(cfg, int(state.hand_no[0])))
    if not isinstance(tricks, list):
        fault(f"tricks must be a list, got {type(tricks).__name__}")
        return None
    claim = hand.get("renege")
    if claim is not None and not (
        isinstance(claim, dict) and _is_int(claim.get("seat")) and isinstance(claim.get("card"), str)
    ):
        fault(f'renege must be {{"seat": s, "card": c}}, got {claim!r}')
        return None
    played: set[int] = set()
    for t, trick in enumerate(tricks):
        tn = t + 1
        if int(state.phase[0]) != mod.PLAY:
            fault(f"the hand is over after {t} tricks, but the record has {len(tricks)}", tn)
            return None
        if not isinstance(trick, dict) or not all(k in trick for k in ("leader", "cards", "winner")):
            fault("a trick is an object with leader, cards and winner", tn)
            return None
        leader = int(state.leader[0])
        if trick["leader"] != leader or not _is_int(trick["leader"]):
            fault(f"leader is {trick['leader']!r} but the rules give seat {leader}", tn)
        cards = trick["cards"]
        if not isinstance(cards, list) or not cards:
            fault(f"cards must be a non-empty list of cards, got {cards!r}", tn)
            return None
        res = None
        for i, text in enumerate(cards):
            seat = int(state.cur[0])
            try:
                c = rules.parse_card(text)
            except ValueError as err:
                fault(f"seat {seat} played an {err}", tn)
                return None
            if i >= P:
                fault(f"the trick has {len(cards)} cards; a trick has {P}", tn)
                return None
            if not state.hands[0, seat, c]:
                if c in played:
                    why = "it was already played"
                elif owner[c] >= 0 and owner[c] != seat:
                    why = f"it was dealt to seat {owner[c]}"
                elif owner[c] == seat:
                    why = "it was already played"
                else:
                    why = "it was not dealt this hand"
                fault(f"seat {seat} played {text} but does not hold it ({why})", tn)
                return None
            # The core's own follow-suit rule (what its legal mask uses for cards).
            if not follow_suit_mask(state.hands[:, seat], state.led_suit, rules.deck)[0, c]:
                led = rules.suit_name(int(state.led_suit[0]))
                if not cfg.renege_mode:
                    fault(f"seat {seat} played {text} but must follow {led}", tn)
                    return None
                # Renege mode: a held card that breaks follow suit ends the hand.
                if t != len(tricks) - 1 or i != len(cards) - 1:
                    fault(f"seat {seat} reneged with {text} (must follow {led}), but the record plays on", tn)
                    return None
                if claim is None:
                    fault(f"seat {seat} reneged with {text} (must follow {led}), but the hand has no renege entry", tn)
                    return None
                if claim["seat"] != seat or claim["card"] != text:
                    fault(
                        f"the renege entry names seat {claim['seat']} and {claim['card']}, "
                        f"but the renege was seat {seat}'s {text}",
                        tn,
                    )
            played.add(c)
            res = _step1(mod, cfg, state, c)
            if res.renege[0]:
                if trick["winner"] is not None:
                    fault(f"winner is {trick['winner']!r}, but a trick ended by a renege has no winner (null)", tn)
                return res.rewards[0], True
        if not res.trick_done[0]:
            fault(f"the trick has {len(cards)} cards; a trick has {P}", tn)
            return None
        want = int(res.trick_winner[0])
        if trick["winner"] != want or not _is_int(trick["winner"]):
            fault(f"winner is {trick['winner']!r} but the rules give seat {want}", tn)
        if res.hand_done[0]:
            if claim is not None:
                fault(
                    f"the renege entry names seat {claim['seat']} and {claim['card']}, "
                    "but every card of the hand follows suit"
                )
            if t != len(tricks) - 1:
                fault(f"the hand is over after {tn} tricks, but the record has {len(tricks)}", tn + 1)
            return res.rewards[0], False
    if claim is not None:
        fault(
            f"the renege entry names seat {claim['seat']} and {claim['card']}, "
            "but no card of the record breaks follow suit"
        )
    else:
        fault(f"the record has {len(tricks)} complete trick(s) but the hand has {size}")
    return None


# ==========================================================================
# Files and the command line
def replay_file(path: str | os.PathLike) -> tuple[int, list[Fault]]:
    """Replay every record of a JSON Lines file: (number of records, all faults)."""
    reports = [report for _line, report in _replay_lines(path)]
    return len(reports), [f for r in reports for f in r.faults]


def _replay_lines(path: str | os.PathLike) -> Iterator[tuple[int, ReplayReport]]:
    for index, (line, value, err) in enumerate(_iter_lines(path)):
        if err is not None:
            yield line, ReplayReport([Fault(err, index, line)])
        else:
            yield line, replay_report(value, index, line)


def replay_main(path: str, out: TextIO | None = None) -> int:
    """``bobshat replay FILE``: print a line per record and each fault; the exit code.

    0 when every record is valid; 1 when any record has a fault or the file
    holds no record; 2 when the file cannot be read.
    """
    out = sys.stdout if out is None else out
    n = bad = n_faults = 0
    try:
        for n, (line, report) in enumerate(_replay_lines(path), start=1):
            head = f"record {n} (line {line})"
            if report.game is not None:
                head += f": {report.game}"
                if report.players is not None:
                    head += f", {report.players} players, {plural(report.hands, 'hand entry', 'hand entries')}"
                if report.agents:
                    head += f", agents {', '.join(report.agents)}"
                if report.recorded_totals is not None:  # the record's own: a fault line says if the rules differ
                    head += f", totals {report.recorded_totals}"
                elif report.totals is not None:
                    head += f", totals {report.totals} (recomputed)"
            if report.ok:
                print(f"{head}: ok", file=out)
                continue
            bad += 1
            n_faults += len(report.faults)
            print(f"{head}: {len(report.faults)} fault(s)", file=out)
            for f in report.faults:
                print(f"  {f}", file=out)
    except OSError as err:
        print(f"cannot read {path}: {err.strerror or err}", file=out)
        return 2
    if n == 0:
        print(f"{path}: no game records", file=out)
        return 1
    if bad:
        print(f"{n} record(s): {n - bad} valid, {bad} with faults ({n_faults} fault(s) in all)", file=out)
        return 1
    print(f"{n} record(s), all valid", file=out)
    return 0
