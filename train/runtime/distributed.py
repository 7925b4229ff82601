"""Ray: duplicate evaluation spread over a cluster, and the connection both it and training share.

``bobshat eval --ray-address ADDR`` runs the tournament's chunks of deals as
Ray tasks instead of local processes (:func:`run_chunks`);
``bobshat train --rollout-workers N`` runs rollout actors on it.
Nothing here imports Ray at module level: with no Ray address and no rollout
workers, Ray is never imported and the single-process paths are untouched.

Addresses
    ``local`` starts a Ray instance inside this process (the machine's CPUs),
    ``auto`` connects to the cluster this machine belongs to (``ray start``
    wrote its address, or ``RAY_ADDRESS``), ``HOST:PORT`` to the head node's
    GCS port (6379 unless ``ray start --head --port`` said otherwise), and
    ``ray://HOST:PORT`` goes through Ray Client. A remote address is probed
    first, in at most ``PROBE_TIMEOUT_S``: a TCP connection, then the first
    bytes of gRPC (HTTP/2), which Ray's GCS and Ray Client speak. Ray's own
    client retries a dead address for minutes, ignoring SIGTERM
    (docs/results/engineering.md), and hangs as long on a port that answers
    but is not Ray (a web server); the probe refuses both at once. (A cluster
    with TLS, ``RAY_USE_TLS=1``, gets the TCP probe only.)

A Ray this process starts (``local``)
    is private: ``ray.init(address="local")`` with its own temporary folder,
    so it never joins another Ray running on the machine, nor collides with
    one. SIGTERM and Ctrl-C stop it (the session turns SIGTERM into an
    exit); a small reaper process (:data:`_REAPER`) watches this one and, if
    it dies without stopping Ray (SIGKILL), kills the processes it had
    started (Ray's agents outlive a killed driver otherwise) and removes the
    folder.

Errors
    Ray not installed, an address with no cluster behind it, or a cluster
    with too few free CPUs raise :class:`DistributedError` (a ``ValueError``:
    the command line prints it as one line), naming the fix.

Code on the workers
    Workers import ``bobshat_env``, ``agents`` and ``train`` like the driver
    does: on a cluster install the package on every node (or pass a
    ``runtime_env``); agent specs that name files (``ppo:PATH``) need the
    file at the same path on every node.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from train.runtime.pool import sigterm_as_exit

INSTALL = "pip install -e \".[ray]\" (or: pip install 'ray[default]')"
PROBE_TIMEOUT_S = 5.0
RELEASE_WAIT_S = 20.0  # how long CPUs the cluster has but are busy may take to come free (a run that just ended)


class DistributedError(ValueError):
    """Ray is missing, unreachable, or lacks the resources asked for; the message says what to do."""


def import_ray() -> Any:
    """The ``ray`` module, or a :class:`DistributedError` with the install command."""
    try:
        import ray  # optional dependency, imported only when asked for
    except ImportError as err:
        raise DistributedError(f"Ray is not installed ({err}); install it with: {INSTALL}") from None
    return ray


def check_address(address: str) -> str:
    """``address`` as given, after checking its form and, for a remote one, that something answers there."""
    if not isinstance(address, str) or not address.strip():
        raise DistributedError("--ray-address must be local, auto, HOST:PORT or ray://HOST:PORT")
    address = address.strip()
    if address == "local":
        return address
    import_ray()
    target = address[len("ray://") :] if address.startswith("ray://") else address
    if target == "auto":
        try:
            from ray._private.services import canonicalize_bootstrap_address

            target = canonicalize_bootstrap_address("auto") or ""
        except ConnectionError as err:
            raise DistributedError(
                f"--ray-address auto: no running Ray cluster found on this machine ({first_line(err)}); "
                "start one with `ray start --head`, or use --ray-address local"
            ) from None
        except (ImportError, AttributeError):  # a Ray without that helper: let ray.init find it
            return address
    host, sep, port = target.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise DistributedError(f"--ray-address {address!r}: expected local, auto, HOST:PORT or ray://HOST:PORT")
    try:
        speaks_grpc = _probe(host, int(port))
    except OSError as err:
        raise DistributedError(
            f"--ray-address {address}: no Ray cluster answers at {host}:{port} ({err.strerror or err}); "
            "start one with `ray start --head` or check the address"
        ) from None
    if not speaks_grpc:
        raise DistributedError(
            f"--ray-address {address}: {host}:{port} answers but is not Ray (it does not speak Ray's gRPC); "
            "give the head node's GCS port (`ray start --head` prints it, 6379 by default)"
        )
    return address


# The client's start of an HTTP/2 connection (RFC 9113 3.4): the preface, then an empty SETTINGS frame.
_H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
_H2_SETTINGS = 4


def _probe(host: str, port: int) -> bool:
    """Whether ``host:port`` speaks gRPC: it answers the HTTP/2 preface with a SETTINGS frame.

    OSError when nothing accepts a connection there. Bounded by
    :data:`PROBE_TIMEOUT_S` (connect, then the reply). With TLS
    (``RAY_USE_TLS``) the bytes are encrypted: a connection is all it checks.
    """
    with socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S) as sock:
        if os.environ.get("RAY_USE_TLS", "0").lower() in ("1", "true"):
            return True
        deadline = time.monotonic() + PROBE_TIMEOUT_S
        try:
            sock.sendall(_H2_PREFACE)
            head = b""
            while len(head) < 9:  # a frame header: length (3 bytes), type, flags, stream id
                sock.settimeout(max(deadline - time.monotonic(), 0.01))
                got = sock.recv(9 - len(head))
                if not got:
                    return False
                head += got
        except (TimeoutError, ConnectionError):
            return False
        return head[3] == _H2_SETTINGS


def first_line(err: BaseException) -> str:
    """An exception's message as one line (Ray's errors carry whole tracebacks), for a one-line error."""
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


@contextlib.contextmanager
def ray_session(address: str, need_cpus: int = 1, what: str = "this job") -> Iterator[Any]:
    """Connect to Ray (module docstring), check ``need_cpus`` CPUs are free, and disconnect after.

    A Ray already initialized in this process (a test, a notebook) is used
    as it is and left running; otherwise ``local`` starts one with this
    machine's CPUs and stops it at the end, and a cluster address connects
    and disconnects this driver only.
    """
    ray = import_ray()
    owned = False
    stack = contextlib.ExitStack()
    if not ray.is_initialized():
        address = check_address(address)
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "logging_level": logging.WARNING}
        stack.enter_context(sigterm_as_exit())  # SIGTERM: the finally below stops Ray
        try:
            if address == "local":
                temp = stack.enter_context(_private_ray_dir())
                ray.init(address="local", num_cpus=os.cpu_count() or 1, _temp_dir=temp, **kwargs)
            else:
                ray.init(address=address, **kwargs)
            stack.enter_context(sigterm_as_exit(replace=True))  # ray.init set its own (exit status 15)
        except SystemExit as err:  # SIGTERM while Ray started: Ray's handler says 15, the shell's status is 143
            _abandon(ray, stack)
            if err.code == signal.SIGTERM:
                raise SystemExit(128 + signal.SIGTERM) from None
            raise
        except Exception as err:  # Ray raises bare Exception too ("timed out during startup")
            _abandon(ray, stack)
            verb = "start" if address == "local" else "connect to"
            raise DistributedError(f"--ray-address {address}: could not {verb} Ray: {first_line(err)}") from None
        except BaseException:
            _abandon(ray, stack)
            raise
        owned = True
    try:
        free = float(ray.available_resources().get("CPU", 0.0))
        total = float(ray.cluster_resources().get("CPU", 0.0))
        deadline = time.monotonic() + RELEASE_WAIT_S
        while free < need_cpus <= total and time.monotonic() < deadline:  # actors just stopped release them late
            time.sleep(0.25)
            free = float(ray.available_resources().get("CPU", 0.0))
        if free < need_cpus:
            raise DistributedError(
                f"{what}: {need_cpus} free CPU(s) needed, the Ray cluster has {free:g} free of {total:g}; "
                "add nodes (`ray start --address HEAD:PORT` on another machine) or ask for fewer workers"
            )
        yield ray
    finally:
        try:
            if owned:
                ray.shutdown()
        finally:
            stack.close()


def _abandon(ray: Any, stack: contextlib.ExitStack) -> None:
    """After a failed or interrupted ``ray.init``: stop what it started, then the reaper and the folder."""
    with contextlib.suppress(Exception):
        ray.shutdown()
    stack.close()


@contextlib.contextmanager
def _private_ray_dir() -> Iterator[str]:
    """A fresh folder for a Ray this process starts (its sessions, sockets and logs), with a reaper on guard.

    Under ``RAY_TMPDIR`` when set (else the system's temporary folder), so
    that tests and users keep sessions apart; short, for Ray's socket paths.
    Removed at the end, after Ray stopped; the reaper removes it (and kills
    what Ray left) if this process dies first.
    """
    base = os.environ.get("RAY_TMPDIR") or tempfile.gettempdir()
    if len(base) > MAX_RAY_BASE:  # Ray's socket paths below it would pass the 107 bytes of AF_UNIX
        base = "/tmp" if os.path.isdir("/tmp") else tempfile.gettempdir()
    os.makedirs(base, exist_ok=True)
    temp = tempfile.mkdtemp(prefix="bobshat-", dir=base)
    reaper = _start_reaper(temp)
    try:
        yield temp
    finally:
        if reaper is not None:
            with contextlib.suppress(OSError):
                reaper.stdin.close()  # type: ignore[union-attr]  # EOF: Ray is stopped, the reaper's cue to sweep
        shutil.rmtree(temp, ignore_errors=True)


_REAPERS: list[subprocess.Popen] = []  # held, not waited for: a reaper lives as long as this process
MAX_RAY_BASE = 24  # + /bobshat-XXXXXXXX + /session_DATE_TIME_USEC_PID/sockets/plasma_store: about 107 bytes
# The reaper: a separate process that records this one's descendants (twice a second) while Ray runs. When its
# stdin closes (Ray stopped, or this process ended however: the pipe's only writer is here) it kills those of
# them that Ray left orphaned; when this process is gone, every one still alive, and what it started, and it
# removes the Ray folder. Plain Python from /proc: Linux only.
_REAPER = r"""
import os, shutil, signal, sys, time
parent, folder = int(sys.argv[1]), sys.argv[2]
signal.signal(signal.SIGINT, signal.SIG_IGN)
def table():
    out = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    stat = f.read().decode(errors="replace")
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2 :].split()
            if fields[0] not in ("Z", "X"):
                out[int(name)] = (int(fields[1]), int(fields[19]))  # parent pid, start time
    return out
