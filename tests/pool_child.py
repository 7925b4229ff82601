"""A parent process for the worker-pool tests that need a fresh interpreter (tests/test_pool.py).

``python tests/pool_child.py pending-ctrl-c``: every worker starts with a Ctrl-C pending (sent while SIGINT is
still blocked, as one that lands during the worker's imports is), and the parent does not take one; the run
must finish with every result and print no traceback. In a fresh interpreter, so that the spawn resource
tracker is not running yet (it unblocks SIGINT in the parent as it starts: train/runtime/pool.py's _sigint_deferred).

``python tests/pool_child.py hold DIR``: two workers each write their pid to DIR, then hold the GIL in a
C call for ten minutes (as a numba kernel does): only the kernel's parent-death signal can end them then.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import sys
from pathlib import Path

import train.runtime.pool as pool

_REAL_WORKER_MAIN = pool._worker_main


def square(x: int) -> int:
    return x * x


def pending_ctrl_c_worker(conn, fn, parent_pid: int) -> None:  # type: ignore[no-untyped-def]
    """The pool's worker with a Ctrl-C pending as it starts (SIGINT is blocked here until the worker drops it)."""
    os.kill(os.getpid(), signal.SIGINT)
    _REAL_WORKER_MAIN(conn, fn, parent_pid)


def hold_the_gil(folder: str) -> int:
    """Write this worker's pid, then sleep ten minutes in libc without releasing the GIL."""
    Path(folder, f"{os.getpid()}.pid").write_text(str(os.getpid()))
    ctypes.PyDLL(None).sleep(600)
    return os.getpid()


def main(argv: list[str]) -> int:
    # the parent takes a Ctrl-C as Python does (whatever the test runner inherited: a background job ignores it)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if argv[0] == "pending-ctrl-c":
        pool._worker_main = pending_ctrl_c_worker  # what map_chunks starts, pickled by name (this module's)
        got: list[tuple[int, int]] = []
        pool.map_chunks(square, list(range(6)), 2, lambda ch, r: got.append((ch, r)), mp_context="spawn")
        print(json.dumps(sorted(got)))
        return 0
    if argv[0] == "hold":
        pool.map_chunks(hold_the_gil, [argv[1], argv[1]], 2, lambda ch, r: None, mp_context="spawn")
        return 0
    raise SystemExit(f"unknown mode {argv[0]!r}")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))  # the workers import this module by its name
    import pool_child  # the same functions under their importable name (not __main__'s)

    sys.exit(pool_child.main(sys.argv[1:]))
