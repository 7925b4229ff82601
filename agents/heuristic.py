"""One rule-based agent class for every game and strategy: the game's heuristics give the decisions.

A game's heuristics module (``agents/heuristic_<name>.py``) reads an observation
into its ``Facts`` (``facts_from_obs``) and decides each row with a strategy's
functions (its ``decide``, which routes the rows by phase to the hat, bid and
play functions). :class:`HeuristicAgent` is the batched agent around them,
written once: the game check, the name, the config, ``needs_public``, ``act``.
Each module makes its agents with :func:`heuristic_agent`, e.g.::

    SimpleAgent = heuristic_agent(
        "bobs_hat", "simple", facts_from_obs, choose_simple, needs_public=False,
        doc="Count-based bids, win the tricks you want, shed the rest.",
    )
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

if TYPE_CHECKING:
    from bobshat_env.games import Game

Facts = Any  # each game's own Facts dataclass
FactsFn = Callable[[Any, np.ndarray, np.ndarray, "dict | None"], Facts]  # (config, obs, seat, public) -> Facts
ChooseFn = Callable[[Any, Facts, np.ndarray], np.ndarray]  # (config, facts, bool mask) -> (B,) legal actions


class HeuristicAgent:
    """A rule-based bot of one game: ``act`` reads the facts of each observation and lets the strategy choose.

    Subclasses (made by :func:`heuristic_agent`) set the game, the strategy's name and its two functions.
    With ``needs_public`` the arena hands it the public void record of the hand; without it (e.g. inside a
    Gymnasium env) the facts use the voids visible in the current trick.
    """

    game_name: ClassVar[str]
    strategy: ClassVar[str]
    needs_public: ClassVar[bool]
    facts: ClassVar[FactsFn]
    choose: ClassVar[ChooseFn]

    def __init__(self, game: Game | None = None, seed: int | None = None):
        if game is None or game.name != self.game_name:
            raise ValueError(f"the {self.strategy!r} agent of {self.game_name} needs a {self.game_name} game")
        self.name = self.strategy
        self.cfg = game.config

    def act(self, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray, public: dict | None = None) -> np.ndarray:
        """(B,) legal actions for observations (B, D), masks (B, A) and seats (B,)."""
        f = type(self).facts(self.cfg, obs, seat, public)
        return type(self).choose(self.cfg, f, np.asarray(mask, dtype=bool))


def heuristic_agent(
    game_name: str, strategy: str, facts: FactsFn, choose: ChooseFn, *, needs_public: bool, doc: str
) -> type[HeuristicAgent]:
    """The agent class of ``strategy`` in ``game_name`` (a subclass, so the entry points of the game
    descriptions name a class, and ``make_agent`` calls it as it calls every agent class)."""
    name = f"{strategy.capitalize()}Agent"
    attrs = {
        "__doc__": doc,
        "__module__": getattr(choose, "__module__", __name__),
        "game_name": game_name,
        "strategy": strategy,
        "needs_public": needs_public,
        "facts": staticmethod(facts),
        "choose": staticmethod(choose),
    }
    return type(name, (HeuristicAgent,), attrs)
