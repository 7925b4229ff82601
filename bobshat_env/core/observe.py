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

The encoders are compiled loops over the batch (numba ``@njit``): each game's
row is written straight into the output, with no NumPy temporaries, which
matters twice over: a rollout of 4096 games observes every step, and the
PettingZoo adapter observes one game per decision, where the cost is the
Python call itself. So the Python side only validates its arguments and
looks up cached layout offsets; the kernels get the state's arrays and one
named tuple of ints (:class:`BhOffsets`, :class:`OhOffsets`, built from the
layout by :meth:`ObsLayout.offsets`): where each slice starts, read by its
name (``o.trick``), plus the view's flags and the game constants, so that
numba's on-disk cache never holds a stale copy of another module's
constants. Adding a slice is a line in the layout, a field in the game's
offsets tuple and the kernel's code that writes it. What both games encode the same way (hand, cards
played, taken, scores, hand number, dealer, leader, current trick, all
hands) is one shared helper, :func:`_encode_shared`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from numba import njit, prange

from ..config import BobsHatConfig, OhHellConfig
from . import bobs_hat as bh
from . import oh_hell as oh
from .cards import BH_N_CARDS, BH_TRUMPS, OH_HELL_DECK, OH_N_CARDS, OH_SUIT_CHARS
from .compiled import batch_kernel

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
_OH_SUIT_OF = np.ascontiguousarray(OH_HELL_DECK.suit_of, dtype=np.int64)
BH_MAX_HANDS = 16
SCORE_SCALE = 100.0
TAKEN_SCALE = 20.0
OH_MAX_HANDS = 19  # the long deal styles with 10 cards: 10, 9, ..., 1, ..., 10
OH_TAKEN_SCALE = 10.0


def _multiplier(scale: float) -> float:
    """``1 / scale`` rounded to float32, held as a Python float for the kernels.

    The kernels scale a count ``x`` as ``float32(float64(x) * m)``: the float64
    product of a small integer and a float32 is exact, so its rounding to
    float32 is the float32 product NumPy computes for int8 counts, and also
    the float64-then-float32 result it computes for int32 scores.
    """
    return float(np.float32(1 / scale))


_BAD_STATE = -2  # kernel result: the state's arrays do not fit the layout (batch, seats, cards)
_OPTIONAL_SLICES = ("all_hands",)  # slices only some views have; their offset is -1 elsewhere


class BhOffsets(NamedTuple):
    """What the Bob's Hat encoder needs to know of a config and view: every slice's offset by name
    (:meth:`ObsLayout.offsets`), sizes, the view's flags (0/1) and the game's constants."""

    players: int
    n_cards: int
    n_hand_number: int
    hand: int
    played: int
    bids: int
    no_bid_left: int
    taken: int
    scores: int
    hat_value: int
    phase: int  # the first one-hot slice: the one-hot block runs from here to the end of ``trick``
    trump: int
    hand_number: int
    dealer: int
    hat_holder: int
    leader: int
    trick: int
    all_hands: int  # -1 unless the full view
    own_hand: int  # the observer's hand is shown (not the public view)
    full: int
    secret: int  # secret bidding
    no_bid: int  # the no-bid option
    bid_phase: int
    n_codes: int  # bid codes
    hidden_code: int  # stands for a secret bid not yet revealed


