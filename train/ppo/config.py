"""A training run's settings: :class:`Args`, the YAML presets and ``--key value`` flags that set them, and their checks.

Every field of :class:`Args` is a flag of ``bobshat train`` (``--total-decisions
2000000``) and a key of a preset in ``configs/``; :func:`parse_args` reads a
preset, lays the flags over it, coerces each value to its field's type and
:func:`check_args` refuses what cannot run, naming the field, before anything
is made. :func:`make_net` is the network the settings describe.
"""

from __future__ import annotations

import argparse
import copy
import math
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from agents import available
from agents.checkpoint import hidden_shape_error
from agents.features import TrickFeatures
from agents.ppo_agent import DEVICES, PolicyNet
from bobshat_env.core.symmetry import trump_canonical
from bobshat_env.games import make_game
from train.runtime.kit import safe_yaml  # the one alias-safe YAML loader of every preset

if TYPE_CHECKING:
    from bobshat_env.games import Game


def _arg(default: Any, help: str) -> Any:
    """A dataclass field with a help text (shown by ``bobshat train --help``)."""
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda: copy.deepcopy(default), metadata={"help": help})
    return field(default=default, metadata={"help": help})


@dataclass
class Args:
    """Every setting of a training run; YAML presets in ``configs/`` set a subset."""

    # Experiment
    exp_name: str = _arg("ppo", "name of the experiment, part of the default run name")
    run_name: str = _arg("", "run directory under runs_dir (default: GAME_Pp_EXPNAME_sSEED)")
    runs_dir: str = _arg("runs", "where run directories (TensorBoard logs, checkpoints) go")
    seed: int = _arg(1, "seed of everything: deals, seats, opponents, network init, sampling")
    torch_threads: int = _arg(1, "torch.set_num_threads (0: torch's default; 1 measured fastest, see update_threads)")
    bf16: bool = _arg(True, "bfloat16 matrix products where the hardware has them (AVX-512/AMX, Ampere+; else fp32)")
    sparse_input: bool = _arg(
        True, "the update's first layer over the inputs' non-zeros only (float32 on CPU; agents/sparse_linear.py)"
    )
    device: str = _arg("auto", "where the network learns (and infers in-process): auto (CUDA if any), cpu, cuda")
    progress: bool = _arg(True, "show a progress bar on stderr")
    resume: bool = _arg(False, "continue the run from its ckpt.pt")
    # Game
    game: str = _arg("bobs_hat", "bobs_hat or oh_hell")
    players: int = _arg(4, "number of players")
    game_options: dict = _arg({}, "other game options, e.g. {hands: 8, no_bid: true}")
    # Rollouts
    total_decisions: int = _arg(50_000_000, "table decisions (all seats) to train for: the global step")
    time_limit_min: float = _arg(
        0.0,
        "also stop before this many minutes of wall time of this command (0: no limit; --resume: that many more "
        "minutes); the next iteration is predicted and not started if it would end past it; lr anneals over the "
        "first to end",
    )
    num_envs: int = _arg(1024, "games stepped together (split over the rollout workers when there are any)")
    num_steps: int = _arg(0, "env steps per rollout; 0: one whole game (see rollout_length)")
    train_for: str = _arg("hand", "episode = a 'hand' (hand scores) or the 'game' (game totals)")
    reward_scale: float = _arg(0.1, "score points -> reward")
    opponent_weight: float = _arg(
        0.0, "reward = own score change - this x the other seats' mean change (1: play for the margin over the table)"
    )
    gamma: float = _arg(1.0, "discount per learner decision")
    gae_lambda: float = _arg(0.95, "GAE lambda")
    learner_seats: int = _arg(1, "seats the learner holds in a game against the pool (the opponent holds the others)")
    rollout_workers: int = _arg(0, "Ray actors that play the rollouts, 1 CPU each (0: in this process; needs .[ray])")
    ray_address: str = _arg("", "the Ray cluster of the rollout workers: local (start one here), auto, HOST:PORT")
    rollout_worker_gpus: float = _arg(0.0, "GPUs per rollout worker (Ray num_gpus); >0: their inference on CUDA")
    # Optimization
    hidden: list = _arg(
        [128, 128], "hidden layer sizes of the MLP trunk: 1-64 layers of 1-16,384 units (what checkpoints may hold)"
    )
    trump_symmetry: bool = _arg(
        False, "the network sees suits relabelled so that trump is the first suit (bobshat_env.core.symmetry)"
    )
    trick_features: bool = _arg(False, "the network also reads exact trick facts (agents.features.TrickFeatures)")
    init_from: str = _arg(
        "", "a policy checkpoint whose weights start the network (fine-tuning; same game and network shape)"
    )
    learning_rate: float = _arg(3e-4, "Adam learning rate")
    anneal_lr: bool = _arg(True, "decay the learning rate linearly to 0")
    update_epochs: int = _arg(2, "passes over each rollout")
    minibatch_size: int = _arg(4096, "learner decisions per gradient step")
    update_threads: int = _arg(
        1, "update threads: each minibatch's gradient in this many shards, summed in order (numbers depend on it)"
    )
    overlap_rollout: bool = _arg(
        False,
        "collect the next rollout on a second thread while the update runs, from the weights before that update "
        "(one iteration of policy lag; twice the rollout memory)",
    )
    norm_adv: bool = _arg(True, "normalize advantages per minibatch")
    clip_coef: float = _arg(0.2, "PPO ratio clip")
    clip_vloss: bool = _arg(True, "clip the value loss too")
    ent_coef: float = _arg(0.01, "entropy bonus")
    vf_coef: float = _arg(0.5, "value loss weight")
    max_grad_norm: float = _arg(0.5, "gradient norm clip")
    target_kl: float = _arg(0.0, "stop an update's epochs early above this approx KL (0: never)")
    # Self-play
    heuristics: list = _arg(["simple", "strong"], "heuristic bots in the pool (random if none is registered)")
    self_play_prob: float = _arg(0.5, "share of games where the current policy plays every seat")
    snapshot_every: int = _arg(3, "iterations between frozen snapshots added to the pool (0: none)")
    max_snapshots: int = _arg(8, "snapshots kept in the pool (oldest evicted)")
    pfsp_power: float = _arg(2.0, "PFSP weight (1 - learner win share) ** power")
    heuristic_floor: float = _arg(0.1, "minimum probability of each heuristic in the pool")
    exploiters_every: int = _arg(
        0, "iterations between exploiters of the current policy added to the pool (train.exploit; 0: none)"
    )
    exploiter_decisions: int = _arg(2_000_000, "table decisions each exploiter trains for against the frozen policy")
    max_exploiters: int = _arg(2, "exploiters kept in the pool (oldest evicted)")
    # Evaluation, logging, checkpoints
    eval_every: int = _arg(10, "iterations between duplicate evaluations (0: only at the end, -1: never)")
    eval_deals: int = _arg(64, "deals per evaluation (each played once per seat)")
    eval_opponents: list = _arg(["random", "simple", "strong"], "bots to evaluate against (if registered)")
    checkpoint_every: int = _arg(2, "iterations between checkpoints (and at the end, and on Ctrl-C or SIGTERM)")


