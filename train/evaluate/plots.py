"""The tournament's figure: each agent's game totals, then the game's own bid panels.

``bobshat eval --plot`` writes it; the two right-hand panels come from the
game's statistics class (:mod:`train.evaluate.bobs_hat`, :mod:`train.evaluate.oh_hell`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import numpy as np

from bobshat_env.paths import save_figure

from .statistics import game_statistics

if TYPE_CHECKING:
    from .report import Evaluation


def plot(ev: Evaluation, path: str | os.PathLike) -> None:
    """Write a PNG (or the image format ``path``'s extension names): each agent's distribution of game
    totals, how often it bids what, and how often that succeeds."""
    import matplotlib  # heavy, only for --plot

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    summary = ev.summary()
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.8))
    _score_panel(axes[0], [ev.agent_scores(a) for a in range(len(ev.names))], ev.names, summary["agents"])
    width = 0.8 / max(1, len(ev.names))
    game_statistics(ev.game.name).plot(ev, summary, axes, width)
    mode = "duplicate" if ev.duplicate else "independent"
    fig.suptitle(f"{ev.game.name}, {ev.game.players} players: {ev.deals} {mode} deals x {ev.n_seatings} seatings")
    fig.tight_layout()
    try:
        save_figure(fig, path, dpi=110)  # in one step, in the format its extension names
    finally:
        plt.close(fig)


def _wrap_name(name: str, width: int = 18) -> str:
    """An agent spec on short lines for an axis label, broken after ``/``, ``,`` or ``:`` where it can."""
    import textwrap

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


def legend_below(ax: Any) -> None:
    """The agents' key under the panel, outside the data: a bar at 100% or a line's peak is never hidden."""
    below = -0.17 if ax.get_xlabel() else -0.1  # under the axis label, if there is one
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, below), ncol=2, frameon=False)


def line_style(i: int) -> dict[str, Any]:
    """The ``i``-th series' colour, dash and marker: lines of agents that play alike stay apart in print too."""
    return {"color": f"C{i % 10}", "linestyle": ("-", "--", ":", "-.")[i % 4], "marker": "osD^v"[i % 5]}
