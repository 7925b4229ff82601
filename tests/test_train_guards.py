"""Training refuses bad input clearly and loses nothing (issue 24), its checks catch what they guard (issue 25),
and its time limit holds with progress shown from the start (issue 26).

- a run folder is locked: a second ``train`` with the same ``--run-name`` is refused (two real processes);
- one schema for the network shape, checked by the trainer (``--hidden``) and the loader;
- numbers that overflow (``--learning-rate 1e300``) or unknown bot names are refused naming the field;
- ``--resume`` refuses another run's ``ckpt.pt``, naming what differs;
- YAML aliases (a "billion laughs") are refused, naming the file;
- a broken checkpoint is one line naming the file and what is wrong, never torch's advice;
- the checksum covers every kind of tensor (policy, optimizer, pool, RNG);
- the exploit CI is over deals, and the frozen-target check fires;
- ``--time-limit-min`` ends the run within its bound, on ``--resume`` too; progress shows from the start.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from agents import available, make_agent, register
from agents.base import RandomAgent
from agents.checkpoint import CheckpointError, check_meta, hidden_shape_error, load_checkpoint, save_checkpoint
from agents.ppo_agent import PolicyNet, load_policy
from bobshat.cli import main as cli_main
from bobshat_env.games import make_game
from train.ppo.config import Args, check_args, parse_args

ROOT = Path(__file__).resolve().parents[1]
SMOKE = str(ROOT / "configs" / "smoke.yaml")


def _train(tmp_path: Path, *extra: str) -> int:
    return cli_main(["train", "--config", SMOKE, "--runs-dir", str(tmp_path), *extra])


def _one_line_error(err: str, *words: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bobshat "), err
    assert "Traceback" not in err and all(w in err for w in words), err


def _listing(folder: Path) -> dict[str, tuple[int, int]]:
    return {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.iterdir()}


# --------------------------------------------------------------------------
# 1. two runs with the same name
def test_a_second_run_in_a_folder_in_use_is_refused_and_a_killed_runs_lock_is_released(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "bobshat.cli", "train", "--config", SMOKE, "--runs-dir", str(tmp_path)]
    argv += ["--run-name", "same", "--total-decisions", "1000000000", "--time-limit-min", "1"]
    first = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    run = tmp_path / "same"
    try:
        deadline = time.monotonic() + 300
        while not list(run.glob("events.out.tfevents.*")):  # the first run is training
            assert first.poll() is None and time.monotonic() < deadline, "the first run did not start"
            time.sleep(0.2)
        first.send_signal(signal.SIGSTOP)  # it holds the folder but writes nothing while the second one tries
        before = _listing(run)
        second = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
        assert second.returncode == 2, second.stderr
        _one_line_error(second.stderr, "in use", str(run))
        assert _listing(run) == before  # nothing changed: no checkpoint, no second log
    finally:
        first.kill()  # SIGKILL: no clean-up of its own
        first.wait()
    with open(run / ".lock", "rb") as f:  # the system released the dead run's lock: nothing stale to clear
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)


# --------------------------------------------------------------------------
# 2. one network-shape schema; numbers that overflow; unknown bots
@pytest.mark.parametrize(
    "hidden",
    [[8] * 64, [8] * 65, [100_000_000], [16_384, 16_384], [16_384, 16_384, 16_384], [0], [], [8.5], [True]],
)
def test_the_trainer_and_the_loader_check_one_network_shape_schema(hidden):
    trainer_ok = True
    try:
        check_args(Args(hidden=hidden))
    except ValueError as err:
        trainer_ok = False
        assert str(err).startswith("hidden must be"), err
    loader_ok = True
    try:
        check_meta({"hidden": hidden}, "x.pt")
    except CheckpointError as err:
        loader_ok = False
        assert "'x.pt'" in str(err) and "hidden must be" in str(err), err
    assert trainer_ok == loader_ok == (hidden_shape_error(hidden) is None)
    assert trainer_ok == (hidden in ([8] * 64, [16_384, 16_384]))


def test_more_than_64_layers_or_huge_widths_are_refused_before_anything_is_written(tmp_path, capsys):
    runs = tmp_path / "runs"
    for hidden, what in (("[" + ",".join(["4"] * 65) + "]", "at most 64 layers, got 65"), ("100000000", "16,384")):
        assert _train(runs, "--hidden", hidden) == 2
        _one_line_error(capsys.readouterr().err, "hidden must be", what)
    assert not runs.exists()
    # the deepest network the trainer takes trains, and its checkpoint loads and resumes
    deep = "[" + ",".join(["4"] * 64) + "]"
    assert _train(runs, "--hidden", deep, "--total-decisions", "256") == 0
    net, meta = load_policy(next(runs.glob("*/policy.pt")))
    assert len(meta["hidden"]) == 64 and len(net.hidden) == 64
    assert _train(runs, "--hidden", deep, "--total-decisions", "512", "--resume") == 0
    capsys.readouterr()


@pytest.mark.parametrize(
    "flag, value",
    [("learning-rate", v) for v in ("1e300", "inf", "nan", "-1")]
    + [
        ("pfsp-power", "1e300"),
        ("reward-scale", "1e300"),
        ("reward-scale", "-1"),
        ("clip-coef", "1e300"),
    ]
    # counts without a range of their own still fit 64 bits (the fuzz suite found --eval-every 2**64 ran)
    + [(f, str(2**64)) for f in ("eval-every", "checkpoint-every", "snapshot-every", "minibatch-size")]
    + [("update-epochs", str(10**30))],
)
def test_numbers_that_cannot_train_are_refused_naming_the_flag(tmp_path, capsys, flag, value):
    assert _train(tmp_path, f"--{flag}", value) == 2
    _one_line_error(capsys.readouterr().err, flag.replace("-", "_"), "must be")
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize(
    "argv, words", [(["--eval-every", "-2"], "eval_every"), (["--config", "nosuch.yaml"], "nosuch")]
)
def test_python_m_train_ppo_refuses_in_one_line_too(tmp_path, argv, words):
    """The module entry (not the ``bobshat`` script) printed a traceback for a refused setting."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "train.ppo", "--runs-dir", str(tmp_path), *argv]
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert lines[0].startswith("python -m train.ppo: error:") and words in lines[0], done.stderr
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("flag", ["heuristics", "eval-opponents"])
@pytest.mark.parametrize("value", ["nosuch", "random,stronk", "[simple, randm]"])
def test_unknown_bot_names_are_refused_listing_the_known_ones(tmp_path, capsys, flag, value):
    assert _train(tmp_path, f"--{flag}", value) == 2
    err = capsys.readouterr().err
    _one_line_error(err, flag.replace("-", "_"), "unknown agent", "known agents: " + ", ".join(available()))
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("flag", ["heuristics", "eval-opponents"])
@pytest.mark.parametrize(
    "value, words",
    [
        ("ppo:/etc/passwd", "is not an agent name"),
        ("strong:seed=5", "is not an agent name"),
        ("bid=random+play=strong", "is not an agent name"),
        ("ppo", "needs a checkpoint"),
    ],
)
def test_bots_the_pool_cannot_make_by_name_are_refused_before_the_run(tmp_path, capsys, flag, value, words):
    """The pool and the evaluation build their bots by name: a spec with a file or options (or a name that
    needs one) was left out with a warning, or failed mid-run (found by tests/test_fuzz_cli.py)."""
    assert _train(tmp_path, f"--{flag}", value) == 2
    _one_line_error(capsys.readouterr().err, flag.replace("-", "_"), words)
    assert not any(tmp_path.iterdir())


