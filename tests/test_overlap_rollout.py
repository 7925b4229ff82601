"""``overlap_rollout``: the next rollout is played on a second thread while the update runs (train/ppo/learner.py).

What must hold: the rollout ahead plays the weights from *before* the update (the copy is taken on the caller's
thread first), it writes into other storage than the rollout the update is reading, a run repeats bit for bit,
it counts decisions and iterations as a run without it does, an interrupted update stops the rollout beside it,
and it is refused where it cannot run (Ray rollout workers).
"""

from __future__ import annotations

import hashlib
import threading
import time
from copy import deepcopy
from pathlib import Path

import numpy as np
import pytest
import torch
from rollouts import random_rollout

import train.ppo.learner as learner_mod
from agents.base import RandomAgent
from agents.ppo_agent import PolicyNet, masked_logits
from benchmarks.sparse_linear import prepared_rows
from bobshat_env.games import make_game
from train.ppo.collector import RolloutCollector
from train.ppo.config import Args, check_args, make_net, parse_args
from train.ppo.learner import Learner, make_collector, set_up
from train.ppo.rollout import Rollout
from train.ppo.run import train
from train.ppo.update import ppo_update

SMOKE = ["--config", "configs/smoke.yaml", "--bf16", "false", "--eval-every", "-1"]


def _learner(tmp_path: Path, *flags: str) -> Learner:
    args = parse_args([*SMOKE, "--overlap-rollout", "true", *flags])
    check_args(args)
    game = make_game(args.game, players=args.players, **args.game_options)
    gen, net, optimizer, pool, _ = set_up(args, game, tmp_path / "ckpt.pt")
    return Learner(args, net, optimizer, make_collector(args, game, net, pool, gen, seed=3))


def _logprobs(net: torch.nn.Module, batch: Rollout) -> torch.Tensor:
    """log pi(a | x) of ``batch``'s stored decisions under ``net`` (float32, as the rollout sampled them)."""
    with torch.no_grad():
        logits, _ = net.head(torch.from_numpy(batch.obs).float())
        logp = torch.log_softmax(masked_logits(logits, torch.from_numpy(batch.mask)), dim=-1)
    return logp.gather(1, torch.from_numpy(batch.actions)[:, None]).squeeze(1)


def test_the_rollout_ahead_plays_the_weights_from_before_the_update(tmp_path, monkeypatch):
    learner = _learner(tmp_path, "--learning-rate", "0.05")
    try:
        first = learner.collect()
        before = {k: v.clone() for k, v in learner.net.state_dict().items()}
        obs0 = first.obs.copy()
        # the rollout's steps after its first wait for the update to end: what they read is then the update's
        updated = threading.Event()
        learner.collector.on_step = lambda step, _total: updated.wait(30) if step == 1 else None
        real = learner_mod.ppo_update

        def update_then_signal(*a: object, **k: object) -> dict:
            out = real(*a, **k)
            updated.set()
            return out

        monkeypatch.setattr(learner_mod, "ppo_update", update_then_signal)
        # and the copy of the weights is taken late: on another thread than the update's, it would be the update's
        begin = learner.collector.start_rollout
        monkeypatch.setattr(learner.collector, "start_rollout", lambda: (time.sleep(0.5), begin()))
        learner.update(first, collect_ahead=True)
        assert learner.has_ahead
        ahead = learner.collect()
        assert not learner.has_ahead and ahead.n > 0
        old = make_net(learner.args, learner.collector.env.game)
        old.load_state_dict(before)
        stored = torch.from_numpy(ahead.logprobs)
        # the stored log-probabilities are the old weights' (to float32 rounding), not the updated ones'
        assert torch.allclose(_logprobs(old, ahead), stored, atol=1e-5)
        assert (_logprobs(learner.net, ahead) - stored).abs().max() > 1e-3
        # the update read the first rollout while the second was written: other storage, left as it was
        assert np.array_equal(first.obs, obs0)
        assert not np.shares_memory(first.obs, ahead.obs)
    finally:
        learner.close()