def below(tab, roots):
    found, frontier = set(), set(roots)
    while frontier:
        frontier = {p for p, (pp, _) in tab.items() if pp in frontier} - found
        found |= frontier
    return found
me = os.getpid()
born = table()[me][1]
seen = {}
os.set_blocking(0, False)
while os.getppid() == parent:  # record until the parent is done with Ray (stdin closed) or gone
    tab = table()
    for p in below(tab, [parent]) - {me}:
        if tab[p][1] >= born:  # started with or after Ray: never what the parent ran before
            seen[p] = tab[p][1]
    try:
        if os.read(0, 1) == b"":
            break
    except BlockingIOError:
        pass
    time.sleep(0.5)
def sweep(dead):
    for sig in (signal.SIGSTOP, signal.SIGKILL):
        tab = table()
        keep = set() if dead else below(tab, [parent])  # the parent lives on: only orphans are Ray's leftovers
        left = {p for p, t in seen.items() if p in tab and tab[p][1] == t} - keep
        for p in (left | below(tab, left)) - keep - {me}:
            try:
                os.kill(p, sig)
            except OSError:
                pass
time.sleep(0.5)  # a parent that stopped Ray has just done so: let its processes finish
sweep(os.getppid() != parent)
while os.getppid() == parent:  # what Ray's processes start as they stop (agents of a raylet that ends with us)
    time.sleep(0.5)
