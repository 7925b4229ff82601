"""Worker processes for chunked jobs: the one driver that ``bobshat eval`` and ``bobshat bids`` share.

:func:`run_chunks` runs a job here or over workers; :func:`map_chunks` is the
worker pool under it.

A job is a list of chunks and a module-level function that turns a chunk
into a result (a pure function of the chunk, so results do not depend on
which worker ran it). :func:`map_chunks` runs the chunks over N worker
processes and hands each result to the caller as it lands; the caller orders
them (by chunk index), so the numbers never depend on the order.

How it ends, whatever ends it
    - Ctrl-C: a terminal sends SIGINT to every process of its group. The
      workers never act on it: they start with SIGINT blocked and ignore it
      before they unblock it (:func:`_sigint_deferred`); the parent gets
      KeyboardInterrupt, kills its workers and re-raises, so the command
      prints one line and ends with status 130 (``bobshat.cli.main``,
      which defers a Ctrl-C past a numba compile: :func:`sigint_after_compiles`).
      One that comes while the workers start is taken once they have.
    - SIGTERM: the parent turns it into ``SystemExit(143)`` while the pool
      runs (:func:`sigterm_as_exit`), kills its workers, and ends with status
      143, the shell's status for SIGTERM, silently, as a terminated
      program does. One that comes while the workers start waits until
      each has its start-up data (:func:`_held`).
    - SIGKILL of the parent, or any death that runs no cleanup: each worker
      asks the kernel to kill it when its parent dies (Linux
      ``PR_SET_PDEATHSIG``), and on every system a thread of the worker
      checks twice a second that its parent is still there; an idle worker
      also sees its pipe to the parent close. No worker outlives the parent
      by more than about a second.
    - A worker that raises: the parent stops the others and raises the same
      exception (with the worker's traceback as its cause). A worker that
      dies: :class:`WorkerDied`.

Why not ``concurrent.futures.ProcessPoolExecutor``
    Its results arrive through a queue that a background thread reads. A
    worker stopped in the middle of sending a large result leaves that thread
    blocked on a half-read message, and the interpreter joins the thread at
    exit: ``eval --workers 2`` then ignored SIGTERM for minutes with its
    workers gone. Here the parent's main thread reads one pipe per worker and
    nothing waits on a dead worker: a closed pipe is an EOF.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from multiprocessing import get_context
from multiprocessing.connection import Connection, wait
from typing import Any

PARENT_POLL_S = 0.5  # how often a worker checks that its parent is still there (where PDEATHSIG is missing)
STOP_WAIT_S = 5.0  # how long a worker told to stop may take to exit before it is killed
_PR_SET_PDEATHSIG = 1  # linux/prctl.h


class WorkerDied(RuntimeError):
    """A worker process ended without a result (killed, out of memory, a crash in compiled code)."""


class _RemoteTraceback(Exception):
    """The worker's traceback, attached as the cause of the exception the parent re-raises."""

    def __init__(self, tb: str) -> None:
        super().__init__(tb)
        self.tb = tb

    def __str__(self) -> str:
        return self.tb


def map_chunks(
    fn: Callable[[Any], Any],
    chunks: Sequence[Any],
    workers: int,
    on_result: Callable[[Any, Any], None],
    *,
    mp_context: str = "spawn",
) -> None:
    """Run ``fn(chunk)`` for every chunk over ``workers`` processes; ``on_result(chunk, result)`` as each lands.

    ``fn`` must be a module-level function and the chunks picklable (with
    ``spawn``, the default, workers import ``fn``'s module afresh; ``fork``
    also sees what was registered at run time, for tests). Each worker has
    one chunk at a time and gets the next as it returns one. See the module
    docstring for Ctrl-C, SIGTERM, a dead parent and a failed chunk.
    """
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    todo = list(chunks)
    if not todo:
        return
    ctx: Any = get_context(mp_context)  # a start method's context (its Process class is not in the stubs)
    live: list[_Worker] = []
    with sigterm_as_exit():
        try:
            # The workers start here, with SIGINT blocked (:func:`_sigint_deferred`); a Ctrl-C or a SIGTERM
            # to this process waits until each has its start-up data (:func:`_held`), then acts.
            with _sigint_deferred(mp_context), _held(signal.SIGTERM):
                for w in range(min(workers, len(todo))):
                    parent_end, child_end = ctx.Pipe(duplex=True)
                    proc = ctx.Process(
                        target=_worker_main,
                        args=(child_end, fn, os.getpid()),
                        name=f"bobshat-worker-{w}",
                        daemon=True,  # multiprocessing's exit handler ends them too
                    )
                    proc.start()
                    child_end.close()  # the worker's end lives in the worker only: its death is an EOF here
                    live.append(_Worker(proc, parent_end))
            _drive(live, todo, on_result)
            for wk in live:
                wk.stop()
        finally:
            _kill_all(live)