class OhOffsets(NamedTuple):
    """:class:`BhOffsets` for Oh Hell."""

    players: int
    n_cards: int
    n_hand_number: int
    hand: int
    played: int
    bids: int
    taken: int
    scores: int
    phase: int  # the first one-hot slice: the one-hot block runs from here to the end of ``trick``
    trump_suit: int
    trump_card: int
    hand_number: int
    hand_size: int
    dealer: int
    leader: int
    trick: int
    all_hands: int  # -1 unless the full view
    own_hand: int
    full: int
    bid_phase: int
    play_phase: int
    max_bid: int


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

    def shape_of(self, name: str) -> tuple[int, ...]:
        """The shape of slice ``name``."""
        return self.shapes[self.names.index(name)]

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

    def offsets(self, cls: type, **values: int) -> tuple:
        """A ``cls`` (a NamedTuple of ints): each field named after a slice holds where the slice starts
        (``all_hands``, only in the full view, is -1 elsewhere), the other fields come from ``values``.

        Kernels take it as a plain tuple (numba types those at a call the
        quickest) and rebuild it to read the offsets by name:
        ``o = BhOffsets(*offsets)``, then ``o.trick``.
        """
        out = {}
        for name in cls._fields:
            if name in values:
                out[name] = int(values[name])
            elif name in self.slices:
                out[name] = self.slices[name].start
            elif name in _OPTIONAL_SLICES:
                out[name] = -1
            else:
                raise ValueError(f"{cls.__name__}.{name} is neither a slice of this layout nor given")
        return tuple(cls(**out))

    def table(self) -> str:
        """A Markdown table of the slices (name, offset, shape), for docs."""
        rows = ["| slice | offset | shape |", "|---|---|---|"]
        for (name, sl), shape in zip(self.slices.items(), self.shapes):
            rows.append(f"| {name} | {sl.start} | {shape} |")
        return "\n".join(rows)


# --------------------------------------------------------------------------
# What both encoders share: argument checks, cached offsets, the common slices.
def _params(cache: dict, build: Any, cfg: Any, view: str) -> tuple:
    """``build(cfg, view)``, memoised by the config's identity.

    Hashing a frozen config dataclass costs about as much as the whole
    B=1 kernel, so the lookup key is ``id(cfg)``; the entry keeps ``cfg``
    alive, so its id cannot be reused while cached.
    """
    hit = cache.get((id(cfg), view))
    if hit is not None:
        return hit[1]
    params = build(cfg, view)  # raises ValueError for an unknown view
    if len(cache) > 256:
        cache.clear()
    cache[(id(cfg), view)] = (cfg, params)
    return params


def _seat_arg(state: Any, seat: Any, B: int) -> tuple[np.ndarray, bool]:
    """The observing seats and whether they are per game (else one for all).

    ``None`` means the seat to act in each game; otherwise an integer array
    of shape (B,), or one seat for every game as shape (1,) or a scalar.
    """
    if seat is None:
        return state.cur, True
    seat = np.asarray(seat)
    if seat.dtype.kind not in "iu":
        raise ValueError(f"seat must hold integer seats, got dtype {seat.dtype}")
    if seat.shape == (B,):
        return seat, True
    if seat.shape in ((), (1,)):
        return seat.reshape(1), False
    raise ValueError(f"seat must have shape ({B},) (one per game), (1,) or () (one for all), got {seat.shape}")


def _out_arg(out: np.ndarray | None, B: int, size: int) -> np.ndarray:
    """The C-contiguous (B, size) float32 buffer for a kernel to fill, every cell of it.

    ``out`` itself when it is one; a new array when ``out`` is None, or when
    it is a strided view, which the caller copies back (so the kernels have
    one fast memory layout, and one compiled version, to handle).
    """
    if out is None:
        return np.empty((B, size), dtype=np.float32)
    if not isinstance(out, np.ndarray) or out.shape != (B, size) or out.dtype != np.float32 or not out.flags.writeable:
        got = type(out).__name__
        if isinstance(out, np.ndarray):
            got = f"{'' if out.flags.writeable else 'read-only '}{out.dtype} array of shape {out.shape}"
        raise ValueError(f"out must be a writeable float32 array of shape ({B}, {size}), got {got}")
    return out if out.flags.c_contiguous else np.empty((B, size), dtype=np.float32)


def _check_result(bad: int, B: int, P: int, seat: np.ndarray, each: bool) -> None:
    """Turn a kernel's failure code into a ValueError (-1 means success)."""
    if bad == -1:
        return
    if bad == _BAD_STATE:
        raise ValueError(f"the state's arrays do not fit a {P}-player layout with a batch of {B}")
    if bad >= B:
        g = bad - B
        raise ValueError(f"seat {int(seat[g if each else 0])} of game {g} is not a seat 0-{P - 1}")
    raise ValueError(f"game {bad} of the state holds a value out of range for the observation layout")


