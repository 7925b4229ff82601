"""The sparse first layer (agents/sparse_linear.py): the same product and gradients as a dense one, on the
inputs the trainer feeds it (real prepared observations, stored as float16) and on the edges of its lists;
and the PPO update that uses it moves the weights as the dense one does."""

from __future__ import annotations

import numba
import numpy as np
import pytest
import torch
from rollouts import random_rollout

from agents.ppo_agent import PolicyNet
from agents.sparse_linear import SparseRows, sparse_linear
from benchmarks.sparse_linear import prepared_rows
from train.ppo.config import Args, make_net
from train.ppo.update import ppo_update


def _dense_and_sparse(x, weight: torch.Tensor, bias: torch.Tensor, grad: torch.Tensor):
    """(y, dW, db) of the dense product of ``x`` and of the sparse one, for the same upstream gradient."""
    out = []
    for f, arg in ((torch.nn.functional.linear, x.dense() if isinstance(x, SparseRows) else x), (sparse_linear, x)):
        w, b = weight.clone().requires_grad_(True), bias.clone().requires_grad_(True)
        y = f(arg, w, b)
        y.backward(grad)
        out.append((y.detach(), w.grad, b.grad))
    return out


@pytest.fixture(scope="module")
def prepared() -> torch.Tensor:
    """Prepared inputs (trump relabelling and trick facts) of random Bob's Hat 4p games, as the trainer stores."""
    return prepared_rows("bobs_hat", 4, 768).half().float()


def test_lists_hold_every_non_zero_in_row_order():
    x = np.array([[0, 2.5, 0, 0], [0, 0, 0, 0], [1, 0, 0, -3], [0, 0, 0, 7]], dtype=np.float32)
    for a in (x, x.astype(np.float16)):
        r = SparseRows.from_dense(a)
        assert r.ptr.tolist() == [0, 1, 1, 3, 4]
        assert r.col.tolist() == [1, 0, 3, 3]
        assert r.val.tolist() == [2.5, 1.0, -3.0, 7.0]
        assert torch.equal(r.dense(), torch.from_numpy(x))
    taken = SparseRows.from_dense(x).take(np.array([3, 1, 0, 3]))
    assert torch.equal(taken.dense(), torch.from_numpy(x[[3, 1, 0, 3]]))


def test_float16_values_are_converted_exactly():
    """Every one of the 65,536 half-precision bit patterns: the listed value is numpy's float32 of it (NaN as
    NaN), and exactly the zeros (+0.0 and -0.0) are left out."""
    bits = np.arange(65536, dtype=np.uint32).astype(np.uint16).reshape(256, 256)
    half = bits.view(np.float16)
    r = SparseRows.from_dense(half)
    want = half.astype(np.float32)
    nz = want != 0
    assert r.ptr[-1] == nz.sum() + np.isnan(want).sum() - np.isnan(want[nz]).sum()
    got = r.dense().numpy()
    assert np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(np.signbit(got[nz]), np.signbit(want[nz]))


def test_equal_to_the_dense_product_on_prepared_observations(prepared):
    assert 0.02 < (prepared != 0).float().mean() < 0.3  # the case it is built for: mostly zeros
    gen = torch.Generator().manual_seed(1)
    weight, bias = torch.randn(48, prepared.shape[1], generator=gen), torch.randn(48, generator=gen)
    grad = torch.randn(256, 48, generator=gen)
    rows = SparseRows.from_dense(prepared.half().numpy()).take(np.arange(512, 0, -2))  # as the update takes them
    for x in (prepared[torch.arange(512, 0, -2)], rows):
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
    args = [torch.from_numpy(x), SparseRows.from_dense(x)]
    if np.all(np.abs(x) < 6e4):  # what float16 holds: the stored rollout's case
        args.append(SparseRows.from_dense(x.astype(np.float16)))
    for arg in args:
        (y0, dw0, db0), (y1, dw1, db1) = _dense_and_sparse(arg, weight, bias, grad)
        torch.testing.assert_close(y1, y0)
        torch.testing.assert_close(dw1, dw0)
        torch.testing.assert_close(db1, db0)