def run_chunks(
    fn: Callable[[Any], Any],
    chunks: Sequence[Any],
    workers: int,
    on_result: Callable[[Any, Any], None],
    *,
    mp_context: str = "spawn",
    here: Callable[[Any], Any] | None = None,
) -> None:
    """Run ``fn(chunk)`` for every chunk, in this process when ``workers`` is 1, else with :func:`map_chunks`.

    ``on_result(chunk, result)`` as each lands (in chunk order here). ``here``:
    what to run in this process instead of ``fn`` (``fn`` with a finer
    progress callback, say; the same numbers). SIGTERM ends either way with
    the callers' cleanup run (:func:`sigterm_as_exit`): eval and bids share
    this, so the two commands end alike.
    """
    with sigterm_as_exit():
        if workers == 1:
            for ch in chunks:
                on_result(ch, (here or fn)(ch))
        else:
            map_chunks(fn, chunks, workers, on_result, mp_context=mp_context)


class _Worker:
    """The parent's handle on one worker: its process, its pipe and the chunk it is playing."""

    def __init__(self, proc: Any, conn: Connection) -> None:
        self.proc, self.conn = proc, conn
        self.chunk: Any = None
        self.busy = False

    def give(self, chunk: Any) -> None:
        self.chunk, self.busy = chunk, True
        self.conn.send(chunk)

    def stop(self) -> None:
        """Tell an idle worker to exit and wait a moment for it (killed after :data:`STOP_WAIT_S`)."""
        with contextlib.suppress(OSError):
            self.conn.send(None)
        self.proc.join(STOP_WAIT_S)


def _drive(live: list[_Worker], todo: list[Any], on_result: Callable[[Any, Any], None]) -> None:
    """Hand out chunks, one per idle worker, until every result is in (main thread: signals interrupt it)."""
    queue = iter(todo)
    for wk in live:
        wk.give(next(queue))
    busy = list(live)
    while busy:
        ready = wait([wk.conn for wk in busy] + [wk.proc.sentinel for wk in busy])
        for wk in list(busy):
            if wk.conn not in ready and wk.proc.sentinel not in ready:
                continue
            payload: Any  # the chunk's result, ("error", (exception, traceback)) or ("died", None)
            try:
                kind, payload = wk.conn.recv() if wk.conn.poll() else ("died", None)
            except (EOFError, OSError):
                kind, payload = "died", None
            if kind == "died":
                wk.proc.join(1.0)
                raise WorkerDied(
                    f"a worker process (pid {wk.proc.pid}) ended without a result "
                    f"(exit code {wk.proc.exitcode}); killed, or out of memory?"
                )
            if kind == "error":
                exc, tb = payload
                exc.__cause__ = _RemoteTraceback(tb)
                raise exc
            chunk = wk.chunk
            wk.busy = False
            nxt = next(queue, _DONE)
            if nxt is _DONE:
                busy.remove(wk)
            else:
                wk.give(nxt)
            on_result(chunk, payload)


_DONE = object()


def _kill_all(live: list[_Worker]) -> None:
    """SIGKILL every worker still running and reap it (a worker may be deep in compiled code: no polite stop)."""
    for wk in live:
        if wk.proc.is_alive():
            with contextlib.suppress(OSError):
                wk.proc.kill()
    for wk in live:
        wk.proc.join(STOP_WAIT_S)
        with contextlib.suppress(OSError):
            wk.conn.close()


