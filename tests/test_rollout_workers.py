"""Rollout workers on Ray (train/ppo/workers.py), on a two-node cluster on this machine (1 CPU per node).

Skipped where Ray is not installed (``pip install -e ".[ray]"``; CI installs it).
"""

from __future__ import annotations

import dataclasses
import os
import signal
from pathlib import Path

import numpy as np
import pytest
from procs import ray_tmpdir
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from agents.checkpoint import load_checkpoint
from bobshat_env.games import make_game

ray = pytest.importorskip("ray")

from bobshat.cli import main  # noqa: E402
from bobshat_env.vector import VectorEnv  # noqa: E402
from train.evaluate import evaluate  # noqa: E402
from train.ppo.collector import RolloutCollector, env_seed  # noqa: E402
from train.ppo.config import Args, make_net, parse_args  # noqa: E402
from train.ppo.learner import set_up  # noqa: E402
from train.ppo.run import train  # noqa: E402
from train.ppo.workers import RolloutWorker, RolloutWorkers, _cpu_state  # noqa: E402
from train.runtime.distributed import DistributedError  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def two_nodes():
    """A Ray cluster of two nodes with one CPU each (ray.cluster_utils.Cluster), this process its driver."""
    from ray.cluster_utils import Cluster

    if ray.is_initialized():
        ray.shutdown()
    with ray_tmpdir():  # its own folder: another Ray on the machine is neither joined nor disturbed
        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, log_to_driver=False)
        yield cluster
        ray.shutdown()
        cluster.shutdown()


def _args(tmp_path: Path, **kw) -> Args:
    args = parse_args(["--config", str(ROOT / "configs" / "smoke.yaml"), "--runs-dir", str(tmp_path)])
    return dataclasses.replace(args, **kw)


@pytest.mark.parametrize(("num_envs", "sizes"), [(12, [6, 6]), (13, [7, 6])], ids=["even", "uneven"])
def test_first_rollout_matches_the_in_process_one(two_nodes, tmp_path, num_envs, sizes) -> None:
    """Same seed: the same games, seats, opponents, first observations and counts; the actions are each worker's.

    Whole-game rollouts (``num_steps: 0``), so every game ends in the rollout
    and the finished games' opponents can be compared one by one. With 13
    games on 2 workers the first takes the odd one: no game is dropped. The
    learner's pool records the finished games' results (PFSP weights the
    opponents by them) as the in-process collector's does.
    """
    B, S = num_envs, sizes[0]
    args = _args(tmp_path, num_envs=B, num_steps=0, heuristics=["random", "simple"], rollout_workers=2)
    game = make_game(args.game, players=args.players, **args.game_options)
    seed = env_seed(args.seed, 0)
    gen, net, _opt, pool, _c = set_up(args, game, tmp_path / "none.pt")
    local = RolloutCollector(VectorEnv(game, num_envs=B, copy_obs=False), net, pool, gen, args, seed=seed)
    gen2, net2, _opt2, pool2, _c2 = set_up(args, game, tmp_path / "none.pt")
    workers = RolloutWorkers(args, game, net2, pool2, gen2, seed=seed)
    before = [m.games for m in pool2.members]
    try:
        assert workers.sizes == sizes and workers.first == [0, S]
        assert len({i["node_id"] for i in workers.info}) == 2  # one worker on each node
        states = ray.get([a.state.remote() for a in workers.actors])
        for key, want in (
            ("learner_seat", local.learner_seat),
            ("opp", local.opp),
            ("obs", local.ts.obs),
            ("mask", local.ts.action_mask),
            ("seat", local.ts.seat),
        ):
            np.testing.assert_array_equal(np.concatenate([s[key] for s in states]), want, err_msg=key)
        mine = local.is_learner[np.arange(B), local.ts.seat]  # the learner's games at the first step
        k0, k1 = int(mine[:S].sum()), int(mine[S:].sum())
        a, b = local.collect_rollout(), workers.collect_rollout()
        assert (a.env_steps, a.n, a.games, a.self_play_games) == (b.env_steps, b.n, b.games, b.self_play_games)
        assert a.games == B  # every game ended in the rollout
        np.testing.assert_array_equal(a.pool_opponents, b.pool_opponents)
        # PFSP: each member's (decayed) game count grew by its finished games, as in-process (rounding aside)
        assert [m.games for m in pool2.members] != before
        assert [m.games for m in pool2.members] == pytest.approx([m.games for m in pool.members], rel=1e-2)
        # the first step's learner inputs: in-process rows [0, k0 + k1); worker 1's block starts after worker 0's
        n0 = int((local.st.game[: a.n] < S).sum())
        assert k0 > 0 and k1 > 0
        np.testing.assert_array_equal(a.obs[:k0], b.obs[:k0])
        np.testing.assert_array_equal(a.obs[k0 : k0 + k1], b.obs[n0 : n0 + k1])
        assert not np.array_equal(a.actions, b.actions)  # sampled by other generators: the games part
        assert np.isfinite(b.advantages).all() and b.obs.dtype == np.float16
    finally:
        workers.close()


