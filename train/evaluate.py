"""Duplicate tournaments between bots: scores with confidence intervals, ratings, bidding reports, plots.

``bobshat eval --agents strong,simple,random,random --deals 2000`` runs this module.

Duplicate play
    A *deal* is everything chance decides in a game: its 64-bit key (the trump,
    the cards of every hand, a random first dealer; see
    :mod:`bobshat_env.core.rng`). Deal ``d`` has key ``rng.game_keys(seed, d)``
    (the key of game ``d`` of ``bobshat simulate --seed SEED``) and is played
    once per *seating*: an assignment of the agents to the seats. The seatings
    are all distinct permutations of the agent list when ``P! <= 24`` (up to 4
    players), else its ``P`` rotations (``seatings="all"`` / ``"rotations"``
    choose). Every agent so holds every seat's cards equally often, and the
    luck of the cards cancels within a deal. An agent named twice (``random``
    in two seats) is one entrant that sits in two seats of every game.
    With ``duplicate=False`` every game gets a deal of its own (key
    ``rng.game_keys(seed, g)`` for game ``g``); the seatings still cycle, so
    only the sharing of deals is switched off.

Statistics
    Games are grouped in units of one deal (its ``R`` seatings; with
    ``duplicate=False`` a block of ``R`` consecutive games). The games of a
    deal are correlated, so every statistic is first averaged within the deal
    (over its games and the seats the agent held), and means and 95%
    confidence intervals (Student t, ``n_deals - 1`` degrees of freedom) are
    taken over the per-deal values, which are independent. Pairwise
    differences are paired per deal. ``win_rate`` counts a shared first place
    as ``1 / (number tied)``, so the win rates of a table add up to 1 and an
    even field gives ``1 / P``. The rating is OpenSkill's Plackett-Luce model
    (``openskill`` package), one match per deal in deal order, the agents
    ranked by their mean score in that deal (equal means share a rank).

Reproducibility
    Deals are split into chunks of ``batch_size // R`` deals (fewer when that
    leaves under 4 chunks; at least 1) whose games are stepped together; each
    chunk builds its agents afresh with seeds derived from
    ``(seed, chunk, agent)``. ``workers`` spreads chunks over
    processes, ``ray_address`` over the tasks of a Ray cluster: the numbers
    are the same for any number of workers, with or without Ray (they
    depend on ``seed``, ``deals``, the agents, the options and ``batch_size``).

Bidding statistics come from the engine's state during play (bids, cards
or tricks taken and hand scores at each hand's end, each hand checked
against the engine's own score), so they need no records.

JSON schema (``--json``; ``Evaluation.summary()``)::

    {
      "schema": "bobshat.eval/1",
      "game": "bobs_hat" | "oh_hell",
      "config": {...game options...},
      "seed": int, "duplicate": bool, "deals": int,
      "seatings": [[agent name by seat], ...],      # the R seatings of every deal
      "games": int,                                 # deals * R
      "hands_per_game": int, "batch_size": int,
      "agents": [{
        "name": str,                                # the agent spec
        "seats_per_game": int,
        "mean_per_hand": float, "ci95": float,      # score per hand, CI half-width
        "mean_per_game": float, "ci95_per_game": float,
        "sd_per_game": float,                       # spread of single games' totals
        "win_rate": float, "win_rate_ci95": float,  # share of wins (ties split), CI half-width
        "win_rate_ci95_range": [float, float],      # that interval clipped to [0, 1]
        "rating": {"mu": float, "sigma": float, "ordinal": float} | null,
        "bids": {...}                               # see below
      }, ...],
      "pairwise": [{"a": str, "b": str, "diff_per_hand": float, "ci95": float,
                    "diff_per_game": float, "ci95_per_game": float}, ...],   # a minus b
      "seats": [{"seat": int, "mean_per_hand": float, "ci95": float}, ...],
      "run": {"seconds": float, "decisions": int, "workers": int,   # timing, not results
              "ray_address": str},                  # only with --ray-address; workers: the cluster's CPUs
      "variance_reduction": {                       # --variance-reduction (docs/variance_reduction.md)
        "enabled": bool,
        "reason": str,                              # only when not enabled: "off", or why not
        "value": str, "fresh_deals": int,           # the value checkpoint; fresh deals per chance event
        "decisions": "bids" | "all" | "none",       # which decisions of known-probability agents get terms
        "seconds": float,                           # time the estimate took (part of run.seconds)
        "agents": [{"name": str, "mean": float, "ci95": float,   # reduced score per hand, CI half-width
                    "variance_factor": float,       # plain / reduced variance over deals (>1: fewer deals needed)
                    "beta": [float, float, float]}, ...],   # coefficients of the chance / bid / play terms
        "pairwise": [{"a": str, "b": str, "mean": float, "ci95": float,   # a minus b, paired over deals
                      "variance_factor": float, "beta": [...]}, ...]
      }
    }

``bids`` for Where's Bob's Hat?::

    {"hands": int,                       # hands the agent played (one per seat held)
     "mean_bid_cards": float,            # bid cards per hand (double fewest counts 2)
     "types": {"most_blue" | "most_red" | "most_black" | "fewest" | "double_fewest":
                   {"rate": float,       # share of hands with this bid
                    "success": float | null,   # share of those bids made
                    "points": float | null,    # mean points per such bid
                    "points_per_hand": float}, # its contribution per hand
               "no_bid": {"rate": float}},
     "hat": {"dealer_hands": int,
             "chose_plus": float | null,       # share of its deals with the +10 hat
             "dealer_kept": float | null,      # share of its deals it ended holding the hat
             "held_plus": float, "held_minus": float,   # share of hands ending with the +10 / -10 hat
             "points_per_hand": float},        # hat points scored per hand
     "reneges": int}

``bids`` for Oh Hell::

    {"hands": int, "mean_bid": float, "mean_taken": float,
     "bid_fraction": float,               # mean of bid / hand size
     "exact_rate": float, "over_rate": float, "under_rate": float,
     "zero_bid_rate": float, "zero_bid_exact": float | null,
     "by_hand_size": {"<size>": {"hands": int, "mean_bid": float, "mean_taken": float,
                                 "exact_rate": float}, ...}}
"""

from __future__ import annotations

import itertools
import json
import math
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agents import make_agent
from agents.arena import ArenaResult, play_games
from agents.registry import count_error, split_specs
from bobshat_env.core import rng
from bobshat_env.games import Game, describe, load, make_game
from bobshat_env.paths import replace_bytes, save_figure
from train.pool import map_chunks, sigterm_as_exit
from train.progress import ProgressBar

SCHEMA = "bobshat.eval/1"
BH_BID_TYPES = ("most_blue", "most_red", "most_black", "fewest", "double_fewest", "no_bid")
SEATINGS = ("auto", "all", "rotations")
OH_MAX_SIZE = 10

