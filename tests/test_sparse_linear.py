"""The sparse first layer (agents/sparse_linear.py): the same product and gradients as a dense one, on the
inputs the trainer feeds it (real prepared observations) and on the edges of its row lists."""

from __future__ import annotations

import numba
import numpy as np
import pytest
import torch

from agents.ppo_agent import PolicyNet
from agents.sparse_linear import _scan, sparse_linear
from bobshat_env.vector import VectorEnv


def _dense_and_sparse(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, grad: torch.Tensor):
    """(y, dW, db) of the dense product and of the sparse one, for the same upstream gradient."""
    out = []
    for f in (torch.nn.functional.linear, sparse_linear):
        w, b = weight.clone().requires_grad_(True), bias.clone().requires_grad_(True)
        y = f(x, w, b)
        y.backward(grad)
        out.append((y.detach(), w.grad, b.grad))
    return out


def _prepared_rows(n_steps: int = 12) -> torch.Tensor:
    """Prepared inputs (trump relabelling and trick facts) of random Bob's Hat games: what the trainer stores."""
    env = VectorEnv("bobs_hat", num_envs=64, players=4)
    net = PolicyNet(env.obs_size, env.num_actions, hidden=(16,))
    ts, rng, rows = env.reset(3), np.random.default_rng(0), []
    for _ in range(n_steps):
        rows.append(torch.from_numpy(ts.obs).clone())
        ts = env.step(np.array([rng.choice(np.flatnonzero(m)) for m in ts.action_mask]))
    return torch.cat(rows)


def test_scan_lists_every_non_zero_in_row_order():
    x = np.array([[0, 2.5, 0, 0], [0, 0, 0, 0], [1, 0, 0, -3], [0, 0, 0, 7]], dtype=np.float32)
    ptr, col, val = _scan(x)
    assert ptr.tolist() == [0, 1, 1, 3, 4]
    assert col.tolist() == [1, 0, 3, 3]
    assert val.tolist() == [2.5, 1.0, -3.0, 7.0]


def test_equal_to_the_dense_product_on_prepared_observations():
    x = _prepared_rows()
    assert 0.02 < (x != 0).float().mean() < 0.3  # the case it is built for: mostly zeros
    gen = torch.Generator().manual_seed(1)
    weight = torch.randn(48, x.shape[1], generator=gen)
    bias = torch.randn(48, generator=gen)
    grad = torch.randn(x.shape[0], 48, generator=gen)
    (y0, dw0, db0), (y1, dw1, db1) = _dense_and_sparse(x, weight, bias, grad)
    torch.testing.assert_close(y1, y0, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(dw1, dw0, rtol=1e-5, atol=1e-4)
    torch.testing.assert_close(db1, db0)


@pytest.mark.parametrize(
    "x",
    [
        np.zeros((5, 7), dtype=np.float32),  # no non-zero at all
        np.zeros((0, 7), dtype=np.float32),  # no rows
        np.eye(7, dtype=np.float32)[::-1].copy(),  # last column first, first last
        np.full((3, 7), -0.25, dtype=np.float32),  # dense, negative, not 1
        np.array([[0, 0, 0, 0, 0, 0, 1e-30], [1e30, 0, 0, 0, 0, 0, 0]], dtype=np.float32),
    ],
    ids=["zeros", "no-rows", "anti-diagonal", "dense", "extremes"],
)
def test_equal_to_the_dense_product_at_the_edges(x):
    gen = torch.Generator().manual_seed(2)
    weight, bias = torch.randn(5, 7, generator=gen), torch.randn(5, generator=gen)
    grad = torch.randn(x.shape[0], 5, generator=gen)
    (y0, dw0, db0), (y1, dw1, db1) = _dense_and_sparse(torch.from_numpy(x), weight, bias, grad)
    torch.testing.assert_close(y1, y0)
    torch.testing.assert_close(dw1, dw0)
    torch.testing.assert_close(db1, db0)


def test_same_bits_on_any_number_of_threads():
    """The weight gradient's chunks are fixed, not one per thread: a run's numbers do not depend on the CPUs."""
    x = _prepared_rows(4)
    gen = torch.Generator().manual_seed(3)
    weight, bias = torch.randn(32, x.shape[1], generator=gen), torch.randn(32, generator=gen)
    grad = torch.randn(x.shape[0], 32, generator=gen)
    before = numba.get_num_threads()
    got = []
    try:
        for threads in sorted({1, numba.config.NUMBA_NUM_THREADS}):
            numba.set_num_threads(threads)
            got.append(_dense_and_sparse(x, weight, bias, grad)[1])
    finally:
        numba.set_num_threads(before)
    for a, b in zip(got[0], got[-1]):
        assert torch.equal(a, b)


def test_dense_where_it_does_not_apply():
    """bfloat16 (autocast on AVX-512/AMX CPUs), an input that needs a gradient: the dense product, same result."""
    gen = torch.Generator().manual_seed(4)
    weight, bias = torch.randn(3, 6, generator=gen), torch.randn(3, generator=gen)
    xb = torch.randn(4, 6, generator=gen).to(torch.bfloat16)
    assert torch.equal(
        sparse_linear(xb, weight.bfloat16(), bias.bfloat16()),
        torch.nn.functional.linear(xb, weight.bfloat16(), bias.bfloat16()),
    )
    xg = torch.randn(4, 6, generator=gen, requires_grad=True)
    sparse_linear(xg, weight, bias).sum().backward()
    assert xg.grad is not None and xg.grad.shape == xg.shape


def test_policy_head_sparse_matches_dense_and_trains_alike():
    """PolicyNet.head(sparse=True), as the trainer calls it, gives the dense head's outputs and gradients."""
    x = _prepared_rows(4)
    torch.manual_seed(5)
    net = PolicyNet(x.shape[1], 86, hidden=(64, 32))
    grads = []
    for sparse in (False, True):
        net.zero_grad()
        logits, value = net.head(x, sparse=sparse)
        (logits.square().mean() + value.mean()).backward()
        grads.append((logits.detach(), value.detach(), [p.grad.clone() for p in net.parameters()]))
    torch.testing.assert_close(grads[1][0], grads[0][0], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(grads[1][1], grads[0][1], rtol=1e-5, atol=1e-5)
    for g1, g0 in zip(grads[1][2], grads[0][2]):
        torch.testing.assert_close(g1, g0, rtol=1e-4, atol=1e-6)
    with torch.inference_mode():  # the collector's call
        torch.testing.assert_close(net.head(x, sparse=True)[0], grads[0][0], rtol=1e-5, atol=1e-5)
