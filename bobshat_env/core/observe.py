"""Observation encoders: seat-relative flat ``float32`` vectors of named slices.

Every observation is one flat vector so it feeds an MLP directly, but it is
built from named slices (:class:`ObsLayout`) so that code and tests can read
it back: ``layout.decode(vec)`` returns each slice in its shape, and the
game-specific ``decode_*`` functions turn that into facts (cards, bids,
seats). Seats are relative: position 0 is the observer, 1 the next player
clockwise, and so on.

Three views per game:

- ``private`` (default): what the observing seat may know;
- ``public``: the same without the observer's hand (what everybody knows);
- ``full``: the private view plus every seat's hand, for oracle critics.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..config import BobsHatConfig, OhHellConfig
from . import bobs_hat as bh
from . import oh_hell as oh
from .cards import BH_N_CARDS, BH_TRUMPS, OH_N_CARDS, OH_SUIT_CHARS

VIEWS = ("private", "public", "full")
_HIDDEN_BID = bh.N_BID_CODES  # stands for a bid made in secret, not yet revealed


def _bid_feature_table() -> np.ndarray:
    """Row ``code + 1`` is the 6 bid features of bid ``code`` (-1 = no bid yet)."""
    table = np.zeros((bh.N_BID_CODES + 2, 6), dtype=np.float32)
    for code in range(bh.N_BID_CODES):
        table[code + 1, :3] = [(code >> i) & 1 for i in range(3)]
        table[code + 1, 3:5] = [code // 8 >= 1, code // 8 >= 2]
        table[code + 1, 5] = 1
    table[_HIDDEN_BID + 1, 5] = 1  # has bid, content hidden
    return table


_BID_FEATURES = _bid_feature_table()
BH_MAX_HANDS = 16
SCORE_SCALE = 100.0
TAKEN_SCALE = 20.0


def _by_seat(arr: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``arr[g, s]`` for flat rows ``g * P + s`` of a (B, P, ...) array, in one gather."""
    return np.take(arr.reshape(-1, *arr.shape[2:]), rows, axis=0)


class _Frame:
    """One observer per game: the output views, relative-seat gathers, and
    the slices both games encode the same way (hand, cards played, taken,
    scores, hand number, dealer, leader, current trick, all hands)."""

    def __init__(
        self,
        layout: ObsLayout,
        state: Any,
        seat: np.ndarray | None,
        out: np.ndarray | None,
        view: str,
        taken_scale: float,
    ) -> None:
        P, B = state.trick.shape[1], state.batch_size
        self.b = b = np.arange(B)
        self.me = me = (state.cur if seat is None else np.broadcast_to(np.asarray(seat), (B,))).astype(np.int64)
        if out is None:
            out = np.zeros((B, layout.size), dtype=np.float32)
        else:  # only the one-hot block needs clearing: dense slices are overwritten
            out[:, layout.slices["phase"].start : layout.slices["trick"].stop] = 0
        self.out = out
        self.o = o = layout.views(out)
        self.P = P
        absolute = (me[:, None] + np.arange(P)[None, :]) % P  # (B, P): absolute seat of relative seat r
        self.rows = rows = b[:, None] * P + absolute  # flat (game, seat) rows: one gather each

        o["hand"][:] = _by_seat(state.hands, b * P + me) if view != "public" else 0
        o["played"][:] = state.played
        o["taken"][:] = _by_seat(state.taken, rows) * np.float32(1 / taken_scale)
        o["scores"][:] = _by_seat(state.scores, rows) * np.float32(1 / SCORE_SCALE)
        o["hand_number"][b, state.hand_no.astype(np.int64)] = 1
        o["dealer"][b, self.rel(state.dealer)] = 1
        o["leader"][b, self.rel(state.leader)] = 1
        trick = _by_seat(state.trick, rows).astype(np.int64)
        g, r = np.nonzero(trick >= 0)
        o["trick"][g, r, trick[g, r]] = 1
        if view == "full":
            o["all_hands"][:] = _by_seat(state.hands, rows)

    def rel(self, seats: np.ndarray) -> np.ndarray:
        """Absolute seats (B,) as seen by each game's observer."""
        return (np.asarray(seats, dtype=np.int64) - self.me) % self.P


