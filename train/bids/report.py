"""The bidding benchmark's report: regrets and scores per bidder with intervals over deals, as JSON and as text.

The JSON schema is in :mod:`train.bids`'s docstring; the per-game parts
(calibration, the text's game lines) come from the game's pieces
(``bid_oracle`` in its description).
"""

from __future__ import annotations

import math

import numpy as np

from bobshat_env.games import Game
from train.evaluate.report import pct
from train.evaluate.statistics import mean_ci

from .oracle import BidsResult, Decisions, game_pieces

SCHEMA = "bobshat.bids/1"


def per_deal(values: np.ndarray, deal: np.ndarray, deals: int, weight: np.ndarray | None = None) -> np.ndarray:
    """(deals,) the weighted sum of ``values`` per deal over the weight's sum per deal (NaN where none)."""
    w = np.ones(values.shape[0]) if weight is None else np.asarray(weight, dtype=np.float64)
    s = np.bincount(deal, weights=values * w, minlength=deals)
    c = np.bincount(deal, weights=w, minlength=deals)
    with np.errstate(invalid="ignore", divide="ignore"):
        return s / c


def deal_ci(x: np.ndarray) -> tuple[float, float]:
    """Mean and 95% CI half-width of per-deal values, deals without a value (NaN) left out."""
    x = x[~np.isnan(x)]
    return mean_ci(x) if x.size else (math.nan, math.nan)


def regrets(q: np.ndarray, chosen: np.ndarray, offset: int) -> np.ndarray:
    """(n,) value of the best legal alternative minus that of the one chosen (>= 0; q is NaN where illegal)."""
    return np.nanmax(q, axis=1) - q[np.arange(q.shape[0]), chosen - offset]


def _regret_report(dec: Decisions, q: np.ndarray, offset: int, deals: int) -> tuple[dict, np.ndarray]:
    """One oracle's regret report (per hand, per bid, per hat choice) and the per-deal regrets per hand."""
    r = regrets(q, dec.chosen, offset)
    is_bid = ~dec.is_hat
    per_hand = np.bincount(dec.deal, weights=r, minlength=deals) / np.maximum(
        np.bincount(dec.deal, weights=is_bid.astype(np.float64), minlength=deals), 1
    )
    m, ci = deal_ci(per_hand)
    bm, bci = deal_ci(per_deal(r, dec.deal, deals, is_bid))
    hm, hci = deal_ci(per_deal(r, dec.deal, deals, dec.is_hat)) if dec.is_hat.any() else (None, None)
    report = {
        "per_hand": m, "ci95": ci, "bid": bm, "bid_ci95": bci, "hat": hm, "hat_ci95": hci,
        "zero_share": float(np.mean(r <= 1e-9)),
    }  # fmt: skip
    return report, per_hand


def curve_edges(worlds: int) -> np.ndarray:
    """Bins of the information-set chance of a bid: with K <= 10 worlds one bin around each of the
    K + 1 values it can take (j / K), else ten equal bins."""
    if worlds > 10:
        return np.linspace(0.0, 1.0, 11)
    return np.concatenate([[0.0], (np.arange(1, worlds + 1) - 0.5) / worlds, [1.0]])


def bidder_report(game: Game, name: str, dec: Decisions, deals: int, worlds: int) -> tuple[dict, dict[str, np.ndarray]]:
    """One bidder's JSON entry and its per-deal score and regrets (for the pairwise differences)."""
    b = ~dec.is_hat
    score = per_deal(dec.score.astype(np.float64), dec.deal, deals, b)
    m, ci = deal_ci(score)
    mm, mci = deal_ci(per_deal(dec.margin, dec.deal, deals, b))
    offset = game.module.N_CARDS
    hind, hind_deal = _regret_report(dec, dec.q_hind, offset, deals)
    info, info_deal = _regret_report(dec, dec.q_info, offset, deals)
    m_hind, _ = _regret_report(dec, dec.m_hind, offset, deals)
    m_info, _ = _regret_report(dec, dec.m_info, offset, deals)
    kind = game_pieces(game.name)
    labels = [kind.label(int(a)) for a in dec.chosen[b]]
    dist: dict[str, float] = {}
    for lab in labels:
        dist[lab] = dist.get(lab, 0) + 1
    dist = {k: v / len(labels) for k, v in sorted(dist.items(), key=lambda kv: -kv[1])}
    made_rate, calibration = kind.made_rate(dec), kind.calibration(dec, deals, worlds)
    report = {
        "name": name,
        "hands": int(b.sum()),
        "decisions": {"bid": int(b.sum()), "hat": int(dec.is_hat.sum())},
        "score_per_hand": m,
        "ci95": ci,
        "margin_per_hand": mm,
        "margin_ci95": mci,
        "regret": {"score": {"hindsight": hind, "info_set": info}, "margin": {"hindsight": m_hind, "info_set": m_info}},
        "made_rate": made_rate,
        "bid_distribution": dist,
        "calibration": calibration,
    }
    per = {"score": score, "hindsight": hind_deal, "info_set": info_deal}
    terms = decision_cv(dec, offset, deals)
    report["variance_reduction"] = None if terms is None else reduced(per, terms)
    return report, per | {"terms": terms}