# ==========================================================================
# The worker's side
def _worker_main(conn: Connection, fn: Callable[[Any], Any], parent_pid: int) -> None:
    """A worker's life: tie it to the parent, then play chunks until told to stop or the pipe closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's; one that came during start-up is dropped
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # blocked from the start (_sigint_deferred)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a forked worker inherits the parent's handler: drop it
    die_with_parent(parent_pid)
    while True:
        try:
            chunk = conn.recv()
        except (EOFError, OSError):  # the parent is gone
            return
        if chunk is None:
            return
        try:
            msg: tuple[str, Any] = ("ok", fn(chunk))
        except BaseException as err:  # every failure goes back to the parent, which re-raises it
            msg = ("error", (_picklable(err), traceback.format_exc()))
        try:
            conn.send(msg)
        except (EOFError, OSError):
            return
        except Exception as err:  # a result that cannot be pickled: say so
            conn.send(("error", (_picklable(err), traceback.format_exc())))


def _picklable(err: BaseException) -> BaseException:
    """``err`` if it survives pickling, else a RuntimeError with its text."""
    import pickle

    try:
        pickle.loads(pickle.dumps(err))
    except Exception:
        return RuntimeError(f"{type(err).__name__}: {err}")
    return err


def die_with_parent(parent_pid: int) -> None:
    """End this process when ``parent_pid`` (its parent) dies, however the parent ends.

    On Linux the kernel delivers SIGKILL the moment the parent dies
    (``prctl(PR_SET_PDEATHSIG)``): it works even while this process runs
    compiled code that holds the GIL. Everywhere, a daemon thread also checks
    every :data:`PARENT_POLL_S` that the parent is still the parent. If the
    parent died before this call, the process exits at once.
    """
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError, TypeError):
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    if os.getppid() != parent_pid:  # died while this process started
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(PARENT_POLL_S)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


# ==========================================================================
# Signals in the parent
@contextlib.contextmanager
def _sigint_deferred(mp_context: str) -> Iterator[None]:
    """Within the block (main thread only), SIGINT is blocked, so processes started here start with it blocked;
    one sent to this process is taken at the block's end (:func:`_held`).

    A spawned worker spends its first seconds importing (numpy, numba, the
    agents); a Ctrl-C then would print a KeyboardInterrupt traceback from
    every worker. A blocked signal stays blocked across fork and exec (the
    stdlib's resource tracker starts the same way, bpo-33613), so a Ctrl-C
    to the process group only waits in each worker until
    :func:`_worker_main` ignores SIGINT, which drops it. The parent used to
    ignore SIGINT for the start instead, and a Ctrl-C in those milliseconds
    was lost: the command ran on.

    The resource tracker of ``spawn`` unblocks SIGINT after starting itself
    (the first start of a process), so it is started before the block.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    if mp_context in ("spawn", "forkserver"):
        from multiprocessing import resource_tracker

        resource_tracker.ensure_running()
    with _held(signal.SIGINT):
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            yield
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)  # a pending SIGINT runs _held's handler here


@contextlib.contextmanager
def _held(signum: int) -> Iterator[None]:
    """Within the block (main thread only), ``signum`` is noted, not acted on; it is raised again at its end.

    A spawned worker reads its start-up data from a pipe the parent writes
    just after it starts the process. A SIGTERM raised as ``SystemExit`` in
    between closed that pipe empty: the worker printed an ``EOFError``
    traceback, and, not yet in the pool's list, was not killed with the
    others (seen in CI, ``bids --workers 2``). Held here, the signal acts
    once every worker of the block has started; the caller's handler then
    runs as usual.
    """
    if threading.current_thread() is not threading.main_thread() or not callable(signal.getsignal(signum)):
        yield  # no Python handler to defer: the default ends the process, SIG_IGN ignores it
        return
    came: list[int] = []
    old = signal.signal(signum, lambda sig, frame: came.append(sig))
    try:
        yield
    finally:
        signal.signal(signum, old)
        if came:
            signal.raise_signal(signum)


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Ctrl-C and SIGTERM held within the block (:func:`_held`): each acts once the block is done.

    For a step that must not stop half-way (``bobshat train``'s update: an
    interrupt then saves the state as the update left it, never a network
    updated on half a batch). Where SIGTERM has no Python handler (no
    :func:`sigterm_as_exit` around the block) it still ends the process at once.
    """
    with _held(signal.SIGINT), _held(signal.SIGTERM):
        yield


def _numba_compiling() -> Any:
    """numba's compiler lock if this thread holds it (a kernel is being compiled), else None.

    A SIGTERM raised as ``SystemExit`` inside numba's compiler (in llvmlite)
    leaves half-built objects whose ``__del__`` prints "Exception ignored ...
    Traceback" as the process ends: found when a test's SIGTERM came during a
    cold-cache compile. numba is not imported here if nothing has imported it.
    """
    mod = sys.modules.get("numba.core.compiler_lock")
    lock = getattr(mod, "global_compiler_lock", None)
    return lock if lock is not None and lock.is_locked() else None


def _resend_after(lock: Any, signum: int) -> None:
    """Wait for ``lock`` (numba's compiler lock) to be free, then send ``signum`` to the main thread again."""
    with lock:
        pass
    main = threading.main_thread().ident
    assert main is not None  # the main thread has started: this runs in another
    signal.pthread_kill(main, signum)


def caused_by_interrupt(err: BaseException) -> bool:
    """Whether ``err`` was raised while a Ctrl-C was being handled (a ``KeyboardInterrupt`` in its chain).

    A KeyboardInterrupt raised inside code that turns errors into its own
    reaches the command as that other exception: torch.save's zip writer
    (RuntimeError) or a numba dispatcher (SystemError, "returned a result
    with an exception set"). Found by Ctrl-C at chosen moments of ``python -m
    train.ppo``: 2 of 5 tries printed such a traceback with exit status 1.
    The commands report these as the interrupt they are (status 130).
    """
    seen: set[int] = set()
    cur: BaseException | None = err
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, KeyboardInterrupt):
            return True
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return False


