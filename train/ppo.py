"""PPO with invalid-action masking and self-play for the batched bobshat env.

Run it as ``bobshat train --config configs/bobs_hat_4p.yaml [--key value ...]``
(every field of :class:`Args` is a flag: ``--total-decisions 2000000``,
``--resume``) or ``python -m train.ppo --config ...``. It reads top to bottom
like CleanRL's ``ppo.py``: arguments, set-up, then :func:`train`'s loop of
named phases, each a function of what it is given:

1. :meth:`RolloutCollector.collect_rollout`: ``num_steps`` env steps of the
   learner and its pool opponents, then bootstrap values and GAE, returned
   as a :class:`Rollout`;
2. :func:`ppo_update`: clipped PPO epochs over that batch;
3. :func:`evaluate_and_log`: the ``charts/`` and ``losses/`` scalars, and a
   duplicate evaluation when one is due;
4. a frozen snapshot of the policy joins the pool, every ``snapshot_every``;
   an exploiter of it (:func:`train.exploit.add_exploiter`), every
   ``exploiters_every``;
5. :func:`checkpoint`: ``ckpt.pt`` and ``policy.pt``.

The rollout seam (for distributed rollouts)
    A :class:`Rollout` is a plain dataclass of NumPy arrays (the learner's
    decisions in the network's labelling, their log-probabilities and
    values when sampled, GAE advantages and returns) and a few counts, so it
    pickles. Advantages are computed by the collector because GAE follows
    each (game, seat)'s interleaved decisions, which live in one env;
    rollouts of several collectors can then be concatenated row-wise for one
    update. A :class:`RolloutCollector` is built from ``(env, net, pool,
    gen, args, seed)`` and reads nothing else (torch's global RNG samples
    the actions): a rollout worker builds one on its own
    :class:`~bobshat_env.vector.VectorEnv` slots with a copy of the policy
    and of the pool's members, and ships its rollouts to the learner's
    :func:`ppo_update`. The collector updates the PFSP record of the pool it
    holds as games end (opponents drawn later in the same rollout depend on
    it); a rollout also carries each finished game's opponent and the
    learner's win share (``pool_opponents``, ``win_shares``), so a learner
    whose pool is not the worker's can ``pool.record`` them itself.

One policy for all seats
    Observations are seat-relative, so one network plays every seat. Illegal
    actions get a logit 80 below the best legal one
    (:func:`agents.ppo_agent.masked_logits`): probability below 1e-34, never
    sampled, no gradient.

Who plays (:mod:`train.selfplay`)
    Game ``i`` of the batch seats the learner in one seat (``learner_seats``
    of them) and one opponent from the pool (heuristic bots, frozen past
    snapshots and exploiters of the policy, drawn by PFSP) in the others;
    with probability ``self_play_prob`` the current policy plays every seat
    instead. Seat and opponent are drawn again when the game ends. Only the
    learner's decisions are trained on.

Rewards and episodes in a turn-based game
    Seats take turns, so a learner decision is followed by other seats'
    decisions before its next one. Each learner decision is credited with its
    own seat's score changes from its action up to its next decision (or the
    episode's end), scaled by ``reward_scale``. With ``train_for: hand`` (the
    default) a hand is an episode: scores are paid when it ends and the value
    function bootstraps within it; with ``train_for: game`` the episode is the
    whole game and returns are game totals. GAE runs over each (game, seat)'s
    sequence of decisions; at the end of a rollout, a decision whose episode
    is still running bootstraps from the value of the current state seen
    from its seat (whoever is to act).

Counting
    ``global_step`` counts *table decisions* (every seat's, as the env steps
    them); the learner trains on its own share of them (``learner
    decisions``). ``charts/SPS`` is table decisions per second over the run,
    rollout and learning included.

Logs and checkpoints
    TensorBoard under ``runs/<run_name>/`` (tags ``charts/``, ``losses/``).
    ``ckpt.pt`` (everything needed to resume) and ``policy.pt`` (the network
    only, for ``ppo:PATH``) are written atomically every
    ``checkpoint_every`` iterations and at the end; ``--resume`` continues
    from ``ckpt.pt`` with the optimizer, step counters, pool and RNG states,
    if it is this run's (:func:`check_same_run`). The run folder is locked
    while a run uses it (:func:`run_lock`).

Budgets
    ``total_decisions`` and ``time_limit_min``, whichever ends first. The
    time limit is this command's wall time (a resumed run gets it again), and
    :class:`IterationClock` predicts each next iteration so that the run ends
    within one iteration of the limit, never knowingly past it.
    The format is a dict of tensors read with ``weights_only=True`` (see
    :mod:`agents.ppo_agent`).
"""

from __future__ import annotations

import argparse
import copy
import fcntl
import json
import math
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml
from torch import nn
from torch.utils.tensorboard import SummaryWriter

from agents import available
from agents.features import TrickFeatures
from agents.ppo_agent import (
    DEVICES,
    CheckpointError,
    PolicyNet,
    PPOAgent,
    hidden_shape_error,
    load_checkpoint,
    load_policy,
    masked_logits,
    remove_stale_temporaries,
    resolve_device,
    sample_actions,
    save_checkpoint,
)
from bobshat_env.core.symmetry import trump_canonical
from bobshat_env.games import make_game
from bobshat_env.paths import check_writable, save_figure
from bobshat_env.seating import SeatDispatch
from bobshat_env.vector import VectorEnv
from train.evaluate.duplicate import duplicate_evals
from train.evaluate.statistics import win_shares
from train.progress import ProgressBar
from train.selfplay import SELF, OpponentPool


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
    torch_threads: int = _arg(1, "torch.set_num_threads (0: torch's default; >1 thrashes on a busy machine)")
    bf16: bool = _arg(True, "run the network's matrix products in bfloat16 (autocast; fp32 weights and losses)")
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
    checkpoint_every: int = _arg(2, "iterations between checkpoints (and at the end)")


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


class _NoAliasLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing aliases (``*name``): a config has no use for them, and a few nested ones
    (a "billion laughs") make a 1 KB file expand to billions of entries when the settings are copied."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark
            raise yaml.composer.ComposerError(None, None, "aliases (*name) are not allowed in a config", mark)
        return super().compose_node(parent, index)


