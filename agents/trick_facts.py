"""Compiled helpers both games' heuristics share (the rules they apply come from the core: card
strength and the trick's winner, follow-suit, voids and card counting in :mod:`bobshat_env.core.tricks`).

The ``strong`` bots' card play runs as compiled per-row loops (numba) that
must choose exactly the actions the batched NumPy formulas they replaced
chose. Floating point is not associative and NumPy's kernels are not plain
loops, so the helpers here reproduce NumPy's results bit for bit where a
plain compiled loop would differ in the last bit:

- :data:`POW`, a table of NumPy's own ``(1 - c / n) ** k`` for every count
  the bots raise to a power (NumPy's vectorized ``power`` and libm's ``pow``
  differ in the last bit for ~2% of these);
- :func:`pairwise_sum`, NumPy's summation order for a row of 8 or more floats;
- :func:`blas_onehot_sum`, the order in which OpenBLAS's matrix product (what
  ``w @ SUIT_ONEHOT`` called, for 8 or more rows) adds the cards of a suit.

The small row helpers (:func:`argmax_at`, :func:`mark_seen`,
:func:`pick_row`) index ``arr[g, i]`` rather than taking row views, which
would cost an allocation each.

Caching: the bots' kernels are compiled with ``cache=True`` and numba checks
only the cached function's own file, not the helpers it calls here; so
``agents/__init__.py`` drops the package's cached kernels whenever any of
its sources (or the core's) changed, see
:func:`bobshat_env.core.compiled.drop_stale_caches`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# --------------------------------------------------------------------------
# Compiled helpers
POW_N, POW_K = 61, 21  # counts of unseen cards (0-60) and exponents (cards held, higher cards: 0-20)


def _pow_table() -> np.ndarray:
    """(61, 61, 21) float64: ``POW[n, c, k] = (1 - min(c / n, 1)) ** k`` as NumPy's array ``power`` computes it."""
    n = np.arange(POW_N, dtype=np.float64)[:, None, None]
    c = np.arange(POW_N, dtype=np.float64)[None, :, None]
    k = np.arange(POW_K, dtype=np.float64)[None, None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        base = 1 - np.minimum(c / np.maximum(n, 1), 1.0)
    n, c, k = np.broadcast_arrays(n, c, k)
    return np.ascontiguousarray(np.broadcast_to(base, n.shape) ** k)


POW = _pow_table()


@njit(cache=True, nogil=True)
def pow_frac(table: np.ndarray, count: float, n: float, k: float) -> float:
    """``(1 - min(count / n, 1)) ** k`` for whole numbers ``count >= 0``, ``n >= 1``, ``k``, as NumPy gives it.

    From ``table`` (:data:`POW`) when the numbers are in its range, else
    computed (never the case in these games).
    """
    c, m, e = int(count), int(n), int(k)
    if c > m:
        c = m
    if 0 <= c and 1 <= m < POW_N and 0 <= e < POW_K:
        return table[m, c, e]
    return (1.0 - min(count / n, 1.0)) ** k


@njit(cache=True, nogil=True)
def pairwise_sum(x: np.ndarray, n: int) -> float:
    """``x[:n].sum()`` in NumPy's order for a contiguous row (n <= 128): 8 running sums, then pairs."""
    if n < 8:
        res = 0.0
        for i in range(n):
            res += x[i]
        return res
    r0, r1, r2, r3, r4, r5, r6, r7 = x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]
    i = 8
    while i < n - n % 8:
        r0 += x[i]
        r1 += x[i + 1]
        r2 += x[i + 2]
        r3 += x[i + 3]
        r4 += x[i + 4]
        r5 += x[i + 5]
        r6 += x[i + 6]
        r7 += x[i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += x[i]
        i += 1
    return res


@njit(cache=True, nogil=True)
def blas_onehot_sum(x: np.ndarray, suit: np.ndarray, s: int) -> float:
    """Sum of ``x[c]`` over the cards ``c`` of suit ``s``, in OpenBLAS's order for ``x @ SUIT_ONEHOT``.

    Its kernel keeps 8 running sums over the card index (card ``c`` goes to
    sum ``c % 8``) and adds them in pairs.
    """
    r0 = r1 = r2 = r3 = r4 = r5 = r6 = r7 = 0.0
    for c in range(x.shape[0]):
        if suit[c] != s:
            continue
        j = c % 8
        if j == 0:
            r0 += x[c]
        elif j == 1:
            r1 += x[c]
        elif j == 2:
            r2 += x[c]
        elif j == 3:
            r3 += x[c]
        elif j == 4:
            r4 += x[c]
        elif j == 5:
            r5 += x[c]
        elif j == 6:
            r6 += x[c]
        else:
            r7 += x[c]
    return ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))


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
        seen[c] = hand[g, c] or played[g, c]
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
