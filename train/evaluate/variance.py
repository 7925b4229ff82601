"""Variance reduction for duplicate evaluation: AIVAT-style control variates (docs/variance_reduction.md).

A game's outcome for a seat is luck plus skill. The luck that can be named
is (i) chance: the deal and the turned trump of every hand, and (ii) the
dice of an agent whose action probabilities are known (``random``, a PPO
policy with ``sample=true``). For each of these events this module computes
a *control variate*: a number whose expectation is exactly zero given
everything before the event, built from a value function ``V`` (any
function of the full state; by default the table's shipped policy's value
head):

- at a chance event with outcome ``c``:
  ``V(h c) - mean_k V(h c'_k)``, the ``c'_k`` fresh deals drawn from the
  same distribution independently of ``c`` (so the mean of the fresh values
  is an unbiased estimate of ``E[V(h C)]`` that does not depend on ``c``);
- at a decision of an agent with known probabilities ``pi``:
  ``Q(s, a) - sum_b pi(b|s) Q(s, b)`` with ``Q(s, b) = V(step(s, b))`` (or
  the hand's realized result when ``b`` ends the hand).

The sum of a seat's terms over a game has expectation zero whatever ``V``
is; a good ``V`` makes it track the luck in the outcome. The reduced
per-deal value is ``y_d - beta . c_d``: ``y_d`` the plain per-deal mean,
``c_d`` its sums of terms (chance, bid decisions, card-play decisions), ``beta`` a regression
coefficient fitted by *cross-fitting* (deals of one fold get the ``beta``
fitted on the other fold), so ``beta`` is independent of the terms it
multiplies and the estimate stays exactly unbiased; the fit only chooses
how much of each term to use (a poor ``V`` gets ``beta`` near 0 rather
than adding noise). Below ``MIN_FIT`` deals per fold ``beta`` is 1.

A third kind needs no value function: the *proxy* (multi-fidelity) term,
``D_cheap(d) - mean_k D_cheap(fresh deal k)``, where ``D_cheap`` is the
per-deal result of cheap proxies of the agents (:func:`proxy_spec`: a
``pimc``/``search`` with fewer worlds) playing the same deal
(:func:`proxy_values`): a chance term whose value function is a whole
simulated game. ``bobshat exploit`` (train/exploit.py) and ``bobshat bids``
(train/bids/report.py) reuse these functions and :class:`ControlVariates`.

The pure functions (:func:`decision_terms`, :func:`chance_terms`,
:func:`crossfit_reduce`, :func:`reduced_stats`) work on arrays and are what
the tests check exactly; :class:`ControlVariates` collects the terms while
games are played (the arena's observer interface), and :class:`PolicyValue`
is the value function.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from bobshat_env.core import rng
from train.runtime.kit import policy_outputs

if TYPE_CHECKING:
    from bobshat_env.games import Game

VR_STREAM = 0x5EED_A1FA  # the fresh deals' key stream: a counter no engine stream uses
DEFAULT_FRESH = 8  # fresh deals per chance event
REWARD_SCALE = 0.1  # the shipped policies' reward_scale (configs/*.yaml): value head x 10 = points
TERMS = ("chance", "bid", "play")  # the columns of the terms: chance, bid (and hat) decisions, card play
DECISIONS = ("bids", "all", "none")  # which decisions of agents with known probabilities get a term


# ==========================================================================
# The estimator, on arrays
def decision_terms(q: np.ndarray, probs: np.ndarray, taken: np.ndarray) -> np.ndarray:
    """Control variates at decisions: ``Q(s, a_taken) - sum_b pi(b|s) Q(s, b)`` per row (and seat).

    q: (n, A) or (n, A, P) action values (any finite number where ``probs`` is 0);
    probs: (n, A) the acting agent's action probabilities (rows sum to 1);
    taken: (n,) the actions taken. Returns (n,) or (n, P). Its expectation
    over ``a_taken ~ probs`` is exactly zero, row by row.
    """
    q = np.asarray(q, dtype=np.float64)
    p = np.asarray(probs, dtype=np.float64)
    rows = np.arange(q.shape[0])
    pe = p.reshape(p.shape + (1,) * (q.ndim - 2))  # broadcast over the seat axis, if any
    expected = (pe * np.where(pe > 0, q, 0.0)).sum(axis=1)  # illegal actions' q never counts
    return q[rows, np.asarray(taken, dtype=np.int64)] - expected


def chance_terms(v_actual: np.ndarray, v_fresh: np.ndarray) -> np.ndarray:
    """Control variates at chance: ``V(actual outcome) - mean over fresh outcomes of V``.

    v_actual: (n, ...) values after the chance event that happened; v_fresh:
    (n, K, ...) values after K outcomes drawn independently of it from the
    same distribution. Zero expectation: both terms have mean ``E[V]``.
    """
    return np.asarray(v_actual, dtype=np.float64) - np.asarray(v_fresh, dtype=np.float64).mean(axis=1)


MIN_FIT = 30  # deals per fold below which beta is not fitted but 1 (the value function's terms as they are)


def _fit_beta(y: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Least-squares coefficients of ``y`` on the centred columns of ``c`` (0 where undetermined).

    With fewer than ``MIN_FIT`` deals the fit would be noise: every
    coefficient is 1 then (plain AIVAT, still unbiased).
    """
    k = c.shape[1]
    if y.shape[0] < MIN_FIT:
        return np.ones(k)
    cc = c - c.mean(axis=0)
    beta, *_ = np.linalg.lstsq(cc, y - y.mean(), rcond=1e-10)
    return np.nan_to_num(beta)