def safe_yaml(text: str) -> Any:
    """``yaml.safe_load`` without aliases (:class:`_NoAliasLoader`); a yaml.YAMLError for bad text."""
    return yaml.load(text, Loader=_NoAliasLoader)  # noqa: S506 - a SafeLoader subclass


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
        description="PPO with action masking and self-play (train/ppo.py). Flags override the --config preset.",
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
    for name in ("num_envs", "minibatch_size", "update_epochs", "checkpoint_every", "max_exploiters"):
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
    if args.total_decisions < 0:
        raise ValueError(f"total_decisions must be >= 0, got {args.total_decisions}")
    if args.time_limit_min < 0:
        raise ValueError(f"time_limit_min must be >= 0 (0: no limit), got {args.time_limit_min}")
    shape_error = hidden_shape_error(args.hidden)  # the loader's schema: what trains must load
    if shape_error:
        raise ValueError(f"hidden must be {shape_error}")
    try:  # the bots are built on the run's game (its own checks name a bad game or option first)
        table = make_game(args.game, players=args.players, **args.game_options)
    except Exception:  # noqa: BLE001 - reported by the checks of the game itself
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
    if not args.rollout_workers and (args.ray_address or args.rollout_worker_gpus):
        raise ValueError("ray_address and rollout_worker_gpus are for rollout workers: set rollout_workers > 0")
    for f in fields(Args):
        value = getattr(args, f.name)
        if isinstance(value, float) and not math.isfinite(value):  # NaN passes every comparison
            raise ValueError(f"{f.name} must be a finite number, got {value}")
        lo, hi = _RANGES.get(f.name, (None, None))
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            want = f"at least {lo:,}" if hi is None else f"{lo:,} to {hi:,}"
            raise ValueError(f"{f.name} must be {want}, got {value:,}")


def _check_agent_names(name: str, specs: Any, game: Any = None) -> None:
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
            from agents import make_agent  # noqa: PLC0415

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
    "total_decisions": (0, 10**15),
    "heuristic_floor": (0.0, 1.0),
    "max_snapshots": (0, 10_000),
    "eval_every": (-1, None),
    "eval_deals": (1, 100_000),
}


RUN_FILES = ("ckpt.pt", "ckpt.pt.json", "policy.pt", "policy.pt.json")  # what save_training_state replaces


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


def default_run_name(args: Args) -> str:
    """``run_name``, or one made from the game, players, experiment and seed (stable, so --resume finds it)."""
    return args.run_name or f"{args.game}_{args.players}p_{args.exp_name}_s{args.seed}"


# --------------------------------------------------------------------------
# Checkpoints (format: agents/ppo_agent.py)
def _net_meta(game: Any, net: PolicyNet) -> dict[str, Any]:
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


def save_training_state(
    path: Path, args: Args, game: Any, net: PolicyNet, optimizer: Any, pool: Any, progress: dict[str, Any]
) -> None:
    """ckpt.pt (resumable) and policy.pt (the network only) beside it; ``progress``: counters and RNG state."""
    meta = {**_net_meta(game, net), **progress}
    tensors = {f"policy.{k}": v for k, v in net.state_dict().items()}
    save_checkpoint(path.with_name("policy.pt"), tensors, {k: v for k, v in meta.items() if k != "rng_numpy"})
    opt = optimizer.state_dict()
    for pid, st in opt["state"].items():
        for k, v in st.items():
            tensors[f"optim.{pid}.{k}"] = v if isinstance(v, torch.Tensor) else torch.tensor(v)
    pool_tensors, pool_meta = pool.state()
    tensors.update(pool_tensors)
    tensors["rng.torch"] = torch.get_rng_state()
    meta.update(args=asdict(args), optim_param_groups=opt["param_groups"], pool=pool_meta)
    save_checkpoint(path, tensors, meta)


def check_same_run(path: Path, meta: dict[str, Any], args: Args, game: Any) -> None:
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


def load_training_state(path: Path, args: Args, game: Any, net: nn.Module, optimizer: Any, pool: Any) -> dict:
    """Restore what :func:`save_training_state` wrote; returns the progress counters and RNG state.

    A damaged or tampered part is a CheckpointError naming the file and the
    part (the counters' types and ranges are checked by ``load_checkpoint``).
    """
    tensors, meta = load_checkpoint(path)
    if "optim_param_groups" not in meta:
        raise CheckpointError(f"{str(path)!r} holds a policy only, not a training state to resume")
    need = ("args", "game", "obs_size", "n_actions", "pool", "rng_numpy", "global_step", "iteration")
    need += ("learner_decisions", "games", "elapsed_s")
    missing = [k for k in need if k not in meta] + [k for k in ("rng.torch",) if k not in tensors]
    if missing:
        raise CheckpointError(f"cannot resume {str(path)!r}: it lacks {', '.join(missing)}")
    check_same_run(path, meta, args, game)

    def restore(part: str, step: Any) -> None:
        try:
            step()
        except (KeyError, TypeError, ValueError, RuntimeError, IndexError, AttributeError) as err:
            raise CheckpointError(f"cannot resume {str(path)!r}: its {part} is damaged: {err}") from err

    restore("policy", lambda: net.load_state_dict({k[7:]: v for k, v in tensors.items() if k.startswith("policy.")}))

    def optim() -> None:
        state: dict[int, dict[str, torch.Tensor]] = {}
        for k, v in tensors.items():
            if k.startswith("optim."):
                _, pid, name = k.split(".", 2)
                state.setdefault(int(pid), {})[name] = v
        groups = [{**g, "betas": tuple(g["betas"])} if "betas" in g else g for g in meta["optim_param_groups"]]
        optimizer.load_state_dict({"state": state, "param_groups": groups})

    restore("optimizer state (optim_param_groups, optim.*)", optim)
    restore("opponent pool (pool, pool.*)", lambda: pool.load_state(tensors, meta["pool"], meta))
    restore("torch RNG state (rng.torch)", lambda: torch.set_rng_state(tensors["rng.torch"]))
    # the caller sets its generator from rng_numpy: try it on a scratch one first
    restore(
        "numpy RNG state (rng_numpy)",
        lambda: setattr(np.random.default_rng().bit_generator, "state", meta["rng_numpy"]),
    )
    return meta


def export_policy(src: str | os.PathLike, dst: str | os.PathLike) -> None:
    """Write the network of checkpoint ``src`` alone to ``dst`` (small, for shipping as ``ppo:dst``)."""
    tensors, meta = load_checkpoint(src)
    keep = ("game", "players", "config", "view", "obs_size", "n_actions", "hidden", "symmetry", "features")
    keep += ("global_step", "learner_decisions", "iteration", "run_name")
    policy = {k: v for k, v in tensors.items() if k.startswith("policy.")}
    save_checkpoint(dst, policy, {k: meta[k] for k in keep if k in meta})


# --------------------------------------------------------------------------
def margin_rewards(rewards: np.ndarray, opponent_weight: float) -> np.ndarray:
    """Each seat's score change less ``opponent_weight`` times the mean change of the other seats.

    ``rewards`` is (B, P). With weight 0 a seat plays for its own score; with
    weight 1 for its margin over the table's average opponent, which is what
    winning and duplicate evaluation measure: a point taken from an opponent
    (a broken bid, the -10 hat passed on) counts as well as one scored. The
    game is then zero-sum over the seats.
    """
    if opponent_weight == 0.0:
        return rewards
    P = rewards.shape[1]
    others = (rewards.sum(axis=1, keepdims=True) - rewards) / (P - 1)
    return rewards - opponent_weight * others