def decision_cv(dec: Decisions, offset: int, deals: int) -> dict[str, np.ndarray] | None:
    """Per deal, the control variates of a bidder whose probabilities are known, or None (docs/variance_reduction.md).

    At each bid ``Q(s, a_taken) - sum_b pi(b|s) Q(s, b)`` (:func:`train.evaluate.variance.decision_terms`) with
    ``Q`` the oracle's own values (``q_hind`` for the score and the hindsight regret, ``q_info`` for the
    information-set regret): zero expectation given the decision's past, whatever ``Q`` is, and no
    playout of its own. Hat choices get none: their values hold the dealer's later bid, which the hat
    itself sways. Returns the terms per deal in the units of each per-deal quantity (per hand).
    """
    from train.evaluate.variance import decision_terms

    if dec.probs is None or dec.chosen.size == 0:
        return None
    known = ~dec.is_hat & ~np.isnan(dec.probs).any(axis=1)
    if not known.any():
        return None
    bids = np.maximum(np.bincount(dec.deal, weights=(~dec.is_hat).astype(np.float64), minlength=deals), 1)
    out = {}
    for name, q in (("score", dec.q_hind), ("hindsight", dec.q_hind), ("info_set", dec.q_info)):
        t = np.zeros(dec.chosen.size)
        k = np.nonzero(known)[0]
        t[k] = decision_terms(np.nan_to_num(q[k]), dec.probs[k], dec.chosen[k] - offset)
        sign = 1.0 if name == "score" else -1.0  # a regret falls as the chosen value rises
        out[name] = sign * np.bincount(dec.deal, weights=t, minlength=deals) / bids
    return out


def reduced(per: dict[str, np.ndarray], terms: dict[str, np.ndarray]) -> dict[str, dict]:
    """The reduced estimates (train/evaluate/variance.py's :func:`reduced_stats`) of each per-deal quantity."""
    from train.evaluate.variance import reduced_stats

    out = {}
    for k, c in terms.items():
        ok = ~np.isnan(per[k])
        out[k] = reduced_stats(per[k][ok], c[ok][:, None])
    return out


def report_json(results: list[BidsResult], suite: str | None = None) -> dict:
    """The JSON document of one or more tables (schema in the module docstring)."""
    return {"schema": SCHEMA, "suite": suite, "tables": [r.table for r in results]}


def fmt(x: float | None, spec: str = "+.3f") -> str:
    """A number for a table cell, ``-`` for none."""
    return "-" if x is None else f"{x:{spec}}"


def cell(text: str, width: int) -> str:
    """``text`` right-aligned in a column of ``width``, with at least one space before it.

    A value wider than its column (an interval of 100 or more) pushes the
    rest of the line right rather than running into its neighbour.
    """
    return f"{text:>{width}}" if len(text) < width else " " + text


