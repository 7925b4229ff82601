"""The first layer of a policy network as a sparse product: ``x @ W.T + b`` touching only x's non-zeros.

A prepared input (observation plus trick facts) is mostly zeros: Bob's Hat
4p's 571 inputs hold about 45 non-zeros per row (8%), three quarters of them
exactly 1. The first layer is the network's widest product (571 x 128 of the
preset's ~108k weights), so in a dense update it is about two thirds of the
multiply-adds, forward and weight gradient together. :func:`sparse_linear`
does the same product over the non-zeros only: the rows are scanned once into
a row-major list of (column, value), which serves the forward and the weight
gradient (``dW.T[j] = sum over rows i with x[i, j] != 0 of x[i, j] g[i]``),
by compiled loops that release the GIL.

Measured on 4096 prepared Bob's Hat rows (one torch thread, CPU time):
dense ``linear`` forward + weight gradient 19.3 ms; torch's CSR tensors 9.5 ms
for the products but 35 ms to build them (``to_sparse_csr``), so the lists
here are built by :func:`_scan` instead (see benchmarks/sparse_linear.py).

The sums run in another order than a dense product's, so results agree with
``torch.nn.functional.linear`` to float32 rounding, not bit for bit: training
uses it (``Args.sparse_input``), while the agents that play shipped policies
keep the dense product, so their decisions do not move.
"""

from __future__ import annotations

import numpy as np
import torch
from numba import njit, prange


@njit(cache=True, nogil=True, parallel=True)
def _scan(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ptr, col, val): x's non-zeros row by row (CSR). Branch-free: a count pass, then every cell of a row up
    to its last non-zero is written at the row's next free place, which advances only past a non-zero (2x
    faster than testing each cell); rows in parallel, each writing only its own places."""
    n, d = x.shape
    cnt = np.zeros(n, dtype=np.int64)
    stop = np.zeros(n, dtype=np.int64)  # one past the row's last non-zero
    for i in prange(n):
        c = 0
        for j in range(d):
            c += x[i, j] != 0
        cnt[i] = c
        e = d
        while e > 0 and x[i, e - 1] == 0:
            e -= 1
        stop[i] = e
    ptr = np.zeros(n + 1, dtype=np.int64)
    ptr[1:] = np.cumsum(cnt)
    col = np.empty(ptr[n], dtype=np.int32)
    val = np.empty(ptr[n], dtype=np.float32)
    for i in prange(n):
        k = ptr[i]
        for j in range(stop[i]):  # up to the last non-zero: every write stays inside the row's own places
            v = x[i, j]
            col[k] = j
            val[k] = v
            k += v != 0
    return ptr, col, val


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
    measured, splitting the output columns among tasks instead was 10x slower: its inner loop lost SIMD)."""
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


class _SparseLinear(torch.autograd.Function):
    """``x @ weight.T + bias`` for float32 CPU tensors, with the weight's and bias's gradients (not x's)."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        lists = _scan(x.detach().numpy())
        out = bias.detach().expand(x.shape[0], -1).contiguous()
        _forward(*lists, weight.detach().t().contiguous().numpy(), out.numpy())
        ctx.lists, ctx.in_features = lists, x.shape[1]
        return out

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> tuple[None, torch.Tensor, torch.Tensor]:  # type: ignore[override]
        g = grad.contiguous()
        dwt = torch.zeros(ctx.in_features, g.shape[1], dtype=torch.float32)
        _weight_grad(*ctx.lists, g.numpy(), dwt.numpy())
        return None, dwt.t(), g.sum(0)


def sparse_linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """``torch.nn.functional.linear(x, weight, bias)`` over x's non-zeros only (float32, CPU; no gradient for x).

    Falls back to the dense product where the sparse one does not apply (another dtype or device, or x that
    needs a gradient), so a caller can ask for it unconditionally.
    """
    if (
        x.device.type != "cpu"
        or weight.device.type != "cpu"
        or x.dtype != torch.float32
        or weight.dtype != torch.float32
        or x.requires_grad
        or x.dim() != 2
    ):
        return torch.nn.functional.linear(x, weight, bias)
    return _SparseLinear.apply(x.contiguous(), weight, bias)