# Two-sided 95% Student t quantiles t_{0.975, df} for df = 1..30.
_T975 = (
    12.706205, 4.302653, 3.182446, 2.776445, 2.570582, 2.446912, 2.364624, 2.306004, 2.262157, 2.228139,
    2.200985, 2.178813, 2.160369, 2.144787, 2.131450, 2.119905, 2.109816, 2.100922, 2.093024, 2.085963,
    2.079614, 2.073873, 2.068658, 2.063899, 2.059539, 2.055529, 2.051831, 2.048407, 2.045230, 2.042272,
)  # fmt: skip


# ==========================================================================
# Statistics
def t_quantile_975(df: int) -> float:
    """The 0.975 quantile of Student's t with ``df`` degrees of freedom (a table to 30, then Cornish-Fisher)."""
    if df < 1:
        return math.nan
    if df <= len(_T975):
        return _T975[df - 1]
    z = 1.959963984540054
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160
    return z + g1 / df + g2 / df**2 + g3 / df**3 + g4 / df**4


def mean_ci(x: np.ndarray) -> tuple[float, float]:
    """Mean of independent values and the half-width of its 95% confidence interval (Student t).

    The half-width is NaN with fewer than two values.
    """
    x = np.asarray(x, dtype=np.float64).reshape(-1)
    n = x.shape[0]
    if n == 0:
        return math.nan, math.nan
    mean = float(x.mean())
    if n < 2:
        return mean, math.nan
    return mean, float(t_quantile_975(n - 1) * x.std(ddof=1) / math.sqrt(n))


def unit_means(values: np.ndarray, unit: np.ndarray, weight: np.ndarray, n_units: int) -> np.ndarray:
    """Weighted mean of ``values`` within each unit (deal): ``(n_units,)``, NaN where a unit has no weight.

    values, unit, weight: arrays of one shape; ``unit`` holds 0..n_units-1.
    This is the "average the correlated rotations of a deal first" step.
    """
    u = np.asarray(unit, dtype=np.int64).reshape(-1)
    w = np.asarray(weight, dtype=np.float64).reshape(-1)
    v = np.asarray(values, dtype=np.float64).reshape(-1)
    s = np.bincount(u, weights=v * w, minlength=n_units)
    n = np.bincount(u, weights=w, minlength=n_units)
    with np.errstate(invalid="ignore", divide="ignore"):
        return s / n


def clustered_mean_ci(values: np.ndarray, unit: np.ndarray, n_units: int) -> tuple[float, float]:
    """Mean and 95% CI half-width of ``values`` whose units (deals) are independent but whose members are not."""
    m = unit_means(values, unit, np.ones(np.shape(values)), n_units)
    return mean_ci(m[~np.isnan(m)])


def win_shares(totals: np.ndarray) -> np.ndarray:
    """(G, P) share of the win of each seat: ``1 / (number tied)`` for the highest totals, else 0."""
    top = totals == totals.max(axis=1, keepdims=True)
    return top / top.sum(axis=1, keepdims=True)


def openskill_ratings(scores: np.ndarray) -> list[dict[str, float]] | None:
    """Plackett-Luce ratings from matches: ``scores`` (n_matches, n_agents), higher is better.

    One match per row, in row order, agents ranked by score (equal scores share
    a rank). Returns ``{"mu", "sigma", "ordinal"}`` per agent, or None for
    fewer than two agents.
    """
    from openskill.models import PlackettLuce  # noqa: PLC0415 - optional weight, imported on use

    n_agents = scores.shape[1]
    if n_agents < 2:
        return None
    model = PlackettLuce()
    ratings = [model.rating() for _ in range(n_agents)]
    for row in np.asarray(scores, dtype=np.float64):
        if np.isnan(row).any():
            continue
        ranks = (row[None, :] > row[:, None]).sum(axis=1) + 1  # 1 = best; ties share
        new = model.rate([[r] for r in ratings], ranks=ranks.tolist())
        ratings = [team[0] for team in new]
    return [{"mu": float(r.mu), "sigma": float(r.sigma), "ordinal": float(r.ordinal())} for r in ratings]


# ==========================================================================
# Seatings and chunks
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


def _agent_seed(seed: int, chunk: int, agent: int) -> int:
    ss = np.random.SeedSequence([rng.seed_to_base(seed), chunk, agent])
    return int(ss.generate_state(1, np.uint32)[0])


@dataclass
class _Chunk:
    """One unit of work: deals [d0, d1) with all their seatings, played in one batch."""

    index: int
    d0: int
    d1: int
    game_name: str
    config: Any
    names: list[str]
    seatings: np.ndarray  # (R, P)
    seed: int
    duplicate: bool
    record: bool
    vr: tuple[str, int, str] | None = None  # variance reduction: (value checkpoint, fresh deals, decisions)


@dataclass
class _ChunkResult:
    index: int
    totals: np.ndarray  # (G, P) int64
    counters: dict[str, np.ndarray]
    records: list[dict]
    decisions: int
    cv: np.ndarray | None = None  # (G, 3, P) control-variate sums (train/variance.py), with chunk.vr
    cv_seconds: float = 0.0


# ==========================================================================
# Per-hand statistics collected during play
def _bincount(idx: np.ndarray, n: int, weights: np.ndarray | None = None) -> np.ndarray:
    out = np.bincount(idx.reshape(-1), weights=None if weights is None else weights.reshape(-1), minlength=n)
    return np.rint(out).astype(np.int64) if weights is not None else out.astype(np.int64)


def new_counters(game_name: str, n_agents: int) -> dict[str, np.ndarray]:
    """Zeroed integer counters of the bidding report, per agent."""
    return _bids(game_name).counters(n_agents)


def _bids(game_name: str) -> Any:
    """The bidding statistics of a game: the class its description names (:class:`BobsHatBids`, :class:`OhHellBids`)."""
    return load(describe(game_name).bid_report)


def _bh_counters(E: int) -> dict[str, np.ndarray]:
    T = len(BH_BID_TYPES)
    names1 = ("hands", "score_sum", "cards_sum", "dealer_n", "dealer_plus", "dealer_kept")
    names1 += ("held_plus", "held_minus", "hat_pts", "renege_n")
    out = {k: np.zeros(E, dtype=np.int64) for k in names1}
    out.update({k: np.zeros((E, T), dtype=np.int64) for k in ("bid_n", "made_n", "pts_sum")})
    return out


def _oh_counters(E: int) -> dict[str, np.ndarray]:
    S = OH_MAX_SIZE + 1
    names2 = ("hands", "bid_sum", "taken_sum", "exact", "over", "under", "zero", "zero_exact")
    out = {k: np.zeros((E, S), dtype=np.int64) for k in names2}
    out["score_sum"] = np.zeros(E, dtype=np.int64)
    return out