def _weights(net: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.clone() for k, v in net.state_dict().items()}


def test_each_rollout_ahead_plays_the_weights_the_update_beside_it_starts_from(tmp_path):
    """Over several updates, not just the first (whose starting weights are the initial ones): the rollout
    played during update k has the weights after update k-1, and no other weights of the run. Each update
    consumes a rollout exactly one update old."""
    learner = _learner(tmp_path, "--learning-rate", "0.05")
    try:
        batch = learner.collect()
        weights = [_weights(learner.net)]  # weights[j]: after j updates
        for k in range(3):
            learner.update(batch, collect_ahead=True)
            weights.append(_weights(learner.net))
            batch = learner.collect()  # played during update k
            stored = torch.from_numpy(batch.logprobs)
            matches = []
            for w in weights:
                net = make_net(learner.args, learner.collector.env.game)
                net.load_state_dict(w)
                matches.append(bool(torch.allclose(_logprobs(net, batch), stored, atol=1e-5)))
            assert matches == [j == k for j in range(k + 2)], f"rollout played during update {k}: {matches}"
    finally:
        learner.close()


def _rollout_ahead(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, update: object) -> dict[str, np.ndarray]:
    """The first rollout played ahead, with ``update`` standing in for ppo_update; the rollout's steps after its
    first wait until the update has returned, so whatever the update writes is there to be read."""
    monkeypatch.setattr(learner_mod, "ppo_update", update)
    learner = _learner(tmp_path, "--learning-rate", "0.05")
    try:
        batch = learner.collect()
        updated = threading.Event()
        learner.collector.on_step = lambda step, _total: updated.wait(30) if step == 1 else None

        def update_then_signal(*a: object, **k: object) -> dict:
            try:
                return update(*a, **k)  # type: ignore[operator]
            finally:
                updated.set()

        monkeypatch.setattr(learner_mod, "ppo_update", update_then_signal)
        learner.update(batch, collect_ahead=True)
        ahead = learner.collect()
        keys = ("actions", "logprobs", "values", "advantages", "returns")
        return {k: getattr(ahead, k).copy() for k in keys}
    finally:
        learner.close()


def test_the_rollout_ahead_depends_on_nothing_the_update_writes(tmp_path, monkeypatch):
    """The same rollout ahead whatever the update does to the network and to torch's global generator (which
    it draws its permutations from, on the other thread): its actions come from its own generator, and its
    log-probabilities, values and bootstrapped returns from the weights copied before the update."""

    def scrambling_update(net, *_: object, **__: object) -> dict:
        torch.manual_seed(12345)
        with torch.no_grad():
            for p in net.parameters():
                p.add_(torch.randn_like(p))
        return {}

    plain = _rollout_ahead(tmp_path / "a", monkeypatch, ppo_update)
    scrambled = _rollout_ahead(tmp_path / "b", monkeypatch, scrambling_update)
    for key, value in plain.items():
        assert np.array_equal(value, scrambled[key]), key


def _lagged_flags(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, *flags: str) -> list[bool]:
    """The ``lagged`` of every update of a four-iteration smoke run."""
    seen: list[bool] = []
    real = learner_mod.ppo_update

    def record(net, optimizer, batch, args, lagged=False):  # type: ignore[no-untyped-def]
        seen.append(lagged)
        return real(net, optimizer, batch, args, lagged=lagged)

    monkeypatch.setattr(learner_mod, "ppo_update", record)
    argv = [*SMOKE, "--runs-dir", str(tmp_path), "--run-name", name, "--total-decisions", "1024", *flags]
    assert train(parse_args(argv))["iteration"] == 4
    return seen


def test_an_overlap_run_updates_every_rollout_played_ahead_with_the_decoupled_objective(tmp_path, monkeypatch):
    """The plain objective on lagged rollouts cost about 0.5 per hand (README, "The next rollout during the
    update"): every rollout played ahead (all but the first) is updated with ``lagged``; without the overlap,
    none is."""
    assert _lagged_flags(tmp_path, monkeypatch, "a", "--overlap-rollout", "true") == [False, True, True, True]
    assert _lagged_flags(tmp_path, monkeypatch, "b") == [False] * 4


