"""One PPO learner: its set-up, and the loop every learning run drives (anneal, collect, update).

:func:`set_up` makes a run's seeds, network, optimizer, opponent pool and
counters (restored from ``ckpt.pt`` on ``--resume``). A :class:`Learner` then
holds the network, its optimizer and a collector (:func:`make_collector`: the
in-process :class:`~train.ppo.collector.RolloutCollector` or Ray's
:class:`~train.ppo.workers.RolloutWorkers`, both a
:class:`~train.ppo.collector.Collector`) and answers :meth:`Learner.anneal`,
:meth:`Learner.collect` and :meth:`Learner.update`. ``bobshat train``
(:mod:`train.ppo.run`), the exploiters trained inside it
(:mod:`train.ppo.exploiters`), ``bobshat exploit`` (through ``train``) and
``benchmarks/scaling.py`` all drive these same methods, so there is one
learner loop to read and to change.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from agents.checkpoint import load_training_state
from agents.ppo_agent import PolicyNet, load_policy, resolve_device
from bobshat_env.vector import VectorEnv
from train.ppo.collector import Collector, RolloutCollector
from train.ppo.config import Args, make_net
from train.ppo.rollout import Rollout
from train.ppo.rundir import check_same_run
from train.ppo.selfplay import OpponentPool
from train.ppo.update import ppo_update

if TYPE_CHECKING:
    from bobshat_env.games import Game


@dataclass
class Counters:
    """A run's progress, saved in its checkpoints."""

    global_step: int = 0  # table decisions stepped (all seats)
    iteration: int = 0
    learner_decisions: int = 0
    games: int = 0
    elapsed_s: float = 0.0  # wall time of the earlier sessions of a resumed run


def initial_weights(args: Args, game: Game) -> dict[str, torch.Tensor] | None:
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


def set_up(
    args: Args,
    game: Game,
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
        meta = load_training_state(
            ckpt_path, net, optimizer, pool, lambda meta: check_same_run(ckpt_path, meta, args, game)
        )
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


def make_collector(
    args: Args, game: Game, net: PolicyNet, pool: OpponentPool, gen: np.random.Generator, seed: int
) -> Collector:
    """The collector ``args`` ask for: ``rollout_workers`` Ray actors (Ray is imported only then), else one
    :class:`RolloutCollector` on ``num_envs`` games in this process; its first games dealt from ``seed``."""
    if args.rollout_workers:
        from train.ppo.workers import RolloutWorkers  # imports Ray, only for rollout workers

        return RolloutWorkers(args, game, net, pool, gen, seed=seed)
    env = VectorEnv(game, num_envs=args.num_envs, copy_obs=False)
    return RolloutCollector(env, net, pool, gen, args, seed=seed)


def _one_numba_thread() -> None:
    """The rollout ahead's thread runs numba's parallel kernels (the engine's step, the trick features) on
    itself alone (numba's thread count is per thread): the update keeps the other core busy, and a parallel
    kernel would wait at each step for a thread that the update's core only runs when the OS preempts it.
    Their results do not depend on the thread count."""
    import numba

    numba.set_num_threads(1)


class Learner:
    """A network, its optimizer and a collector that plays it against a pool: one PPO iteration is
    :meth:`anneal`, :meth:`collect`, :meth:`update` (each run decides when it stops and what it logs).

    ``lr_begin``: the learning rate :meth:`anneal` decays from (default ``args.learning_rate``; a resumed
    run passes where the decision schedule had it when this invocation started).
    """

    def __init__(
        self,
        args: Args,
        net: PolicyNet,
        optimizer: torch.optim.Optimizer,
        collector: Collector,
        lr_begin: float | None = None,
    ) -> None:
        self.args, self.net, self.optimizer, self.collector = args, net, optimizer, collector
        self.lr_begin = args.learning_rate if lr_begin is None else lr_begin
        self.update_s = 0.0  # seconds of the last update
        self._ahead: Rollout | None = None  # collected during the last update (update(collect_ahead=True))
        self._thread: ThreadPoolExecutor | None = None  # where that rollout runs (made on first use)

    @property
    def lr(self) -> float:
        """The optimizer's learning rate now."""
        return self.optimizer.param_groups[0]["lr"]

    def anneal(self, done: float) -> None:
        """With ``anneal_lr``, set the learning rate to ``lr_begin`` decayed linearly by ``done`` (the share
        of the budget spent, 0-1; past 1 it stays 0); without, leave it."""
        if self.args.anneal_lr:
            self.optimizer.param_groups[0]["lr"] = self.lr_begin * max(1.0 - done, 0.0)

    @property
    def has_ahead(self) -> bool:
        """Whether the next :meth:`collect` returns a rollout collected during the last update."""
        return self._ahead is not None

    def collect(self) -> Rollout:
        """One rollout from the collector with the current weights; or the one collected during the last
        update (``update(collect_ahead=True)``), from the weights before that update."""
        if self._ahead is not None:
            batch, self._ahead = self._ahead, None
            batch.lagged = True  # played by the weights before the last update
            return batch
        return self.collector.collect_rollout()

    def update(self, batch: Rollout, collect_ahead: bool = False) -> dict[str, float]:
        """Clipped PPO epochs over ``batch`` (:func:`~train.ppo.update.ppo_update`); its ``losses/`` scalars.
        Its time (and the wait for the rollout ahead) is kept in :attr:`update_s`.

        ``collect_ahead`` (``overlap_rollout``; the in-process collector): the next rollout is played on a
        second thread while the update runs, from the weights as they are before it (the collector copies
        them first), and :meth:`collect` returns it. The update and the rollout each keep about one core
        busy, which one after the other leave half idle on two; the price is one iteration of policy lag, so
        a rollout played ahead is updated on with the decoupled objective (:func:`~train.ppo.update.ppo_update`'s
        ``lagged``: the clipped ratio against the weights the update starts from). When this returns, nothing
        runs in the background; if the update fails or is interrupted, the rollout is stopped at its next step
        and dropped."""
        t0 = time.perf_counter()
        ahead = None
        if collect_ahead:
            ahead = self.collector
            if not ahead.overlaps:
                raise ValueError("overlap_rollout is for the in-process collector (rollout_workers 0)")
            ahead.start_rollout()  # the weights are copied here, before the update changes them
            if self._thread is None:
                self._thread = ThreadPoolExecutor(1, "rollout-ahead", initializer=_one_numba_thread)
            future = self._thread.submit(ahead.run_rollout)
        try:
            losses = ppo_update(self.net, self.optimizer, batch, self.args, lagged=batch.lagged)
            if ahead is not None:
                self._ahead = future.result()
        except BaseException:
            if ahead is not None:
                ahead.cancel()
                wait([future])  # at most one env step; its result or RolloutCancelled is dropped
            raise
        self.update_s = time.perf_counter() - t0
        return losses

    def replace_evicted(self, evicted: int | None) -> None:
        """The pool evicted member ``evicted`` (None: nothing was evicted): the collector moves its games."""
        if evicted is not None:
            self.collector.replace_evicted(evicted)

    def close(self) -> None:
        """Release the collector's resources (the Ray actors, and a Ray this run started) and the thread of the
        rollouts ahead."""
        if self._thread is not None:
            self._thread.shutdown(wait=True)
            self._thread = None
        self.collector.close()
