"""PettingZoo AEC adapter over the batched core with a batch of one game.

This module only adds PettingZoo's contract (agents, spaces, rewards,
terminations, rendering) around :class:`~bobshat_env.games.Game`; every rule
lives in the core. ``bobs_hat_v0`` and ``oh_hell_v0`` are thin modules that
pick the game.

=====================  ======================================================
Agents                 ``player_0`` ... ``player_{P-1}`` (seat order)
Action space           ``Discrete(A)``: cards first, then the game's other
                       actions at named offsets (see the core's docstring)
Observation            ``{"observation": Box(float32, (D,)),
                       "action_mask": Box(int8, (A,))}``; seat-relative
                       (see :mod:`bobshat_env.core.observe`); the mask is
                       all zeros for an agent that is not to act
Rewards                each hand's score for every seat when the hand ends
                       (and -15 to a reneging seat in renege mode)
Episode                one full game (``hands=1`` makes it one hand)
=====================  ======================================================

An illegal action raises :class:`IllegalActionError` and changes nothing; in
renege mode a card that breaks follow suit applies the renege rule instead.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from .core import rng
from .games import Game, make_game
from .text import render as render_table


class CardGameEnv(AECEnv):
    """AEC environment for one game of Where's Bob's Hat? or Oh Hell."""

    metadata: dict[str, Any] = {
        "render_modes": ["human", "ansi"],
        "name": "card_game",
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(
        self, game: str | Game = "bobs_hat", render_mode: str | None = None, view: str = "private", **options: Any
    ) -> None:
        super().__init__()
        self.game = game if isinstance(game, Game) else make_game(game, **options)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"unknown render_mode {render_mode!r}; choose one of {self.metadata['render_modes']}")
        self.render_mode = render_mode
        self.view = view
        P, A, D = self.game.players, self.game.n_actions, self.game.obs_size(view)
        self.possible_agents = [f"player_{i}" for i in range(P)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(low=-np.inf, high=np.inf, shape=(D,), dtype=np.float32),
                "action_mask": spaces.Box(low=0, high=1, shape=(A,), dtype=np.int8),
            }
        )
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(A) for a in self.possible_agents}
        self._base: int | None = None
        self._games = 0
        self._seats = [np.array([i]) for i in range(P)]  # observe()'s seat argument, made once
        self._step = functools.partial(self.game.module.step, self.game.config)
        self.state: Any = None

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Start a new game. A seed restarts the sequence of games it draws."""
        if seed is not None or self._base is None:
            self._base = rng.seed_to_base(seed)
            self._games = 0
        self.state = self.game.init(rng.game_keys(self._base, np.zeros(1, dtype=np.int64), self._games))
        self._games += 1
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[int(self.state.cur[0])]
        self._mask = self.game.legal_action_mask(self.state)
        self._result = self.game.new_result(1)  # reused by every step

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self.agent_name_mapping[agent]
        obs = self.game.observe(self.state, seat=self._seats[seat], view=self.view)[0]
        if agent == self.agent_selection and not self.terminations.get(agent, True):
            mask = self._mask[0].view(np.int8).copy()  # bool and int8 share their bytes
        else:
            mask = np.zeros(self.game.n_actions, dtype=np.int8)
        return {"observation": obs, "action_mask": mask}

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if type(action) is not int and (isinstance(action, bool) or not isinstance(action, np.integer)):
            raise ValueError(f"{agent} must act with an integer action id, got {action!r}")
        # raises, with nothing changed, if the action is illegal
        res = self._step(self.state, np.array([action], dtype=np.int64), legal=self._mask, result=self._result)
        self.game.legal_action_mask(self.state, out=self._mask)
        self._cumulative_rewards[agent] = 0.0
        self.rewards = dict(zip(self.possible_agents, map(float, res.rewards[0].tolist())))
        if res.game_done[0]:
            self.terminations = {a: True for a in self.agents}
            self.infos = {a: {"final_scores": self.state.scores[0].astype(float).tolist()} for a in self.agents}
        else:
            self.agent_selection = self.possible_agents[int(self.state.cur[0])]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | None:
        if self.state is None:
            return None
        text = render_table(self.game, self.state, 0)
        if self.render_mode == "human":
            print(text + "\n")
            return None
        return text

    def close(self) -> None:
        pass


class OrderEnforcing(wrappers.OrderEnforcingWrapper):
    """PettingZoo's order-enforcing wrapper, with the per-decision reads
    (``last``, ``agents``, ``agent_selection``) answered by the env directly
    once it has been reset.

    The generic wrapper reaches each of those fields through two
    ``__getattr__`` hops, which in the standard ``agent_iter``/``last`` loop
    costs about as much as a whole step of the engine. Before ``reset`` they
    raise the same ``AttributeError`` as the generic wrapper.
    """

    def last(self, observe: bool = True) -> tuple:
        if not self._has_reset:
            raise AttributeError("agent_selection cannot be accessed before reset")
        return self.env.last(observe)

    @property
    def agents(self) -> list[str]:
        if not self._has_reset:
            raise AttributeError("agents cannot be accessed before reset")
        return self.env.agents

    @property
    def agent_selection(self) -> str:
        if not self._has_reset:
            raise AttributeError("agent_selection cannot be accessed before reset")
        return self.env.agent_selection