def test_the_progress_bar_counts_the_decisions_consumed_not_the_rollout_played_ahead(tmp_path, monkeypatch):
    """At the end of every iteration the bar shows the run's decision count (what the updates consumed), not
    that plus the rollout played ahead during the update; and it ends at the total, not past it."""
    import train.ppo.run as run_mod

    bars: list = []

    class Recorded(run_mod.ProgressBar):
        def __init__(self, *a: object, **k: object) -> None:
            super().__init__(*a, **k)  # type: ignore[arg-type]
            bars.append(self)

    seen: list[tuple[int, int]] = []
    real = run_mod.TrainingRun.iteration

    def iteration(self):  # type: ignore[no-untyped-def]
        out = real(self)
        seen.append((bars[-1].done, self.counters.global_step))
        return out

    monkeypatch.setattr(run_mod, "ProgressBar", Recorded)
    monkeypatch.setattr(run_mod.TrainingRun, "iteration", iteration)
    argv = [*SMOKE, "--runs-dir", str(tmp_path), "--run-name", "p", "--total-decisions", "1024"]
    out = train(parse_args([*argv, "--overlap-rollout", "true"]))
    assert seen == [(256, 256), (512, 512), (768, 768), (1024, 1024)]
    assert bars[-1].done == out["global_step"] == bars[-1].total


def _run_digest(tmp_path: Path, name: str, *flags: str) -> tuple[dict, str]:
    out = train(parse_args([*SMOKE, "--runs-dir", str(tmp_path), "--run-name", name, *flags]))
    ck = torch.load(tmp_path / name / "ckpt.pt", map_location="cpu", weights_only=False)
    h = hashlib.sha256()
    for key in sorted(k for k in ck if k != "__meta__"):
        if isinstance(ck[key], torch.Tensor):
            h.update(ck[key].float().numpy().tobytes())
    return out, h.hexdigest()


def test_a_run_with_overlap_repeats_and_counts_as_one_without(tmp_path):
    a, digest_a = _run_digest(tmp_path, "a", "--overlap-rollout", "true")
    b, digest_b = _run_digest(tmp_path, "b", "--overlap-rollout", "true")
    plain, digest_plain = _run_digest(tmp_path, "plain")
    assert digest_a == digest_b  # its own sampler, the weights copied before the update: the same run
    assert digest_a != digest_plain  # one iteration of policy lag: another run
    for key in ("global_step", "iteration", "learner_decisions"):
        assert a[key] == plain[key], key
    assert a["global_step"] == 512 and a["iteration"] == 2  # 32 games x 8 steps per iteration


def test_an_interrupted_update_stops_the_rollout_beside_it(tmp_path, monkeypatch):
    learner = _learner(tmp_path, "--num-steps", "400", "--total-decisions", "100000")
    steps: list[int] = []
    try:
        first = learner.collect()
        learner.collector.on_step = lambda step, total: steps.append(step)

        def interrupted(*_: object, **__: object) -> dict:
            while len(steps) < 3:  # the rollout beside the update has started
                time.sleep(0.001)
            raise KeyboardInterrupt

        monkeypatch.setattr(learner_mod, "ppo_update", interrupted)
        with pytest.raises(KeyboardInterrupt):
            learner.update(first, collect_ahead=True)
        n = len(steps)
        time.sleep(0.2)
        assert len(steps) == n < 400  # stopped part-way, and nothing runs on after update returned
        assert not learner.has_ahead  # the part-played rollout is dropped
    finally:
        learner.close()


