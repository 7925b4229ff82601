"""The bobshat checkpoint: the file format and the layout of what a file holds, in one module.

Written by ``bobshat train`` (:mod:`train.ppo`) and read by the ``ppo:PATH``
agent (:mod:`agents.ppo_agent`), the opponent pool (:mod:`train.ppo.selfplay`)
and ``--resume``; this module sits on the agents' floor so that all of them
can import it.

File format
    One file, written by ``torch.save`` as a flat ``dict[str, Tensor]`` and
    read back with ``torch.load(weights_only=True)``: nothing in it can run
    code when loaded. ``__meta__`` is a ``uint8`` tensor holding UTF-8 JSON:
    format name and version, the game and its options, observation size,
    action count, hidden sizes, training progress.

    A copy of the metadata is written beside the file as ``<file>.json`` for
    people to read (the same text, written first); the loader only trusts
    the embedded one. Both go through the package's one atomic writer
    (:class:`bobshat_env.paths.AtomicFile`: a temporary in the same folder,
    fsynced, renamed into place, the folder fsynced), so a crash or a full
    disk never leaves a half-written checkpoint; a kill can leave the
    temporary file, which the next write of that file, or
    :func:`remove_stale_temporaries` (training calls it when it starts),
    deletes.

Layout (the keys; :data:`RUN_FILES` are the files of a run folder)
    - ``policy.<param>``: the network's state dict (every checkpoint);
    - ``optim.<param id>.<name>``: Adam's state, with ``optim_param_groups``
      in the metadata (training checkpoints, ``ckpt.pt``);
    - ``pool.<i>.<param>``: the network of the opponent pool's member ``i``
      (snapshots, exploiters), with ``pool`` (members and records) in the
      metadata (:func:`pool_prefix`);
    - ``rng.torch``: torch's global RNG state, with ``rng_numpy`` in the
      metadata.

    :func:`save_training_state` writes ``ckpt.pt`` and ``policy.pt`` (the
    network only, and the metadata less the RNG state) beside it;
    :func:`load_training_state` restores them.

Integrity
    The embedded metadata carries ``sha256``: a SHA-256 over every tensor
    (name, dtype, shape and bytes, in name order) and the rest of the
    metadata, computed at save time and checked at load time, so a file
    changed or damaged after it was written (a flipped byte in a weight
    loads fine with ``torch.load`` and plays worse) is refused, naming the
    file. Files written before the checksum existed (no ``sha256``) still
    load. The metadata's fields are checked for type and range before
    anything is built from them (a tampered ``obs_size`` of -5 or 10**12 is
    an error naming the field).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import math
import os
import pickle
import stat
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

import bobshat_env.paths as _paths

if TYPE_CHECKING:
    from bobshat_env.games import Game

CHECKPOINT_FORMAT = "bobshat-ppo"
CHECKPOINT_VERSION = 1
META_KEY = "__meta__"
CHECKSUM_KEY = "sha256"  # in the metadata; optional, so files written before it existed still load


class CheckpointError(ValueError):
    """A checkpoint that is missing, unreadable or made for another game."""


# The network shapes a checkpoint may hold: one schema for the trainer (``--hidden``, checked before a run
# starts) and the loader (a checkpoint's ``hidden``), so that whatever trains also loads. A width of 16,384
# is 64x the shipped networks'; the weight bound (2**28 trunk weights between hidden layers: 1 GiB in fp32,
# 3 GiB with Adam's two moments) keeps a typo such as 100000000 from allocating until memory runs out.
MAX_HIDDEN_LAYERS = 64
MAX_HIDDEN_WIDTH = 16_384
MAX_HIDDEN_WEIGHTS = 2**28


def hidden_shape_error(hidden: Any) -> str | None:
    """What is wrong with ``hidden`` (a network's hidden layer sizes) as a network shape, or None if it fits.

    The schema: a list of 1-64 layer sizes, each an integer 1-16,384, with at
    most 2**28 weights between consecutive hidden layers.
    """
    if not isinstance(hidden, (list, tuple)) or not hidden:
        return f"a list of 1-{MAX_HIDDEN_LAYERS} layer sizes, got {hidden!r:.80}"
    if len(hidden) > MAX_HIDDEN_LAYERS:
        return f"at most {MAX_HIDDEN_LAYERS} layers, got {len(hidden)}"
    bad = [h for h in hidden if not (_is_int(h) and 1 <= h <= MAX_HIDDEN_WIDTH)]
    if bad:
        return f"layer sizes 1-{MAX_HIDDEN_WIDTH:,}, got {bad[0]!r:.40}"
    weights = sum(a * b for a, b in zip(hidden, hidden[1:]))
    if weights > MAX_HIDDEN_WEIGHTS:
        return f"at most {MAX_HIDDEN_WEIGHTS:,} weights between hidden layers, got {weights:,}"
    return None


# --------------------------------------------------------------------------
# Checkpoint files
def remove_stale_temporaries(directory: str | os.PathLike) -> list[Path]:
    """Delete the temporary files of checkpoint writes killed part-way; returns them.

    :func:`save_checkpoint` writes through :class:`bobshat_env.paths.AtomicFile`
    (``.ckpt.pt.<random>.tmp<pid>``, renamed into place); a process killed
    before the rename leaves it behind (a full checkpoint's size each time).
    Only files whose process is no longer running are removed, so a run still
    writing in the same folder keeps its own
    (:func:`bobshat_env.paths.remove_stale_temporaries`, for every file of
    the folder).
    """
    return _paths.remove_stale_temporaries(directory)


def checkpoint_digest(tensors: dict[str, torch.Tensor], meta: dict[str, Any]) -> str:
    """SHA-256 (hex) of a checkpoint's tensors and metadata, the ``sha256`` field excluded.

    Tensors are hashed in name order, each as its name, dtype and shape (JSON)
    then its raw bytes; the metadata as compact JSON with sorted keys, after a
    JSON round trip so that the value saved and the value loaded hash alike.
    It reads every byte once (~1 GB/s; a shipped policy is 0.4 MB).
    """
    h = hashlib.sha256()
    for key in sorted(tensors):
        t = tensors[key].detach().cpu().contiguous()
        h.update(json.dumps([key, str(t.dtype), list(t.shape)]).encode("utf-8"))
        h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())
    rest = json.loads(json.dumps({k: v for k, v in meta.items() if k != CHECKSUM_KEY}))
    h.update(json.dumps(rest, sort_keys=True, separators=(",", ":")).encode("utf-8"))
    return h.hexdigest()


def save_checkpoint(path: str | os.PathLike, tensors: dict[str, torch.Tensor], meta: dict[str, Any]) -> None:
    """Write tensors and JSON metadata atomically, with their checksum (see the module docstring)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = {"format": CHECKPOINT_FORMAT, "version": CHECKPOINT_VERSION, **meta}
    blob = {k: v.detach().cpu().contiguous() for k, v in tensors.items()}
    meta[CHECKSUM_KEY] = checkpoint_digest(blob, meta)
    text = json.dumps(meta, indent=1, sort_keys=True)
    blob[META_KEY] = torch.frombuffer(bytearray(text.encode("utf-8")), dtype=torch.uint8)
    # the readable sidecar first, from the same text: a kill between the two leaves it ahead of the
    # checkpoint, never describing an older one than the file beside it
    _paths.replace_bytes(_paths.sidecar(path), (text + "\n").encode("utf-8"))
    with _paths.AtomicFile(path) as f:  # a temporary beside it, fsynced, renamed over it: never half a file
        torch.save(blob, f)  # type: ignore[arg-type]  # f has the write and flush it calls; torch says IO[bytes]


def write_checkpoint(out: str | os.PathLike, tensors: dict[str, torch.Tensor], meta: dict[str, Any]) -> None:
    """:func:`save_checkpoint` (its sidecar ``OUT.json``, then the checkpoint) as one step among runs, and
    all or nothing: how ``bobshat imitate`` and ``bobshat expert`` write ``--out``.

    Two runs writing the same ``out`` take turns (an ``flock`` on its folder),
    so the sidecar and the checkpoint are the same run's. A write that fails
    part-way (a full disk, a SIGTERM or Ctrl-C) puts the sidecar back as it was
    (none, or the old checkpoint's); a failed write comes out as the writer's
    one-line ``OutputWriteError``, which torch's zip writer would otherwise
    turn into a RuntimeError. (A training run locks its whole folder for the
    run instead, ``train.ppo.rundir.run_lock``, and saves with
    :func:`save_training_state`.)
    """
    import fcntl

    out = Path(out)
    sidecar = Path(_paths.sidecar(out))
    out.parent.mkdir(parents=True, exist_ok=True)  # as save_checkpoint does
    folder = os.open(out.parent, os.O_RDONLY)
    try:
        fcntl.flock(folder, fcntl.LOCK_EX)
        old = sidecar.read_bytes() if sidecar.is_file() else None
        try:
            save_checkpoint(out, tensors, meta)
        except BaseException as err:  # a SIGTERM (SystemExit, see cli_imitate) or Ctrl-C part-way too
            with contextlib.suppress(OSError):  # the error to report is the write's
                if old is None:
                    sidecar.unlink(missing_ok=True)
                else:
                    _paths.replace_bytes(sidecar, old)  # room again: the checkpoint's temporary is gone
            cause = err if isinstance(err, OSError) else err.__context__
            if isinstance(cause, _paths.OutputWriteError):
                raise cause from None
            raise
    finally:
        os.close(folder)  # and the lock with it


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


# Metadata fields the code builds from or counts with: (check, what it must be). Sizes are bounded far
# above any real network (the shipped ones: 442 inputs, 86 actions, 128x128) so a tampered size fails here,
# not in a 10**12-float allocation.
_META_FIELDS: dict[str, tuple[Any, str]] = {
    "game": (lambda v: isinstance(v, str), "a game name"),
    "players": (lambda v: _is_int(v) and 1 <= v <= 16, "an integer 1-16"),
    "view": (lambda v: isinstance(v, str), "a view name"),
    "obs_size": (lambda v: _is_int(v) and 1 <= v <= 1_000_000, "an integer 1-1,000,000"),
    "n_actions": (lambda v: _is_int(v) and 1 <= v <= 100_000, "an integer 1-100,000"),
    "hidden": (
        lambda v: isinstance(v, list) and hidden_shape_error(v) is None,
        f"a list of 1-{MAX_HIDDEN_LAYERS} layer sizes 1-{MAX_HIDDEN_WIDTH:,} (see hidden_shape_error)",
    ),
    "symmetry": (lambda v: v is None or isinstance(v, str), "null or a name"),
    "features": (lambda v: v is None or isinstance(v, str), "null or a name"),
    "config": (lambda v: isinstance(v, dict), "a mapping of game options"),
    "global_step": (lambda v: _is_int(v) and v >= 0, "a non-negative integer"),
    "iteration": (lambda v: _is_int(v) and v >= 0, "a non-negative integer"),
    "learner_decisions": (lambda v: _is_int(v) and v >= 0, "a non-negative integer"),
    "games": (lambda v: _is_int(v) and v >= 0, "a non-negative integer"),
    "elapsed_s": (
        lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0,
        "a non-negative number",
    ),
    "run_name": (lambda v: isinstance(v, str), "a string"),
    "args": (lambda v: isinstance(v, dict), "a mapping"),
    "optim_param_groups": (lambda v: isinstance(v, list) and all(isinstance(g, dict) for g in v), "a list of mappings"),
    "pool": (lambda v: isinstance(v, dict), "a mapping"),
    "rng_numpy": (lambda v: isinstance(v, dict), "a mapping"),
}


def check_meta(meta: dict[str, Any], path: str | os.PathLike = "checkpoint") -> None:
    """Raise CheckpointError naming the file and field if a known metadata field has a wrong type or range."""
    for key, (ok, what) in _META_FIELDS.items():
        if key in meta and not ok(meta[key]):
            if key == "hidden" and isinstance(meta[key], list):
                what = str(hidden_shape_error(meta[key]))
            raise CheckpointError(f"{str(path)!r} has corrupt metadata: {key} must be {what}, got {meta[key]!r:.80}")


def load_checkpoint(path: str | os.PathLike) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """(tensors, meta) of a checkpoint; a clear error if it is missing, not one, or corrupt."""
    path = Path(path)
    blob = _read_blob(path)
    tensors_only = isinstance(blob, dict) and all(isinstance(v, torch.Tensor) for v in blob.values())
    if not tensors_only or META_KEY not in blob:
        raise CheckpointError(f"{str(path)!r} is not a bobshat checkpoint (no {META_KEY!r} metadata tensor)")
    try:
        meta = json.loads(bytes(blob.pop(META_KEY).numpy()).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, TypeError, RuntimeError) as err:
        raise CheckpointError(f"{str(path)!r} has corrupt metadata: {err}") from err
    if not isinstance(meta, dict):
        raise CheckpointError(f"{str(path)!r} has corrupt metadata: a JSON object expected, got {type(meta).__name__}")
    if meta.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(f"{str(path)!r} is a {meta.get('format')!r} file, not a {CHECKPOINT_FORMAT!r} checkpoint")
    if meta.get("version") != CHECKPOINT_VERSION:
        raise CheckpointError(
            f"{str(path)!r} has checkpoint version {meta.get('version')}, this code reads version {CHECKPOINT_VERSION}"
        )
    if CHECKSUM_KEY in meta:  # absent only in files written before checksums (still accepted)
        if checkpoint_digest(blob, meta) != meta[CHECKSUM_KEY]:
            raise CheckpointError(
                f"{str(path)!r} is corrupt: its contents do not match the checksum written with it "
                "(the file was changed or damaged after it was saved)"
            )
    check_meta(meta, path)
    for key in sorted(blob):  # NaN weights would play as "illegal action 0" far from here: name them now
        t = blob[key]
        if t.is_floating_point() and not bool(torch.isfinite(t).all()):
            raise CheckpointError(f"{str(path)!r} is corrupt: tensor {key} holds NaN or infinite values")
    return blob, meta


UNREADABLE = "is not a readable bobshat checkpoint"
ZIP_MAGIC = b"PK\x03\x04"  # torch.save writes a zip archive; bobshat never wrote another format


def _read_blob(path: Path) -> Any:
    """``torch.load(path, weights_only=True)`` of a file checked first to be a torch zip archive.

    Every failure is a :class:`CheckpointError` of one line naming the file
    and what is wrong (missing, a folder or a device, empty, not a zip
    archive, truncated, damaged, or holding objects other than tensors):
    never torch's own text, which suggests ``weights_only=False`` (that would
    run code from the file), nor a bare ``EOFError`` or ``[Errno 22]``.
    """
    where = repr(str(path))
    try:
        st = path.stat()
    except FileNotFoundError:
        from .shipped import is_bare_name, shipped_names

        hint = f" (nor a shipped policy: {', '.join(shipped_names())})" if is_bare_name(str(path)) else ""
        raise FileNotFoundError(f"no checkpoint at {where}{hint}") from None
    except OSError as err:
        raise CheckpointError(f"{where} cannot be read: {err.strerror or err}") from None
    if stat.S_ISDIR(st.st_mode):
        raise CheckpointError(f"{where} is a folder, not a checkpoint file")
    if not stat.S_ISREG(st.st_mode):  # a FIFO would block the read, a device never end
        raise CheckpointError(f"{where} is not a regular file (a device, pipe or socket), not a checkpoint")
    if st.st_size == 0:
        raise CheckpointError(f"{where} {UNREADABLE}: the file is empty (0 bytes)")
    try:
        with open(path, "rb") as f:
            head = f.read(4)
    except OSError as err:
        raise CheckpointError(f"{where} cannot be read: {err.strerror or err}") from None
    if head != ZIP_MAGIC:
        raise CheckpointError(f"{where} {UNREADABLE}: not a torch zip archive (a bobshat checkpoint is one)")
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as err:  # weights_only refused an object: never retried without it
        raise CheckpointError(
            f"{where} {UNREADABLE}: it holds objects other than tensors (not loaded: they could run code)"
        ) from err
    except Exception as err:  # torch raises many types for a damaged file (RuntimeError, OSError, EOFError, ...)
        raise CheckpointError(f"{where} {UNREADABLE}: {_zip_damage(path, st.st_size)}") from err


def _zip_damage(path: Path, size: int) -> str:
    """Why a torch zip archive failed to load, in words: truncated, or which member is damaged."""
    try:
        with zipfile.ZipFile(path) as z:
            bad = z.testzip()
    except zipfile.BadZipFile:
        return f"truncated or damaged ({size:,} bytes; its zip archive has no complete directory)"
    except Exception:  # a member whose local header is garbled (zipfile raises UnicodeDecodeError, ...)
        return "damaged (a member of its zip archive has a garbled header)"
    if bad is not None:
        return f"damaged (member {bad} fails its CRC check)"
    return "damaged (its zip archive is intact, but its contents are not a torch save)"


def check_compatible(meta: dict[str, Any], game: Game | None, path: str | os.PathLike = "checkpoint") -> None:
    """Raise CheckpointError naming what differs if the checkpoint cannot play ``game``.

    The game, the observation size and the number of actions must be the
    game's; then every option of the game (``meta["config"]``, as training
    wrote it) must have the value it was trained with, except the options
    that only schedule the hands (the config class's ``SCHEDULE_OPTIONS``:
    how many hands, their sizes, who deals first), which leave what the
    network sees and may do as it was trained. An option another rule would
    change (scoring, bidding, what is shown) is refused even where the
    observation size is equal: the policy learned other rules. An option the
    checkpoint's config does not list (added since) is compared with its
    default. Checkpoints with no ``config`` in their metadata (written
    before it was recorded) are accepted as before, on the first checks alone.
    """
    if game is None:
        return
    want = {"game": game.name, "obs_size": game.obs_size(meta.get("view", "private")), "n_actions": game.n_actions}
    for key, value in want.items():
        if meta.get(key) != value:
            raise CheckpointError(
                f"{str(path)!r} was trained for {meta.get('game')} with {meta.get('players')} players "
                f"(obs size {meta.get('obs_size')}, {meta.get('n_actions')} actions); it cannot play "
                f"{game.name} with {game.players} players: {key} is {meta.get(key)!r}, the game needs {value!r}"
            )
    trained = meta.get("config")
    if not isinstance(trained, dict):
        return
    cls = type(game.config)
    free = getattr(cls, "SCHEDULE_OPTIONS", ())
    for f in dataclasses.fields(cls):
        was, now = trained.get(f.name, f.default), getattr(game.config, f.name)
        if f.name not in free and was != now:
            raise CheckpointError(
                f"{str(path)!r} was trained for {game.name} with {f.name}={was!r}; this game has {f.name}={now!r}, "
                f"other rules than the policy learned (only {', '.join(free)} may differ)"
            )


# --------------------------------------------------------------------------
# The layout of a training checkpoint
CKPT_FILE, POLICY_FILE = "ckpt.pt", "policy.pt"
# what save_training_state replaces: each file and its sidecar
RUN_FILES = tuple(f for name in (CKPT_FILE, POLICY_FILE) for f in (name, _paths.sidecar(name)))
POLICY_PREFIX = "policy."
OPTIM_PREFIX = "optim."
TORCH_RNG_KEY = "rng.torch"
# the metadata a training checkpoint must hold to be resumed
TRAINING_META: tuple[str, ...] = ("args", "game", "obs_size", "n_actions", "pool", "rng_numpy", "global_step")
TRAINING_META += ("iteration", "learner_decisions", "games", "elapsed_s")


def pool_prefix(i: int) -> str:
    """The key prefix of the tensors of the opponent pool's member ``i``."""
    return f"pool.{i}."


def net_meta(game: Game, net: Any) -> dict[str, Any]:
    """What a checkpoint says about its game and network (checked when it is loaded)."""
    return {
        "game": game.name,
        "players": game.players,
        "config": game.config.to_dict(),
        "view": "private",
        "obs_size": net.obs_size,
        "n_actions": net.n_actions,
        "hidden": list(net.hidden),
        "symmetry": "trump" if net.symmetry is not None else None,
        "features": "trick" if net.features is not None else None,
    }


def save_training_state(path: Path, game: Game, net: Any, optimizer: Any, pool: Any, meta: dict[str, Any]) -> None:
    """``path`` (ckpt.pt: resumable) and policy.pt (the network only) beside it.

    ``meta``: the run's counters, ``rng_numpy`` and ``args`` (a dict); ``pool.state()`` gives the members'
    networks by index and the pool's metadata. ``args`` and the RNG state stay out of policy.pt."""
    meta = {**net_meta(game, net), **meta}
    run_args = meta.pop("args")
    tensors = {POLICY_PREFIX + k: v for k, v in net.state_dict().items()}
    save_checkpoint(path.with_name(POLICY_FILE), tensors, {k: v for k, v in meta.items() if k != "rng_numpy"})
    opt = optimizer.state_dict()
    for pid, st in opt["state"].items():
        for k, v in st.items():
            tensors[f"{OPTIM_PREFIX}{pid}.{k}"] = v if isinstance(v, torch.Tensor) else torch.tensor(v)
    nets, pool_meta = pool.state()
    for i, state in nets.items():
        tensors.update({pool_prefix(i) + k: v for k, v in state.items()})
    tensors[TORCH_RNG_KEY] = torch.get_rng_state()
    meta.update(args=run_args, optim_param_groups=opt["param_groups"], pool=pool_meta)
    save_checkpoint(path, tensors, meta)


def load_training_state(
    path: Path, net: Any, optimizer: Any, pool: Any, check_run: Callable[[dict[str, Any]], None]
) -> dict[str, Any]:
    """Restore what :func:`save_training_state` wrote; returns the metadata (counters, ``rng_numpy``).

    ``check_run(meta)`` refuses another run's checkpoint (the trainer's
    :func:`train.ppo.rundir.check_same_run`) before anything is restored. A
    damaged or tampered part is a CheckpointError naming the file and the
    part (the counters' types and ranges are checked by :func:`load_checkpoint`).
    """
    tensors, meta = load_checkpoint(path)
    if "optim_param_groups" not in meta:
        raise CheckpointError(f"{str(path)!r} holds a policy only, not a training state to resume")
    missing = [k for k in TRAINING_META if k not in meta] + [k for k in (TORCH_RNG_KEY,) if k not in tensors]
    if missing:
        raise CheckpointError(f"cannot resume {str(path)!r}: it lacks {', '.join(missing)}")
    check_run(meta)

    def restore(part: str, step: Any) -> None:
        try:
            step()
        except (KeyError, TypeError, ValueError, RuntimeError, IndexError, AttributeError) as err:
            raise CheckpointError(f"cannot resume {str(path)!r}: its {part} is damaged: {err}") from err

    n = len(POLICY_PREFIX)
    restore(
        "policy", lambda: net.load_state_dict({k[n:]: v for k, v in tensors.items() if k.startswith(POLICY_PREFIX)})
    )
    restore("optimizer state (optim_param_groups, optim.*)", lambda: _load_optimizer(optimizer, tensors, meta))
    restore("opponent pool (pool, pool.*)", lambda: pool.load_state(tensors, meta["pool"], meta))
    restore("torch RNG state (rng.torch)", lambda: torch.set_rng_state(tensors[TORCH_RNG_KEY]))
    # the caller sets its generator from rng_numpy: try it on a scratch one first
    restore(
        "numpy RNG state (rng_numpy)",
        lambda: setattr(np.random.default_rng().bit_generator, "state", meta["rng_numpy"]),
    )
    return meta


def _load_optimizer(optimizer: Any, tensors: dict[str, torch.Tensor], meta: dict[str, Any]) -> None:
    """Adam's state from the ``optim.*`` tensors and ``optim_param_groups``."""
    state: dict[int, dict[str, torch.Tensor]] = {}
    for k, v in tensors.items():
        if k.startswith(OPTIM_PREFIX):
            _, pid, name = k.split(".", 2)
            state.setdefault(int(pid), {})[name] = v
    groups = [{**g, "betas": tuple(g["betas"])} if "betas" in g else g for g in meta["optim_param_groups"]]
    optimizer.load_state_dict({"state": state, "param_groups": groups})