def crossfit_reduce(y: np.ndarray, c: np.ndarray, folds: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Per-deal reduced values ``y_d - beta_f . c_d`` with ``beta_f`` fitted on the deals outside fold f.

    y: (D,) plain per-deal values; c: (D, k) per-deal sums of control
    variates (each zero-mean given the deal's past). Deal ``d`` is in fold
    ``d % folds``. Returns (z (D,), betas (folds, k)). Because ``beta_f``
    depends only on other deals, ``E[beta_f . c_d] = E[beta_f] . E[c_d] = 0``:
    the mean of ``z`` is unbiased for the mean of ``y``.
    """
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    c = np.asarray(c, dtype=np.float64).reshape(y.shape[0], -1)
    fold = np.arange(y.shape[0]) % folds
    z = y.copy()
    betas = np.zeros((folds, c.shape[1]))
    for f in range(folds):
        inside = fold == f
        betas[f] = _fit_beta(y[~inside], c[~inside])
        z[inside] = y[inside] - c[inside] @ betas[f]
    return z, betas


def reduced_stats(y: np.ndarray, c: np.ndarray) -> dict[str, float | list[float]]:
    """Plain and reduced mean with 95% CI (Student t over deals) and the variance factor.

    ``variance_factor`` = plain variance / reduced variance of the per-deal
    values: how many times fewer deals the reduced estimate needs for the
    same CI width (>1 helps). NaN-free inputs expected (deals where the
    quantity is defined).
    """
    from train.evaluate.statistics import mean_ci  # evaluate imports this module lazily

    z, betas = crossfit_reduce(y, c)
    m, ci = mean_ci(z)
    vy, vz = (float(np.var(y, ddof=1)), float(np.var(z, ddof=1))) if y.shape[0] > 1 else (np.nan, np.nan)
    factor = vy / vz if vz > 0 else (1.0 if vy == 0 else np.nan)
    return {"mean": m, "ci95": ci, "variance_factor": factor, "beta": betas.mean(axis=0).tolist()}


# ==========================================================================
# The value function
class PolicyValue:
    """Per-seat values of full states from a policy checkpoint's value head, in points.

    ``seat_values(state)`` -> (n, P): for each seat, its value head's
    estimate of its margin in the current hand (own score minus the other
    seats' mean, the shipped policies' training target) divided by the
    reward scale. Any function would keep the estimate unbiased; this one
    is what the kit already has.
    """

    def __init__(self, game: Game, path: str | Path, device: str = "cpu") -> None:
        from agents.ppo_agent import load_policy  # torch, only when reduction is on

        self.game = game
        self.path = str(path)
        self.net, _ = load_policy(path, game, device=device)

    def seat_values(self, state: Any) -> np.ndarray:
        n, P = state.batch_size, self.game.players
        if n == 0:
            return np.zeros((0, P))
        obs = np.concatenate([self.game.observe(state, seat=np.full(n, p, dtype=np.int64)) for p in range(P)])
        out = policy_outputs(self.net, obs).value
        return out.reshape(P, n).T.astype(np.float64) / REWARD_SCALE

    def values_of(self, state: Any, seat: np.ndarray) -> np.ndarray:
        """(n,) the value of seat ``seat[i]`` in row i (one network row per game, not P)."""
        if state.batch_size == 0:
            return np.zeros(0)
        obs = self.game.observe(state, seat=np.asarray(seat, dtype=np.int64))
        return policy_outputs(self.net, obs).value.astype(np.float64) / REWARD_SCALE


def shipped_value_path(game: Game) -> str | None:
    """The table's shipped checkpoint (checkpoints/<game>_<P>p.pt) if there is one."""
    from agents.shipped import table_checkpoint

    path = table_checkpoint(game.name, game.players)
    return str(path) if path.is_file() else None


def hand_margins(rewards: np.ndarray) -> np.ndarray:
    """(n, P) each seat's score change minus the mean of the other seats' (the value head's target, in points)."""
    r = np.asarray(rewards, dtype=np.float64)
    P = r.shape[1]
    return r - (r.sum(axis=1, keepdims=True) - r) / (P - 1)


def known_probs(agent: Any, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray) -> np.ndarray | None:
    """The agent's action probabilities (n, A), or None when it is deterministic or they are unknown.

    An agent declares them with a method ``action_probs(obs, mask, seat)``
    (``random``: uniform over the legal actions; ``ppo`` with ``sample=true``:
    its softmax). Without one no control variate is used at its decisions
    (which keeps the estimate unbiased; it only reduces less).
    """
    f = getattr(agent, "action_probs", None)
    return None if f is None else f(obs, mask, seat)


# ==========================================================================
# Collecting the terms during play
def values_of(value: Any, state: Any, seat: np.ndarray) -> np.ndarray:
    """(n,) the value of one seat per row: ``value.values_of`` if it has one, else from ``seat_values``."""
    seat = np.asarray(seat, dtype=np.int64)
    if hasattr(value, "values_of"):
        return value.values_of(state, seat)
    return value.seat_values(state)[np.arange(seat.shape[0]), seat]


def successor_values(game: Game, value: Any, state: Any, mask: np.ndarray, every_seat: bool = False) -> np.ndarray:
    """(n, A, P) value of every legal action of each row of ``state`` (0 where illegal), per seat.

    Each legal action is applied to a copy of its row (``auto_deal`` off);
    an action that ends the hand is valued by the hand's realized margins
    (:func:`hand_margins`), any other by the value function of the next
    state. With ``every_seat`` each seat's value is its own; otherwise
    (P times cheaper) only the acting seat's value ``v`` is computed and
    every other seat gets ``-v / (P - 1)`` (margins sum to zero over the
    seats). Either is a function of (state, action) alone, which is all
    a decision's control variate needs to have expectation zero.
    """
    n, A = mask.shape
    P = game.players
    row, act = np.nonzero(mask)
    q = np.zeros((n, A, P))
    if row.size == 0:
        return q
    actor = state.cur[row].astype(np.int64)
    nxt = state.take(row)
    res = game.step(nxt, act, auto_deal=False, legal=mask[row])
    done = np.asarray(res.hand_done, dtype=bool)
    vals = np.empty((row.size, P))
    if done.any():
        vals[done] = hand_margins(np.asarray(res.rewards)[done])
    live = np.nonzero(~done)[0]
    if every_seat and live.size:
        vals[live] = value.seat_values(nxt.take(live))
    elif live.size:
        v = values_of(value, nxt.take(live), actor[live])
        vals[live] = (-v / (P - 1))[:, None]
        vals[live, actor[live]] = v
    q[row, act] = vals
    return q


def fresh_deal_values(game: Game, value: Any, state: Any, k: int) -> np.ndarray:
    """(n, K, P) values of each row of ``state`` (at the start of a hand) re-dealt with K fresh deals.

    The fresh keys hash the game's key, hand and attempt with ``VR_STREAM``
    (a stream the engine never uses), so the fresh deals are independent of
    the actual one and distributed like it; the rest of the state (scores,
    dealer, hand number) is kept.
    """
    mod, cfg = game.module, game.config
    n = state.batch_size
    rows = np.repeat(np.arange(n), k)
    fresh = state.take(rows)
    base = rng.combine(state.key, state.hand_no, mod.deal_attempt(state))
    keys = rng.combine(np.repeat(base, k), VR_STREAM, np.tile(np.arange(k), n))
    hand_no = fresh.hand_no
    chance = mod.random_deal(cfg, keys, hand_no, mod.deal_attempt(fresh))
    fresh.phase[:] = mod.DEAL
    mod.deal(cfg, fresh, np.arange(rows.size), *chance)
    return value.seat_values(fresh).reshape(n, k, game.players)


class ControlVariates:
    """An arena observer that sums each (game, seat)'s control variates while the games are played.

    ``decisions``: ``bids`` (default) puts terms at the hat choices and bids
    of agents with known probabilities, ``all`` at their card plays too
    (many more, each costing one step and one network row per legal
    action), ``none`` only at chance.

    ``terms`` (B, 3, P): per game, the sums of the chance terms (every deal
    of every hand), of the decision terms at hat choices and bids, and of
    those at card plays (decisions of agents with known probabilities), in
    points; the coefficients are fitted per column. ``seconds``: time spent here.
    """

    def __init__(
        self,
        game: Game,
        state: Any,
        agents: list[Any],
        seating: np.ndarray,
        value: Any,
        fresh: int,
        decisions: str = "bids",
    ) -> None:
        t0 = time.perf_counter()
        if decisions not in DECISIONS:
            raise ValueError(f"decisions must be one of {', '.join(DECISIONS)}, got {decisions!r}")
        self.game, self.agents, self.value, self.fresh = game, agents, value, int(fresh)
        self.decisions = decisions
        self.seating = np.asarray(seating, dtype=np.int64)  # (B, P) agent index per seat
        self.terms = np.zeros((state.batch_size, len(TERMS), game.players))
        live = np.nonzero(~game.done(state))[0]
        self._chance(state, live)
        self.prev = state.copy()
        self.seconds = time.perf_counter() - t0

    def _chance(self, state: Any, rows: np.ndarray) -> None:
        if rows.size == 0 or self.fresh < 1:
            return
        sub = state.take(rows)
        actual = self.value.seat_values(sub)
        self.terms[rows, 0] += chance_terms(actual, fresh_deal_values(self.game, self.value, sub, self.fresh))

    def _decisions(self, actions: np.ndarray, active: np.ndarray) -> None:
        prev, game = self.prev, self.game
        if self.decisions == "none":
            return
        if self.decisions == "bids":  # hat choices and bids only, not card play
            active = active & (prev.phase != game.module.PLAY)
        rows = np.nonzero(active)[0]
        if rows.size == 0:
            return
        cur = prev.cur[rows].astype(np.int64)
        who = self.seating[rows, cur]
        for e in np.unique(who):
            agent = self.agents[e]
            if getattr(agent, "action_probs", None) is None:
                continue
            r = rows[who == e]
            sub = prev.take(r)
            mask = game.legal_action_mask(sub)
            probs = known_probs(agent, game.observe(sub), mask, sub.cur.astype(np.int64))
            if probs is None:
                continue
            q = successor_values(game, self.value, sub, mask)
            col = np.where(sub.phase == game.module.PLAY, 2, 1)
            self.terms[r, col] += decision_terms(q, probs, np.asarray(actions)[r])

    def observe_step(self, before: Any, actions: Any, active: Any, res: Any, state: Any) -> None:
        t0 = time.perf_counter()
        self._decisions(np.asarray(actions), np.asarray(active, dtype=bool))
        dealt = np.asarray(res.new_hand, dtype=bool) & np.asarray(active, dtype=bool) & ~self.game.done(state)
        self._chance(state, np.nonzero(dealt)[0])
        self.prev = state.copy()
        self.seconds += time.perf_counter() - t0

    def records(self) -> list[dict]:
        return []


# ==========================================================================
# Multi-fidelity: a cheaper simulation of the same deal as a control variate
PROXY_FRESH = 4  # fresh deals per evaluated deal for the proxy's expectation
PROXY_DEAL_BASE = 1 << 40  # fresh deals' numbers start here: far beyond any evaluated deal's
PROXY_SHRINK = 8  # an expensive agent's proxy keeps 1/PROXY_SHRINK of its sampled worlds


def proxy_spec(spec: str) -> str:
    """The cheap stand-in of an agent spec: ``pimc``/``search`` with 1/``PROXY_SHRINK`` of its worlds, else itself.

    The proxy only has to be correlated with the agent on a deal; any spec
    keeps the estimate unbiased. Same seed as the agent, so its random
    stream starts where the agent's does.
    """
    name, _, rest = spec.strip().partition(":")
    defaults = {"pimc": 16, "search": 32}
    if name not in defaults:  # composites (bid=X+play=Y) and every other agent: itself
        return spec
    parts = [p for p in rest.split(",") if p] if rest else []
    given = [p.partition("=")[2] for p in parts if p.partition("=")[0].strip() == "worlds"]
    worlds = int(given[-1]) if given and given[-1].strip().isdigit() else defaults[name]
    keep = [p for p in parts if p.partition("=")[0].strip() != "worlds"]
    return f"{name}:" + ",".join([*keep, f"worlds={max(1, worlds // PROXY_SHRINK)}"])


def deal_agent_means(totals: np.ndarray, seatings: np.ndarray, n_deals: int, n_agents: int) -> np.ndarray:
    """(n_deals, n_agents) each agent's mean final total over a deal's games and its seats (deal-major games)."""
    from train.evaluate.statistics import unit_means  # evaluate imports this module lazily

    seating = np.tile(np.asarray(seatings, dtype=np.int64), (n_deals, 1))
    unit = np.broadcast_to(np.repeat(np.arange(n_deals), seatings.shape[0])[:, None], seating.shape)
    t = np.asarray(totals, dtype=np.float64)
    return np.stack([unit_means(t, unit, seating == a, n_deals) for a in range(n_agents)], axis=1)


def proxy_values(
    game: Game,
    agents: list[Any],
    seatings: np.ndarray,
    deals: np.ndarray,
    seed: int,
    fresh: int,
    duplicate: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """The cheap agents' per-deal means on the evaluated deals and on ``fresh`` fresh deals each.

    Returns (actual (D, E), fresh (D, K, E)), per agent and per hand. The
    fresh deals of deal ``d`` are numbered ``PROXY_DEAL_BASE + d * K + k``
    (keys ``rng.game_keys(seed, ...)`` like every deal), so they are drawn
    from the same distribution as, and independently of, the evaluated ones.
    """
    from train.evaluate.duplicate import play_duplicate

    deals = np.asarray(deals, dtype=np.int64)
    D, E, H = deals.size, len(agents), game.config.hands
    res = play_duplicate(game, agents, seatings, deals, seed, duplicate=duplicate)
    actual = deal_agent_means(res.totals, seatings, D, E) / H
    ids = PROXY_DEAL_BASE + (deals[:, None] * fresh + np.arange(fresh)).reshape(-1)
    res = play_duplicate(game, agents, seatings, ids, seed, duplicate=duplicate)
    return actual, (deal_agent_means(res.totals, seatings, D * fresh, E) / H).reshape(D, fresh, E)
