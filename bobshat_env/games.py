"""One small description per game, so adapters stay game-agnostic.

A :class:`Game` bundles a validated configuration with the batched core's
functions (init, step, legal mask, observation). The vector env, the AEC env,
records and the command line all go through it, so adding a game is adding
one entry here, never another copy of an adapter.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .config import BobsHatConfig, ConfigError, OhHellConfig
from .core import bobs_hat, observe

GAMES = ("bobs_hat", "oh_hell")


@dataclass(frozen=True)
class Game:
    """A game's configuration and its batched rules, behind one interface."""

    name: str
    config: Any  # BobsHatConfig | OhHellConfig
    module: Any  # the core module (bobs_hat or oh_hell)
    n_actions: int
    observe_fn: Callable[..., np.ndarray]
    layout_fn: Callable[..., observe.ObsLayout]
    decode_fn: Callable[..., dict]

    @property
    def players(self) -> int:
        return self.config.players

    def obs_size(self, view: str = "private") -> int:
        return self.layout_fn(self.config, view).size

    def init(self, keys: np.ndarray, auto_deal: bool = True) -> Any:
        return self.module.init(self.config, keys, auto_deal=auto_deal)

    def step(
        self,
        state: Any,
        actions: np.ndarray,
        active: np.ndarray | None = None,
        auto_deal: bool = True,
        legal: np.ndarray | None = None,
        result: Any = None,
    ) -> Any:
        return self.module.step(
            self.config, state, actions, active=active, auto_deal=auto_deal, legal=legal, result=result
        )

    def legal_action_mask(self, state: Any, out: np.ndarray | None = None) -> np.ndarray:
        return self.module.legal_action_mask(self.config, state, out=out)

    def observe(
        self, state: Any, seat: np.ndarray | None = None, view: str = "private", out: np.ndarray | None = None
    ) -> np.ndarray:
        return self.observe_fn(self.config, state, seat=seat, view=view, out=out)

    def decode(self, vec: np.ndarray, view: str = "private") -> dict:
        return self.decode_fn(self.config, vec, view=view)

    def done(self, state: Any) -> np.ndarray:
        return state.phase == self.module.DONE

    def action_str(self, action: int) -> str:
        return self.module.action_str(action)


def make_game(name: str = "bobs_hat", **options: Any) -> Game:
    """A :class:`Game` by name with its options; bad names or options raise ConfigError."""
    if name == "bobs_hat":
        cfg = options.pop("config", None) or BobsHatConfig.from_dict(options)
        return Game(
            "bobs_hat", cfg, bobs_hat, bobs_hat.N_ACTIONS, observe.bh_observe, observe.bh_layout, observe.bh_decode
        )
    if name == "oh_hell":
        from .core import oh_hell  # noqa: PLC0415 - written alongside; imported on use

        cfg = options.pop("config", None) or OhHellConfig.from_dict(options)
        return Game(
            "oh_hell", cfg, oh_hell, oh_hell.N_ACTIONS, observe.oh_observe, observe.oh_layout, observe.oh_decode
        )
    raise ConfigError(f"unknown game {name!r}; choose one of {', '.join(GAMES)}")