@contextlib.contextmanager
def sigterm_as_exit(replace: bool = False) -> Iterator[None]:
    """Within the block, SIGTERM raises ``SystemExit(143)`` in the main thread, so cleanup code runs.

    Python's default for SIGTERM ends the process on the spot: worker
    processes, temporary files and a Ray it started would be left behind.
    Outside the main thread (where signal handlers cannot be set), and where
    the caller already handles (or ignores) SIGTERM, it changes nothing,
    unless ``replace`` (a library set its own handler: ``ray.init`` does).
    A SIGTERM that comes while numba compiles a kernel in this thread takes
    effect when the compile is done (see :func:`_numba_compiling`).
    """

    def act(signum: int) -> None:
        raise SystemExit(128 + signum)

    with _after_compiles(signal.SIGTERM, (signal.SIG_DFL, None), act, replace):
        yield


@contextlib.contextmanager
def sigint_after_compiles() -> Iterator[None]:
    """Within the block, Ctrl-C (SIGINT) raises ``KeyboardInterrupt`` as usual, but never inside a numba compile.

    A KeyboardInterrupt raised inside numba's compiler (in an llvmlite
    callback) printed "Exception ignored ... KeyboardInterrupt" and then a
    RuntimeError traceback ("no compiled object yet"), exit status 1: a
    Ctrl-C during a cold-cache compile. Here it comes when the compile is
    done, as it does for SIGTERM (:func:`sigterm_as_exit`), so the command
    ends with its one line and status 130 (``bobshat.cli.main``).
    Changes nothing where SIGINT is not Python's default handler (ignored in
    a background job, or the caller's own), or outside the main thread.
    """

    def act(signum: int) -> None:
        raise KeyboardInterrupt

    with _after_compiles(signal.SIGINT, (signal.default_int_handler,), act, False):
        yield


@contextlib.contextmanager
def _after_compiles(
    signum: int, defaults: tuple[Any, ...], act: Callable[[int], None], replace: bool
) -> Iterator[None]:
    """Within the block, ``signum`` runs ``act(signum)`` in the main thread, deferred past a numba compile.

    The one mechanism of :func:`sigterm_as_exit` and :func:`sigint_after_compiles`.
    A signal that comes while this thread holds numba's compiler lock
    (:func:`_numba_compiling`) is sent again once the lock is free. Only
    where the handler now is one of ``defaults`` (else an outer block or the
    caller has it), unless ``replace``; nothing outside the main thread.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    if not replace and signal.getsignal(signum) not in defaults:
        yield
        return

    def handler(sig: int, frame: Any) -> None:
        lock = _numba_compiling()
        if lock is not None:  # take the signal again once the compile is done
            threading.Thread(target=_resend_after, args=(lock, sig), daemon=True).start()
            return
        act(sig)

    old = signal.signal(signum, handler)
    try:
        yield
    finally:
        signal.signal(signum, old)
