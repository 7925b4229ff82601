"""Observation encoding, the game-neutral part: seat-relative flat ``float32`` vectors of named slices.

Every observation is one flat vector so it feeds an MLP directly, but it is
built from named slices (:class:`ObsLayout`) so that code and tests can read
it back: ``layout.decode(vec)`` returns each slice in its shape, and each
game's ``decode`` turns that into facts (cards, bids, seats). Seats are
relative: position 0 is the observer, 1 the next player clockwise, and so on.

Each game's own module owns its observation (``bobs_hat.layout`` /
``observe`` / ``decode``, ``oh_hell.layout`` / ...: the contract of
core/contract.py), as pgx's games do; this module holds what they share and
imports no game, so the graph runs one way: game module -> this module.

Three views per game:

- ``private`` (default): what the observing seat may know;
- ``public``: the same without the observer's hand (what everybody knows);
- ``full``: the private view plus every seat's hand, for oracle critics.

The encoders are compiled loops over the batch (numba ``@njit``): each game's
row is written straight into the output, with no NumPy temporaries, which
matters twice over: a rollout of 4096 games observes every step, and the
PettingZoo adapter observes one game per decision, where the cost is the
Python call itself. So the Python side only validates its arguments and
looks up cached layout offsets (:func:`cached_params`); the kernels get the
state's arrays and one named tuple of ints (each game's ``ObsOffsets``, built
from the layout by :meth:`ObsLayout.offsets`): where each slice starts, read
by its name (``o.trick``), plus the view's flags and the game constants, so
that numba's on-disk cache never holds a stale copy of another module's
constants. Adding a slice is a line in the game's layout, a field in the
game's offsets tuple and the kernel's code that writes it. What both games
encode the same way (hand, cards played, taken, scores, hand number, dealer,
leader, current trick, all hands) is one shared helper, :func:`encode_shared`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from numba import njit

VIEWS = ("private", "public", "full")


def multiplier(scale: float) -> float:
    """``1 / scale`` rounded to float32, held as a Python float for the kernels.

    The kernels scale a count ``x`` as ``float32(float64(x) * m)``: the float64
    product of a small integer and a float32 is exact, so its rounding to
    float32 is the float32 product NumPy computes for int8 counts, and also
    the float64-then-float32 result it computes for int32 scores.
    """
    return float(np.float32(1 / scale))


BAD_STATE = -2  # kernel result: the state's arrays do not fit the layout (batch, seats, cards)
_OPTIONAL_SLICES = ("all_hands",)  # slices only some views have; their offset is -1 elsewhere


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

    def offsets(self, cls: type[NamedTuple], **values: int) -> tuple:
        """A ``cls`` (a NamedTuple of ints): each field named after a slice holds where the slice starts
        (``all_hands``, only in the full view, is -1 elsewhere), the other fields come from ``values``.

        Kernels take it as a plain tuple (numba types those at a call the
        quickest) and rebuild it to read the offsets by name:
        ``o = ObsOffsets(*offsets)``, then ``o.trick``.
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
                owner = f"{cls.__module__.rsplit('.', 1)[-1]}.{cls.__name__}"  # e.g. oh_hell.ObsOffsets
                raise ValueError(f"{owner}.{name} is neither a slice of this layout nor given")
        # typing's NamedTuple stands for any NamedTuple class, but mypy types a call of it as the NamedTuple() factory
        return tuple(cls(**out))  # type: ignore[call-overload, unused-ignore]

    def table(self) -> str:
        """A Markdown table of the slices (name, offset, shape), for docs."""
        rows = ["| slice | offset | shape |", "|---|---|---|"]
        for (name, sl), shape in zip(self.slices.items(), self.shapes):
            rows.append(f"| {name} | {sl.start} | {shape} |")
        return "\n".join(rows)


def game_layout(view: str, n_cards: int, P: int, *spec: tuple[str, tuple[int, ...]]) -> ObsLayout:
    """A game's observation layout in ``view``: every game's first two slices, the game's own ``spec``
    (its dense slices, then its one-hot block from ``phase`` to ``trick``), and in the full view every hand.

    ``hand``: the observer's cards (zeros in the public view); ``played``:
    the cards in completed tricks this hand; ``all_hands`` (full view only):
    each relative seat's cards. ValueError for an unknown view.
    """
    if view not in VIEWS:
        raise ValueError(f"unknown view {view!r}; choose one of {', '.join(VIEWS)}")
    full = [("all_hands", (P, n_cards))] if view == "full" else []
    return ObsLayout.of(("hand", (n_cards,)), ("played", (n_cards,)), *spec, *full)


