"""Where's Bob's Hat?'s pieces of the bidding benchmark: bid cards made, the hat choice, calibration, report lines.

:class:`BobsHatOracle` is the ``bid_oracle`` the game's description names
(bobshat_env/games.py); the oracle, report and plot reach the game through it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bobshat_env.core import bobs_hat as bh
from bobshat_env.games import Game
from train.evaluate.plots import line_style
from train.evaluate.report import pct
from train.evaluate.statistics import ratio

from .oracle import OBJECTIVES, Decisions
from .report import cell, curve_edges, deal_ci, fmt, per_deal

TYPES = ("most_blue", "most_red", "most_black", "fewest", "double_fewest")


def _card_results(
    cfg: Any, code: np.ndarray, taken: np.ndarray, size: np.ndarray, seat: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Each bid card of seat ``seat``'s bid ``code``, per card of ``TYPES``: (n, 5) made flags
    (1 made, 0 missed, -1 not bid) and (n, 5) points.

    Each card is scored alone by the engine's own scoring (made = it scores
    more than 0), so the rule keeps one implementation.
    """
    n = code.shape[0]
    P = taken.shape[1]
    rows = np.arange(n)
    code = code.astype(np.int64)
    parts = [np.where((code >> i) & 1, 1 << i, 0) for i in range(3)]
    parts += [np.where(code // 8 == 1, 8, 0), np.where(code // 8 == 2, 16, 0)]
    made = np.full((n, len(TYPES)), -1, dtype=np.int8)
    points = np.zeros((n, len(TYPES)), dtype=np.int64)
    no_hat, centre = np.zeros(n, dtype=np.int64), np.full(n, -1, dtype=np.int64)
    for t, part in enumerate(parts):
        bids = np.zeros((n, P), dtype=np.int64)
        bids[rows, seat] = part
        points[:, t] = bh.score_hand(cfg, bids, taken, no_hat, centre, size)[rows, seat]
        made[:, t] = np.where(part > 0, (points[:, t] > 0).astype(np.int8), -1)
    return made, points


class BobsHatOracle:
    """What the bidding benchmark needs of Where's Bob's Hat? (the ``bid_oracle`` its description names).

    ``hat_actions``: the dealer's hat choices; ``label(action)`` names a bid;
    ``hand_facts(game, state, g, seat)`` and ``playout_facts(game, state,
    seat)``: a finished hand's facts for the report and for the oracle's mean;
    ``from_oracle(facts, legal, pick)`` the per-decision predictions;
    ``made_rate`` (and ``made_words``, what it counts), ``calibration``, ``lines`` (terminal) and
    ``panels`` (plot).
    """

    hat_actions = (bh.HAT_PLUS, bh.HAT_MINUS)
    made_words = "share of the bid cards bid that were made"  # what ``made_rate`` counts, for the report's legend

    @staticmethod
    def label(a: int) -> str:
        """A bid action's name: its bid cards joined by ``+``, ``none`` for no bid."""
        return "+".join(bh.bid_cards(a - bh.BID_BASE)) or "none"

    @staticmethod
    def hand_facts(game: Game, state: Any, g: np.ndarray, seat: np.ndarray) -> dict[str, np.ndarray]:
        """A finished hand's facts about seat ``seat`` of games ``g``: each bid card made or not, and its points."""
        made, points = _card_results(
            game.config, state.bids[g, seat], state.taken[g].astype(np.int64), state.hand_size[g], seat
        )
        return {"made": made, "points": points}

    @staticmethod
    def playout_facts(game: Game, st: Any, seat: np.ndarray) -> dict[str, np.ndarray]:
        """A played-out hand's facts for the oracle's mean: whether each bid card was made."""
        return {"made": BobsHatOracle.hand_facts(game, st, np.arange(st.batch_size), seat)["made"] == 1}

    @staticmethod
    def from_oracle(facts: dict[str, np.ndarray], legal: np.ndarray, pick: np.ndarray) -> dict[str, np.ndarray]:
        """Per decision: the oracle's chance of making each card bid (``pred``) and of each card bid alone."""
        info = facts["made"]  # (n, A, 5): the information-set chance that each card of an alternative is made
        rows = np.arange(legal.shape[0])
        alone = np.full((legal.shape[0], len(TYPES)), np.nan)
        for t, code in enumerate((1, 2, 4, 8, 16)):
            a = bh.BID_BASE + code - bh.N_CARDS
            ok = legal[:, a]
            alone[ok, t] = info[rows[ok], a, t]
        return {"pred": info[rows, pick], "p_alone": alone}

    @staticmethod
    def made_rate(dec: Decisions) -> float | None:
        """Share of the bid cards bid that were made (None with none bid)."""
        made = dec.extra["made"][~dec.is_hat]
        return ratio((made == 1).sum(), (made >= 0).sum())

    @staticmethod
    def calibration(dec: Decisions, deals: int, worlds: int) -> dict:
        """Bid cards: rate, success and the oracle's prediction; the bid-or-not curve; the hat choice's value."""
        b = ~dec.is_hat
        made, pred, alone = dec.extra["made"][b], dec.extra["pred"][b], dec.extra["p_alone"][b]
        points = dec.extra["points"][b]
        types = {}
        for t, name in enumerate(TYPES):
            has = made[:, t] >= 0
            if name == "double_fewest" and np.all(np.isnan(alone[:, t])):
                continue  # the option is off
            types[name] = {
                "rate": float(has.mean()) if has.size else None,
                "success": ratio((made[has, t] == 1).sum(), has.sum()),
                "predicted": float(pred[has, t].mean()) if has.any() else None,
                "predicted_alone": float(np.nanmean(alone[:, t])) if has.size else None,
                "points": float(points[has, t].mean()) if has.any() else None,
            }
        # The curve: for every hand and card, the chance of making the card bid alone against whether it was bid.
        p = alone[:, : len(types)].reshape(-1)
        bid = (made[:, : len(types)] >= 0).reshape(-1)
        ok = (made[:, : len(types)] == 1).reshape(-1)
        keep = ~np.isnan(p)
        p, bid, ok = p[keep], bid[keep], ok[keep]
        edges = curve_edges(worlds)
        n_bins = len(edges) - 1
        k = np.clip(np.digitize(p, edges[1:-1]), 0, n_bins - 1)
        nb = np.bincount(k, minlength=n_bins)
        nbid = np.bincount(k, weights=bid, minlength=n_bins)
        nok = np.bincount(k, weights=bid & ok, minlength=n_bins)
        psum = np.bincount(k, weights=p, minlength=n_bins)
        curve = {
            "edges": edges.round(4).tolist(),
            "n": nb.tolist(),
            "p": [ratio(x, y) for x, y in zip(psum, nb)],
            "bid_share": [ratio(x, y) for x, y in zip(nbid, nb)],
            "success": [ratio(x, y) for x, y in zip(nok, nbid)],
        }
        hat: dict[str, Any] = {"decisions": int(dec.is_hat.sum()), "chose_plus": None}
        h = dec.is_hat
        rows = np.nonzero(h)[0]
        a = dec.chosen[h] - bh.N_CARDS
        other = np.where(dec.chosen[h] == bh.HAT_PLUS, bh.HAT_MINUS, bh.HAT_PLUS) - bh.N_CARDS
        for objective, pair in (("score", (dec.q_hind, dec.q_info)), ("margin", (dec.m_hind, dec.m_info))):
            hat[objective] = {}
            for oracle, q in zip(("hindsight", "info_set"), pair):
                m = ci = None
                if h.any():
                    m, ci = deal_ci(per_deal(q[rows, a] - q[rows, other], dec.deal[h], deals))
                hat[objective][oracle], hat[objective][f"{oracle}_ci95"] = m, ci
        if dec.is_hat.any():
            hat["chose_plus"] = float(np.mean(dec.chosen[dec.is_hat] == bh.HAT_PLUS))
        return {"types": types, "curve": curve, "hat": hat}

    @staticmethod
    def lines(t: dict, w: int) -> list[str]:
        """The text report's bid-card and hat-choice tables."""
        types = list(t["bidders"][0]["calibration"]["types"])
        out = ["bid cards: share of hands / made when bid / oracle's chance when bid (info-set)"]
        out.append(f"{'bidder':<{w}}" + "".join(f"{k:>24}" for k in types))
        for b in t["bidders"]:
            c = b["calibration"]["types"]
            out.append(
                f"{b['name']:<{w}}"
                + "".join(cell(f"{pct(c[k]['rate'])} / {pct(c[k]['success'])} / {pct(c[k]['predicted'])}", 24)
                          for k in types)
            )  # fmt: skip
        out.append("")
        out.append("hat choice (as dealer): share choosing +10; value of the choice over the other (±95%)")
        out.append(
            f"{'bidder':<{w}}{'+10':>7}{'score, hindsight':>20}{'info-set':>16}"
            f"{'margin, hindsight':>20}{'info-set':>16}"
        )
        for b in t["bidders"]:
            h = b["calibration"]["hat"]
            cells = [
                f"{fmt(h[obj][o])} ±{fmt(h[obj][o + '_ci95'], '.2f')}"
                for obj in OBJECTIVES
                for o in ("hindsight", "info_set")
            ]
            out.append(
                f"{b['name']:<{w}}{cell(pct(h['chose_plus']), 7)}"
                + "".join(cell(c, width) for c, width in zip(cells, (20, 16, 20, 16)))
                + f"   ({h['decisions']} choices)"
            )
        return out

    @staticmethod
    def panels(t: dict, ax1: Any, ax2: Any) -> None:
        """Bob's Hat's two calibration panels: when a card is bid against its chance, predicted vs made."""
        ax = ax1
        for i, b in enumerate(t["bidders"]):
            cv = b["calibration"]["curve"]
            ok = [v is not None for v in cv["p"]]
            mid = [v for v, o in zip(cv["p"], ok) if o]
            ax.plot(mid, [v for v, o in zip(cv["bid_share"], ok) if o], label=b["name"][:24], **line_style(i))
        ax.set_xlabel("info-set chance of making the card bid alone")
        ax.set_ylabel("share of hands bidding it")
        ax.set_title("when does it bid a card? (all bid cards)")
        ax.set_ylim(0, 1)
        ax.legend(fontsize=7)
        ax = ax2
        from matplotlib.lines import Line2D  # matplotlib is imported by plot() only

        types = list(t["bidders"][0]["calibration"]["types"])
        shapes = dict(zip(types, "osD^v"))
        for i, b in enumerate(t["bidders"]):
            c = b["calibration"]["types"]
            for k in types:
                if c[k]["success"] is not None:
                    ax.scatter(c[k]["predicted"], c[k]["success"], color=f"C{i}", marker=shapes[k])
        ax.plot([0, 1], [0, 1], color="grey", linewidth=0.8)
        ax.set_xlabel("predicted success (info-set), when bid")
        ax.set_ylabel("actual success")
        ax.set_title("bid cards: predicted against actual success")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        # two keys, in words: the colour is the bidder, the shape the bid card
        bidders = [
            Line2D([], [], color=f"C{i}", marker="o", ls="", label=b["name"][:24]) for i, b in enumerate(t["bidders"])
        ]
        cards = [Line2D([], [], color="grey", marker=shapes[k], ls="", label=k.replace("_", " ")) for k in types]
        ax.add_artist(
            ax.legend(handles=bidders, title="bidder (colour)", fontsize=7, title_fontsize=7, loc="upper left")
        )
        ax.legend(handles=cards, title="bid card (shape)", fontsize=7, title_fontsize=7, loc="lower right")