class HandStats:
    """A per-batch observer (the arena's recorder interface) that counts bids, successes and hat outcomes.

    It keeps a copy of the few per-hand arrays after every step: when a step
    ends a hand the engine has already dealt the next one, so the final bids
    are the copy's; the cards or tricks taken and the hat holder are the
    step's closing facts (the StepResult's ``hand_taken``, ``role_holder``).
    Each hand is checked against the engine's own hand scores, so the report
    cannot drift from the rules.
    """

    def __init__(self, game: Game, state: Any, seating: np.ndarray, counters: dict[str, np.ndarray]) -> None:
        self.game = game
        self.cfg = game.config
        self.seating = np.asarray(seating, dtype=np.int64)  # (B, P) agent index per seat
        self.counters = counters
        self.n_agents = counters["score_sum"].shape[0]
        self.kind = _bids(game.name)
        self._snapshot(state)

    def _snapshot(self, state: Any) -> None:
        self.bids = state.bids.astype(np.int64)
        self.dealer = state.dealer.astype(np.int64)
        self.size = np.asarray(state.hand_size).astype(np.int64)
        for name in self.kind.state_fields:  # what else the game's hand statistics read (Bob's Hat: the hat)
            setattr(self, name, getattr(state, name).astype(np.int64))

    def observe_step(
        self, before: tuple[np.ndarray, np.ndarray], actions: Any, active: Any, res: Any, state: Any
    ) -> None:
        h = np.nonzero(np.asarray(res.hand_done))[0]
        if h.size:
            self.kind.hands(self, h, res)
        if np.any(res.renege):
            g = np.nonzero(res.renege)[0]
            who = self.seating[g, np.asarray(before[1])[g].astype(np.int64)]
            self.counters["renege_n"] += _bincount(who, self.n_agents)
        self._snapshot(state)

    def records(self) -> list[dict]:
        return []

    def _check(self, pts: np.ndarray, res: Any, h: np.ndarray) -> None:
        if not np.array_equal(pts, np.asarray(res.rewards)[h]):
            raise RuntimeError("hand statistics disagree with the engine's hand scores; please report this")

    def _bobs_hat_hands(self, h: np.ndarray, res: Any) -> None:
        mod, cfg, c, E = self.game.module, self.cfg, self.counters, self.n_agents
        n = h.size
        rows = np.arange(n)
        bids, size = self.bids[h], self.size[h]
        taken = res.hand_taken[h].astype(np.int64)  # the hand's closing facts: cards taken by suit, the hat holder
        holder = res.role_holder[h].astype(np.int64)
        value = self.hat_value[h]
        self._check(mod.score_hand(cfg, bids, taken, value, holder, size), res, h)

        who = self.seating[h]  # (n, P)
        no_hat, centre = np.zeros(n, dtype=np.int64), np.full(n, -1, dtype=np.int64)
        c["hands"] += _bincount(who, E)
        c["score_sum"] += _bincount(who, E, np.asarray(res.rewards)[h].astype(np.float64))
        fewest = bids // 8
        c["cards_sum"] += _bincount(who, E, (((bids[..., None] >> np.arange(3)) & 1).sum(axis=2) + fewest) * 1.0)
        parts = [np.where((bids >> i) & 1, 1 << i, 0) for i in range(3)]
        parts += [np.where(fewest == 1, 8, 0), np.where(fewest == 2, 16, 0)]
        for t, code in enumerate(parts):
            has = code > 0
            pts = mod.score_hand(cfg, code, taken, no_hat, centre, size)
            c["bid_n"][:, t] += _bincount(who[has], E)
            c["made_n"][:, t] += _bincount(who[has & (pts > 0)], E)
            c["pts_sum"][:, t] += _bincount(who[has], E, pts[has].astype(np.float64))
        c["bid_n"][:, BH_BID_TYPES.index("no_bid")] += _bincount(who[bids == 0], E)

        dealer = self.dealer[h]
        d_who = who[rows, dealer]
        c["dealer_n"] += _bincount(d_who, E)
        c["dealer_plus"] += _bincount(d_who[value > 0], E)
        c["dealer_kept"] += _bincount(d_who[holder == dealer], E)
        held = holder >= 0
        h_who = who[rows[held], holder[held]]
        c["held_plus"] += _bincount(h_who[value[held] > 0], E)
        c["held_minus"] += _bincount(h_who[value[held] < 0], E)
        scores_hat = bids[rows[held], holder[held]] != 0
        c["hat_pts"] += _bincount(h_who[scores_hat], E, value[held][scores_hat].astype(np.float64))

    def _oh_hell_hands(self, h: np.ndarray, res: Any) -> None:
        mod, cfg, c, E = self.game.module, self.cfg, self.counters, self.n_agents
        S = OH_MAX_SIZE + 1
        bids = self.bids[h]
        taken = res.hand_taken[h].astype(np.int64)  # the hand's closing facts: tricks taken
        self._check(mod.score_hand(cfg, bids, taken), res, h)
        who = self.seating[h]
        idx = who * S + self.size[h][:, None]
        c["score_sum"] += _bincount(who, E, np.asarray(res.rewards)[h].astype(np.float64))

        def add(name: str, sel: np.ndarray, w: np.ndarray | None = None) -> None:
            c[name] += _bincount(idx[sel], E * S, None if w is None else w[sel].astype(np.float64)).reshape(E, S)

        every = np.ones_like(bids, dtype=bool)
        add("hands", every)
        add("bid_sum", every, bids)
        add("taken_sum", every, taken)
        add("exact", taken == bids)
        add("over", taken > bids)
        add("under", taken < bids)
        add("zero", bids == 0)
        add("zero_exact", (bids == 0) & (taken == 0))


class _Observers:
    """Forwards the arena's per-step hook to the hand statistics, an optional Recorder and control variates."""

    def __init__(self, stats: HandStats, recorder: Any = None, cv: Any = None) -> None:
        self.stats = stats
        self.recorder = recorder
        self.cv = cv

    def observe_step(self, before: Any, actions: Any, active: Any, res: Any, state: Any) -> None:
        self.stats.observe_step(before, actions, active, res, state)
        if self.recorder is not None:
            self.recorder.observe_step(before, actions, active, res, state)
        if self.cv is not None:
            self.cv.observe_step(before, actions, active, res, state)

    def records(self) -> list[dict]:
        return self.recorder.records() if self.recorder is not None else []


def _play_chunk(chunk: _Chunk, progress: Callable[[int], None] | None = None) -> _ChunkResult:
    """Play one chunk of deals (module level so worker processes can run it)."""
    game = make_game(chunk.game_name, config=chunk.config)
    deals = np.arange(chunk.d0, chunk.d1)
    seating = np.tile(chunk.seatings, (deals.size, 1))  # game j: deal j // R, seating j % R
    agents = [make_agent(s, game, seed=_agent_seed(chunk.seed, chunk.index, a)) for a, s in enumerate(chunk.names)]
    counters = new_counters(game.name, len(chunk.names))
    collectors: list[tuple[np.ndarray, Any]] = []
    value = None
    if chunk.vr is not None:
        from train.variance import PolicyValue  # noqa: PLC0415 - torch, only with variance reduction

        value = PolicyValue(game, chunk.vr[0])

    def factory(g: Game, state: Any, ids: np.ndarray) -> _Observers:
        recorder = cv = None
        if chunk.record:
            from bobshat_env.records import Recorder  # noqa: PLC0415 - only when recording

            recorder = Recorder(g, state)
            recorder.start(agents=[[chunk.names[a] for a in seating[i]] for i in ids.tolist()])
        if value is not None:
            from train.variance import ControlVariates  # noqa: PLC0415

            cv = ControlVariates(g, state, agents, seating[ids], value, chunk.vr[1], chunk.vr[2])
            collectors.append((ids, cv))
        return _Observers(HandStats(g, state, seating[ids], counters), recorder, cv)

    res = play_duplicate(
        game,
        agents,
        chunk.seatings,
        deals,
        chunk.seed,
        duplicate=chunk.duplicate,
        recorder_factory=factory,
        progress=progress,
    )
    cv = None
    if value is not None:
        cv = np.zeros((res.totals.shape[0], 3, game.players))
        for ids, c in collectors:
            cv[ids] = c.terms
    seconds = sum(c.seconds for _, c in collectors)
    return _ChunkResult(chunk.index, res.totals, counters, res.records, res.decisions, cv, seconds)