def interleaved_gae(
    rewards: np.ndarray,
    values: np.ndarray,
    dones: np.ndarray,
    game: np.ndarray,
    seat: np.ndarray,
    step_start: np.ndarray,
    bootstrap: np.ndarray,
    gamma: float,
    gae_lambda: float,
) -> np.ndarray:
    """GAE advantages of decisions from many interleaved (game, seat) sequences.

    Decision ``i`` was made by ``seat[i]`` in game ``game[i]``; the decisions
    of env step ``t`` are ``step_start[t]:step_start[t + 1]`` (at most one
    per game). ``rewards[i]`` is what that seat scored until its next
    decision, ``dones[i]`` whether its episode ended before then, and
    ``bootstrap[g, p]`` the value after the last decision of (g, p). Each
    sequence gets the usual recursion ``A_i = delta_i + gamma lambda A_next``,
    vectorized over games by walking the steps backwards.
    """
    adv = np.zeros(len(rewards), dtype=np.float32)
    next_value, next_adv = bootstrap.astype(np.float32).copy(), np.zeros_like(bootstrap, dtype=np.float32)
    for t in reversed(range(len(step_start) - 1)):
        s, e = step_start[t], step_start[t + 1]
        if s == e:
            continue
        g, p = game[s:e], seat[s:e]
        live = 1.0 - dones[s:e]
        delta = rewards[s:e] + gamma * next_value[g, p] * live - values[s:e]
        adv[s:e] = delta + gamma * gae_lambda * live * next_adv[g, p]
        next_value[g, p], next_adv[g, p] = values[s:e], adv[s:e]
    return adv


# --------------------------------------------------------------------------
def rollout_length(game: Any) -> int:
    """Env steps of one whole game, measured by playing one at random.

    Both games have a fixed number of decisions per game (Bob's Hat with 4
    players: 470), and the vector env starts all its games together, so its
    games stay in step: a rollout of exactly one game's length covers every
    hand and phase once, with no episode cut off. Shorter rollouts would
    train on one stretch of the game at a time (hand 1 bidding, then hand 10
    play, ...).
    """
    env = VectorEnv(game, num_envs=1, copy_obs=False)
    ts = env.reset(seed=0)
    gen = np.random.default_rng(0)
    steps = 0
    while True:
        steps += 1
        legal = np.flatnonzero(ts.action_mask[0])
        ts = env.step(np.array([gen.choice(legal)]))
        if ts.done[0]:
            return steps


def _env_seed(seed: int, iteration: int) -> int:
    """Seed of the env's games from iteration ``iteration`` on (a resumed run draws fresh games)."""
    return int(np.random.SeedSequence([seed, iteration]).generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))


# --------------------------------------------------------------------------
# The rollout: a plain batch of learner decisions, and the collector that fills it
def _autocast(bf16: bool, device_type: str = "cpu") -> torch.autocast:
    """bfloat16 matrix products on ``device_type`` where ``bf16`` (fast on CPUs with AMX/AVX-512 BF16 and on
    CUDA GPUs from Ampere on), else a no-op."""
    return torch.autocast(device_type, dtype=torch.bfloat16, enabled=bf16)


def _net_input(bf16: bool) -> torch.dtype:
    """The type stored float16 observations go to the network in: the one its first product casts them to
    anyway (float16 -> bfloat16 rounds exactly as float16 -> float32 -> bfloat16 does, one conversion, not two)."""
    return torch.bfloat16 if bf16 else torch.float32


@dataclass
class Rollout:
    """One rollout's learner decisions with their advantages, and what the rollout measured.

    Row ``i`` is one learner decision. Observations, masks and actions are in
    the network's own labelling (``trump_symmetry``), so :func:`ppo_update`
    needs no relabelling. Advantages are already computed: GAE needs the
    interleaving of (game, seat) sequences, which is local to one env, so
    batches from several collectors can simply be concatenated. The arrays of
    :meth:`RolloutCollector.collect_rollout` are views of the collector's
    buffers, valid until its next rollout (pickling copies them).
    """

    obs: np.ndarray  # (n, input_size) float16: network inputs
    mask: np.ndarray  # (n, A) bool: legal actions
    actions: np.ndarray  # (n,) int64
    logprobs: np.ndarray  # (n,) float32: log-probability of the action when it was sampled
    values: np.ndarray  # (n,) float32: value estimates when it was sampled
    advantages: np.ndarray  # (n,) float32: GAE
    returns: np.ndarray  # (n,) float32: advantages + values
    env_steps: int  # table decisions stepped (all seats): the global step's increment
    seconds: float  # wall time of the rollout (GAE included)
    episode_returns: np.ndarray  # unscaled learner returns of the episodes that ended
    pool_opponents: np.ndarray  # pool index of the opponent of each finished game against the pool
    final_scores: np.ndarray  # the learner's total in each of those games
    win_shares: np.ndarray  # the learner's win share in each of those games
    self_play_games: int  # finished games of pure self-play

    @property
    def n(self) -> int:
        """Learner decisions in the rollout."""
        return int(self.actions.shape[0])

    @property
    def games(self) -> int:
        """Games finished during the rollout."""
        return self.self_play_games + int(self.pool_opponents.shape[0])


