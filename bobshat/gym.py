"""Single-agent Gymnasium env: one learner seat against fixed bots.

For single-agent libraries such as Stable-Baselines3 and sb3-contrib's
``MaskablePPO``: every other seat is played by a bot (any agent spec, e.g.
``"random"``, ``"strong"``, ``"ppo:runs/x/policy.pt"``), and a step is one
decision of the learner followed by the bots' moves up to the learner's next
decision or the end of the game.

=====================  ======================================================
Action space           ``Discrete(A)``, the game's flat action ids (cards
                       first, then hat choices and bids; see the core)
Observation            ``Box(float32, (D,))``: the learner's seat-relative
                       observation (:mod:`bobshat_env.core.observe`)
Action mask            :meth:`CardGameGymEnv.action_masks` (what MaskablePPO
                       calls) and ``info["action_mask"]``
Reward                 the learner's score change over the step (hand scores
                       arrive when a hand ends, the -15 of a renege at once);
                       ``reward="relative"``: minus the opponents' mean change
Episode                one full game; ``terminated`` when it ends, with
                       ``info["final_scores"]`` (every seat's totals)
Illegal action         ``illegal_action="penalty"`` (default): nothing
                       happens, the reward is ``illegal_reward`` (-10), the
                       learner acts again and ``info["illegal_action"]`` says
                       why (warned once per env); ``max_illegal`` in a row
                       truncate the episode. ``"raise"``: IllegalActionError.
=====================  ======================================================

Registered ids (importing this module registers them)::

    import gymnasium as gym
    env = gym.make("bobshat.gym:bobshat/BobsHat-v0", opponents="random", players=4)
    env = gym.make("bobshat.gym:bobshat/OhHell-v0", opponents="random")

Seeding: ``reset(seed=s)`` fixes the deals and rebuilds the bots named by
specs with seeds drawn from ``s``, so a seeded reset replays exactly.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from bobshat_env.core import rng
from bobshat_env.core.bobs_hat import IllegalActionError
from bobshat_env.games import Game, make_game
from bobshat_env.seating import SeatDispatch
from bobshat_env.text import render as render_table

ILLEGAL_MODES = ("penalty", "raise")
REWARD_MODES = ("score", "relative")
SCORE_BOUND = 100.0  # totals are observed / 100; no game comes near 10,000 points


class CardGameGymEnv(gymnasium.Env):
    """One learner seat of Where's Bob's Hat? or Oh Hell against bots.

    Args:
        game: ``"bobs_hat"`` or ``"oh_hell"``, or a :class:`~bobshat_env.games.Game`.
        opponents: agent specs or agents for the other seats, in seat order
            (P - 1 of them), or one spec for all (default ``"random"``).
        seat: the learner's seat, or None for a seat drawn at every reset.
        view: observation view (``"private"``, ``"public"``, ``"full"``).
        reward: ``"score"`` (the learner's score change) or ``"relative"``
            (minus the mean change of the other seats).
        illegal_action: ``"penalty"`` or ``"raise"``, what an illegal action does (see the module docstring).
        illegal_reward: the reward of an ignored illegal action (see the module docstring).
        max_illegal: how many illegal actions in a row truncate the episode (see the module docstring).
        render_mode: ``"ansi"`` or ``"human"``; the table shows only the
            learner's hand.
        **options: the game's options (``players``, ``hands``, ...).
    """

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 1}

    def __init__(
        self,
        game: str | Game = "bobs_hat",
        opponents: str | Sequence[Any] = "random",
        seat: int | None = 0,
        view: str = "private",
        reward: str = "score",
        illegal_action: str = "penalty",
        illegal_reward: float = -10.0,
        max_illegal: int = 100,
        render_mode: str | None = None,
        **options: Any,
    ) -> None:
        super().__init__()
        self.game = game if isinstance(game, Game) else make_game(game, **options)
        P = self.game.players
        if seat is not None and (isinstance(seat, bool) or not 0 <= int(seat) < P):
            raise ValueError(f"seat must be 0-{P - 1} or None (drawn each reset), got {seat!r}")
        if reward not in REWARD_MODES:
            raise ValueError(f"unknown reward {reward!r}; choose one of {', '.join(REWARD_MODES)}")
        if illegal_action not in ILLEGAL_MODES:
            raise ValueError(f"unknown illegal_action {illegal_action!r}; choose one of {', '.join(ILLEGAL_MODES)}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"unknown render_mode {render_mode!r}; choose one of {self.metadata['render_modes']}")
        if isinstance(opponents, str):
            opponents = [s for s in opponents.split(",") if s.strip()]
        opponents = list(opponents)
        if len(opponents) == 1:
            opponents = opponents * (P - 1)
        if len(opponents) != P - 1:
            raise ValueError(f"{P} players need {P - 1} opponents (or one for all), got {len(opponents)}")
        self._opponent_specs = opponents
        self.fixed_seat = None if seat is None else int(seat)
        self.seat = 0 if seat is None else int(seat)
        self.view = view
        self.reward_mode = reward
        self.illegal_action = illegal_action
        self.illegal_reward = float(illegal_reward)
        self.max_illegal = int(max_illegal)
        self.render_mode = render_mode
        self.action_space = spaces.Discrete(self.game.n_actions)
        self.observation_space = _observation_box(self.game, view)
        self.state: Any = None
        self._seats: Any = None  # calls the bots, with the public void record for those with ``needs_public``
        self.bots: list[Any] = self._build_bots(None)
        self._mask = np.zeros(self.game.n_actions, dtype=bool)
        self._illegal_streak = 0
        self._warned = False

    # -- bots
    def _build_bots(self, seed: int | None) -> list[Any]:
        """One agent per opponent, in order; specs are (re)built with seeds from ``seed``."""
        bots = []
        for i, spec in enumerate(self._opponent_specs):
            if isinstance(spec, str):
                from agents import make_agent  # on first use: a bot's spec may load torch

                bots.append(make_agent(spec, self.game, seed=None if seed is None else seed * 1000 + i))
            else:
                gen = getattr(spec, "gen", None)
                if seed is not None and isinstance(gen, np.random.Generator):
                    spec.gen = np.random.default_rng(seed * 1000 + i)
                bots.append(spec)
        return bots

    def _bot_for(self, seat: int) -> Any:
        return self.bots[seat if seat < self.seat else seat - 1]

    # -- the Gymnasium API
    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        """Start a new game and play the bots up to the learner's first decision."""
        super().reset(seed=seed)
        if seed is not None:
            self.bots = self._build_bots(int(self.np_random.integers(0, 2**31 - 1)))
        if self.fixed_seat is None:
            self.seat = int(self.np_random.integers(0, self.game.players))
        base = rng.seed_to_base(self.np_random)
        self.state = self.game.init(rng.game_keys(base, np.zeros(1, dtype=np.int64), 0))
        self._seats = SeatDispatch(self.game, 1, self.bots)
        self._illegal_streak = 0
        self._play_bots()  # every seat acts in every hand, so no hand ends before the learner's first move
        obs = self._observe()
        info = self._info()
        if self.render_mode == "human":
            self.render()
        return obs, info

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        """The learner's action, then the bots' moves up to its next decision or the end."""
        if self.state is None:
            raise RuntimeError("call reset() before step()")
        if bool(self.game.done(self.state)[0]):
            raise RuntimeError("the game is over: call reset() to start a new one")
        a = int(np.asarray(action).reshape(-1)[0]) if np.ndim(action) else int(action)
        if not (0 <= a < self.game.n_actions and self._mask[a]) and not self._renege_allowed(a):
            return self._illegal(a)
        self._illegal_streak = 0
        res = self._step_core(np.array([a]), self._mask[None])
        rewards = res.rewards[0].astype(np.float64) + self._play_bots()
        terminated = bool(self.game.done(self.state)[0])
        obs = self._observe()
        info = self._info()
        if terminated:
            info["final_scores"] = self.state.scores[0].astype(np.float64).tolist()
        if self.render_mode == "human":
            self.render()
        return obs, self._reward(rewards), terminated, False, info

    def action_masks(self) -> np.ndarray:
        """(A,) bool: the learner's legal actions now (what MaskablePPO asks for)."""
        return self._mask.copy()

    def render(self) -> str | None:
        if self.state is None:
            return None
        text = render_table(self.game, self.state, 0, show_hands=self.seat)
        if self.render_mode == "human":
            print(text + "\n")
            return None
        return text

    def close(self) -> None:
        pass

    # -- internals
    def _renege_allowed(self, a: int) -> bool:
        """In renege mode a held card that breaks follow suit is a legal (costly) renege."""
        if not self.game.renege_mode or not 0 <= a < self.game.module.N_CARDS:
            return False
        st = self.state
        return bool(st.phase[0] == self.game.module.PLAY and st.hands[0, self.seat, a])

    def _illegal(self, a: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        try:
            self.game.step(self.state.copy(), np.array([a]))
            why = f"action {a} is not legal now"
        except (IllegalActionError, ValueError) as err:
            why = str(err)
        if self.illegal_action == "raise":
            raise IllegalActionError(why)
        if not self._warned:
            self._warned = True
            warnings.warn(
                f"{why}. The step is ignored with reward {self.illegal_reward} (illegal_action='penalty'); "
                "mask actions with env.action_masks() (MaskablePPO) or pass illegal_action='raise'.",
                stacklevel=3,
            )
        self._illegal_streak += 1
        info = self._info()
        info["illegal_action"] = why
        truncated = self._illegal_streak >= self.max_illegal
        return self._observe(), self.illegal_reward, False, truncated, info

    def _play_bots(self) -> np.ndarray:
        """Step the bots until the learner is to act or the game ends; (P,) rewards collected."""
        game, st = self.game, self.state
        total = np.zeros(game.players, dtype=np.float64)
        while not bool(game.done(st)[0]) and int(st.cur[0]) != self.seat:
            legal = game.legal_action_mask(st)
            obs = game.observe(st)
            seat = st.cur.astype(np.int64)
            bot = self._bot_for(int(seat[0]))
            action = np.asarray(self._seats.act_rows(bot, obs, legal, seat, np.zeros(1, dtype=np.int64))).reshape(1)
            res = self._step_core(action, legal)
            total += res.rewards[0]
        self._mask = game.legal_action_mask(st)[0] if not bool(game.done(st)[0]) else np.zeros_like(self._mask)
        return total

    def _step_core(self, action: np.ndarray, legal: np.ndarray) -> Any:
        """One core step, keeping the public void record of bots that ask for it up to date."""
        self._seats.before_step(self.state, action)
        res = self.game.step(self.state, action, legal=legal)
        self._seats.after_step(res.new_hand)
        return res

    def _observe(self) -> np.ndarray:
        return self.game.observe(self.state, seat=np.array([self.seat]), view=self.view)[0].copy()

    def _info(self) -> dict:
        return {"action_mask": self._mask.astype(np.int8), "seat": self.seat}

    def _reward(self, rewards: np.ndarray) -> float:
        mine = float(rewards[self.seat])
        if self.reward_mode == "relative":
            others = np.delete(rewards, self.seat)
            return mine - float(others.mean())
        return mine


def _observation_box(game: Game, view: str) -> spaces.Box:
    """Every slice is a 0/1 flag or a count scaled into [0, 1], except the game totals (score / 100)."""
    layout = game.layout_fn(game.config, view)
    low = np.zeros(layout.size, dtype=np.float32)
    high = np.ones(layout.size, dtype=np.float32)
    if "scores" in layout.slices:
        low[layout.slices["scores"]] = -SCORE_BOUND
        high[layout.slices["scores"]] = SCORE_BOUND
    return spaces.Box(low, high, dtype=np.float32)


def bobs_hat_env(**kwargs: Any) -> CardGameGymEnv:
    """Where's Bob's Hat? against bots (entry point of ``bobshat/BobsHat-v0``)."""
    return CardGameGymEnv("bobs_hat", **kwargs)


def oh_hell_env(**kwargs: Any) -> CardGameGymEnv:
    """Oh Hell against bots (entry point of ``bobshat/OhHell-v0``)."""
    return CardGameGymEnv("oh_hell", **kwargs)


def _register() -> None:
    for env_id, entry in (("bobshat/BobsHat-v0", "bobs_hat_env"), ("bobshat/OhHell-v0", "oh_hell_env")):
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point=f"bobshat.gym:{entry}", disable_env_checker=False)


_register()

__all__ = ["CardGameGymEnv", "bobs_hat_env", "oh_hell_env"]