# ==========================================================================
# Duplicate play: the one routine under the tournament, the training evaluation and the strength benchmark
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


def duplicate_eval(game: Game, agent: Any, opponent: str, deals: int = 64, seed: int = 12345) -> dict[str, float]:
    """``agent`` against ``P - 1`` copies of ``opponent`` on duplicate deals (see :func:`duplicate_evals`)."""
    return duplicate_evals(game, agent, [opponent], deals=deals, seed=seed)[opponent]


# ==========================================================================
# The tournament
@dataclass
class Evaluation:
    """Everything a tournament measured; :meth:`summary` turns it into the JSON report."""

    game: Game
    names: list[str]  # distinct agents (specs)
    seatings: np.ndarray  # (R, P) agent index per seat
    seed: int
    duplicate: bool
    deals: int
    batch_size: int
    totals: np.ndarray  # (G, P) final totals; game g is deal g // R, seating g % R
    counters: dict[str, np.ndarray]
    decisions: int = 0
    seconds: float = 0.0
    workers: int = 1
    ray_address: str | None = None
    cv: np.ndarray | None = None  # (G, 3, P) control-variate sums per game and seat (train/variance.py)
    cv_seconds: float = 0.0  # time the control variates took (inside ``seconds``)
    vr_value: str | None = None  # the value checkpoint of the control variates
    vr_fresh: int = 0
    vr_decisions: str = ""
    vr_off: str | None = None  # why variance reduction is off, when it is
    _summary: dict | None = field(default=None, repr=False)

    @property
    def n_seatings(self) -> int:
        return int(self.seatings.shape[0])

    @property
    def hands(self) -> int:
        return int(self.game.config.hands)

    @property
    def seating(self) -> np.ndarray:
        """(G, P) agent index in each seat of each game."""
        return np.tile(self.seatings, (self.deals, 1))

    @property
    def deal_of(self) -> np.ndarray:
        """(G,) deal (unit) index of each game."""
        return np.repeat(np.arange(self.deals), self.n_seatings)

    def agent_scores(self, a: int) -> np.ndarray:
        """Final totals of every game and seat agent ``a`` played (1-D)."""
        return self.totals[self.seating == a]

    def per_deal(self, values: np.ndarray) -> np.ndarray:
        """(deals, n_agents) mean of per-seat ``values`` (G, P) over each deal's games and each agent's seats."""
        unit = np.broadcast_to(self.deal_of[:, None], values.shape)
        seat_agent = self.seating
        return np.stack([unit_means(values, unit, seat_agent == a, self.deals) for a in range(len(self.names))], axis=1)

    def summary(self) -> dict:
        """The report as plain JSON-able data (schema in the module docstring)."""
        if self._summary is not None:
            return self._summary
        H = self.hands
        per_hand = self.totals / H
        x = self.per_deal(per_hand)  # (D, E)
        w = self.per_deal(win_shares(self.totals))
        ratings = openskill_ratings(x)
        agents = []
        for a, name in enumerate(self.names):
            m, ci = mean_ci(x[:, a])
            wm, wci = mean_ci(w[:, a])
            scores = self.agent_scores(a)
            sd = float(np.std(scores, ddof=1)) if scores.size > 1 else math.nan
            agents.append(
                {
                    "name": name,
                    "seats_per_game": int((self.seatings[0] == a).sum()),
                    "mean_per_hand": m,
                    "ci95": ci,
                    "mean_per_game": m * H,
                    "ci95_per_game": ci * H,
                    "sd_per_game": sd,
                    "win_rate": wm,
                    "win_rate_ci95": wci,
                    "win_rate_ci95_range": _unit_range(wm, wci),
                    "rating": ratings[a] if ratings else None,
                    "bids": self._bid_report(a),
                }
            )
        pairwise = []
        for a, b in itertools.combinations(range(len(self.names)), 2):
            m, ci = mean_ci(x[:, a] - x[:, b])
            pairwise.append(
                {
                    "a": self.names[a],
                    "b": self.names[b],
                    "diff_per_hand": m,
                    "ci95": ci,
                    "diff_per_game": m * H,
                    "ci95_per_game": ci * H,
                }
            )
        unit = np.broadcast_to(self.deal_of[:, None], per_hand.shape)
        seats = []
        for p in range(self.game.players):
            m, ci = clustered_mean_ci(per_hand[:, p], unit[:, p], self.deals)
            seats.append({"seat": p, "mean_per_hand": m, "ci95": ci})
        self._summary = _clean(
            {
                "schema": SCHEMA,
                "game": self.game.name,
                "config": self.game.config.to_dict(),
                "seed": self.seed,
                "duplicate": self.duplicate,
                "deals": self.deals,
                "seatings": [[self.names[a] for a in s] for s in self.seatings.tolist()],
                "games": int(self.totals.shape[0]),
                "hands_per_game": H,
                "batch_size": self.batch_size,
                "agents": agents,
                "pairwise": pairwise,
                "seats": seats,
                "run": {"seconds": round(self.seconds, 3), "decisions": self.decisions, "workers": self.workers}
                | ({"ray_address": self.ray_address} if self.ray_address is not None else {}),
                "variance_reduction": self._variance_reduction(x),
            }
        )
        return self._summary

    def _variance_reduction(self, x: np.ndarray) -> dict:
        """The reduced estimates next to the plain ones (schema in the module docstring)."""
        if self.cv is None:
            return {"enabled": False, "reason": self.vr_off or "off"}
        from train.variance import reduced_stats  # noqa: PLC0415

        H = self.hands
        c = np.stack([self.per_deal(self.cv[:, t] / H) for t in range(self.cv.shape[1])], axis=2)  # (D, E, 2)
        agents = []
        for a, name in enumerate(self.names):
            agents.append({"name": name} | reduced_stats(x[:, a], c[:, a]))
        pairwise = []
        for a, b in itertools.combinations(range(len(self.names)), 2):
            both = reduced_stats(x[:, a] - x[:, b], c[:, a] - c[:, b])
            pairwise.append({"a": self.names[a], "b": self.names[b]} | both)
        return {
            "enabled": True,
            "value": self.vr_value,
            "fresh_deals": self.vr_fresh,
            "decisions": self.vr_decisions,
            "seconds": round(self.cv_seconds, 3),
            "agents": agents,
            "pairwise": pairwise,
        }

    def _bid_report(self, a: int) -> dict:
        c = {k: v[a] for k, v in self.counters.items()}
        return _bids(self.game.name).report(c)