class RolloutCollector:
    """Plays the learner and its opponent pool on one VectorEnv; :meth:`collect_rollout` returns a :class:`Rollout`.

    It reads only what it is given: ``env`` (its own game slots, reset here
    with ``seed``), ``net`` (the policy it samples from; a copy in a rollout
    worker), ``pool`` (the opponents, and the PFSP record it updates as games
    end), ``gen`` (draws of seats and opponents) and ``args`` (rollout
    length, rewards, GAE, bf16). Action sampling draws from torch's global
    RNG, seeded by :func:`train`. Game ``i`` of the env seats the learner in
    ``learner_seats[i]`` (``args.learner_seats`` distinct seats; its first
    is ``learner_seat[i]``) and pool member ``opp[i]`` in the other seats
    (``SELF``: the learner everywhere); both are drawn again when it ends.
    The env, the seating and the running episodes carry over from one
    rollout to the next.
    """

    def __init__(
        self, env: VectorEnv, net: PolicyNet, pool: OpponentPool, gen: np.random.Generator, args: Args, seed: int
    ) -> None:
        self.env, self.net, self.pool, self.gen, self.args = env, net, pool, gen, args
        game = env.game
        B, P, A = env.num_envs, game.players, game.n_actions
        self.ts = env.reset(seed=seed)
        self.rows_all = np.arange(B)
        self.learner_seats = np.zeros((B, args.learner_seats), dtype=np.int64)  # the learner's seats in each game
        self.opp = np.zeros(B, dtype=np.int64)  # pool member in the other seats (SELF: the learner everywhere)
        self.is_learner = np.zeros((B, P), dtype=bool)  # (B, P)
        self._seat_games(self.rows_all)
        self.seats = SeatDispatch(game, B, [m.agent for m in pool.members])  # with the public void record

        # storage: at most one learner decision per game and step
        self.T = T = args.num_steps or rollout_length(game)
        cap = T * B
        self.obs_buf = np.zeros((cap, net.input_size), dtype=np.float16)  # 0/1 and small fractions: half the memory
        self.obs_buf_t = torch.from_numpy(self.obs_buf)  # same memory: torch converts to float16 ~7x faster than NumPy
        self.mask_buf = np.zeros((cap, A), dtype=bool)
        self.act_buf = np.zeros(cap, dtype=np.int64)
        self.logp_buf = np.zeros(cap, dtype=np.float32)
        self.val_buf = np.zeros(cap, dtype=np.float32)
        self.rew_buf = np.zeros(cap, dtype=np.float32)  # scaled score changes credited to the decision
        self.done_buf = np.zeros(cap, dtype=bool)  # the episode ended before this seat's next decision
        self.game_buf = np.zeros(cap, dtype=np.int64)
        self.seat_buf = np.zeros(cap, dtype=np.int64)
        self.step_start = np.zeros(T + 1, dtype=np.int64)  # decisions of step t: [step_start[t], step_start[t+1])
        self.pending = np.full((B, P), -1, dtype=np.int64)  # each (game, seat)'s latest decision collecting rewards
        self.hand_no = env.hand_number
        self.ep_return = np.zeros((B, P), dtype=np.float64)  # unscaled learner returns of the running episodes
        self.n = 0
        self.on_step: Callable[[int, int], None] | None = None  # called after each env step with (step, T)

    def collect_rollout(self) -> Rollout:
        """``T`` env steps, then the bootstrap values and GAE: one :class:`Rollout`."""
        t0 = time.perf_counter()
        B, T, args = self.env.num_envs, self.T, self.args
        self.n = 0
        self.pending[:] = -1  # the last rollout's decisions were bootstrapped; none carries over
        self._returns: list[np.ndarray] = []
        self._results: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self._self_games = 0
        for step in range(T):
            self.step_start[step] = self.n
            actions = np.empty(B, dtype=np.int64)
            mine = self.is_learner[self.rows_all, self.ts.seat]
            self._learner_acts(np.nonzero(mine)[0], actions)
            self._opponents_act(np.nonzero(~mine)[0], actions)
            self._advance(actions)
            if self.on_step is not None:
                self.on_step(step + 1, T)
        self.step_start[T] = n = self.n
        adv = interleaved_gae(
            self.rew_buf[:n],
            self.val_buf[:n],
            self.done_buf[:n],
            self.game_buf[:n],
            self.seat_buf[:n],
            self.step_start,
            self._bootstrap(),
            args.gamma,
            args.gae_lambda,
        )
        results = [np.concatenate(r) for r in zip(*self._results)] if self._results else [np.zeros(0)] * 3
        return Rollout(
            obs=self.obs_buf[:n],
            mask=self.mask_buf[:n],
            actions=self.act_buf[:n],
            logprobs=self.logp_buf[:n],
            values=self.val_buf[:n],
            advantages=adv,
            returns=adv + self.val_buf[:n],
            env_steps=B * T,
            seconds=time.perf_counter() - t0,
            episode_returns=np.concatenate(self._returns) if self._returns else np.zeros(0),
            pool_opponents=results[0].astype(np.int64),
            final_scores=results[1],
            win_shares=results[2],
            self_play_games=self._self_games,
        )

    def _learner_acts(self, rows: np.ndarray, actions: np.ndarray) -> None:
        """Sample the learner's actions in games ``rows`` and store its decisions."""
        k = rows.size
        if not k:
            return
        net, ts, n = self.net, self.ts, self.n
        sl = slice(n, n + k)
        # stored in the network's own labelling (trump_symmetry): the update then needs no relabelling
        r_t = torch.from_numpy(rows)
        x, m, k_sym = net.prepare(
            torch.from_numpy(ts.obs).index_select(0, r_t), torch.from_numpy(ts.action_mask).index_select(0, r_t)
        )
        self.obs_buf_t[sl].copy_(x)
        self.mask_buf[sl] = m.numpy()
        dev = net.device  # the input stage ran on the CPU; the products run where the weights are
        with torch.inference_mode(), _autocast(self.args.bf16, dev.type):
            logits, value = net.head(self.obs_buf_t[sl].to(dev, _net_input(self.args.bf16)))  # float16: as the update
            logits = masked_logits(logits.float(), torch.from_numpy(self.mask_buf[sl]))
            a = sample_actions(logits).cpu()
            logp = torch.log_softmax(logits, dim=-1).gather(1, a.to(dev)[:, None]).squeeze(1)
        self.act_buf[sl], self.logp_buf[sl] = a.numpy(), logp.cpu().numpy()
        self.val_buf[sl] = value.float().cpu().numpy()
        actions[rows] = net.original_actions(a, k_sym).numpy()
        self.rew_buf[sl], self.done_buf[sl] = 0.0, False
        seat = ts.seat[rows]
        self.game_buf[sl], self.seat_buf[sl] = rows, seat
        self.pending[rows, seat] = np.arange(n, n + k)
        self.n += k

    def _opponents_act(self, rows: np.ndarray, actions: np.ndarray) -> None:
        """Each pool member acts in the games ``rows`` where one of its seats is to play."""
        ts, agents = self.ts, [m.agent for m in self.pool.members]
        self.seats.act(agents, self.opp[rows], rows, ts.obs, ts.action_mask, ts.seat, out=actions)

    def _advance(self, actions: np.ndarray) -> None:
        """Step the env; credit rewards, close episodes, and reseat the games that ended."""
        args, env, pending = self.args, self.env, self.pending
        self.seats.before_step(env.state, actions)
        ts = self.ts = env.step(actions)

        # credit each seat's score change (less opponent_weight x the others' mean) to its pending decision
        has = pending >= 0
        self.rew_buf[pending[has]] += margin_rewards(ts.rewards, args.opponent_weight)[has] * args.reward_scale
        self.ep_return += np.where(self.is_learner, ts.rewards, 0.0)
        hand_no = env.hand_number
        new_hand = ts.done | (hand_no != self.hand_no)
        self.hand_no = hand_no
        self.seats.after_step(new_hand)
        boundary = ts.done if args.train_for == "game" else new_hand
        if boundary.any():
            ends = pending[boundary]
            self.done_buf[ends[ends >= 0]] = True
            pending[boundary] = -1
            self._returns.append(self.ep_return[boundary][self.is_learner[boundary]])
            self.ep_return[boundary] = 0.0
        if ts.done.any():
            self._games_ended(np.nonzero(ts.done)[0])

    @property
    def learner_seat(self) -> np.ndarray:
        """(B,) the learner's (first) seat in each game: a view, so writing to it seats the learner."""
        return self.learner_seats[:, 0]

    def _seated(self, rows: np.ndarray) -> np.ndarray:
        """(len(rows), P) whether each seat of games ``rows`` is one of the learner's seats against the pool."""
        P = self.env.game.players
        return (np.arange(P)[None, None, :] == self.learner_seats[rows][:, :, None]).any(axis=1)

    def _seat_games(self, rows: np.ndarray) -> None:
        """Draw the learner's seats and the opponent of games ``rows`` (at the start, and when a game ends).

        One learner seat is one draw per game; several are the first
        ``learner_seats`` of a random order of the seats.
        """
        P, k, n = self.env.game.players, self.learner_seats.shape[1], rows.size
        if k == 1:
            self.learner_seats[rows, 0] = self.gen.integers(P, size=n)
        else:
            self.learner_seats[rows] = np.argsort(self.gen.random((n, P)), axis=1)[:, :k]
        self.opp[rows] = self.pool.sample(n, self.gen)
        self.is_learner[rows] = (self.opp[rows] == SELF)[:, None] | self._seated(rows)

    def _games_ended(self, d: np.ndarray) -> None:
        """Record the learner's results in games ``d`` (PFSP), then draw their new seats and opponents.

        With several learner seats, its total and win share are the means over them.
        """
        opp = self.opp
        vs_pool = d[opp[d] != SELF]
        if vs_pool.size:
            totals = self.ts.final_scores[vs_pool]
            seated = self._seated(vs_pool)
            k = self.learner_seats.shape[1]
            share = (win_shares(totals) * seated).sum(axis=1) / k
            self._results.append((opp[vs_pool], (totals * seated).sum(axis=1) / k, share))
            self.pool.record(opp[vs_pool], share)
        self._self_games += d.size - vs_pool.size
        self._seat_games(d)

    def _bootstrap(self) -> np.ndarray:
        """(B, P) value of the current state, from each seat whose episode runs on past the rollout."""
        B, P = self.env.num_envs, self.env.game.players
        boot = np.zeros((B, P), dtype=np.float32)
        with torch.inference_mode(), _autocast(self.args.bf16, self.net.device.type):
            for p in range(P):
                r = np.nonzero(self.pending[:, p] >= 0)[0]
                if r.size:
                    obs_p = self.env.observe(np.full(B, p))[r]
                    boot[r, p] = self.net(torch.from_numpy(obs_p))[1].float().cpu().numpy()
        return boot

    def replace_evicted(self, evicted: int) -> None:
        """After the pool evicted member ``evicted``: games keep their opponent (later indices move down by
        one); the evicted member's games draw a new one."""
        opp = self.opp
        gone = opp == evicted
        opp[opp > evicted] -= 1
        rows = np.nonzero(gone)[0]
        opp[rows] = self.pool.sample(rows.size, self.gen)
        self.is_learner[rows] = (opp[rows] == SELF)[:, None] | self._seated(rows)


