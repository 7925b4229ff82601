"""How the core's batch kernels are compiled: serially for small batches,
on every core for large ones.

Each kernel is a plain Python function over the games of a batch whose main
loop is a ``numba.prange``. :func:`batch_kernel` compiles it twice from the
same source: a serial version (``prange`` is then ``range``), which is what a
one-game AEC env or a small batch wants (waking a thread pool costs more
than a few games), and a parallel version that splits the games of a large
batch over numba's threads. Games never touch each other's rows, so both
give identical results; there is one implementation of every rule.

Threads: numba's default is one per core; ``NUMBA_NUM_THREADS=1`` (or
:func:`numba.set_num_threads` in the calling thread) keeps the engine on one
core, e.g. when several environments run in separate processes.

Stale caches: numba's on-disk cache checks only the file that defines each
kernel, but a kernel compiles in the helpers it calls from other files
(``tricks.play_card`` inside each game's step). :func:`drop_stale_caches`
therefore keys a package's cached kernels on the contents of every source
they may compile in, and drops them when any changes; the core does it when
this module is imported, the bots' package for itself.

OpenMP waits: unless the user chose otherwise, ``OMP_WAIT_POLICY`` is set to
``PASSIVE`` (threads sleep as soon as a parallel loop ends). With the default
wait (GNU OpenMP spins about 300,000 times before sleeping), a core shared
with any other busy process made a step at B = 4096 many times slower,
and spinning threads steal the cores the caller's network uses between
steps (the numbers: docs/results/engineering.md, "OpenMP wait policy").

The runtime reads the variable once, when it loads, and that is usually
``import torch``, not numba: torch's wheel brings its own ``libgomp.so.1`` and
loads it into the global namespace, so numba's OpenMP layer
(``numba.threading_layer()`` is ``"omp"`` here; no TBB is installed) binds
``GOMP_parallel`` to torch's copy, and the engine's threads and torch's
share one runtime and one wait policy. This module is imported only when a
game's kernels are first needed (the first env built), typically after the
user's ``import torch``, so the setting here came too late;
``bobshat_env/__init__.py`` therefore sets it at the package's import,
which cut the CPU time of a loop of steps and network calls several times.
If torch is imported before any ``bobshat_env`` module, no package can reach
the runtime any more: set ``OMP_WAIT_POLICY=PASSIVE`` (or
``GOMP_SPINCOUNT=0``) in the shell, or import ``bobshat_env`` first
(``benchmarks/openmp_wait.py`` measures the three cases, an old checkout
against a new). ``bobshat train`` imports torch first too but runs it on one
thread (``torch_threads: 1``), so only the engine's threads wait there, and
its iteration costs the same with ``NUMBA_NUM_THREADS=1``.
"""

from __future__ import annotations

import hashlib
import os
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numba
from numba import njit

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # also set by bobshat_env/__init__.py, which runs first

PARALLEL_MIN_BATCH = 512  # below this, splitting a step over threads costs more than it saves


class BatchKernel:
    """A kernel compiled serially and in parallel; :meth:`on` picks one for a batch size."""

    def __init__(self, fn: Callable[..., Any]):
        self.serial = njit(cache=True, nogil=True)(fn)
        # A distinct function object (and name) so that numba's on-disk cache
        # keeps the two compilations apart.
        twin = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__ + "_parallel", fn.__defaults__)
        twin.__qualname__ = fn.__qualname__ + "_parallel"
        twin.__module__ = fn.__module__
        twin.__doc__ = fn.__doc__
        self.parallel = njit(cache=True, nogil=True, parallel=True)(twin)
        self.__doc__ = fn.__doc__
        self.__name__ = fn.__name__

    def on(self, batch: int) -> Callable[..., Any]:
        """The version to run ``batch`` games with."""
        if batch >= PARALLEL_MIN_BATCH and numba.get_num_threads() > 1:
            return self.parallel
        return self.serial


def batch_kernel(fn: Callable[..., Any]) -> BatchKernel:
    """Decorator: compile ``fn`` as a :class:`BatchKernel`."""
    return BatchKernel(fn)


def step_chunks(kernel: BatchKernel, batch: int) -> tuple[Callable[..., Any], int]:
    """A step kernel's version for ``batch`` games and how many ranges of
    games to split them into (one when serial; a few per thread otherwise).

    Step kernels take the state as a tuple of arrays; numba loses writes made
    through arrays from a tuple inside a parallel loop, so their parallel
    loop runs over ranges of games and hands each range to a plain compiled
    function.
    """
    fn = kernel.on(batch)
    return fn, (1 if fn is kernel.serial else 4 * numba.get_num_threads())


def drop_stale_caches(package_dir: str | Path, *also: str | Path) -> bool:
    """Delete ``package_dir``'s cached numba kernels if any ``*.py`` source in
    it or in the ``also`` directories changed since they were cached.

    Called at import, before any kernel of the package runs. Returns True if
    caches were dropped. Best effort: a read-only install is left alone (its
    sources do not change).
    """
    digest = hashlib.sha1()
    for folder in (Path(package_dir), *map(Path, also)):
        for src in sorted(folder.glob("*.py")):
            digest.update(src.name.encode() + b"\0" + src.read_bytes())
    cache = Path(package_dir) / "__pycache__"
    stamp = cache / "numba_sources.sha1"
    try:
        if stamp.is_file() and stamp.read_text() == digest.hexdigest():
            return False
        for old in [*cache.glob("*.nbi"), *cache.glob("*.nbc")]:
            old.unlink(missing_ok=True)
        cache.mkdir(exist_ok=True)
        stamp.write_text(digest.hexdigest())
    except OSError:
        return False
    return True


drop_stale_caches(Path(__file__).parent)
