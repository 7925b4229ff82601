"""Trick mechanics shared by both games: follow-suit masks and trick winners.

Both games use the same rules for a trick: follow the suit led if able,
otherwise play anything; the highest trump wins if a trump was played, else
the highest card of the suit led. Only the deck differs, so every function
takes a :class:`~bobshat_env.core.cards.Deck`. Everything is batched over a
leading dimension B; there is no loop over games.

Beyond a single trick, both games share the shape of their state
(:class:`TrickState`), what a step reports (:class:`StepResult`), the deal
from a shuffled deck, the dealer's rotation, card play and the booking of a
hand's scores; each game module adds only its own rules (bids, trump, the
hat, scoring).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Self

import numpy as np

from . import rng
from .cards import Deck

NO_CARD = -1
_CHANCE_DEALER = 3  # counter that draws the first dealer from a game's key


def follow_suit_mask(hand: np.ndarray, led_suit: np.ndarray, deck: Deck) -> np.ndarray:
    """Legal cards for the player to act.

    hand: (B, N) bool, the acting player's cards. led_suit: (B,) int, the suit
    led in the current trick, or -1 when the player leads. Returns (B, N) bool:
    the cards of the led suit if the player holds any, else the whole hand.
    """
    of_led = hand & deck.suit_table[led_suit]  # row -1 (no lead) is all False
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


# --------------------------------------------------------------------------
# What both games' states share, and the trick play that runs on it.
@dataclass
class TrickState:
    """Fields every game here has, each with a leading batch axis B.

    A game's ``State`` extends this with its own fields (trump, hat, taken...).
    Seats are absolute (0..P-1).
    """

    key: np.ndarray  # (B,) uint64: the game's chance key
    phase: np.ndarray  # (B,) int8: the game's phase constant
    hand_no: np.ndarray  # (B,) int8: 0-based hand index
    dealer: np.ndarray  # (B,) int8
    first_dealer: np.ndarray  # (B,) int8
    cur: np.ndarray  # (B,) int8: seat to act
    hands: np.ndarray  # (B, P, N) bool: cards still held
    bids: np.ndarray  # (B, P) int8: the game's bid value, -1 before the seat bids
    n_bids: np.ndarray  # (B,) int8: bids made this hand
    trick: np.ndarray  # (B, P) int8: card each seat put in the current trick, -1 none
    leader: np.ndarray  # (B,) int8: seat that leads the current trick
    n_in_trick: np.ndarray  # (B,) int8: cards in the current trick
    led_suit: np.ndarray  # (B,) int8: suit led in the current trick, -1 before the lead
    tricks_done: np.ndarray  # (B,) int8: completed tricks this hand
    played: np.ndarray  # (B, N) bool: cards in completed tricks this hand
    scores: np.ndarray  # (B, P) int32: game totals
    last_scores: np.ndarray  # (B, P) int16: the most recent hand's scores

    @property
    def batch_size(self) -> int:
        return int(self.phase.shape[0])

    def copy(self) -> Self:
        return type(self)(**{f.name: getattr(self, f.name).copy() for f in fields(self)})

    def take(self, idx: np.ndarray | slice) -> Self:
        """The sub-batch of games ``idx`` (a copy)."""
        return type(self)(**{f.name: getattr(self, f.name)[idx].copy() for f in fields(self)})

    def put(self, idx: np.ndarray, other: TrickState) -> None:
        """Write the games of ``other`` into slots ``idx`` of this state."""
        for f in fields(self):
            getattr(self, f.name)[idx] = getattr(other, f.name)


def common_fields(keys: np.ndarray, players: int, n_cards: int, first_dealer: np.ndarray, phase: int) -> dict:
    """Fresh arrays for the :class:`TrickState` fields of B new games."""
    B = keys.shape[0]
    z8 = np.zeros(B, dtype=np.int8)
    return dict(
        key=keys.copy(),
        phase=np.full(B, phase, dtype=np.int8),
        hand_no=z8.copy(),
        dealer=first_dealer.copy(),
        first_dealer=first_dealer.copy(),
        cur=first_dealer.copy(),
        hands=np.zeros((B, players, n_cards), dtype=bool),
        bids=np.full((B, players), -1, dtype=np.int8),
        n_bids=z8.copy(),
        trick=np.full((B, players), NO_CARD, dtype=np.int8),
        leader=first_dealer.copy(),
        n_in_trick=z8.copy(),
        led_suit=np.full(B, -1, dtype=np.int8),
        tricks_done=z8.copy(),
        played=np.zeros((B, n_cards), dtype=bool),
        scores=np.zeros((B, players), dtype=np.int32),
        last_scores=np.zeros((B, players), dtype=np.int16),
    )


@dataclass
class StepResult:
    """What one ``step`` did, per game. Arrays have the batch axis first."""

    rewards: np.ndarray  # (B, P) int32: score changes this step (hand scores, renege penalty)
    trick_done: np.ndarray  # (B,) bool: a trick was completed
    trick_cards: np.ndarray  # (B, P) int8: the completed trick's cards by seat (-1 where none)
    trick_leader: np.ndarray  # (B,) int8
    trick_winner: np.ndarray  # (B,) int8: -1 where no trick was completed
    hand_done: np.ndarray  # (B,) bool: a hand was scored
    renege: np.ndarray  # (B,) bool: a renege ended the hand (Bob's Hat renege mode only)
    new_hand: np.ndarray  # (B,) bool: a new hand is due (dealt in the same step with auto_deal)
    game_done: np.ndarray  # (B,) bool: the game ended

    @classmethod
    def empty(cls, B: int, P: int) -> StepResult:
        no = np.zeros(B, dtype=bool)
        return cls(
            rewards=np.zeros((B, P), dtype=np.int32),
            trick_done=no.copy(),
            trick_cards=np.full((B, P), NO_CARD, dtype=np.int8),
            trick_leader=np.full(B, -1, dtype=np.int8),
            trick_winner=np.full(B, -1, dtype=np.int8),
            hand_done=no.copy(),
            renege=no.copy(),
            new_hand=no.copy(),
            game_done=no,
        )


def random_first_dealer(cfg: Any, keys: np.ndarray) -> np.ndarray:
    """First dealer per game: ``cfg.first_dealer``, or drawn from the key if -1."""
    if cfg.first_dealer >= 0:
        return np.full(keys.shape, cfg.first_dealer, dtype=np.int8)
    return rng.uniform_ints(rng.combine(keys, _CHANCE_DEALER), cfg.players).astype(np.int8)


def rotate_dealer(first_dealer: np.ndarray, hand_no: np.ndarray, players: int) -> np.ndarray:
    """Dealer of each hand: the deal passes clockwise after each hand."""
    return ((first_dealer.astype(np.int64) + hand_no) % players).astype(np.int8)


def deal_from_permutation(perm: np.ndarray, size: np.ndarray, players: int) -> np.ndarray:
    """Hands (n, P, N) bool: seat p gets the cards at positions ``p * size ..
    (p + 1) * size - 1`` of each shuffled deck ``perm`` (n, N)."""
    N = perm.shape[1]
    seat_at = np.arange(N)[None, :] // np.asarray(size, dtype=np.int64)[:, None]  # position -> seat, >= P undealt
    owner = np.empty_like(seat_at)
    np.put_along_axis(owner, perm, seat_at, axis=1)  # card -> seat
    return owner[:, None, :] == np.arange(players)[None, :, None]


def clear_hand(state: TrickState, idx: np.ndarray, hands: np.ndarray, phase: int, first: np.ndarray) -> None:
    """Start a hand in games ``idx``: the new hands, no bids, no trick yet;
    ``first`` acts first in ``phase`` and leads the first trick."""
    state.hands[idx] = hands
    state.phase[idx] = phase
    state.cur[idx] = first
    state.leader[idx] = first
    state.bids[idx] = -1
    state.n_bids[idx] = 0
    state.trick[idx] = NO_CARD
    state.n_in_trick[idx] = 0
    state.led_suit[idx] = -1
    state.tricks_done[idx] = 0
    state.played[idx] = False


def play_cards(
    state: TrickState, g: np.ndarray, card: np.ndarray, trump: np.ndarray, deck: Deck, res: StepResult
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Games ``g`` each play ``card`` (already checked legal) for the seat to act.

    Completed tricks go to their winner, who leads next; ``res`` reports them.
    Returns ``(t, cards, winner)``: the games whose trick was completed, its
    cards by seat (n, P) and the winning seats, for the game's own bookkeeping
    (cards taken, Bob's Hat...).
    """
    P = state.trick.shape[1]
    seat = state.cur[g]
    state.hands[g, seat, card] = False
    state.trick[g, seat] = card
    first = state.n_in_trick[g] == 0
    state.led_suit[g[first]] = deck.suit_of[card[first]]
    state.n_in_trick[g] += 1
    state.cur[g] = (seat + 1) % P

    t = g[state.n_in_trick[g] == P]
    cards = state.trick[t].astype(np.int64)  # (n, P)
    winner = trick_winner(cards, state.leader[t].astype(np.int64), np.asarray(trump)[t], deck)
    res.trick_done[t] = True
    res.trick_cards[t] = cards
    res.trick_leader[t] = state.leader[t]
    res.trick_winner[t] = winner
    state.played[t[:, None], cards] = True
    state.tricks_done[t] += 1
    state.trick[t] = NO_CARD
    state.n_in_trick[t] = 0
    state.led_suit[t] = -1
    state.leader[t] = winner
    state.cur[t] = winner
    return t, cards, winner


def score_hands(
    state: TrickState,
    h: np.ndarray,
    points: np.ndarray,
    n_hands: int,
    res: StepResult,
    deal_phase: int,
    done_phase: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Book the scores of the hands just finished in games ``h`` and move on.

    The last hand ends the game; the others wait for the next deal with the
    deal passed clockwise. Returns ``(over, nxt)``: the games that ended and
    those that go on to another hand.
    """
    res.rewards[h] += points.astype(np.int32)
    res.hand_done[h] = True
    state.scores[h] += points.astype(np.int32)
    state.last_scores[h] = points
    last = state.hand_no[h] + 1 >= n_hands
    over, nxt = h[last], h[~last]
    state.phase[over] = done_phase
    res.game_done[over] = True
    state.hand_no[nxt] += 1
    state.dealer[nxt] = rotate_dealer(state.first_dealer[nxt], state.hand_no[nxt], state.trick.shape[1])
    state.phase[nxt] = deal_phase
    res.new_hand[nxt] = True
    return over, nxt