# --------------------------------------------------------------------------
# The learner's phases
def ppo_update(net: PolicyNet, optimizer: torch.optim.Optimizer, batch: Rollout, args: Args) -> dict[str, float]:
    """``update_epochs`` passes of clipped PPO over ``batch`` in minibatches; returns the ``losses/`` scalars
    (those of the last minibatch, as CleanRL logs them). The batch moves to the network's device once; the
    minibatch permutation is drawn on the CPU, so it is the same draw on every device."""
    n, net_input, dev = batch.n, _net_input(args.bf16), net.device
    b_obs, b_mask = torch.from_numpy(batch.obs).to(dev), torch.from_numpy(batch.mask).to(dev)
    b_act, b_logp = torch.from_numpy(batch.actions).to(dev), torch.from_numpy(batch.logprobs).to(dev)
    b_adv, b_ret, b_val = (
        torch.from_numpy(batch.advantages).to(dev),
        torch.from_numpy(batch.returns).to(dev),
        torch.from_numpy(batch.values).to(dev),
    )
    clipfracs, approx_kl, old_approx_kl = [], torch.zeros(()), torch.zeros(())
    pg_loss = v_loss = entropy_loss = torch.zeros(())
    for _epoch in range(args.update_epochs):
        perm = torch.randperm(n)
        for start in range(0, n, args.minibatch_size):
            mb = perm[start : start + args.minibatch_size].to(dev)
            x = b_obs.index_select(0, mb).to(net_input)  # index_select: ~4x faster than b_obs[mb]
            with _autocast(args.bf16, dev.type):
                logits, newvalue = net.head(x)  # stored observations, masks and actions are canonical
            logits, newvalue = logits.float(), newvalue.float()
            logp_all = torch.log_softmax(masked_logits(logits, b_mask.index_select(0, mb)), dim=-1)
            newlogp = logp_all.gather(1, b_act[mb, None]).squeeze(1)
            entropy = -(logp_all.exp() * logp_all).sum(-1)
            logratio = newlogp - b_logp[mb]
            ratio = logratio.exp()
            with torch.no_grad():
                old_approx_kl = (-logratio).mean()
                approx_kl = ((ratio - 1) - logratio).mean()
                clipfracs.append(((ratio - 1.0).abs() > args.clip_coef).float().mean().item())
            mb_adv = b_adv[mb]
            if args.norm_adv and mb.numel() > 1:
                mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
            pg_loss = torch.max(-mb_adv * ratio, -mb_adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
            if args.clip_vloss:
                v_clipped = b_val[mb] + (newvalue - b_val[mb]).clamp(-args.clip_coef, args.clip_coef)
                v_loss = 0.5 * torch.max((newvalue - b_ret[mb]) ** 2, (v_clipped - b_ret[mb]) ** 2).mean()
            else:
                v_loss = 0.5 * ((newvalue - b_ret[mb]) ** 2).mean()
            entropy_loss = entropy.mean()
            loss = pg_loss - args.ent_coef * entropy_loss + args.vf_coef * v_loss
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), args.max_grad_norm)
            optimizer.step()
        if args.target_kl > 0 and approx_kl.item() > args.target_kl:
            break
    var_y = np.var(batch.returns) if n else 0.0
    explained_var = float("nan") if var_y == 0 else float(1 - np.var(batch.returns - batch.values) / var_y)
    return {
        "losses/value_loss": v_loss.item(),
        "losses/policy_loss": pg_loss.item(),
        "losses/entropy": entropy_loss.item(),
        "losses/old_approx_kl": old_approx_kl.item(),
        "losses/approx_kl": approx_kl.item(),
        "losses/clipfrac": float(np.mean(clipfracs)) if clipfracs else 0.0,
        "losses/explained_variance": explained_var,
    }


@dataclass
class Counters:
    """A run's progress, saved in its checkpoints."""

    global_step: int = 0  # table decisions stepped (all seats)
    iteration: int = 0
    learner_decisions: int = 0
    games: int = 0
    elapsed_s: float = 0.0  # wall time of the earlier sessions of a resumed run