def _unit_range(m: float, ci: float) -> list[float]:
    """The interval ``m ± ci`` clipped to [0, 1] (a rate's interval; NaN where there is none)."""
    if not math.isfinite(ci):
        return [math.nan, math.nan]
    return [max(0.0, m - ci), min(1.0, m + ci)]


def _ratio(num: float, den: float) -> float | None:
    return float(num) / float(den) if den else None


def _bh_bid_report(c: dict[str, np.ndarray]) -> dict:
    n = int(c["hands"])
    types: dict[str, dict] = {}
    for t, name in enumerate(BH_BID_TYPES):
        k = int(c["bid_n"][t])
        if name == "no_bid":
            types[name] = {"rate": _ratio(k, n)}
            continue
        types[name] = {
            "rate": _ratio(k, n),
            "success": _ratio(c["made_n"][t], k),
            "points": _ratio(c["pts_sum"][t], k),
            "points_per_hand": _ratio(c["pts_sum"][t], n),
        }
    dn = int(c["dealer_n"])
    return {
        "hands": n,
        "mean_bid_cards": _ratio(c["cards_sum"], n),
        "types": types,
        "hat": {
            "dealer_hands": dn,
            "chose_plus": _ratio(c["dealer_plus"], dn),
            "dealer_kept": _ratio(c["dealer_kept"], dn),
            "held_plus": _ratio(c["held_plus"], n),
            "held_minus": _ratio(c["held_minus"], n),
            "points_per_hand": _ratio(c["hat_pts"], n),
        },
        "reneges": int(c["renege_n"]),
    }


def _oh_bid_report(c: dict[str, np.ndarray]) -> dict:
    hands = c["hands"]
    n = int(hands.sum())
    sizes = np.arange(hands.shape[0])
    frac = float((c["bid_sum"][1:] / sizes[1:]).sum()) if n else 0.0
    zero = int(c["zero"].sum())
    return {
        "hands": n,
        "mean_bid": _ratio(c["bid_sum"].sum(), n),
        "mean_taken": _ratio(c["taken_sum"].sum(), n),
        "bid_fraction": _ratio(frac, n),
        "exact_rate": _ratio(c["exact"].sum(), n),
        "over_rate": _ratio(c["over"].sum(), n),
        "under_rate": _ratio(c["under"].sum(), n),
        "zero_bid_rate": _ratio(zero, n),
        "zero_bid_exact": _ratio(c["zero_exact"].sum(), zero),
        "by_hand_size": {
            str(s): {
                "hands": int(hands[s]),
                "mean_bid": _ratio(c["bid_sum"][s], hands[s]),
                "mean_taken": _ratio(c["taken_sum"][s], hands[s]),
                "exact_rate": _ratio(c["exact"][s], hands[s]),
            }
            for s in sizes.tolist()
            if hands[s]
        },
    }


def _clean(x: Any) -> Any:
    """JSON-ready: NumPy scalars to Python, NaN to None."""
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return None if math.isnan(float(x)) else float(x)
    return x