def test_overlap_is_refused_with_rollout_workers(tmp_path, capsys):
    """Not built for Ray rollout workers (README, "The next rollout during the update"): asking for both is one
    line naming the fix, before anything is written or Ray is started; not an overlap silently dropped."""
    from bobshat.cli import main

    with pytest.raises(ValueError, match="^overlap_rollout is for the in-process collector: set rollout_workers to 0"):
        check_args(parse_args([*SMOKE, "--overlap-rollout", "true", "--rollout-workers", "2"]))
    both = ["--overlap-rollout", "true", "--rollout-workers", "2"]
    assert main(["train", *SMOKE, "--runs-dir", str(tmp_path / "runs"), *both]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "overlap_rollout is for the in-process collector" in err, err
    assert not (tmp_path / "runs").exists()


# ---------------------------------------------------------------------------------------------------------------
# The decoupled objective a lagged rollout is updated with (ppo_update's ``lagged``)
def _update_one_minibatch(lagged: bool, threads: int = 1) -> tuple[dict[str, float], Rollout, PolicyNet]:
    """One epoch, one minibatch of 300 prepared Bob's Hat rows whose behaviour log-probabilities are off the
    network's (noise of 0.5 sd): the losses it logs, the batch and the network before the step."""
    obs = prepared_rows("bobs_hat", 4, 300).half().numpy()
    batch = random_rollout(obs, seed=5, logprob_noise=0.5, adv_mean=1.0, adv_sd=2.0)
    args = Args(game="bobs_hat", players=4, hidden=[32, 32], minibatch_size=512, update_epochs=1, bf16=False)
    args.trump_symmetry = args.trick_features = True
    args.update_threads, args.sparse_input = threads, False
    torch.manual_seed(7)
    net = make_net(args, make_game("bobs_hat", players=4))
    before = deepcopy(net)
    losses = ppo_update(net, torch.optim.Adam(net.parameters(), lr=1e-3), batch, args, lagged=lagged)
    return losses, batch, before


@pytest.mark.parametrize("threads", [1, 2])
def test_a_lagged_rollout_is_clipped_against_the_weights_the_update_starts_from(threads):
    """With one minibatch, the ratio to the weights the update starts from is 1 in every row: nothing clipped,
    and the policy loss is minus the mean of the normalized advantages weighted by proximal / behaviour
    probability truncated at 1, computed here independently. Without ``lagged`` the same batch clips."""
    losses, batch, before = _update_one_minibatch(lagged=True, threads=threads)
    prox = _logprobs(before, batch)
    weight = torch.exp(prox - torch.from_numpy(batch.logprobs)).clamp(max=1.0)
    assert 0.2 < float((weight < 1).float().mean()) < 0.8  # the truncation acts on some rows, not all
    adv = torch.from_numpy(batch.advantages)
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    assert losses["losses/clipfrac"] == 0.0
    assert abs(losses["losses/approx_kl"]) < 1e-6
    assert losses["losses/policy_loss"] == pytest.approx(float(-(weight * adv).mean()), abs=1e-5)
    # the value clip is centred on the starting weights' values: at ratio 1 it clips nothing
    with torch.no_grad():
        value = before.head(torch.from_numpy(batch.obs).float())[1].float()
    v_loss = 0.5 * ((value - torch.from_numpy(batch.returns)) ** 2).mean()
    assert losses["losses/value_loss"] == pytest.approx(float(v_loss), rel=1e-5)
    plain, _, _ = _update_one_minibatch(lagged=False, threads=threads)
    assert plain["losses/clipfrac"] > 0.1


def test_an_exploiter_inside_an_overlapping_run_collects_one_rollout_at_a_time(monkeypatch):
    """fit_exploiter's learner never collects ahead: its collector gets one storage, not a second pair."""
    import train.ppo.exploiters as exploiters

    made: list[RolloutCollector] = []

    class Recorded(RolloutCollector):
        def __init__(self, *a: object, **k: object) -> None:
            super().__init__(*a, **k)  # type: ignore[arg-type]
            made.append(self)

    monkeypatch.setattr(exploiters, "RolloutCollector", Recorded)
    args = parse_args([*SMOKE, "--overlap-rollout", "true"])
    game = make_game(args.game, players=args.players, **args.game_options)
    init = make_net(args, game)
    exploiters.fit_exploiter(game, RandomAgent(game, seed=0), args, 256, np.random.default_rng(0), init)
    assert len(made) == 1 and len(made[0]._storages) == 1 and made[0].sampler is None
