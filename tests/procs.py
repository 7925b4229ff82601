"""Helpers for the shutdown tests: run a ``bobshat`` command, wait until its worker pool is up, signal it,
and see what of its process tree is still alive (read from /proc, so Linux only)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
HAS_PROC = Path("/proc/self/stat").exists()
# The child starts with SIGINT at its default whatever this process inherited: a test run in the background
# of a script (`pytest &`) has SIGINT ignored, Python keeps an inherited SIG_IGN, and the command would then
# ignore the Ctrl-C the test sends (it did: "assert 0 == 130", the run went to its end).
_SIGINT_DEFAULT = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])"
)


def table() -> dict[int, int]:
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


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid``."""
    tab = table()
    found, frontier = set(), {pid}
    while frontier:
        frontier = {c for c, p in tab.items() if p in frontier} - found
        found |= frontier
    return found


def alive(pids: set[int]) -> set[int]:
    return pids & set(table())


def _mask(pid: int, field: str) -> int:
    """A signal mask line of /proc/PID/status (SigIgn, SigCgt) as an int; 0 when the process is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith(field + ":")), 16)


def has(mask: int, sig: int) -> bool:
    return bool(mask & (1 << (sig - 1)))


def workers_of(pid: int) -> set[int]:
    """The pool's worker processes below ``pid`` (multiprocessing's spawned children, not its resource tracker)."""
    found = set()
    for kid in descendants(pid):
        try:
            cmd = Path(f"/proc/{kid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"spawn_main" in cmd:
            found.add(kid)
    return found


def pool_ready(pid: int, workers: int, how: str) -> bool:
    """The readiness the tests wait for, read from the outside instead of guessed with a sleep.

    ``workers`` worker processes run. For a Ctrl-C, also: each worker ignores
    SIGINT, and the parent takes it as KeyboardInterrupt (Python's handler,
    not the ignore of the workers' start nor one inherited).
    """
    kids = workers_of(pid)
    if len(kids) < workers:
        return False
    if how != "Ctrl-C":
        return True
    ign, cgt = _mask(pid, "SigIgn"), _mask(pid, "SigCgt")
    if not has(cgt, signal.SIGINT) or has(ign, signal.SIGINT):
        return False
    return all(has(_mask(k, "SigIgn"), signal.SIGINT) for k in kids)


def start(args: list[str], cwd: Path, **env_vars: str) -> subprocess.Popen:
    """``bobshat ARGS`` in its own session (so a Ctrl-C to its group reaches it alone, as in a terminal).

    Its stdout and stderr go to temporary files, not pipes: a worker left
    running would hold a pipe open, and reading it would then wait for that
    worker instead of the command.
    """
    env = {**os.environ, "PYTHONPATH": str(ROOT), **env_vars}
    argv = [sys.executable, "-c", _SIGINT_DEFAULT, "-m", "bobshat.cli", *args]
    out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=err, start_new_session=True)
    proc.stdout_file, proc.stderr_file = out, err  # type: ignore[attr-defined]
    return proc


def _stderr(proc: subprocess.Popen) -> str:
    f = proc.stderr_file  # type: ignore[attr-defined]
    f.seek(0)
    return f.read().decode(errors="replace")


def cmdlines(pids: set[int]) -> dict[int, bytes]:
    """pid -> command line (as the process shows it: Ray's set their own titles) of those still alive."""
    out = {}
    for pid in pids:
        try:
            out[pid] = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            pass
    return out


def signal_when_ready(
    proc: subprocess.Popen, how: str, workers: int = 2, ready: Callable[[int], bool] | None = None
) -> tuple[int | None, str, set[int]]:
    """Wait for the pool (:func:`pool_ready`, or ``ready(pid)``), send ``how`` (SIGTERM, Ctrl-C to the group,
    SIGKILL), wait for the command to end; returns its status, its stderr and every process it had below it."""
    deadline = time.monotonic() + 240  # start-up: imports and kernel compilation on a loaded machine
    while not (ready(proc.pid) if ready else pool_ready(proc.pid, workers, how)):
        if proc.poll() is not None:
            raise AssertionError(f"ended before its pool was up ({proc.returncode}): {_stderr(proc)[-2000:]}")
        if time.monotonic() > deadline:
            kill_all(descendants(proc.pid))
            raise AssertionError(f"the worker pool did not come up: {_stderr(proc)[-2000:]}")
        time.sleep(0.1)
    kids = descendants(proc.pid)
    if how == "SIGTERM":
        proc.send_signal(signal.SIGTERM)
    elif how == "Ctrl-C":
        os.killpg(proc.pid, signal.SIGINT)  # a terminal sends it to every process of the group
    else:
        proc.kill()
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        return None, _stderr(proc), kids
    return proc.returncode, _stderr(proc), kids


def assert_ended_as_asked(command: str, how: str, status: int | None, err: str) -> None:
    """The exit a signal must give ``bobshat COMMAND``: SIGTERM 143 without a traceback, Ctrl-C 130 with
    one line (``bobshat COMMAND: interrupted``); ``status`` None means it was still running."""
    assert status is not None, f"still running 60 s after {how}: {err[-2000:]}"
    if how == "SIGTERM":
        assert status == 143 and "Traceback" not in err, err
    elif how == "Ctrl-C":
        assert status == 130, err
        assert err.strip().splitlines() == [f"bobshat {command}: interrupted"], err


def wait_gone(pids: set[int], seconds: float = 20.0) -> set[int]:
    """The processes of ``pids`` still alive after waiting up to ``seconds`` for them to end."""
    deadline = time.monotonic() + seconds
    while alive(pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return alive(pids)


def kill_all(pids: set[int]) -> None:
    """Leave nothing behind, even when a test fails."""
    for pid in alive(pids):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


@contextlib.contextmanager
def ray_tmpdir() -> Iterator[str]:
    """A fresh RAY_TMPDIR for Ray started within the block (this process and its children), removed after.

    Short and under /tmp: Ray's socket paths under it must fit in 107 bytes
    (pytest's tmp_path does not). Each test session's Ray lives in its own,
    so another Ray on the machine is neither seen nor disturbed.
    """
    path = tempfile.mkdtemp(prefix="bst", dir="/tmp")
    old = os.environ.get("RAY_TMPDIR")
    os.environ["RAY_TMPDIR"] = path
    try:
        yield path
    finally:
        if old is None:
            os.environ.pop("RAY_TMPDIR", None)
        else:
            os.environ["RAY_TMPDIR"] = old
        shutil.rmtree(path, ignore_errors=True)


def run_here(argv: list[str], capsys: Any) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of ``bobshat ARGV`` run in this process (argparse's exits too)."""
    from bobshat.cli import main

    try:
        code = main(argv)
    except SystemExit as exc:
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err