# --------------------------------------------------------------------------
# What both encoders share: argument checks, cached offsets, the common slices.
def cached_params(cache: dict, build: Any, cfg: Any, view: str) -> tuple:
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


def seat_arg(state: Any, seat: Any, B: int) -> tuple[np.ndarray, bool]:
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


def out_arg(out: np.ndarray | None, B: int, size: int) -> np.ndarray:
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


def check_result(bad: int, B: int, P: int, seat: np.ndarray, each: bool) -> None:
    """Turn a kernel's failure code into a ValueError (-1 means success)."""
    if bad == -1:
        return
    if bad == BAD_STATE:
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
# An integer in compiled code: a Python int or a NumPy scalar (the kernels make their indices np.int64), which
# are no ints to a type checker.
KernelInt = int | np.integer


@njit(cache=True, nogil=True, inline="always")
def set_onehot(out: np.ndarray, g: KernelInt, start: int, n: int, idx: KernelInt) -> None:
    """One-hot ``idx`` into the cleared ``out[g, start : start + n]``; nothing if ``idx`` is outside 0..n-1."""
    if 0 <= idx < n:
        out[g, _U(start + idx)] = 1.0


@njit(cache=True, nogil=True, inline="always")
def rel_seat(seat: KernelInt, me: KernelInt, P: int) -> KernelInt:
    """Absolute seat as seen from seat ``me`` (both 0..P-1), without a division."""
    return seat - me if seat >= me else seat - me + P


@njit(cache=True, nogil=True, inline="always")
def shared_ok(
    g: KernelInt,
    P: int,
    n_cards: int,
    n_hand_number: int,
    hand_no: np.ndarray,
    dealer: np.ndarray,
    leader: np.ndarray,
    trick: np.ndarray,
) -> bool:
    """Game ``g``'s values for the shared one-hot slices fit the layout."""
    h, d, lead = hand_no[g], dealer[g], leader[g]
    ok = (0 <= h) & (h < n_hand_number) & (0 <= d) & (d < P) & (0 <= lead) & (lead < P)
    for s in range(P):
        ok &= trick[g, s] < n_cards  # negative: no card
    return ok