# How the kernels write a row, and why (each point measured, B=4096):
# - the one-hot block (phase to trick) is cleared in one loop, then its ones
#   are set; the dense slices are written whole; so every cell is written
#   and a dirty ``out`` needs no separate clearing pass;
# - columns are indexed as ``out[g, _U(i)]``: with an unsigned index numba
#   skips its negative-index wraparound, the address is affine in the loop
#   counter, and LLVM vectorises the loops;
# - no views (``out[g]``, ``hands[g, s]``) and no early exit from the
#   encoding loop (the state is checked in a loop of its own first): either
#   keeps numba's reference-count pruning from removing the atomic
#   incref/decref pairs of the arrays, which cost more than the row itself.
# The helpers are inlined into both kernels.
_U = np.uint64


@njit(cache=True, nogil=True, inline="always")
def _set(out, g, start, n, idx):
    """One-hot ``idx`` into the cleared ``out[g, start : start + n]``; nothing if ``idx`` is outside 0..n-1."""
    if 0 <= idx < n:
        out[g, _U(start + idx)] = 1.0


@njit(cache=True, nogil=True, inline="always")
def _rel(seat, me, P):
    """Absolute seat as seen from seat ``me`` (both 0..P-1), without a division."""
    return seat - me if seat >= me else seat - me + P


@njit(cache=True, nogil=True, inline="always")
def _shared_ok(g, P, n_cards, n_hand_number, hand_no, dealer, leader, trick):
    """Game ``g``'s values for the shared one-hot slices fit the layout."""
    h, d, lead = hand_no[g], dealer[g], leader[g]
    ok = (0 <= h) & (h < n_hand_number) & (0 <= d) & (d < P) & (0 <= lead) & (lead < P)
    for s in range(P):
        ok &= trick[g, s] < n_cards  # negative: no card
    return ok


@njit(cache=True, nogil=True, inline="always")
def _encode_shared(out, g, me, o, hands, played, taken, taken_mul, scores, score_mul, hand_no, dealer, leader, trick):
    """Write what both games encode alike into row ``g`` of ``out``, and clear the one-hot block.

    ``me`` is the observer (0..P-1), ``o`` the game's offsets tuple
    (:class:`BhOffsets` or :class:`OhOffsets`: both name these fields
    alike), ``taken`` is (B, P, K) with K counts per seat. The one-hot block
    runs from ``o.phase`` to the end of the trick slice; the caller then
    sets the ones of its own one-hot slices there. The game has passed
    :func:`_shared_ok`.
    """
    P, n_cards, n_taken = o.players, hands.shape[2], taken.shape[2]
    for c in range(n_cards):
        out[g, _U(o.hand + c)] = np.float32(hands[g, me, c]) if o.own_hand else np.float32(0.0)
    for c in range(n_cards):
        out[g, _U(o.played + c)] = np.float32(played[g, c])
    for i in range(o.phase, o.trick + P * n_cards):
        out[g, _U(i)] = 0.0
    s = me  # absolute seat of relative seat r
    for r in range(P):
        for k in range(n_taken):
            out[g, _U(o.taken + r * n_taken + k)] = np.float32(np.float64(taken[g, s, k]) * taken_mul)
        out[g, _U(o.scores + r)] = np.float32(np.float64(scores[g, s]) * score_mul)
        _set(out, g, o.trick + r * n_cards, n_cards, np.int64(trick[g, s]))  # -1: no card yet
        if o.full:
            for c in range(n_cards):
                out[g, _U(o.all_hands + r * n_cards + c)] = np.float32(hands[g, s, c])
        s = s + 1 if s + 1 < P else 0
    _set(out, g, o.hand_number, o.n_hand_number, np.int64(hand_no[g]))
    _set(out, g, o.dealer, P, _rel(np.int64(dealer[g]), me, P))
    _set(out, g, o.leader, P, _rel(np.int64(leader[g]), me, P))


