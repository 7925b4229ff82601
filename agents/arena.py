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
) -> ArenaResult:
    """Play ``n_games`` full games with ``agents[p]`` in seat ``p``.

    recorder_factory: optional ``f(game, keys, game_ids) -> recorder`` whose
    ``observe_step(...)``/``records()`` turn the games into RECORDS.md dicts.
    progress: optional callable taking the number of games just finished.
    """
    P = game.players
    if len(agents) != P:
        raise ValueError(f"{game.name} with {P} players needs {P} agents, got {len(agents)}")
    totals = np.zeros((n_games, P), dtype=np.int64)
    records: list[dict] = []
    decisions = 0
    t0 = time.perf_counter()
    for start in range(0, n_games, batch_size):
        ids = np.arange(start, min(n_games, start + batch_size)) + game_offset
        keys = rng.game_keys(seed, ids, 0)
        state = game.init(keys)
        recorder = recorder_factory(game, state, ids) if recorder_factory else None
        active = ~game.done(state)
        while active.any():
            mask = game.legal_action_mask(state)
            obs = game.observe(state)
            seat = state.cur.astype(np.int64)
            actions = np.zeros(state.batch_size, dtype=np.int64)
            for p in range(P):
                rows = np.nonzero(active & (seat == p))[0]
                if rows.size:
                    actions[rows] = agents[p].act(obs[rows], mask[rows], seat[rows])
            decisions += int(active.sum())
            before = (state.phase.copy(), state.cur.copy())
            res = game.step(state, actions, active=active)
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
