"""Trick facts a policy network can use directly, computed from the observation inside the network.

An MLP given one-hot cards must learn for itself which card currently wins
the trick and which of its own cards would beat it: comparisons across
suits, trump and ranks that take it millions of decisions to approximate.
:class:`TrickFeatures` computes them exactly, with a few matrix products on
the observation, and the network reads them next to it:

==================  =========  ==============================================
feature             size       meaning
==================  =========  ==============================================
winning seat        P          relative seat whose card wins the trick so far
beats               N          my cards that would win it if played now
                               (all of them when I lead)
hat in trick        1          a Bob's Hat card (14, 15) is in the trick
                               (Bob's Hat only; 0 in Oh Hell)
unseen per suit     S          cards of each suit I have not seen, / ranks
unseen hat cards    1          hat cards I have not seen, / 6 (Bob's Hat)
outranked           N          for each of my cards: unseen higher cards of
                               its suit, / ranks
==================  =========  ==============================================

"Unseen" is what the observation shows: not in my hand, not played this
hand, not in the current trick; it includes cards out of play. Nothing here
is hidden information: every feature is a function of the observation, so
a network with features plays under the same information as one without.
The module has no weights; its tables are buffers saved with the network
(:class:`agents.ppo_agent.PolicyNet` with ``features``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from bobshat_env.core.cards import BH_IS_HAT_CARD, BOBS_HAT_DECK, OH_HELL_DECK
from bobshat_env.core.observe import bh_layout, oh_layout

_SPEC = ("hand", "played", "trick", "leader", "trump", "n_trump_suits", "players", "n_cards", "n_ranks")


class TrickFeatures(nn.Module):
    """The table above for one game's observation layout; ``forward(obs) -> (B, size)``."""

    def __init__(self, spec: torch.Tensor, suit_onehot: torch.Tensor, rank: torch.Tensor, hat: torch.Tensor):
        super().__init__()
        self.register_buffer("spec", spec.to(torch.int64))
        self.register_buffer("suit_onehot", suit_onehot.float())  # (N, S)
        self.register_buffer("rank", rank.float())  # (N,) 0-based strength within the suit
        self.register_buffer("hat", hat.float())  # (N,) 1 for hat cards
        same = suit_onehot.float() @ suit_onehot.float().T
        self.register_buffer("higher", same * (rank[:, None] > rank[None, :]).float())  # higher[c2, c]
        self.offsets = dict(zip(_SPEC, (int(x) for x in spec.tolist())))
        o = self.offsets
        self.size = 2 * o["n_cards"] + o["players"] + suit_onehot.shape[1] + 2

    @classmethod
    def for_game(cls, game: str, config: Any, view: str = "private") -> TrickFeatures:
        """The features of ``game``'s observations (layout of ``config`` and ``view``)."""
        if game == "bobs_hat":
            layout, deck, trump, n_trump, hat = bh_layout(config, view), BOBS_HAT_DECK, "trump", 3, BH_IS_HAT_CARD
        elif game == "oh_hell":
            layout, deck, trump, n_trump = oh_layout(config, view), OH_HELL_DECK, "trump_suit", 4
            hat = np.zeros(deck.n_cards, dtype=bool)
        else:
            raise ValueError(f"no trick features for game {game!r}")
        sl = layout.slices
        n_ranks = int(deck.rank_of.max()) + 1
        spec = [sl["hand"].start, sl["played"].start, sl["trick"].start, sl["leader"].start, sl[trump].start]
        spec += [n_trump, config.players, deck.n_cards, n_ranks]
        suit_onehot = np.eye(deck.n_suits, dtype=np.float32)[deck.suit_of]
        return cls(
            torch.tensor(spec), torch.from_numpy(suit_onehot), torch.from_numpy(deck.rank_of.astype(np.float32)),
            torch.from_numpy(hat.astype(np.float32)),
        )  # fmt: skip

    @classmethod
    def from_state(cls, state: dict[str, torch.Tensor], prefix: str = "features.") -> TrickFeatures:
        """Rebuild from a network's state dict (the buffers are all it needs)."""
        get = {k: state[prefix + k] for k in ("spec", "suit_onehot", "rank", "hat")}
        return cls(get["spec"], get["suit_onehot"], get["rank"], get["hat"])

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        """(B, size) features of observations (B, D), in the observations' dtype."""
        o = self.offsets
        B, N, P, R = obs.shape[0], o["n_cards"], o["players"], float(o["n_ranks"])
        x = obs.float()
        hand = x[:, o["hand"] : o["hand"] + N]
        played = x[:, o["played"] : o["played"] + N]
        trick = x[:, o["trick"] : o["trick"] + P * N].reshape(B, P, N)
        leader = x[:, o["leader"] : o["leader"] + P]
        trump_suit = x[:, o["trump"] : o["trump"] + o["n_trump_suits"]]  # Bob's Hat's "none" is not a suit
        suits = self.suit_onehot[:, : o["n_trump_suits"]]

        in_trick = trick.sum(dim=1)
        led_card = (leader.unsqueeze(2) * trick).sum(dim=1)
        led_suit = led_card @ self.suit_onehot
        is_trump = trump_suit @ suits.T
        is_led = led_suit @ self.suit_onehot.T
        # strength if played into this trick: trumps above the suit led above the rest (0: cannot win)
        strength = is_trump * (2 * R + 1 + self.rank) + (1 - is_trump) * is_led * (R + 1 + self.rank)
        per_seat = (trick * strength.unsqueeze(1)).sum(dim=2)
        best = per_seat.max(dim=1, keepdim=True).values
        winning = ((per_seat == best) & (best > 0)).float()
        empty = (in_trick.sum(dim=1, keepdim=True) == 0).float()
        beats = hand * torch.maximum((strength > best).float(), empty)
        hat_in_trick = (in_trick @ self.hat).clamp(max=1.0).unsqueeze(1)
        unseen = (1 - hand - played - in_trick).clamp(min=0.0)
        unseen_suit = unseen @ self.suit_onehot / R
        unseen_hat = (unseen @ self.hat).unsqueeze(1) / 6.0
        outranked = hand * (unseen @ self.higher) / R
        out = torch.cat([winning, beats, hat_in_trick, unseen_suit, unseen_hat, outranked], dim=1)
        return out.to(obs.dtype)
