"""Oh Hell's statistics in a tournament: bids, tricks taken, exact / over / under, by hand size.

:class:`OhHellBids` is the ``bid_report`` the game's description names
(bobshat_env/games.py); see :mod:`train.evaluate.bobs_hat` for the interface.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .plots import legend_below, line_style
from .report import pct
from .statistics import agent_counts, ratio

if TYPE_CHECKING:
    from .report import Evaluation
    from .tournament import HandStats

MAX_SIZE = 10  # the largest hand the counters hold (cards per player)


class OhHellBids:
    """The bidding statistics of Oh Hell in an evaluation (see :class:`~train.evaluate.bobs_hat.BobsHatBids`)."""

    state_fields = ()

    @staticmethod
    def counters(E: int) -> dict[str, np.ndarray]:
        """Zeroed integer counters of the report, per agent (E agents) and hand size."""
        S = MAX_SIZE + 1
        names2 = ("hands", "bid_sum", "taken_sum", "exact", "over", "under", "zero", "zero_exact")
        out = {k: np.zeros((E, S), dtype=np.int64) for k in names2}
        out["score_sum"] = np.zeros(E, dtype=np.int64)
        return out

    @staticmethod
    def hands(stats: HandStats, h: np.ndarray, res: Any) -> None:
        """Count the finished hands ``h`` of a batch by hand size (checked against the engine's hand scores)."""
        mod, cfg, c, E = stats.game.module, stats.cfg, stats.counters, stats.n_agents
        S = MAX_SIZE + 1
        bids = stats.bids[h]
        taken = res.hand_taken[h].astype(np.int64)  # the hand's closing facts: tricks taken
        stats.check(mod.score_hand(cfg, bids, taken), res, h)
        who = stats.seating[h]
        idx = who * S + stats.size[h][:, None]
        c["score_sum"] += agent_counts(who, E, np.asarray(res.rewards)[h].astype(np.float64))

        def add(name: str, sel: np.ndarray, w: np.ndarray | None = None) -> None:
            c[name] += agent_counts(idx[sel], E * S, None if w is None else w[sel].astype(np.float64)).reshape(E, S)

        every = np.ones_like(bids, dtype=bool)
        add("hands", every)
        add("bid_sum", every, bids)
        add("taken_sum", every, taken)
        add("exact", taken == bids)
        add("over", taken > bids)
        add("under", taken < bids)
        add("zero", bids == 0)
        add("zero_exact", (bids == 0) & (taken == 0))

    @staticmethod
    def report(c: dict[str, np.ndarray]) -> dict:
        """One agent's report from its counters (schema in :mod:`train.evaluate`)."""
        hands = c["hands"]
        n = int(hands.sum())
        sizes = np.arange(hands.shape[0])
        frac = float((c["bid_sum"][1:] / sizes[1:]).sum()) if n else 0.0
        zero = int(c["zero"].sum())
        return {
            "hands": n,
            "mean_bid": ratio(c["bid_sum"].sum(), n),
            "mean_taken": ratio(c["taken_sum"].sum(), n),
            "bid_fraction": ratio(frac, n),
            "exact_rate": ratio(c["exact"].sum(), n),
            "over_rate": ratio(c["over"].sum(), n),
            "under_rate": ratio(c["under"].sum(), n),
            "zero_bid_rate": ratio(zero, n),
            "zero_bid_exact": ratio(c["zero_exact"].sum(), zero),
            "by_hand_size": {
                str(s): {
                    "hands": int(hands[s]),
                    "mean_bid": ratio(c["bid_sum"][s], hands[s]),
                    "mean_taken": ratio(c["taken_sum"][s], hands[s]),
                    "exact_rate": ratio(c["exact"][s], hands[s]),
                }
                for s in sizes.tolist()
                if hands[s]
            },
        }

    @staticmethod
    def table(summary: dict, w: int) -> list[str]:
        """The text report's bid table."""
        out = ["bids: mean bid, bid / hand size, tricks taken, exact / over / under, zero bids and their success"]
        out.append(
            f"{'agent':<{w}}{'bid':>7}{'bid/size':>10}{'taken':>7}{'exact':>8}{'over':>8}{'under':>8}"
            f"{'zero':>8}{'zero ok':>9}"
        )
        for a in summary["agents"]:
            b = a["bids"]
            out.append(
                f"{a['name']:<{w}}{b['mean_bid']:>7.2f}{b['bid_fraction']:>10.3f}{b['mean_taken']:>7.2f}"
                f"{pct(b['exact_rate']):>8}{pct(b['over_rate']):>8}{pct(b['under_rate']):>8}"
                f"{pct(b['zero_bid_rate']):>8}{pct(b['zero_bid_exact']):>9}"
            )
        out.append(
            "(exact: hands taking as many tricks as bid; over: more tricks than bid, an under-bid; under: fewer, "
            "an over-bid; zero: hands bid 0, zero ok: of those, made)"
        )
        return out

    @staticmethod
    def plot(ev: Evaluation, summary: dict, axes: Any, width: float) -> None:
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
            legend_below(ax)
