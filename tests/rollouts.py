"""A stored rollout of given inputs with random masks, actions and targets, for tests of the PPO update."""

from __future__ import annotations

import numpy as np

from train.ppo.rollout import Rollout


def random_rollout(
    obs: np.ndarray, seed: int, logprob_noise: float = 0.0, adv_mean: float = 0.0, adv_sd: float = 1.0
) -> Rollout:
    """``obs`` (n, D) float16 with, per row, a random Bob's Hat-sized mask (86 actions, action 0 always legal),
    a legal action, the uniform log-probability of the mask plus ``logprob_noise`` standard deviations of
    noise (ratios away from 1, so some are clipped), and standard normal values and returns; advantages normal
    with mean ``adv_mean`` and spread ``adv_sd``. The draws, in this order, come from ``seed`` alone."""
    rng = np.random.default_rng(seed)
    n, a = obs.shape[0], 86
    mask = rng.random((n, a)) < 0.15
    mask[:, 0] = True
    f32 = lambda v: np.asarray(v, dtype=np.float32)  # noqa: E731
    logprobs = -np.log(mask.sum(1))
    return Rollout(
        obs=obs,
        mask=mask,
        actions=np.array([rng.choice(np.flatnonzero(m)) for m in mask]),
        logprobs=f32(logprobs + logprob_noise * rng.standard_normal(n) if logprob_noise else logprobs),
        values=f32(rng.standard_normal(n)),
        advantages=f32(adv_mean + adv_sd * rng.standard_normal(n)),
        returns=f32(rng.standard_normal(n)),
        env_steps=n,
        seconds=0.0,
        episode_returns=f32([]),
        pool_opponents=np.zeros(0, dtype=np.int64),
        final_scores=f32([]),
        win_shares=f32([]),
        self_play_games=0,
    )
