"""What both games' heuristics read off the current trick, written once.

The observation carries the current trick as one-hot cards per relative seat;
from it a bot needs the cards by seat, the leader, the suit led and the voids
the trick reveals (a seat that did not follow the led suit holds none of it).
"""

from __future__ import annotations

import numpy as np

from bobshat_env.core.cards import Deck


def trick_void(trick: np.ndarray, led: np.ndarray, deck: Deck) -> np.ndarray:
    """(B, P, S) bool: seats shown void in the led suit by the trick (B, P) of card ids."""
    B, P = trick.shape
    suit = deck.suit_of.astype(np.int64)
    void = np.zeros((B, P, deck.n_suits), dtype=bool)
    off = (trick >= 0) & (led[:, None] >= 0) & (suit[np.maximum(trick, 0)] != led[:, None])
    g, p = np.nonzero(off)
    void[g, p, led[g]] = True
    return void


def trick_facts(o: dict[str, np.ndarray], deck: Deck) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(trick, leader, led, void)`` from an observation's ``trick`` and ``leader`` slices.

    trick: (B, P) card ids by relative seat, -1 where none; leader: (B,)
    relative seat; led: (B,) suit led, -1 before the lead; void: see
    :func:`trick_void`.
    """
    tr = o["trick"]
    trick = np.where(tr.any(axis=2), np.argmax(tr, axis=2), -1).astype(np.int64)
    leader = np.argmax(o["leader"], axis=1)
    lead_card = trick[np.arange(trick.shape[0]), leader]
    led = np.where(lead_card >= 0, deck.suit_of.astype(np.int64)[np.maximum(lead_card, 0)], -1)
    return trick, leader, led, trick_void(trick, led, deck)
