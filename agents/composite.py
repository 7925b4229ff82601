"""Pluggable bidding: one agent made of a bidding policy and a card-play policy.

``make_agent("bid=strong+play=pimc", game)`` builds an agent that asks the
``strong`` agent for every hat choice and bid and the ``pimc`` agent for every
card, so bidding strategies can be compared with the card play held fixed
(and the other way round). Each part is an ordinary agent spec, options
included: ``bid=simple+play=pimc:worlds=32,playout=strong``.

Rows are routed by their legal actions: a row whose mask allows a card is a
play decision, any other row (Bob's Hat's hat choice and bids, Oh Hell's bids)
a bidding decision. Both parts see the same observations.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from bobshat_env.games import Game

ROLES = ("bid", "play")


class CompositeAgent:
    """Bidding by one agent, card play by another."""

    def __init__(self, game: Game, bid: Any, play: Any, name: str):
        self.name = name
        self.bid = bid
        self.play = play
        self.n_cards = int(game.module.N_CARDS)
        self.needs_public = bool(getattr(bid, "needs_public", False) or getattr(play, "needs_public", False))

    def act(self, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray, public: dict | None = None) -> np.ndarray:
        mask = np.asarray(mask, dtype=bool)
        is_play = mask[:, : self.n_cards].any(axis=1)
        out = np.zeros(mask.shape[0], dtype=np.int64)
        for agent, rows in ((self.play, np.nonzero(is_play)[0]), (self.bid, np.nonzero(~is_play)[0])):
            if not rows.size:
                continue
            if public is not None and getattr(agent, "needs_public", False):
                sub = {k: v[rows] for k, v in public.items()}
                out[rows] = agent.act(obs[rows], mask[rows], seat[rows], public=sub)
            else:
                out[rows] = agent.act(obs[rows], mask[rows], seat[rows])
        return out


def parse_composite(spec: str) -> dict[str, str]:
    """``"bid=strong+play=pimc:worlds=8"`` -> ``{"bid": "strong", "play": "pimc:worlds=8"}``."""
    parts: dict[str, str] = {}
    for part in spec.split("+"):
        role, eq, sub = part.partition("=")
        role = role.strip()
        if not eq or role not in ROLES or not sub.strip():
            raise ValueError(f"bad composite agent part {part!r} in {spec!r}: expected bid=SPEC or play=SPEC")
        if role in parts:
            raise ValueError(f"composite agent {spec!r} names {role!r} twice")
        parts[role] = sub.strip()
    missing = [r for r in ROLES if r not in parts]
    if missing:
        raise ValueError(f"composite agent {spec!r} lacks {' and '.join(missing)}=SPEC")
    return parts


def is_composite(spec: str) -> bool:
    """A spec of the form ``bid=...+play=...``."""
    head = spec.strip().split("+")[0]
    return "=" in head.split(":")[0] and head.split("=")[0].strip() in ROLES


def make_composite(spec: str, game: Game | None, seed: int | None, make: Callable[..., Any]) -> CompositeAgent:
    """Build the composite agent of ``spec`` with ``make(spec, game, seed)`` for its parts."""
    if game is None:
        raise ValueError(f"the composite agent {spec!r} needs a game")
    parts = parse_composite(spec)
    bid = make(parts["bid"], game, seed=seed)
    play = make(parts["play"], game, seed=None if seed is None else seed + 1)
    return CompositeAgent(game, bid, play, name=f"bid={parts['bid']}+play={parts['play']}")
