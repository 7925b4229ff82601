"""Rollouts: the learner and its opponents play ``num_steps`` env steps; the learner's decisions, with GAE, come back.

A :class:`~train.ppo.rollout.Rollout` is a plain dataclass of NumPy arrays (the learner's
decisions in the network's labelling, their log-probabilities and values
when sampled, GAE advantages and returns) and a few counts, so it pickles.
Advantages are computed by the collector because GAE follows each (game,
seat)'s interleaved decisions, which live in one env; rollouts of several
collectors can then be concatenated row-wise for one update.

Two classes collect them, both a :class:`Collector`: the in-process
:class:`RolloutCollector`, and :class:`train.ppo.workers.RolloutWorkers`,
the learner's side of Ray actors that each run a :class:`RolloutCollector`
on their own slots of the batch. A :class:`RolloutCollector` is built from
``(env, net, pool, gen, args, seed)`` and reads nothing else (torch's global
RNG samples the actions; with ``overlap_rollout`` a generator of its own, seeded
from ``seed``). It updates the PFSP record of the pool it holds as
games end (opponents drawn later in the same rollout depend on it); a rollout
also carries each finished game's opponent and the learner's win share
(``pool_opponents``, ``win_shares``), so a learner whose pool is not the
collector's can ``pool.record`` them itself.

Rewards and episodes in a turn-based game
    Each learner decision is credited with its own seat's score changes from
    its action up to its next decision (or the episode's end), scaled by
    ``reward_scale`` (:func:`margin_rewards`: less ``opponent_weight`` times
    the other seats' mean). With ``train_for: hand`` a hand is an episode;
    with ``train_for: game`` the whole game is. At the end of a rollout, a
    decision whose episode is still running bootstraps from the value of the
    current state seen from its seat.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from copy import deepcopy
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import torch

from agents.ppo_agent import PolicyNet, masked_logits, sample_actions
from bobshat_env.seating import SeatDispatch
from bobshat_env.vector import VectorEnv
from train.evaluate.statistics import win_shares
from train.ppo.config import Args
from train.ppo.rollout import Rollout, interleaved_gae
from train.ppo.selfplay import SELF, OpponentPool
from train.ppo.update import autocast, from_half, inference_copy, net_input

if TYPE_CHECKING:
    from bobshat_env.games import Game


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


def rollout_length(game: Game) -> int:
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


def env_seed(seed: int, iteration: int) -> int:
    """Seed of the env's games from iteration ``iteration`` on (a resumed run draws fresh games)."""
    return int(np.random.SeedSequence([seed, iteration]).generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))


class RolloutCancelled(Exception):
    """A rollout stopped part-way because :attr:`RolloutCollector.cancelled` was set (the run is ending)."""


class _Storage:
    """One rollout's decisions, at most one learner decision per game and step (``T`` steps of ``B`` games); a
    :class:`Rollout` returns views of them."""

    def __init__(self, T: int, B: int, input_size: int, n_actions: int) -> None:
        cap = T * B
        self.obs = np.zeros((cap, input_size), dtype=np.float16)  # 0/1 and small fractions: half the memory
        self.obs_t = torch.from_numpy(self.obs)  # same memory: torch converts to float16 faster than NumPy
        self.mask = np.zeros((cap, n_actions), dtype=bool)
        self.act = np.zeros(cap, dtype=np.int64)
        self.logp = np.zeros(cap, dtype=np.float32)
        self.val = np.zeros(cap, dtype=np.float32)
        self.rew = np.zeros(cap, dtype=np.float32)  # scaled score changes credited to the decision
        self.done = np.zeros(cap, dtype=bool)  # the episode ended before this seat's next decision
        self.game = np.zeros(cap, dtype=np.int64)
        self.seat = np.zeros(cap, dtype=np.int64)
        self.step_start = np.zeros(T + 1, dtype=np.int64)  # decisions of step t: [step_start[t], step_start[t+1])


