"""benchmarks/nashconv_curve.py: PPO's exact NashConv curve beside CFR+'s and NFSP's, on the tiny Oh Hell variant."""

from __future__ import annotations

import json
import math

import pytest

pytest.importorskip("pyspiel")

import numpy as np

from benchmarks.nashconv_curve import check_finite, legal_distribution, main, nashconv_curve, nfsp_points, train_nfsp


def test_smallest_curve_has_both_methods_and_finite_nonnegative_nashconv(tmp_path):
    result = nashconv_curve("oh_hell", "tiny", minutes=0.001, every=1, runs_dir=tmp_path, total_decisions=384)
    ppo, cfr, nfsp = result["ppo"], result["cfr"], result["nfsp"]
    assert ppo["curve"] and cfr["curve"] and nfsp["curve"]
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
    # NFSP trained at least PPO's seconds (it stops after the episode that reaches them)
    assert nfsp["episodes"] >= 1 and nfsp["seconds"] >= ppo["seconds"]
    for point in nfsp["curve"]:
        assert math.isfinite(point["nash_conv"]) and point["nash_conv"] >= 0
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
    bad = {**result, "nfsp": {**nfsp, "curve": [{"seconds": 1.0, "nash_conv": float("inf")}]}}
    with pytest.raises(ValueError, match="nfsp nash_conv"):
        check_finite(bad)


def test_nfsp_part_smallest_budget_curve_and_the_policy_it_hands_over(monkeypatch):
    import train.exact
    from train.exact import TreeCopy, load_game

    spiel = load_game("oh_hell", {"variant": "tiny"})
    tree = TreeCopy(spiel)
    handed = []
    real = train.exact.policy_values

    def spy(game, policy):  # the policy train_nfsp hands to policy_values, kept for the checks below
        handed.append(policy)
        return real(game, policy)

    monkeypatch.setattr(train.exact, "policy_values", spy)
    # no checkpoint picked: the point after the last episode, which used the whole budget, comes anyway
    result = train_nfsp(spiel, tree, seconds=1e-3, seed=0, checkpoint=lambda episode: False)
    curve = result["curve"]
    assert len(curve) == 1 and curve[0]["episode"] == result["episodes"] >= 1
    assert curve[-1]["seconds"] == result["seconds"] >= 1e-3
    assert result["steps"] >= result["episodes"] and curve[-1]["steps"] == result["steps"]
    for point in curve:
        assert math.isfinite(point["nash_conv"]) and point["nash_conv"] >= 0
    # an untrained average network is far from equilibrium in tiny Oh Hell (returns 0 to 11 a seat)
    assert curve[0]["nash_conv"] > 1
    assert len(handed) == len(curve)
    average = handed[-1].policy  # the copy's policy wraps the average policy of the original game
    mixed = 0
    for state, legal in tree.states.values():
        rng = np.random.get_state()
        probs = average.action_probabilities(state)
        # asking draws no random number the training would miss (NFSP's step samples an action)
        assert all(np.array_equal(a, b) for a, b in zip(rng, np.random.get_state()))
        assert sorted(probs) == sorted(legal), "a distribution over exactly the legal actions"
        assert all(p >= 0 for p in probs.values())
        assert sum(probs.values()) == pytest.approx(1.0, abs=1e-12)
        mixed += any(0 < p < 1 for p in probs.values())
    # the average network's softmax, not the best response's one-hot greedy action
    assert mixed > 0


def test_nfsp_points_first_episode_then_doubling_from_128():
    assert [i for i in range(1, 1025) if nfsp_points(i)] == [1, 128, 256, 512, 1024]


def test_legal_distribution_renormalizes_over_the_legal_actions():
    probs = np.array([0.2, 0.3, 0.5, 0.0], dtype=np.float32)
    out = legal_distribution(probs, [0, 2])
    assert out == pytest.approx({0: 0.2 / 0.7, 2: 0.5 / 0.7})
    assert legal_distribution(np.array([-0.1, 1.0]), [0, 1]) == {0: 0.0, 1: 1.0}
    with pytest.raises(ValueError, match=r"legal actions \[3\] no probability"):
        legal_distribution(probs, [3])


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
