"""Duplicate play: every deal under every seating, so the luck of the cards cancels within a deal.

The one routine under the tournament (:mod:`train.evaluate.tournament`), the
trainer's check against the bots (:func:`duplicate_evals`) and the strength
benchmark; the seatings a tournament plays each deal under.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from agents import make_agent
from agents.arena import ArenaResult, play_games
from bobshat_env.core import rng
from bobshat_env.games import Game

from .statistics import win_shares

SEATINGS = ("auto", "all", "rotations")


def agent_names(specs: list[str]) -> tuple[list[str], list[int]]:
    """Distinct agents (in order of first appearance) and each seat's index into them."""
    names: list[str] = []
    for s in specs:
        if s not in names:
            names.append(s)
    return names, [names.index(s) for s in specs]


def make_seatings(base: list[int], mode: str = "auto") -> np.ndarray:
    """(R, P) agent index per seat for each seating of a deal, the given seating first.

    ``all``: every distinct permutation; ``rotations``: the P rotations (distinct
    ones); ``auto``: all when ``P! <= 24``, else rotations.
    """
    if mode not in SEATINGS:
        raise ValueError(f"seatings must be one of {', '.join(SEATINGS)}, got {mode!r}")
    P = len(base)
    if mode == "auto":
        mode = "all" if math.factorial(P) <= 24 else "rotations"
    if mode == "all":
        cands = [tuple(base)] + sorted(set(itertools.permutations(base)))
    else:
        cands = [tuple(base[-r:] + base[:-r]) if r else tuple(base) for r in range(P)]
    out: list[tuple[int, ...]] = []
    for c in cands:
        if c not in out:
            out.append(c)
    return np.array(out, dtype=np.int64)


def play_duplicate(
    game: Game,
    agents: list[Any],
    seatings: np.ndarray,
    deals: np.ndarray,
    seed: int,
    *,
    duplicate: bool = True,
    seating_major: bool = False,
    batch_size: int | None = None,
    **play: Any,
) -> ArenaResult:
    """Play every deal of ``deals`` once under each seating: the luck of the cards cancels within a deal.

    ``seatings``: (R, P) index into ``agents`` of the agent in each seat
    (an agent may hold several seats; it is called once per step for all of
    them). Deal ``d`` has chance key ``rng.game_keys(seed, d)`` in every
    seating. Game ``g`` of the result is deal ``deals[g // R]`` under seating
    ``g % R`` (deal-major), or with ``seating_major`` seating ``g // D`` on
    deal ``deals[g % D]``. With ``duplicate=False`` every game gets a deal of
    its own instead, key ``rng.game_keys(seed, d * R + r)`` (deal-major
    only). ``batch_size`` games step together (default: all of them; the
    bots cost mostly per call); ``play``: more arguments of
    :func:`agents.arena.play_games` (``recorder_factory``, ``progress``).
    """
    seatings = np.asarray(seatings, dtype=np.int64)
    deals = np.asarray(deals, dtype=np.int64).reshape(-1)
    R, D = seatings.shape[0], deals.size
    if seating_major:
        if not duplicate:
            raise ValueError("seating_major orders duplicate deals; duplicate=False is deal-major only")
        ids, seating = np.tile(deals, R), np.repeat(seatings, D, axis=0)
    else:
        ids, seating = np.repeat(deals, R), np.tile(seatings, (D, 1))
        if not duplicate:
            ids = ids * R + np.tile(np.arange(R), D)
    n = R * D
    keys = rng.game_keys(seed, ids, 0)
    return play_games(game, agents, n, batch_size=batch_size or max(n, 1), keys=keys, seating=seating, **play)


def duplicate_evals(
    game: Game, agent: Any, opponents: list[str], deals: int = 64, seed: int = 12345
) -> dict[str, dict[str, float]]:
    """``agent`` against ``P - 1`` copies of each opponent on duplicate deals, all in one batch (training's check).

    Every deal is played ``P`` times per opponent with ``agent`` in each
    seat. For each opponent: the agent's mean score per hand, its margin
    over the opponents' mean per hand, and its win share. All
    ``len(opponents) * P * deals`` games step together (one call per agent
    and step): the bots cost mostly per call, so this is several times
    faster than a batch per seat and opponent.
    """
    if not opponents:
        return {}
    P = game.players
    agents = [agent] + [make_agent(name, game, seed=seed) for name in opponents]
    runs = [(j, s) for j in range(len(opponents)) for s in range(P)]
    seatings = np.array([np.where(np.arange(P) == s, 0, 1 + j) for j, s in runs], dtype=np.int64)
    totals = play_duplicate(game, agents, seatings, np.arange(deals), seed, seating_major=True).totals
    out: dict[str, dict[str, float]] = {}
    for j, name in enumerate(opponents):
        me, margin, share = [], [], []
        for r, (jj, s) in enumerate(runs):
            if jj != j:
                continue
            t = totals[r * deals : (r + 1) * deals].astype(np.float64)
            me.append(t[:, s])
            margin.append(t[:, s] - np.delete(t, s, axis=1).mean(axis=1))
            share.append(win_shares(t)[:, s])
        hands = game.config.hands
        out[name] = {
            "score_per_hand": float(np.mean(me) / hands),
            "margin_per_hand": float(np.mean(margin) / hands),
            "win_share": float(np.mean(share)),
        }
    return out
