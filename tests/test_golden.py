"""The bots' decisions and the observations equal the recorded fixtures (see ``tests/golden.py``).

These pin behaviour, not implementation: a refactor of the rules helpers,
the heuristics' kernels or the observation encoders must leave every
recorded decision of ``strong``, ``simple``, ``pimc`` and the shipped PPO
policies, and every observation value, exactly as it was.
"""

from __future__ import annotations

import numpy as np
import pytest
from golden import DECISION_CASES, DECISIONS, OBSERVATION_CASES, OBSERVATIONS, observe_case, play_case

from bobshat_env.core import bobs_hat as bh


@pytest.fixture(scope="module")
def decisions():
    return np.load(DECISIONS)


@pytest.fixture(scope="module")
def observations():
    return np.load(OBSERVATIONS)


@pytest.mark.parametrize("name", list(DECISION_CASES))
def test_decisions_equal_the_fixture(name, decisions):
    if "ppo" in name:
        pytest.importorskip("torch")
    recorded = decisions[name]
    actions, differ = play_case(name, recorded)
    assert actions.shape[0] > 100
    assert differ == 0, f"{differ} of {actions.shape[0]} decisions of case {name} changed"


@pytest.mark.parametrize("name", list(OBSERVATION_CASES))
def test_observations_equal_the_fixture(name, observations):
    got = observe_case(name)
    assert set(got) <= set(observations.files)
    for key, obs in got.items():
        want = observations[key]
        assert obs.shape == want.shape and obs.dtype == want.dtype == np.float32, key
        assert np.array_equal(obs.view(np.uint32), want.view(np.uint32)), f"{key}: observations changed"


def test_replay_counts_a_changed_decision(decisions):
    """The check can fail: a fixture with one action altered (to another legal one) counts one difference."""
    name = "bh3_strong"
    recorded = decisions[name].copy()
    # the first decision is the dealer's hat choice: swap +10 and -10 (both always legal)
    assert recorded[0] in (bh.HAT_PLUS, bh.HAT_MINUS)
    recorded[0] = bh.HAT_MINUS if recorded[0] == bh.HAT_PLUS else bh.HAT_PLUS
    _, differ = play_case(name, recorded)
    assert differ >= 1