@njit(cache=True, nogil=True, inline="always")
def _fits(B, P, n_cards, hands, played, taken, scores, trick, bids, per_game):
    """The shared state arrays have the batch, seat and card counts the layout expects."""
    ok = hands.shape[0] == B and hands.shape[1] == P and hands.shape[2] == n_cards
    ok = ok and played.shape[0] == B and played.shape[1] == n_cards
    ok = ok and taken.shape[0] == B and taken.shape[1] == P
    ok = ok and scores.shape[0] == B and scores.shape[1] == P
    ok = ok and trick.shape[0] == B and trick.shape[1] == P
    ok = ok and bids.shape[0] == B and bids.shape[1] == P
    for n in per_game:
        ok = ok and n == B
    return ok


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


def _bh_params(cfg: BobsHatConfig, view: str) -> tuple[int, tuple[int, ...]]:
    """(size, :class:`BhOffsets` as a plain tuple) of a config and view."""
    layout = bh_layout(cfg, view)
    offsets = layout.offsets(
        BhOffsets, players=cfg.players, n_cards=BH_N_CARDS, n_hand_number=layout.shape_of("hand_number")[0],
        own_hand=view != "public", full=view == "full", secret=cfg.secret_bidding, no_bid=cfg.no_bid,
        bid_phase=bh.BID, n_codes=bh.N_BID_CODES, hidden_code=_HIDDEN_BID,
    )  # fmt: skip
    return layout.size, offsets


def bh_offsets(cfg: BobsHatConfig, view: str = "private") -> tuple[int, ...]:
    """The :class:`BhOffsets` of a config and view, as the plain tuple compiled readers take."""
    return _params(_BH_PARAMS, _bh_params, cfg, view)[1]


_BH_PARAMS: dict = {}
_TAKEN_MUL = _multiplier(TAKEN_SCALE)
_SCORE_MUL = _multiplier(SCORE_SCALE)


@batch_kernel
def _bh_kernel(
    out, seat, each, hands, played, taken, scores, hand_no, dealer, leader, trick,
    bids, n_bids, phase, no_bid_used, hat_value, trump, hat_holder, bid_features, offsets, taken_mul, score_mul,
):  # fmt: skip
    """Fill ``out`` (B, D) with Bob's Hat observations, one row per game, every cell written.

    ``offsets`` is a :class:`BhOffsets` as a plain tuple. Returns -1, or a
    failure code for :func:`_check_result`.
    """
    o = BhOffsets(*offsets)
    P, n_cards, n_hand_number, n_codes = o.players, o.n_cards, o.n_hand_number, o.n_codes
    B = out.shape[0]
    per_game = (hand_no.shape[0], dealer.shape[0], leader.shape[0], n_bids.shape[0], phase.shape[0],
                hat_value.shape[0], trump.shape[0], hat_holder.shape[0], seat.shape[0] if each else B)  # fmt: skip
    if not (
        _fits(B, P, n_cards, hands, played, taken, scores, trick, bids, per_game)
        and taken.shape[2] == 3
        and no_bid_used.shape[0] == B
        and no_bid_used.shape[1] == P
    ):
        return _BAD_STATE
    for g in range(B):  # check first, so that the encoding loop has no early exit
        me = np.int64(seat[g if each else 0])
        if me < 0 or me >= P:
            return B + g
        ok = _shared_ok(g, P, n_cards, n_hand_number, hand_no, dealer, leader, trick)
        ok &= (0 <= trump[g]) & (trump[g] < 4) & (hat_holder[g] < P)
        for s in range(P):
            ok &= (-1 <= bids[g, s]) & (bids[g, s] < n_codes)
        if not ok:
            return g
    for row in prange(B):  # rows are independent: split over threads for large batches
        g = np.int64(row)  # a parallel loop counts in unsigned ints; int64 keeps index arithmetic signed
        me = np.int64(seat[g if each else 0])
        _encode_shared(
            out, g, me, o, hands, played, taken, taken_mul, scores, score_mul, hand_no, dealer, leader, trick
        )
        ph, holder = np.int64(phase[g]), np.int64(hat_holder[g])
        # Secret bids stay hidden until everybody has bid; the observer sees its own.
        hide = o.secret and ph == o.bid_phase and n_bids[g] < P
        s = me
        for r in range(P):
            code = np.int64(bids[g, s])  # -1: no bid yet
            if hide and r != 0 and code >= 0:
                code = o.hidden_code
            for k in range(6):
                out[g, _U(o.bids + 6 * r + k)] = bid_features[code + 1, k]
            out[g, _U(o.no_bid_left + r)] = 1.0 if o.no_bid and not no_bid_used[g, s] else 0.0
            s = s + 1 if s + 1 < P else 0
        out[g, _U(o.hat_value)] = 1.0 if hat_value[g] == 10 else 0.0
        out[g, _U(o.hat_value + 1)] = 1.0 if hat_value[g] == -10 else 0.0
        _set(out, g, o.phase, 3, ph)  # hat, bid, play; all zero waiting for a deal or done
        _set(out, g, o.trump, 4, np.int64(trump[g]))
        _set(out, g, o.hat_holder, P + 1, 0 if holder < 0 else _rel(holder, me, P) + 1)  # 0: the centre
    return -1


