"""A trained PPO policy as a batched agent, and the checkpoint format it reads.

``make_agent("ppo:runs/x/ckpt.pt", game)`` loads a checkpoint written by
``bobshat train`` (or a policy exported from one) and acts greedily; add
``,sample=true`` (``ppo:PATH,sample=true``) to sample from the policy instead.

Checkpoint format
    One file, written by ``torch.save`` as a flat ``dict[str, Tensor]`` and
    read back with ``torch.load(weights_only=True)``: nothing in it can run
    code when loaded. Keys:

    - ``policy.<param>``: the network's state dict;
    - ``__meta__``: a ``uint8`` tensor holding UTF-8 JSON: format name and
      version, the game and its options, observation size, action count,
      hidden sizes, training progress;
    - training checkpoints add ``optim.*``, ``pool.<i>.<param>`` and
      ``rng.*`` tensors (see :mod:`train.ppo`).

    A copy of the metadata is written beside the file as ``<file>.json`` for
    people to read (the same text, written first); the loader only trusts
    the embedded one. Both go through the package's one atomic writer
    (:class:`bobshat_env.paths.AtomicFile`: a temporary in the same folder,
    fsynced, renamed into place, the folder fsynced), so a crash or a full
    disk never leaves a half-written checkpoint; a kill can leave the
    temporary file, which the next write of that file, or
    :func:`remove_stale_temporaries` (training calls it when it starts),
    deletes.

Integrity
    The embedded metadata carries ``sha256``: a SHA-256 over every tensor
    (name, dtype, shape and bytes, in name order) and the rest of the
    metadata, computed at save time and checked at load time, so a file
    changed or damaged after it was written (a flipped byte in a weight
    loads fine with ``torch.load`` and plays worse) is refused, naming the
    file. Files written before the checksum existed (no ``sha256``) still
    load. The metadata's fields are checked for type and range before
    anything is built from them (a tampered ``obs_size`` of -5 or 10**12 is
    an error naming the field), and the network's tensors must have the
    shapes the metadata describes.

Devices
    Tensors are saved from the CPU and loaded onto the CPU
    (``map_location``), so a checkpoint written by a CUDA learner loads on a
    machine without a GPU and the other way round; :func:`load_policy` and
    ``ppo:PATH,device=cuda`` then move the network where it should run.
    :class:`PolicyNet` and :class:`PPOAgent` take inputs on the CPU whatever
    the network's device: the input stage is a compiled CPU kernel, only the
    matrix products run on the network's device, and the sampling noise is
    drawn on the CPU, so a seeded agent draws the same numbers on every device.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import pickle
import stat
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

import bobshat_env.paths as _paths
from agents.features import TrickFeatures, prepare_inputs
from bobshat_env.core.symmetry import SuitSymmetry

CHECKPOINT_FORMAT = "bobshat-ppo"
CHECKPOINT_VERSION = 1
META_KEY = "__meta__"
CHECKSUM_KEY = "sha256"  # in the metadata; optional, so files written before it existed still load
MASK_GAP = 80.0  # illegal logits sit this far below the row's best legal logit (probability < 1e-34)


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


DEVICES = ("auto", "cpu", "cuda")


def resolve_device(spec: str | torch.device = "auto") -> torch.device:
    """``auto`` (CUDA when this torch sees a GPU, else the CPU), ``cpu``, ``cuda`` or ``cuda:N`` as a device.

    Asking for CUDA where there is none is a ValueError naming why (a CPU
    build of torch, or no GPU visible), never a silent fallback.
    """
    if isinstance(spec, torch.device):
        spec = str(spec)
    if not isinstance(spec, str) or not (spec in DEVICES or spec.startswith("cuda:")):
        raise ValueError(f"device must be one of {', '.join(DEVICES)} (or cuda:N), got {spec!r}")
    if spec == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if spec.startswith("cuda") and not torch.cuda.is_available():
        why = "this torch is a CPU build" if torch.version.cuda is None else "no GPU is visible"
        raise ValueError(f"device {spec!r} asked for, but CUDA is not available ({why}, torch {torch.__version__})")
    try:
        return torch.device(spec)
    except RuntimeError as err:
        raise ValueError(f"bad device {spec!r}: {err}") from None


# --------------------------------------------------------------------------
# The network
class PolicyNet(nn.Module):
    """An MLP trunk with a policy head (one logit per action) and a value head.

    One network serves every seat: observations are seat-relative. Two
    optional input stages, both without weights and saved with them as
    buffers:

    - ``symmetry`` (:func:`bobshat_env.core.symmetry.trump_canonical`): the
      network sees every observation with the trump suit relabelled as the
      first suit and its action scores are mapped back, so what it learns
      about trump holds for every trump suit;
    - ``features`` (:class:`agents.features.TrickFeatures`): exact trick
      facts (who is winning, which of my cards would win, ...) appended to
      the (relabelled) observation.

    :meth:`prepare` runs them, :meth:`head` is the network proper; training
    stores prepared inputs once per rollout and updates through ``head``.
    """

    def __init__(
        self,
        obs_size: int,
        n_actions: int,
        hidden: tuple[int, ...] | list[int] = (256, 256),
        symmetry: SuitSymmetry | None = None,
        features: TrickFeatures | None = None,
    ):
        super().__init__()
        self.input_size = obs_size + (features.size if features is not None else 0)
        layers: list[nn.Module] = []
        size = self.input_size
        for h in hidden:
            layers += [nn.Linear(size, h), nn.ReLU()]
            size = h
        self.trunk = nn.Sequential(*layers)
        self.policy = nn.Linear(size, n_actions)
        self.value = nn.Linear(size, 1)
        self.obs_size, self.n_actions, self.hidden = obs_size, n_actions, tuple(int(h) for h in hidden)
        for m in self.trunk:
            if isinstance(m, nn.Linear):
                nn.init.orthogonal_(m.weight, np.sqrt(2))
                nn.init.zeros_(m.bias)
        nn.init.orthogonal_(self.policy.weight, 0.01)
        nn.init.zeros_(self.policy.bias)
        nn.init.orthogonal_(self.value.weight, 1.0)
        nn.init.zeros_(self.value.bias)
        self.symmetry = symmetry
        if symmetry is not None:
            if symmetry.obs_index.shape[1] != obs_size or symmetry.action_index.shape[1] != n_actions:
                raise ValueError(
                    f"symmetry tables {symmetry.obs_index.shape} / {symmetry.action_index.shape} do not fit "
                    f"obs size {obs_size} and {n_actions} actions"
                )
            self.register_buffer("sym_key", torch.tensor(symmetry.key, dtype=torch.int64))
            self.register_buffer("sym_obs", torch.as_tensor(symmetry.obs_index, dtype=torch.int64))
            self.register_buffer("sym_act", torch.as_tensor(symmetry.action_index, dtype=torch.int64))
        self.features = features

    @property
    def device(self) -> torch.device:
        """Where the weights are."""
        return self.policy.weight.device

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(logits (B, A), value (B,)) on the network's device for observations (B, D) on any device."""
        if self.symmetry is None and self.features is None:
            return self.head(obs.to(self.device))
        x, k = self.prepare(obs)
        logits, value = self.head(x.to(self.device))
        return self.original_logits(logits, k), value

    def head(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(logits, value) of prepared inputs (:meth:`prepare`), in the network's own action labelling."""
        z = self.trunk(x)
        return self.policy(z), self.value(z).squeeze(-1)

    def prepare(self, obs: torch.Tensor, mask: torch.Tensor | None = None) -> tuple[torch.Tensor, ...]:
        """(x, k) or (x, mask, k): the input of :meth:`head` and the mask in its labelling.

        ``k`` (B,) is each row's relabelling (all zeros without a symmetry);
        an action ``a`` of :meth:`head` is the game's action
        ``original_actions(a, k)``.
        """
        if self.symmetry is None and self.features is None:
            k = torch.zeros(obs.shape[0], dtype=torch.int64, device=obs.device)
        else:  # one compiled pass over the rows (on the CPU): relabel, then append the features
            x, k = prepare_inputs(obs, self.symmetry, self.features)
            obs, k = x.to(obs.device, obs.dtype), k.to(obs.device)
        if mask is not None and self.symmetry is not None:
            mask = mask.gather(1, self.sym_act.to(mask.device)[k.to(mask.device)])
        return (obs, k) if mask is None else (obs, mask, k)

    def original_actions(self, actions: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        """Actions (B,) of :meth:`head` for rows relabelled by ``k``, as actions of the game."""
        if self.symmetry is None:
            return actions
        return self.sym_act.to(actions.device)[k.to(actions.device), actions]

    def original_logits(self, logits: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        """Logits (B, A) of :meth:`head` for rows relabelled by ``k``, indexed by the game's actions."""
        if self.symmetry is None:
            return logits
        return logits.gather(1, self.sym_act.to(logits.device)[k.to(logits.device)])

    def clone_frozen(self) -> PolicyNet:
        """A copy with the same architecture and weights (for opponent pools)."""
        frozen = PolicyNet(self.obs_size, self.n_actions, self.hidden, self.symmetry, self.features)
        frozen.load_state_dict(self.state_dict())
        return frozen


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Logits with each illegal action (``mask`` False) set ``MASK_GAP`` below the row's best legal one.

    Its probability is then below 1e-34 (entropy and log-probabilities stay
    finite, and it gets no gradient), and :func:`sample_actions` never draws
    it. A relative floor rather than a constant like -1e9 keeps every value
    in the range where ``exp`` is fast: exponentials of huge negative numbers
    take a slow path that made the PPO update ~40% slower.

    It is arithmetic on the mask as 0/1 numbers, the same values and
    gradients as ``torch.where(mask, logits, best - MASK_GAP)`` but ~2x
    faster forward and backward: boolean selects take a slow path on CPU
    (~6 ns per element), and this runs on every rollout step and minibatch.
    (A row with no legal action, which never reaches it, gets equal finite
    logits rather than ``-inf``.)
    """
    legal = (mask.view(torch.uint8) if mask.dtype == torch.bool else mask).to(logits.device, logits.dtype)
    illegal = 1.0 - legal
    best = (logits.detach() - illegal * 1e30).amax(dim=-1, keepdim=True)  # the best legal logit
    return logits * legal + illegal * (best - MASK_GAP)  # x * 1 + 0 and 0 + y are exact: logit or best - gap


def sample_actions(logits: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """One action per row drawn from softmax(logits) by the Gumbel-max trick.

    The Gumbel noise is bounded (uniforms clamped to [1e-10, 1 - 1e-7]: noise
    in [-3.2, 16.2]), less than ``MASK_GAP``, so a masked action never wins.
    The uniforms are drawn on the CPU (``generator`` is a CPU generator, or
    torch's global one) and moved to the logits' device: the same draws on
    every device.
    """
    u = torch.rand(logits.shape, generator=generator, dtype=logits.dtype).to(logits.device).clamp_(1e-10, 1.0 - 1e-7)
    return torch.argmax(logits - torch.log(-torch.log(u)), dim=-1)


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
    _paths.replace_bytes(path.with_name(path.name + ".json"), (text + "\n").encode("utf-8"))
    with _paths.AtomicFile(path) as f:  # a temporary beside it, fsynced, renamed over it: never half a file
        torch.save(blob, f)


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
        raise FileNotFoundError(f"no checkpoint at {where}") from None
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


def check_compatible(meta: dict[str, Any], game: Any, path: str | os.PathLike = "checkpoint") -> None:
    """Raise CheckpointError naming what differs if the checkpoint cannot play ``game``."""
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


def _check_shapes(state: dict[str, torch.Tensor], meta: dict[str, Any], input_size: int, where: str) -> None:
    """The Linear layers' tensors have the shapes the metadata describes (else CheckpointError)."""
    sizes = [input_size, *meta["hidden"]]
    want = {f"trunk.{2 * i}.weight": (sizes[i + 1], sizes[i]) for i in range(len(sizes) - 1)}
    want.update({"policy.weight": (int(meta["n_actions"]), sizes[-1]), "value.weight": (1, sizes[-1])})
    for key, shape in want.items():
        got = tuple(state[key].shape) if key in state else None
        if got != shape:
            raise CheckpointError(
                f"{where}: the metadata (obs_size {meta['obs_size']}, hidden {meta['hidden']}, "
                f"{meta['n_actions']} actions) needs tensor {key} of shape {shape}, the file has {got}"
            )


def policy_from_tensors(
    tensors: dict[str, torch.Tensor], meta: dict[str, Any], prefix: str = "policy.", path: str | os.PathLike = ""
) -> PolicyNet:
    """Build a :class:`PolicyNet` from the ``prefix``-ed tensors of a checkpoint (``path`` names it in errors)."""
    where = f"{str(path)!r}" if path else "checkpoint"
    state = {k[len(prefix) :]: v for k, v in tensors.items() if k.startswith(prefix)}
    missing = [k for k in ("obs_size", "n_actions", "hidden") if k not in meta]
    if missing:
        raise CheckpointError(f"{where} metadata lacks {', '.join(missing)}")
    check_meta(meta, path or "checkpoint")
    symmetry = None
    if "sym_key" in state:  # trained with trump_symmetry: the tables travel with the weights
        try:
            key = tuple(int(x) for x in state["sym_key"].tolist())
            symmetry = SuitSymmetry(key, state["sym_obs"].numpy(), state["sym_act"].numpy())  # type: ignore[arg-type]
        except (KeyError, ValueError, TypeError) as err:
            raise CheckpointError(f"{where} has incomplete symmetry tables: {err}") from err
    features = None
    if "features.spec" in state:  # trained with trick_features
        try:
            features = TrickFeatures.from_state(state)
        except (KeyError, ValueError, RuntimeError, TypeError, IndexError) as err:
            raise CheckpointError(f"{where} has incomplete feature tables: {err}") from err
    input_size = int(meta["obs_size"]) + (features.size if features is not None else 0)
    _check_shapes(state, meta, input_size, where)  # before allocating a network of the described size
    try:
        net = PolicyNet(int(meta["obs_size"]), int(meta["n_actions"]), tuple(meta["hidden"]), symmetry, features)
    except ValueError as err:
        raise CheckpointError(f"{where}: tensors do not fit the network it describes: {err}") from err
    try:
        net.load_state_dict(state)
    except RuntimeError as err:
        raise CheckpointError(f"{where}: tensors do not fit the network it describes: {err}") from err
    return net


def load_policy(
    path: str | os.PathLike, game: Any = None, device: str | torch.device = "cpu"
) -> tuple[PolicyNet, dict[str, Any]]:
    """The policy network of a checkpoint (eval mode, on ``device``: cpu, cuda or auto) and its metadata."""
    tensors, meta = load_checkpoint(path)
    check_compatible(meta, game, path)
    net = policy_from_tensors(tensors, meta, path=path)
    net.eval()
    return net.to(resolve_device(device)), meta


# --------------------------------------------------------------------------
# The agent
class PPOAgent:
    """A policy network behind the batched :class:`agents.base.Agent` interface.

    Greedy (the most probable legal action) by default; ``sample=True`` draws
    from the masked policy. Inference runs under ``torch.inference_mode``, on
    the network's device; observations come and actions go back on the CPU.
    """

    def __init__(self, net: PolicyNet, sample: bool = False, seed: int | None = None, name: str = "ppo"):
        self.net = net
        self.sample = bool(sample)
        self.name = name
        self.generator = torch.Generator()
        self.generator.manual_seed(int(np.random.SeedSequence(seed).generate_state(1)[0]))

    @classmethod
    def from_checkpoint(
        cls,
        path: str | os.PathLike,
        game: Any = None,
        sample: bool = False,
        seed: int | None = None,
        device: str | torch.device = "cpu",
    ) -> PPOAgent:
        net, _ = load_policy(path, game, device=device)
        return cls(net, sample=sample, seed=seed, name=f"ppo:{path}")

    def act(self, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray) -> np.ndarray:
        """(B,) legal actions for observations (B, D) and masks (B, A)."""
        with torch.inference_mode():
            x = torch.from_numpy(np.ascontiguousarray(obs, dtype=np.float32))
            m = torch.from_numpy(np.ascontiguousarray(mask, dtype=bool))
            logits = masked_logits(self.net(x)[0], m)
            a = sample_actions(logits, self.generator) if self.sample else torch.argmax(logits, dim=-1)
        return a.cpu().numpy().astype(np.int64)

    def action_probs(self, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray) -> np.ndarray | None:
        """(B, A) the masked softmax :meth:`act` samples from with ``sample=True``; None when greedy.

        A greedy policy is deterministic: a control variate at its decisions
        is zero, so evaluations (train/variance.py) skip it.
        """
        if not self.sample:
            return None
        with torch.inference_mode():
            x = torch.from_numpy(np.ascontiguousarray(obs, dtype=np.float32))
            m = torch.from_numpy(np.ascontiguousarray(mask, dtype=bool))
            logits = masked_logits(self.net(x)[0], m).double()
            return torch.softmax(logits, dim=-1).cpu().numpy() * np.asarray(mask, dtype=np.float64)


def make_ppo_agent(game: Any = None, seed: int | None = None, path: str = "", **options: Any) -> PPOAgent:
    """Factory behind the ``ppo:PATH[,sample=true][,device=cpu|cuda|auto]`` agent spec (device: cpu by default)."""
    path, *extra = path.split(",")
    for part in extra:
        key, eq, value = part.partition("=")
        if not eq:
            raise ValueError(f"bad ppo option {part!r}: expected key=value after the path")
        options[key.strip()] = value.strip()
    unknown = sorted(set(options) - {"sample", "device"})
    if unknown:
        raise ValueError(f"unknown ppo option(s) {', '.join(unknown)}; known: sample, device")
    sample = options.get("sample", False)
    if isinstance(sample, str) and sample.lower() in ("true", "false"):
        sample = sample.lower() == "true"
    if not isinstance(sample, bool):  # 'maybe' (or 'yes') was read as true, 'ture' as false
        raise ValueError(f"ppo option sample must be true or false, got {sample!r}")
    if not path:
        raise ValueError("the ppo agent needs a checkpoint: ppo:PATH")
    device = str(options.get("device", "cpu"))
    return PPOAgent.from_checkpoint(path, game, sample=sample, seed=seed, device=device)
