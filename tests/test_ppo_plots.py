"""Training curves read back from TensorBoard logs (``train.ppo.plots``), one run or several legs end to end.

A policy trained on with ``--init-from`` logs each leg from step zero; the
curve of the whole training must put each leg after the ones before it.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("matplotlib")
from torch.utils.tensorboard import SummaryWriter

from train.ppo.plots import plot_run, run_curves

RETURN = "charts/episodic_return_per_hand"
VS_STRONG = "charts/eval_margin_per_hand_vs_strong"


def _leg(path, points: dict[str, list[tuple[int, float]]]) -> str:
    with SummaryWriter(str(path)) as w:
        for tag, rows in points.items():
            for step, value in rows:
                w.add_scalar(tag, value, step)
    return str(path)


def test_legs_are_drawn_end_to_end_from_start(tmp_path):
    a = _leg(tmp_path / "a", {RETURN: [(100, 1.0), (300, 2.0)], VS_STRONG: [(200, 0.5)]})
    b = _leg(tmp_path / "b", {RETURN: [(50, 3.0), (400, 4.0)], VS_STRONG: [(0, 0.7), (400, 0.9)]})
    curves, bounds = run_curves([a, b], start=1000)
    # Leg a is 300 decisions long (its last step); b starts after it.
    assert bounds == [1000, 1300]
    steps, values = curves[RETURN]
    assert steps.tolist() == [1100, 1300, 1350, 1700]
    assert values.tolist() == [1.0, 2.0, 3.0, 4.0]
    steps, values = curves[VS_STRONG]
    assert steps.tolist() == [1200, 1300, 1700]
    assert np.allclose(values, [0.5, 0.7, 0.9])
    assert "losses/entropy" not in curves  # a tag no leg logged is not drawn


def test_one_run_is_its_own_steps(tmp_path):
    a = _leg(tmp_path / "a", {RETURN: [(10, 1.0), (20, 2.0)]})
    curves, bounds = run_curves([a])
    assert bounds == [0] and curves[RETURN][0].tolist() == [10, 20]


def test_plot_run_writes_a_png_of_one_run_or_of_legs(tmp_path):
    a = _leg(tmp_path / "a", {RETURN: [(100, 1.0), (300, 2.0)]})
    b = _leg(tmp_path / "b", {RETURN: [(50, 3.0)]})
    plot_run(a, tmp_path / "one.png")
    plot_run([a, b], tmp_path / "legs.png", start=10)
    for name in ("one.png", "legs.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_missing_leg_or_no_curves_is_named(tmp_path):
    a = _leg(tmp_path / "a", {RETURN: [(1, 1.0)]})
    with pytest.raises(ValueError, match="no run folder .*nosuch"):
        plot_run([a, tmp_path / "nosuch"], tmp_path / "x.png")
    empty = _leg(tmp_path / "empty", {"other/tag": [(1, 1.0)]})
    with pytest.raises(ValueError, match="no training curves"):
        plot_run(empty, tmp_path / "x.png")
    with pytest.raises(ValueError, match="no run folder given"):
        plot_run([], tmp_path / "x.png")
    assert not (tmp_path / "x.png").exists()