TRAIN_FOR = ("hand", "game")
# what a run is: must match when resuming (the game, the network's shape and input stages, the seed that
# draws its deals); the budgets, rewards, evaluation, logging, devices and optimizer settings may change
STRUCTURAL = ("game", "players", "game_options", "hidden", "trump_symmetry", "trick_features", "seed")


# --------------------------------------------------------------------------
# Arguments: a YAML preset, then --key value overrides
def _yaml_error(where: str, err: yaml.YAMLError) -> ValueError:
    """A YAML syntax error as one line naming ``where`` and the line and column of the problem."""
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    what = getattr(err, "problem", None) or str(err).splitlines()[0]
    ctx, ctx_mark = getattr(err, "context", None), getattr(err, "context_mark", None)
    if ctx and ctx_mark is not None and mark is not None and ctx_mark.line != mark.line:
        what += f" ({ctx} at line {ctx_mark.line + 1}, column {ctx_mark.column + 1})"
    return ValueError(f"{where}: not valid YAML{at}: {what}")


def _load_yaml_value(name: str, text: str) -> Any:
    try:
        return safe_yaml(text)
    except yaml.YAMLError as err:
        raise _yaml_error(f"--{name.replace('_', '-')} {text!r}", err) from None


def _coerce(name: str, value: Any, default: Any) -> Any:
    """``value`` (from YAML or the command line) as the type of ``default``; ValueError naming ``name``."""
    if isinstance(value, str) and not isinstance(default, str):
        if not isinstance(default, list) or value.strip().startswith("["):
            value = _load_yaml_value(name, value)
    if isinstance(default, float) and isinstance(value, str):
        try:  # YAML 1.1 reads "1e-3" (no dot) as a string; Python's float() reads it as a number
            value = float(value)
        except ValueError:
            pass
    if isinstance(default, list) and isinstance(value, str):
        value = [_load_yaml_value(name, v) for v in value.split(",") if v.strip()]
    ok = {
        bool: lambda v: isinstance(v, bool),
        int: lambda v: isinstance(v, int) and not isinstance(v, bool),
        float: lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        str: lambda v: isinstance(v, str),
        list: lambda v: isinstance(v, list),
        dict: lambda v: isinstance(v, dict) or v is None,
    }[type(default)]
    if isinstance(default, int) and not isinstance(default, bool) and isinstance(value, float) and value.is_integer():
        value = int(value)
    if not ok(value):
        raise ValueError(f"{name} must be of type {type(default).__name__}, got {value!r}")
    if isinstance(default, float):
        value = float(value)
    return value if not isinstance(default, dict) else dict(value or {})