class Collector(Protocol):
    """What the learner (:class:`train.ppo.learner.Learner`) asks of a rollout collector: the in-process
    :class:`RolloutCollector`, or :class:`train.ppo.workers.RolloutWorkers` (Ray actors).

    A rollout is :meth:`start_rollout` (in the thread that owns the network: take what it reads of the
    weights), then :meth:`run_rollout`; :meth:`collect_rollout` does both. A collector whose :attr:`overlaps`
    is true can run the rollout on another thread while the update changes the weights (``overlap_rollout``),
    and stops it at its next step on :meth:`cancel`."""

    overlaps: bool  # run_rollout may run beside the update, and honours cancel()

    def collect_rollout(self) -> Rollout:
        """One rollout with the current weights and pool (GAE included): :meth:`start_rollout`, :meth:`run_rollout`."""
        ...

    def start_rollout(self) -> None:
        """Take what the next rollout reads of the learner's network, now."""
        ...

    def run_rollout(self) -> Rollout:
        """The rollout :meth:`start_rollout` prepared."""
        ...

    def cancel(self) -> None:
        """Stop a running :meth:`run_rollout` at its next step (it raises :class:`RolloutCancelled`)."""
        ...

    def replace_evicted(self, evicted: int) -> None:
        """The pool evicted member ``evicted``: move the games off it."""
        ...

    def rollout_stats(self, batch: Rollout) -> dict[str, Any]:
        """The last rollout (``batch``)'s transport: ``worker_sps`` (each collector's table decisions per second),
        ``rollout_bytes`` and ``weights_bytes`` (moved between processes)."""
        ...

    def log(self, writer: Any, step: int, update_s: float) -> None:
        """Its own scalars of the last iteration to TensorBoard (none in-process)."""
        ...

    def close(self) -> None:
        """Release what it holds (Ray actors; nothing in-process)."""
        ...