def bh_observe(
    cfg: BobsHatConfig,
    state: bh.State,
    seat: np.ndarray | int | None = None,
    view: str = "private",
    out: np.ndarray | None = None,
) -> np.ndarray:
    """(B, D) float32 observations of ``seat`` (default: the seat to act).

    ``seat`` is one seat per game (B,), or one seat for all games ((1,) or
    a scalar). Secret bidding hides the other seats' bids until everybody
    has bid. ``out``, if given, is a preallocated (B, D) float32 buffer to
    fill (every cell is overwritten) and is returned.
    """
    size, offsets = _params(_BH_PARAMS, _bh_params, cfg, view)
    B = state.phase.shape[0]
    me, each = _seat_arg(state, seat, B)
    buf = _out_arg(out, B, size)
    s = state
    bad = _bh_kernel.on(B)(
        buf, me, each, s.hands, s.played, s.taken, s.scores, s.hand_no, s.dealer, s.leader, s.trick,
        s.bids, s.n_bids, s.phase, s.no_bid_used, s.hat_value, s.trump, s.hat_holder,
        _BID_FEATURES, offsets, _TAKEN_MUL, _SCORE_MUL,
    )  # fmt: skip
    _check_result(bad, B, cfg.players, me, each)
    if out is None or buf is out:
        return buf
    out[...] = buf
    return out