def test_same_bits_on_any_number_of_threads(prepared):
    """The weight gradient's chunks are fixed, not one per thread: a run's numbers do not depend on the CPUs."""
    rows = SparseRows.from_dense(prepared.half().numpy())
    gen = torch.Generator().manual_seed(3)
    weight, bias = torch.randn(32, prepared.shape[1], generator=gen), torch.randn(32, generator=gen)
    grad = torch.randn(rows.rows, 32, generator=gen)
    before = numba.get_num_threads()
    got = []
    try:
        for threads in sorted({1, numba.config.NUMBA_NUM_THREADS}):
            numba.set_num_threads(threads)
            got.append(_dense_and_sparse(rows, weight, bias, grad)[1])
    finally:
        numba.set_num_threads(before)
    for a, b in zip(got[0], got[-1]):
        assert torch.equal(a, b)


def test_dense_where_it_does_not_apply():
    """bfloat16 weights (autocast on AVX-512/AMX CPUs), an input that needs a gradient: the dense product."""
    gen = torch.Generator().manual_seed(4)
    weight, bias = torch.randn(3, 6, generator=gen), torch.randn(3, generator=gen)
    xb = torch.randn(4, 6, generator=gen).to(torch.bfloat16)
    want = torch.nn.functional.linear(xb, weight.bfloat16(), bias.bfloat16())
    assert torch.equal(sparse_linear(xb, weight.bfloat16(), bias.bfloat16()), want)
    rows = SparseRows.from_dense(xb.float().numpy())
    assert torch.equal(sparse_linear(rows, weight.bfloat16(), bias.bfloat16()), want)
    xg = torch.randn(4, 6, generator=gen, requires_grad=True)
    sparse_linear(xg, weight, bias).sum().backward()
    assert xg.grad is not None and xg.grad.shape == xg.shape
    with pytest.raises(ValueError, match="6 input columns for a layer of 5 inputs"):
        sparse_linear(rows, weight[:, :5], bias)


def test_policy_head_on_lists_matches_the_dense_head(prepared):
    """PolicyNet.head(SparseRows), as the update calls it, gives the dense head's outputs and gradients."""
    torch.manual_seed(5)
    net = PolicyNet(prepared.shape[1], 86, hidden=(64, 32))
    out = []
    for x in (prepared, SparseRows.from_dense(prepared.numpy())):
        net.zero_grad()
        logits, value = net.head(x)
        (logits.square().mean() + value.mean()).backward()
        out.append((logits.detach(), value.detach(), [p.grad.clone() for p in net.parameters()]))
    torch.testing.assert_close(out[1][0], out[0][0], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(out[1][1], out[0][1], rtol=1e-5, atol=1e-5)
    for g1, g0 in zip(out[1][2], out[0][2]):
        torch.testing.assert_close(g1, g0, rtol=1e-4, atol=1e-6)


def test_ppo_update_moves_the_weights_as_the_dense_update(prepared):
    """Two epochs of minibatches on a stored (float16) rollout, from the same weights, sparse_input on and off:
    the same weights and losses to float32 rounding."""
    batch = random_rollout(prepared.half().numpy(), seed=6)
    from bobshat_env.games import make_game

    results = []
    for sparse in (False, True):
        args = Args(game="bobs_hat", players=4, hidden=[64, 64], minibatch_size=128, sparse_input=sparse, bf16=False)
        args.trump_symmetry = args.trick_features = True  # the inputs the fixture prepared
        torch.manual_seed(7)
        net = make_net(args, make_game("bobs_hat", players=4))
        start = [p.detach().clone() for p in net.parameters()]
        opt = torch.optim.Adam(net.parameters(), lr=1e-3, eps=1e-5)
        torch.manual_seed(8)  # the minibatch permutations
        losses = ppo_update(net, opt, batch, args)
        results.append((losses, [p.detach().clone() for p in net.parameters()]))
    (l0, w0), (l1, w1) = results
    assert l1 == pytest.approx(l0, rel=1e-4, abs=1e-6)
    first_layer_moved = float((w0[0] - start[0]).abs().max())
    assert first_layer_moved > 1e-3  # the update moved it far more than the tolerance below
    for p1, p0 in zip(w1, w0):
        torch.testing.assert_close(p1, p0, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--rows", "0"], "--rows: want 1 to 1,000,000, got 0"),
        (["--reps", "nan"], "--reps: want a whole number"),
        (["--threads", str(2**64)], "--threads: want 1 to 1,000,000"),
        (["--players", "9"], "players must be 3, 4 or 5"),
        (["--game", "nosuch"], "unknown game 'nosuch'"),
    ],
)
def test_the_benchmark_refuses_bad_settings_in_one_line(argv, words, capsys):
    from benchmarks.sparse_linear import main

    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err
