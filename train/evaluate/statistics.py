"""Confidence intervals over deals, win shares, ratings: the statistics of a duplicate tournament.

Games of one deal are correlated, so every estimate first averages within a
deal (:func:`unit_means`) and then takes Student t intervals over the
independent per-deal values (:func:`mean_ci`). The bidding benchmark
(:mod:`train.bids`) uses the same intervals and the JSON helpers here.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bobshat_env.games import describe, load

# Two-sided 95% Student t quantiles t_{0.975, df} for df = 1..30.
_T975 = (
    12.706205, 4.302653, 3.182446, 2.776445, 2.570582, 2.446912, 2.364624, 2.306004, 2.262157, 2.228139,
    2.200985, 2.178813, 2.160369, 2.144787, 2.131450, 2.119905, 2.109816, 2.100922, 2.093024, 2.085963,
    2.079614, 2.073873, 2.068658, 2.063899, 2.059539, 2.055529, 2.051831, 2.048407, 2.045230, 2.042272,
)  # fmt: skip


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
    from openskill.models import PlackettLuce  # optional weight, imported on use

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


def unit_range(m: float, ci: float) -> list[float]:
    """The interval ``m ± ci`` clipped to [0, 1] (a rate's interval; NaN where there is none)."""
    if not math.isfinite(ci):
        return [math.nan, math.nan]
    return [max(0.0, m - ci), min(1.0, m + ci)]


def ratio(num: float, den: float) -> float | None:
    """``num / den`` as a float, None where ``den`` is 0 (a rate of nothing is no rate, not 0 or NaN)."""
    return float(num) / float(den) if den else None


def agent_counts(idx: np.ndarray, n: int, weights: np.ndarray | None = None) -> np.ndarray:
    """(n,) integer counts (or rounded weight sums) of the indices ``idx`` in 0..n-1: per-agent tallies."""
    out = np.bincount(idx.reshape(-1), weights=None if weights is None else weights.reshape(-1), minlength=n)
    return np.rint(out).astype(np.int64) if weights is not None else out.astype(np.int64)


def clean(x: Any) -> Any:
    """JSON-ready: NumPy scalars to Python, NaN to None (the reports' JSON has no NaN, which JSON lacks)."""
    if isinstance(x, dict):
        return {k: clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [clean(v) for v in x]
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return None if math.isnan(float(x)) else float(x)
    return x


def game_statistics(game_name: str) -> Any:
    """The bidding statistics of a game: the class its description names (``bid_report``), e.g.
    :class:`train.evaluate.bobs_hat.BobsHatBids`; nothing here branches on a game's name."""
    return load(describe(game_name).bid_report)