def build_arg_parser() -> argparse.ArgumentParser:
    """``--config`` plus one ``--field-name VALUE`` flag per :class:`Args` field."""
    p = argparse.ArgumentParser(
        prog="bobshat train",
        description="PPO with action masking and self-play (train/ppo/). Flags override the --config preset. "
        "Ctrl-C or SIGTERM saves a checkpoint of the last update on the way out: --resume continues from it.",
        allow_abbrev=False,
    )
    p.add_argument("--config", default=None, help="a YAML preset (configs/*.yaml): a mapping of the fields below")
    defaults = Args()
    for f in fields(Args):
        default = getattr(defaults, f.name)
        flag = "--" + f.name.replace("_", "-")
        extra: dict[str, Any] = {"nargs": "?", "const": "true"} if isinstance(default, bool) else {}
        p.add_argument(
            flag, dest=f.name, default=argparse.SUPPRESS, help=f"{f.metadata['help']} ({default!r})", **extra
        )
    return p


def parse_args(argv: list[str] | None = None) -> Args:
    """Args from ``--config`` (YAML) and command-line overrides; clear errors for bad keys or values."""
    ns = vars(build_arg_parser().parse_args(argv))
    config = ns.pop("config")
    values: dict[str, Any] = {}
    known = {f.name for f in fields(Args)}
    if config:
        path = Path(config)
        if not path.is_file():
            raise FileNotFoundError(f"no config file {config!r}")
        try:
            data = safe_yaml(path.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as err:
            raise _yaml_error(config, err) from None
        except UnicodeDecodeError as err:
            raise ValueError(f"{config}: not a YAML text file (not UTF-8 at byte {err.start})") from None
        if not isinstance(data, dict):
            raise ValueError(f"{config}: a config is a mapping of Args fields, got {type(data).__name__}")
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"{config}: unknown key(s) {', '.join(unknown)}; known keys: {', '.join(sorted(known))}")
        values.update(data)
    values.update(ns)
    defaults = Args()
    args = Args(**{k: _coerce(k, v, getattr(defaults, k)) for k, v in values.items()})
    check_args(args)
    return args


