"""A SIGTERM or a Ctrl-C (SIGINT) that comes while numba compiles a kernel takes effect when the compile is done.

Found by CI on a fresh clone (a cold numba cache): ``bobshat expert`` got its
SIGTERM inside numba's compiler, the ``SystemExit`` raised there left a
half-built llvmlite object, and its ``__del__`` printed "Exception ignored ...
Traceback" as the process ended (exit status 143, but a traceback on stderr).
A Ctrl-C during a cold-cache ``bobshat simulate`` did worse: "Exception
ignored ... KeyboardInterrupt", then a RuntimeError traceback and status 1.
"""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest
from numba.core.compiler_lock import global_compiler_lock

from train.runtime.pool import sigint_after_compiles, sigterm_as_exit


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


@pytest.fixture
def default_sigint():
    """Python's own SIGINT handler for the test (pytest keeps it, but a plugin may not), restored after."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield before
    signal.signal(signal.SIGINT, before)


def test_a_ctrl_c_inside_a_compile_interrupts_after_it(default_sigint):
    reached: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        with sigint_after_compiles():
            with global_compiler_lock:  # as numba holds it while it compiles
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.3)  # the handler runs in here: it must not raise inside the compile
                reached.append("compile done")
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:  # the Ctrl-C is taken again once the lock is free
                time.sleep(0.05)
            reached.append("no interrupt")
    assert reached == ["compile done"]
    assert not global_compiler_lock.is_locked()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_ctrl_c_outside_a_compile_interrupts_at_once(default_sigint):
    with pytest.raises(KeyboardInterrupt):
        with sigint_after_compiles():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(10)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_an_ignored_ctrl_c_stays_ignored(default_sigint):
    """A command started in the background (SIGINT ignored) must not start taking Ctrl-C."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with sigint_after_compiles():
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN


def test_the_cli_takes_a_ctrl_c_after_the_compile(default_sigint, monkeypatch, capsys):
    """``bobshat``'s main runs every command so: one line, status 130, the compile finished."""
    from bobshat import cli

    reached: list[str] = []

    def compiling(args):
        with global_compiler_lock:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.3)
            reached.append("compile done")
        time.sleep(10)
        return 0

    monkeypatch.setattr(cli, "cmd_simulate", compiling)
    assert cli.main(["simulate"]) == 130
    assert reached == ["compile done"]
    assert capsys.readouterr().err == "\nbobshat simulate: interrupted\n"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def _torch_save_interrupted(args):
    """What torch.save did with a Ctrl-C in its zip writer: its own error, raised while handling it."""
    try:
        raise KeyboardInterrupt
    except KeyboardInterrupt:
        raise RuntimeError("[enforce fail at inline_container.cc] . unexpected pos") from None


def _numba_call_interrupted(args):
    """What a numba dispatcher did with a Ctrl-C during a call: SystemError, the interrupt as its context."""
    try:
        raise KeyboardInterrupt
    except KeyboardInterrupt:
        raise SystemError("CPUDispatcher(<function _take>) returned a result with an exception set")  # noqa: B904


@pytest.mark.parametrize("command", [_torch_save_interrupted, _numba_call_interrupted])
def test_a_ctrl_c_that_a_library_turned_into_its_own_error_is_an_interrupt(monkeypatch, capsys, command):
    """Ctrl-C at chosen moments of a training run gave these tracebacks (exit 1) in 2 of 5 tries."""
    from bobshat import cli

    monkeypatch.setattr(cli, "cmd_simulate", command)
    assert cli.main(["simulate"]) == 130
    assert capsys.readouterr().err == "\nbobshat simulate: interrupted\n"


def test_other_errors_are_not_taken_for_an_interrupt(monkeypatch):
    from bobshat import cli

    def broken(args):
        raise RuntimeError("a real fault")

    monkeypatch.setattr(cli, "cmd_simulate", broken)
    with pytest.raises(RuntimeError, match="a real fault"):
        cli.main(["simulate"])
