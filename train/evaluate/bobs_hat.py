"""Where's Bob's Hat?'s statistics in a tournament: bid types made and missed, the hat as dealer and holder.

:class:`BobsHatBids` is the ``bid_report`` the game's description names
(bobshat_env/games.py): the tournament, the report and the plot reach the
game's own statistics through it, never by the game's name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .plots import legend_below
from .report import pct
from .statistics import agent_counts, ratio

if TYPE_CHECKING:
    from .report import Evaluation
    from .tournament import HandStats

BID_TYPES = ("most_blue", "most_red", "most_black", "fewest", "double_fewest", "no_bid")


class BobsHatBids:
    """The bidding statistics of Where's Bob's Hat? in an evaluation (named by the game's description).

    ``state_fields``: state arrays :class:`~train.evaluate.tournament.HandStats`
    keeps beside the bids (the hat's value); ``counters(n_agents)``; ``hands(stats, h,
    res)`` counts finished hands; ``report(counters of one agent)``;
    ``table(summary, width)`` text lines; ``plot(ev, summary, axes, width)``
    the two bid panels.
    """

    state_fields = ("hat_value",)

    @staticmethod
    def counters(E: int) -> dict[str, np.ndarray]:
        """Zeroed integer counters of the report, per agent (E agents)."""
        T = len(BID_TYPES)
        names1 = ("hands", "score_sum", "cards_sum", "dealer_n", "dealer_plus", "dealer_kept")
        names1 += ("held_plus", "held_minus", "hat_pts", "renege_n")
        out = {k: np.zeros(E, dtype=np.int64) for k in names1}
        out.update({k: np.zeros((E, T), dtype=np.int64) for k in ("bid_n", "made_n", "pts_sum")})
        return out

    @staticmethod
    def hands(stats: HandStats, h: np.ndarray, res: Any) -> None:
        """Count the finished hands ``h`` of a batch (checked against the engine's own hand scores)."""
        mod, cfg, c, E = stats.game.module, stats.cfg, stats.counters, stats.n_agents
        n = h.size
        rows = np.arange(n)
        bids, size = stats.bids[h], stats.size[h]
        taken = res.hand_taken[h].astype(np.int64)  # the hand's closing facts: cards taken by suit, the hat holder
        holder = res.role_holder[h].astype(np.int64)
        value = stats.hat_value[h]
        stats.check(mod.score_hand(cfg, bids, taken, value, holder, size), res, h)

        who = stats.seating[h]  # (n, P)
        no_hat, centre = np.zeros(n, dtype=np.int64), np.full(n, -1, dtype=np.int64)
        c["hands"] += agent_counts(who, E)
        c["score_sum"] += agent_counts(who, E, np.asarray(res.rewards)[h].astype(np.float64))
        fewest = bids // 8
        c["cards_sum"] += agent_counts(who, E, (((bids[..., None] >> np.arange(3)) & 1).sum(axis=2) + fewest) * 1.0)
        parts = [np.where((bids >> i) & 1, 1 << i, 0) for i in range(3)]
        parts += [np.where(fewest == 1, 8, 0), np.where(fewest == 2, 16, 0)]
        for t, code in enumerate(parts):
            has = code > 0
            pts = mod.score_hand(cfg, code, taken, no_hat, centre, size)
            c["bid_n"][:, t] += agent_counts(who[has], E)
            c["made_n"][:, t] += agent_counts(who[has & (pts > 0)], E)
            c["pts_sum"][:, t] += agent_counts(who[has], E, pts[has].astype(np.float64))
        c["bid_n"][:, BID_TYPES.index("no_bid")] += agent_counts(who[bids == 0], E)

        dealer = stats.dealer[h]
        d_who = who[rows, dealer]
        c["dealer_n"] += agent_counts(d_who, E)
        c["dealer_plus"] += agent_counts(d_who[value > 0], E)
        c["dealer_kept"] += agent_counts(d_who[holder == dealer], E)
        held = holder >= 0
        h_who = who[rows[held], holder[held]]
        c["held_plus"] += agent_counts(h_who[value[held] > 0], E)
        c["held_minus"] += agent_counts(h_who[value[held] < 0], E)
        scores_hat = bids[rows[held], holder[held]] != 0
        c["hat_pts"] += agent_counts(h_who[scores_hat], E, value[held][scores_hat].astype(np.float64))

    @staticmethod
    def report(c: dict[str, np.ndarray]) -> dict:
        """One agent's report from its counters (schema in :mod:`train.evaluate`)."""
        n = int(c["hands"])
        types: dict[str, dict] = {}
        for t, name in enumerate(BID_TYPES):
            k = int(c["bid_n"][t])
            if name == "no_bid":
                types[name] = {"rate": ratio(k, n)}
                continue
            types[name] = {
                "rate": ratio(k, n),
                "success": ratio(c["made_n"][t], k),
                "points": ratio(c["pts_sum"][t], k),
                "points_per_hand": ratio(c["pts_sum"][t], n),
            }
        dn = int(c["dealer_n"])
        return {
            "hands": n,
            "mean_bid_cards": ratio(c["cards_sum"], n),
            "types": types,
            "hat": {
                "dealer_hands": dn,
                "chose_plus": ratio(c["dealer_plus"], dn),
                "dealer_kept": ratio(c["dealer_kept"], dn),
                "held_plus": ratio(c["held_plus"], n),
                "held_minus": ratio(c["held_minus"], n),
                "points_per_hand": ratio(c["hat_pts"], n),
            },
            "reneges": int(c["renege_n"]),
        }

    @staticmethod
    def table(summary: dict, w: int) -> list[str]:
        """The text report's bid and hat tables."""
        cfg = summary["config"]
        types = [t for t in BID_TYPES if t not in ("double_fewest", "no_bid")]
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
                row += f"{pct(s['rate']) + ' / ' + pct(s['success']) + ' / ' + pts:>22}"
            if cfg.get("no_bid"):
                row += f"{pct(b['types']['no_bid']['rate']):>8}"
            out.append(row + f"{b['mean_bid_cards']:>11.2f}")
        out.append("")
        out.append("Bob's Hat: as dealer, share choosing +10 and share keeping it; share of hands ending with the hat")
        out.append(
            f"{'agent':<{w}}{'chose +10':>11}{'kept own':>10}{'holds +10':>11}{'holds -10':>11}{'hat pts/hand':>14}"
        )
        for a in summary["agents"]:
            h = a["bids"]["hat"]
            pph = "-" if h["points_per_hand"] is None else f"{h['points_per_hand']:+.3f}"
            out.append(
                f"{a['name']:<{w}}{pct(h['chose_plus']):>11}{pct(h['dealer_kept']):>10}"
                f"{pct(h['held_plus']):>11}{pct(h['held_minus']):>11}{pph:>14}"
            )
        return out

    @staticmethod
    def plot(ev: Evaluation, summary: dict, axes: Any, width: float) -> None:
        """Bid shares and success rates by bid type (Bob's Hat)."""
        types = [t for t in BID_TYPES if t != "no_bid" and (t != "double_fewest" or ev.game.config.double_fewest)]
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
            legend_below(ax)
