"""Counter-based randomness: every random draw is a hash of (game key, counters).

Why not one ``numpy.random.Generator`` per batch? Because then game ``i`` of a
batch of 1000 would see different cards than game ``i`` of a batch of 1. Here
each game owns a 64-bit key; the trump, the deal and every other chance event
of hand ``h`` (attempt ``a``, after reneges) is a pure function of
``(key, h, a)``. The same key gives the same deals whatever the batch size,
whatever the agents do, which is also what duplicate play needs.

Keys themselves come from the caller's seed (an int or a
``numpy.random.Generator``) via :func:`game_keys`.
"""

from __future__ import annotations

import numpy as np
from numba import njit, vectorize

_U64 = np.uint64
_GOLDEN = _U64(0x9E3779B97F4A7C15)
_M1 = _U64(0xBF58476D1CE4E5B9)
_M2 = _U64(0x94D049BB133111EB)
_S30, _S27, _S31 = _U64(30), _U64(27), _U64(31)


@njit(cache=True)
def mix64_one(x: np.uint64) -> np.uint64:
    """SplitMix64 finalizer of one uint64 (wraps mod 2**64)."""
    z = np.uint64(x) + _GOLDEN
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


_mix64_ufunc = vectorize(["uint64(uint64)"], cache=True)(mix64_one.py_func)


def combine(key: np.ndarray | np.integer | int, *counters: np.ndarray | int) -> np.ndarray:
    """Hash a key with any number of integer counters into a new uint64 key."""
    h = np.asarray(key, dtype=np.uint64)
    for c in counters:
        h = _mix64_ufunc(h ^ _mix64_ufunc(np.asarray(c, dtype=np.uint64)))
    return h


@njit(cache=True)
def combine_one(key: np.uint64, counter: np.uint64) -> np.uint64:
    """:func:`combine` of one key and one counter, for compiled code."""
    return mix64_one(np.uint64(key) ^ mix64_one(np.uint64(counter)))


def seed_to_base(seed: int | np.random.Generator | None) -> int:
    """A 64-bit base key from an int seed, a Generator, or fresh entropy."""
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(0, 2**63, dtype=np.int64))
    if seed is None:
        return int(np.random.default_rng().integers(0, 2**63, dtype=np.int64))
    if isinstance(seed, (bool, float)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an int, a numpy Generator or None, not {type(seed).__name__}")
    return int(seed) & 0xFFFFFFFFFFFFFFFF


def game_keys(seed: int | np.random.Generator | None, slots: np.ndarray, games: np.ndarray | int = 0) -> np.ndarray:
    """Key of game number ``games`` played in batch slot ``slots``.

    Game ``g`` of slot ``i`` has the same key for every batch size, which is
    what makes B = 1 and B = 1000 play identical games.
    """
    base = np.uint64(seed_to_base(seed))
    return combine(base, np.asarray(slots), np.asarray(games))


def uniform_ints(key: np.ndarray, n: np.ndarray | int) -> np.ndarray:
    """One integer in ``[0, n)`` per key (bias below 2**-50 for small n)."""
    return (np.asarray(key, dtype=np.uint64) % np.asarray(n, dtype=np.uint64)).astype(np.int64)


@njit(cache=True)
def shuffle_positions(key: np.uint64, hashes: np.ndarray, out: np.ndarray, deck: np.ndarray) -> None:
    """The shuffle of the cards ``deck`` (ascending card ids, a subset of the ``out.shape[0]`` ids)
    drawn from ``key``: ``out[j]`` is card j's position in the shuffled deck, ``n`` (past the end)
    for a card not in the deck.

    Card j gets the hash of (key, j + 1) and the deck is sorted by hash, so a
    card's position is how many of the deck's hashes are smaller than its own
    (64-bit hashes: ties have odds of about n^2 / 2^65). A small variant's
    deck (a subset) is ordered by the same hashes: its shuffle is the full
    deck's with the other cards left out. Counting is a branch-free
    m^2 loop over the deck's m hashes, packed together so that the inner loop
    reads one contiguous array with no mask to test (docs/results/engineering.md,
    "The deal's shuffle"); it is faster than a sort for a deck of cards.
    ``hashes`` is scratch space of at least m.
    """
    n, m = out.shape[0], deck.shape[0]
    for k in range(m):
        hashes[k] = combine_one(key, np.uint64(deck[k] + 1))
    for j in range(n):
        out[j] = n
    for k in range(m):
        h, below = hashes[k], 0
        for i in range(m):
            below += hashes[i] < h
        out[deck[k]] = below