class RolloutCollector:
    """Plays the learner and its opponent pool on one VectorEnv; :meth:`collect_rollout` returns a :class:`Rollout`.

    It reads only what it is given: ``env`` (its own game slots, reset here
    with ``seed``), ``net`` (the policy it samples from; a copy in a rollout
    worker), ``pool`` (the opponents, and the PFSP record it updates as games
    end), ``gen`` (draws of seats and opponents) and ``args`` (rollout
    length, rewards, GAE, bf16). Action sampling draws from torch's global
    RNG, seeded by :func:`train` (with ``overlap_rollout``: :attr:`sampler`, as the
    rollout then runs beside the update). Game ``i`` of the env seats the learner in
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

        # with overlap_rollout the next rollout is collected while the update reads this one (Learner.update): it
        # samples from a copy of the weights taken before the update starts (start_rollout), draws its uniforms
        # from a generator of its own (the update draws its permutations from torch's global one on the other
        # thread), and writes into the other of two storages
        self.policy = deepcopy(net) if args.overlap_rollout else net  # deepcopy: no draw from torch's global RNG
        self.sampler: torch.Generator | None = None
        if args.overlap_rollout:
            self.sampler = torch.Generator().manual_seed(int(np.random.SeedSequence([seed, 1]).generate_state(1)[0]))
        self.T = T = args.num_steps or rollout_length(game)
        self._storages = [_Storage(T, B, net.input_size, A) for _ in range(2 if args.overlap_rollout else 1)]
        self.st = self._storages[0]  # where the running rollout writes
        self.pending = np.full((B, P), -1, dtype=np.int64)  # each (game, seat)'s latest decision collecting rewards
        self.hand_no = env.hand_number
        self.ep_return = np.zeros((B, P), dtype=np.float64)  # unscaled learner returns of the running episodes
        self.n = 0
        self.infer: PolicyNet | None = None  # the rollout's copy of ``policy`` (inference_copy), made per rollout
        self.on_step: Callable[[int, int], None] | None = None  # called after each env step with (step, T)
        self.cancelled = False  # set by cancel(), from another thread: the running rollout stops at its next step
        # what the running rollout gathers as its games end (reset by run_rollout)
        self._returns: list[np.ndarray] = []  # unscaled learner returns of the finished episodes
        self._results: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (opponent, score, win share) per game
        self._self_games = 0  # finished games of pure self-play

    overlaps = True  # with overlap_rollout, run_rollout runs beside the update (Learner.update)

    def collect_rollout(self) -> Rollout:
        """``T`` env steps, then the bootstrap values and GAE: one :class:`Rollout`."""
        self.start_rollout()
        return self.run_rollout()

    def cancel(self) -> None:
        """Stop the running rollout at its next step (called from the update's thread when the update fails)."""
        self.cancelled = True

    def start_rollout(self) -> None:
        """What a rollout reads of the learner's network, taken now (in the thread that owns the network): with
        ``overlap_rollout``, a copy of its weights; then the copy it samples from (:func:`inference_copy`), and
        the storage it writes (the other one than the last rollout's, which the update may still read)."""
        if self.policy is not self.net:
            self.policy.load_state_dict(self.net.state_dict())
        self.infer = inference_copy(self.policy, self.args.bf16, self.infer)
        self.st = self._storages[(self._storages.index(self.st) + 1) % len(self._storages)]
        self.cancelled = False

    def run_rollout(self) -> Rollout:
        """The rollout :meth:`start_rollout` prepared. It reads nothing the update writes, so with
        ``overlap_rollout`` it runs on a second thread while the update runs. Raises
        :class:`RolloutCancelled` at its next step once :attr:`cancelled` is set."""
        t0 = time.perf_counter()
        B, T, args, st = self.env.num_envs, self.T, self.args, self.st
        self.n = 0
        self.pending[:] = -1  # the last rollout's decisions were bootstrapped; none carries over
        self._returns, self._results, self._self_games = [], [], 0
        for step in range(T):
            if self.cancelled:
                raise RolloutCancelled
            st.step_start[step] = self.n
            actions = np.empty(B, dtype=np.int64)
            mine = self.is_learner[self.rows_all, self.ts.seat]
            self.learner_acts(np.nonzero(mine)[0], actions)
            self._opponents_act(np.nonzero(~mine)[0], actions)
            self._advance(actions)
            if self.on_step is not None:
                self.on_step(step + 1, T)
        st.step_start[T] = n = self.n
        adv = interleaved_gae(
            st.rew[:n],
            st.val[:n],
            st.done[:n],
            st.game[:n],
            st.seat[:n],
            st.step_start,
            self._bootstrap(),
            args.gamma,
            args.gae_lambda,
        )
        results = [np.concatenate(r) for r in zip(*self._results)] if self._results else [np.zeros(0)] * 3
        return Rollout(
            obs=st.obs[:n],
            mask=st.mask[:n],
            actions=st.act[:n],
            logprobs=st.logp[:n],
            values=st.val[:n],
            advantages=adv,
            returns=adv + st.val[:n],
            env_steps=B * T,
            seconds=time.perf_counter() - t0,
            episode_returns=np.concatenate(self._returns) if self._returns else np.zeros(0),
            pool_opponents=results[0].astype(np.int64),
            final_scores=results[1],
            win_shares=results[2],
            self_play_games=self._self_games,
        )

    def learner_acts(self, rows: np.ndarray, actions: np.ndarray) -> None:
        """Sample the learner's actions in games ``rows`` and store its decisions (in ``actions[rows]``).

        One of the points ``bobshat bench --train`` times (benchmarks/train_speed.py ``TIMED``)."""
        k = rows.size
        if not k:
            return
        net, ts, n, st = self.policy, self.ts, self.n, self.st
        sl = slice(n, n + k)
        # stored in the network's own labelling (trump_symmetry): the update then needs no relabelling
        r_t = torch.from_numpy(rows)
        x, m, k_sym = net.prepare(
            torch.from_numpy(ts.obs).index_select(0, r_t), torch.from_numpy(ts.action_mask).index_select(0, r_t)
        )
        st.obs_t[sl].copy_(x)
        st.mask[sl] = m.numpy()
        dev = net.device  # the input stage ran on the CPU; the products run where the weights are
        in_dtype = net_input(self.args.bf16, dev.type)  # from the stored float16: as the update reads them
        infer = self.infer if self.infer is not None else net  # set by start_rollout
        with torch.inference_mode(), autocast(self.args.bf16 and infer is net, dev.type):
            logits, value = infer.head(from_half(st.obs_t[sl].to(dev), in_dtype))
            logits = masked_logits(logits.float(), torch.from_numpy(st.mask[sl]))
            a = sample_actions(logits, self.sampler).cpu()
            logp = torch.log_softmax(logits, dim=-1).gather(1, a.to(dev)[:, None]).squeeze(1)
        st.act[sl], st.logp[sl] = a.numpy(), logp.cpu().numpy()
        st.val[sl] = value.float().cpu().numpy()
        actions[rows] = net.original_actions(a, k_sym).numpy()
        st.rew[sl], st.done[sl] = 0.0, False
        seat = ts.seat[rows]
        st.game[sl], st.seat[sl] = rows, seat
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
        self.st.rew[pending[has]] += margin_rewards(ts.rewards, args.opponent_weight)[has] * args.reward_scale
        self.ep_return += np.where(self.is_learner, ts.rewards, 0.0)
        hand_no = env.hand_number
        new_hand = ts.done | (hand_no != self.hand_no)
        self.hand_no = hand_no
        self.seats.after_step(new_hand)
        boundary = ts.done if args.train_for == "game" else new_hand
        if boundary.any():
            ends = pending[boundary]
            self.st.done[ends[ends >= 0]] = True
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
        net = self.policy  # the rollout's weights (a copy with overlap_rollout)
        with torch.inference_mode(), autocast(self.args.bf16, net.device.type):
            for p in range(P):
                r = np.nonzero(self.pending[:, p] >= 0)[0]
                if r.size:
                    obs_p = self.env.observe(np.full(B, p))[r]
                    boot[r, p] = net(torch.from_numpy(obs_p))[1].float().cpu().numpy()
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

    def rollout_stats(self, batch: Rollout) -> dict[str, Any]:
        """One collector in this process: its rate over the rollout, nothing moved."""
        return {"worker_sps": [batch.env_steps / batch.seconds], "rollout_bytes": 0, "weights_bytes": 0}

    def log(self, writer: Any, step: int, update_s: float) -> None:
        """Nothing beyond the learner's own scalars in-process."""

    def close(self) -> None:
        """Nothing to release in-process."""
