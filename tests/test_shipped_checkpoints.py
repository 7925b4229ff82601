"""The checkpoints shipped in checkpoints/ load as agents and play legal games."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agents import make_agent
from agents.arena import play_games
from bobshat_env.games import make_game

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = sorted(p.name for p in (ROOT / "checkpoints").glob("*.pt"))

# Per shipped policy: the least margin per hand over three `strong` bots that the
# regression guard below accepts, and what was measured. README (bobshat eval, seed 7,
# 2000 deals x 4 seatings): bobs_hat_4p +4.18 +-0.09, oh_hell_4p +1.49 +-0.02. The guard's
# own 128 deals x 4 seatings, seed 7: +4.37 +-0.37 and +1.50 +-0.09; 64 deals at seeds
# 0-5: +3.67 to +4.46 and +1.30 to +1.55. The previous policies scored +0.98 and +0.15.
STRENGTH_FLOOR = {"bobs_hat_4p.pt": 2.5, "oh_hell_4p.pt": 0.9}


@pytest.mark.parametrize("name, game_name", [("bobs_hat_4p.pt", "bobs_hat"), ("oh_hell_4p.pt", "oh_hell")])
def test_shipped_checkpoint_plays_and_beats_random(name, game_name):
    pytest.importorskip("torch")
    path = ROOT / "checkpoints" / name
    assert path.stat().st_size < 4_000_000  # "a few MB at most"
    game = make_game(game_name, players=4)
    agents = [make_agent(f"ppo:{path}", game, seed=0)] + [make_agent("random", game, seed=i) for i in (1, 2, 3)]
    result = play_games(game, agents, n_games=16, seed=5)  # every action is checked legal by the core
    margin = result.totals[:, 0] - result.totals[:, 1:].mean(axis=1)
    assert np.mean(margin) > 0, f"{name} should outscore random players, got {margin.mean():.1f} per game"


def test_checkpoint_for_another_game_is_refused():
    pytest.importorskip("torch")
    with pytest.raises(ValueError, match="bobs_hat|oh_hell|game"):
        make_agent(f"ppo:{ROOT / 'checkpoints' / 'bobs_hat_4p.pt'}", make_game("oh_hell", players=4))


def test_every_shipped_checkpoint_has_a_strength_guard():
    assert SHIPPED and sorted(STRENGTH_FLOOR) == SHIPPED, "add the new checkpoint's measured margin to STRENGTH_FLOOR"


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_policy_still_beats_strong(name):
    """A regression guard, not a benchmark: a short duplicate match (128 deals x 4 seatings, the game
    the policy was trained for) of the policy, greedy, against three `strong` bots. Anything that
    changes what the network sees or how it is loaded (observations, symmetry tables, features)
    costs it most of its margin; ~2 s of CPU each."""
    from agents.ppo_agent import load_checkpoint
    from train.evaluate import evaluate

    path = ROOT / "checkpoints" / name
    _, meta = load_checkpoint(path)
    game = make_game(meta["game"], **meta["config"])
    ev = evaluate(game, [f"ppo:{path}", "strong", "strong", "strong"], deals=128, seed=7)
    pair = ev.summary()["pairwise"][0]
    assert (pair["a"], pair["b"]) == (f"ppo:{path}", "strong")
    assert pair["diff_per_hand"] > STRENGTH_FLOOR[name], (
        f"{name} beats strong by {pair['diff_per_hand']:+.2f} ±{pair['ci95']:.2f} per hand; "
        f"the guard wants more than {STRENGTH_FLOOR[name]:+.2f}"
    )
