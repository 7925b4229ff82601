"""Trick mechanics shared by both games: follow-suit masks and trick winners.

Both games use the same rules for a trick: follow the suit led if able,
otherwise play anything; the highest trump wins if a trump was played, else
the highest card of the suit led. Only the deck differs, so every function
takes a :class:`~bobshat_env.core.cards.Deck`. Everything is batched over a
leading dimension B; there is no loop over games.
"""

from __future__ import annotations

import numpy as np

from .cards import Deck

NO_CARD = -1


def follow_suit_mask(hand: np.ndarray, led_suit: np.ndarray, deck: Deck) -> np.ndarray:
    """Legal cards for the player to act.

    hand: (B, N) bool, the acting player's cards. led_suit: (B,) int, the suit
    led in the current trick, or -1 when the player leads. Returns (B, N) bool:
    the cards of the led suit if the player holds any, else the whole hand.
    """
    of_led = hand & (deck.suit_of[None, :] == led_suit[:, None])
    can_follow = of_led.any(axis=1)
    return np.where(can_follow[:, None], of_led, hand)


def trick_winner(cards: np.ndarray, leader: np.ndarray, trump: np.ndarray, deck: Deck) -> np.ndarray:
    """Seat that takes each completed trick.

    cards: (B, P) int, the card each seat played (all present). leader: (B,)
    seat that led. trump: (B,) trump suit, or any value outside the deck's
    suits for no trump. Returns (B,) int seat index.
    """
    b = np.arange(cards.shape[0])
    suit = deck.suit_of[cards]  # (B, P)
    led = suit[b, leader]
    rank = deck.rank_of[cards].astype(np.int16)
    n = int(deck.rank_of.max()) + 1
    strength = rank + n * (suit == led[:, None]) + 2 * n * (suit == trump[:, None])
    return np.argmax(strength, axis=1)
