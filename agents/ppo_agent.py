"""A trained PPO policy as a batched agent: the network, masked sampling, and building one from a checkpoint.

``make_agent("ppo:runs/x/ckpt.pt", game)`` loads a checkpoint written by
``bobshat train`` (or a policy exported from one) and acts greedily; add
``,sample=true`` (``ppo:PATH,sample=true``) to sample from the policy instead.
The file format and the layout of its keys are :mod:`agents.checkpoint`'s;
here the ``policy.*`` tensors become a :class:`PolicyNet`, whose tensors must
have the shapes the metadata describes.

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

import os
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import torch
from torch import nn

from agents.checkpoint import (
    POLICY_PREFIX,
    CheckpointError,
    check_compatible,
    check_meta,
    load_checkpoint,
)
from agents.features import TrickFeatures, prepare_inputs
from agents.sparse_linear import SparseRows, sparse_linear
from bobshat_env.core.symmetry import SuitSymmetry

if TYPE_CHECKING:
    from bobshat_env.games import Game

MASK_GAP = 80.0  # illegal logits sit this far below the row's best legal logit (probability < 1e-34)


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

    sym_act: torch.Tensor  # a buffer (with sym_key and sym_obs) when there is a symmetry

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

    def head(self, x: torch.Tensor | SparseRows) -> tuple[torch.Tensor, torch.Tensor]:
        """(logits, value) of prepared inputs (:meth:`prepare`), in the network's own action labelling.

        ``x`` as :class:`~agents.sparse_linear.SparseRows` (the trainer's update, ``Args.sparse_input``): the
        first layer is the same product over x's non-zeros only (equal to float32 rounding). Agents pass
        tensors, so a shipped policy's decisions stay the same bit for bit."""
        if isinstance(x, SparseRows):
            if not len(self.trunk):
                x = x.dense().to(self.device)
            else:
                first = cast(nn.Linear, self.trunk[0])  # the trunk alternates Linear and ReLU
                return self._heads(self.trunk[1:](sparse_linear(x, first.weight, first.bias)))
        return self._heads(self.trunk(x))

    def _heads(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(logits, value) from the trunk's output."""
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
# A network from a checkpoint's tensors
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
    tensors: dict[str, torch.Tensor], meta: dict[str, Any], prefix: str = POLICY_PREFIX, path: str | os.PathLike = ""
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
    path: str | os.PathLike, game: Game | None = None, device: str | torch.device = "cpu"
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
        game: Game | None = None,
        sample: bool = False,
        seed: int | None = None,
        device: str | torch.device = "cpu",
    ) -> PPOAgent:
        """The agent of checkpoint ``path`` (checked against ``game``), its network on ``device``."""
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
        is zero, so evaluations (train/evaluate/variance.py) skip it.
        """
        if not self.sample:
            return None
        with torch.inference_mode():
            x = torch.from_numpy(np.ascontiguousarray(obs, dtype=np.float32))
            m = torch.from_numpy(np.ascontiguousarray(mask, dtype=bool))
            logits = masked_logits(self.net(x)[0], m).double()
            return torch.softmax(logits, dim=-1).cpu().numpy() * np.asarray(mask, dtype=np.float64)


def make_ppo_agent(game: Game | None = None, seed: int | None = None, path: str = "", **options: Any) -> PPOAgent:
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
