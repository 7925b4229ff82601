"""The rollout seam: one rollout's learner decisions, with their advantages, as a plain batch of arrays.

A :class:`Rollout` is what a collector (:mod:`train.ppo.collector`, or a Ray
worker in :mod:`train.ppo.workers`) hands to the update
(:mod:`train.ppo.update`): NumPy arrays and a few counts, so it pickles between
processes, and rollouts of several collectors concatenate row-wise for one
update. Its own module, so that both sides import it and neither imports the
other for it. :func:`interleaved_gae` is here too: a rollout's advantages are
computed where its decisions were played (GAE follows each (game, seat)'s
interleaved decisions, which live in one env), before the batch leaves.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Rollout:
    """One rollout's learner decisions with their advantages, and what the rollout measured.

    Row ``i`` is one learner decision. Observations, masks and actions are in
    the network's own labelling (``trump_symmetry``), so :func:`ppo_update`
    needs no relabelling. Advantages are already computed: GAE needs the
    interleaving of (game, seat) sequences, which is local to one env, so
    batches from several collectors can simply be concatenated. The arrays of
    :meth:`RolloutCollector.collect_rollout` are views of the collector's
    buffers, valid until its next rollout (pickling copies them).
    """

    obs: np.ndarray  # (n, input_size) float16: network inputs
    mask: np.ndarray  # (n, A) bool: legal actions
    actions: np.ndarray  # (n,) int64
    logprobs: np.ndarray  # (n,) float32: log-probability of the action when it was sampled
    values: np.ndarray  # (n,) float32: value estimates when it was sampled
    advantages: np.ndarray  # (n,) float32: GAE
    returns: np.ndarray  # (n,) float32: advantages + values
    env_steps: int  # table decisions stepped (all seats): the global step's increment
    seconds: float  # wall time of the rollout (GAE included)
    episode_returns: np.ndarray  # unscaled learner returns of the episodes that ended
    pool_opponents: np.ndarray  # pool index of the opponent of each finished game against the pool
    final_scores: np.ndarray  # the learner's total in each of those games
    win_shares: np.ndarray  # the learner's win share in each of those games
    self_play_games: int  # finished games of pure self-play
    lagged: bool = False  # played by the weights before the last update (overlap_rollout): the update is decoupled

    @property
    def n(self) -> int:
        """Learner decisions in the rollout."""
        return int(self.actions.shape[0])

    @property
    def games(self) -> int:
        """Games finished during the rollout."""
        return self.self_play_games + int(self.pool_opponents.shape[0])


def interleaved_gae(
    rewards: np.ndarray,
    values: np.ndarray,
    dones: np.ndarray,
    game: np.ndarray,
    seat: np.ndarray,
    step_start: np.ndarray,
    bootstrap: np.ndarray,
    gamma: float,
    gae_lambda: float,
) -> np.ndarray:
    """GAE advantages of decisions from many interleaved (game, seat) sequences.

    Decision ``i`` was made by ``seat[i]`` in game ``game[i]``; the decisions
    of env step ``t`` are ``step_start[t]:step_start[t + 1]`` (at most one
    per game). ``rewards[i]`` is what that seat scored until its next
    decision, ``dones[i]`` whether its episode ended before then, and
    ``bootstrap[g, p]`` the value after the last decision of (g, p). Each
    sequence gets the usual recursion ``A_i = delta_i + gamma lambda A_next``,
    vectorized over games by walking the steps backwards.
    """
    adv = np.zeros(len(rewards), dtype=np.float32)
    next_value, next_adv = bootstrap.astype(np.float32).copy(), np.zeros_like(bootstrap, dtype=np.float32)
    for t in reversed(range(len(step_start) - 1)):
        s, e = step_start[t], step_start[t + 1]
        if s == e:
            continue
        g, p = game[s:e], seat[s:e]
        live = 1.0 - dones[s:e]
        delta = rewards[s:e] + gamma * next_value[g, p] * live - values[s:e]
        adv[s:e] = delta + gamma * gae_lambda * live * next_adv[g, p]
        next_value[g, p], next_adv[g, p] = values[s:e], adv[s:e]
    return adv
