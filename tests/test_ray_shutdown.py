"""A Ray that a command starts (``--ray-address local``) is its own and ends with it.

- SIGTERM: Ray is stopped, status 143; SIGKILL of the command: the reaper
  (train/runtime/distributed.py) kills what Ray left (its agents used to run on under
  PID 1). Nothing of the command's process tree is left in either case.
- ``local`` starts a private instance even where another Ray runs and
  ``RAY_ADDRESS`` names it (Ray's ``ray.init()`` would join that one).

Each command gets its own RAY_TMPDIR, so these tests neither see nor touch
another Ray on the machine. Skipped where Ray is not installed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from procs import HAS_PROC, ROOT, cmdlines, descendants, kill_all, ray_tmpdir, signal_when_ready, start, wait_gone

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.skipif(not HAS_PROC, reason="reads the process table from /proc")
EVAL = ["eval", "--agents", "strong,strong,strong,strong", "--deals", "100000", "--quiet", "--ray-address", "local"]


def _ray_runs(pid: int) -> bool:
    """Ray is up below ``pid``: a raylet and at least one process titled ray::... (a worker or an agent)."""
    lines = cmdlines(descendants(pid)).values()
    return any(b"raylet" in c for c in lines) and any(c.startswith(b"ray::") for c in lines)


@pytest.mark.parametrize("how", ["SIGTERM", "SIGKILL"])
def test_a_local_ray_ends_with_the_command(tmp_path, how):
    with ray_tmpdir() as ray_dir:
        _signal_a_ray_command(tmp_path, how, Path(ray_dir))


def _signal_a_ray_command(tmp_path: Path, how: str, ray_dir: Path) -> None:
    proc = start(EVAL, tmp_path)  # RAY_TMPDIR: ray_dir
    kids: set[int] = set()
    try:
        status, err, kids = signal_when_ready(proc, how, ready=_ray_runs)
        assert status is not None, f"still running 60 s after {how}: {err[-2000:]}"
        if how == "SIGTERM":
            assert status == 143 and "Traceback" not in err, err
        left = wait_gone(kids, 30.0)
        assert not left, f"left running: {cmdlines(left)}"
        ray_dirs = list(ray_dir.glob("bobshat-*"))
        assert ray_dirs == [], f"Ray's folder left: {ray_dirs}"
    finally:
        if proc.poll() is None:
            proc.kill()
        kill_all(kids)


def test_local_is_private_even_where_another_ray_answers(tmp_path):
    """RAY_ADDRESS names this process's Ray: ``--ray-address local`` in a command still starts its own (it
    failed: "When connecting to an existing cluster, num_cpus and num_gpus must not be provided")."""
    if ray.is_initialized():
        ray.shutdown()
    with ray_tmpdir():
        try:
            ray.init(address="local", num_cpus=1, include_dashboard=False, log_to_driver=False)
            gcs = ray.get_runtime_context().gcs_address
            env = {**os.environ, "PYTHONPATH": str(ROOT), "RAY_ADDRESS": gcs}
            argv = [sys.executable, "-m", "bobshat.cli", "eval", "--deals", "2", "--quiet"]
            argv += ["--ray-address", "local"]
            done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
            assert done.returncode == 0, done.stderr
            assert "on Ray (local," in done.stdout
            assert ray.available_resources().get("CPU") == 1.0  # this Ray is up, its CPU free
        finally:
            ray.shutdown()