time.sleep(0.5)
sweep(True)
shutil.rmtree(folder, ignore_errors=True)
"""


def _start_reaper(folder: str) -> subprocess.Popen | None:
    """Start :data:`_REAPER` for this process and ``folder`` (None where there is no /proc)."""
    if not os.path.isdir("/proc/self"):
        return None
    reaper = subprocess.Popen(
        [sys.executable, "-c", _REAPER, str(os.getpid()), folder],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # a terminal's Ctrl-C or a group kill does not reach it
    )
    _REAPERS[:] = [r for r in _REAPERS if r.poll() is None] + [reaper]
    return reaper


def preflight(address: str, need_cpus: int, what: str) -> None:
    """What can be checked before anything starts or is written: Ray installed, the address well formed and
    answering, and enough CPUs where they are known without connecting (this machine's for ``local``, the
    cluster's when this process is already connected). :func:`ray_session` checks the rest when it connects."""
    ray = import_ray()
    where = "the Ray cluster"
    if ray.is_initialized():
        have = float(ray.cluster_resources().get("CPU", 0.0))
    elif check_address(address) == "local":
        have, where = float(os.cpu_count() or 1), "this machine (--ray-address local)"
    else:
        have = math.inf  # known once connected
    if have < need_cpus:
        raise DistributedError(
            f"{what}: {need_cpus} CPU(s) needed, {where} has {have:g}; "
            "add nodes (`ray start --address HEAD:PORT` on another machine) or ask for fewer workers"
        )


def cluster_cpus(ray: Any) -> int:
    """CPUs of the connected Ray cluster (all nodes)."""
    return int(ray.cluster_resources().get("CPU", 0))


# --------------------------------------------------------------------------
# Evaluation
def run_chunks(
    fn: Callable[[Any], Any],
    chunks: Sequence[Any],
    address: str,
    on_result: Callable[[Any], None],
    max_retries: int = 3,
) -> int:
    """Run ``fn(chunk)`` for every chunk as a Ray task (1 CPU each); ``on_result`` gets each result as it lands.

    Results arrive in any order; the caller orders them (evaluation keys
    them by chunk index, so the numbers do not depend on the order). A task
    whose worker process dies is run again by Ray, up to ``max_retries``
    times: a chunk is a pure function of its description, so a retry gives
    the same result. Returns the cluster's CPU count (the parallelism).
    """
    with ray_session(address, need_cpus=1, what="evaluation") as ray:
        remote = ray.remote(num_cpus=1, max_retries=max_retries)(fn)
        pending = [remote.remote(ch) for ch in chunks]
        try:
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                for ref in done:
                    on_result(ray.get(ref))
        except BaseException:
            for ref in pending:
                ray.cancel(ref, force=True)
            raise
        return cluster_cpus(ray)