@dataclass(frozen=True)
class ObsLayout:
    """Named slices of a flat observation vector, in order."""

    names: tuple[str, ...]
    shapes: tuple[tuple[int, ...], ...]

    @classmethod
    def of(cls, *spec: tuple[str, tuple[int, ...]]) -> ObsLayout:
        return cls(tuple(n for n, _ in spec), tuple(s for _, s in spec))

    @functools.cached_property
    def slices(self) -> dict[str, slice]:
        out, start = {}, 0
        for name, shape in zip(self.names, self.shapes):
            size = int(np.prod(shape))
            out[name] = slice(start, start + size)
            start += size
        return out

    @functools.cached_property
    def size(self) -> int:
        return sum(int(np.prod(s)) for s in self.shapes)

    def views(self, flat: np.ndarray) -> dict[str, np.ndarray]:
        """Writable views of a (B, size) array, one per slice, shaped (B, *shape)."""
        B = flat.shape[0]
        return {name: flat[:, sl].reshape(B, *shape) for (name, sl), shape in zip(self.slices.items(), self.shapes)}

    def decode(self, vec: np.ndarray) -> dict[str, np.ndarray]:
        """Each named slice of one observation vector, in its shape."""
        vec = np.asarray(vec)
        if vec.shape != (self.size,):
            raise ValueError(f"expected an observation of shape ({self.size},), got {vec.shape}")
        return {name: vec[sl].reshape(shape) for (name, sl), shape in zip(self.slices.items(), self.shapes)}

    def table(self) -> str:
        """A Markdown table of the slices (name, offset, shape), for docs."""
        rows = ["| slice | offset | shape |", "|---|---|---|"]
        for (name, sl), shape in zip(self.slices.items(), self.shapes):
            rows.append(f"| {name} | {sl.start} | {shape} |")
        return "\n".join(rows)


# --------------------------------------------------------------------------
# Where's Bob's Hat?
@functools.lru_cache(maxsize=64)
def bh_layout(cfg: BobsHatConfig, view: str = "private") -> ObsLayout:
    """Observation layout for a Bob's Hat configuration and view."""
    if view not in VIEWS:
        raise ValueError(f"unknown view {view!r}; choose one of {', '.join(VIEWS)}")
    P = cfg.players
    spec: list[tuple[str, tuple[int, ...]]] = [
        # dense slices, written whole every step
        ("hand", (BH_N_CARDS,)),  # my cards (zeros in the public view)
        ("played", (BH_N_CARDS,)),  # cards in completed tricks this hand
        ("bids", (P, 6)),  # most blue, red, black, fewest, double fewest, has bid
        ("no_bid_left", (P,)),  # the seat may still use its no-bid (option)
        ("taken", (P, 3)),  # cards taken per seat and suit, / 20
        ("scores", (P,)),  # game totals, / 100
        ("hat_value", (2,)),  # +10, -10 once the dealer chose
        # one-hot slices, zeroed then set
        ("phase", (3,)),  # hat choice, bidding, play
        ("trump", (4,)),  # blue, red, black, none
        ("hand_number", (BH_MAX_HANDS,)),  # hand k at index k - 1
        ("dealer", (P,)),  # relative seat
        ("hat_holder", (P + 1,)),  # centre, then relative seats
        ("leader", (P,)),  # leader of the current trick
        ("trick", (P, BH_N_CARDS)),  # card each relative seat put in the current trick
    ]
    if view == "full":
        spec.append(("all_hands", (P, BH_N_CARDS)))
    return ObsLayout.of(*spec)


