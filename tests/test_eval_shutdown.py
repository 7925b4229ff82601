"""``bobshat eval --workers 2`` ends with its workers: SIGTERM, Ctrl-C (the whole process group) or SIGKILL
of the parent leaves no process behind (workers, multiprocessing's resource tracker); Ctrl-C ends with one
line and status 130, SIGTERM with status 143, neither with a traceback. The signal goes once the pool is up
(read from /proc: tests/procs.py), not after a guessed sleep."""

from __future__ import annotations

import pytest
from procs import HAS_PROC, assert_ended_as_asked, kill_all, signal_when_ready, start, wait_gone

pytestmark = pytest.mark.skipif(not HAS_PROC, reason="reads the process table from /proc")


@pytest.mark.parametrize(
    ("how", "records"),
    [("SIGTERM", False), ("Ctrl-C", False), ("SIGKILL", False), ("SIGTERM", True)],
    ids=["SIGTERM", "Ctrl-C", "SIGKILL", "SIGTERM-records"],
)
def test_eval_workers_end_with_the_parent(tmp_path, how, records):
    """With ``--records`` each chunk's result is large (a worker stopped while sending one used to leave
    the old pool's result thread on a half-read message: SIGTERM then hung the exit)."""
    args = ["eval", "--workers", "2", "--deals", "20000", "--quiet"]
    if records:
        args += ["--records", str(tmp_path / "games.jsonl"), "--batch-size", "4096"]
    proc = start(args, tmp_path)
    kids: set[int] = set()
    try:
        status, err, kids = signal_when_ready(proc, how)
        assert_ended_as_asked("eval", how, status, err)
        assert len(kids) >= 3, kids  # two workers and the resource tracker were there
        assert not wait_gone(kids), f"still running after the parent ended: {kids}"
        assert not (tmp_path / "games.jsonl").exists()  # an interrupted tournament writes no records
        if how != "SIGKILL":
            assert [p.name for p in tmp_path.iterdir()] == [], "a temporary was left behind"
    finally:
        if proc.poll() is None:
            proc.kill()
        kill_all(kids)
