"""The first layer of a policy network as a sparse product: ``x @ W.T + b`` touching only x's non-zeros.

A prepared input (observation plus trick facts) is mostly zeros: Bob's Hat
4p's 571 inputs hold about 57 non-zeros per row (10%), most of them exactly
1. The first layer is the network's widest product (571 x 128 of the
preset's ~100k multiply-adds per row), so in a dense PPO update it is about
two thirds of the multiply-adds, forward and weight gradient together.

:class:`SparseRows` lists a batch's non-zeros row by row (CSR: ``ptr``,
``col``, ``val``); :func:`sparse_linear` multiplies over them, forward and
weight gradient (``dW.T[j] = sum over rows i with x[i, j] != 0 of x[i, j]
g[i]``), by compiled loops that release the GIL. The update lists its whole
float16 rollout once (:meth:`SparseRows.from_dense`) and takes each
minibatch's rows from the lists (:meth:`SparseRows.take`), so it never builds
the dense float32 minibatch at all.

The first layer's product alone is nearly twice as fast as the dense one; the
whole trainer gains little, since the other layers, the loss and Adam are the
rest of the update (``benchmarks/sparse_linear.py``; the numbers:
docs/results/engineering.md, "The sparse first layer").

The sums run in another order than a dense product's, so results agree with
``torch.nn.functional.linear`` to float32 rounding, not bit for bit, and do
not depend on the number of threads: the trainer's update uses it
(``Args.sparse_input``), while the agents that play shipped policies, and the
collector's sampling, keep the dense product (on the collector's ~600 rows a
step the sparse forward saved about 1% of a run).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import torch
from numba import njit, prange


@njit(cache=True, nogil=True, inline="always")
def _half_value(h: np.uint16) -> np.float32:
    """The float32 value of IEEE half-precision bits (normal, subnormal, infinite or NaN), exactly."""
    e = (h >> 10) & 0x1F
    m = h & 0x3FF
    v: float | np.floating
    if e == 0:
        v = m * 5.9604644775390625e-08  # 2**-24
    elif e == 31:
        v = np.inf if m == 0 else np.nan
    else:
        v = (1024 + m) * 2.0 ** (e - 25)
    return np.float32(-v if h & 0x8000 else v)


@njit(cache=True, nogil=True, parallel=True)
def _scan_half(bits: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ptr, col, val): the non-zeros, row by row (CSR), of a float16 matrix given as its uint16 bits.

    Branch-free: a count pass, then every cell of a row up to its last non-zero is written at the row's next
    free place, which advances only past a non-zero (faster than testing each cell); rows in parallel,
    each writing only its own places. -0.0 counts as a zero."""
    n, d = bits.shape
    cnt = np.zeros(n, dtype=np.int64)
    stop = np.zeros(n, dtype=np.int64)  # one past the row's last non-zero
    for i in prange(n):
        c = 0
        for j in range(d):
            c += (bits[i, j] & 0x7FFF) != 0
        cnt[i] = c
        e = d
        while e > 0 and bits[i, e - 1] & 0x7FFF == 0:
            e -= 1
        stop[i] = e
    ptr = np.zeros(n + 1, dtype=np.int64)
    ptr[1:] = np.cumsum(cnt)
    col = np.empty(ptr[n], dtype=np.int32)
    raw = np.empty(ptr[n], dtype=np.uint16)
    for i in prange(n):
        k = ptr[i]
        for j in range(stop[i]):  # up to the last non-zero: every write stays inside the row's own places
            h = bits[i, j]
            col[k] = j
            raw[k] = h
            k += (h & 0x7FFF) != 0
    val = np.empty(ptr[n], dtype=np.float32)
    for k in prange(ptr[n]):  # the non-zeros' values only
        val[k] = _half_value(raw[k])
    return ptr, col, val


