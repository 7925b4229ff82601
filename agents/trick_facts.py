"""Compiled helpers both games' heuristics share (the rules they apply come from the core: card
strength and the trick's winner, follow-suit, voids and card counting in :mod:`bobshat_env.core.tricks`).

The ``strong`` bots' card play and estimates run as compiled per-row loops
(numba) over the facts each bot reads from its observations. The helpers
here are the small pieces those loops share: :func:`none_of` (card
counting's chance that a hand holds none of some cards), reading one-hot
slices (:func:`argmax_at`, :func:`any_at`), the cards a row has seen
(:func:`mark_seen`) and the final pick (:func:`pick_row`). They index
``arr[g, i]`` rather than taking row views, which would cost an allocation
each.

Caching: the bots' kernels are compiled with ``cache=True`` and numba checks
only the cached function's own file, not the helpers it calls here; so
``agents/__init__.py`` drops the package's cached kernels whenever any of
its sources (or the core's) changed, see
:func:`bobshat_env.core.compiled.drop_stale_caches`.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True, inline="always")
def none_of(count: float, n: float, k: float) -> float:
    """``(1 - min(count / n, 1)) ** k``: the chance that ``k`` cards, each drawn from ``n`` unseen cards
    (independently: the bots' simplification), include none of ``count`` given cards (``n >= 1``).

    ``k`` is a whole number (cards held, higher cards) and is raised as an integer: repeated
    multiplication, which made the strong bots' play faster than ``pow`` with a float exponent
    (docs/results/engineering.md, "The bots' kernels").
    """
    return (1.0 - min(count / n, 1.0)) ** int(k)


@njit(cache=True, nogil=True)
def argmax_at(obs: np.ndarray, g: int, start: int, n: int) -> int:
    """``np.argmax(obs[g, start:start + n])``: the first largest entry."""
    best = 0
    for i in range(1, n):
        if obs[g, start + i] > obs[g, start + best]:
            best = i
    return best


@njit(cache=True, nogil=True)
def any_at(obs: np.ndarray, g: int, start: int, n: int) -> bool:
    """``obs[g, start:start + n].any()``."""
    for i in range(n):
        if obs[g, start + i] != 0:
            return True
    return False


@njit(cache=True, nogil=True)
def mark_seen(hand: np.ndarray, played: np.ndarray, trick: np.ndarray, g: int, seen: np.ndarray) -> None:
    """seen[c]: row ``g`` has seen card ``c``: in its ``hand`` (B, N), ``played`` (B, N) or the ``trick`` (B, P)."""
    for c in range(seen.shape[0]):
        seen[c] = hand[g, c] | played[g, c]  # branch-free: "or" costs a mispredicted branch per card
    for p in range(trick.shape[1]):
        if trick[g, p] >= 0:
            seen[trick[g, p]] = True


@njit(cache=True, nogil=True)
def pick_row(score: np.ndarray, legal: np.ndarray, g: int) -> int:
    """``np.argmax(np.where(legal[g], score, -1e9))``: the legal card with the highest score, the first of equals."""
    best, best_v = 0, -np.inf
    for c in range(score.shape[0]):
        v = score[c] if legal[g, c] else -1e9
        if v > best_v:
            best, best_v = c, v
    return best
