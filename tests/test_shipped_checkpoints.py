"""The checkpoints shipped in checkpoints/ load as agents and play legal games."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agents import make_agent
from agents.arena import play_games
from bobshat_env.games import make_game

ROOT = Path(__file__).resolve().parent.parent


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