def bh_observe(
    cfg: BobsHatConfig,
    state: bh.State,
    seat: np.ndarray | None = None,
    view: str = "private",
    out: np.ndarray | None = None,
) -> np.ndarray:
    """(B, D) float32 observations of ``seat`` (default: the seat to act).

    Secret bidding hides the other seats' bids until everybody has bid.
    ``out``, if given, is a preallocated (B, D) float32 buffer to fill.
    """
    f = _Frame(bh_layout(cfg, view), state, seat, out, view, TAKEN_SCALE)
    o, b, P, rel = f.o, f.b, cfg.players, f.rel
    bids = _by_seat(state.bids, f.rows).astype(np.int64)  # (B, P) relative, -1 = not yet
    if cfg.secret_bidding:
        hidden = (bids >= 0) & ((state.n_bids < P) & (state.phase == bh.BID))[:, None]
        hidden[:, 0] = False
        bids[hidden] = _HIDDEN_BID
    o["bids"][:] = _BID_FEATURES[bids + 1]
    o["no_bid_left"][:] = ~_by_seat(state.no_bid_used, f.rows) if cfg.no_bid else 0
    o["hat_value"][:, 0] = state.hat_value == 10
    o["hat_value"][:, 1] = state.hat_value == -10

    ph = state.phase.astype(np.int64)
    live = ph < 3
    o["phase"][b[live], ph[live]] = 1
    o["trump"][b, state.trump.astype(np.int64)] = 1
    holder = state.hat_holder.astype(np.int64)
    o["hat_holder"][b, np.where(holder < 0, 0, rel(holder) + 1)] = 1
    return f.out


def bh_decode(cfg: BobsHatConfig, vec: np.ndarray, view: str = "private") -> dict:
    """The facts in one Bob's Hat observation vector, in plain Python values.

    Seats are relative to the observer. A bid is a list of bid-card names
    (RECORDS.md), ``None`` before the seat has bid, ``"hidden"`` when secret.
    """
    d = bh_layout(cfg, view).decode(vec)
    P = cfg.players
    onehot = lambda v: int(np.argmax(v)) if v.any() else None  # noqa: E731
    bids: list = []
    for r in range(P):
        row = d["bids"][r]
        if not row[5]:
            bids.append(None)
        elif not row[:5].any() and r != 0 and cfg.secret_bidding:
            bids.append("hidden")
        else:
            code = int(row[0]) + 2 * int(row[1]) + 4 * int(row[2]) + 8 * (int(row[3]) + int(row[4]))
            bids.append(bh.bid_cards(code))
    holder = onehot(d["hat_holder"])
    hat = 10 if d["hat_value"][0] else (-10 if d["hat_value"][1] else None)
    phase = onehot(d["phase"])
    facts = {
        "hand": np.nonzero(d["hand"])[0].tolist(),
        "phase": bh.PHASE_NAMES[phase] if phase is not None else "other",
        "trump": BH_TRUMPS[onehot(d["trump"])],
        "hand_number": onehot(d["hand_number"]) + 1,
        "dealer": onehot(d["dealer"]),
        "hat": hat,
        "hat_holder": None if holder in (None, 0) else holder - 1,
        "bids": bids,
        "no_bid_left": d["no_bid_left"].astype(bool).tolist(),
        "leader": onehot(d["leader"]),
        "trick": [onehot(d["trick"][r]) for r in range(P)],
        "played": np.nonzero(d["played"])[0].tolist(),
        "taken": np.rint(d["taken"] * TAKEN_SCALE).astype(int).tolist(),
        "scores": np.rint(d["scores"] * SCORE_SCALE).astype(int).tolist(),
    }
    if view == "full":
        facts["all_hands"] = [np.nonzero(d["all_hands"][r])[0].tolist() for r in range(P)]
    return facts


# --------------------------------------------------------------------------
# Oh Hell
OH_MAX_HANDS = 19  # the long deal styles with 10 cards: 10, 9, ..., 1, ..., 10
OH_TAKEN_SCALE = 10.0
_OH_BID_FEATURES = np.eye(oh.MAX_BID + 2, dtype=np.float32)  # row bid + 1; row 0 = no bid yet