def bh_decode(cfg: BobsHatConfig, vec: np.ndarray, view: str = "private") -> dict:
    """The facts in one Bob's Hat observation vector, in plain Python values.

    Seats are relative to the observer. A bid is a list of bid-card names
    (docs/records.md), ``None`` before the seat has bid, ``"hidden"`` when secret.
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


def _oh_params(cfg: OhHellConfig, view: str) -> tuple[int, tuple[int, ...]]:
    """(size, :class:`OhOffsets` as a plain tuple) of a config and view."""
    layout = oh_layout(cfg, view)
    offsets = layout.offsets(
        OhOffsets, players=cfg.players, n_cards=OH_N_CARDS, n_hand_number=layout.shape_of("hand_number")[0],
        own_hand=view != "public", full=view == "full", bid_phase=oh.BID, play_phase=oh.PLAY, max_bid=oh.MAX_BID,
    )  # fmt: skip
    return layout.size, offsets


def oh_offsets(cfg: OhHellConfig, view: str = "private") -> tuple[int, ...]:
    """The :class:`OhOffsets` of a config and view, as the plain tuple compiled readers take."""
    return _params(_OH_PARAMS, _oh_params, cfg, view)[1]


_OH_PARAMS: dict = {}
_OH_TAKEN_MUL = _multiplier(OH_TAKEN_SCALE)


@batch_kernel
def _oh_kernel(
    out, seat, each, hands, played, taken, scores, hand_no, dealer, leader, trick,
    bids, phase, trump_card, hand_size, suit_of, offsets, taken_mul, score_mul,
):  # fmt: skip
    """Fill ``out`` (B, D) with Oh Hell observations, one row per game, every cell written.

    ``offsets`` is an :class:`OhOffsets` as a plain tuple. Returns -1, or a
    failure code for :func:`_check_result`.
    """
    o = OhOffsets(*offsets)
    P, n_cards, n_hand_number, max_bid = o.players, o.n_cards, o.n_hand_number, o.max_bid
    B = out.shape[0]
    per_game = (hand_no.shape[0], dealer.shape[0], leader.shape[0], phase.shape[0], trump_card.shape[0],
                hand_size.shape[0], seat.shape[0] if each else B)  # fmt: skip
    taken3 = taken[:, :, np.newaxis]  # one count per seat, as the shared helper's (B, P, K)
    if not _fits(B, P, n_cards, hands, played, taken3, scores, trick, bids, per_game):
        return _BAD_STATE
    for g in range(B):  # check first, so that the encoding loop has no early exit
        me = np.int64(seat[g if each else 0])
        if me < 0 or me >= P:
            return B + g
        ok = _shared_ok(g, P, n_cards, n_hand_number, hand_no, dealer, leader, trick)
        ok &= (trump_card[g] < n_cards) & (1 <= hand_size[g]) & (hand_size[g] <= max_bid)
        for s in range(P):
            ok &= (-1 <= bids[g, s]) & (bids[g, s] <= max_bid)
        if not ok:
            return g
    for row in prange(B):  # rows are independent: split over threads for large batches
        g = np.int64(row)  # a parallel loop counts in unsigned ints; int64 keeps index arithmetic signed
        me = np.int64(seat[g if each else 0])
        _encode_shared(
            out, g, me, o, hands, played, taken3, taken_mul, scores, score_mul, hand_no, dealer, leader, trick
        )
        n_cols = max_bid + 2
        for i in range(o.bids, o.bids + P * n_cols):
            out[g, _U(i)] = 0.0
        s = me
        for r in range(P):  # bids are open: one-hot of bid + 1, column 0 = no bid yet
            _set(out, g, o.bids + r * n_cols, n_cols, np.int64(bids[g, s]) + 1)
            s = s + 1 if s + 1 < P else 0
        ph, card = np.int64(phase[g]), np.int64(trump_card[g])
        _set(out, g, o.phase, 2, ph - o.bid_phase if ph == o.bid_phase or ph == o.play_phase else -1)
        if card >= 0:  # no trump before the deal
            _set(out, g, o.trump_suit, 4, suit_of[card])
            _set(out, g, o.trump_card, n_cards, card)
        _set(out, g, o.hand_size, max_bid, np.int64(hand_size[g]) - 1)
    return -1


def oh_observe(
    cfg: OhHellConfig,
    state: oh.State,
    seat: np.ndarray | int | None = None,
    view: str = "private",
    out: np.ndarray | None = None,
) -> np.ndarray:
    """(B, D) float32 Oh Hell observations of ``seat`` (default: the seat to act).

    Everything but the hands is public in Oh Hell (bids are open), so the
    public view only drops the observer's hand; the full view adds every
    seat's hand. ``seat`` and ``out`` are as in :func:`bh_observe`.
    """
    size, offsets = _params(_OH_PARAMS, _oh_params, cfg, view)
    B = state.phase.shape[0]
    me, each = _seat_arg(state, seat, B)
    buf = _out_arg(out, B, size)
    s = state
    bad = _oh_kernel.on(B)(
        buf, me, each, s.hands, s.played, s.taken, s.scores, s.hand_no, s.dealer, s.leader, s.trick,
        s.bids, s.phase, s.trump_card, s.hand_size, _OH_SUIT_OF, offsets, _OH_TAKEN_MUL, _SCORE_MUL,
    )  # fmt: skip
    _check_result(bad, B, cfg.players, me, each)
    if out is None or buf is out:
        return buf
    out[...] = buf
    return out


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
