"""What a tournament measured, as JSON (:meth:`Evaluation.summary`) and as a terminal report.

The JSON schema is in :mod:`train.evaluate`'s docstring; the per-game
``bids`` part comes from the game's statistics class.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np

from bobshat_env.games import Game

from .statistics import (
    clean,
    clustered_mean_ci,
    game_statistics,
    mean_ci,
    openskill_ratings,
    unit_means,
    unit_range,
    win_shares,
)

SCHEMA = "bobshat.eval/1"


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
    cv: np.ndarray | None = None  # (G, 3, P) control-variate sums per game and seat (train/evaluate/variance.py)
    cv_seconds: float = 0.0  # time the control variates took (inside ``seconds``)
    vr_value: str | None = None  # the value checkpoint of the control variates
    vr_fresh: int = 0
    vr_decisions: str = ""
    vr_off: str | None = None  # why variance reduction is off, when it is
    proxy_specs: list[str] | None = None  # the multi-fidelity control variate's cheap agents (one per agent)
    proxy_actual: np.ndarray | None = None  # (D, E) their per-deal means per hand on the evaluated deals
    proxy_fresh: np.ndarray | None = None  # (D, K, E) and on K fresh deals per deal
    proxy_seconds: float = 0.0
    _summary: dict | None = field(default=None, repr=False)

    @property
    def n_seatings(self) -> int:
        """R: the seatings each deal is played under."""
        return int(self.seatings.shape[0])

    @property
    def hands(self) -> int:
        """Hands per game (scores per hand divide by it)."""
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
                    "win_rate_ci95_range": unit_range(wm, wci),
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
        self._summary = clean(
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
        if self.cv is None and self.proxy_actual is None:
            return {"enabled": False, "reason": self.vr_off or "off"}
        from train.evaluate.variance import chance_terms, reduced_stats

        H = self.hands
        cols = [] if self.cv is None else [self.per_deal(self.cv[:, t] / H) for t in range(self.cv.shape[1])]
        if self.proxy_actual is not None:  # the cheap simulation of the deal minus its mean over fresh deals
            cols.append(chance_terms(self.proxy_actual, self.proxy_fresh))
        c = np.stack(cols, axis=2)  # (D, E, terms)
        agents = []
        for a, name in enumerate(self.names):
            agents.append({"name": name} | reduced_stats(x[:, a], c[:, a]))
        pairwise = []
        for a, b in itertools.combinations(range(len(self.names)), 2):
            both = reduced_stats(x[:, a] - x[:, b], c[:, a] - c[:, b])
            pairwise.append({"a": self.names[a], "b": self.names[b]} | both)
        proxy = None
        if self.proxy_actual is not None:
            proxy = {
                "agents": self.proxy_specs,
                "fresh_deals": int(self.proxy_fresh.shape[1]),
                "seconds": round(self.proxy_seconds, 3),
            }
        return {
            "enabled": True,
            "value": self.vr_value,
            "fresh_deals": self.vr_fresh,
            "decisions": self.vr_decisions,
            "terms": (["chance", "bid", "play"] if self.cv is not None else []) + (["proxy"] if proxy else []),
            "proxy": proxy,
            "seconds": round(self.cv_seconds + self.proxy_seconds, 3),
            "agents": agents,
            "pairwise": pairwise,
        }

    def _bid_report(self, a: int) -> dict:
        """Agent ``a``'s bidding report, by the game's own statistics class."""
        c = {k: v[a] for k, v in self.counters.items()}
        return game_statistics(self.game.name).report(c)


def _pm(m: float | None, ci: float | None, fmt: str = "+.3f") -> str:
    """``m ±ci`` for a table cell; ``-`` without a value, ``m`` alone without an interval."""
    if m is None:
        return "-"
    return f"{m:{fmt}} ±{ci:.3f}" if ci is not None else f"{m:{fmt}}"


def pct(x: float | None) -> str:
    """A rate as a percentage for a table cell (``-`` for none); the bidding benchmark's tables share it."""
    return "-" if x is None else f"{100 * x:.1f}%"


_TOO_FEW = "n/a*"


def _win_ci(agent: dict) -> str:
    """The win rate's ±95% for the table: '-' without one, ``_TOO_FEW`` when it spans all of 0-100%."""
    m, ci = agent["win_rate"], agent["win_rate_ci95"]
    if ci is None or m is None:
        return "-"
    if m - ci <= 0.0 and m + ci >= 1.0:
        return _TOO_FEW
    return pct(ci)


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
            f"{a['mean_per_game']:>+10.2f}{cig:>8.2f}{sd:>9.1f}{pct(a['win_rate']):>8}{_win_ci(a):>7}{rating:>18}"
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
    lines.extend(game_statistics(summary["game"]).table(summary, w))
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
    if vr.get("value"):
        out.append(
            f"value function {vr['value']}, {vr['fresh_deals']} fresh deals per chance event, "
            f"terms at {vr['decisions']} decisions of agents with known probabilities"
        )
    if vr.get("proxy"):
        px = vr["proxy"]
        out.append(
            f"proxy (multi-fidelity) term: every deal played again by {', '.join(px['agents'])}, "
            f"and {px['fresh_deals']} fresh deals per deal ({px['seconds']:.1f} s)"
        )
    out.append(f"the estimate took {vr['seconds']:.1f} s of the {total:.1f} s (playing: {total - vr['seconds']:.1f} s)")
    return out
