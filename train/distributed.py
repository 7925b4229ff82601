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
    with a plain TCP connection first: Ray's own client retries a dead
    address for minutes, ignoring SIGTERM (measured: 9 minutes on a closed
    local port), where the probe answers in at most ``PROBE_TIMEOUT_S``.

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
import socket
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

INSTALL = "pip install -e \".[ray]\" (or: pip install 'ray[default]')"
PROBE_TIMEOUT_S = 5.0
RELEASE_WAIT_S = 20.0  # how long CPUs the cluster has but are busy may take to come free (a run that just ended)


class DistributedError(ValueError):
    """Ray is missing, unreachable, or lacks the resources asked for; the message says what to do."""


def import_ray() -> Any:
    """The ``ray`` module, or a :class:`DistributedError` with the install command."""
    try:
        import ray  # noqa: PLC0415 - optional dependency, imported only when asked for
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
            from ray._private.services import canonicalize_bootstrap_address  # noqa: PLC0415

            target = canonicalize_bootstrap_address("auto") or ""
        except ConnectionError as err:
            raise DistributedError(
                f"--ray-address auto: no running Ray cluster found on this machine ({_first_line(err)}); "
                "start one with `ray start --head`, or use --ray-address local"
            ) from None
        except (ImportError, AttributeError):  # a Ray without that helper: let ray.init find it
            return address
    host, sep, port = target.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise DistributedError(f"--ray-address {address!r}: expected local, auto, HOST:PORT or ray://HOST:PORT")
    try:
        with socket.create_connection((host, int(port)), timeout=PROBE_TIMEOUT_S):
            pass
    except OSError as err:
        raise DistributedError(
            f"--ray-address {address}: no Ray cluster answers at {host}:{port} ({err.strerror or err}); "
            "start one with `ray start --head` or check the address"
        ) from None
    return address


def _first_line(err: BaseException) -> str:
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
    if not ray.is_initialized():
        address = check_address(address)
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "logging_level": logging.WARNING}
        try:
            if address == "local":
                ray.init(num_cpus=os.cpu_count() or 1, **kwargs)
            else:
                ray.init(address=address, **kwargs)
        except (ConnectionError, RuntimeError, ValueError) as err:
            raise DistributedError(f"--ray-address {address}: could not connect to Ray: {_first_line(err)}") from None
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
        if owned:
            ray.shutdown()


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
