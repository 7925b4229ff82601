"""``bobshat eval --workers 2`` ends with its workers: SIGTERM, Ctrl-C (the whole process group) or SIGKILL
of the parent leaves no process behind (workers, multiprocessing's resource tracker), and Ctrl-C ends
with a message and status 130, not a traceback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process table from /proc")


def _children() -> dict[int, int]:
    """pid -> parent pid of every live (non-zombie) process."""
    out = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (comm) "
            if fields[0] != "Z":
                out[int(d.name)] = int(fields[1])
    return out


def _descendants(pid: int) -> set[int]:
    table = _children()
    found, frontier = set(), {pid}
    while frontier:
        frontier = {c for c, p in table.items() if p in frontier} - found
        found |= frontier
    return found


def _alive(pids: set[int]) -> set[int]:
    return pids & set(_children())


@pytest.mark.parametrize("how", ["SIGTERM", "Ctrl-C", "SIGKILL"])
def test_eval_workers_end_with_the_parent(tmp_path, how):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "bobshat_env.cli", "eval", "--workers", "2", "--deals", "20000", "--quiet"]
    # its own session, so that the group Ctrl-C signals is the eval's alone, as in a terminal
    proc = subprocess.Popen(
        argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    kids: set[int] = set()
    try:
        deadline = time.monotonic() + 120
        while len(kids) < 3 and time.monotonic() < deadline:  # two workers and the resource tracker
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.2)
            kids = _descendants(proc.pid)
        assert len(kids) >= 3, f"workers did not start: {kids}"
        if how == "Ctrl-C":
            # a worker spends its first seconds importing; a Ctrl-C then used to print its traceback
            # (timing-dependent), so check the cause directly: every worker ignores SIGINT from its start
            for pid in kids:
                try:
                    if b"spawn_main" not in Path(f"/proc/{pid}/cmdline").read_bytes():
                        continue  # the resource tracker: it ignores SIGINT itself
                    status = Path(f"/proc/{pid}/status").read_text()
                except OSError:
                    continue
                ignored = int(next(line.split()[1] for line in status.splitlines() if line.startswith("SigIgn:")), 16)
                assert ignored & (1 << (signal.SIGINT - 1)), f"worker {pid} does not ignore SIGINT yet"
        time.sleep(1.0)  # let them take chunks
        if how == "SIGTERM":
            proc.send_signal(signal.SIGTERM)
        elif how == "Ctrl-C":
            os.killpg(proc.pid, signal.SIGINT)  # a terminal sends it to every process of the group
        else:
            proc.kill()
        out, err = proc.communicate(timeout=60)
        text = err.decode()
        if how == "SIGTERM":
            assert proc.returncode == 143 and "Traceback" not in text, text
        elif how == "Ctrl-C":
            assert proc.returncode == 130, text
            assert "interrupted" in text and "Traceback" not in text and "KeyboardInterrupt" not in text, text
        deadline = time.monotonic() + 20
        while _alive(kids) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _alive(kids), f"still running after the parent ended: {_alive(kids)}"
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in _alive(kids):  # leave nothing behind even when the test fails
            os.kill(pid, signal.SIGKILL)
