"""``update_threads``: each minibatch's gradient computed in shards on threads and summed in shard order.

The same loss and step as one thread, to float32 rounding (the advantages normalized over the whole minibatch,
each shard weighted by its share of the rows), and the same numbers from one run to the next (the sum's order is
fixed, not the threads' timing)."""

from __future__ import annotations

import pytest
import torch
from rollouts import random_rollout

from benchmarks.sparse_linear import prepared_rows
from bobshat_env.games import make_game
from train.ppo.config import Args, check_args, make_net
from train.ppo.rollout import Rollout
from train.ppo.update import ppo_update


@pytest.fixture(scope="module")
def batch() -> Rollout:
    """A stored (float16) rollout of real prepared Bob's Hat rows, with random masks, actions and targets."""
    obs = prepared_rows("bobs_hat", 4, 600).half().numpy()
    # ratios away from 1 (some clipped); a mean and a spread for the normalization to remove
    return random_rollout(obs, seed=3, logprob_noise=0.3, adv_mean=2.0, adv_sd=3.0)


def update(batch: Rollout, threads: int, sparse: bool) -> tuple[dict[str, float], list[torch.Tensor], torch.Tensor]:
    """Two epochs of 128-row minibatches (600 rows: the last one 88) from fixed weights and permutations."""
    args = Args(game="bobs_hat", players=4, hidden=[64, 64], minibatch_size=128, sparse_input=sparse, bf16=False)
    args.trump_symmetry = args.trick_features = True  # the inputs the fixture prepared
    args.update_threads = threads
    torch.manual_seed(7)
    net = make_net(args, make_game("bobs_hat", players=4))
    start = next(net.parameters()).detach().clone()
    opt = torch.optim.Adam(net.parameters(), lr=1e-3, eps=1e-5)
    torch.manual_seed(8)  # the minibatch permutations
    losses = ppo_update(net, opt, batch, args)
    return losses, [p.detach().clone() for p in net.parameters()], start


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("threads", [2, 3])
def test_shards_take_the_same_step_as_one_thread(batch, threads, sparse):
    """2 and 3 shards (3: uneven, 43/43/42 rows, so a shard's weight is not 1/k of an even split): the same
    weights after 10 Adam steps and the same logged losses, to float32 rounding. Seen red with every shard
    weighted 1 (the step of a k-times larger loss), and with the advantages normalized within each shard."""
    (l1, w1, start), (lk, wk, _) = update(batch, 1, sparse), update(batch, threads, sparse)
    assert l1["losses/clipfrac"] > 0.05  # the clipped branch is exercised
    assert lk == pytest.approx(l1, rel=1e-4, abs=1e-6)
    assert float((w1[0] - start).abs().max()) > 1e-3  # the steps moved the weights far more than the tolerance
    for pk, p1 in zip(wk, w1):
        torch.testing.assert_close(pk, p1, rtol=1e-4, atol=1e-5)


def test_shards_sum_in_a_fixed_order(batch):
    """Two runs with three threads give the same weights bit for bit: the shards' gradients are added in shard
    order, whichever thread finishes first (three, as two gradients add the same either way round). Seen red
    with the gradients added in the order the threads finished, the threads made to finish at random."""
    (la, wa, _), (lb, wb, _) = update(batch, 3, False), update(batch, 3, False)
    assert la == lb
    assert all(torch.equal(a, b) for a, b in zip(wa, wb))


def test_update_threads_is_checked():
    for bad, words in ((0, "update_threads must be at least 1, got 0"), (65, "update_threads must be 1 to 64, got 65")):
        args = Args(game="bobs_hat", players=4, update_threads=bad)
        with pytest.raises(ValueError, match=words):
            check_args(args)


def test_a_forked_child_gets_threads_of_its_own(monkeypatch):
    """The helper threads are kept per process: a child forked after an update inherits the kept pool but not
    its threads, so a pool kept across the fork would take the child's shards and never run them. Seen red with
    the pool kept by size alone."""
    from train.ppo import update as update_module

    here = update_module._pool(1)
    assert update_module._pool(1) is here  # kept within the process
    monkeypatch.setattr(update_module.os, "getpid", lambda: -1)  # what a forked child sees: another process id
    assert update_module._pool(1) is not here
