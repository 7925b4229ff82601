"""``bobshat bids --workers 2`` ends with its workers, as eval does (both run on train/runtime/pool.py): SIGTERM,
Ctrl-C (the whole process group) or SIGKILL of the parent leaves no worker behind; Ctrl-C ends with one line
and status 130 (it used to be ignored until the run ended), SIGTERM with 143."""

from __future__ import annotations

import pytest
from procs import HAS_PROC, assert_ended_as_asked, kill_all, signal_when_ready, start, wait_gone

pytestmark = pytest.mark.skipif(not HAS_PROC, reason="reads the process table from /proc")


@pytest.mark.parametrize("how", ["SIGTERM", "Ctrl-C", "SIGKILL"])
def test_bids_workers_end_with_the_parent(tmp_path, how):
    args = ["bids", "--bidders", "random,simple", "--play", "random", "--deals", "100000", "--workers", "2"]
    proc = start([*args, "--quiet", "--json", str(tmp_path / "bids.json")], tmp_path)
    kids: set[int] = set()
    try:
        status, err, kids = signal_when_ready(proc, how)
        assert_ended_as_asked("bids", how, status, err)
        assert len(kids) >= 2, kids
        assert not wait_gone(kids), f"still running after the parent ended: {kids}"
        assert not (tmp_path / "bids.json").exists()
    finally:
        if proc.poll() is None:
            proc.kill()
        kill_all(kids)