def check_args(args: Args, pool: bool = True) -> None:
    """Reject settings that cannot run, naming the field.

    pool: whether the opponent pool is made of ``heuristics`` by name (``train``); an exploit run brings
    its own pool (its target, any spec, checked when built) and passes False.
    """
    if args.train_for not in TRAIN_FOR:
        raise ValueError(f"train_for must be one of {', '.join(TRAIN_FOR)}, got {args.train_for!r}")
    for name in ("num_envs", "minibatch_size", "update_epochs", "update_threads", "checkpoint_every", "max_exploiters"):
        if getattr(args, name) < 1:
            raise ValueError(f"{name} must be at least 1, got {getattr(args, name)}")
    for name in ("snapshot_every", "exploiters_every", "exploiter_decisions"):
        if getattr(args, name) < 0:
            raise ValueError(f"{name} must be >= 0 (0: none), got {getattr(args, name)}")
    if args.learner_seats < 1 or 1 < args.players <= args.learner_seats:
        raise ValueError(
            f"learner_seats must be 1-{args.players - 1} with {args.players} players, got {args.learner_seats}"
        )
    if args.num_steps < 0:
        raise ValueError(f"num_steps must be >= 0 (0: one whole game), got {args.num_steps}")
    if args.total_decisions < 1:  # 0 trained nothing, wrote no checkpoint, and said "trained 0"
        raise ValueError(f"total_decisions must be at least 1, got {args.total_decisions}")
    if args.time_limit_min < 0:
        raise ValueError(f"time_limit_min must be >= 0 (0: no limit), got {args.time_limit_min}")
    shape_error = hidden_shape_error(args.hidden)  # the loader's schema: what trains must load
    if shape_error:
        raise ValueError(f"hidden must be {shape_error}")
    try:  # the bots are built on the run's game (its own checks name a bad game or option first)
        table = make_game(args.game, players=args.players, **args.game_options)
    except Exception:  # reported by the checks of the game itself
        table = None
    if pool:
        _check_agent_names("heuristics", args.heuristics, table)
    elif not isinstance(args.heuristics, list) or not all(isinstance(h, str) for h in args.heuristics):
        raise ValueError(f"heuristics must be a list of agent specs, got {args.heuristics!r:.80}")
    _check_agent_names("eval_opponents", args.eval_opponents, table)
    if not 0.0 <= args.opponent_weight <= 1.0:
        raise ValueError(f"opponent_weight must be in [0, 1], got {args.opponent_weight}")
    if not 0.0 <= args.self_play_prob <= 1.0:
        raise ValueError(f"self_play_prob must be in [0, 1], got {args.self_play_prob}")
    if args.device not in DEVICES and not args.device.startswith("cuda:"):
        raise ValueError(f"device must be one of {', '.join(DEVICES)} (or cuda:N), got {args.device!r}")
    if not 0 <= args.rollout_workers <= args.num_envs:
        raise ValueError(
            f"rollout_workers must be 0-{args.num_envs} (num_envs games split over them), got {args.rollout_workers}"
        )
    if args.rollout_worker_gpus < 0:
        raise ValueError(f"rollout_worker_gpus must be >= 0, got {args.rollout_worker_gpus}")
    if args.rollout_workers and args.overlap_rollout:
        raise ValueError("overlap_rollout is for the in-process collector: set rollout_workers to 0, or turn it off")
    if not args.rollout_workers and (args.ray_address or args.rollout_worker_gpus):
        raise ValueError("ray_address and rollout_worker_gpus are for rollout workers: set rollout_workers > 0")
    for f in fields(Args):
        value = getattr(args, f.name)
        if isinstance(value, float) and not math.isfinite(value):  # NaN passes every comparison
            raise ValueError(f"{f.name} must be a finite number, got {value}")
        if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**63:
            # the README's rule for every count, size and seed, also for the fields without a range of their own
            raise ValueError(f"{f.name} must be a 64-bit integer (|n| < 2**63), got {value:,}")
        lo, hi = _RANGES.get(f.name, (None, None))
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            want = f"at least {lo:,}" if hi is None else f"{lo:,} to {hi:,}"
            raise ValueError(f"{f.name} must be {want}, got {value:,}")


