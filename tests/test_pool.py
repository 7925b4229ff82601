"""train/runtime/pool.py, the worker-pool driver of eval and bids: every chunk's result once, a worker's exception
re-raised as itself, a dead worker an error (never a hang), and workers gone when it returns or raises."""

from __future__ import annotations

import contextlib
import gc
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from procs import HAS_PROC, descendants, kill_all, wait_gone

from train.runtime.pool import WorkerDied, map_chunks, run_chunks


def _square(x: int) -> tuple[int, int, int]:
    return x, x * x, os.getpid()


def _fails_on_3(x: int) -> int:
    if x == 3:
        raise ValueError("chunk 3 is bad")
    return x


def _dies_on_2(x: int) -> int:
    if x == 2:
        os.kill(os.getpid(), signal.SIGKILL)
    return x


def test_every_chunk_once_over_the_workers() -> None:
    got = []
    map_chunks(_square, list(range(10)), 3, lambda ch, r: got.append((ch, r)), mp_context="fork")
    assert sorted((ch, r[0], r[1]) for ch, r in got) == [(i, i, i * i) for i in range(10)]
    assert len({r[2] for _, r in got}) > 1 and os.getpid() not in {r[2] for _, r in got}  # in workers


def test_run_chunks_runs_here_with_one_worker_and_in_workers_with_more() -> None:
    """eval and bids share run_chunks: one worker runs ``here`` in this process, in chunk order; more use the pool."""
    here: list[tuple[int, tuple[int, int, int]]] = []
    run_chunks(_square, [4, 1, 3], 1, lambda ch, r: here.append((ch, r)), here=lambda x: (x, -x, os.getpid()))
    assert here == [(4, (4, -4, os.getpid())), (1, (1, -1, os.getpid())), (3, (3, -3, os.getpid()))]
    pooled: list[tuple[int, tuple[int, int, int]]] = []
    run_chunks(_square, [4, 1, 3], 2, lambda ch, r: pooled.append((ch, r)), mp_context="fork", here=lambda x: 0)
    assert sorted((ch, r[1]) for ch, r in pooled) == [(1, 1), (3, 9), (4, 16)]
    assert os.getpid() not in {r[2] for _, r in pooled}


def test_a_workers_exception_is_reraised_and_the_workers_end() -> None:
    before = descendants(os.getpid()) if HAS_PROC else set()
    with pytest.raises(ValueError, match="chunk 3 is bad") as exc:
        map_chunks(_fails_on_3, list(range(8)), 2, lambda ch, r: None, mp_context="fork")
    assert "_fails_on_3" in str(exc.value.__cause__)  # the worker's traceback
    if HAS_PROC:
        assert descendants(os.getpid()) - before == set()  # killed and reaped before it raised


def test_a_dead_worker_is_an_error_not_a_hang() -> None:
    with pytest.raises(WorkerDied, match="ended without a result"):
        map_chunks(_dies_on_2, list(range(6)), 2, lambda ch, r: None, mp_context="fork")


def test_bad_worker_count() -> None:
    with pytest.raises(ValueError, match="workers must be at least 1"):
        map_chunks(_square, [1], 0, lambda ch, r: None)