def evaluate_and_log(
    writer: SummaryWriter,
    args: Args,
    game: Any,
    net: PolicyNet,
    pool: OpponentPool,
    batch: Rollout,
    losses: dict[str, float],
    counters: Counters,
    timing: dict[str, float],
    evaluate: bool,
) -> dict[str, Any]:
    """The iteration's ``charts/`` and ``losses/`` scalars to TensorBoard, then (if ``evaluate``) a duplicate
    evaluation of the greedy policy against ``eval_opponents``; returns every scalar logged.

    ``timing``: ``seconds`` of the run so far, ``steps`` stepped in them, ``update`` seconds of this update.
    """
    P, env_steps, step = game.players, batch.env_steps, counters.global_step
    busy = batch.seconds + timing["update"]
    stats: dict[str, Any] = {
        "charts/learning_rate": timing["lr"],
        "charts/SPS": timing["steps"] / timing["seconds"],
        "charts/iteration_SPS": env_steps / busy,
        "charts/rollout_SPS": env_steps / batch.seconds,
        "charts/learner_SPS": batch.n / busy,
        "charts/learner_decisions": counters.learner_decisions,
        "charts/games": counters.games,
        **losses,
    }
    if batch.episode_returns.size:
        stats[f"charts/episodic_return_per_{args.train_for}"] = float(batch.episode_returns.mean())
    if batch.final_scores.size:
        stats["charts/game_score_vs_pool"] = float(batch.final_scores.mean())
        stats["charts/win_share_vs_pool"] = float(batch.win_shares.mean())
    probs = pool.probs()
    stats["charts/pool_size"] = len(pool.members)
    stats["charts/pool_self_play_share"] = batch.self_play_games / max(batch.games, 1)
    for kind in ("heuristic", "snapshot", "exploiter"):
        stats[f"charts/pool_{kind}_prob"] = float(sum(p for p, m in zip(probs, pool.members) if m.kind == kind))
    for m, pr in zip(pool.members, probs):
        if m.kind == "heuristic":
            stats[f"charts/pool_prob_{m.name}"] = float(pr)
            stats[f"charts/pool_win_share_vs_{m.name}"] = m.win_rate(P)
    for key, value in stats.items():
        writer.add_scalar(key, value, step)
    if evaluate:
        greedy = PPOAgent(net, sample=False, name="learner")
        names = [name for name in args.eval_opponents if name in available()]
        results = duplicate_evals(game, greedy, names, deals=args.eval_deals, seed=args.seed + 10_000)
        for name, res in results.items():
            for key, value in (("margin_per_hand", res["margin_per_hand"]), ("win_share", res["win_share"])):
                stats[f"charts/eval_{key}_vs_{name}"] = value
                writer.add_scalar(f"charts/eval_{key}_vs_{name}", value, step)
    return stats


def checkpoint(
    path: Path,
    args: Args,
    game: Any,
    net: PolicyNet,
    optimizer: torch.optim.Optimizer,
    pool: OpponentPool,
    counters: Counters,
    gen: np.random.Generator,
    run_name: str,
) -> None:
    """ckpt.pt (everything to resume: network, optimizer, pool, counters, RNG states) and policy.pt beside it."""
    progress_meta = {**asdict(counters), "rng_numpy": gen.bit_generator.state, "run_name": run_name}
    save_training_state(path, args, game, net, optimizer, pool, progress_meta)


def make_net(args: Args, game: Any) -> PolicyNet:
    """The policy network ``args`` describe (hidden sizes, suit symmetry, trick features), freshly initialized."""
    symmetry = trump_canonical(game.name, game.config) if args.trump_symmetry else None
    features = TrickFeatures.for_game(game.name, game.config) if args.trick_features else None
    return PolicyNet(game.obs_size(), game.n_actions, tuple(args.hidden), symmetry, features)


def initial_weights(args: Args, game: Any) -> dict[str, torch.Tensor] | None:
    """The weights ``args.init_from`` names (None without one), checked against the network ``args`` describe.

    Called before the run folder is made: a missing or corrupt file, another game's policy or another
    network shape is a clear error with nothing written. A resumed run ignores it (its ckpt.pt has newer
    weights)."""
    if not args.init_from or args.resume:
        return None
    loaded, meta = load_policy(args.init_from, game)  # missing, corrupt or another game's: a CheckpointError
    want = make_net(args, game).state_dict()
    have = loaded.state_dict()
    if {k: tuple(v.shape) for k, v in want.items()} != {k: tuple(v.shape) for k, v in have.items()}:
        mine = f"hidden {args.hidden}, trump_symmetry {args.trump_symmetry}, trick_features {args.trick_features}"
        theirs = f"hidden {meta.get('hidden')}, symmetry {meta.get('symmetry')}, features {meta.get('features')}"
        raise ValueError(f"init_from {args.init_from!r}: its network ({theirs}) is not this run's ({mine})")
    return {k: v.clone() for k, v in have.items()}


def _set_up(
    args: Args,
    game: Any,
    ckpt_path: Path,
    opponents: Callable[[Any], OpponentPool] | None = None,
    init: dict[str, torch.Tensor] | None = None,
) -> tuple[np.random.Generator, PolicyNet, Any, OpponentPool, Counters]:
    """Seeds, the network (on ``args.device``; initialized on the CPU, so alike on every device), its optimizer
    and the opponent pool (``opponents(game)``, else the one ``args`` describe); restored from ``ckpt_path`` with
    ``resume`` (tensors load wherever they were saved)."""
    gen = np.random.default_rng(args.seed)
    torch.manual_seed(args.seed)
    net = make_net(args, game)
    if init is not None:  # init_from: the same shapes, checked by initial_weights
        net.load_state_dict(init)
    net = net.to(resolve_device(args.device))
    optimizer = torch.optim.Adam(net.parameters(), lr=args.learning_rate, eps=1e-5)
    pool = (
        opponents(game)
        if opponents is not None
        else OpponentPool(
            game,
            list(args.heuristics),
            max_snapshots=args.max_snapshots,
            pfsp_power=args.pfsp_power,
            heuristic_floor=args.heuristic_floor,
            self_play_prob=args.self_play_prob,
            seed=args.seed,
        )
    )
    counters = Counters()
    if args.resume:
        meta = load_training_state(ckpt_path, args, game, net, optimizer, pool)
        counters = Counters(meta["global_step"], meta["iteration"], meta["learner_decisions"], meta["games"])
        counters.elapsed_s = meta["elapsed_s"]
        gen.bit_generator.state = meta["rng_numpy"]
        print(
            f"resumed {ckpt_path} at iteration {counters.iteration}, global step {counters.global_step:,}",
            file=sys.stderr,
        )
    elif ckpt_path.exists():
        raise ValueError(f"{ckpt_path} exists: pass --resume to continue that run, or choose another --run-name")
    return gen, net, optimizer, pool, counters