def format_report(doc: dict) -> str:
    """A readable terminal report of :func:`report_json`'s document."""
    lines: list[str] = []
    for t in doc["tables"]:
        cfg = t["config"]
        if lines:
            lines.append("")
        suite = f"suite {doc['suite']}: " if doc.get("suite") else ""
        lines.append(
            f"{suite}{t['game']}, {cfg['players']} players, {t['hands_per_game']} hands; {t['deals']} games "
            f"(the bidder in seat game % {cfg['players']}), play {t['play']}, {t['worlds']} worlds, "
            f"{t['playouts']} playout(s), seed {t['seed']}"
        )
        w = max(8, *(len(b["name"]) for b in t["bidders"])) + 2
        lines.append("")
        lines.append(
            f"{'':<{w}}{'':>16}{'regret per hand (score)':>34}{'margin regret':>17}{'hindsight per decision':>26}"
        )
        lines.append(
            f"{'bidder':<{w}}{'per hand':>9}{'±95%':>7}{'hindsight':>10}{'±95%':>7}{'info-set':>10}{'±95%':>7}"
            f"{'hindsight':>10}{'info-set':>9}{'bid':>8}{'hat':>8}{'best':>7}{'made':>8}"
        )
        for b in t["bidders"]:
            h, i = b["regret"]["score"]["hindsight"], b["regret"]["score"]["info_set"]
            mh, mi = b["regret"]["margin"]["hindsight"], b["regret"]["margin"]["info_set"]
            cells = (
                (fmt(b["score_per_hand"], "+.3f"), 9), (fmt(b["ci95"], ".3f"), 7),
                (fmt(h["per_hand"], ".3f"), 10), (fmt(h["ci95"], ".3f"), 7),
                (fmt(i["per_hand"], ".3f"), 10), (fmt(i["ci95"], ".3f"), 7),
                (fmt(mh["per_hand"], ".3f"), 10), (fmt(mi["per_hand"], ".3f"), 9),
                (fmt(h["bid"], ".3f"), 8), (fmt(h["hat"], ".3f"), 8),
                (pct(h["zero_share"]), 7), (pct(b["made_rate"]), 8),
            )  # fmt: skip
            lines.append(f"{b['name']:<{w}}" + "".join(cell(text, width) for text, width in cells))
        lines.append(
            "(bid, hat: hindsight regret per bid and per hat choice; best: share of decisions whose choice was "
            f"a best one in hindsight, regret 0; made: {game_pieces(t['game']).made_words})"
        )
        if t["pairwise"]:
            lines.append("")
            lines.append(
                "pairwise, a minus b, paired over deals (±95%): score per hand; regret per hand, hindsight, info-set"
            )
            for d in t["pairwise"]:
                lines.append(
                    f"  {d['a']:<{w}} - {d['b']:<{w}} {fmt(d['score_diff'])} ±{fmt(d['ci95'], '.3f')}"
                    f"   {fmt(d['hindsight_regret_diff'])} ±{fmt(d['hindsight_ci95'], '.3f')}"
                    f"   {fmt(d['info_set_regret_diff'])} ±{fmt(d['info_set_ci95'], '.3f')}"
                )
        lines.extend(_vr_lines(t, w))
        lines.append("")
        lines.extend(game_pieces(t["game"]).lines(t, w))
        r = t["run"]
        lines.append("")
        lines.append(
            f"{r['bidding_decisions']} bidding decisions valued with {r['playouts']} playouts "
            f"({r['playout_decisions']} decisions): {1000 * r['seconds_per_decision']:.1f} ms per bidding "
            f"decision; {r['seconds']:.1f} s in all with {r['workers']} worker(s)"
        )
    return "\n".join(lines)


def _vr_lines(t: dict, w: int) -> list[str]:
    """The variance-reduced estimates of bidders with known probabilities (and their pairs), beside the plain."""
    rows = [(b["name"], b["variance_reduction"]) for b in t["bidders"] if b.get("variance_reduction")]
    rows += [(f"{d['a']} - {d['b']}", d["variance_reduction"]) for d in t["pairwise"] if d.get("variance_reduction")]
    if not rows:
        if not t.get("variance_reduction"):  # off by --no-variance-reduction: nothing to say
            return []
        return [
            "",
            "variance reduction: no reduced estimate here: no bidder has known probabilities (random, "
            "ppo:...,sample=true); a deterministic or searching bidder's bids get no term (docs/variance_reduction.md)",
        ]
    out = ["", "variance-reduced (decision terms of bidders with known probabilities, docs/variance_reduction.md):"]
    w = max(w, *(len(name) + 2 for name, _ in rows))
    out.append(f"{'':<{w}}{'score per hand':>26}{'hindsight regret':>26}{'info-set regret':>26}")
    for name, vr in rows:
        cells = "".join(
            cell(f"{fmt(vr[k]['mean'])} ±{fmt(vr[k]['ci95'], '.3f')} x{fmt(vr[k]['variance_factor'], '.2f')}", 26)
            for k in ("score", "hindsight", "info_set")
        )
        out.append(f"{name:<{w}}{cells}")
    out.append("(x: the variance factor, plain / reduced variance over deals; plain estimates above)")
    if t["deals"] < 2:
        out.append("(one deal: no interval and no variance factor, which need 2 deals or more)")
    return out
