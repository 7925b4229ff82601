"""Batched rules of Where's Bob's Hat? (docs/rules.md).

B games are held in one :class:`State` of arrays with a leading batch
dimension and stepped together: every game has exactly one player to act, and
:func:`step` applies one action per game, whatever phase each game is in.
The rules run as compiled (numba) loops over the games, one scalar step per
game, sharing the trick play of :mod:`tricks` with Oh Hell; chance (the
deals) is batched NumPy, once per hand.

Action space (one flat discrete space, OpenSpiel style):

=========  =======================================================
ids        meaning
=========  =======================================================
0-59       play that card (``cards.bh_card_str`` names it)
60, 61     dealer's hat choice: +10, -10
62-85      bid ``62 + code``; ``code = most_bits + 8 * fewest``:
           ``most_bits`` bit 0 blue, bit 1 red, bit 2 black;
           ``fewest`` 0, 1 or 2 (2 = double fewest). Code 0 = no bid.
=========  =======================================================

Chance (trump and deal) is a pure function of each game's 64-bit key, the
hand number and the attempt number (a renege deals the hand again), see
:mod:`rng`. Deals may instead be given explicitly (``auto_deal=False`` and
:func:`deal`), which replays and tests use.

:func:`step` changes the state in place (cheap, and what the adapters want);
it validates every action first and raises :class:`IllegalActionError`
without touching the state when one is not allowed.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numba import njit, prange

from . import rng
from .cards import (
    BH_IS_HAT_CARD,
    BH_N_CARDS,
    BH_NO_TRUMP,
    BH_TRUMPS,
    BOBS_HAT_DECK,
    bh_card_str,
    bh_hand_size,
    bh_parse_card,
)
from .compiled import batch_kernel
from .config import BH_MAX_HANDS, BobsHatConfig
from .game import GameWrappers
from .observe import (
    BAD_STATE,
    GameObservation,
    KernelInt,
    ObsLayout,
    encode_shared,
    fits,
    game_layout,
    onehot_index,
    rel_seat,
    set_onehot,
    shared_ok,
)
from .resample import seen_from
from .tricks import (
    WHY_MADE,
    WHY_MISSED,
    WHY_NO_BID,
    WHY_RENEGE,
    WHY_ROLE,
    StepArrays,
    TrickState,
    arrays_type,
    book_hand,
    clear_result,
    close_hand,
    deal_shuffled,
    follow_suit_row,
    play_card,
)
from .tricks import IllegalActionError as IllegalActionError  # re-exported: step() raises it

# Action layout
N_CARDS = BH_N_CARDS
HAT_PLUS = 60
HAT_MINUS = 61
BID_BASE = 62
N_BID_CODES = 24
N_ACTIONS = BID_BASE + N_BID_CODES
BID_NAMES = ("most_blue", "most_red", "most_black")

# Phases
HAT, BID, PLAY, DEAL, DONE = 0, 1, 2, 3, 4
PHASE_NAMES = ("hat", "bid", "play", "deal", "done")

RENEGE_PENALTY = -15

_SUIT_OF = BOBS_HAT_DECK.suit_of
_RANK_OF = BOBS_HAT_DECK.rank_of
hand_size_of = njit(cache=True, inline="always")(bh_hand_size)  # the rule, for compiled kernels
_CHANCE_TRUMP, _CHANCE_DEAL = 1, 2


def bid_code(most: tuple[str, ...] | list[str] = (), fewest: int = 0) -> int:
    """Bid code of a set of most bids (names from ``BID_NAMES``) and fewest count."""
    bits = 0
    for name in most:
        bits |= 1 << BID_NAMES.index(name)
    return bits + 8 * fewest


def bid_cards(code: int) -> list[str]:
    """The bid cards of a bid code, as records write them (docs/records.md)."""
    out = [name for i, name in enumerate(BID_NAMES) if code >> i & 1]
    return out + ["fewest"] * (code // 8)


def action_str(action: int) -> str:
    """Human name of an action id: a card, a hat choice or a bid."""
    if 0 <= action < N_CARDS:
        return bh_card_str(action)
    if action == HAT_PLUS:
        return "hat+10"
    if action == HAT_MINUS:
        return "hat-10"
    if BID_BASE <= action < N_ACTIONS:
        return "bid:" + ("+".join(bid_cards(action - BID_BASE)) or "none")
    return f"<unknown action {action}>"


@dataclass
class State(TrickState):
    """B games of Where's Bob's Hat?; every field has a leading batch axis.

    The shared fields are :class:`~bobshat_env.core.tricks.TrickState`'s
    (``hands`` is (B, P, 60), ``bids`` holds bid codes). Suits blue=0, red=1,
    black=2.
    """

    attempt: np.ndarray  # (B,) int16: deals of this hand so far minus one (reneges)
    trump: np.ndarray  # (B,) int8: 0-2 a suit, 3 no trump
    hat_value: np.ndarray  # (B,) int8: +10 / -10 once chosen, 0 before
    hat_holder: np.ndarray  # (B,) int8: seat holding Bob's Hat, -1 in the centre
    no_bid_used: np.ndarray  # (B, P) bool: the seat has scored a no-bid hand
    taken: np.ndarray  # (B, P, 3) int8: cards taken this hand per seat and suit
    hand_size: np.ndarray  # (B,) int64: cards dealt to each player this hand (the pending one while dealing)


StateArrays = arrays_type(State, "StateArrays")


# --------------------------------------------------------------------------
# Chance
@functools.cache
def _trump_choices(trumps: tuple[int, ...]) -> np.ndarray:
    """A config's trump cards (``BobsHatConfig.trumps``) as an array, made once per deck."""
    out = np.asarray(trumps, dtype=np.int8)
    out.flags.writeable = False
    return out


