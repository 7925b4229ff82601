"""examples/rllib_ppo.py: RLlib's PPO with the masked module trains, plays legally and is evaluated.

Needs the ``rllib`` extra (``pip install -e ".[rllib]"``), which the dev
install and CI leave out (it pins an older gymnasium and pulls pyarrow and
pandas); skipped without it.
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path

import numpy as np
import pytest

if os.environ.get("BOBSHAT_RLLIB_ELSEWHERE") == "1":
    # .ci/run runs this file a second time in a virtual environment that has RLlib (it pins another
    # gymnasium than the dev install), so the main run, which calls the README's command, passes it by.
    pytest.skip("RLlib's example runs in its own environment in CI (.ci/run)", allow_module_level=True)
# ImportError, not only ModuleNotFoundError: Ray ships ray.rllib's sources, which fail to import without the
# extra's pandas (an ImportError from ray.tune), and that stopped the README's test command at collection
pytest.importorskip(
    "ray.rllib.algorithms.ppo", reason="RLlib is not installed (pip install -e '.[rllib]')", exc_type=ImportError
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import rllib_ppo


def test_masked_module_never_prefers_an_illegal_action() -> None:
    import gymnasium as gym
    import torch
    from ray.rllib.core.columns import Columns

    from bobshat_env.vector import VectorEnv

    venv = VectorEnv("bobs_hat", num_envs=64, players=4)
    ts = venv.reset(seed=3)
    space = gym.spaces.Dict(
        {
            "observation": gym.spaces.Box(0.0, 1.0, (venv.obs_size,), np.float32),
            "action_mask": gym.spaces.Box(0, 1, (venv.num_actions,), np.int8),
        }
    )
    module = rllib_ppo.MaskedPPOModule(
        observation_space=space, action_space=gym.spaces.Discrete(venv.num_actions), model_config={}
    )
    agent = rllib_ppo.RLlibAgent(module)
    gen = np.random.default_rng(0)
    for _ in range(120):  # through hat choices, bids and card play
        batch = {
            Columns.OBS: {"observation": torch.from_numpy(ts.obs), "action_mask": torch.from_numpy(ts.action_mask)}
        }
        logits = module.forward_exploration(batch)[Columns.ACTION_DIST_INPUTS]
        illegal = ~torch.from_numpy(ts.action_mask)
        assert (logits[illegal] < -1e30).all() and (logits[~illegal] > -1e30).all()
        probs = torch.softmax(logits, dim=-1)
        assert float(probs[illegal].sum()) == 0.0
        actions = agent.act(ts.obs, ts.action_mask, ts.seat)
        assert ts.action_mask[np.arange(64), actions].all()
        ts = venv.step(np.where(gen.random(64) < 0.5, actions, np.argmax(ts.action_mask, axis=1)))


def test_rllib_example_trains_and_evaluates(tmp_path) -> None:
    out = rllib_ppo.main(
        ["--iterations", "1", "--batch", "400", "--eval-deals", "4", "--json", str(tmp_path / "o.json")]
    )
    assert out["env_steps"] >= 400 and out["env_steps_per_s"] > 0
    assert out["games"] == 4 * 4  # 4 deals x the 4 seatings of one policy against three random seats
    assert math.isfinite(out["policy_per_hand"]) and math.isfinite(out["diff_ci95"])
    assert (tmp_path / "o.json").is_file()
