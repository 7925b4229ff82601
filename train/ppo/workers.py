"""Rollout workers on Ray: ``bobshat train --rollout-workers N`` (YAML ``rollout_workers: N``).

The learner (the process running :func:`train.ppo.run.train`) keeps the network,
the optimizer, the opponent pool and the checkpoints, and runs the same
:meth:`~train.ppo.learner.Learner.update`. ``N`` Ray actors (:class:`RolloutWorker`, one
CPU each) play the rollouts: each owns a :class:`~bobshat_env.vector.VectorEnv`
of its share of the ``num_envs`` games, a copy of the policy for inference,
and copies of the pool's members (heuristic bots rebuilt by name, frozen
snapshots sent as weights once), and runs the in-process path's own
:class:`~train.ppo.collector.RolloutCollector` on them. Each iteration the learner puts
the new weights in Ray's object store once (every node fetches one copy),
sends each worker the pool as it stands (names, PFSP records, and the
weights of snapshots it has not seen), gathers the workers' rollouts (GAE is
done on the workers: it follows each game's interleaved seats, which live in
one env), concatenates them in worker order, records the finished games'
results in its pool, and updates. :class:`RolloutWorkers` is that learner
side, a :class:`~train.ppo.collector.Collector` like the in-process
collector, so the learner loop (:class:`~train.ppo.learner.Learner`) is the same.

What matches the in-process run with the same seed
    Worker ``w`` plays slots ``[first, first + size)`` of the one batch
    (``VectorEnv(first_slot=...)``), so it deals exactly the games those
    slots deal in-process, and the learner draws the first seats and
    opponents of all the games as the in-process collector draws them. So
    the first rollout's games, seats, opponents, first observations and
    counts (env steps, learner decisions and, with whole-game rollouts,
    finished games) are the same. The actions are not: each worker samples
    from its own seeded torch generator, so the games part after the first
    sampled decision. Later draws of seats and opponents are each worker's
    own, from PFSP probabilities it updates as its games end, as in-process;
    the learner applies the results to its pool once per worker and
    iteration (in-process: as the games end), so its decayed records differ
    in rounding only. For a fixed ``N`` a run is reproducible.

Faults
    A worker whose process dies (``kill -9``, a lost node) is noticed when
    its rollout fails: the learner logs the event (stderr and
    ``charts/worker_restarts``), starts a new actor for the same slots on
    fresh games, and asks it again for the same iteration's rollout with the
    same weights; the other workers' rollouts are kept and nothing of the
    dead one's is counted, so the statistics and the checkpoint only ever
    hold whole rollouts. After ``MAX_RESTARTS`` deaths in one iteration it
    gives up with an error. A lost learner is recovered by ``--resume`` (the
    workers start again from the checkpoint's pool and weights).

Logged per iteration (TensorBoard): ``charts/worker{w}_SPS`` (each worker's
table decisions per second of its own rollout), ``charts/rollout_wait_s``
(the learner waiting on the slowest worker), ``charts/update_s``,
``charts/rollout_MB`` and ``charts/weights_MB`` (bytes moved), and
``charts/worker_restarts``.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from agents import make_agent
from agents.ppo_agent import PolicyNet, PPOAgent, resolve_device
from bobshat_env.games import make_game
from bobshat_env.vector import VectorEnv
from train.ppo.collector import RolloutCollector
from train.ppo.config import Args, make_net
from train.ppo.rollout import Rollout
from train.ppo.selfplay import POLICY_KINDS, SELF, Member, OpponentPool
from train.runtime.distributed import DistributedError, first_line, ray_session
from train.runtime.threads import set_torch_threads

if TYPE_CHECKING:
    from bobshat_env.games import Game

MAX_RESTARTS = 3  # worker deaths in one iteration before the learner gives up
START_TIMEOUT_S = 300.0  # a worker not ready by then: the cluster cannot place it


def _seed(*parts: int) -> int:
    return int(np.random.SeedSequence([int(p) for p in parts]).generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))


# --------------------------------------------------------------------------
# The actor
class RolloutWorker:
    """One Ray actor's share of the rollout: ``num_envs`` games from slot ``first_slot`` on.

    ``incarnation`` counts the actors that held these slots before (a
    restart): it enters the seeds, so a new actor does not replay the dead
    one's random draws.
    """

    def __init__(self, args: dict, index: int, first_slot: int, num_envs: int, incarnation: int = 0) -> None:
        import numba

        self.args = a = Args(**args)
        self.index = index
        numba.set_num_threads(1)  # one CPU per worker (Ray's num_cpus=1): the engine's serial kernels
        if a.torch_threads > 0:
            set_torch_threads(a.torch_threads)  # after numba's threads, as in-process (train/runtime/threads.py)
        torch.set_flush_denormal(True)
        torch.manual_seed(_seed(a.seed, 1, index, incarnation))  # the learner's action samples
        self.game = make_game(a.game, players=a.players, **a.game_options)
        gpu = a.rollout_worker_gpus > 0 and a.device != "cpu"
        self.device = resolve_device(a.device if gpu else "cpu")
        self.net = make_net(a, self.game).to(self.device).requires_grad_(False)
        self.pool = OpponentPool(
            self.game,
            list(a.heuristics),
            max_snapshots=a.max_snapshots,
            pfsp_power=a.pfsp_power,
            heuristic_floor=a.heuristic_floor,
            self_play_prob=a.self_play_prob,
            seed=_seed(a.seed, 2, index, incarnation),
        )
        self.heuristics = {m.name: m for m in self.pool.members}
        self.snapshots: dict[str, Member] = {}
        self.gen = np.random.default_rng(_seed(a.seed, 3, index, incarnation))
        self.env = VectorEnv(self.game, num_envs=num_envs, copy_obs=False, first_slot=first_slot)
        self.collector: RolloutCollector | None = None

    def ready(self) -> dict[str, Any]:
        """Where the worker runs: ``pid``, ``node`` (IP address), ``node_id`` (Ray's), inference ``device``."""
        import ray

        node, node_id = ray.util.get_node_ip_address(), ray.get_runtime_context().get_node_id()
        return {"pid": os.getpid(), "node": node, "node_id": node_id, "device": str(self.device)}

    def start(self, env_seed: int, learner_seat: np.ndarray, opp: np.ndarray, pool: list[tuple]) -> None:
        """Reset the env with ``env_seed`` and seat the learner and the opponents as the learner drew them."""
        self._sync_pool(pool, remap=False)
        c = RolloutCollector(self.env, self.net, self.pool, self.gen, self.args, seed=env_seed)
        P = self.game.players
        c.learner_seat[:], c.opp[:] = learner_seat, opp
        c.is_learner[:] = (c.opp == SELF)[:, None] | (np.arange(P)[None, :] == c.learner_seat[:, None])
        self.collector = c

    def rollout(self, weights: dict[str, torch.Tensor], pool: list[tuple]) -> Rollout:
        """One rollout with these weights against this pool (GAE included), as the in-process collector plays it."""
        if self.collector is None:
            raise RuntimeError("start() the worker before asking for a rollout")
        self.net.load_state_dict(weights)
        self._sync_pool(pool, remap=True)
        return self.collector.collect_rollout()

    def state(self) -> dict[str, np.ndarray]:
        """The games' current observations, masks, seats to act, and who sits where (for tests and debugging)."""
        c = self.collector
        assert c is not None
        ts = c.ts
        return {
            "obs": ts.obs.copy(),
            "mask": ts.action_mask.copy(),
            "seat": ts.seat.copy(),
            "learner_seat": c.learner_seat.copy(),
            "opp": c.opp.copy(),
        }

    def _sync_pool(self, spec: list[tuple], remap: bool) -> None:
        """Make the pool the learner's: its members in its order, with its PFSP records.

        ``spec``: ``(name, kind, wins, games, step, weights)`` per member,
        ``weights`` an object ref for networks (snapshots, exploiters; fetched
        the first time a name is seen), else None: a bot, rebuilt by name. Games whose opponent left the pool draw a
        new one, as ``RolloutCollector.replace_evicted`` does in-process.
        """
        import ray

        old = [m.name for m in self.pool.members]
        members: list[Member] = []
        for name, kind, wins, games, step, ref in spec:
            if kind == "heuristic":
                m = self.heuristics.get(name)
                if m is None:
                    agent = make_agent(name, self.game, seed=_seed(self.args.seed, 4, self.index, len(self.heuristics)))
                    m = self.heuristics[name] = Member(name, "heuristic", agent)
            else:  # a network of the learner's shape (POLICY_KINDS: a snapshot, or an exploiter playing greedily)
                m = self.snapshots.get(name)
                if m is None:
                    net = make_net(self.args, self.game)
                    net.load_state_dict(ray.get(ref))
                    net.eval().requires_grad_(False)
                    seed = _seed(self.args.seed, 5, self.index, step)
                    sample = self.pool.snapshot_sample and kind == "snapshot"  # as OpponentPool builds them
                    agent = PPOAgent(net, sample=sample, seed=seed, name=name)
                    m = self.snapshots[name] = Member(name, kind, agent, step=step, net=net)
            m.wins, m.games = float(wins), float(games)
            members.append(m)
        self.pool.members = members
        names = [m.name for m in members]
        self.snapshots = {k: v for k, v in self.snapshots.items() if k in names}
        c = self.collector
        if remap and c is not None and names != old:
            where = {n: i for i, n in enumerate(names)}
            moved = np.array([where.get(n, -2) for n in old], dtype=np.int64)  # -2: left the pool
            vs = c.opp != SELF
            opp = c.opp.copy()
            opp[vs] = moved[c.opp[vs]]
            gone = opp == -2
            opp[gone] = self.pool.sample(int(gone.sum()), self.gen)
            c.opp[:] = opp
            P = self.game.players
            c.is_learner[gone] = (opp[gone] == SELF)[:, None] | (np.arange(P) == c.learner_seat[gone, None])


# --------------------------------------------------------------------------
# The learner's side
class RolloutWorkers:
    """The learner's handle on ``args.rollout_workers`` :class:`RolloutWorker` actors (module docstring).

    Built from what the in-process collector is built from: ``net`` and
    ``pool`` are the learner's (read each iteration), ``gen`` draws the
    first seats and opponents (and those of a restarted worker), ``seed``
    is the env seed of this session's first games.
    """

    def __init__(
        self, args: Args, game: Game, net: PolicyNet, pool: OpponentPool, gen: np.random.Generator, seed: int
    ) -> None:
        self.args, self.game, self.net, self.pool, self.gen, self.seed = args, game, net, pool, gen, seed
        N, B = args.rollout_workers, args.num_envs
        self.sizes = [B // N + (w < B % N) for w in range(N)]
        self.first = np.concatenate([[0], np.cumsum(self.sizes)[:-1]]).astype(int).tolist()
        self.actors: list[Any] = [None] * N
        self.info: list[dict[str, Any]] = [{} for _ in range(N)]
        self.incarnation = [0] * N
        self.restarts = 0
        self._snapshot_refs: dict[str, Any] = {}
        self._last: dict[str, Any] = {}
        self._stack = contextlib.ExitStack()
        try:
            self.ray = self._stack.enter_context(
                ray_session(args.ray_address or "local", need_cpus=N, what=f"{N} rollout worker(s)")
            )
            self._check_gpus()
            from ray import exceptions as rx

            # a worker process gone: killed, crashed, its node lost, or stopped by Ray's out-of-memory killer
            dead = ("RayActorError", "WorkerCrashedError", "NodeDiedError", "OutOfMemoryError", "ObjectLostError")
            self._actor_errors: tuple[type[BaseException], ...] = tuple(
                getattr(rx, name) for name in dead if hasattr(rx, name)
            )
            self._timeout_error = rx.GetTimeoutError
            self._remote = self.ray.remote(RolloutWorker)
            # the first games' seats and opponents: drawn as the in-process collector draws them
            seat = gen.integers(game.players, size=B)
            opp = pool.sample(B, gen)
            spec = self._pool_spec()
            started = [self._launch(w, seed, seat, opp, spec) for w in range(N)]
            for w, ref in enumerate(started):
                self._await_start(w, ref)
            where = ", ".join(f"{i['node']} pid {i['pid']}" for i in self.info)
            print(f"{N} rollout worker(s) on Ray ({args.ray_address or 'local'}): {where}", file=sys.stderr)
        except BaseException:
            self.close()
            raise

    # ---- set-up ------------------------------------------------------------------------
    def _check_gpus(self) -> None:
        need = self.args.rollout_worker_gpus * self.args.rollout_workers
        have = float(self.ray.available_resources().get("GPU", 0.0))
        if need > have:
            raise DistributedError(
                f"{self.args.rollout_workers} rollout worker(s) with {self.args.rollout_worker_gpus:g} GPU each need "
                f"{need:g} free GPU(s) on the Ray cluster, which has {have:g}"
            )

    def _launch(self, w: int, env_seed: int, seat: np.ndarray, opp: np.ndarray, spec: list[tuple]) -> Any:
        """Start actor ``w`` on its slots, seated from the whole batch's ``seat`` and ``opp``; returns its start ref."""
        lo, hi = self.first[w], self.first[w] + self.sizes[w]
        actor = self._remote.options(num_cpus=1, num_gpus=self.args.rollout_worker_gpus, max_restarts=0).remote(
            asdict(self.args), w, lo, self.sizes[w], self.incarnation[w]
        )
        self.actors[w] = actor
        return actor.start.remote(env_seed, seat[lo:hi], opp[lo:hi], spec)

    def _await_start(self, w: int, ref: Any) -> None:
        try:
            self.ray.get(ref, timeout=START_TIMEOUT_S)
            self.info[w] = self.ray.get(self.actors[w].ready.remote(), timeout=START_TIMEOUT_S)
        except self._timeout_error:
            free = self.ray.available_resources().get("CPU", 0.0)
            raise DistributedError(
                f"rollout worker {w} did not start within {START_TIMEOUT_S:.0f} s ({free:g} CPU(s) free on the "
                "cluster); is bobshat installed on every node?"
            ) from None
        except self._actor_errors as err:
            raise DistributedError(f"rollout worker {w} failed to start: {first_line(err)}") from None

    def _pool_spec(self) -> list[tuple]:
        """The pool as the workers rebuild it; snapshot weights go to the object store once per snapshot."""
        spec = []
        names = set()
        for m in self.pool.members:
            ref = None
            if m.kind in POLICY_KINDS:
                ref = self._snapshot_refs.get(m.name)
                if ref is None:
                    assert m.net is not None
                    ref = self._snapshot_refs[m.name] = self.ray.put(_cpu_state(m.net))
            spec.append((m.name, m.kind, m.wins, m.games, m.step, ref))
            names.add(m.name)
        self._snapshot_refs = {k: v for k, v in self._snapshot_refs.items() if k in names}
        return spec

    # ---- the collector's interface ---------------------------------------------------------
    overlaps = False  # the workers already play beside the learner's process; a rollout is collected whole

    def start_rollout(self) -> None:
        """Nothing to take ahead: :meth:`run_rollout` sends the weights as they are when it starts."""

    def run_rollout(self) -> Rollout:
        """The workers' rollout (:meth:`collect_rollout`)."""
        return self.collect_rollout()

    def cancel(self) -> None:
        """Nothing runs between calls: a rollout is collected whole, inside :meth:`run_rollout`."""

    def collect_rollout(self) -> Rollout:
        """Every worker's rollout with the current weights and pool, concatenated in worker order."""
        t0 = time.perf_counter()
        weights = _cpu_state(self.net)
        weights_ref, spec = self.ray.put(weights), self._pool_spec()
        pending = self._dispatch(weights_ref, spec)
        got: dict[int, Rollout] = {}
        deaths = [0] * len(self.actors)
        while pending:
            ready, _ = self.ray.wait(list(pending), num_returns=1)
            for ref in ready:
                w = pending.pop(ref)
                try:
                    got[w] = self.ray.get(ref)
                except self._actor_errors as err:
                    deaths[w] += 1
                    self._restart(w, err, deaths[w])
                    pending[self.actors[w].rollout.remote(weights_ref, spec)] = w
        wait_s = time.perf_counter() - t0
        parts = [got[w] for w in range(len(self.actors))]
        for b in parts:  # the workers updated their copies of the PFSP records; the learner's pool, here
            self.pool.record(b.pool_opponents, b.win_shares)
        self._last = {
            "wait_s": wait_s,
            "worker_sps": [b.env_steps / max(b.seconds, 1e-9) for b in parts],
            "rollout_bytes": sum(_nbytes(b) for b in parts),
            "weights_bytes": sum(t.numel() * t.element_size() for t in weights.values()),
        }
        return _concat(parts, wait_s)

    def _dispatch(self, weights_ref: Any, spec: list[tuple]) -> dict[Any, int]:
        """Ask every worker for its rollout; the pending refs, each with its worker."""
        return {actor.rollout.remote(weights_ref, spec): w for w, actor in enumerate(self.actors)}

    def _restart(self, w: int, err: BaseException, deaths: int) -> None:
        """Replace dead worker ``w`` by a new actor on the same slots with fresh games (module docstring)."""
        self.restarts += 1
        was = self.info[w].get("pid")
        if deaths > MAX_RESTARTS:
            raise DistributedError(
                f"rollout worker {w} died {deaths} times in one iteration ({first_line(err)}); giving up"
            )
        print(
            f"rollout worker {w} (pid {was}) died ({type(err).__name__}); starting a new one for its "
            f"{self.sizes[w]} games and redoing its share of this iteration's rollout",
            file=sys.stderr,
        )
        with contextlib.suppress(Exception):
            self.ray.kill(self.actors[w])
        self.incarnation[w] += 1
        B = self.args.num_envs
        seat = np.zeros(B, dtype=np.int64)
        opp = np.zeros(B, dtype=np.int64)
        lo, hi = self.first[w], self.first[w] + self.sizes[w]
        seat[lo:hi] = self.gen.integers(self.game.players, size=hi - lo)
        opp[lo:hi] = self.pool.sample(hi - lo, self.gen)
        ref = self._launch(w, _seed(self.seed, 6, w, self.incarnation[w]), seat, opp, self._pool_spec())
        self._await_start(w, ref)

    def replace_evicted(self, evicted: int) -> None:
        """Nothing to do here: each worker moves its games off an evicted snapshot when it next gets the pool."""

    def rollout_stats(self, batch: Rollout) -> dict[str, Any]:
        """The last rollout's transport: each worker's rate, the bytes of the rollouts and of the weights, and
        the learner's wait on the slowest worker (``wait_s``)."""
        return dict(self._last)

    def log(self, writer: Any, step: int, update_s: float) -> None:
        """Per-worker throughput, waiting on workers vs learning, bytes moved and restarts, to TensorBoard."""
        last = self._last
        for w, sps in enumerate(last["worker_sps"]):
            writer.add_scalar(f"charts/worker{w}_SPS", sps, step)
        writer.add_scalar("charts/rollout_wait_s", last["wait_s"], step)
        writer.add_scalar("charts/update_s", update_s, step)
        writer.add_scalar("charts/rollout_MB", last["rollout_bytes"] / 1e6, step)
        writer.add_scalar("charts/weights_MB", last["weights_bytes"] / 1e6, step)
        writer.add_scalar("charts/worker_restarts", self.restarts, step)

    def close(self) -> None:
        """Stop the actors, and the Ray this learner started (if it started one)."""
        for actor in self.actors:
            if actor is not None:
                with contextlib.suppress(Exception):
                    self.ray.kill(actor)
        self.actors = [None] * len(self.actors)
        self._stack.close()


def _cpu_state(net: PolicyNet) -> dict[str, torch.Tensor]:
    return {k: v.detach().cpu() for k, v in net.state_dict().items()}


def _nbytes(b: Rollout) -> int:
    return sum(v.nbytes for v in vars(b).values() if isinstance(v, np.ndarray))


def _concat(parts: list[Rollout], seconds: float) -> Rollout:
    """One Rollout of the workers' rollouts in worker order (GAE is per game, so rows simply stack)."""
    cat: dict[str, Any] = {
        k: np.concatenate([getattr(b, k) for b in parts])
        for k, v in vars(parts[0]).items()
        if isinstance(v, np.ndarray)
    }
    return Rollout(
        **cat,
        env_steps=sum(b.env_steps for b in parts),
        seconds=seconds,
        self_play_games=sum(b.self_play_games for b in parts),
    )
