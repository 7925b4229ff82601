"""Trick mechanics shared by both games: follow suit, trick winners, card play.

Both games use the same rules for a trick: follow the suit led if able,
otherwise play anything; the highest trump wins if a trump was played, else
the highest card of the suit led. Only the deck differs, so every function
takes the deck's ``suit_of`` / ``rank_of`` tables.

The rules are compiled (numba ``@njit``) loops over the games of a batch:
each game is stepped by plain scalar code, which is both the fastest way to
run thousands of games on a CPU and the cheapest way to run one (the AEC
env). The per-game functions here (:func:`follow_suit_row`,
:func:`winner_of_trick`, :func:`play_card`, :func:`book_hand`) are called
from each game's step kernel; the batched NumPy-facing functions
(:func:`follow_suit_mask`, :func:`trick_voids`, :func:`rotate_dealer`) wrap
the same code for callers outside the core, so every rule has one
implementation.

The bots (``agents/``) reason with the same rules, so they call the same
compiled helpers from their own kernels: :func:`card_strength` and
:func:`trick_winner_so_far` (who wins a trick as it stands),
:func:`follow_suit_row` (their legal cards), :func:`mark_trick_voids` (the
voids a trick shows) and :func:`count_unseen` (card counting: unseen cards
per suit and above each card).

Beyond a single trick, both games share the shape of their state
(:class:`TrickState`), what a step reports (:class:`StepResult`), the deal
from a shuffled deck, the dealer's rotation, card play and the booking of a
hand's scores; each game module adds only its own rules (bids, trump, the
hat, scoring).
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable
from dataclasses import dataclass, fields
from operator import attrgetter
from types import ModuleType
from typing import Any, ClassVar, Self

import numpy as np
from numba import njit, prange

from . import rng
from .cards import Deck
from .compiled import batch_kernel

NO_CARD = -1
_CHANCE_DEALER = 3  # counter that draws the first dealer from a game's key


# --------------------------------------------------------------------------
# Per-game rules (compiled; called from the games' step and mask kernels)
@njit(cache=True, inline="always")
def follow_suit_row(hands: np.ndarray, g: int, seat: int, led: int, suit_of: np.ndarray, out: np.ndarray) -> None:
    """Write into ``out[g, :N]`` the legal cards of ``hands[g, seat]`` (N
    cards) when ``led`` is the suit led (-1: the player leads): the cards of
    the led suit if the player holds any, else the whole hand.

    Like every per-game helper here it takes the batch arrays and the game's
    index rather than row views: a view costs a reference-counted array
    struct, which in a loop over thousands of games costs more than the rule.
    """
    can_follow = False
    for c in range(hands.shape[2]):  # branch-free, so it vectorizes
        follows = hands[g, seat, c] & (suit_of[c] == led)
        out[g, c] = follows
        can_follow |= follows
    if not can_follow:
        for c in range(hands.shape[2]):
            out[g, c] = hands[g, seat, c]


@njit(cache=True, inline="always")
def card_strength(card: int, led: int, trump: int, suit_of: np.ndarray, rank_of: np.ndarray) -> int:
    """How ``card`` ranks in a trick: trumps above the suit led, each by rank; any other card 0 (it
    never wins). ``led`` is the suit led (-1: none yet), ``trump`` a suit or any other value for no
    trump. The one order of trick winners, for the rules and for the bots."""
    s = suit_of[card]
    if s == trump:
        return 200 + rank_of[card]
    if s == led:
        return 100 + rank_of[card]
    return 0


@njit(cache=True, inline="always")
def trick_winner_so_far(
    trick: np.ndarray, g: int, led: int, trump: int, suit_of: np.ndarray, rank_of: np.ndarray
) -> tuple[int, int]:
    """(strength, seat) of the card that wins ``trick[g]`` (cards by seat, -1 none) as it stands, by
    :func:`card_strength`; (-1, -1) for an empty trick."""
    best, best_seat = -1, -1
    for p in range(trick.shape[1]):
        if trick[g, p] >= 0:
            strength = card_strength(trick[g, p], led, trump, suit_of, rank_of)
            if strength > best:
                best, best_seat = strength, p
    return best, best_seat


@njit(cache=True, inline="always")
def winner_of_trick(
    cards: np.ndarray, g: int, leader: int, trump: int, suit_of: np.ndarray, rank_of: np.ndarray
) -> int:
    """Seat that takes the completed trick ``cards[g]`` (P cards by seat):
    ``leader`` the seat that led, ``trump`` a suit or any other value for no
    trump. The highest trump wins, else the highest card of the suit led."""
    return trick_winner_so_far(cards, g, suit_of[cards[g, leader]], trump, suit_of, rank_of)[1]


@njit(cache=True, inline="always")
def mark_trick_voids(trick: np.ndarray, g: int, led: int, suit_of: np.ndarray, void: np.ndarray) -> None:
    """Set ``void[g, p, led]`` for every seat ``p`` whose card in ``trick[g]`` (-1: none) is off the
    suit led: it holds no card of that suit (it would have had to follow)."""
    if led < 0:
        return
    for p in range(trick.shape[1]):
        if trick[g, p] >= 0 and suit_of[trick[g, p]] != led:
            void[g, p, led] = True


@njit(cache=True, inline="always")
def count_unseen(
    seen: np.ndarray,
    suit_of: np.ndarray,
    rank_of: np.ndarray,
    above: np.ndarray,
    unseen_s: np.ndarray,
    higher: np.ndarray,
) -> int:
    """Count the cards a player has not seen, for card counting. Returns how many there are.

    ``seen`` (N,) marks the cards the player has seen (its hand, the cards
    played, whatever else is face up). Fills ``above`` (S, R + 1): unseen
    cards of suit s ranked r or higher; ``unseen_s`` (S,): unseen cards per
    suit; ``higher`` (N,): for each card, the unseen cards of its suit ranked
    above it.
    """
    for s in range(above.shape[0]):
        for r in range(above.shape[1]):
            above[s, r] = 0
    n = 0
    for c in range(seen.shape[0]):
        if not seen[c]:
            above[suit_of[c], rank_of[c]] += 1
            n += 1
    for s in range(above.shape[0]):
        for r in range(above.shape[1] - 2, -1, -1):
            above[s, r] += above[s, r + 1]
        unseen_s[s] = above[s, 0]
    for c in range(seen.shape[0]):
        higher[c] = above[suit_of[c], rank_of[c] + 1]
    return n


@njit(cache=True, inline="always")
def play_card(s: Any, r: Any, g: int, card: int, trump: int, suit_of: np.ndarray, rank_of: np.ndarray) -> int:
    """Game ``g`` plays ``card`` (already checked legal) for its seat to act.

    ``s`` holds the :class:`TrickState` arrays (any game's, see
    :meth:`TrickState.arrays`), ``r`` the :class:`StepResult` arrays. A
    completed trick goes to its winner, who leads next, and is reported in
    ``r``. Returns the winning seat, or -1 if the trick goes on.
    """
    P = s.trick.shape[1]
    seat = s.cur[g]
    s.hands[g, seat, card] = False
    s.trick[g, seat] = card
    if s.n_in_trick[g] == 0:
        s.led_suit[g] = suit_of[card]
    s.n_in_trick[g] += 1
    s.cur[g] = (seat + 1) % P
    if s.n_in_trick[g] < P:
        return -1
    winner = winner_of_trick(s.trick, g, s.leader[g], trump, suit_of, rank_of)
    r.trick_done[g] = True
    r.trick_leader[g] = s.leader[g]
    r.trick_winner[g] = winner
    for p in range(P):
        r.trick_cards[g, p] = s.trick[g, p]
        s.played[g, s.trick[g, p]] = True
        s.trick[g, p] = NO_CARD
    s.tricks_done[g] += 1
    s.n_in_trick[g] = 0
    s.led_suit[g] = -1
    s.leader[g] = winner
    s.cur[g] = winner
    return winner


@njit(cache=True, inline="always")
def dealer_of(first_dealer: int, hand_no: int, players: int) -> int:
    """Dealer of hand ``hand_no``: the deal passes clockwise after each hand."""
    return (first_dealer + hand_no) % players


@njit(cache=True, inline="always")
def book_hand(s: Any, r: Any, g: int, points: np.ndarray, n_hands: int, deal_phase: int, done_phase: int) -> bool:
    """Book the scores ``points`` (P,) of the hand game ``g`` just finished.

    The last hand ends the game; otherwise the game waits for the next deal
    with the deal passed clockwise. Returns True if another hand follows.
    """
    P = s.scores.shape[1]
    for p in range(P):
        r.rewards[g, p] += points[p]
        s.scores[g, p] += points[p]
        s.last_scores[g, p] = points[p]
    r.hand_done[g] = True
    if s.hand_no[g] + 1 >= n_hands:
        s.phase[g] = done_phase
        r.game_done[g] = True
        return False
    s.hand_no[g] += 1
    s.dealer[g] = dealer_of(s.first_dealer[g], s.hand_no[g], P)
    s.phase[g] = deal_phase
    r.new_hand[g] = True
    return True


@njit(cache=True)
def _follow_suit_rows(hand: np.ndarray, led_suit: np.ndarray, suit_of: np.ndarray, out: np.ndarray) -> None:
    for g in range(hand.shape[0]):
        follow_suit_row(hand, g, 0, led_suit[g], suit_of, out)


@njit(cache=True)
def _trick_voids_rows(trick: np.ndarray, led: np.ndarray, suit_of: np.ndarray, void: np.ndarray) -> None:
    for g in range(trick.shape[0]):
        mark_trick_voids(trick, g, led[g], suit_of, void)


@njit(cache=True)
def _dealers(first_dealer: np.ndarray, hand_no: np.ndarray, players: int, out: np.ndarray) -> None:
    for g in range(first_dealer.shape[0]):
        out[g] = dealer_of(first_dealer[g], hand_no[g], players)


# --------------------------------------------------------------------------
# Batched wrappers for callers outside the core
def follow_suit_mask(hand: np.ndarray, led_suit: np.ndarray, deck: Deck) -> np.ndarray:
    """Legal cards for the player to act.

    hand: (B, N) bool, the acting player's cards. led_suit: (B,) int, the suit
    led in the current trick, or -1 when the player leads. Returns (B, N) bool:
    the cards of the led suit if the player holds any, else the whole hand.
    """
    hand = np.ascontiguousarray(hand, dtype=bool)
    out = np.empty_like(hand)
    _follow_suit_rows(hand[:, None, :], np.asarray(led_suit, dtype=np.int64).reshape(-1), deck.suit_of, out)
    return out


def trick_voids(trick: np.ndarray, led_suit: np.ndarray, deck: Deck) -> np.ndarray:
    """(B, P, S) bool: the seats that the current tricks show void in the suit led.

    trick: (B, P) card ids by seat (-1 none), absolute or relative seats
    alike; led_suit: (B,) the suit led, -1 before the lead.
    """
    trick = np.ascontiguousarray(trick, dtype=np.int64)
    led = np.ascontiguousarray(np.asarray(led_suit, dtype=np.int64).reshape(-1))
    if trick.ndim != 2 or led.shape[0] != trick.shape[0]:
        raise ValueError(f"trick must be (B, P) with one suit led per row, got {trick.shape} and {led.shape}")
    void = np.zeros((trick.shape[0], trick.shape[1], deck.n_suits), dtype=bool)
    _trick_voids_rows(trick, led, np.ascontiguousarray(deck.suit_of, dtype=np.int64), void)
    return void


def rotate_dealer(first_dealer: np.ndarray, hand_no: np.ndarray, players: int) -> np.ndarray:
    """Dealer of each hand: the deal passes clockwise after each hand."""
    first = np.asarray(first_dealer, dtype=np.int64).reshape(-1)
    out = np.empty(first.shape[0], dtype=np.int8)
    _dealers(first, np.broadcast_to(np.asarray(hand_no, dtype=np.int64), first.shape), players, out)
    return out.reshape(np.shape(first_dealer))


# --------------------------------------------------------------------------
# What both games' states share
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
    # not a field: each game's State class gets its own from arrays_type (arrays() reads it there)
    _get_arrays: ClassVar[Callable[[TrickState], tuple]]

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

    def arrays(self) -> tuple:
        """The state's arrays as a plain tuple in field order: how compiled
        kernels take a state. (numba types a plain tuple of arrays in C, a
        dataclass not at all and a named tuple slowly; a kernel rebuilds the
        game's named tuple, see :func:`arrays_type`, to read fields by name.)"""
        return type(self).__dict__["_get_arrays"](self)


def arrays_type(state_cls: type[TrickState], name: str) -> type:
    """The named-tuple type through which kernels read a game's state arrays.

    Defined at module level by each game (``name`` must be the module
    attribute it is bound to, so that numba's on-disk cache can find it).
    A kernel does ``s = StateArrays(*state_tuple)`` and then ``s.hands[g]``.
    """
    names = [f.name for f in fields(state_cls)]
    state_cls._get_arrays = attrgetter(*names)
    return namedtuple(name, names, module=state_cls.__module__)


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


StepArrays = namedtuple(
    "StepArrays",
    "rewards trick_done trick_cards trick_leader trick_winner hand_done renege new_hand game_done "
    "hand_taken role_holder hand_why",
)

# Why a seat scored what it did in a finished hand (``StepResult.hand_why``): bit flags, any combination.
WHY_MADE = 1  # made a bid (Bob's Hat: at least one of its bids; Oh Hell: took exactly the tricks bid)
WHY_MISSED = 2  # missed a bid (Bob's Hat: at least one of its bids)
WHY_ROLE = 4  # scored the role the game's ROLE_CARDS carry (Bob's Hat: held the hat, its value is in the score)
WHY_NO_BID = 8  # bid nothing (Bob's Hat's no-bid option): the hand scores 0, the hat included
WHY_RENEGE = 16  # reneged (Bob's Hat's renege mode): the renege penalty; the hand is dealt again


@dataclass
class StepResult:
    """What one ``step`` did, per game. Arrays have the batch axis first.

    The closing facts of a hand (``hand_taken``, ``role_holder``,
    ``hand_why``) are set on the rows where a hand ended, scored
    (``hand_done``) or by a renege (``renege``), as the hand stood at its end:
    with ``auto_deal`` the state already holds the next hand, so this is
    where records, statistics and narration read them. On those rows
    ``rewards`` are the hand's scores (a renege: the penalty). On every other
    row they read "nothing": taken 0, holder -1, why 0.
    """

    rewards: np.ndarray  # (B, P) int32: score changes this step (hand scores, renege penalty)
    trick_done: np.ndarray  # (B,) bool: a trick was completed
    trick_cards: np.ndarray  # (B, P) int8: the completed trick's cards by seat (-1 where none)
    trick_leader: np.ndarray  # (B,) int8
    trick_winner: np.ndarray  # (B,) int8: -1 where no trick was completed
    hand_done: np.ndarray  # (B,) bool: a hand was scored
    renege: np.ndarray  # (B,) bool: a renege ended the hand (Bob's Hat renege mode only)
    new_hand: np.ndarray  # (B,) bool: a new hand is due (dealt in the same step with auto_deal)
    game_done: np.ndarray  # (B,) bool: the game ended
    hand_taken: np.ndarray  # (B, P, *T) int8: the ended hand's state.taken (Bob's Hat: cards by suit; Oh Hell: tricks)
    role_holder: np.ndarray  # (B,) int8: seat holding the ROLE_CARDS' role at the hand's end (the hat), -1 none
    hand_why: np.ndarray  # (B, P) int8: why each seat scored what it did, WHY_* bit flags

    @classmethod
    def empty(cls, B: int, P: int, taken: tuple[int, ...] = ()) -> StepResult:
        """A result where nothing happened."""
        res = cls.uninitialized(B, P, taken)
        clear_results(StepArrays(*res.arrays()))
        return res

    @classmethod
    def uninitialized(cls, B: int, P: int, taken: tuple[int, ...] = ()) -> StepResult:
        """Arrays for a step kernel to fill (it clears every row first, see
        :func:`clear_result`). ``taken``: the trailing shape of the game's
        ``state.taken`` beyond (B, P) (Bob's Hat ``(3,)``, Oh Hell ``()``);
        a game's ``new_result`` knows it. Four allocations, not twelve: at
        B = 1 a step is mostly such overhead."""
        flags = np.empty((5, B), dtype=bool)
        seats = np.empty((B, 2 * P + 3), dtype=np.int8)
        return cls(
            rewards=np.empty((B, P), dtype=np.int32),
            trick_done=flags[0],
            trick_cards=seats[:, :P],
            trick_leader=seats[:, P],
            trick_winner=seats[:, P + 1],
            hand_done=flags[1],
            renege=flags[2],
            new_hand=flags[3],
            game_done=flags[4],
            role_holder=seats[:, P + 2],
            hand_why=seats[:, P + 3 :],
            hand_taken=np.empty((B, P, *taken), dtype=np.int8),
        )

    def checked(self, B: int, P: int, taken: tuple[int, ...] = ()) -> StepResult:
        """This result, after checking it fits B games of P seats (the
        kernels write without bounds checks)."""
        if self.rewards.shape != (B, P) or self.trick_cards.shape != (B, P) or self.trick_done.shape != (B,):
            raise ValueError(f"result is for {self.rewards.shape} games x seats, this step has ({B}, {P})")
        if self.hand_taken.shape != (B, P, *taken):
            raise ValueError(f"result holds taken of shape {self.hand_taken.shape}, this game's is {(B, P, *taken)}")
        return self

    def arrays(self) -> tuple:
        """The arrays as a plain tuple, for the compiled step kernels (which
        read them as :data:`StepArrays`)."""
        return _get_step_arrays(self)


_get_step_arrays = attrgetter(*StepArrays._fields)


@njit(cache=True, inline="always")
def clear_result(r: Any, g: int) -> None:
    """Row ``g`` of a step result back to "nothing happened"."""
    for p in range(r.rewards.shape[1]):
        r.rewards[g, p] = 0
        r.trick_cards[g, p] = NO_CARD
        r.hand_why[g, p] = 0
    r.hand_taken[g] = 0
    r.trick_done[g] = r.hand_done[g] = r.renege[g] = r.new_hand[g] = r.game_done[g] = False
    r.trick_leader[g] = r.trick_winner[g] = r.role_holder[g] = -1


@njit(cache=True, inline="always")
def close_hand(s: Any, r: Any, g: int, holder: int) -> None:
    """Write the closing facts of the hand game ``g`` just ended into ``r``:
    the state's ``taken`` and the role's ``holder`` (-1 none). The game's
    scoring writes ``hand_why``. Called before the next hand is dealt."""
    r.hand_taken[g] = s.taken[g]
    r.role_holder[g] = holder


@njit(cache=True)
def clear_results(r: Any) -> None:
    for g in range(r.rewards.shape[0]):
        clear_result(r, g)


class IllegalActionError(ValueError):
    """An action that the rules do not allow in the game's current state."""


def raise_illegal(
    state: TrickState,
    g: int,
    a: int,
    legal: np.ndarray,
    game: ModuleType,
    bid_fault: Callable[[int, int], str | None],
) -> None:
    """Raise :class:`IllegalActionError` for action ``a`` in game ``g``, saying why.

    ``game`` is the game's module (its phase constants, ``PHASE_NAMES``,
    ``action_str`` and ``suit_name``); the reasons both games share (game
    over, not dealt, a card not held or not following suit) are worded here,
    and ``bid_fault(g, a)`` words the game's own bidding faults (None: not a
    bid fault).
    """
    ph, seat = int(state.phase[g]), int(state.cur[g])
    what = game.action_str(a)
    if ph == game.DONE:
        why = "the game is over"
    elif ph == game.DEAL:
        why = "the hand has not been dealt"
    elif ph == game.PLAY and 0 <= a < game.N_CARDS:
        why = (
            f"seat {seat} does not hold {what}"
            if not state.hands[g, seat, a]
            else f"seat {seat} must follow the suit led ({game.suit_name(int(state.led_suit[g]))})"
        )
    else:
        why = (bid_fault(g, a) if ph == game.BID else None) or f"it is the {game.PHASE_NAMES[ph]} phase"
    raise IllegalActionError(
        f"illegal action {a} ({what}) in game {g} for seat {seat}: {why}; "
        f"legal actions: {np.nonzero(legal[g])[0].tolist()}"
    )


_ALL_ACTIVE = np.zeros(0, dtype=bool)  # what the kernels read as "every game is active"


def step_inputs(
    B: int, actions: Any, active: Any, legal: np.ndarray | None, n_actions: int
) -> tuple[np.ndarray, np.ndarray]:
    """Check and convert a step's arguments for the kernels: (B,) int64
    actions and the activity mask (empty = all games active). The kernels do
    no bounds checks, so every shape is checked here, with a message."""
    actions = np.asarray(actions)
    if actions.dtype != np.int64 or actions.shape != (B,):
        if actions.dtype.kind not in "iub":
            raise ValueError(f"actions must be integer action ids, got dtype {actions.dtype}")
        actions = actions.astype(np.int64).reshape(-1)
        if actions.shape[0] != B:
            raise ValueError(f"expected {B} actions, one per game, got {actions.shape[0]}")
    if active is None:
        active = _ALL_ACTIVE
    else:
        active = np.asarray(active, dtype=bool).reshape(-1)
        if active.shape[0] != B:
            raise ValueError(f"active must have one flag per game ({B}), got {active.shape[0]}")
    if legal is not None and (legal.shape != (B, n_actions) or legal.dtype != np.bool_):
        raise ValueError(f"legal must be a ({B}, {n_actions}) bool mask, got {legal.dtype} {legal.shape}")
    return actions, active


# --------------------------------------------------------------------------
# Chance and new hands (NumPy: once per hand, batched over the games dealt)
def random_first_dealer(cfg: Any, keys: np.ndarray) -> np.ndarray:
    """First dealer per game: ``cfg.first_dealer``, or drawn from the key if -1."""
    if cfg.first_dealer >= 0:
        return np.full(keys.shape, cfg.first_dealer, dtype=np.int8)
    return rng.uniform_ints(rng.combine(keys, _CHANCE_DEALER), cfg.players).astype(np.int8)


@batch_kernel
def _deal_shuffled(
    keys: np.ndarray, size: np.ndarray, in_deck: np.ndarray, hands: np.ndarray, next_card: np.ndarray
) -> None:
    players, n = hands.shape[1], hands.shape[2]
    deck = np.flatnonzero(in_deck)  # the deck's card ids, once for the batch
    for g in prange(keys.shape[0]):
        hashes = np.empty(n, dtype=np.uint64)  # scratch per game: games may run on several threads
        pos = np.empty(n, dtype=np.int64)
        rng.shuffle_positions(keys[g], hashes, pos, deck)
        next_card[g] = -1
        for card in range(n):
            seat = pos[card] // size[g]
            for p in range(players):
                hands[g, p, card] = p == seat
            if pos[card] == players * size[g]:
                next_card[g] = card


def deal_shuffled(
    keys: np.ndarray, size: np.ndarray, players: int, n_cards: int, in_deck: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Shuffle a deck of ``n_cards`` per key and deal ``size`` cards to each seat.

    Seat p gets the cards at positions ``p * size .. (p + 1) * size - 1`` of
    the deck shuffled by :func:`rng.shuffle_positions`. Returns hands
    (n, P, N) bool and the next card of the deck (n,), the one at position
    ``P * size`` (Oh Hell turns it for trump), -1 if the deck ran out.
    ``in_deck``: (N,) bool, the cards of a small variant's deck (default all
    ``n_cards``); the others are never dealt nor turned.
    """
    keys = np.ascontiguousarray(keys, dtype=np.uint64).reshape(-1)
    size = np.broadcast_to(np.asarray(size, dtype=np.int64).reshape(-1), keys.shape)
    in_deck = np.ones(n_cards, dtype=bool) if in_deck is None else np.ascontiguousarray(in_deck, dtype=bool)
    if in_deck.shape != (n_cards,):
        raise ValueError(f"in_deck must have shape ({n_cards},), got {in_deck.shape}")
    hands = np.empty((keys.shape[0], players, n_cards), dtype=bool)
    next_card = np.empty(keys.shape[0], dtype=np.int64)
    _deal_shuffled.on(keys.shape[0])(keys, size, in_deck, hands, next_card)
    return hands, next_card


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
