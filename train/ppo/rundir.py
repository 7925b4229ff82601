"""A run's folder: made and checked before any training, locked while a run uses it, and only resumed by its own run.

The files in it are :data:`agents.checkpoint.RUN_FILES` (``ckpt.pt``,
``policy.pt`` and their readable ``.json`` copies) beside the TensorBoard logs.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agents.checkpoint import RUN_FILES, CheckpointError
from bobshat_env.paths import check_distinct, check_writable, checkpoint_files
from train.ppo.config import STRUCTURAL, Args, default_run_name

if TYPE_CHECKING:
    from bobshat_env.games import Game


def check_run_dir(run_dir: Path, create: bool = True) -> None:
    """Make the run folder and refuse one that cannot take the checkpoints, before any training.

    Replacing a file needs a writable folder and a name that is not a
    folder (:func:`bobshat_env.paths.check_writable`); found at the first
    checkpoint instead, it was a ``PermissionError`` traceback after the
    iteration's work, and a second one from TensorBoard's writer thread.
    ``create=False`` (``--resume``): a missing folder is left to the
    checkpoint loader's "no checkpoint" error, and not made.
    """
    if not create and not run_dir.is_dir():
        return
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ValueError(f"cannot make the run folder {run_dir}: {err.strerror or err}") from None
    for name in RUN_FILES:
        check_writable(run_dir / name, "run folder")


def check_run_inputs(args: Args, config: str | None = None) -> None:
    """Refuse (one line naming both) a run whose folder's files are one of its inputs, before anything is written.

    A run replaces ``ckpt.pt``, ``policy.pt`` and their sidecars in its folder
    (:data:`~agents.checkpoint.RUN_FILES`): ``init_from`` there (a run
    started from its own folder's policy, under the same name) lost the
    starting policy at the first checkpoint, with no copy. ``--resume``
    reads and writes its own ``ckpt.pt`` and ignores ``init_from``: that
    stays allowed. ``config``: the preset the arguments came from.
    """
    run_dir = Path(args.runs_dir) / default_run_name(args)
    outputs = [(f"the run folder's {name}", str(run_dir / name)) for name in RUN_FILES]
    inputs = [] if args.resume else checkpoint_files("--init-from", args.init_from)
    check_distinct(outputs, inputs + [("--config", config)], advice="choose another --run-name")


LOCK_FILE = ".lock"  # in the run folder: locked (flock) while a run uses the folder
_HELD: dict[str, list[int]] = {}  # run folders this process holds: path -> [fd, depth]


@contextmanager
def run_lock(run_dir: Path) -> Iterator[None]:
    """Hold the run folder for one run: an exclusive ``flock`` on ``RUN/.lock`` until the block ends.

    Two runs with the same name started together both found no ``ckpt.pt`` and
    then overwrote each other's checkpoints and mixed their TensorBoard logs;
    the second now gets a one-line error (exit 2) and changes nothing. The lock
    belongs to the open file, so the system releases it when a run dies,
    however it dies: there is no stale lock to clear. Re-entrant within a
    process (``exploit`` holds it around :func:`train`, which takes it too). A
    folder that does not exist (``--resume`` of a missing run, refused later)
    is not made.
    """
    key = str(run_dir.resolve())
    if key in _HELD:
        _HELD[key][1] += 1
        try:
            yield
        finally:
            _HELD[key][1] -= 1
        return
    if not run_dir.is_dir():
        yield
        return
    try:
        fd = os.open(run_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as err:
        raise ValueError(f"cannot lock the run folder {run_dir}: {err.strerror or err}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise ValueError(
            f"the run folder {run_dir} is in use by another run (bobshat train or exploit): "
            "wait for it to end, or choose another --run-name"
        ) from None
    _HELD[key] = [fd, 1]
    try:
        yield
    finally:
        del _HELD[key]
        os.close(fd)  # releases the lock


def check_same_run(path: Path, meta: dict[str, Any], args: Args, game: Game) -> None:
    """Refuse (CheckpointError naming the field) to resume ``args``' run from a checkpoint of another run.

    What a run is (:data:`STRUCTURAL`: the game, its options, the network, the seed) must
    match, and so must the run's name (a ``ckpt.pt`` copied from another run's folder)."""
    saved = meta.get("args", {})
    defaults = Args()
    for key in STRUCTURAL:
        was = saved.get(key, getattr(defaults, key))  # a field added since the run started: its default
        if was != getattr(args, key):
            raise CheckpointError(
                f"cannot resume {str(path)!r}: it was trained with {key}={was!r}, "
                f"this run asks for {key}={getattr(args, key)!r}"
            )
    name = default_run_name(args)
    if meta.get("run_name", name) != name:  # its folder's file copied here, or --run-name pointed at another run
        raise CheckpointError(
            f"cannot resume {str(path)!r}: it is the checkpoint of run {meta['run_name']!r}, not of run {name!r}"
        )
    obs_size, n_actions = game.obs_size(), game.n_actions
    if meta.get("obs_size") != obs_size or meta.get("n_actions") != n_actions or meta.get("game") != game.name:
        raise CheckpointError(
            f"cannot resume {str(path)!r}: trained for {meta.get('game')} (obs size {meta.get('obs_size')}, "
            f"{meta.get('n_actions')} actions), this run is {game.name} (obs size {obs_size}, {n_actions} actions)"
        )
