"""Issue 52, part 3: ``bobshat train`` interrupted (Ctrl-C, SIGTERM) keeps its work, and budgets of nothing
are refused.

A run is stopped after its first update but long before its first periodic checkpoint
(``--checkpoint-every`` far away): the checkpoint it saves on the way out holds the decisions trained,
and ``--resume`` continues from it.
"""

from __future__ import annotations

import json
import os
import re
import signal
from pathlib import Path

import pytest
from procs import HAS_PROC, ROOT, descendants, kill_all, run_here, signal_when_ready, start

from agents.checkpoint import load_checkpoint

SMOKE = str(ROOT / "configs" / "smoke.yaml")  # 256 table decisions an iteration, in seconds


def _trained_once(proc_stderr) -> bool:
    """The progress line of a finished iteration: it is printed after the iteration's update."""
    return re.search(r"\bit \d+ ret ", proc_stderr()) is not None


@pytest.mark.skipif(not HAS_PROC, reason="reads the process table from /proc")
@pytest.mark.parametrize("how, status", [("Ctrl-C", 130), ("SIGTERM", 143)])
def test_an_interrupted_run_saves_a_checkpoint_that_resume_continues(tmp_path, capsys, how, status):
    run = ["train", "--config", SMOKE, "--runs-dir", str(tmp_path / "runs"), "--checkpoint-every", "1000000"]
    proc = start([*run, "--total-decisions", "100000000", "--progress", "true"], tmp_path)

    def stderr() -> str:
        proc.stderr_file.seek(0)
        return proc.stderr_file.read().decode(errors="replace")

    kids: set[int] = set()
    try:
        code, err, kids = signal_when_ready(proc, how, ready=lambda pid: _trained_once(stderr))
    finally:
        if proc.poll() is None:
            proc.kill()
        kill_all(kids | descendants(proc.pid))
    assert code == status and "Traceback" not in err, err
    (run_dir,) = (tmp_path / "runs").iterdir()
    assert f"saved {run_dir / 'ckpt.pt'} at " in err and "on the way out (--resume continues)" in err, err
    _, meta = load_checkpoint(run_dir / "ckpt.pt")
    step = meta["global_step"]
    assert step > 0 and step % 256 == 0 and meta["iteration"] == step // 256, meta  # whole iterations only
    _, policy = load_checkpoint(run_dir / "policy.pt")
    assert policy["global_step"] == step
    code, out, err = run_here([*run, "--total-decisions", str(step + 256), "--resume"], capsys)
    assert code == 0, err
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["global_step"] == step + 256  # one more iteration, from where the interrupt saved
    assert load_checkpoint(run_dir / "ckpt.pt")[1]["global_step"] == step + 256


@pytest.fixture
def default_sigint():
    """Python's own SIGINT handler for the test (pytest keeps it, but a plugin may not), restored after."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def _saved(run_dir: Path) -> tuple[int, int]:
    meta = load_checkpoint(run_dir / "ckpt.pt")[1]
    return meta["global_step"], meta["iteration"]


def test_an_interrupt_during_a_rollout_saves_the_last_finished_update(tmp_path, capsys, monkeypatch, default_sigint):
    """The third rollout is cut short: the checkpoint is the second iteration's, its counters not the third's."""
    from train.ppo.learner import Learner

    real, calls = Learner.collect, []

    def collect(self):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(self)

    monkeypatch.setattr(Learner, "collect", collect)
    run = ["train", "--config", SMOKE, "--runs-dir", str(tmp_path), "--checkpoint-every", "1000000"]
    code, _, err = run_here([*run, "--total-decisions", "100000"], capsys)
    assert code == 130 and "saved" in err and err.strip().splitlines()[-1] == "bobshat train: interrupted", err
    assert _saved(next(tmp_path.iterdir())) == (512, 2)


def test_a_ctrl_c_during_an_update_waits_for_it_and_saves_it(tmp_path, capsys, monkeypatch, default_sigint):
    """A Ctrl-C as the second update starts: the update runs to its end, and the checkpoint holds it."""
    import train.ppo.learner as learner

    real, calls = learner.ppo_update, []

    def update(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            os.kill(os.getpid(), signal.SIGINT)  # taken at once, unless held
        return real(*args, **kwargs)

    monkeypatch.setattr(learner, "ppo_update", update)
    run = ["train", "--config", SMOKE, "--runs-dir", str(tmp_path), "--checkpoint-every", "1000000"]
    code, _, err = run_here([*run, "--total-decisions", "100000"], capsys)
    assert code == 130 and len(calls) == 2, err
    assert _saved(next(tmp_path.iterdir())) == (512, 2)


def test_an_interrupt_before_the_first_update_saves_nothing(tmp_path, capsys, monkeypatch, default_sigint):
    from train.ppo.learner import Learner

    def collect(self):
        raise KeyboardInterrupt

    monkeypatch.setattr(Learner, "collect", collect)
    code, _, err = run_here(["train", "--config", SMOKE, "--runs-dir", str(tmp_path)], capsys)
    assert code == 130 and "saved" not in err, err
    assert not (next(tmp_path.iterdir()) / "ckpt.pt").exists()


def test_train_refuses_a_budget_of_no_decisions(tmp_path, capsys):
    code, out, err = run_here(
        ["train", "--config", SMOKE, "--runs-dir", str(tmp_path), "--total-decisions", "0"], capsys
    )
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert "total_decisions must be at least 1, got 0" in err and "trained" not in out + err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--total-decisions", "0"], "--total-decisions must be in [1, 1e+12], got 0"),
        (
            ["--final-deals", "0", "--variance-reduction"],
            "--variance-reduction reports the final evaluation's reduced margin, and --final-deals 0 has none",
        ),
    ],
)
def test_exploit_refuses_what_would_run_for_nothing_and_leaves_no_run_folder(tmp_path, capsys, flags, message):
    argv = ["exploit", "--target", "random", "--config", SMOKE, "--runs-dir", str(tmp_path / "runs"), "--quiet"]
    code, _, err = run_here([*argv, *flags], capsys)
    assert code == 2 and "Traceback" not in err, err
    assert message in err.strip().splitlines()[-1], err
    assert not (tmp_path / "runs").exists() or list((tmp_path / "runs").iterdir()) == []