def evaluate(
    game: Game,
    specs: list[str],
    deals: int,
    seed: int = 0,
    *,
    duplicate: bool = True,
    seatings: str = "auto",
    workers: int = 1,
    batch_size: int = 1024,
    records_path: str | os.PathLike | None = None,
    progress: bool = False,
    mp_context: str = "spawn",
    ray_address: str | None = None,
    variance_reduction: bool = False,
    vr_value: str | None = None,
    vr_fresh: int | None = None,
    vr_decisions: str = "bids",
) -> Evaluation:
    """Play a tournament of ``deals`` deals between the agents ``specs`` (one per seat).

    See the module docstring for duplicate play, the statistics and the
    reproducibility guarantee. ``records_path``: write every game (docs/records.md)
    there, in game order. ``progress``: a progress bar on stderr.
    ``variance_reduction``: also compute the control variates of
    :mod:`train.variance` with the value head of ``vr_value`` (default: the
    table's shipped checkpoint; off, with the reason in the report, when
    there is none), ``vr_fresh`` fresh deals per chance event, and terms at
    the decisions ``vr_decisions`` (bids, all, none) of agents whose action
    probabilities are known.
    ``mp_context``: how worker processes start; ``spawn`` (default) is safe
    with agents that use torch; ``fork`` also sees agents registered at run
    time (tests).
    """
    P = game.players
    if len(specs) != P:
        raise ValueError(f"{game.name} with {P} players needs {P} agent specs, one per seat, got {len(specs)}")
    if deals < 1:
        raise ValueError(f"deals must be at least 1, got {deals}")
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    if ray_address is not None and workers != 1:
        raise ValueError("--workers and --ray-address exclude each other: Ray spreads the deals over its cluster")
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    names, base = agent_names(specs)
    for s in names:  # fail fast on a bad spec, before any process starts
        make_agent(s, game, seed=0)
    table = make_seatings(base, seatings)
    R = table.shape[0]
    per_chunk = max(1, min(batch_size // R, -(-deals // 4)))  # at least 4 chunks when deals allow
    record = records_path is not None
    vr, vr_off = _vr_setup(game, variance_reduction, vr_value, vr_fresh, vr_decisions)
    chunks = [
        _Chunk(i, d0, min(deals, d0 + per_chunk), game.name, game.config, names, table, seed, duplicate, record, vr)
        for i, d0 in enumerate(range(0, deals, per_chunk))
    ]
    bar = ProgressBar(deals * R, "games", enabled=progress)
    writer = _RecordWriter(records_path, len(chunks)) if record else None
    results: dict[int, _ChunkResult] = {}
    t0 = time.perf_counter()

    def landed(r: _ChunkResult) -> None:
        results[r.index] = r
        bar.update(r.totals.shape[0])
        if writer:
            writer.add(r)

    try:
        with sigterm_as_exit():  # SIGTERM: the workers and the records' temporary go too (train/pool.py)
            if ray_address is not None:
                from train.distributed import run_chunks  # noqa: PLC0415 - imports Ray, only when asked for

                workers = run_chunks(_play_chunk, chunks, ray_address, landed)
            elif workers == 1:
                for ch in chunks:
                    r = _play_chunk(ch, progress=bar.update)
                    results[ch.index] = r
                    if writer:
                        writer.add(r)
            else:
                map_chunks(_play_chunk, chunks, workers, lambda ch, r: landed(r), mp_context=mp_context)
    finally:
        bar.close()
        if writer:
            writer.close()  # in place only when complete
    ordered = [results[i] for i in range(len(chunks))]
    counters = new_counters(game.name, len(names))
    for r in ordered:
        for k in counters:
            counters[k] += r.counters[k]
    return Evaluation(
        game=game,
        names=names,
        seatings=table,
        seed=seed,
        duplicate=duplicate,
        deals=deals,
        batch_size=batch_size,
        totals=np.concatenate([r.totals for r in ordered], axis=0),
        counters=counters,
        decisions=sum(r.decisions for r in ordered),
        seconds=time.perf_counter() - t0,
        workers=workers,
        ray_address=ray_address,
        cv=None if vr is None else np.concatenate([r.cv for r in ordered], axis=0),
        cv_seconds=sum(r.cv_seconds for r in ordered),
        vr_value=None if vr is None else vr[0],
        vr_fresh=0 if vr is None else vr[1],
        vr_decisions="" if vr is None else vr[2],
        vr_off=vr_off,
    )


def _vr_setup(
    game: Game, on: bool, value: str | None, fresh: int | None, decisions: str
) -> tuple[tuple[str, int, str] | None, str | None]:
    """((value checkpoint, fresh deals, decisions), None) when variance reduction runs, else (None, why not)."""
    if not on:
        return None, "off"
    from train.variance import DECISIONS, DEFAULT_FRESH, shipped_value_path  # noqa: PLC0415

    fresh = DEFAULT_FRESH if fresh is None else int(fresh)
    if fresh < 1:
        raise ValueError(f"vr_fresh must be at least 1, got {fresh}")
    if decisions not in DECISIONS:
        raise ValueError(f"vr_decisions must be one of {', '.join(DECISIONS)}, got {decisions!r}")
    path = value or shipped_value_path(game)
    if path is None:
        return None, f"no shipped policy for {game.name} with {game.players} players to take values from (--vr-value)"
    from agents.ppo_agent import load_policy  # noqa: PLC0415 - check it loads for this game before any play
    from bobshat_env.config import ConfigError  # noqa: PLC0415

    try:
        load_policy(path, game)
    except (OSError, ValueError) as err:  # missing, unreadable, or for another game (CheckpointError)
        if value:
            raise ConfigError(f"--vr-value: {err}") from err
        return None, f"the shipped policy cannot value this table ({str(err).splitlines()[0]}); try --vr-value"
    return (str(path), fresh, decisions), None


# ==========================================================================
# Records of a tournament run over chunks
class _RecordWriter:
    """Writes chunks' records to one JSON Lines file in chunk order, whatever order they finish in.

    The records stream to a temporary file beside ``path`` that replaces it
    only once every chunk is in (:class:`~bobshat_env.records.JsonlWriter`):
    an interrupted tournament leaves the old file as it was, and two
    tournaments writing one path leave one whole file, never a mix.
    """

    def __init__(self, path: str | os.PathLike, chunks: int) -> None:
        from bobshat_env.records import JsonlWriter  # noqa: PLC0415

        self.out = JsonlWriter(path)
        self.chunks = chunks
        self.next, self.waiting, self.count = 0, {}, 0

    def add(self, r: _ChunkResult) -> None:
        self.waiting[r.index] = r.records
        while self.next in self.waiting:
            self.count += self.out.write(self.waiting.pop(self.next))
            self.next += 1

    def close(self) -> None:
        """Put the file in place if every chunk was written, else drop it."""
        if self.next == self.chunks:
            self.out.commit()
        else:
            self.out.abort()


# ==========================================================================
# Reports
def _pm(m: float | None, ci: float | None, fmt: str = "+.3f") -> str:
    if m is None:
        return "-"
    return f"{m:{fmt}} ±{ci:.3f}" if ci is not None else f"{m:{fmt}}"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


_TOO_FEW = "n/a*"


def _win_ci(agent: dict) -> str:
    """The win rate's ±95% for the table: '-' without one, ``_TOO_FEW`` when it spans all of 0-100%."""
    m, ci = agent["win_rate"], agent["win_rate_ci95"]
    if ci is None or m is None:
        return "-"
    if m - ci <= 0.0 and m + ci >= 1.0:
        return _TOO_FEW
    return _pct(ci)


def format_report(summary: dict) -> str:
    """A readable terminal report of :meth:`Evaluation.summary`."""
    lines = []
    cfg = summary["config"]
    R = len(summary["seatings"])
    mode = "duplicate" if summary["duplicate"] else "independent deals (no duplicate)"
    lines.append(
        f"{summary['game']}, {cfg['players']} players, {summary['hands_per_game']} hands; {mode}: "
        f"{summary['deals']} deals x {R} seatings = {summary['games']} games; seed {summary['seed']}"
    )
    w = max(8, *(len(a["name"]) for a in summary["agents"])) + 2
    lines.append("")
    lines.append(
        f"{'agent':<{w}}{'seats':>5}{'per hand':>10}{'±95%':>8}{'per game':>10}{'±95%':>8}"
        f"{'sd game':>9}{'win':>8}{'±95%':>7}{'rating mu±sigma':>18}"
    )
    for a in summary["agents"]:
        r = a["rating"]
        rating = f"{r['mu']:.2f} ±{r['sigma']:.2f}" if r else "-"
        ci = a["ci95"] if a["ci95"] is not None else math.nan
        cig = a["ci95_per_game"] if a["ci95_per_game"] is not None else math.nan
        sd = a["sd_per_game"] if a["sd_per_game"] is not None else math.nan
        lines.append(
            f"{a['name']:<{w}}{a['seats_per_game']:>5}{a['mean_per_hand']:>+10.3f}{ci:>8.3f}"
            f"{a['mean_per_game']:>+10.2f}{cig:>8.2f}{sd:>9.1f}{_pct(a['win_rate']):>8}{_win_ci(a):>7}{rating:>18}"
        )
    if any(_win_ci(a) == _TOO_FEW for a in summary["agents"]):
        lines.append(f"{_TOO_FEW} too few deals ({summary['deals']}) for a win-rate interval: it spans 0-100%")
    if summary["pairwise"]:
        lines.append("")
        lines.append("pairwise score difference per hand (a minus b, paired over deals, ±95% CI)")
        for d in summary["pairwise"]:
            lines.append(f"  {d['a']:<{w}} - {d['b']:<{w}} {_pm(d['diff_per_hand'], d['ci95'])}")
    lines.append("")
    lines.append(
        "seat means per hand: "
        + ", ".join(f"{s['seat']}: {_pm(s['mean_per_hand'], s['ci95'])}" for s in summary["seats"])
    )
    lines.append("")
    lines.extend(_bids(summary["game"]).table(summary, w))
    run = summary["run"]
    lines.append("")
    where = f" on Ray ({run['ray_address']}, {run['workers']} CPUs)" if run.get("ray_address") else ""
    where = where or f" with {run['workers']} worker(s)"
    lines.append(f"{run['decisions']} decisions in {run['seconds']:.1f} s{where}")
    lines.extend(_vr_lines(summary, w))
    return "\n".join(lines)


def _vr_lines(summary: dict, w: int) -> list[str]:
    """The report's variance-reduction section: plain and reduced estimates side by side."""
    vr = summary.get("variance_reduction") or {}
    if not vr.get("enabled"):
        return [f"variance reduction: off ({vr['reason']})"] if vr.get("reason") not in (None, "off") else []
    out = ["", "variance-reduced estimates (control variates, docs/variance_reduction.md; unbiased, plain kept above)"]
    out.append(f"{'':<{w}}{'plain per hand':>22}{'reduced per hand':>22}{'var factor':>12}")
    plain = {a["name"]: (a["mean_per_hand"], a["ci95"]) for a in summary["agents"]}
    for r in vr["agents"]:
        m, ci = plain[r["name"]]
        f = r["variance_factor"]
        fs = "-" if f is None else f"{f:.2f}"
        out.append(f"{r['name']:<{w}}{_pm(m, ci):>22}{_pm(r['mean'], r['ci95']):>22}{fs:>12}")
    pp = {(d["a"], d["b"]): (d["diff_per_hand"], d["ci95"]) for d in summary["pairwise"]}
    for r in vr["pairwise"]:
        m, ci = pp[(r["a"], r["b"])]
        f = r["variance_factor"]
        label = f"{r['a']} - {r['b']}"
        fs = "-" if f is None else f"{f:.2f}"
        out.append(f"{label:<{w}}{_pm(m, ci):>22}{_pm(r['mean'], r['ci95']):>22}{fs:>12}")
    total = summary["run"]["seconds"]
    out.append(
        f"value function {vr['value']}, {vr['fresh_deals']} fresh deals per chance event, "
        f"terms at {vr['decisions']} decisions of agents with known probabilities; "
        f"the estimate took {vr['seconds']:.1f} s of the {total:.1f} s (playing: {total - vr['seconds']:.1f} s)"
    )
    return out


def _bh_bid_table(summary: dict, w: int) -> list[str]:
    cfg = summary["config"]
    types = [t for t in BH_BID_TYPES if t not in ("double_fewest", "no_bid")]
    if cfg.get("double_fewest"):
        types.append("double_fewest")
    out = ["bids: share of hands bid / success rate / mean points per bid"]
    head = f"{'agent':<{w}}" + "".join(f"{t:>22}" for t in types)
    if cfg.get("no_bid"):
        head += f"{'no_bid':>8}"
    out.append(head + f"{'cards/hand':>11}")
    for a in summary["agents"]:
        b = a["bids"]
        row = f"{a['name']:<{w}}"
        for t in types:
            s = b["types"][t]
            pts = "-" if s["points"] is None else f"{s['points']:+.1f}"
            row += f"{_pct(s['rate']) + ' / ' + _pct(s['success']) + ' / ' + pts:>22}"
        if cfg.get("no_bid"):
            row += f"{_pct(b['types']['no_bid']['rate']):>8}"
        out.append(row + f"{b['mean_bid_cards']:>11.2f}")
    out.append("")
    out.append("Bob's Hat: as dealer, share choosing +10 and share keeping it; share of hands ending with the hat")
    out.append(f"{'agent':<{w}}{'chose +10':>11}{'kept own':>10}{'holds +10':>11}{'holds -10':>11}{'hat pts/hand':>14}")
    for a in summary["agents"]:
        h = a["bids"]["hat"]
        pph = "-" if h["points_per_hand"] is None else f"{h['points_per_hand']:+.3f}"
        out.append(
            f"{a['name']:<{w}}{_pct(h['chose_plus']):>11}{_pct(h['dealer_kept']):>10}"
            f"{_pct(h['held_plus']):>11}{_pct(h['held_minus']):>11}{pph:>14}"
        )
    return out


def _oh_bid_table(summary: dict, w: int) -> list[str]:
    out = ["bids: mean bid, bid / hand size, tricks taken, exact / over / under, zero bids and their success"]
    out.append(
        f"{'agent':<{w}}{'bid':>7}{'bid/size':>10}{'taken':>7}{'exact':>8}{'over':>8}{'under':>8}"
        f"{'zero':>8}{'zero ok':>9}"
    )
    for a in summary["agents"]:
        b = a["bids"]
        out.append(
            f"{a['name']:<{w}}{b['mean_bid']:>7.2f}{b['bid_fraction']:>10.3f}{b['mean_taken']:>7.2f}"
            f"{_pct(b['exact_rate']):>8}{_pct(b['over_rate']):>8}{_pct(b['under_rate']):>8}"
            f"{_pct(b['zero_bid_rate']):>8}{_pct(b['zero_bid_exact']):>9}"
        )
    out.append(
        "(exact: hands taking as many tricks as bid; over: more tricks than bid, an under-bid; under: fewer, "
        "an over-bid; zero: hands bid 0, zero ok: of those, made)"
    )
    return out


def plot(ev: Evaluation, path: str | os.PathLike) -> None:
    """Write a PNG (or the image format ``path``'s extension names): each agent's distribution of game
    totals, how often it bids what, and how often that succeeds."""
    import matplotlib  # noqa: PLC0415 - heavy, only for --plot

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    summary = ev.summary()
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.8))
    _score_panel(axes[0], [ev.agent_scores(a) for a in range(len(ev.names))], ev.names, summary["agents"])
    width = 0.8 / max(1, len(ev.names))
    _bids(ev.game.name).plot(ev, summary, axes, width)
    mode = "duplicate" if ev.duplicate else "independent"
    fig.suptitle(f"{ev.game.name}, {ev.game.players} players: {ev.deals} {mode} deals x {ev.n_seatings} seatings")
    fig.tight_layout()
    try:
        save_figure(fig, path, dpi=110)  # in one step, in the format its extension names
    finally:
        plt.close(fig)


