"""Oh Hell's pieces of the bidding benchmark: tricks taken against the bid, calibration, report lines.

:class:`OhHellOracle` is the ``bid_oracle`` the game's description names
(see :mod:`train.bids.bobs_hat` for the interface).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bobshat_env.core import oh_hell as oh
from bobshat_env.games import Game
from train.evaluate.plots import line_style
from train.evaluate.report import pct
from train.evaluate.statistics import ratio

from .oracle import Decisions
from .report import cell


def _rows(bid: np.ndarray, taken: np.ndarray, best: np.ndarray, groups: np.ndarray) -> dict[str, dict]:
    """Bid, taken, exactness and the oracle's bid per group (hand size, seat from the dealer)."""
    out = {}
    for k in np.unique(groups).tolist():
        s = groups == k
        out[str(k)] = {
            "hands": int(s.sum()),
            "mean_bid": float(bid[s].mean()),
            "mean_taken": float(taken[s].mean()),
            "over_under": float((taken[s] - bid[s]).mean()),
            "exact_rate": float((taken[s] == bid[s]).mean()),
            "oracle_bid": float(best[s].mean()),
        }
    return out


class OhHellOracle:
    """What the bidding benchmark needs of Oh Hell (see :class:`~train.bids.bobs_hat.BobsHatOracle`)."""

    hat_actions = ()
    made_words = "share of hands taking exactly the tricks bid"

    @staticmethod
    def label(a: int) -> str:
        """A bid action's name: the tricks bid."""
        return str(a - oh.BID_BASE)

    @staticmethod
    def hand_facts(game: Game, state: Any, g: np.ndarray, seat: np.ndarray) -> dict[str, np.ndarray]:
        """A finished hand's facts about seat ``seat`` of games ``g``: the tricks it took."""
        return {"taken": state.taken[g, seat].astype(np.int64)}

    @staticmethod
    def playout_facts(game: Game, st: Any, seat: np.ndarray) -> dict[str, np.ndarray]:
        """A played-out hand's facts for the oracle's mean: the tricks the seat took."""
        return OhHellOracle.hand_facts(game, st, np.arange(st.batch_size), seat)

    @staticmethod
    def from_oracle(facts: dict[str, np.ndarray], legal: np.ndarray, pick: np.ndarray) -> dict[str, np.ndarray]:
        """Per decision: the tricks the information-set oracle expects after the bid made."""
        return {"info_taken": facts["taken"][np.arange(legal.shape[0]), pick, 0]}  # tricks expected after the bid

    @staticmethod
    def made_rate(dec: Decisions) -> float:
        """Share of hands taking exactly the tricks bid."""
        return float(np.mean(dec.extra["taken"] == dec.chosen - oh.BID_BASE))

    @staticmethod
    def calibration(dec: Decisions, deals: int, worlds: int) -> dict:
        """Bids against tricks taken, overall, by hand size and by seat from the dealer; the taken-by-bid curve."""
        bid = dec.chosen - oh.BID_BASE
        taken = dec.extra["taken"]
        best = np.nanargmax(dec.q_info, axis=1) - (oh.BID_BASE - oh.N_CARDS)
        info = dec.extra["info_taken"]
        bids = np.arange(oh.MAX_BID + 1)
        hands = np.bincount(bid, minlength=bids.size)
        return {
            "exact_rate": float((taken == bid).mean()),
            "mean_bid": float(bid.mean()),
            "mean_taken": float(taken.mean()),
            "over_under": float((taken - bid).mean()),
            "by_hand_size": _rows(bid, taken, best, dec.size),
            "by_seat_from_dealer": _rows(bid, taken, best, dec.from_dealer),
            "curve": {
                "bid": bids.tolist(),
                "hands": hands.tolist(),
                "mean_taken": [ratio(x, y) for x, y in zip(np.bincount(bid, taken, bids.size), hands)],
                "info_set_taken": [ratio(x, y) for x, y in zip(np.bincount(bid, info, bids.size), hands)],
            },
        }

    @staticmethod
    def lines(t: dict, w: int) -> list[str]:
        """The text report's over/under tables, by hand size and by seat from the dealer."""
        out = ["tricks taken minus bid (mean), by hand size; then the info-set oracle's best bid minus the bid"]
        sizes = sorted({int(k) for b in t["bidders"] for k in b["calibration"]["by_hand_size"]})
        out.append(f"{'bidder':<{w}}{'all':>7}" + "".join(f"{s:>7}" for s in sizes))
        for b in t["bidders"]:
            c = b["calibration"]
            by = c["by_hand_size"]
            out.append(
                f"{b['name']:<{w}}{cell(format(c['over_under'], '+.2f'), 7)}"
                + "".join(cell(f"{by[str(s)]['over_under']:+.2f}" if str(s) in by else "-", 7) for s in sizes)
            )
        out.append("")
        seats = sorted({int(k) for b in t["bidders"] for k in b["calibration"]["by_seat_from_dealer"]})
        out.append("by seat from the dealer (0 = dealer, bids last): taken minus bid, oracle bid minus bid, exact")
        out.append(f"{'bidder':<{w}}" + "".join(f"{f'seat {s}':>22}" for s in seats))
        for b in t["bidders"]:
            by = b["calibration"]["by_seat_from_dealer"]
            cells = []
            for s in seats:
                r = by.get(str(s))
                cells.append(
                    "-"
                    if r is None
                    else f"{r['over_under']:+.2f} {r['oracle_bid'] - r['mean_bid']:+.2f} {pct(r['exact_rate'])}"
                )
            out.append(f"{b['name']:<{w}}" + "".join(cell(c, 22) for c in cells))
        return out

    @staticmethod
    def panels(t: dict, ax1: Any, ax2: Any) -> None:
        """Oh Hell's two calibration panels: tricks taken against bid, over/under by hand size."""
        ax = ax1
        top = 0
        for i, b in enumerate(t["bidders"]):
            cv = b["calibration"]["curve"]
            bids = np.array(cv["bid"])
            y = np.array([np.nan if v is None else v for v in cv["mean_taken"]])
            ok = np.array(cv["hands"]) > 0
            ax.plot(bids[ok], y[ok], label=b["name"][:24], **line_style(i))
            top = max(top, int(bids[ok].max()) if ok.any() else 0)
        ax.plot([0, top], [0, top], color="grey", linewidth=0.8)
        ax.set_xlabel("tricks bid")
        ax.set_ylabel("mean tricks taken")
        ax.set_title("calibration: tricks bid vs taken")
        ax.legend(fontsize=7)
        ax = ax2
        for i, b in enumerate(t["bidders"]):
            by = b["calibration"]["by_hand_size"]
            sizes = sorted(int(k) for k in by)
            ax.plot(sizes, [by[str(s)]["over_under"] for s in sizes], label=b["name"][:24], **line_style(i))
        ax.axhline(0, color="grey", linewidth=0.8)
        ax.set_xlabel("cards per player")
        ax.set_ylabel("tricks taken minus bid")
        ax.set_title("over (<0) and under (>0) bidding by hand size")
        ax.legend(fontsize=7)
