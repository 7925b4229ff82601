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

    Draws one integer per row (not one per action) and picks that legal
    action by rank, which is what keeps random play cheap at large B.
    """
    mask = np.asarray(mask, dtype=bool)
    counts = mask.sum(axis=1)
    if np.any(counts == 0):
        raise ValueError(f"row {int(np.argmin(counts))} of the mask has no legal action")
    pick = (gen.random(mask.shape[0]) * counts).astype(np.int64)
    csum = np.cumsum(mask, axis=1)
    return np.argmax(csum > pick[:, None], axis=1)


class RandomAgent:
    """Uniform over the legal actions: cards, hat choices and bids alike."""

    def __init__(self, game: Any = None, seed: int | None = None):
        self.name = "random"
        self.gen = np.random.default_rng(seed)

    def act(self, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray) -> np.ndarray:
        return sample_masked(mask, self.gen)
