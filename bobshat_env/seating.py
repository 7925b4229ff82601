"""Seat dispatch: each agent acts for the games where one of its seats is to play.

Every loop that seats agents at a batch of games (the arena, the PPO
rollout, the Gymnasium env, the interactive table) does the same two things
at each step: call every agent once, on the rows where it is to act, and
keep the public void record (:class:`~bobshat_env.core.resample.VoidTracker`)
that agents declaring ``needs_public = True`` receive as
``act(..., public=...)``. :class:`SeatDispatch` is that one routine. The
record holds only face-up facts (who failed to follow which suit this
hand), so handing it to an agent reveals nothing hidden.

>>> from bobshat_env.games import make_game
>>> game = make_game("bobs_hat", players=4)
>>> seats = SeatDispatch(game, batch=8, agents=[])
>>> seats.tracker is None  # no agent asks for the record: none is kept
True
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import numpy as np

from .core.resample import void_tracker

if TYPE_CHECKING:
    from .games import Game


def needs_public(agent: Any) -> bool:
    """Whether ``agent`` declares ``needs_public = True`` (then it also gets ``act(..., public=...)``)."""
    return bool(getattr(agent, "needs_public", False))


class SeatDispatch:
    """Calls agents on their rows of a batch of ``batch`` games and keeps the public void record they may need.

    The record is kept only when one of ``agents`` (the agents that will
    play) needs it. Per step: :meth:`act` (or :meth:`act_rows`) for the
    actions, then :meth:`before_step` with the actions about to be applied,
    the engine's step, and :meth:`after_step` with the games that start a
    new hand.
    """

    def __init__(self, game: Game, batch: int, agents: Sequence[Any]) -> None:
        self.tracker = void_tracker(game, batch) if any(needs_public(a) for a in agents) else None

    def act_rows(self, agent: Any, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray, rows: np.ndarray) -> Any:
        """``agent``'s actions for games ``rows`` of the batch (``obs``, ``mask``, ``seat``: the whole batch's)."""
        if self.tracker is not None and needs_public(agent):
            return agent.act(obs[rows], mask[rows], seat[rows], public=self.tracker.rows(rows))
        return agent.act(obs[rows], mask[rows], seat[rows])

    def act(
        self,
        agents: Sequence[Any],
        who: np.ndarray,
        rows: np.ndarray,
        obs: np.ndarray,
        mask: np.ndarray,
        seat: np.ndarray,
        out: np.ndarray,
    ) -> None:
        """``out[rows] = actions``: ``agents[who[i]]`` acts for game ``rows[i]``, each agent called once, in index
        order, for all its rows (several seats of one agent included)."""
        for j in np.unique(who):
            r = rows[who == j]
            out[r] = self.act_rows(agents[j], obs, mask, seat, r)

    def before_step(self, state: Any, actions: np.ndarray, active: np.ndarray | None = None) -> None:
        """Note the voids that ``actions`` (about to be applied to ``state``) reveal."""
        if self.tracker is not None:
            self.tracker.before_step(state, actions, active)

    def after_step(self, new_hand: np.ndarray) -> None:
        """Forget the record of the games that start a new hand (or a new game)."""
        if self.tracker is not None:
            self.tracker.after_step(SimpleNamespace(new_hand=new_hand))
