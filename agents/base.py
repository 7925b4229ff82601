"""The batched agent interface every bot implements.

An agent sees B decisions at once: the acting seats' observations, their
legal-action masks and seat indices, and returns one legal action per row.
Batching is what lets a tournament or a training run step thousands of games
with one call per agent per step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np
from numba import prange

from bobshat_env.core.compiled import batch_kernel

if TYPE_CHECKING:
    from bobshat_env.games import Game


@runtime_checkable
class Agent(Protocol):
    """Anything with a name and a batched ``act``."""

    name: str

    def act(self, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray) -> np.ndarray:
        """(B,) legal action ids for observations (B, D), masks (B, A) and seats (B,)."""
        ...


@batch_kernel
def _pick_ranked(mask: np.ndarray, u: np.ndarray, out: np.ndarray) -> int:
    """out[b] = the legal action of rank floor(u[b] * count) in row b of a
    (B, A) uint8 mask; returns the first row with no legal action, or -1."""
    for b in prange(mask.shape[0]):  # indexes mask[b, a]: a row view per row would cost more than the draw
        count = 0
        for a in range(mask.shape[1]):
            count += mask[b, a]
        k = np.int64(u[b] * count)
        pick = -1  # stays -1 in a row with no legal action
        for a in range(mask.shape[1]):
            k -= mask[b, a]
            if k < 0:  # the k-th set entry, a legal action since k < count
                pick = a
                break
        out[b] = pick
    for b in range(mask.shape[0]):
        if out[b] < 0:
            return b
    return -1


def sample_masked(mask: np.ndarray, gen: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of a (B, A) boolean mask.

    Draws one float ``u`` per row from ``gen`` and takes the legal action of
    rank ``floor(u * count)`` in increasing id order, so it is uniform over
    each row's legal actions and a pure function of the generator's state.
    The ranking runs as one compiled pass over the mask (this is the random
    policy of the throughput benchmark, whose cost counts).
    """
    mask = np.asarray(mask)
    if mask.ndim != 2:
        raise ValueError(f"mask must be 2-D (B, A), got shape {mask.shape}")
    return _pick(mask, gen.random(len(mask)))  # a new float64 array: no conversion to pay for


def pick_ranked(mask: np.ndarray, u: np.ndarray) -> np.ndarray:
    """(B,) the legal action of rank ``floor(u[b] * count)`` in each row of a (B, A) mask, ``u`` in [0, 1).

    :func:`sample_masked` with the uniforms given: a search that draws its
    random numbers ahead (one stream per decision) picks with it.
    """
    return _pick(np.asarray(mask), np.ascontiguousarray(u, dtype=np.float64))


def _pick(mask: np.ndarray, u: np.ndarray) -> np.ndarray:
    """:func:`pick_ranked` on a NumPy mask and contiguous float64 uniforms."""
    flags = np.ascontiguousarray(mask if mask.dtype == np.bool_ else mask != 0).view(np.uint8)
    out = np.empty(mask.shape[0], dtype=np.int64)
    bad = _pick_ranked.on(mask.shape[0])(flags, u, out)
    if bad >= 0:
        raise ValueError(f"row {bad} of the mask has no legal action")
    return out


class RandomAgent:
    """Uniform over the legal actions: cards, hat choices and bids alike."""

    def __init__(self, game: Game | None = None, seed: int | None = None):
        self.name = "random"
        self.gen = np.random.default_rng(seed)

    def act(self, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray) -> np.ndarray:
        return sample_masked(mask, self.gen)

    def action_probs(self, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray) -> np.ndarray:
        """(B, A) the probabilities :meth:`act` draws from: uniform over each row's legal actions.

        Evaluations use them for control variates (train/evaluate/variance.py).
        """
        m = np.asarray(mask, dtype=np.float64)
        return m / m.sum(axis=1, keepdims=True)