def _wrap_name(name: str, width: int = 18) -> str:
    """An agent spec on short lines for an axis label, broken after ``/``, ``,`` or ``:`` where it can."""
    import textwrap  # noqa: PLC0415

    spaced = name.replace("/", "/ ").replace(",", ", ").replace(":", ": ")
    lines = textwrap.wrap(spaced, width, break_long_words=True)
    return "\n".join(line.replace("/ ", "/").replace(", ", ",").replace(": ", ":") for line in lines)


def _score_panel(ax: Any, scores: list[np.ndarray], names: list[str], agents: list[dict]) -> None:
    """Each agent's game totals as its own violin, side by side, named with its mean and 95% CI below it.

    Overlaid histograms of agents that score alike were three near-identical
    step lines under a legend that hid their peaks; side by side, each
    distribution has its own place and name, and the legend (what the marks
    mean) sits in a strip above the data.
    """
    xs = np.arange(1, len(names) + 1)
    parts = ax.violinplot(scores, positions=xs, widths=0.8, showextrema=False)
    for i, body in enumerate(parts["bodies"]):
        body.set_facecolor(f"C{i % 10}")
        body.set_edgecolor(f"C{i % 10}")
        body.set_alpha(0.45)
    q1, med, q3 = (np.array([np.percentile(x, q) for x in scores]) for q in (25, 50, 75))
    ax.vlines(xs, q1, q3, color="k", lw=5, label="middle half of the games")
    ax.scatter(xs, med, marker="o", facecolor="white", edgecolor="k", zorder=3, s=26, label="median")
    means = [a["mean_per_game"] for a in agents]
    ax.scatter(xs, means, marker="D", facecolor="gold", edgecolor="k", zorder=4, s=22, label="mean")
    top = max(float(np.max(x)) for x in scores)
    bottom = min(float(np.min(x)) for x in scores)
    span = max(top - bottom, 1.0)
    ax.set_ylim(bottom - 0.05 * span, top + 0.2 * span)  # the legend's strip above the highest game
    ax.set_xticks(xs)
    ax.set_xticklabels(
        [f"{_wrap_name(n)}\n{a['mean_per_game']:+.1f} ±{a['ci95_per_game'] or 0:.1f}" for n, a in zip(names, agents)],
        fontsize=8,
    )
    ax.set_xlim(0.4, len(names) + 0.6)
    ax.set_title("final score per game (mean ±95% CI under each name)")
    ax.set_ylabel("game total")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7, loc="upper center", ncol=3, frameon=False, handlelength=1.2)