def random_deal(
    cfg: BobsHatConfig, keys: np.ndarray, hand_no: np.ndarray, attempt: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Trump (each of the trump cards equally likely: the four of the full game, or a small variant's
    deck suits and none) and a uniformly random deal of the deck (``cfg.deck_mask``).

    Returns trump (n,) int8 and hands (n, P, 60) bool with
    ``cfg.hand_sizes[hand_no]`` cards per player. A pure function of (key, hand_no, attempt);
    no ``attempt`` is the hand's first deal (0).
    """
    base = rng.combine(keys, hand_no, 0 if attempt is None else attempt)
    trumps = _trump_choices(cfg.trumps)
    trump = trumps[rng.uniform_ints(rng.combine(base, _CHANCE_TRUMP), trumps.size)]
    size = bh_hand_size(np.asarray(hand_no, dtype=np.int64), cfg.hand_size_base)
    hands, _ = deal_shuffled(rng.combine(base, _CHANCE_DEAL), size, cfg.players, N_CARDS, cfg.deck_mask)
    return trump, hands


# --------------------------------------------------------------------------
# Construction
def _trump_fault(cfg: BobsHatConfig, games: np.ndarray, trump: np.ndarray, hands: np.ndarray) -> str | None:
    """What is wrong with a given deal's trump (``deal``): 0-2 (blue, red, black) or 3 (none), one of
    ``cfg.trumps``; None when nothing is."""
    if np.any((trump < 0) | (trump > BH_NO_TRUMP)):
        return "trump must be 0-2 (blue, red, black) or 3 (none)"
    if not np.isin(trump, cfg.trumps).all():
        bad = int(trump[~np.isin(trump, cfg.trumps)][0])
        return f"trump {BH_TRUMPS[bad]} is not in this deck of {cfg.suits} suit(s)"
    return None


def _own_fields(cfg: BobsHatConfig, B: int) -> dict:
    """Bob's Hat's own :class:`State` fields of B new games."""
    return dict(
        attempt=np.zeros(B, dtype=np.int16),
        trump=np.zeros(B, dtype=np.int8),
        hat_value=np.zeros(B, dtype=np.int8),
        hat_holder=np.full(B, -1, dtype=np.int8),
        no_bid_used=np.zeros((B, cfg.players), dtype=bool),
        taken=np.zeros((B, cfg.players, 3), dtype=np.int8),
        hand_size=np.full(B, cfg.hand_sizes[0], dtype=np.int64),
    )


def _first_to_act(cfg: BobsHatConfig, dealer: np.ndarray) -> np.ndarray:
    """The dealer chooses the hat first, bids first and leads the first trick."""
    return dealer


def _hand_sizes_of(cfg: BobsHatConfig, hand_no: np.ndarray) -> np.ndarray:
    return bh_hand_size(hand_no.astype(np.int64), cfg.hand_size_base)


def _reset_hand(state: State, idx: np.ndarray) -> None:
    """A new hand's hat: no value chosen yet, in the centre."""
    state.hat_value[idx] = 0
    state.hat_holder[idx] = -1


# --------------------------------------------------------------------------
# Legal actions
@batch_kernel
def _mask_kernel(
    phase: np.ndarray, cur: np.ndarray, hands: np.ndarray, led_suit: np.ndarray,
    no_bid_used: np.ndarray, no_bid: bool, double_fewest: bool, most_suits: int, mask: np.ndarray,
) -> None:  # fmt: skip
    for g in prange(phase.shape[0]):
        ph = phase[g]
        if ph == PLAY:
            follow_suit_row(hands, g, cur[g], led_suit[g], _SUIT_OF, mask)
            for a in range(N_CARDS, N_ACTIONS):
                mask[g, a] = False
            continue
        for a in range(N_ACTIONS):
            mask[g, a] = False
        if ph == HAT:
            mask[g, HAT_PLUS] = mask[g, HAT_MINUS] = True
        elif ph == BID:
            for code in range(1, N_BID_CODES):  # most bids only of suits in the deck (bits below most_suits)
                mask[g, BID_BASE + code] = (double_fewest or code // 8 < 2) and (code & 7) >> most_suits == 0
            mask[g, BID_BASE] = no_bid and not no_bid_used[g, cur[g]]  # code 0: the no-bid


def _mask_call(cfg: BobsHatConfig, s: State, kernel: Callable[..., None], out: np.ndarray) -> None:
    """Run the mask kernel (the version for the batch) with Bob's Hat's arguments. A small variant with fewer
    suits offers no most bid of a suit outside its deck (its bid card is not on the table, as its trump card
    is not)."""
    kernel(s.phase, s.cur, s.hands, s.led_suit, s.no_bid_used, cfg.no_bid, cfg.double_fewest, cfg.suits, out)


def _bid_fault(cfg: BobsHatConfig, state: State, g: int, a: int) -> str | None:
    """Why bid action ``a`` is illegal in game ``g`` (None: ``a`` is no bid)."""
    if not BID_BASE <= a < N_ACTIONS:
        return None
    if a == BID_BASE:
        return "the no-bid option is off or already used by this seat"
    if (a - BID_BASE) % 8 >> cfg.suits:
        return f"this deck has {cfg.suits} suit(s): no most bid of {', '.join(BID_NAMES[cfg.suits :])}"
    return "double fewest needs the double_fewest option"


def suit_name(s: int) -> str:
    """A suit's name (blue, red, black), "none" for anything else."""
    return cfg_suit(s)


def cfg_suit(s: int) -> str:
    return ("blue", "red", "black")[s] if 0 <= s < 3 else "none"


# --------------------------------------------------------------------------
# Scoring
@njit(cache=True, inline="always")
def _score_one(
    bids: np.ndarray, taken: np.ndarray, g: int, hat_value: int, hat_holder: int, size: int, negative: bool,
    out: np.ndarray, why: np.ndarray,
) -> None:  # fmt: skip
    """Game ``g``'s hand scores into ``out`` (P,) and why each seat scored them into ``why`` (P,)
    (``WHY_*`` flags); see :func:`score_hand`."""
    P = bids.shape[1]
    out[:] = 0
    why[:] = 0
    for suit in range(3):
        total = 0
        for p in range(P):
            total += taken[g, p, suit]
        for p in range(P):
            if not (bids[g, p] >> suit) & 1:
                continue
            best_other = -1
            for q in range(P):
                if q != p and taken[g, q, suit] > best_other:
                    best_other = taken[g, q, suit]
            if taken[g, p, suit] > best_other or total == 0:  # strictly most, or the suit was never dealt
                out[p] += 5 + taken[g, p, suit]
                why[p] |= WHY_MADE
            else:
                out[p] += -5 - (taken[g, p, suit] if negative else 0)
                why[p] |= WHY_MISSED
    for p in range(P):
        fewest = bids[g, p] // 8
        if fewest == 0:
            continue
        mine = taken[g, p, 0] + taken[g, p, 1] + taken[g, p, 2]
        made = True
        for q in range(P):
            if q != p and taken[g, q, 0] + taken[g, q, 1] + taken[g, q, 2] <= mine:
                made = False
        out[p] += fewest * (size if made else -size)
        why[p] |= WHY_MADE if made else WHY_MISSED
    if hat_holder >= 0:
        out[hat_holder] += hat_value
        why[hat_holder] |= WHY_ROLE
    for p in range(P):
        if bids[g, p] == 0:  # a no-bid hand scores 0, hat included
            out[p] = 0
            why[p] = WHY_NO_BID


@njit(cache=True)
def _score_hands(
    bids: np.ndarray, taken: np.ndarray, hat_value: np.ndarray, hat_holder: np.ndarray, hand_size: np.ndarray,
    negative: bool, out: np.ndarray,
) -> None:  # fmt: skip
    points = np.empty(bids.shape[1], dtype=np.int64)
    why = np.empty(bids.shape[1], dtype=np.int64)
    for g in range(bids.shape[0]):
        _score_one(bids, taken, g, hat_value[g], hat_holder[g], hand_size[g], negative, points, why)
        out[g] = points


def score_hand(
    cfg: BobsHatConfig,
    bids: np.ndarray,
    taken: np.ndarray,
    hat_value: np.ndarray,
    hat_holder: np.ndarray,
    hand_size: np.ndarray,
) -> np.ndarray:
    """Hand scores (n, P) from bids (n, P) codes, taken (n, P, 3) cards by suit,
    the hat's value and holder (-1 = centre) and the hand size (n,).

    Most of a suit: made if strictly more than every other seat (or if no card
    of the suit was dealt): ``+5 + count``; missed ``-5`` (``-5 - count`` with
    negative scoring). Fewest: strictly fewer cards than every other seat:
    ``±hand_size``, doubled for double fewest. The hat holder scores the hat.
    A no-bid hand scores 0, hat included.
    """
    bids = np.ascontiguousarray(bids, dtype=np.int64)
    taken = np.ascontiguousarray(taken, dtype=np.int64)
    n = bids.shape[0]
    flat = lambda x: np.broadcast_to(np.asarray(x, dtype=np.int64).reshape(-1), (n,))  # noqa: E731
    out = np.zeros(bids.shape, dtype=np.int64)
    _score_hands(bids, taken, flat(hat_value), flat(hat_holder), flat(hand_size), cfg.negative_scoring, out)
    return out


# --------------------------------------------------------------------------
# Transition
@njit(cache=True)
def _check(
    state: tuple[np.ndarray, ...], result: tuple[np.ndarray, ...], actions: np.ndarray, active: np.ndarray,
    legal: np.ndarray, renege_mode: bool,
) -> int:  # fmt: skip
    """Clear the result rows and check every active action: the first game
    with an illegal one, or -1. Flags reneges in the result."""
    s, r = StateArrays(*state), StepArrays(*result)
    for g in range(actions.shape[0]):
        clear_result(r, g)
    for g in range(actions.shape[0]):
        if active.size and not active[g]:
            continue
        a = actions[g]
        if 0 <= a < N_ACTIONS and legal[g, a]:
            continue
        if renege_mode and 0 <= a < N_CARDS and s.phase[g] == PLAY and s.hands[g, s.cur[g], a]:
            r.renege[g] = True  # a held card that breaks follow suit: the renege rule applies
            continue
        return g
    return -1


@njit(cache=True)
def _apply(
    state: tuple[np.ndarray, ...], result: tuple[np.ndarray, ...], actions: np.ndarray, active: np.ndarray,
    lo: int, hi: int, P: int, n_hands: int, negative: bool, size_base: int,
) -> int:  # fmt: skip
    """Apply the (checked) actions of games ``lo..hi-1``; return how many of
    them need a new deal (after a scored hand or a renege)."""
    s, r = StateArrays(*state), StepArrays(*result)
    new_hands = 0
    for g in range(lo, hi):
        if active.size and not active[g]:
            continue
        a = actions[g]
        ph = s.phase[g]
        if ph == HAT:  # the dealer chooses the hat's value; bidding starts with the dealer
            s.hat_value[g] = 10 if a == HAT_PLUS else -10
            s.phase[g] = BID
            s.cur[g] = s.dealer[g]
        elif ph == BID:  # clockwise from the dealer; play then starts with the dealer's lead
            s.bids[g, s.cur[g]] = a - BID_BASE
            s.n_bids[g] += 1
            s.cur[g] = (s.cur[g] + 1) % P
            if s.n_bids[g] == P:
                s.phase[g] = PLAY
                s.cur[g] = s.leader[g] = s.dealer[g]
        elif r.renege[g]:  # -15 to the offender, the same hand dealt again
            seat = s.cur[g]
            r.rewards[g, seat] += RENEGE_PENALTY
            s.scores[g, seat] += RENEGE_PENALTY
            for p in range(P):
                s.last_scores[g, p] = RENEGE_PENALTY if p == seat else 0
            close_hand(s, r, g, s.hat_holder[g])
            r.hand_why[g, seat] = WHY_RENEGE
            s.attempt[g] += 1
            s.phase[g] = DEAL
            r.new_hand[g] = True
            new_hands += 1
        else:
            winner = play_card(s, r, g, a, s.trump[g], _SUIT_OF, _RANK_OF)
            if winner < 0:
                continue
            for p in range(P):
                card = r.trick_cards[g, p]
                s.taken[g, winner, _SUIT_OF[card]] += 1
                if BH_IS_HAT_CARD[card]:  # a 14 or 15 in the trick: its taker takes the hat
                    s.hat_holder[g] = winner
            size = s.hand_size[g]
            if s.tricks_done[g] < size:
                continue
            points = np.empty(P, dtype=np.int64)
            why = np.empty(P, dtype=np.int64)
            _score_one(s.bids, s.taken, g, s.hat_value[g], s.hat_holder[g], size, negative, points, why)
            close_hand(s, r, g, s.hat_holder[g])
            for p in range(P):
                r.hand_why[g, p] = why[p]
                if s.bids[g, p] == 0:
                    s.no_bid_used[g, p] = True
            if book_hand(s, r, g, points, n_hands, DEAL, DONE):
                s.attempt[g] = 0
                s.hand_size[g] = hand_size_of(s.hand_no[g], size_base)  # the next hand's, while it is dealt
                new_hands += 1
    return new_hands


@batch_kernel
def _step_kernel(
    state: tuple[np.ndarray, ...], result: tuple[np.ndarray, ...], actions: np.ndarray, active: np.ndarray,
    legal: np.ndarray, chunks: int, P: int, n_hands: int, negative: bool, renege_mode: bool, size_base: int,
) -> int:  # fmt: skip
    """Check every active action, then apply them all, in ``chunks`` ranges of
    games (split over threads in the parallel build).

    Returns ``-1 - g`` if game ``g`` (the first such) has an illegal action,
    with nothing changed; else how many games need a new deal (after a
    scored hand or a renege).
    """
    bad = _check(state, result, actions, active, legal, renege_mode)
    if bad >= 0:
        return -1 - bad
    B, new_hands = actions.shape[0], 0
    for c in prange(chunks):
        lo, hi = c * B // chunks, (c + 1) * B // chunks
        new_hands += _apply(state, result, actions, active, lo, hi, P, n_hands, negative, size_base)
    return new_hands


_TAKEN = (3,)  # the trailing shape of state.taken (and of a result's hand_taken): cards by suit


def _step_args(cfg: BobsHatConfig) -> tuple:
    return cfg.players, cfg.hands, cfg.negative_scoring, cfg.renege_mode, cfg.hand_size_base


# --------------------------------------------------------------------------
# The game's answers to the rest of the package, under the names every core
# game module defines (the contract: core/contract.py's GameRules);
# bobshat_env.games.Game, the suit symmetry, the search and the trick features
# ask them instead of branching on the game's name.
NAME = "bobs_hat"
DECK = BOBS_HAT_DECK
card_str = bh_card_str  # card id -> notation ("blue14")
parse_card = bh_parse_card  # notation -> card id; ValueError otherwise
ROLE_CARDS = BH_IS_HAT_CARD  # (60,) bool: cards with a trick role of their own (they carry Bob's Hat)
TRUMP_TURNED = False  # the trump is one of the four trump cards, drawn on its own before the deal
N_TRUMPS = 4  # blue, red, black, none: deal() takes the index


def score_bounds(cfg: BobsHatConfig, hand_size: int) -> tuple[int, int]:
    """(low, high) bounds on one seat's score in a hand of ``hand_size`` cards (OpenSpiel's utility range).

    A seat takes at most every card dealt: three most bids made score at most
    ``15 + cards``, fewest ``hand_size`` (double: twice), the hat 10; the low end
    misses all of them (negative scoring also takes away the cards counted).
    """
    cards = cfg.players * hand_size
    fewest = (2 if cfg.double_fewest else 1) * hand_size
    return -15 - (cards if cfg.negative_scoring else 0) - fewest - 10, 15 + cards + fewest + 10


def deal_attempt(state: State) -> np.ndarray:
    """(B,) the deal of its hand each game is on: a renege (renege mode) deals the hand again."""
    return state.attempt


def role_holder(state: State) -> np.ndarray:
    """(B,) the seat holding Bob's Hat now, -1 while it is in the centre."""
    return state.hat_holder


# --------------------------------------------------------------------------
# What a seat sees (the observation: layout, encoder, decoder) and what a search rebuilds from it
# (the public state). The shared, game-neutral parts are core/observe.py's and core/resample.py's.
_HIDDEN_BID = N_BID_CODES  # stands for a bid made in secret, not yet revealed


def _bid_feature_table() -> np.ndarray:
    """Row ``code + 1`` is the 6 bid features of bid ``code`` (-1 = no bid yet)."""
    table = np.zeros((N_BID_CODES + 2, 6), dtype=np.float32)
    for code in range(N_BID_CODES):
        table[code + 1, :3] = [(code >> i) & 1 for i in range(3)]
        table[code + 1, 3:5] = [code // 8 >= 1, code // 8 >= 2]
        table[code + 1, 5] = 1
    table[_HIDDEN_BID + 1, 5] = 1  # has bid, content hidden
    return table


_BID_FEATURES = _bid_feature_table()
_OBS_MAX_HANDS = BH_MAX_HANDS
_SCORE_SCALE = 100.0
_U = np.uint64  # unsigned column indices: see core/observe.py's note on the kernels
_TAKEN_SCALE = 20.0


class ObsOffsets(NamedTuple):
    """What the Bob's Hat encoder needs to know of a config and view: every slice's offset by name
    (:meth:`ObsLayout.offsets`), sizes, the view's flags (0/1) and the game's constants."""

    players: int
    n_cards: int
    n_hand_number: int
    hand: int
    played: int
    bids: int
    no_bid_left: int
    taken: int
    scores: int
    hat_value: int
    phase: int  # the first one-hot slice: the one-hot block runs from here to the end of ``trick``
    trump: int
    hand_number: int
    dealer: int
    hat_holder: int
    leader: int
    trick: int
    all_hands: int  # -1 unless the full view
    own_hand: int  # the observer's hand is shown (not the public view)
    full: int
    secret: int  # secret bidding
    no_bid: int  # the no-bid option
    bid_phase: int
    n_codes: int  # bid codes
    hidden_code: int  # stands for a secret bid not yet revealed
    size_base: int  # hand k deals size_base + k cards (the config's hand_size_base)


@functools.lru_cache(maxsize=64)
def layout(cfg: BobsHatConfig, view: str = "private") -> ObsLayout:
    """Observation layout for a Bob's Hat configuration and view."""
    P = cfg.players
    return game_layout(
        view, BH_N_CARDS, P,
        # dense slices, written whole every step (after hand and played)
        ("bids", (P, 6)),  # most blue, red, black, fewest, double fewest, has bid
        ("no_bid_left", (P,)),  # the seat may still use its no-bid (option)
        ("taken", (P, 3)),  # cards taken per seat and suit, / 20
        ("scores", (P,)),  # game totals, / 100
        ("hat_value", (2,)),  # +10, -10 once the dealer chose
        # one-hot slices, zeroed then set
        ("phase", (3,)),  # hat choice, bidding, play
        ("trump", (4,)),  # blue, red, black, none
        ("hand_number", (_OBS_MAX_HANDS,)),  # hand k at index k - 1
        ("dealer", (P,)),  # relative seat
        ("hat_holder", (P + 1,)),  # centre, then relative seats
        ("leader", (P,)),  # leader of the current trick
        ("trick", (P, BH_N_CARDS)),  # card each relative seat put in the current trick
    )  # fmt: skip


def _obs_values(cfg: BobsHatConfig) -> dict[str, int]:
    """The :class:`ObsOffsets` fields of a config that are not slice offsets: its flags and the game's constants."""
    return {"secret": cfg.secret_bidding, "no_bid": cfg.no_bid, "bid_phase": BID, "n_codes": N_BID_CODES,
            "hidden_code": _HIDDEN_BID, "size_base": cfg.hand_size_base}  # fmt: skip


_OBS = GameObservation(
    layout, ObsOffsets, BOBS_HAT_DECK, _obs_values, _TAKEN_SCALE, _SCORE_SCALE,
    facts=("hand", "phase", "trump", "hand_number", "dealer", "hat", "hat_holder", "bids", "no_bid_left", "leader",
           "trick", "played", "taken", "scores"),
)  # fmt: skip


obs_offsets = _OBS.offsets  # (cfg, view="private"): the :class:`ObsOffsets` as the plain tuple kernels take


@batch_kernel
def _obs_kernel(
    out: np.ndarray, seat: np.ndarray, each: bool, hands: np.ndarray, played: np.ndarray, taken: np.ndarray,
    scores: np.ndarray, hand_no: np.ndarray, dealer: np.ndarray, leader: np.ndarray, trick: np.ndarray,
    bids: np.ndarray, n_bids: np.ndarray, phase: np.ndarray, no_bid_used: np.ndarray, hat_value: np.ndarray,
    trump: np.ndarray, hat_holder: np.ndarray, bid_features: np.ndarray, offsets: tuple[int, ...],
    taken_mul: float, score_mul: float,
) -> int:  # fmt: skip
    """Fill ``out`` (B, D) with Bob's Hat observations, one row per game, every cell written.

    ``offsets`` is a :class:`ObsOffsets` as a plain tuple. Returns -1, or a
    failure code for :func:`check_result`.
    """
    o = ObsOffsets(*offsets)
    P, n_cards, n_hand_number, n_codes = o.players, o.n_cards, o.n_hand_number, o.n_codes
    B = out.shape[0]
    per_game = (hand_no.shape[0], dealer.shape[0], leader.shape[0], n_bids.shape[0], phase.shape[0],
                hat_value.shape[0], trump.shape[0], hat_holder.shape[0], seat.shape[0] if each else B)  # fmt: skip
    if not (
        fits(B, P, n_cards, hands, played, taken, scores, trick, bids, per_game)
        and taken.shape[2] == 3
        and no_bid_used.shape[0] == B
        and no_bid_used.shape[1] == P
    ):
        return BAD_STATE
    g: KernelInt  # Python ints in the checking loop, np.int64 in the parallel one
    s: KernelInt
    code: KernelInt  # np.int64, or the int o.hidden_code
    for g in range(B):  # check first, so that the encoding loop has no early exit
        me = np.int64(seat[g if each else 0])
        if me < 0 or me >= P:
            return B + g
        ok = shared_ok(g, P, n_cards, n_hand_number, hand_no, dealer, leader, trick)
        ok &= (0 <= trump[g]) & (trump[g] < 4) & (hat_holder[g] < P)
        for s in range(P):
            ok &= (-1 <= bids[g, s]) & (bids[g, s] < n_codes)
        if not ok:
            return g
    for row in prange(B):  # rows are independent: split over threads for large batches
        g = np.int64(row)  # a parallel loop counts in unsigned ints; int64 keeps index arithmetic signed
        me = np.int64(seat[g if each else 0])
        encode_shared(out, g, me, o, hands, played, taken, taken_mul, scores, score_mul, hand_no, dealer, leader, trick)
        ph, holder = np.int64(phase[g]), np.int64(hat_holder[g])
        # Secret bids stay hidden until everybody has bid; the observer sees its own.
        hide = o.secret and ph == o.bid_phase and n_bids[g] < P
        s = me
        for r in range(P):
            code = np.int64(bids[g, s])  # -1: no bid yet
            if hide and r != 0 and code >= 0:
                code = o.hidden_code
            for k in range(6):
                out[g, _U(o.bids + 6 * r + k)] = bid_features[code + 1, k]
            out[g, _U(o.no_bid_left + r)] = 1.0 if o.no_bid and not no_bid_used[g, s] else 0.0
            s = s + 1 if s + 1 < P else 0
        out[g, _U(o.hat_value)] = 1.0 if hat_value[g] == 10 else 0.0
        out[g, _U(o.hat_value + 1)] = 1.0 if hat_value[g] == -10 else 0.0
        set_onehot(out, g, o.phase, 3, ph)  # hat, bid, play; all zero waiting for a deal or done
        set_onehot(out, g, o.trump, 4, np.int64(trump[g]))
        set_onehot(out, g, o.hat_holder, P + 1, 0 if holder < 0 else rel_seat(holder, me, P) + 1)  # 0: the centre
    return -1


def _obs_args(s: State) -> tuple:
    """The observation kernel's Bob's Hat arrays. Secret bidding hides the other seats' bids until everybody
    has bid (the kernel's ``hide``)."""
    return s.bids, s.n_bids, s.phase, s.no_bid_used, s.hat_value, s.trump, s.hat_holder, _BID_FEATURES


def _own_facts(cfg: BobsHatConfig, d: dict[str, np.ndarray]) -> dict:
    """The facts of a decoded vector (its slices ``d``) only Bob's Hat has: phase, trump, hat, bids.

    A bid is a list of bid-card names (docs/records.md), ``None`` before the
    seat has bid, ``"hidden"`` when secret.
    """
    bids: list = []
    for r in range(cfg.players):
        row = d["bids"][r]
        if not row[5]:
            bids.append(None)
        elif not row[:5].any() and r != 0 and cfg.secret_bidding:
            bids.append("hidden")
        else:
            code = int(row[0]) + 2 * int(row[1]) + 4 * int(row[2]) + 8 * (int(row[3]) + int(row[4]))
            bids.append(bid_cards(code))
    holder = onehot_index(d["hat_holder"])
    phase = onehot_index(d["phase"])
    trump = onehot_index(d["trump"])  # None: an all-zero slice, which no observation of a state has
    return {
        "phase": PHASE_NAMES[phase] if phase is not None else "other",
        "trump": BH_TRUMPS[trump] if trump is not None else None,
        "hat": 10 if d["hat_value"][0] else (-10 if d["hat_value"][1] else None),
        "hat_holder": None if holder in (None, 0) else holder - 1,
        "bids": bids,
        "no_bid_left": d["no_bid_left"].astype(bool).tolist(),
    }


def public_state(cfg: BobsHatConfig, obs: np.ndarray, seat: np.ndarray) -> tuple[State, np.ndarray, np.ndarray]:
    """Rebuild what seat ``seat`` knows from its private observations.

    Returns ``(state, counts, unseen)``: a :class:`State` whose
    ``hands`` hold only the observer's cards (every other hand is empty:
    hidden), ``counts`` (B, P) the number of cards each absolute seat holds,
    and ``unseen`` (B, 60) the cards of the deck (``cfg.deck_mask``) the observer has not seen. The state's
    ``key`` is zero: the real key would reveal the deal, and a search only
    plays to the end of the hand.
    """
    P = cfg.players
    f = _OBS.seen_frame(cfg, obs, seat, first_phase=HAT, done=DONE)
    o, me, B = f.o, f.me, f.me.shape[0]
    rb = o["bids"]  # (B, P, 6) relative
    code = rb[..., 0] + 2 * rb[..., 1] + 4 * rb[..., 2] + 8 * (rb[..., 3] + rb[..., 4])
    bids = f.to_absolute(np.where(rb[..., 5] > 0.5, np.rint(code), -1).astype(np.int8), -1, np.int8)
    holder_rel = np.argmax(o["hat_holder"], axis=1)
    hat_holder = np.where(holder_rel == 0, -1, (holder_rel - 1 + me) % P).astype(np.int8)
    hat_value = np.where(o["hat_value"][:, 0] > 0.5, 10, np.where(o["hat_value"][:, 1] > 0.5, -10, 0)).astype(np.int8)
    no_bid_used = f.to_absolute(o["no_bid_left"] < 0.5, False, bool) if cfg.no_bid else np.zeros((B, P), dtype=bool)
    size = bh_hand_size(f.hand_no.astype(np.int64), cfg.hand_size_base)
    hands, counts, unseen = seen_from(f.hand, f.played, f.trick, size, f.tricks_done, me, P)
    unseen &= cfg.deck_mask
    state = State(
        **f.fields,
        attempt=np.zeros(B, dtype=np.int16),
        trump=np.argmax(o["trump"], axis=1).astype(np.int8),
        hands=hands,
        hat_value=hat_value,
        hat_holder=hat_holder,
        bids=bids,
        n_bids=(bids >= 0).sum(axis=1).astype(np.int8),
        no_bid_used=no_bid_used,
        taken=_OBS.taken(f),
        hand_size=size,
    )
    return state, counts.astype(np.int64), unseen


# Suit symmetry (core/symmetry.py): the observation slices indexed by card and
# by suit, and the trump one-hot whose value picks the relabelling.
SYMMETRY_CARD_SLICES = ("hand", "played", "trick", "all_hands")
SYMMETRY_SUIT_SLICES = ("bids", "taken", "trump")
TRUMP_SLICE = "trump"


def relabel_actions(cards: np.ndarray, suits: np.ndarray) -> np.ndarray:
    """(N_ACTIONS,) action ids under a suit relabelling: cards by ``cards``, hat choices unchanged,
    bids with their "most" suits relabelled by ``suits`` (fewest unchanged)."""
    bids = np.arange(N_BID_CODES)
    for code in range(N_BID_CODES):
        most, fewest = code % 8, code // 8
        bids[code] = sum(1 << int(suits[s]) for s in range(3) if most >> s & 1) + 8 * fewest
    return np.concatenate([cards, [HAT_PLUS, HAT_MINUS], BID_BASE + bids])


# --------------------------------------------------------------------------
# The wrappers every game shares (core/game.py), bound to Bob's Hat's kernels and hooks.
_GAME = GameWrappers(
    module=__name__, State=State, n_cards=N_CARDS, n_actions=N_ACTIONS, first_phase=HAT, deal_phase=DEAL,
    step_kernel=_step_kernel, step_args=_step_args, mask_kernel=_mask_kernel, mask_call=_mask_call,
    own_fields=_own_fields, first_to_act=_first_to_act, hand_sizes=_hand_sizes_of, trump_field="trump",
    reset_hand=_reset_hand, random_deal=random_deal, deal_attempt=deal_attempt,
    bid_fault=_bid_fault, trump_fault=_trump_fault, observation=_OBS, obs_kernel=_obs_kernel, obs_args=_obs_args,
    own_facts=_own_facts, taken_shape=_TAKEN,
)  # fmt: skip
init = _GAME.init
deal = _GAME.deal
observe = _GAME.observe
decode = _GAME.decode
legal_action_mask = _GAME.legal_action_mask
new_result = _GAME.new_result
step = _GAME.step
restart_hand = _GAME.restart_hand
