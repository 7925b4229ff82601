"""Batched environment: B games stepped at once, one policy call per step.

Every game in the batch always has exactly one seat to act, so a step takes
one action per game and returns, per game, the next acting seat with its
observation and legal-action mask, the score change of every seat, and
whether a game ended.

Autoreset mode: **same step**. When a game ends during :meth:`VectorEnv.step`,
that step returns ``done[i] = True``, the final rewards of the old game in
``rewards[i]`` and its totals in ``final_scores[i]``, and already the first
observation, mask and seat of the next game in slot ``i``. There is no dummy
step to skip (Gymnasium's ``AutoresetMode.SAME_STEP``, as in Pgx/EnvPool).

Reproducibility: slot ``i``'s ``g``-th game is drawn from
``rng.game_keys(seed, i, g)``, so the same seed gives the same games in every
slot whatever the batch size. ``first_slot`` numbers an env's slots from
there: envs of slots ``[0, b)`` and ``[b, B)`` play the games of one env of
``B`` slots (distributed rollouts split one batch this way).

>>> env = VectorEnv("bobs_hat", num_envs=8, players=4)
>>> ts = env.reset(seed=0)
>>> ts.obs.shape, ts.action_mask.shape
((8, 442), (8, 86))
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .core import rng
from .games import Game, make_game


class TimeStep(NamedTuple):
    """What the vector env returns after reset and after every step."""

    obs: np.ndarray  # (B, D) float32: observation of the seat to act
    action_mask: np.ndarray  # (B, A) bool: its legal actions
    seat: np.ndarray  # (B,) int: the seat to act (absolute)
    rewards: np.ndarray  # (B, P) float32: every seat's score change this step
    done: np.ndarray  # (B,) bool: a game ended this step (its slot was reset)
    final_scores: np.ndarray  # (B, P) float32: totals of the game that ended, 0 elsewhere


class VectorEnv:
    """B games of one configuration, stepped together (same-step autoreset).

    Args:
        game: ``"bobs_hat"`` or ``"oh_hell"``, or a :class:`Game`.
        num_envs: batch size B.
        view: observation view, ``"private"``, ``"public"`` or ``"full"``.
        copy_obs: return a fresh observation array each step (default). With
            False the env reuses one buffer, overwritten by the next step:
            faster when the caller copies it into a rollout buffer anyway.
        record: keep a record (docs/records.md) of every finished game, collected
            with :meth:`pop_records` (costs a little time per step).
        agent_names: the names written in the records, one per seat.
        first_slot: the slot number of game 0 (see Reproducibility above).
        **options: the game's options (see :mod:`bobshat_env.core.config`).
    """

    def __init__(
        self,
        game: str | Game = "bobs_hat",
        num_envs: int = 1,
        view: str = "private",
        copy_obs: bool = True,
        record: bool = False,
        agent_names: list[str] | None = None,
        first_slot: int = 0,
        **options: Any,
    ):
        self.game = game if isinstance(game, Game) else make_game(game, **options)
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        self.num_envs = int(num_envs)
        self.view = view
        self.copy_obs = copy_obs
        self._mask = np.empty((self.num_envs, self.game.n_actions), dtype=bool)  # the acting seats' legal actions
        self.num_players = self.game.players
        self.num_actions = self.game.n_actions
        self.obs_size = self.game.obs_size(view)
        if isinstance(first_slot, bool) or not isinstance(first_slot, (int, np.integer)) or first_slot < 0:
            raise ValueError(f"first_slot must be a non-negative integer, got {first_slot!r}")
        self._slots = int(first_slot) + np.arange(self.num_envs)
        self._games_played = np.zeros(self.num_envs, dtype=np.int64)
        self._base: int | None = None
        self.state: Any = None
        self._obs = np.empty((self.num_envs, self.obs_size), dtype=np.float32)  # every cell written each step
        self.record = record
        self.agent_names = agent_names
        self._recorder: Any = None
        self._records: list[dict] = []

    def reset(self, seed: int | np.random.Generator | None = None) -> TimeStep:
        """Start a fresh game in every slot."""
        self._base = rng.seed_to_base(seed)
        self._games_played[:] = 0
        self.state = self.game.init(rng.game_keys(self._base, self._slots, 0))
        if self.record:
            from .records import Recorder

            self._recorder = Recorder(self.game, self.state, agents=self.agent_names, keep=False)
            self._records = []
        zeros = np.zeros((self.num_envs, self.num_players), dtype=np.float32)
        return self._timestep(zeros, np.zeros(self.num_envs, dtype=bool), zeros.copy())

    def step(self, actions: np.ndarray) -> TimeStep:
        """Apply one action per game; illegal actions raise before any change."""
        if self.state is None:
            raise RuntimeError("call reset() before step()")
        before = (self.state.phase.copy(), self.state.cur.copy()) if self._recorder is not None else None
        res = self.game.step(self.state, np.asarray(actions), legal=self._mask)
        if before is not None:
            self._records.extend(self._recorder.record(before[0], before[1], actions, res, self.state))
        rewards = res.rewards.astype(np.float32)
        done = res.game_done
        final = np.zeros_like(rewards)
        idx = np.nonzero(done)[0]
        if idx.size:
            final[idx] = self.state.scores[idx]
            self._games_played[idx] += 1
            fresh = self.game.init(rng.game_keys(self._base, self._slots[idx], self._games_played[idx]))
            self.state.put(idx, fresh)
        return self._timestep(rewards, done, final)

    def _timestep(self, rewards: np.ndarray, done: np.ndarray, final: np.ndarray) -> TimeStep:
        """The step's results with the acting seats' masks and observations, written into reused buffers."""
        self.game.legal_action_mask(self.state, out=self._mask)
        obs = self.game.observe(self.state, view=self.view, out=self._obs)
        obs = obs.copy() if self.copy_obs else obs
        return TimeStep(obs, self._mask.copy(), self.state.cur.astype(np.int64), rewards, done, final)

    @property
    def hand_number(self) -> np.ndarray:
        """(B,) the hand each game is in, from 0 (a slot whose game just ended: its next game's first hand).

        A game starts a new hand at a step where this changes or ``done`` is set.
        """
        return self.state.hand_no.astype(np.int64)

    def observe(self, seat: int | np.ndarray) -> np.ndarray:
        """(B, D) float32 observation of every game from ``seat`` (one seat, or one per game), whoever is to act.

        A fresh array in the env's view; e.g. the value of the current state
        for a seat that is not to act (bootstrapping at the end of a rollout).
        """
        if self.state is None:
            raise RuntimeError("call reset() before observe()")
        seats = np.broadcast_to(np.asarray(seat, dtype=np.int64), (self.num_envs,))
        if seats.size and (seats.min() < 0 or seats.max() >= self.num_players):
            raise ValueError(f"seat must be 0-{self.num_players - 1}, got {seat!r}")
        return self.game.observe(self.state, seat=np.ascontiguousarray(seats), view=self.view)

    def pop_records(self) -> list[dict]:
        """The records of the games finished since the last call (``record=True``)."""
        if not self.record:
            raise RuntimeError("this VectorEnv was made without record=True")
        out, self._records = self._records, []
        return out

    @property
    def games_played(self) -> np.ndarray:
        """(B,) games finished so far in each slot."""
        return self._games_played.copy()