@functools.lru_cache(maxsize=64)
def oh_layout(cfg: OhHellConfig, view: str = "private") -> ObsLayout:
    """Observation layout for an Oh Hell configuration and view."""
    if view not in VIEWS:
        raise ValueError(f"unknown view {view!r}; choose one of {', '.join(VIEWS)}")
    P = cfg.players
    spec: list[tuple[str, tuple[int, ...]]] = [
        # dense slices, written whole every step
        ("hand", (OH_N_CARDS,)),  # my cards (zeros in the public view)
        ("played", (OH_N_CARDS,)),  # cards in completed tricks this hand
        ("bids", (P, oh.MAX_BID + 2)),  # one-hot per relative seat: no bid yet, then bids 0-10
        ("taken", (P,)),  # tricks taken this hand per seat, / 10
        ("scores", (P,)),  # game totals, / 100
        # one-hot slices, zeroed then set
        ("phase", (2,)),  # bidding, play
        ("trump_suit", (4,)),  # C, D, S, H
        ("trump_card", (OH_N_CARDS,)),  # the card turned after the deal
        ("hand_number", (OH_MAX_HANDS,)),  # hand k at index k - 1
        ("hand_size", (oh.MAX_BID,)),  # cards dealt to each seat, n at index n - 1
        ("dealer", (P,)),  # relative seat
        ("leader", (P,)),  # leader of the current trick
        ("trick", (P, OH_N_CARDS)),  # card each relative seat put in the current trick
    ]
    if view == "full":
        spec.append(("all_hands", (P, OH_N_CARDS)))
    return ObsLayout.of(*spec)


def oh_observe(
    cfg: OhHellConfig,
    state: oh.State,
    seat: np.ndarray | None = None,
    view: str = "private",
    out: np.ndarray | None = None,
) -> np.ndarray:
    """(B, D) float32 Oh Hell observations of ``seat`` (default: the seat to act).

    Everything but the hands is public in Oh Hell (bids are open), so the
    public view only drops the observer's hand; the full view adds every
    seat's hand. ``out``, if given, is a preallocated (B, D) float32 buffer.
    """
    f = _Frame(oh_layout(cfg, view), state, seat, out, view, OH_TAKEN_SCALE)
    o, b = f.o, f.b
    o["bids"][:] = _OH_BID_FEATURES[_by_seat(state.bids, f.rows).astype(np.int64) + 1]

    ph = state.phase.astype(np.int64)
    live = (ph == oh.BID) | (ph == oh.PLAY)
    o["phase"][b[live], ph[live] - oh.BID] = 1
    dealt = state.trump_card >= 0
    o["trump_suit"][b[dealt], state.trump[dealt]] = 1
    o["trump_card"][b[dealt], state.trump_card[dealt].astype(np.int64)] = 1
    o["hand_size"][b, state.hand_size.astype(np.int64) - 1] = 1
    return f.out


def oh_decode(cfg: OhHellConfig, vec: np.ndarray, view: str = "private") -> dict:
    """The facts in one Oh Hell observation vector, in plain Python values.

    Seats are relative to the observer; cards are card ids. A bid is the
    number of tricks bid, ``None`` before the seat has bid.
    """
    d = oh_layout(cfg, view).decode(vec)
    P = cfg.players
    onehot = lambda v: int(np.argmax(v)) if v.any() else None  # noqa: E731
    phase = onehot(d["phase"])
    suit = onehot(d["trump_suit"])
    bids = [onehot(d["bids"][r]) for r in range(P)]
    facts = {
        "hand": np.nonzero(d["hand"])[0].tolist(),
        "phase": oh.PHASE_NAMES[phase + oh.BID] if phase is not None else "other",
        "trump": OH_SUIT_CHARS[suit] if suit is not None else None,
        "trump_card": onehot(d["trump_card"]),
        "hand_number": onehot(d["hand_number"]) + 1,
        "hand_size": onehot(d["hand_size"]) + 1,
        "dealer": onehot(d["dealer"]),
        "bids": [None if v in (None, 0) else v - 1 for v in bids],
        "leader": onehot(d["leader"]),
        "trick": [onehot(d["trick"][r]) for r in range(P)],
        "played": np.nonzero(d["played"])[0].tolist(),
        "taken": np.rint(d["taken"] * OH_TAKEN_SCALE).astype(int).tolist(),
        "scores": np.rint(d["scores"] * SCORE_SCALE).astype(int).tolist(),
    }
    if view == "full":
        facts["all_hands"] = [np.nonzero(d["all_hands"][r])[0].tolist() for r in range(P)]
    return facts
