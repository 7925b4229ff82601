"""A SIGTERM that comes while numba compiles a kernel takes effect when the compile is done.

Found by CI on a fresh clone (a cold numba cache): ``bobshat expert`` got its
SIGTERM inside numba's compiler, the ``SystemExit`` raised there left a
half-built llvmlite object, and its ``__del__`` printed "Exception ignored ...
Traceback" as the process ended (exit status 143, but a traceback on stderr).
"""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest
from numba.core.compiler_lock import global_compiler_lock

from train.pool import sigterm_as_exit


def test_a_sigterm_inside_a_compile_exits_after_it():
    """``replace``: an earlier test (ray.init) may have left its own SIGTERM handler in this process."""
    assert threading.current_thread() is threading.main_thread()
    before = signal.getsignal(signal.SIGTERM)
    reached: list[str] = []
    with pytest.raises(SystemExit) as got:
        with sigterm_as_exit(replace=True):
            with global_compiler_lock:  # as numba holds it while it compiles
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.3)  # the handler runs in here: it must not raise inside the compile
                reached.append("compile done")
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:  # the SIGTERM is taken again once the lock is free
                time.sleep(0.05)
            reached.append("no exit")
    assert got.value.code == 143
    assert reached == ["compile done"]
    assert not global_compiler_lock.is_locked()
    assert signal.getsignal(signal.SIGTERM) is before


def test_a_sigterm_outside_a_compile_exits_at_once():
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(SystemExit) as got:
        with sigterm_as_exit(replace=True):
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(10)
    assert got.value.code == 143
    assert signal.getsignal(signal.SIGTERM) is before