# --------------------------------------------------------------------------
# 3. --resume with another run's checkpoint
@pytest.mark.parametrize(
    "extra, what",
    [
        (["--seed", "2"], "seed=1"),
        (["--hidden", "[16]"], "hidden=[32, 32]"),
        (["--game-options", "{hands: 3}"], "game_options={'hands': 2}"),
        ([], "it is the checkpoint of run 'a', not of run 'b'"),
    ],
)
def test_resume_refuses_another_runs_checkpoint_naming_what_differs(tmp_path, capsys, extra, what):
    assert _train(tmp_path, "--run-name", "a", "--total-decisions", "256") == 0
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "ckpt.pt").write_bytes((tmp_path / "a" / "ckpt.pt").read_bytes())  # another run's file
    capsys.readouterr()
    before = _listing(tmp_path / "b")
    assert _train(tmp_path, "--run-name", "b", "--total-decisions", "512", "--resume", *extra) == 2
    _one_line_error(capsys.readouterr().err, "cannot resume", "ckpt.pt", what)
    assert _listing(tmp_path / "b") == before


# --------------------------------------------------------------------------
# 4. YAML aliases
LAUGHS = "exp_name: lol\ngame_options:\n  x0: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"  x{i}: &{c} [{', '.join(['*' + p] * 9)}]\n" for i, (p, c) in enumerate(zip("abcdefg", "bcdefgh"), start=1)
)


