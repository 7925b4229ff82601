"""benchmarks/nashconv_curve.py: PPO's exact NashConv curve beside CFR+'s, on the tiny Oh Hell variant."""

from __future__ import annotations

import json
import math

import pytest

pytest.importorskip("pyspiel")

from benchmarks.nashconv_curve import check_finite, main, nashconv_curve


def test_smallest_curve_has_both_methods_and_finite_nonnegative_nashconv(tmp_path):
    result = nashconv_curve("oh_hell", "tiny", minutes=0.001, every=1, runs_dir=tmp_path, total_decisions=384)
    ppo, cfr = result["ppo"], result["cfr"]
    assert ppo["curve"] and cfr["curve"]
    assert [p["iteration"] for p in ppo["curve"]] == list(range(1, len(ppo["curve"]) + 1))
    for point in ppo["curve"]:
        for key in ("nash_conv", "nash_conv_sampled"):
            assert math.isfinite(point[key]) and point[key] >= 0
        assert point["global_step"] > 0
    # a random-ish untrained policy is far from equilibrium in tiny Oh Hell (returns 0 to 11 a seat)
    assert ppo["curve"][0]["nash_conv_sampled"] > 1
    # an untrained network's probabilities are not one-hot: sampled and greedy are different policies
    assert ppo["curve"][0]["nash_conv_sampled"] != pytest.approx(ppo["curve"][0]["nash_conv"])
    for point in cfr["curve"]:
        assert math.isfinite(point["nash_conv"]) and point["nash_conv"] >= 0
    # CFR+ ran for PPO's training seconds (iterations only), at least one iteration
    assert cfr["iterations"] >= 1 and cfr["seconds"] >= min(ppo["seconds"], 1e-3) * 0.5
    json.dumps(result)  # the JSON the script writes
    # TensorBoard got the exact NashConv beside the run's own scalars
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    board = EventAccumulator(str(tmp_path / "nashconv_oh_hell_tiny"))
    board.Reload()
    logged = [e.value for e in board.Scalars("exact/nashconv")]
    assert logged == pytest.approx([p["nash_conv"] for p in ppo["curve"]])
    check_finite(result)
    bad = {**result, "cfr": {**cfr, "curve": [{"seconds": 1.0, "nash_conv": float("nan")}]}}
    with pytest.raises(ValueError, match="cfr nash_conv"):
        check_finite(bad)


def test_bad_budget_is_one_line(capsys, monkeypatch):
    import benchmarks.nashconv_curve as script

    # a budget let through would train without end (the mutation run found it hanging): fail at once instead
    monkeypatch.setattr(script, "nashconv_curve", lambda *a, **k: pytest.fail("a bad budget reached the run"))
    assert main(["--minutes", "0"]) == 2
    assert capsys.readouterr().err.strip() == "error: --minutes must be > 0 and --every >= 1"


def test_missing_out_folder_fails_before_training(tmp_path, capsys, monkeypatch):
    import benchmarks.nashconv_curve as script

    # CI found it: the docs' command wrote into a folder that was not there, after minutes of training
    monkeypatch.setattr(script, "nashconv_curve", lambda *a, **k: pytest.fail("trained before checking --out"))
    out = tmp_path / "no" / "curve"
    assert main(["--out", str(out)]) == 2
    assert capsys.readouterr().err.strip() == f"error: --out {out}: folder {out.parent} does not exist"
