"""Training curves of a run, read back from its TensorBoard logs, as one PNG (``from train.ppo import plot_run``)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from bobshat_env.paths import save_figure

PLOT_TAGS = (
    ("charts/episodic_return_per_hand", "learner return per hand (score points)"),
    ("charts/eval_margin_per_hand_vs_strong", "duplicate margin per hand vs strong"),
    ("charts/eval_margin_per_hand_vs_simple", "duplicate margin per hand vs simple"),
    ("charts/eval_margin_per_hand_vs_random", "duplicate margin per hand vs random"),
    ("losses/entropy", "policy entropy"),
    ("losses/explained_variance", "explained variance"),
    ("losses/approx_kl", "approx KL"),
    ("charts/SPS", "table decisions / s"),
)


def plot_run(run_dir: str | os.PathLike, png: str | os.PathLike, title: str = "") -> None:
    """Training curves of a run, read from its TensorBoard logs, as one PNG (needs matplotlib)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(run_dir), size_guidance={"scalars": 0})
    acc.Reload()
    tags = [(t, label) for t, label in PLOT_TAGS if t in acc.Tags()["scalars"]]
    if not tags:
        raise ValueError(f"no training curves in {str(run_dir)!r}")
    cols = 2
    fig, axes = plt.subplots((len(tags) + 1) // cols, cols, figsize=(11, 2.6 * ((len(tags) + 1) // cols)))
    for ax, (tag, label) in zip(np.ravel(axes), tags):
        ev = acc.Scalars(tag)
        ax.plot([e.step / 1e6 for e in ev], [e.value for e in ev], lw=1.2, marker="o" if len(ev) < 40 else None, ms=3)
        ax.set_title(label, fontsize=10)
        ax.set_xlabel("table decisions (millions)", fontsize=8)
        ax.grid(alpha=0.3)
        if "margin" in tag:
            ax.axhline(0, color="grey", lw=0.8)
    for ax in np.ravel(axes)[len(tags) :]:
        ax.set_visible(False)
    fig.suptitle(title or Path(run_dir).name)
    fig.tight_layout()
    try:
        save_figure(fig, png, dpi=110)  # in one step: a full disk never leaves half a picture
    finally:
        plt.close(fig)
