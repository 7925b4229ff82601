"""The batched agent interface every bot implements.

An agent sees B decisions at once: the acting seats' observations, their
legal-action masks and seat indices, and returns one legal action per row.
Batching is what lets a tournament or a training run step thousands of games
with one call per agent per step.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Agent(Protocol):
    """Anything with a name and a batched ``act``."""

    name: str

    def act(self, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray) -> np.ndarray:
        """(B,) legal action ids for observations (B, D), masks (B, A) and seats (B,)."""
        ...


def sample_masked(mask: np.ndarray, gen: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of a (B, A) boolean mask.

    Draws one float per row and takes the legal action of rank
    ``floor(u * count)`` in increasing id order (so it is uniform over each
    row's legal actions). The legal actions come from one pass of
    ``flatnonzero`` over the whole mask, which is several times cheaper at
    large B than a per-row cumulative sum; the actions are the same as the
    cumulative-sum version's for the same generator state.
    """
    mask = np.asarray(mask, dtype=bool)
    if mask.ndim != 2:
        raise ValueError(f"mask must be 2-D (B, A), got shape {mask.shape}")
    B, A = mask.shape
    legal = np.flatnonzero(mask)  # flat ids b * A + a of the legal actions, sorted by row then action
    counts = np.bincount(legal // A, minlength=B) if A else np.zeros(B, dtype=np.int64)
    if B and not counts.all():
        raise ValueError(f"row {int(np.argmin(counts))} of the mask has no legal action")
    first = np.cumsum(counts) - counts  # position in ``legal`` of each row's first legal action
    pick = (gen.random(B) * counts).astype(np.int64)
    return legal[first + pick] - np.arange(B, dtype=np.int64) * A


class RandomAgent:
    """Uniform over the legal actions: cards, hat choices and bids alike."""

    def __init__(self, game: Any = None, seed: int | None = None):
        self.name = "random"
        self.gen = np.random.default_rng(seed)

    def act(self, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray) -> np.ndarray:
        return sample_masked(mask, self.gen)