def _bh_plot(ev: Evaluation, summary: dict, axes: Any, width: float) -> None:
    """Bid shares and success rates by bid type (Bob's Hat)."""
    types = [t for t in BH_BID_TYPES if t != "no_bid" and (t != "double_fewest" or ev.game.config.double_fewest)]
    xs = np.arange(len(types))
    for a, s in enumerate(summary["agents"]):
        rate = [s["bids"]["types"][t]["rate"] or 0 for t in types]
        succ = [s["bids"]["types"][t]["success"] or 0 for t in types]
        axes[1].bar(xs + a * width, rate, width, label=s["name"])
        axes[2].bar(xs + a * width, succ, width, label=s["name"])
    for ax, title in ((axes[1], "share of hands with the bid"), (axes[2], "bid success rate")):
        ax.set_xticks(xs + width * (len(ev.names) - 1) / 2)
        ax.set_xticklabels([t.replace("_", " ") for t in types])
        ax.set_ylim(0, 1)
        ax.set_title(title)
        _legend_below(ax)


def _legend_below(ax: Any) -> None:
    """The agents' key under the panel, outside the data: a bar at 100% or a line's peak is never hidden."""
    below = -0.17 if ax.get_xlabel() else -0.1  # under the axis label, if there is one
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, below), ncol=2, frameon=False)


def line_style(i: int) -> dict[str, Any]:
    """The ``i``-th series' colour, dash and marker: lines of agents that play alike stay apart in print too."""
    return {"color": f"C{i % 10}", "linestyle": ("-", "--", ":", "-.")[i % 4], "marker": "osD^v"[i % 5]}


def _oh_plot(ev: Evaluation, summary: dict, axes: Any, width: float) -> None:
    """Mean bid and exact-bid rate by hand size (Oh Hell)."""
    for i, s in enumerate(summary["agents"]):
        by = s["bids"]["by_hand_size"]
        sizes = sorted(int(k) for k in by)
        axes[1].plot(sizes, [by[str(k)]["mean_bid"] for k in sizes], label=s["name"], **line_style(i))
        axes[2].plot(sizes, [by[str(k)]["exact_rate"] for k in sizes], label=s["name"], **line_style(i))
    axes[1].set_title("mean bid by hand size")
    axes[2].set_title("exact-bid rate by hand size")
    axes[2].set_ylim(0, 1)
    for ax in axes[1:]:
        ax.set_xlabel("cards per player")
        _legend_below(ax)


class BobsHatBids:
    """The bidding statistics of Where's Bob's Hat? in an evaluation (named by the game's description).

    ``state_fields``: state arrays :class:`HandStats` keeps beside the bids
    (the hat's value); ``counters(n_agents)``; ``hands(stats, h, res)`` counts finished
    hands; ``report(counters of one agent)``; ``table(summary, width)`` text
    lines; ``plot(ev, summary, axes, width)`` the two bid panels.
    """

    state_fields = ("hat_value",)
    counters = staticmethod(_bh_counters)
    hands = HandStats._bobs_hat_hands
    report = staticmethod(_bh_bid_report)
    table = staticmethod(_bh_bid_table)
    plot = staticmethod(_bh_plot)


class OhHellBids:
    """The bidding statistics of Oh Hell (see :class:`BobsHatBids`)."""

    state_fields = ()
    counters = staticmethod(_oh_counters)
    hands = HandStats._oh_hell_hands
    report = staticmethod(_oh_bid_report)
    table = staticmethod(_oh_bid_table)
    plot = staticmethod(_oh_plot)


# ==========================================================================
# Command line (called by ``bobshat eval``)
def layout_specs(agents: list[str], layout: str, players: int) -> list[str]:
    """The seats of a head-to-head between two entrants: ``["A", "B"]`` and ``"2v2"`` -> ``["A", "A", "B", "B"]``.

    ``layout`` is ``NvM`` with ``N + M`` the number of players: the first
    agent sits in N seats, the second in M (every seating of them is played,
    so each holds every seat's cards). The pairwise entry of the report is
    then the paired difference of the two, with its 95% CI.
    """
    from bobshat_env.config import ConfigError  # noqa: PLC0415

    n, v, m = layout.lower().partition("v")
    if not (v and n.isdigit() and m.isdigit()) or int(n) < 1 or int(m) < 1:
        raise ConfigError(f"--layout must look like 2v2 or 1v3 (seats of the first and second agent), got {layout!r}")
    if int(n) + int(m) != players:
        raise ConfigError(f"--layout {layout} seats {int(n) + int(m)} players but the game has {players}")
    if len(agents) != 2:
        raise ConfigError(f"--layout {layout} needs exactly two agents in --agents, got {len(agents)}")
    if agents[0] == agents[1]:
        raise ConfigError(f"--layout {layout} needs two different agents, got {agents[0]!r} twice")
    return [agents[0]] * int(n) + [agents[1]] * int(m)


def cli_eval(args: Any, options: dict[str, Any]) -> int:
    """Run ``bobshat eval`` from parsed arguments and the game options of ``cli.game_options``."""
    from bobshat_env.config import ConfigError  # noqa: PLC0415

    game = make_game(args.game, **options)
    specs = split_specs(args.agents) if args.agents else ["random"] * game.players
    if getattr(args, "layout", None):
        specs = layout_specs(specs, args.layout, game.players)
    if len(specs) != game.players:
        raise ConfigError(count_error("--agents", len(specs), game.players))
    ev = evaluate(
        game,
        specs,
        args.deals,
        seed=args.seed,
        duplicate=not args.no_duplicate,
        seatings=args.seatings,
        workers=args.workers,
        batch_size=args.batch_size,
        records_path=args.records,
        progress=not args.quiet,
        ray_address=getattr(args, "ray_address", None),
        variance_reduction=getattr(args, "variance_reduction", False),
        vr_value=getattr(args, "vr_value", None),
        vr_fresh=getattr(args, "vr_fresh", None),
        vr_decisions=getattr(args, "vr_decisions", None) or "bids",
    )
    summary = ev.summary()
    # with --json -, stdout is the JSON alone (for pipes: `bobshat eval --json - | jq`); the rest goes to stderr
    say = sys.stderr if args.json == "-" else sys.stdout
    print(format_report(summary), file=say)
    if args.json:
        text = json.dumps(summary, indent=2)
        if args.json == "-":
            print(text)
        else:
            replace_bytes(args.json, (text + "\n").encode("utf-8"))  # in one step: never half a report
            print(f"wrote {args.json}", file=say)
    if args.records:
        print(f"wrote {summary['games']} records to {args.records}", file=say)
    if args.plot:
        plot(ev, args.plot)
        print(f"wrote {args.plot}", file=say)
    return 0
