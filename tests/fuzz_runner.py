"""Runs ``bobshat`` commands for tests/test_fuzz_cli.py: one warm process, a forked child per command.

A fresh ``bobshat`` process costs seconds (numpy, numba's kernels, torch); a
fuzz suite runs hundreds of commands. So this script imports all that once,
then reads one JSON request per line on stdin and runs each in a forked child
that is, for the command, a fresh process: its own folder (``cwd``), stdin
from /dev/null, stdout and stderr to files, a memory limit (a command that
tries to allocate 500 GiB gets a MemoryError, not the machine's swap), its own
process group (killed whole on timeout, workers included). The child runs
``bobshat.cli.main(argv)`` as the console script would: an uncaught
exception prints its traceback and exits 1, exactly what a user would see.

``stub: true`` checks arguments without doing the work: the first call into
the work itself (playing games, starting worker processes or Ray, building
the network, the benchmark's measurements, the web server's loop) ends the
child with status 0 and ``accepted`` set; everything before it (parsing, the
commands' checks, reading configs and checkpoints, checking outputs) runs for
real. Each FIFO named in ``fifos`` is held open read-write and drained, so a
command that writes to it does not block.

Reply per request: ``{"rc", "stdout", "stderr", "timed_out", "accepted"}``.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import signal
import sys
import tempfile
import time
import traceback
from typing import Any

ACCEPTED = "fuzz-runner: the command accepted its arguments and began its work"
MEMORY_HEADROOM = 4 * 2**30  # bytes of address space a child may add to the warm parent's


class WorkStarted(BaseException):  # BaseException: no `except Exception` in the command catches it
    """Raised by a stub: the arguments were accepted and the work would begin here."""


# module -> attributes (``Class.method`` allowed) where a command's work begins
WORK = {
    "agents.arena": ["play_games"],  # simulate, eval, play's bots ... : games are played
    "concurrent.futures": ["ProcessPoolExecutor.__init__"],  # worker processes (eval, bids --workers)
    "multiprocessing.pool": ["Pool.__init__"],
    "train.runtime.distributed": ["ray_session", "preflight", "run_chunks"],  # Ray
    "train.ppo.collector": ["RolloutCollector.__init__"],  # train and exploit: net, optimizer, pool built
    "train.ppo.workers": ["RolloutWorkers.__init__"],  # the same with Ray actors
    "train.bids.benchmark": ["_play_chunk"],  # the bidding benchmark's games (measure checks its arguments first)
    "train.imitate": ["build_sets"],  # imitate: the records are replayed into decisions
    "train.expert": ["label_round"],  # expert: options, outputs, the policy checked, TensorBoard opened; play begins
    "train.average": ["write_checkpoint"],  # average: inputs read and checked, the mean taken; the write begins
    "benchmarks.throughput": ["run"],  # the measurements
    "uvicorn": ["Server.run"],  # serve: the server's loop
}


def _stub(*args: Any, **kwargs: Any) -> Any:
    raise WorkStarted


def install_stubs() -> list[tuple[Any, str, Any]]:
    """Put the stubs in place; what they replaced, for restore_stubs."""
    import importlib

    saved = []
    for modname, attrs in WORK.items():
        mod = importlib.import_module(modname)
        for attr in attrs:
            owner, _, name = attr.rpartition(".")
            target = getattr(mod, owner) if owner else mod
            saved.append((target, name, getattr(target, name)))
            setattr(target, name, _stub)
    return saved


def restore_stubs(saved: list[tuple[Any, str, Any]]) -> None:
    for target, name, value in reversed(saved):
        setattr(target, name, value)


def warm() -> None:
    """Import what the commands use and compile the kernels once, here, for every child to inherit."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch

    torch.set_num_threads(1)
    import importlib

    for name in (
        "bobshat.cli",
        "agents",
        "train.evaluate",
        "train.bids",
        "train.exploit",
        "train.imitate",
        "train.expert",
        "torch.utils.tensorboard",  # expert opens its TensorBoard writer before its work
        "train.ppo.run",
        "benchmarks.throughput",
        "bobshat.web.app",
        "uvicorn",
        *WORK,
    ):
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    with contextlib.suppress(ImportError):  # eval --plot and bids --plot draw with it
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot  # PLC0415
    from bobshat.cli import main

    with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stdout(io.StringIO()):
        cwd = os.getcwd()
        os.chdir(tmp)
        try:
            main(["simulate", "--games", "2", "--hands", "1"])
            main(["simulate", "--games", "2", "--game", "oh_hell"])
            main(["bench", "--quick", "--no-peers", "--quiet", "--batches", "1", "--reps", "1", "--seconds", "0"])
            saved = install_stubs()  # train and exploit up to their rollouts: imports, kernels, first torch calls
            try:
                for argv in (
                    ["train", "--progress", "false", "--num-envs", "2", "--runs-dir", "runs"],
                    ["exploit", "--target", "random", "--runs-dir", "runs"],
                    ["eval", "--deals", "1", "--quiet"],
                    ["bids", "--bidders", "random", "--deals", "1", "--quiet"],
                    ["serve", "--port", "0", "--records-dir", "served"],
                ):
                    with contextlib.suppress(WorkStarted, Exception):  # best effort: a refusal warms up less
                        main(argv)
            finally:
                restore_stubs(saved)
        finally:
            os.chdir(cwd)


