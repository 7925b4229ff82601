"""Play batches of games between agents seated at the table.

This is the loop under ``bobshat simulate`` and the tournaments: games are
stepped together on the batched core, and at each step every agent acts once
for all the games where its seat is to play.
Game ``i`` of a run uses key ``rng.game_keys(seed, i)``, so results do not
depend on how the games are split into batches.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bobshat_env.core import rng
from bobshat_env.games import Game
from bobshat_env.seating import SeatDispatch

from .base import Agent


@dataclass
class ArenaResult:
    """Totals of every game played, by absolute seat."""

    totals: np.ndarray  # (G, P) final scores
    decisions: int  # agent decisions made
    seconds: float
    records: list[dict] = field(default_factory=list)

    @property
    def games(self) -> int:
        return int(self.totals.shape[0])


def play_games(
    game: Game,
    agents: list[Agent],
    n_games: int,
    seed: int = 0,
    batch_size: int = 1024,
    recorder_factory: Any = None,
    game_offset: int = 0,
    progress: Any = None,
    keys: np.ndarray | None = None,
    seating: np.ndarray | None = None,
) -> ArenaResult:
    """Play ``n_games`` full games with ``agents[p]`` in seat ``p``.

    recorder_factory: optional ``f(game, keys, game_ids) -> recorder`` whose
    ``observe_step(...)``/``records()`` turn the games into records (docs/records.md).
    progress: optional callable taking the number of games just finished.
    keys: optional (n_games,) explicit chance keys, used instead of
    ``rng.game_keys(seed, i)``; equal keys give equal deals (duplicate play).
    seating: optional (n_games, P) index into ``agents`` of the agent in each
    seat of each game; then ``agents`` may have any length, and one agent may
    sit in several seats (it is called once per step for all of them).
    """
    P = game.players
    if seating is None:
        if len(agents) != P:
            raise ValueError(f"{game.name} with {P} players needs {P} agents, got {len(agents)}")
    else:
        seating = np.asarray(seating, dtype=np.int64)
        if seating.shape != (n_games, P):
            raise ValueError(f"seating must have shape ({n_games}, {P}), got {seating.shape}")
        if seating.size and (seating.min() < 0 or seating.max() >= len(agents)):
            raise ValueError(f"seating names agents 0-{len(agents) - 1} only")
    if keys is not None:
        keys = np.asarray(keys, dtype=np.uint64).reshape(-1)
        if keys.shape[0] != n_games:
            raise ValueError(f"keys must give one key per game ({n_games}), got {keys.shape[0]}")
    totals = np.zeros((n_games, P), dtype=np.int64)
    records: list[dict] = []
    decisions = 0
    t0 = time.perf_counter()
    for start in range(0, n_games, batch_size):
        ids = np.arange(start, min(n_games, start + batch_size)) + game_offset
        batch_keys = rng.game_keys(seed, ids, 0) if keys is None else keys[ids - game_offset]
        state = game.init(batch_keys)
        recorder = recorder_factory(game, state, ids) if recorder_factory else None
        seats = SeatDispatch(game, state.batch_size, agents)  # with the public void record, if an agent needs it
        active = ~game.done(state)
        while active.any():
            mask = game.legal_action_mask(state)
            obs = game.observe(state)
            seat = state.cur.astype(np.int64)
            who = seat if seating is None else seating[ids - game_offset, seat]
            actions = np.zeros(state.batch_size, dtype=np.int64)
            rows = np.nonzero(active)[0]
            seats.act(agents, who[rows], rows, obs, mask, seat, out=actions)
            decisions += int(active.sum())
            before = (state.phase.copy(), state.cur.copy())
            seats.before_step(state, actions, active)
            res = game.step(state, actions, active=active, legal=mask)  # the mask the agents saw
            seats.after_step(res.new_hand)
            if recorder is not None:
                recorder.observe_step(before, actions, active, res, state)
            newly = active & game.done(state)
            if progress is not None and newly.any():
                progress(int(newly.sum()))
            active &= ~newly
        totals[ids - game_offset] = state.scores
        if recorder is not None:
            records.extend(recorder.records())
    return ArenaResult(totals, decisions, time.perf_counter() - t0, records)
