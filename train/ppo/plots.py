"""Training curves of a run, read back from its TensorBoard logs, as one PNG (``from train.ppo import plot_run``)."""

from __future__ import annotations

import os
from collections.abc import Sequence
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


def plot_run(
    run_dir: str | os.PathLike | Sequence[str | os.PathLike], png: str | os.PathLike, title: str = "", start: float = 0
) -> None:
    """Training curves of a run, read from its TensorBoard logs, as one PNG (needs matplotlib).

    ``run_dir`` may be a list: the legs of one policy trained on with
    ``--init-from``, whose logs each count table decisions from zero. They are
    drawn end to end, each leg's steps shifted by the decisions of the legs
    before it (a leg's length is the last step it logged), with a dotted line
    where a leg starts; ``start`` shifts the whole curve, e.g. by the decisions
    of the run the first leg started from.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    legs = [run_dir] if isinstance(run_dir, (str, os.PathLike)) else list(run_dir)
    if not legs:
        raise ValueError("no run folder given")
    curves, bounds = run_curves(legs, start)
    tags = [(t, label) for t, label in PLOT_TAGS if t in curves]
    if not tags:
        raise ValueError(f"no training curves in {', '.join(repr(str(r)) for r in legs)}")
    cols = 2
    fig, axes = plt.subplots((len(tags) + 1) // cols, cols, figsize=(11, 2.6 * ((len(tags) + 1) // cols)))
    for ax, (tag, label) in zip(np.ravel(axes), tags):
        steps, values = curves[tag]
        ax.plot(steps / 1e6, values, lw=1.2, marker="o" if len(steps) < 40 else None, ms=3)
        ax.set_title(label, fontsize=10)
        ax.set_xlabel("table decisions (millions)", fontsize=8)
        ax.grid(alpha=0.3)
        for b in bounds[1:]:
            ax.axvline(b / 1e6, color="grey", lw=0.8, ls=":")
        if "margin" in tag:
            ax.axhline(0, color="grey", lw=0.8)
    for ax in np.ravel(axes)[len(tags) :]:
        ax.set_visible(False)
    fig.suptitle(title or " + ".join(Path(r).name for r in legs))
    fig.tight_layout()
    try:
        save_figure(fig, png, dpi=110)  # in one step: a full disk never leaves half a picture
    finally:
        plt.close(fig)


def run_curves(
    legs: Sequence[str | os.PathLike], start: float = 0
) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], list[float]]:
    """The curves :func:`plot_run` draws, as arrays: each plotted tag's (steps, values) over the legs end to
    end (steps shifted as there), and the step at which each leg starts."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    parts: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
    bounds, offset = [], float(start)
    for leg in legs:
        if not Path(leg).is_dir():
            raise ValueError(f"no run folder {str(leg)!r}")
        acc = EventAccumulator(str(leg), size_guidance={"scalars": 0})
        acc.Reload()
        present = [t for t, _ in PLOT_TAGS if t in acc.Tags()["scalars"]]
        bounds.append(offset)
        last = 0
        for tag in present:
            ev = acc.Scalars(tag)
            steps = np.array([e.step for e in ev], dtype=float)
            parts.setdefault(tag, []).append((steps + offset, np.array([e.value for e in ev])))
            last = max(last, int(steps.max(initial=0)))
        offset += last
    curves = {t: (np.concatenate([s for s, _ in p]), np.concatenate([v for _, v in p])) for t, p in parts.items()}
    return curves, bounds