def _assert_killed_by_a_signal(pids: list[int]) -> None:
    """Each worker ended by a signal (the pool kills its workers), none on its own; one still running after
    30 s is killed here and counted as a failure."""
    for pid in pids:
        deadline = time.monotonic() + 30
        with contextlib.suppress(ChildProcessError):  # already reaped by the pool
            while (got := os.waitpid(pid, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
                time.sleep(0.05)
            if got[0] == 0:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            assert got[0] != 0 and os.WIFSIGNALED(got[1]), f"worker {pid} ended with status {got[1]} (0: running)"


def test_sigterm_while_a_worker_starts_leaves_no_traceback(monkeypatch, capfd) -> None:
    """A SIGTERM between a spawned worker's exec and the parent's write of its start-up data used to end the
    parent there: the worker read an empty pipe and printed an EOFError traceback (CI, ``bids --workers 2``
    SIGTERM test, seen once). The signal is held until every worker has its data, then taken."""
    import multiprocessing.util

    real, pids = multiprocessing.util.spawnv_passfds, []

    def spawn_then_sigterm(path, args, passfds):
        pid = real(path, args, passfds)
        if any(b"spawn_main" in os.fsencode(a) for a in args):  # a worker (not multiprocessing's resource tracker)
            pids.append(pid)
            if len(pids) == 1:
                os.kill(os.getpid(), signal.SIGTERM)  # lands before the data is written (the race, every time)
        return pid

    monkeypatch.setattr(multiprocessing.util, "spawnv_passfds", spawn_then_sigterm)
    with pytest.raises(SystemExit) as exc:
        map_chunks(_square, list(range(6)), 2, lambda ch, r: None, mp_context="spawn")
    code = exc.value.code
    del exc  # the traceback holds a half-started worker's pipe open (a process that ends closes it)
    gc.collect()
    assert code == 143
    assert len(pids) == 2  # the second worker started too: the signal waited for the start, not longer
    _assert_killed_by_a_signal(pids)  # by the pool, which reaps them (the defect: exit 1)
    assert "Traceback" not in capfd.readouterr().err


def _until_python_handles_sigint(pid: int) -> None:
    """Wait (10 s at most) until the process has a SIGINT handler: its Python is up, reading its start-up data."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with open(f"/proc/{pid}/status") as f:
            caught = int(next(line for line in f if line.startswith("SigCgt:")).split()[1], 16)
        if caught & (1 << (signal.SIGINT - 1)):
            return
        time.sleep(0.01)


@pytest.mark.skipif(not HAS_PROC, reason="reads the process table from /proc")
def test_ctrl_c_while_the_workers_start_is_taken_not_lost(monkeypatch, capfd) -> None:
    """A Ctrl-C (SIGINT to the parent and its workers) in the milliseconds the workers start: the parent
    used to ignore SIGINT then, so the Ctrl-C was lost and the run went on to the end. Now the workers start
    with SIGINT blocked and drop it quietly, and the parent takes it once they have all started: a
    KeyboardInterrupt, every worker killed and reaped, no traceback from any of them."""
    import multiprocessing.util

    real, pids = multiprocessing.util.spawnv_passfds, []

    def spawn_then_ctrl_c(path, args, passfds):
        pid = real(path, args, passfds)
        if any(b"spawn_main" in os.fsencode(a) for a in args):  # a worker (not multiprocessing's resource tracker)
            pids.append(pid)
            if len(pids) == 1:  # as a terminal does: to every process of the group, while this worker starts
                _until_python_handles_sigint(pid)  # (before that, a SIGINT would end it silently either way)
                os.kill(pid, signal.SIGINT)
                os.kill(os.getpid(), signal.SIGINT)
        return pid

    monkeypatch.setattr(multiprocessing.util, "spawnv_passfds", spawn_then_ctrl_c)
    results: list[int] = []
    with pytest.raises(KeyboardInterrupt):
        map_chunks(_square, list(range(40)), 2, lambda ch, r: results.append(ch), mp_context="spawn")
    gc.collect()
    assert len(pids) == 2  # the second worker started too: the Ctrl-C waited for the start, not longer
    assert len(results) < 40  # taken at once, not after the run
    _assert_killed_by_a_signal(pids)
    assert "Traceback" not in capfd.readouterr().err


# ---------------------------------------------------------------------------------------------------------------
# What a user relies on when a pool ends: no worker left behind, not even as a zombie; no worker outliving a
# killed parent; a Ctrl-C at the wrong moment costs no traceback; odd sizes and odd exceptions are handled.
CHILD = Path(__file__).with_name("pool_child.py")


def _pid_unless_3(x: int) -> int:
    if x == 3:
        time.sleep(0.2)  # the other worker is busy or idle, not yet told to stop: the pool must kill it
        raise ValueError("chunk 3 is bad")
    return os.getpid()


def test_workers_are_reaped_when_the_pool_raises_not_left_as_zombies() -> None:
    """A killed worker that nobody waits for stays a zombie (a process-table entry) until its parent exits; a
    long session (a notebook running many evaluations) would pile them up. Each worker must be waited for:
    waitpid on it then finds no child of ours (ChildProcessError), which a zombie is not."""
    pids: set[int] = set()
    with pytest.raises(ValueError, match="chunk 3 is bad"):
        map_chunks(_pid_unless_3, list(range(8)), 2, lambda ch, r: pids.add(r), mp_context="fork")
    assert len(pids) == 2  # chunks 0 and 1, one per worker, came back before chunk 3 was handed out
    for pid in pids:
        try:
            got = os.waitpid(pid, os.WNOHANG)  # a zombie, or one still dying: reaped here, and a failure
        except ChildProcessError:
            continue
        pytest.fail(f"worker {pid} was not reaped by the pool (waitpid gave {got})")


def _env() -> dict[str, str]:
    root = str(Path(__file__).resolve().parents[1])
    return {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}


@pytest.mark.skipif(not HAS_PROC or not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_workers_holding_the_gil_die_with_a_killed_parent(tmp_path) -> None:
    """kill -9 of the parent runs no cleanup. A worker deep in compiled code that holds the GIL (a numba
    kernel) cannot run its parent-watch thread; only the kernel's parent-death signal ends it. Without it the
    workers here would run on for their ten minutes."""
    proc = subprocess.Popen(
        [sys.executable, str(CHILD), "hold", str(tmp_path)],
        env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + 120  # start-up: two spawned interpreters' imports on a loaded machine
        while len(workers) < 2 and time.monotonic() < deadline and proc.poll() is None:
            workers = {int(p.stem) for p in tmp_path.glob("*.pid")}
            time.sleep(0.05)
        assert len(workers) == 2, f"the workers did not start (parent status {proc.poll()})"
        proc.kill()
        proc.wait()
        left = wait_gone(workers, 30.0)
        assert not left, f"workers {sorted(left)} outlived their parent's SIGKILL"
    finally:
        kill_all(workers | descendants(proc.pid))
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.skipif(not HAS_PROC, reason="Linux signal semantics (blocked signals stay pending across exec)")
def test_a_ctrl_c_pending_at_worker_start_up_is_dropped_without_a_traceback() -> None:
    """A Ctrl-C that lands while a worker imports waits, blocked, until the worker starts; the worker must drop
    it (the parent alone acts on Ctrl-C), not raise KeyboardInterrupt with a traceback. Here the parent does
    not get one, so the run finishes: every result, no traceback, status 0. In a fresh interpreter, where the
    spawn resource tracker is not yet running (it unblocks SIGINT in the parent when it starts)."""
    res = subprocess.run(
        [sys.executable, str(CHILD), "pending-ctrl-c"], env=_env(), capture_output=True, text=True, timeout=300
    )
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr[-3000:]
    assert json.loads(res.stdout) == [[i, i * i] for i in range(6)]


def test_more_workers_than_chunks() -> None:
    """``eval --workers 8`` with 2 deals: as many workers as chunks start, and every chunk comes back once."""
    got: list[tuple[int, int]] = []
    map_chunks(_square, [5, 6], 4, lambda ch, r: got.append((ch, r[1])), mp_context="fork")
    assert sorted(got) == [(5, 25), (6, 36)]


class _Unpicklable(Exception):
    def __init__(self) -> None:
        super().__init__("holds a lock")
        self.lock = threading.Lock()  # cannot be pickled: the worker cannot send this exception as it is


def _raises_unpicklable(x: int) -> int:
    raise _Unpicklable


def test_an_exception_that_cannot_be_pickled_comes_back_as_its_text() -> None:
    """A chunk's exception the pipe cannot carry still reaches the parent, named, with the worker's traceback;
    not a WorkerDied that hides it."""
    with pytest.raises(RuntimeError, match="_Unpicklable: holds a lock") as exc:
        map_chunks(_raises_unpicklable, [1, 2], 2, lambda ch, r: None, mp_context="fork")
    assert "_raises_unpicklable" in str(exc.value.__cause__)
