"""The bidding benchmark's figure: one row per table, regrets, score and the game's calibration panels."""

from __future__ import annotations

import os

import numpy as np

from bobshat_env.paths import save_figure

from .oracle import OBJECTIVES, game_pieces


def plot(doc: dict, path: str | os.PathLike) -> None:
    """Write a PNG, one row per table: regrets, score, and the game's calibration plots."""
    import matplotlib  # heavy, only for --plot

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tables = doc["tables"]
    fig, axes = plt.subplots(len(tables), 4, figsize=(20, 4.4 * len(tables)), squeeze=False)
    for row, t in zip(axes, tables):
        names = [b["name"] for b in t["bidders"]]
        short = [n if len(n) <= 14 else n[:13] + "…" for n in names]
        x = np.arange(len(names))
        ax = row[0]
        bars = [(obj, o) for obj in OBJECTIVES for o in ("hindsight", "info_set")]
        for k, (obj, oracle) in enumerate(bars):
            m = [b["regret"][obj][oracle]["per_hand"] or 0 for b in t["bidders"]]
            ci = [b["regret"][obj][oracle]["ci95"] or 0 for b in t["bidders"]]
            label = f"{obj}, {oracle.replace('_', '-')}" + (f" (K={t['worlds']})" if oracle == "info_set" else "")
            ax.bar(x + (k - 1.5) * 0.2, m, 0.2, yerr=ci, capsize=2, label=label)
        ax.set_xticks(x, short, rotation=20, fontsize=8)
        ax.set_ylabel("regret, points per hand (±95%)")
        ax.set_title(f"{t['game']}: regret of the bids, play {t['play'].split('/')[-1]}")
        ax.legend(fontsize=8)
        ax = row[1]
        m = [b["score_per_hand"] for b in t["bidders"]]
        ax.bar(x, m, yerr=[b["ci95"] or 0 for b in t["bidders"]], capsize=3, color="tab:green")
        ax.axhline(0, color="grey", linewidth=0.8)
        ax.set_xticks(x, short, rotation=20, fontsize=8)
        ax.set_title("the bidder's score per hand (±95%)")
        game_pieces(t["game"]).panels(t, row[2], row[3])
    fig.tight_layout()
    try:
        save_figure(fig, path, dpi=80)  # in one step, in the format its extension names
    finally:
        plt.close(fig)