@njit(cache=True, nogil=True, parallel=True)
def _take(
    ptr: np.ndarray, col: np.ndarray, val: np.ndarray, rows: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The lists of rows ``rows`` (in that order) out of (ptr, col, val)."""
    m = rows.size
    out_ptr = np.zeros(m + 1, dtype=np.int64)
    out_ptr[1:] = np.cumsum(ptr[rows + 1] - ptr[rows])
    out_col = np.empty(out_ptr[m], dtype=np.int32)
    out_val = np.empty(out_ptr[m], dtype=np.float32)
    for r in prange(m):
        s, o, e = ptr[rows[r]], out_ptr[r], out_ptr[r + 1]
        out_col[o:e] = col[s : s + e - o]
        out_val[o:e] = val[s : s + e - o]
    return out_ptr, out_col, out_val


_CHUNKS = 2  # the weight gradient's row chunks: a constant, so its sums do not depend on the thread count


@njit(cache=True, nogil=True, parallel=True)
def _forward(ptr: np.ndarray, col: np.ndarray, val: np.ndarray, wt: np.ndarray, out: np.ndarray) -> None:
    """out[i] += sum over row i's non-zeros (j, v) of v * wt[j]: the product by the weight's transpose."""
    w = out.shape[1]
    for i in prange(out.shape[0]):
        for k in range(ptr[i], ptr[i + 1]):
            v, c = val[k], col[k]
            for o in range(w):
                out[i, o] += v * wt[c, o]


@njit(cache=True, nogil=True, parallel=True)
def _weight_grad(ptr: np.ndarray, col: np.ndarray, val: np.ndarray, g: np.ndarray, dwt: np.ndarray) -> None:
    """dwt[j] += sum over rows i with x[i, j] = v != 0 of v * g[i]: x.T @ g. The rows are cut into
    ``_CHUNKS`` parts summed in parallel into their own slabs, then added in order (no two tasks write one cell;
    splitting the output columns among tasks instead was an order of magnitude slower on one thread: its inner
    loop lost SIMD)."""
    n, w = g.shape
    acc = np.zeros((_CHUNKS, dwt.shape[0], w), dtype=np.float32)
    for t in prange(_CHUNKS):
        a = acc[t]
        for i in range(n * t // _CHUNKS, n * (t + 1) // _CHUNKS):
            for k in range(ptr[i], ptr[i + 1]):
                v, c = val[k], col[k]
                for o in range(w):
                    a[c, o] += v * g[i, o]
    for t in range(_CHUNKS):
        dwt += acc[t]


class SparseRows(NamedTuple):
    """A (rows, columns) float32 matrix as its non-zeros row by row: row ``i``'s are ``col[ptr[i]:ptr[i+1]]``
    with values ``val[ptr[i]:ptr[i+1]]``, columns increasing."""

    ptr: np.ndarray  # (rows + 1,) int64
    col: np.ndarray  # (nnz,) int32
    val: np.ndarray  # (nnz,) float32
    columns: int

    @classmethod
    def from_dense(cls, x: np.ndarray | torch.Tensor) -> SparseRows:
        """The lists of a 2-D float32 or float16 array (float16 values are converted exactly)."""
        a = x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)
        if a.ndim != 2 or a.dtype not in (np.float32, np.float16):
            raise ValueError(f"SparseRows needs a 2-D float32 or float16 array, got {a.dtype} of shape {a.shape}")
        a = np.ascontiguousarray(a)
        if a.dtype == np.float16:
            return cls(*_scan_half(a.view(np.uint16)), a.shape[1])
        r, c = np.nonzero(a)  # row-major order: CSR's
        ptr = np.zeros(a.shape[0] + 1, dtype=np.int64)
        np.cumsum(np.bincount(r, minlength=a.shape[0]), out=ptr[1:])
        return cls(ptr, c.astype(np.int32), a[r, c], a.shape[1])

    @property
    def rows(self) -> int:
        """How many rows."""
        return self.ptr.size - 1

    def take(self, rows: np.ndarray | torch.Tensor) -> SparseRows:
        """The lists of ``rows`` (row numbers, in that order)."""
        idx = rows.cpu().numpy() if isinstance(rows, torch.Tensor) else np.asarray(rows)
        return SparseRows(*_take(self.ptr, self.col, self.val, idx.astype(np.int64, copy=False)), self.columns)

    def dense(self) -> torch.Tensor:
        """The float32 matrix (for tests and checks)."""
        out = np.zeros((self.rows, self.columns), dtype=np.float32)
        out[np.repeat(np.arange(self.rows), np.diff(self.ptr)), self.col] = self.val
        return torch.from_numpy(out)


class _SparseLinear(torch.autograd.Function):
    """``x @ weight.T + bias`` for x given as :class:`SparseRows`, with the weight's and bias's gradients."""

    @staticmethod
    def forward(ctx: Any, weight: torch.Tensor, bias: torch.Tensor, x: SparseRows) -> torch.Tensor:
        out = bias.detach().expand(x.rows, -1).contiguous()
        _forward(x.ptr, x.col, x.val, weight.detach().t().contiguous().numpy(), out.numpy())
        ctx.x = x
        return out

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, None]:
        x, g = ctx.x, grad.contiguous()
        dwt = torch.zeros(x.columns, g.shape[1], dtype=torch.float32)
        _weight_grad(x.ptr, x.col, x.val, g.numpy(), dwt.numpy())
        return dwt.t(), g.sum(0), None


def sparse_linear(x: SparseRows | torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """``torch.nn.functional.linear(x, weight, bias)`` over x's non-zeros only (float32 CPU weights; x gets no
    gradient). ``x``: :class:`SparseRows`, or a tensor (listed here; the dense product where the sparse one does
    not apply: another dtype or device, or an x that needs a gradient, so a caller can ask unconditionally)."""
    if weight.device.type != "cpu" or weight.dtype != torch.float32 or bias.dtype != torch.float32:
        if isinstance(x, SparseRows):
            x = x.dense().to(weight.device, weight.dtype)
        return torch.nn.functional.linear(x, weight, bias)
    if isinstance(x, torch.Tensor):
        if x.device.type != "cpu" or x.dtype != torch.float32 or x.requires_grad or x.dim() != 2:
            return torch.nn.functional.linear(x, weight, bias)
        x = SparseRows.from_dense(x)
    if x.columns != weight.shape[1]:
        raise ValueError(f"{x.columns} input columns for a layer of {weight.shape[1]} inputs")
    return _SparseLinear.apply(weight, bias, x)