def _check_agent_names(name: str, specs: Any, game: Game | None = None) -> None:
    """Each of ``specs`` is a registered agent's name that builds alone: the opponent pool and the evaluation
    make their bots by name (``strong``), so a spec with options or a file (``ppo:PATH``, ``bid=...``), a
    name that needs one (``ppo``), or a typo would be left out with at most a warning; refused here instead,
    before anything is made. ``game``: the run's game, to build each name on (None: names only)."""
    if not isinstance(specs, list) or not all(isinstance(spec, str) for spec in specs):
        raise ValueError(f"{name} must be a list of agent names, got {specs!r:.80}")
    known = available()
    for spec in specs:
        if spec not in known:
            if spec.partition(":")[0].strip() in known or spec.startswith(("bid=", "play=")):
                raise ValueError(
                    f"{name}: {spec[:80]!r} is not an agent name; {name} takes registered names only "
                    f"(no options or files): {', '.join(known)}"
                )
            raise ValueError(f"{name}: unknown agent {spec[:80]!r}; known agents: {', '.join(known)}")
        if game is not None:
            from agents import make_agent

            try:
                make_agent(spec, game, seed=0)
            except (ValueError, TypeError) as err:
                raise ValueError(f"{name}: {spec!r} cannot be used by name ({err})") from None


# Ranges (inclusive; None: open) of the numeric fields the checks above leave open. Seeds are 64-bit
# keys (numpy refuses negative ones with a message that names no field); num_envs and eval_deals are
# capped like the command line's --batch-size and --deals, so a typo cannot allocate until memory runs out.
_RANGES: dict[str, tuple[Any, Any]] = {
    "seed": (0, 2**63 - 1),
    "torch_threads": (0, 1024),
    "update_threads": (1, 64),
    "num_envs": (1, 65_536),
    "num_steps": (0, 100_000),
    "gamma": (0.0, 1.0),
    "gae_lambda": (0.0, 1.0),
    # upper bounds far above any useful value, below where float32 arithmetic overflows (a learning rate of
    # 1e300 was a RuntimeError from Adam; a PFSP power of 1e300 makes every weight 0 and the draw NaN)
    "learning_rate": (0.0, 10.0),
    "reward_scale": (0.0, 1e6),
    "clip_coef": (0.0, 1e6),
    "ent_coef": (0.0, 1e6),
    "vf_coef": (0.0, 1e6),
    "max_grad_norm": (0.0, 1e12),
    "target_kl": (0.0, 1e6),
    "pfsp_power": (0.0, 100.0),
    "time_limit_min": (0.0, 1e6),
    "exploiter_decisions": (0, 10**15),
    "total_decisions": (1, 10**15),
    "heuristic_floor": (0.0, 1.0),
    "max_snapshots": (0, 10_000),
    "eval_every": (-1, None),
    "eval_deals": (1, 100_000),
}


def default_run_name(args: Args) -> str:
    """``run_name``, or one made from the game, players, experiment and seed (stable, so --resume finds it)."""
    return args.run_name or f"{args.game}_{args.players}p_{args.exp_name}_s{args.seed}"


def make_net(args: Args, game: Game) -> PolicyNet:
    """The policy network ``args`` describe (hidden sizes, suit symmetry, trick features), freshly initialized."""
    symmetry = trump_canonical(game.name, game.config) if args.trump_symmetry else None
    features = TrickFeatures.for_game(game.name, game.config) if args.trick_features else None
    return PolicyNet(game.obs_size(), game.n_actions, tuple(args.hidden), symmetry, features)