# --------------------------------------------------------------------------
def train(
    args: Args,
    opponents: Callable[[Any], OpponentPool] | None = None,
    evaluate: Callable[[PolicyNet, Counters], dict[str, float]] | None = None,
) -> dict[str, Any]:
    """Run PPO with self-play as configured; returns a summary of the run (the last iteration's scalars).

    Each iteration: :meth:`RolloutCollector.collect_rollout`, :func:`ppo_update`,
    :func:`evaluate_and_log`, a snapshot into the pool, an exploiter into the pool
    (``exploiters_every``), :func:`checkpoint`. Two hooks let other runs use the same loop
    (:mod:`train.exploit`): ``opponents(game)`` builds the pool instead of the one ``args``
    describe (a resumed run loads its saved state into it), and ``evaluate(net, counters)``
    returns more scalars to log whenever an evaluation is due.

    Everything that can be refused is refused before the run folder is touched; the folder is then
    locked (:func:`run_lock`) for the rest of the run, so a second run with the same name is refused.

    Budgets: the run stops at ``total_decisions`` or before ``time_limit_min`` minutes of *this
    invocation* (a resumed run gets the whole limit again), whichever comes first. Before each
    iteration the next one's time is predicted (its rollout at the steady rate of the last one's later
    steps, the update, and an evaluation and a checkpoint as the last iteration makes them), and no
    iteration is started that would end past the limit; the first always runs, so that there is a
    checkpoint. The learning rate anneals linearly to 0 over whichever budget runs out first, from
    where the decision schedule had it when this invocation started.
    """
    t_start = time.perf_counter()
    check_args(args, pool=opponents is None)
    run_dir = Path(args.runs_dir) / default_run_name(args)
    game = make_game(args.game, players=args.players, **args.game_options)
    if args.rollout_workers:  # Ray installed, its address answering, enough CPUs: before anything is written
        from train.distributed import preflight  # noqa: PLC0415 - imports Ray, only for rollout workers

        preflight(args.ray_address or "local", args.rollout_workers, f"{args.rollout_workers} rollout worker(s)")
    init = initial_weights(args, game)  # init_from: read and checked before the run folder exists
    if args.resume:  # another run's checkpoint: refused before the folder is locked or written to
        _, meta = load_checkpoint(run_dir / "ckpt.pt")
        if "optim_param_groups" in meta:  # a policy only: load_training_state says so
            check_same_run(run_dir / "ckpt.pt", meta, args, game)
    check_run_dir(run_dir, create=not args.resume)
    with run_lock(run_dir):
        return _train_locked(args, game, init, t_start, opponents, evaluate)


def _train_locked(
    args: Args,
    game: Any,
    init: dict[str, torch.Tensor] | None,
    t_start: float,
    opponents: Callable[[Any], OpponentPool] | None,
    evaluate: Callable[[PolicyNet, Counters], dict[str, float]] | None,
) -> dict[str, Any]:
    """:func:`train` once its arguments are checked and its run folder is locked."""
    run_name = default_run_name(args)
    run_dir = Path(args.runs_dir) / run_name
    ckpt_path = run_dir / "ckpt.pt"
    if args.torch_threads > 0:
        torch.set_num_threads(args.torch_threads)
    torch.set_flush_denormal(True)  # tiny probabilities' gradients would otherwise hit the slow denormal path
    remove_stale_temporaries(run_dir)  # checkpoint writes of a run killed part-way
    limit_s = 60.0 * args.time_limit_min
    progress = ProgressBar(args.total_decisions, "decisions", enabled=args.progress, time_limit_s=limit_s, t0=t_start)
    progress.status("setting up: the network, its optimizer, the opponents" + (", the checkpoint" * args.resume))
    gen, net, optimizer, pool, counters = _set_up(args, game, ckpt_path, opponents, init)
    progress.restart_at(counters.global_step)
    progress.status("preparing the game kernels (compiled on their first use: up to a minute)")
    if args.rollout_workers:  # Ray actors play the rollouts (train/rollout_workers.py); only then is Ray imported
        from train.rollout_workers import RolloutWorkers  # noqa: PLC0415

        collector: Any = RolloutWorkers(args, game, net, pool, gen, seed=_env_seed(args.seed, counters.iteration))
    else:
        env = VectorEnv(game, num_envs=args.num_envs, copy_obs=False)
        collector = RolloutCollector(env, net, pool, gen, args, seed=_env_seed(args.seed, counters.iteration))
    # resumed: hide what the killed run logged after its checkpoint (TensorBoard would show those steps twice)
    writer = SummaryWriter(str(run_dir), purge_step=counters.global_step + 1 if args.resume else None)
    if not args.resume:
        table = "\n".join(f"|{k}|{v}|" for k, v in asdict(args).items())
        writer.add_text("hyperparameters", f"|param|value|\n|-|-|\n{table}")

    step_at_start, elapsed_before, step_it = counters.global_step, counters.elapsed_s, counters.iteration
    stats: dict[str, Any] = {}
    clock = IterationClock(limit_s, t_start)
    # the decision schedule's learning rate where this invocation starts, annealed to 0 over what is left
    dec_left = args.total_decisions - step_at_start
    lr_begin = args.learning_rate * (dec_left / args.total_decisions if args.total_decisions else 0.0)
    per_step = isinstance(collector, RolloutCollector)  # in-process: progress and timing at every env step
    if per_step:
        collector.on_step = clock.step_hook(progress, args.num_envs)
    if counters.global_step < args.total_decisions:
        what = f"{args.num_envs * collector.T:,} decisions" if per_step else f"{args.num_envs:,} games"
        progress.status(f"collecting the first rollout ({what})")

    try:
        last = counters.global_step >= args.total_decisions
        while not last:
            counters.iteration += 1
            it = counters.iteration
            if args.anneal_lr:
                done = (counters.global_step - step_at_start) / dec_left if dec_left > 0 else 1.0
                optimizer.param_groups[0]["lr"] = lr_begin * max(1.0 - max(done, clock.time_used()), 0.0)
            clock.start_iteration()

            batch = collector.collect_rollout()
            counters.global_step += batch.env_steps
            counters.learner_decisions += batch.n
            counters.games += batch.games
            clock.rollout_done(batch.seconds)

            t_update = time.perf_counter()
            losses = ppo_update(net, optimizer, batch, args)
            t_update = time.perf_counter() - t_update

            seconds = time.perf_counter() - t_start
            timing = {"lr": optimizer.param_groups[0]["lr"], "update": t_update}
            timing.update(seconds=seconds, steps=counters.global_step - step_at_start)
            eval_now = args.eval_every > 0 and it % args.eval_every == 0
            save_now = it % args.checkpoint_every == 0
            # with a time limit, the first iteration evaluates too: the last one's evaluation is then predicted
            first = limit_s > 0 and args.eval_every >= 0 and it == step_it + 1
            clock.predict_next()
            rest = clock.eval_s * (eval_now or first) + clock.ckpt_s * save_now
            last = counters.global_step >= args.total_decisions or clock.passes_limit(rest)
            due = args.eval_every >= 0 and (last or first or eval_now)
            t_eval = time.perf_counter()
            stats = evaluate_and_log(writer, args, game, net, pool, batch, losses, counters, timing, due)
            if args.rollout_workers:  # per-worker throughput, waiting on workers vs learning, bytes moved, restarts
                collector.log(writer, counters.global_step, t_update)
            for key, value in (evaluate(net, counters) if due and evaluate is not None else {}).items():
                stats[key] = value
                writer.add_scalar(key, value, counters.global_step)
            if due:
                clock.evaluated(time.perf_counter() - t_eval)
            if first and not last:  # the evaluation's time is known now: if the next would not fit, stop here
                last = clock.passes_limit(clock.ckpt_s * save_now)
            ret = stats.get(f"charts/episodic_return_per_{args.train_for}", 0)
            progress.update(0 if per_step else batch.env_steps, f"it {it} ret {ret:+.2f}")

            if args.snapshot_every and it % args.snapshot_every == 0:
                evicted = pool.add_snapshot(net, counters.global_step)
                if evicted is not None:
                    collector.replace_evicted(evicted)
            if args.exploiters_every and it % args.exploiters_every == 0:
                from train.exploit import add_exploiter  # noqa: PLC0415 - its own module, over this one's phases

                evicted, found = add_exploiter(pool, net, args, game, counters.global_step, gen)
                for key, value in found.items():
                    writer.add_scalar(key, value, counters.global_step)
                if evicted is not None:
                    collector.replace_evicted(evicted)
            if last or it % args.checkpoint_every == 0:
                t_ckpt = time.perf_counter()
                counters.elapsed_s = elapsed_before + time.perf_counter() - t_start
                try:
                    checkpoint(ckpt_path, args, game, net, optimizer, pool, counters, gen, run_name)
                except OSError as err:  # one clear line; the last checkpoint written stays as it was
                    progress.close()
                    writer.close()
                    raise ValueError(f"cannot save the checkpoint {ckpt_path}: {err.strerror or err}") from None
                clock.checkpointed(time.perf_counter() - t_ckpt)
    finally:
        if args.rollout_workers:
            collector.close()  # the actors, and a Ray this run started
    progress.close()
    writer.close()
    summary = {"run_dir": str(run_dir), "global_step": counters.global_step, "iteration": counters.iteration}
    summary.update(learner_decisions=counters.learner_decisions, seconds=time.perf_counter() - t_start)
    summary["decisions_this_run"] = counters.global_step - step_at_start
    return summary | stats


