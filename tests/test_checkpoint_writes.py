"""Checkpoint writes that a kill interrupts: stale temporary files are cleaned when training starts,
the readable ``.json`` sidecar never describes an older checkpoint than the file beside it, and a
resumed run's TensorBoard logs show each step once."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from agents.checkpoint import load_checkpoint, remove_stale_temporaries, save_checkpoint
from agents.ppo_agent import PolicyNet
from bobshat.cli import main
from bobshat_env.paths import AtomicFile

ROOT = Path(__file__).resolve().parents[1]
SMOKE = str(ROOT / "configs" / "smoke.yaml")


def _dead_pid() -> int:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(proc.stdout)


def test_training_removes_temporaries_of_killed_writes_but_not_a_live_writers(tmp_path, capsys):
    run = tmp_path / "bobs_hat_4p_smoke_s1"
    run.mkdir()
    dead = _dead_pid()
    stale = [run / f".ckpt.pt.tmp{dead}", run / f".policy.pt.json.tmp{dead}"]
    live = run / f".ckpt.pt.tmp{os.getppid()}"  # a process that is running: it may be writing
    other = run / "notes.tmp123"  # not one of ours
    for f in (*stale, live, other):
        f.write_bytes(b"x" * 100)
    assert main(["train", "--config", SMOKE, "--runs-dir", str(tmp_path), "--total-decisions", "256"]) == 0
    capsys.readouterr()
    assert not any(f.exists() for f in stale)
    assert live.exists() and other.exists()
    assert (run / "ckpt.pt").is_file()
    assert remove_stale_temporaries(tmp_path / "missing") == []


def _save(path: Path, step: int) -> None:
    net = PolicyNet(8, 3, (4,))
    meta = {"game": "bobs_hat", "players": 4, "obs_size": 8, "n_actions": 3, "hidden": [4], "global_step": step}
    save_checkpoint(path, {f"policy.{k}": v for k, v in net.state_dict().items()}, meta)


@pytest.mark.parametrize("fails", ["sidecar", "tensors"])
def test_the_sidecar_never_lags_the_checkpoint(tmp_path, monkeypatch, fails):
    path = tmp_path / "ckpt.pt"
    _save(path, 1)
    real = AtomicFile.write
    suffix = ".json" if fails == "sidecar" else ".pt"

    def write(self, data):  # the disk fills while this file is written
        if self.target.name.endswith(suffix):
            raise OSError(errno.ENOSPC, "disk full")
        return real(self, data)

    monkeypatch.setattr(AtomicFile, "write", write)
    with pytest.raises(OSError, match="disk full"):
        _save(path, 2)  # killed part-way, as far as the files can tell
    monkeypatch.undo()
    sidecar = json.loads(path.with_name("ckpt.pt.json").read_text())["global_step"]
    embedded = load_checkpoint(path)[1]["global_step"]
    assert sidecar >= embedded, f"sidecar says step {sidecar}, the checkpoint holds step {embedded}"
    assert not list(tmp_path.glob(".*tmp*"))


def test_resume_after_a_crash_shows_each_step_once_in_tensorboard(tmp_path, capsys):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    base = ["train", "--config", SMOKE, "--runs-dir", str(tmp_path)]
    assert main([*base, "--total-decisions", "512"]) == 0  # iterations 1-2 (256 table decisions each)
    run = next(tmp_path.iterdir())
    saved = tmp_path / "ckpt_at_512.pt"
    shutil.copy(run / "ckpt.pt", saved)
    assert main([*base, "--total-decisions", "1024", "--resume"]) == 0  # logs steps 768 and 1024
    # a crash after logging 768 and 1024 but before their checkpoint: the run restarts from 512
    shutil.copy(saved, run / "ckpt.pt")
    assert main([*base, "--total-decisions", "1024", "--resume"]) == 0  # steps 768 and 1024 again
    capsys.readouterr()
    acc = EventAccumulator(str(run), size_guidance={"scalars": 0})
    acc.Reload()
    steps = [e.step for e in acc.Scalars("losses/value_loss")]
    assert steps == [256, 512, 768, 1024], steps
    assert torch.load(run / "ckpt.pt", weights_only=True)  # and the final checkpoint is intact
