"""The vector env's incremental observation writing equals a fresh full write, bit for bit.

A step of :class:`~bobshat_env.vector.VectorEnv` updates its observation
buffer in place, clearing only the one-hot columns its track notes
(:func:`bobshat_env.core.observe.new_track`). These tests play random games
of both games, with every option that changes a slice, and compare every
step's buffer with :meth:`Game.observe` into a new array.
"""

from __future__ import annotations

import numpy as np
import pytest

from agents.base import sample_masked
from bobshat_env.core import observe
from bobshat_env.vector import VectorEnv

CASES = [  # short games, so that slots finish and restart within the steps played
    ("bobs_hat", {"players": 4, "hands": 2}, "private"),
    ("bobs_hat", {"players": 3, "secret_bidding": True, "no_bid": True, "hands": 2}, "full"),
    ("bobs_hat", {"players": 5, "double_fewest": True, "hands": 1}, "public"),
    ("oh_hell", {"players": 4, "deal_style": "short_low"}, "private"),
    ("oh_hell", {"players": 7, "deal_style": "short_high"}, "full"),
    ("oh_hell", {"players": 3, "deal_style": "short_high_low"}, "public"),
]


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.uint32)


@pytest.mark.parametrize("game,options,view", CASES)
def test_each_step_equals_a_fresh_observation(game, options, view):
    env = VectorEnv(game, num_envs=48, view=view, copy_obs=False, **options)
    gen = np.random.default_rng(5)
    ts = env.reset(seed=3)
    done = 0
    for t in range(400):
        fresh = env.game.observe(env.state, view=view)
        assert np.array_equal(_bits(ts.obs), _bits(fresh)), f"step {t}: rows {np.flatnonzero((ts.obs != fresh).any(1))}"
        ts = env.step(sample_masked(ts.action_mask, gen))
        done += int(ts.done.sum())
    assert done > 0  # games ended and restarted in their slots along the way


@pytest.mark.parametrize("game,options,view", CASES[::3])
def test_recording_write_overwrites_a_dirty_buffer(game, options, view):
    """The first (recording) write fills every cell, whatever the buffer held; then updates follow it."""
    env = VectorEnv(game, num_envs=16, view=view, **options)
    env.reset(seed=1)
    gen = np.random.default_rng(1)
    state, P = env.state, env.num_players
    buf = np.full((16, env.obs_size), 7.0, dtype=np.float32)
    track = np.full((16, observe.track_width(P)), 3, dtype=np.int32)  # garbage, as if from another buffer
    env.game.observe_fn(env.game.config, state, view=view, out=buf, track=track)
    assert np.array_equal(_bits(buf), _bits(env.game.observe(state, view=view)))
    for _ in range(30):  # seats chosen per game, not the seat to act
        env.step(sample_masked(env.game.legal_action_mask(state), gen))
        seat = gen.integers(0, P, 16)
        env.game.observe_fn(env.game.config, state, seat=seat, view=view, out=buf, track=track, incremental=True)
        assert np.array_equal(_bits(buf), _bits(env.game.observe(state, seat=seat, view=view)))


def test_incremental_write_needs_a_fitting_track():
    env = VectorEnv("bobs_hat", num_envs=4)
    env.reset(seed=0)
    fn, cfg, buf = env.game.observe_fn, env.game.config, np.zeros((4, env.obs_size), dtype=np.float32)
    with pytest.raises(ValueError, match="incremental=True needs the track"):
        fn(cfg, env.state, out=buf, incremental=True)
    with pytest.raises(ValueError, match=r"track must be .* shape \(4, 16\)"):
        fn(cfg, env.state, out=buf, track=np.full((4, 9), -1, dtype=np.int32), incremental=True)