class IterationClock:
    """The time limit of one invocation of :func:`train`: how much is used, and whether the next iteration fits.

    The next iteration is predicted as the last one's rollout at its steady rate (the rollout's time
    after its first env step, scaled to all its steps: the first step of a run pays for compiling and
    warming up, and would otherwise make the estimate after the first iteration far too long), its
    update and bookkeeping as measured, plus the last evaluation's and checkpoint's times (the last
    iteration always makes both).
    """

    def __init__(self, limit_s: float, t_start: float) -> None:
        self.limit_s, self.t_start = limit_s, t_start
        self.eval_s = self.ckpt_s = 0.0  # the last evaluation's and checkpoint's seconds
        self._it_start = self._first_step_end = self._rollout_s = self._rollout_end = 0.0
        self._steps = 0
        self.iteration_s = 0.0  # the predicted time of the next iteration (without evaluation and checkpoint)

    def spent(self) -> float:
        """Seconds since this invocation started."""
        return time.perf_counter() - self.t_start

    def time_used(self) -> float:
        """Share of the time limit spent (0 without a limit)."""
        return min(self.spent() / self.limit_s, 1.0) if self.limit_s > 0 else 0.0

    def step_hook(self, progress: ProgressBar, num_envs: int) -> Callable[[int, int], None]:
        """The collector's per-step callback: advances ``progress`` and times the rollout's first step."""

        def on_step(step: int, steps: int) -> None:
            if step == 1:
                self._first_step_end = time.perf_counter()
            self._steps = steps
            progress.update(num_envs)

        return on_step

    def start_iteration(self) -> None:
        self._it_start = time.perf_counter()
        self._first_step_end, self._steps = 0.0, 0

    def rollout_done(self, seconds: float) -> None:
        """The rollout took ``seconds``; its steady-rate estimate is kept for the prediction."""
        now = time.perf_counter()
        self._rollout_s = seconds
        if self._steps > 1 and self._first_step_end > self._it_start:
            later = now - self._first_step_end  # steps 2..T (and the GAE)
            self._rollout_s = min(seconds, later * self._steps / (self._steps - 1))
        self._rollout_end = now

    def evaluated(self, seconds: float) -> None:
        self.eval_s = seconds

    def checkpointed(self, seconds: float) -> None:
        self.ckpt_s = seconds

    def predict_next(self) -> None:
        """Predict the next iteration (without evaluation and checkpoint); called after this one's update."""
        self.iteration_s = self._rollout_s + (time.perf_counter() - self._rollout_end)  # + update and logging

    def passes_limit(self, rest_of_this: float) -> bool:
        """Whether one more iteration would end past the limit, when this one still takes ``rest_of_this``
        seconds (its evaluation, its checkpoint): the next one, if it is the last, evaluates and saves."""
        if self.limit_s <= 0:
            return False
        return self.spent() + rest_of_this + self.iteration_s + self.eval_s + self.ckpt_s > self.limit_s


PLOT_TAGS = (
    ("charts/episodic_return_per_hand", "learner return per hand (score points)"),
    ("charts/eval_margin_per_hand_vs_strong", "duplicate margin per hand vs strong"),
    ("charts/eval_margin_per_hand_vs_simple", "duplicate margin per hand vs simple"),
    ("charts/eval_margin_per_hand_vs_random", "duplicate margin per hand vs random"),
    ("losses/entropy", "policy entropy"),
    ("losses/explained_variance", "explained variance"),
    ("losses/approx_kl", "approx KL"),
    ("charts/SPS", "table decisions / s"),
)


def plot_run(run_dir: str | os.PathLike, png: str | os.PathLike, title: str = "") -> None:
    """Training curves of a run, read from its TensorBoard logs, as one PNG (needs matplotlib)."""
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: PLC0415

    acc = EventAccumulator(str(run_dir), size_guidance={"scalars": 0})
    acc.Reload()
    tags = [(t, label) for t, label in PLOT_TAGS if t in acc.Tags()["scalars"]]
    if not tags:
        raise ValueError(f"no training curves in {str(run_dir)!r}")
    cols = 2
    fig, axes = plt.subplots((len(tags) + 1) // cols, cols, figsize=(11, 2.6 * ((len(tags) + 1) // cols)))
    for ax, (tag, label) in zip(np.ravel(axes), tags):
        ev = acc.Scalars(tag)
        ax.plot([e.step / 1e6 for e in ev], [e.value for e in ev], lw=1.2, marker="o" if len(ev) < 40 else None, ms=3)
        ax.set_title(label, fontsize=10)
        ax.set_xlabel("table decisions (millions)", fontsize=8)
        ax.grid(alpha=0.3)
        if "margin" in tag:
            ax.axhline(0, color="grey", lw=0.8)
    for ax in np.ravel(axes)[len(tags) :]:
        ax.set_visible(False)
    fig.suptitle(title or Path(run_dir).name)
    fig.tight_layout()
    try:
        save_figure(fig, png, dpi=110)  # in one step: a full disk never leaves half a picture
    finally:
        plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    """``bobshat train``: parse, train, print a summary; returns the exit code."""
    args = parse_args(argv)
    out = train(args)
    done, secs = out["decisions_this_run"], out["seconds"]
    why = "the time limit" if done and out["global_step"] < args.total_decisions else "total_decisions"
    print(
        f"trained {done:,} table decisions in {secs:,.1f} s ({done / max(secs, 1e-9):,.0f}/s; "
        f"stopped by {why}), {out['global_step']:,} in all: {out['run_dir']}",
        file=sys.stderr,
    )
    keys = ("global_step", "learner_decisions", "seconds", "charts/SPS", "losses/value_loss", "losses/entropy")
    print(json.dumps({k: out[k] for k in keys if k in out} | {"run_dir": out["run_dir"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