def test_cli_smoke_training_with_two_workers_writes_a_playable_checkpoint(two_nodes, tmp_path, capsys) -> None:
    run = ["--config", str(ROOT / "configs" / "smoke.yaml"), "--runs-dir", str(tmp_path), "--run-name", "two"]
    assert main(["train", *run, "--total-decisions", "256"]) == 0  # one iteration in-process, then on to 512
    assert main(["train", *run, "--rollout-workers", "2", "--resume"]) == 0  # with workers, from that checkpoint
    err = capsys.readouterr().err
    assert "2 rollout worker(s) on Ray" in err
    assert load_checkpoint(tmp_path / "two" / "ckpt.pt")[1]["global_step"] == 512
    run_dir = tmp_path / "two"
    acc = EventAccumulator(str(run_dir), size_guidance={"scalars": 0})
    acc.Reload()
    tags = set(acc.Tags()["scalars"])
    assert {"charts/worker0_SPS", "charts/worker1_SPS", "charts/rollout_wait_s", "charts/update_s"} <= tags
    assert {"charts/rollout_MB", "charts/weights_MB", "charts/worker_restarts", "charts/SPS"} <= tags
    assert acc.Scalars("charts/worker_restarts")[-1].value == 0
    assert all(e.value > 0 for e in acc.Scalars("charts/rollout_MB"))
    game = make_game("bobs_hat", players=4, hands=2)
    ev = evaluate(game, [f"ppo:{run_dir / 'policy.pt'}", "random", "random", "random"], 2, seed=1)
    assert ev.totals.shape == (8, 4) and ev.decisions > 0  # full games, every action checked by the engine


def test_killed_worker_is_replaced_and_the_run_goes_on(two_nodes, tmp_path, monkeypatch, capsys) -> None:
    """kill -9 of a rollout worker in the middle of iteration 2: a new one redoes its share; counts stay whole."""
    calls = {"n": 0}
    original = RolloutWorkers._dispatch

    def dispatch_then_kill(self, weights_ref, spec):
        pending = original(self, weights_ref, spec)
        calls["n"] += 1
        if calls["n"] == 2:
            os.kill(self.info[1]["pid"], signal.SIGKILL)
        return pending

    monkeypatch.setattr(RolloutWorkers, "_dispatch", dispatch_then_kill)
    # one snapshot kept: iteration 2's evicts iteration 1's, which the workers' games move off in iteration 3
    args = _args(tmp_path, run_name="kill", rollout_workers=2, total_decisions=3 * 32 * 8, max_snapshots=1)
    out = train(args)
    err = capsys.readouterr().err
    assert "rollout worker 1 (pid" in err and "died" in err and "redoing its share" in err
    assert out["iteration"] == 3 and out["global_step"] == 3 * 32 * 8  # no rollout counted twice or lost
    _t, meta = load_checkpoint(tmp_path / "kill" / "ckpt.pt")
    assert meta["iteration"] == 3 and meta["global_step"] == 3 * 32 * 8
    acc = EventAccumulator(str(tmp_path / "kill"), size_guidance={"scalars": 0})
    acc.Reload()
    assert [e.value for e in acc.Scalars("charts/worker_restarts")] == [0, 1, 1]
    # losing the learner is what --resume is for; the checkpoint is the in-process one, so it resumes there too
    more = train(dataclasses.replace(args, resume=True, rollout_workers=0, ray_address="", total_decisions=4 * 32 * 8))
    assert more["iteration"] == 4 and more["global_step"] == 4 * 32 * 8


def test_worker_pool_sync_keeps_opponents_and_moves_games_off_an_evicted_snapshot(two_nodes, tmp_path) -> None:
    args = _args(tmp_path, num_envs=12, heuristics=["random"], self_play_prob=0.0)
    game = make_game(args.game, players=args.players, **args.game_options)
    worker = ray.remote(RolloutWorker).options(num_cpus=1).remote(dataclasses.asdict(args), 0, 0, 12)
    try:
        net = make_net(args, game)
        a, b = ray.put(_cpu_state(net)), ray.put(_cpu_state(net))
        spec = [("random", "heuristic", 1.0, 4.0, 0, None), ("snapshot@1", "snapshot", 0.5, 2.0, 1, a)]
        spec.append(("snapshot@2", "snapshot", 0.0, 0.0, 2, b))
        spec.append(("exploiter@3", "exploiter", 0.0, 0.0, 3, a))  # an exploit run's member: a network too
        opp = np.array([0, 1, 2, -1, 3, 0] * 2)  # -1: self-play
        ray.get(worker.start.remote(1234, np.zeros(12, dtype=np.int64), opp, spec))
        assert ray.get(worker.state.remote())["opp"].tolist() == opp.tolist()
        ray.get(worker._sync_pool.remote([spec[0], spec[2], spec[3]], True))  # snapshot@1 evicted
        after = ray.get(worker.state.remote())["opp"]
        assert (after[opp == 0] == 0).all() and (after[opp == 2] == 1).all() and (after[opp == 3] == 2).all()
        assert (after[opp == -1] == -1).all()  # kept, renumbered; self-play stays
        assert set(after[opp == 1].tolist()) <= {0, 1, 2}  # drew a member of the new pool
        batch = ray.get(worker.rollout.remote(_cpu_state(net), [spec[0], spec[2], spec[3]]))
        assert batch.env_steps == 12 * args.num_steps and batch.n > 0
    finally:
        ray.kill(worker)


def test_too_many_workers_is_one_clear_error_and_writes_nothing(two_nodes, tmp_path) -> None:
    args = _args(tmp_path, run_name="big", rollout_workers=3)
    with pytest.raises(DistributedError, match=r"3 rollout worker\(s\): 3 CPU\(s\) needed, the Ray cluster has 2;"):
        train(args)
    assert not (tmp_path / "big").exists()