def test_a_billion_laughs_config_is_refused_naming_the_file(tmp_path, capsys):
    path = tmp_path / "laughs.yaml"
    path.write_text(LAUGHS)
    assert len(LAUGHS) < 1200 and "*g" in LAUGHS
    with pytest.raises(ValueError, match=r"laughs\.yaml: not valid YAML at line 4, column \d+: aliases"):
        parse_args(["--config", str(path)])
    runs = tmp_path / "runs"
    for command in (["train"], ["exploit", "--target", "random"]):
        assert cli_main([*command, "--config", str(path), "--runs-dir", str(runs)]) == 2
        _one_line_error(capsys.readouterr().err, "laughs.yaml", "aliases")
    with pytest.raises(ValueError, match="--game-options.*aliases"):
        parse_args(["--config", SMOKE, "--game-options", "{a: &x [1, 2], b: *x}"])
    assert not runs.exists()


# --------------------------------------------------------------------------
# 6. broken checkpoints: one clear line
def _broken_files(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    good = (ROOT / "checkpoints" / "bobs_hat_4p.pt").read_bytes()
    files: dict[str, tuple[bytes | None, str]] = {
        "empty": (b"", "empty"),
        "truncated_head": (good[:100], "truncated"),
        "truncated_middle": (good[:50_000], "truncated"),  # was a bare "[Errno 22] Invalid argument"
        "truncated_tail": (good[:-1], "truncated"),
        "text": (b"hello\n", "not a torch zip archive"),
        "random": (bytes(np.random.default_rng(0).integers(0, 256, 5000, dtype=np.uint8)), "not a torch zip"),
    }
    out = {}
    for name, (data, what) in files.items():
        path = tmp_path / f"{name}.pt"
        path.write_bytes(data)
        out[name] = (path, what)
    torch.save({"a": argparse.Namespace(x=1)}, tmp_path / "objects.pt")  # torch's own text: "weights_only=False"
    out["objects"] = (tmp_path / "objects.pt", "objects other than tensors")
    (tmp_path / "folder.pt").mkdir()
    out["folder"] = (tmp_path / "folder.pt", "is a folder")
    os.mkfifo(tmp_path / "fifo.pt")  # a read would block
    out["fifo"] = (tmp_path / "fifo.pt", "not a regular file")
    flipped = bytearray(good)
    flipped[100] ^= 0xFF  # inside the first member's data
    (tmp_path / "crc.pt").write_bytes(bytes(flipped))
    out["crc"] = (tmp_path / "crc.pt", "damaged")
    return out


def test_broken_checkpoints_are_one_line_naming_the_file_and_what_is_wrong(tmp_path, capsys):
    game = make_game("bobs_hat", players=4)
    for name, (path, what) in _broken_files(tmp_path).items():
        with pytest.raises(CheckpointError) as err:
            load_checkpoint(path)
        text = str(err.value)
        assert text.startswith(repr(str(path))) and what in text, (name, text)
        for leak in ("weights_only", "EOFError", "Errno", "list index", "PytorchStreamReader", "miniz", "\n"):
            assert leak not in text, (name, text)
        spec = f"ppo:{path},random,random,random"
        assert cli_main(["eval", "--agents", spec, "--deals", "1", "--quiet"]) == 2, name
        _one_line_error(capsys.readouterr().err, str(path), what)
    with pytest.raises(CheckpointError):
        make_agent(f"ppo:{tmp_path / 'objects.pt'}", game)


def test_nan_weights_without_a_checksum_are_refused_naming_the_tensor(tmp_path, capsys):
    game = make_game("bobs_hat", players=4)
    net = PolicyNet(game.obs_size(), game.n_actions, (16,))
    tensors = {f"policy.{k}": v.clone() for k, v in net.state_dict().items()}
    tensors["policy.policy.weight"][3, 5] = math.nan
    meta = {"game": "bobs_hat", "players": 4, "obs_size": net.obs_size, "n_actions": net.n_actions, "hidden": [16]}
    path = tmp_path / "nan.pt"
    save_checkpoint(path, tensors, meta)  # a valid checksum of NaN weights: what a diverged run saves
    with pytest.raises(CheckpointError, match=r"nan\.pt.*policy\.policy\.weight holds NaN"):
        load_policy(path, game)
    blob = torch.load(path, weights_only=True)
    text = json.loads(bytes(blob["__meta__"].numpy()).decode())
    del text["sha256"]  # written before checksums existed: it used to play as "illegal action 0 (blue1)"
    blob["__meta__"] = torch.frombuffer(bytearray(json.dumps(text).encode()), dtype=torch.uint8)
    torch.save(blob, path)
    assert cli_main(["eval", "--agents", f"ppo:{path},random,random,random", "--deals", "1", "--quiet"]) == 2
    _one_line_error(capsys.readouterr().err, "nan.pt", "policy.policy.weight holds NaN or infinite values")


# --------------------------------------------------------------------------
# 7. the checksum covers every kind of tensor
@pytest.mark.parametrize("kind", ["policy.", "optim.", "pool.", "rng."])
def test_tampering_with_any_kind_of_tensor_in_a_training_checkpoint_is_refused(tmp_path, capsys, kind):
    assert _train(tmp_path, "--run-name", "r", "--total-decisions", "512") == 0
    capsys.readouterr()
    path = tmp_path / "r" / "ckpt.pt"
    load_checkpoint(path)  # sound as written
    blob = torch.load(path, weights_only=True)
    key = sorted(k for k in blob if k.startswith(kind) and blob[k].numel())[0]
    t = blob[key].reshape(-1)
    if t.is_floating_point():
        t[0] += 1.0  # finite: only the checksum can tell
    else:
        t[0] ^= 1
    torch.save(blob, path)
    with pytest.raises(CheckpointError, match=r"ckpt\.pt.*is corrupt.*checksum"):
        load_checkpoint(path)


# --------------------------------------------------------------------------
# 8. exploit: the CI's unit is the deal; the frozen-target check fires
def test_the_exploit_interval_is_over_deals_not_games(monkeypatch):
    import train.exploit as ex

    seen = {}
    real = ex.play_duplicate

    def spy(game, agents, seatings, deals, seed, **kw):  # kw: the variance collector's recorder_factory
        res = real(game, agents, seatings, deals, seed, **kw)
        seen.update(seatings=seatings, deals=deals, totals=res.totals.astype(np.float64))
        return res

    monkeypatch.setattr(ex, "play_duplicate", spy)
    game = make_game("bobs_hat", players=4, hands=2)
    res = ex.exploit_margin(game, make_agent("strong", game, seed=1), "random", deals=24, seed=3)
    D, S2 = len(seen["deals"]), seen["seatings"].shape[0]
    assert (D, S2) == (24, 8)  # 4 seatings with the exploiter, 4 with the copy, for each deal (deal-major)
    seats = np.tile(seen["seatings"], (D, 1)) != 1
    totals, H = seen["totals"], game.config.hands
    per_game = (totals * seats).sum(1) - (totals * ~seats).sum(1) / 3
    per_game = per_game.reshape(D, 2, S2 // 2)[:, 0, :] / H  # the exploiter's games
    from train.evaluate.statistics import mean_ci

    per_deal = mean_ci(per_game.mean(axis=1))
    over_games = mean_ci(per_game.reshape(-1))
    assert res["margin_per_hand"] == pytest.approx(per_deal[0]) and res["ci95"] == pytest.approx(per_deal[1])
    # over games (4 per deal, not independent) the interval differs (here by 5%; the issue saw it too narrow),
    # so the equality above tells the two units apart
    assert abs(over_games[1] - per_deal[1]) > 0.02 * per_deal[1], (over_games, per_deal)


class _Drifting(RandomAgent):
    """A target whose weights change as it plays (a bug an exploit run must catch)."""

    def __init__(self, game=None, seed=None, **options):
        super().__init__(seed=seed)
        self.net = torch.nn.Linear(2, 2)

    def act(self, obs, mask, seat, public=None):
        with torch.no_grad():
            self.net.weight += 1.0
        return super().act(obs, mask, seat)


def test_the_frozen_target_check_fires_when_the_target_changes(tmp_path, capsys):
    register("test_drifting", _Drifting)
    argv = ["exploit", "--config", SMOKE, "--runs-dir", str(tmp_path), "--target", "test_drifting", "--quiet"]
    assert cli_main([*argv, "--total-decisions", "256", "--final-deals", "0"]) == 2
    _one_line_error(capsys.readouterr().err, "test_drifting", "changed during the exploit run")
    run = next(tmp_path.iterdir())
    assert not (run / "exploit.json").exists() or json.loads((run / "exploit.json").read_text())["final"] is None
    register("test_steady", lambda game=None, seed=None, **o: _Steady(seed=seed))
    argv[argv.index("test_drifting")] = "test_steady"
    assert cli_main([*argv, "--total-decisions", "256", "--final-deals", "0"]) == 0, capsys.readouterr().err


class _Steady(RandomAgent):
    def __init__(self, seed=None):
        super().__init__(seed=seed)
        self.net = torch.nn.Linear(2, 2)


# --------------------------------------------------------------------------
# 9. the time limit and progress
def _elapsed(run: Path) -> tuple[float, int, int]:
    _, meta = load_checkpoint(run / "ckpt.pt")
    return meta["elapsed_s"], meta["iteration"], meta["global_step"]


class _Slow(RandomAgent):
    """An evaluation opponent that takes 0.1 s of wall time per call, whatever the machine's load: an
    evaluation (54 calls in the smoke game, batched over its deals) then takes about 6 s."""

    def act(self, obs, mask, seat, public=None):
        time.sleep(0.1)
        return super().act(obs, mask, seat)


def test_the_time_limit_ends_the_run_within_its_bound_and_resume_gets_it_again(tmp_path, capsys):
    register("test_slow", lambda game=None, seed=None, **options: _Slow(seed=seed))
    assert _train(tmp_path, "--run-name", "warm", "--total-decisions", "256", "--eval-deals", "8") == 0  # compiled
    limit_min = 0.25  # 15 s, of which the final evaluation takes ~6 s: it used to come on top of the limit
    argv = ["--run-name", "t", "--total-decisions", "10000000000", "--time-limit-min", str(limit_min)]
    argv += ["--eval-every", "0", "--eval-opponents", "test_slow", "--eval-deals", "2"]
    assert _train(tmp_path, *argv) == 0
    err = capsys.readouterr().err
    assert "stopped by the time limit" in err, err
    elapsed, iterations, step = _elapsed(tmp_path / "t")
    assert elapsed <= 60 * limit_min * 1.2, elapsed  # generous: within a few percent or one update
    assert iterations >= 2  # the first iteration (compiling, warming up, evaluating) did not make it stop
    # --resume: the limit is this invocation's (the docs), not the whole run's, which is already spent
    assert _train(tmp_path, *argv, "--resume") == 0
    capsys.readouterr()
    elapsed2, iterations2, step2 = _elapsed(tmp_path / "t")
    assert iterations2 >= iterations + 2 and step2 > step
    assert elapsed2 - elapsed <= 60 * limit_min * 1.2, (elapsed, elapsed2)


def test_progress_shows_from_the_start_what_the_run_is_doing_and_its_time_cap(tmp_path, capsys):
    argv = ["--total-decisions", "512", "--time-limit-min", "30", "--progress", "true"]
    assert _train(tmp_path, *argv) == 0
    lines = capsys.readouterr().err.strip().splitlines()
    assert "setting up" in lines[0] and "preparing the game kernels" in lines[1], lines
    assert "collecting the first rollout (256 decisions)" in lines[2], lines
    for line in lines[:3]:  # before any iteration ends: the count, a rate and the ETA
        assert "/512 decisions" in line and "/s ETA " in line, line
    assert all(" it " not in line for line in lines[:3])
    assert any(" it 1 " in line for line in lines[3:]), lines
    assert lines[-1].startswith("trained 512 table decisions in ") and "/s; stopped by total_decisions" in lines[-1]
