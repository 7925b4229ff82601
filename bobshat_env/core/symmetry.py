"""Suit symmetry: observations and actions relabelled so that trump is always the first suit.

Apart from trump, the suits of both games are interchangeable: swapping two
suits' names everywhere (hands, cards played, bids, cards taken, the trump
indicator) gives a game that plays out the same, with the same scores. A
policy that sees observations as they come must learn every trump-related
pattern once per trump suit; one that sees them *canonicalized*, with the
trump suit relabelled as suit 0 (blue, clubs), learns it once. That is the
suit-symmetry analogue of the board rotations AlphaZero trains with.

:func:`trump_canonical` gives, for an observation layout, the relabelling as
index tables: row ``k`` applies when the observation's trump indicator
reads ``k``. Each row swaps suit ``k`` with suit 0 (no change for suit 0
itself, nor for Bob's Hat's "no trump"), so each permutation is its own
inverse and one table serves both directions:

- ``canonical_obs = obs[obs_index[k]]`` (a gather of positions);
- a canonical action ``a'`` means the original action ``action_index[k, a']``,
  and the original action ``a`` is canonical action ``action_index[k, a]``.
  So a network scoring canonical actions gives original logits by the
  gather ``canonical_logits[action_index[k]]``.

Nothing in the rules uses this: it is a view for learners
(:class:`agents.ppo_agent.PolicyNet` applies it inside the network when
trained with ``trump_symmetry``). The tests play relabelled deals side by
side and check that their canonical observations are equal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from . import game_module
from .cards import Deck
from .observe import ObsLayout

if TYPE_CHECKING:
    from .contract import BoundGame


@dataclass(frozen=True)
class SuitSymmetry:
    """Index tables that relabel trump as suit 0 (module docstring).

    ``key``: the observation slice (start, length) holding the trump
    one-hot; ``obs_index`` (K, D) and ``action_index`` (K, A), one row per
    value of the key (its argmax: an all-zero key reads 0, no change).
    """

    key: tuple[int, int]
    obs_index: np.ndarray
    action_index: np.ndarray

    def canonical_obs(self, obs: np.ndarray) -> np.ndarray:
        """(B, D) observations relabelled so that trump is suit 0."""
        obs = np.asarray(obs)
        k = obs[:, self.key[0] : self.key[0] + self.key[1]].argmax(axis=1)
        return np.take_along_axis(obs, self.obs_index[k], axis=1)

    def canonical_mask(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """(B, A) legal-action masks in canonical action ids (same gather as the actions)."""
        k = np.asarray(obs)[:, self.key[0] : self.key[0] + self.key[1]].argmax(axis=1)
        return np.take_along_axis(np.asarray(mask), self.action_index[k], axis=1)


def _swap(n_suits: int, k: int) -> np.ndarray:
    """The suit permutation that swaps suit ``k`` with suit 0 (identity for k = 0 or k >= n_suits)."""
    perm = np.arange(n_suits)
    if 0 < k < n_suits:
        perm[[0, k]] = [k, 0]
    return perm


def _card_perm(deck: Deck, suits: np.ndarray) -> np.ndarray:
    """Card id -> the card of the same rank in suit ``suits[suit]``."""
    n = deck.n_cards
    lookup = np.full((deck.n_suits, int(deck.rank_of.max()) + 1), -1, dtype=np.int64)
    lookup[deck.suit_of, deck.rank_of] = np.arange(n)
    return lookup[suits[deck.suit_of], deck.rank_of]


def _obs_row(
    layout: ObsLayout, deck: Deck, suits: np.ndarray, card_slices: tuple[str, ...], suit_slices: tuple[str, ...]
) -> np.ndarray:
    """One row of ``obs_index``: card-indexed slices by card, suit-indexed columns by suit."""
    idx = np.arange(layout.size)
    cards = _card_perm(deck, suits)
    for name, shape in zip(layout.names, layout.shapes):
        start = layout.slices[name].start
        block = idx[layout.slices[name]].reshape(shape)
        if name in card_slices:
            block = block[..., cards]
        elif name in suit_slices:
            block = block.copy()
            block[..., : deck.n_suits] = block[..., suits]
        else:
            continue
        idx[start : start + block.size] = block.reshape(-1)
    return idx


def trump_canonical(game: str | BoundGame, config: object = None, view: str = "private") -> SuitSymmetry:
    """The trump-to-suit-0 relabelling of ``game``'s observations (layout of ``config`` and ``view``).

    ``game`` is a game's name (then ``config`` is its configuration) or a
    :class:`bobshat_env.games.Game` (its own configuration unless ``config``
    is given). What differs between games (deck, which slices hold cards or
    suits, the trump slice, how actions relabel) is asked of the game's core
    module.
    """
    if isinstance(game, str):
        try:
            module = game_module(game)
        except ValueError:
            raise ValueError(f"no suit symmetry for game {game!r}") from None
    else:
        module, config = game.module, game.config if config is None else config
    layout, deck = module.layout(config, view), module.DECK
    card_slices, suit_slices = module.SYMMETRY_CARD_SLICES, module.SYMMETRY_SUIT_SLICES
    key_slice = layout.slices[module.TRUMP_SLICE]
    K = key_slice.stop - key_slice.start
    obs_rows, act_rows = [], []
    for k in range(K):
        suits = _swap(deck.n_suits, k)
        obs_rows.append(_obs_row(layout, deck, suits, card_slices, suit_slices))
        act_rows.append(module.relabel_actions(_card_perm(deck, suits), suits))
    return SuitSymmetry((key_slice.start, K), np.stack(obs_rows), np.stack(act_rows).astype(np.int64))