def _address_space() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def _child(req: dict[str, Any], out_fd: int, err_fd: int) -> None:
    code = 1
    try:
        os.setsid()
        os.chdir(req["cwd"])
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(out_fd, 1)
        os.dup2(err_fd, 2)
        limit = _address_space() + MEMORY_HEADROOM
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        from bobshat.cli import main

        if req.get("stub"):
            install_stubs()
        try:
            code = main(req["argv"])
        except SystemExit as err:
            if err.code is None or isinstance(err.code, int):
                code = err.code or 0
            else:
                print(err.code, file=sys.stderr)
                code = 1
        except WorkStarted:
            print(ACCEPTED)
            code = 0
        except BaseException:
            traceback.print_exc()
            code = 1
    finally:
        with contextlib.suppress(BaseException):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code if isinstance(code, int) else 1)


def run_one(req: dict[str, Any]) -> dict[str, Any]:
    fifos = []
    for path in req.get("fifos", ()):
        with contextlib.suppress(OSError):
            fifos.append(os.open(path, os.O_RDWR | os.O_NONBLOCK))
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(req, out.fileno(), err.fileno())
        deadline = time.monotonic() + float(req.get("timeout", 60))
        status, timed_out = None, False
        while status is None:
            done, st = os.waitpid(pid, os.WNOHANG)
            if done:
                status = st
                break
            for fd in fifos:
                with contextlib.suppress(OSError):
                    while os.read(fd, 1 << 16):
                        pass
            if time.monotonic() > deadline:
                timed_out = True
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pid, signal.SIGKILL)
                _, status = os.waitpid(pid, 0)
                break
            time.sleep(0.01)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)  # workers the command left behind
        for fd in fifos:
            os.close(fd)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", "replace")
        stderr = err.read().decode("utf-8", "replace")
    rc = os.waitstatus_to_exitcode(status)
    return {
        "rc": rc,
        "stdout": stdout[-20000:],
        "stderr": stderr[-20000:],
        "timed_out": timed_out,
        "accepted": ACCEPTED in stdout,
    }


def serve() -> None:
    """Read requests on stdin, answer on stdout, one JSON line each (after a line ``ready``)."""
    warm()
    reply = os.fdopen(os.dup(1), "w")
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # nothing else writes into the replies
    reply.write("ready\n")
    reply.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        reply.write(json.dumps(run_one(json.loads(line))) + "\n")
        reply.flush()


if __name__ == "__main__":
    serve()