@njit(cache=True, nogil=True, inline="always")
def encode_shared(
    out: np.ndarray,
    g: KernelInt,
    me: KernelInt,
    o: Any,
    hands: np.ndarray,
    played: np.ndarray,
    taken: np.ndarray,
    taken_mul: float,
    scores: np.ndarray,
    score_mul: float,
    hand_no: np.ndarray,
    dealer: np.ndarray,
    leader: np.ndarray,
    trick: np.ndarray,
) -> None:
    """Write what both games encode alike into row ``g`` of ``out``, and clear the one-hot block.

    ``me`` is the observer (0..P-1), ``o`` the game's offsets tuple
    (the game's ``ObsOffsets``: every game names these fields
    alike), ``taken`` is (B, P, K) with K counts per seat. The one-hot block
    runs from ``o.phase`` to the end of the trick slice; the caller then
    sets the ones of its own one-hot slices there. The game has passed
    :func:`shared_ok`.
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
        set_onehot(out, g, o.trick + r * n_cards, n_cards, np.int64(trick[g, s]))  # -1: no card yet
        if o.full:
            for c in range(n_cards):
                out[g, _U(o.all_hands + r * n_cards + c)] = np.float32(hands[g, s, c])
        s = s + 1 if s + 1 < P else 0
    set_onehot(out, g, o.hand_number, o.n_hand_number, np.int64(hand_no[g]))
    set_onehot(out, g, o.dealer, P, rel_seat(np.int64(dealer[g]), me, P))
    set_onehot(out, g, o.leader, P, rel_seat(np.int64(leader[g]), me, P))


@njit(cache=True, nogil=True, inline="always")
def fits(
    B: int,
    P: int,
    n_cards: int,
    hands: np.ndarray,
    played: np.ndarray,
    taken: np.ndarray,
    scores: np.ndarray,
    trick: np.ndarray,
    bids: np.ndarray,
    per_game: tuple[int, ...],
) -> bool:
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
# The Python wrappers every game puts around its layout and kernel.
def onehot_index(v: np.ndarray) -> int | None:
    """The index of the one in a one-hot slice of one observation, None if the slice is all zero."""
    return int(np.argmax(v)) if v.any() else None


@dataclass
class SeenFrame:
    """What every game's ``public_state`` reads alike from a batch of private observations.

    ``o``: the layout's slices, (B, *shape) each; ``me``: the observers;
    ``absolute``: (B, P) the absolute seat of each relative seat; ``hand``,
    ``played``: what the observer holds and has seen played; ``trick``:
    (B, P) the current trick by absolute seat; ``hand_no`` and
    ``tricks_done`` (int64), and ``fields``: the ``TrickState`` fields every
    game rebuilds the same way, for the game's ``State(**fields, ...)``.
    """

    o: dict[str, np.ndarray]
    me: np.ndarray
    absolute: np.ndarray
    hand: np.ndarray
    played: np.ndarray
    trick: np.ndarray
    hand_no: np.ndarray
    tricks_done: np.ndarray
    fields: dict[str, np.ndarray]

    def to_absolute(self, rel: np.ndarray, fill: int, dtype: Any) -> np.ndarray:
        """``rel`` (B, P, ...) by relative seat, as an array by absolute seat (``fill`` where nothing is written)."""
        B, P = self.absolute.shape
        out = np.full((B, P) + rel.shape[2:], fill, dtype=dtype)
        out[np.arange(B)[:, None], self.absolute] = rel
        return out


@dataclass(eq=False)
class GameObservation:
    """One game's observation wrappers, around its own layout, offsets tuple and kernel.

    A game's module keeps what is its own: ``layout`` (its slices),
    ``ObsOffsets`` (what its kernel reads), the kernel, the facts only it
    decodes and the fields only its state has. This holds what both games'
    ``obs_offsets`` / ``observe`` / ``decode`` / ``public_state`` did alike:
    the cached offsets, the call around the kernel (argument checks, ``out``
    handling, the failure codes), the shared facts of a decoded vector and
    the shared frame of a rebuilt public state.

    ``game_values(cfg)``: the game's own ``ObsOffsets`` fields that are not
    slice offsets (its flags and constants). ``taken_scale`` /
    ``score_scale``: what the kernel divides taken counts and totals by.
    ``facts``: the order of the keys of ``decode``'s dict (``all_hands``, in
    the full view, comes last).
    """

    layout: Any
    offsets_cls: type
    deck: Any
    game_values: Any
    taken_scale: float
    score_scale: float
    facts: tuple[str, ...]

    def __post_init__(self) -> None:
        self.taken_mul = multiplier(self.taken_scale)
        self.score_mul = multiplier(self.score_scale)
        self._cache: dict = {}

    def _build(self, cfg: Any, view: str) -> tuple[int, tuple[int, ...]]:
        lay = self.layout(cfg, view)  # raises ValueError for an unknown view
        offsets = lay.offsets(
            self.offsets_cls, players=cfg.players, n_cards=self.deck.n_cards,
            n_hand_number=lay.shape_of("hand_number")[0], own_hand=view != "public", full=view == "full",
            **self.game_values(cfg),
        )  # fmt: skip
        return lay.size, offsets

    def params(self, cfg: Any, view: str) -> tuple[int, tuple[int, ...]]:
        """(size, the game's ``ObsOffsets`` as a plain tuple) of a config and view, cached."""
        return cached_params(self._cache, self._build, cfg, view)

    def offsets(self, cfg: Any, view: str = "private") -> tuple[int, ...]:
        """The game's ``ObsOffsets`` of a config and view, as the plain tuple compiled readers take
        (each game's ``obs_offsets``)."""
        return self.params(cfg, view)[1]

    def observe(
        self, kernel: Any, cfg: Any, state: Any, seat: Any, view: str, out: np.ndarray | None, game_args: tuple
    ) -> np.ndarray:
        """Run the game's ``kernel`` for the game's ``observe``: checks, ``out`` handling and the failure codes.

        The kernel takes ``(out, seat, each, hands, played, taken, scores,
        hand_no, dealer, leader, trick, *game_args, offsets, taken_mul,
        score_mul)``: the shared state arrays, then the game's own.
        """
        size, offsets = cached_params(self._cache, self._build, cfg, view)  # not self.params: a call less per step
        B = state.phase.shape[0]
        me, each = seat_arg(state, seat, B)
        buf = out_arg(out, B, size)
        s = state
        bad = kernel.on(B)(
            buf, me, each, s.hands, s.played, s.taken, s.scores, s.hand_no, s.dealer, s.leader, s.trick,
            *game_args, offsets, self.taken_mul, self.score_mul,
        )  # fmt: skip
        check_result(bad, B, cfg.players, me, each)
        if out is None or buf is out:
            return buf
        out[...] = buf
        return out

    def decode(self, cfg: Any, vec: np.ndarray, view: str, game_facts: Any) -> dict:
        """The facts of one observation vector: the shared ones and ``game_facts(cfg, slices)``'s, in order."""
        d = self.layout(cfg, view).decode(vec)
        P = cfg.players
        hand_no = onehot_index(d["hand_number"])  # None: an all-zero slice, which no observation of a state has
        facts = {
            "hand": np.nonzero(d["hand"])[0].tolist(),
            "hand_number": None if hand_no is None else hand_no + 1,
            "dealer": onehot_index(d["dealer"]),
            "leader": onehot_index(d["leader"]),
            "trick": [onehot_index(d["trick"][r]) for r in range(P)],
            "played": np.nonzero(d["played"])[0].tolist(),
            "taken": np.rint(d["taken"] * self.taken_scale).astype(int).tolist(),
            "scores": np.rint(d["scores"] * self.score_scale).astype(int).tolist(),
        }
        facts.update(game_facts(cfg, d))
        out = {k: facts[k] for k in self.facts}
        if view == "full":
            out["all_hands"] = [np.nonzero(d["all_hands"][r])[0].tolist() for r in range(P)]
        return out

    def seen_frame(self, cfg: Any, obs: np.ndarray, seat: np.ndarray, first_phase: int, done: int) -> SeenFrame:
        """What ``public_state`` rebuilds alike in every game from private observations (B, size).

        ``first_phase``: the phase of the phase slice's first column;
        ``done``: the phase of a game whose phase slice is all zero.
        """
        P = cfg.players
        obs = np.asarray(obs, dtype=np.float32)
        B = obs.shape[0]
        b = np.arange(B)
        o = self.layout(cfg).views(obs)
        me = np.asarray(seat, dtype=np.int64).reshape(B)
        absolute = (me[:, None] + np.arange(P)[None, :]) % P  # relative r -> absolute seat
        onehot = lambda a: np.argmax(a, axis=1)  # noqa: E731
        played = o["played"] > 0.5
        trick_rel = np.where(o["trick"].any(axis=2), np.argmax(o["trick"], axis=2), -1)  # (B, P) relative
        trick = np.full((B, P), -1, dtype=np.int8)
        trick[b[:, None], absolute] = trick_rel
        leader = (onehot(o["leader"]) + me) % P
        lead_card = trick[b, leader].astype(np.int64)
        led_suit = np.where(lead_card >= 0, self.deck.suit_of[np.maximum(lead_card, 0)], -1)
        hand_no = onehot(o["hand_number"])
        tricks_done = played.sum(axis=1) // P
        ph = o["phase"]
        phase = np.where(ph.any(axis=1), onehot(ph) + first_phase, done)
        scores = np.zeros((B, P), dtype=np.int32)
        scores[b[:, None], absolute] = np.rint(o["scores"] * self.score_scale).astype(np.int32)
        dealer = ((onehot(o["dealer"]) + me) % P).astype(np.int8)
        fields = {
            "key": np.zeros(B, dtype=np.uint64),  # the real key would reveal the deal
            "phase": phase.astype(np.int8),
            "hand_no": hand_no.astype(np.int8),
            "dealer": dealer,
            "first_dealer": ((dealer.astype(np.int64) - hand_no) % P).astype(np.int8),
            "cur": me.astype(np.int8),
            "trick": trick,
            "leader": leader.astype(np.int8),
            "n_in_trick": (trick >= 0).sum(axis=1).astype(np.int8),
            "led_suit": led_suit.astype(np.int8),
            "tricks_done": tricks_done.astype(np.int8),
            "played": played,
            "scores": scores,
            "last_scores": np.zeros((B, P), dtype=np.int16),
        }
        return SeenFrame(o, me, absolute, o["hand"] > 0.5, played, trick, hand_no, tricks_done, fields)

    def taken(self, frame: SeenFrame) -> np.ndarray:
        """The taken counts by absolute seat, int8, (B, P) or (B, P, K) as the game's state holds them."""
        return frame.to_absolute(np.rint(frame.o["taken"] * self.taken_scale).astype(np.int8), 0, np.int8)
