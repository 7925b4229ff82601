"""Batched rules of Oh Hell (docs/rules.md).

B games are held in one :class:`State` of arrays with a leading batch
dimension and stepped together: every running game has exactly one player to
act, and :func:`step` applies one action per game, whatever phase each game is
in. The rules run as compiled (numba) loops over the games; the trick
mechanics (follow suit, trick winner, card play, booking a hand) are the
shared ones of :mod:`tricks`, and chance (the deals) is batched NumPy.

Action space (one flat discrete space, OpenSpiel's ``oh_hell`` layout):

=========  =======================================================
ids        meaning
=========  =======================================================
0-51       play that card, id ``rank * 4 + suit`` (``cards.oh_card_str``)
52-62      bid ``action - 52`` tricks (0 to 10; at most the hand size)
=========  =======================================================

A hand: the dealer deals ``hand_size`` cards to each seat and turns the next
card of the deck, whose suit is trump (there is always a trump). Bidding runs
clockwise from the dealer's left and ends with the dealer, who may not bid
the number that makes the bids add up to the hand size (hook rule: the mask
removes it). The dealer's left leads the first trick; the winner of each
trick leads the next. Hand sizes follow ``cfg.hand_sizes`` (the deal style)
and the deal passes clockwise after each hand.

Chance (first dealer, deal and trump card) is a pure function of each game's
64-bit key and the hand number, see :mod:`rng`. Deals may instead be given
explicitly (``auto_deal=False`` and :func:`deal`), which replays, duplicate
play and tests use.

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
from .cards import OH_HELL_DECK, OH_N_CARDS, OH_SUIT_CHARS, oh_card_str, oh_parse_card
from .compiled import batch_kernel
from .config import OH_SCORINGS, OhHellConfig
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
    set_onehot,
    shared_ok,
)
from .resample import seen_from
from .tricks import (
    WHY_MADE,
    WHY_MISSED,
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
N_CARDS = OH_N_CARDS
BID_BASE = 52
MAX_BID = 10  # the largest hand is 10 cards (3 to 5 players)
N_ACTIONS = BID_BASE + MAX_BID + 1

# Phases (numbered like bobs_hat's, without its hat phase)
BID, PLAY, DEAL, DONE = 1, 2, 3, 4
PHASE_NAMES = {BID: "bid", PLAY: "play", DEAL: "deal", DONE: "done"}

MADE_BONUS = 10  # points for taking exactly the tricks bid

_SUIT_OF = OH_HELL_DECK.suit_of
_RANK_OF = OH_HELL_DECK.rank_of
_CHANCE_DEAL = 2


def action_str(action: int) -> str:
    """Human name of an action id: a card (``AS``) or a bid (``bid:3``)."""
    if 0 <= action < N_CARDS:
        return oh_card_str(action)
    if BID_BASE <= action < N_ACTIONS:
        return f"bid:{action - BID_BASE}"
    return f"<unknown action {action}>"


@dataclass
class State(TrickState):
    """B games of Oh Hell; every field has a leading batch axis.

    The shared fields are :class:`~bobshat_env.core.tricks.TrickState`'s
    (``hands`` is (B, P, 52), ``bids`` holds tricks bid). Suits C=0, D=1,
    S=2, H=3 (OpenSpiel's order, :mod:`cards`).
    """

    hand_size: np.ndarray  # (B,) int8: cards dealt to each seat this hand (= tricks in the hand)
    trump_card: np.ndarray  # (B,) int8: the card turned after the deal, -1 before the deal
    taken: np.ndarray  # (B, P) int8: tricks taken this hand per seat

    @property
    def trump(self) -> np.ndarray:
        """(B,) int64 trump suit (0-3), the suit of the trump card; -1 before the deal."""
        t = self.trump_card.astype(np.int64)
        return np.where(t >= 0, _SUIT_OF[np.maximum(t, 0)], -1)


StateArrays = arrays_type(State, "StateArrays")


# --------------------------------------------------------------------------
# Chance
def hand_size_for(cfg: OhHellConfig, hand_no: np.ndarray) -> np.ndarray:
    """Cards per seat of each hand number (0-based), from the deal style."""
    return np.asarray(cfg.hand_sizes, dtype=np.int8)[np.asarray(hand_no, dtype=np.int64)]


@functools.lru_cache(maxsize=64)
def _hand_sizes(cfg: OhHellConfig) -> np.ndarray:
    """The deal style's hand sizes as an array (one per hand of the game)."""
    return np.asarray(cfg.hand_sizes, dtype=np.int64)


def random_deal(
    cfg: OhHellConfig, keys: np.ndarray, hand_no: np.ndarray, attempt: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """A uniformly random deal and the trump card turned after it.

    The deck (``cfg.deck_mask``: a small variant deals from a subset) is
    shuffled; seat p gets the cards at positions
    ``p * size .. (p + 1) * size - 1`` and the card at position ``P * size``
    is the trump card. Returns trump_card (n,) int8 and hands (n, P, 52) bool.
    A pure function of (key, hand_no); ``attempt`` (the contract's common
    signature, :func:`deal_attempt`) is always 0 here and not read.
    """
    keys = np.asarray(keys, dtype=np.uint64).reshape(-1)
    hand_no = np.asarray(hand_no).reshape(-1)
    size = hand_size_for(cfg, hand_no)
    keys = rng.combine(keys, hand_no, _CHANCE_DEAL)
    hands, trump_card = deal_shuffled(keys, size, cfg.players, N_CARDS, cfg.deck_mask)
    return trump_card.astype(np.int8), hands


# --------------------------------------------------------------------------
# Construction
def _trump_fault(cfg: OhHellConfig, games: np.ndarray, trump_card: np.ndarray, hands: np.ndarray) -> str | None:
    """What is wrong with a given deal's trump card (``deal``): a card of the deck that no seat was dealt;
    None when nothing is."""
    if np.any((trump_card < 0) | (trump_card >= N_CARDS)):
        return f"trump_card must be a card id 0-{N_CARDS - 1}, got {trump_card.tolist()}"
    outside = ~cfg.deck_mask[trump_card]
    if outside.any():
        g = int(np.nonzero(outside)[0][0])
        return f"game {games[g]}: card {oh_card_str(int(trump_card[g]))} is not in this variant's deck"
    in_hand = hands.any(axis=1)[np.arange(games.shape[0]), trump_card]  # type: ignore[index, unused-ignore]  # NumPy stubs: maybe a scalar
    if in_hand.any():
        g = int(np.nonzero(in_hand)[0][0])
        return f"game {games[g]}: the trump card {oh_card_str(int(trump_card[g]))} was also dealt to a seat"
    return None


def _own_fields(cfg: OhHellConfig, B: int) -> dict:
    """Oh Hell's own :class:`State` fields of B new games."""
    return dict(
        hand_size=np.full(B, cfg.hand_sizes[0], dtype=np.int8),
        trump_card=np.full(B, -1, dtype=np.int8),
        taken=np.zeros((B, cfg.players), dtype=np.int8),
    )


def _first_to_act(cfg: OhHellConfig, dealer: np.ndarray) -> np.ndarray:
    """The dealer's left bids first and leads the first trick."""
    return ((dealer.astype(np.int64) + 1) % cfg.players).astype(np.int8)


# --------------------------------------------------------------------------
# Legal actions
@njit(cache=True, inline="always")
def hook_bid(bids: np.ndarray, g: int, n_bids: int, hand_size: int) -> int:
    """The bid the hook rule forbids game ``g``'s bidder to act, or -1.

    Only the dealer (the last bidder) is restricted: they may not bid
    ``hand_size - sum(other bids)``. When that is negative (the others
    overbid) nothing is forbidden.
    """
    P = bids.shape[1]
    if n_bids != P - 1:
        return -1
    value = hand_size
    for p in range(P):
        if bids[g, p] >= 0:
            value -= bids[g, p]
    return value if value >= 0 else -1


@njit(cache=True)
def _forbidden_bids(
    phase: np.ndarray, bids: np.ndarray, n_bids: np.ndarray, hand_size: np.ndarray, out: np.ndarray
) -> None:
    for g in range(phase.shape[0]):
        out[g] = hook_bid(bids, g, n_bids[g], hand_size[g]) if phase[g] == BID else -1


def forbidden_bid(state: State) -> np.ndarray:
    """(B,) the bid the hook rule forbids the player to act, or -1 if none
    (see :func:`hook_bid`)."""
    out = np.empty(state.batch_size, dtype=np.int64)
    _forbidden_bids(state.phase, state.bids, state.n_bids, state.hand_size, out)
    return out


@batch_kernel
def _mask_kernel(
    phase: np.ndarray, cur: np.ndarray, hands: np.ndarray, led_suit: np.ndarray,
    bids: np.ndarray, n_bids: np.ndarray, hand_size: np.ndarray, mask: np.ndarray,
) -> None:  # fmt: skip
    for g in prange(phase.shape[0]):
        if phase[g] == PLAY:
            follow_suit_row(hands, g, cur[g], led_suit[g], _SUIT_OF, mask)
            for a in range(N_CARDS, N_ACTIONS):
                mask[g, a] = False
            continue
        for a in range(N_ACTIONS):
            mask[g, a] = False
        if phase[g] == BID:
            hook = hook_bid(bids, g, n_bids[g], hand_size[g])
            for bid in range(hand_size[g] + 1):
                mask[g, BID_BASE + bid] = bid != hook


def _mask_call(cfg: OhHellConfig, s: State, kernel: Callable[..., None], out: np.ndarray) -> None:
    """Run the mask kernel (the version for the batch) with Oh Hell's arguments."""
    kernel(s.phase, s.cur, s.hands, s.led_suit, s.bids, s.n_bids, s.hand_size, out)


def _bid_fault(cfg: OhHellConfig, state: State, g: int, a: int) -> str | None:
    """Why bid action ``a`` is illegal in game ``g`` (None: ``a`` is no bid)."""
    if not BID_BASE <= a < N_ACTIONS:
        return None
    bid, size = a - BID_BASE, int(state.hand_size[g])
    if bid > size:
        return f"a bid is 0 to the hand size {size}"
    return f"hook rule: the dealer may not bid {bid}, which would make the bids add up to {size}"


def suit_name(s: int) -> str:
    """A suit's letter (C, D, S, H)."""
    return OH_SUIT_CHARS[s]


# --------------------------------------------------------------------------
# Scoring
@njit(cache=True, inline="always")
def _score_one(bids: np.ndarray, taken: np.ndarray, g: int, scoring: int, out: np.ndarray, why: np.ndarray) -> None:
    """Game ``g``'s hand scores into ``out`` (P,) and why into ``why`` (P,) (``WHY_MADE`` or
    ``WHY_MISSED``); ``scoring`` indexes ``OH_SCORINGS``."""
    for p in range(bids.shape[1]):
        made = taken[g, p] == bids[g, p]
        why[p] = WHY_MADE if made else WHY_MISSED
        if scoring == 0:  # positive
            out[p] = taken[g, p] + (MADE_BONUS if made else 0)
        elif scoring == 1:  # neutral
            out[p] = MADE_BONUS + taken[g, p] if made else 0
        else:  # negative
            out[p] = MADE_BONUS if made else -MADE_BONUS * abs(taken[g, p] - bids[g, p])


@njit(cache=True)
def _score_hands(bids: np.ndarray, taken: np.ndarray, scoring: int, out: np.ndarray) -> None:
    points = np.empty(bids.shape[1], dtype=np.int64)
    why = np.empty(bids.shape[1], dtype=np.int64)
    for g in range(bids.shape[0]):
        _score_one(bids, taken, g, scoring, points, why)
        out[g] = points


def score_hand(cfg: OhHellConfig, bids: np.ndarray, taken: np.ndarray) -> np.ndarray:
    """Hand scores (n, P) int64 from bids (n, P) and tricks taken (n, P).

    positive: ``tricks + 10`` if the bid was made, else ``tricks``;
    neutral: ``10 + tricks`` if made, else 0;
    negative: ``10`` if made, else ``-10 * |tricks - bid|``.
    """
    bids = np.ascontiguousarray(bids, dtype=np.int64)
    out = np.zeros(bids.shape, dtype=np.int64)
    _score_hands(bids, np.ascontiguousarray(taken, dtype=np.int64), OH_SCORINGS.index(cfg.scoring), out)
    return out


# --------------------------------------------------------------------------
# Transition
@njit(cache=True)
def _check(
    state: tuple[np.ndarray, ...],
    result: tuple[np.ndarray, ...],
    actions: np.ndarray,
    active: np.ndarray,
    legal: np.ndarray,
) -> int:
    """Clear the result rows and check every active action: the first game
    with an illegal one, or -1."""
    r = StepArrays(*result)
    for g in range(actions.shape[0]):
        clear_result(r, g)
    for g in range(actions.shape[0]):
        a = actions[g]
        if (active.size == 0 or active[g]) and not (0 <= a < N_ACTIONS and legal[g, a]):
            return g
    return -1


@njit(cache=True)
def _apply(
    state: tuple[np.ndarray, ...], result: tuple[np.ndarray, ...], actions: np.ndarray, active: np.ndarray,
    lo: int, hi: int, P: int, hand_sizes: np.ndarray, scoring: int,
) -> int:  # fmt: skip
    """Apply the (checked) actions of games ``lo..hi-1``; return how many of
    them need a new deal."""
    s, r = StateArrays(*state), StepArrays(*result)
    new_hands = 0
    for g in range(lo, hi):
        if active.size and not active[g]:
            continue
        a = actions[g]
        if s.phase[g] == BID:  # clockwise from the dealer's left, who then leads
            s.bids[g, s.cur[g]] = a - BID_BASE
            s.n_bids[g] += 1
            s.cur[g] = (s.cur[g] + 1) % P
            if s.n_bids[g] == P:
                s.phase[g] = PLAY
                s.cur[g] = s.leader[g]
            continue
        winner = play_card(s, r, g, a, _SUIT_OF[s.trump_card[g]], _SUIT_OF, _RANK_OF)
        if winner < 0:
            continue
        s.taken[g, winner] += 1
        if s.tricks_done[g] < s.hand_size[g]:
            continue
        points = np.empty(P, dtype=np.int64)
        why = np.empty(P, dtype=np.int64)
        _score_one(s.bids, s.taken, g, scoring, points, why)
        close_hand(s, r, g, -1)  # no role card in Oh Hell
        for p in range(P):
            r.hand_why[g, p] = why[p]
        if book_hand(s, r, g, points, hand_sizes.shape[0], DEAL, DONE):
            s.hand_size[g] = hand_sizes[s.hand_no[g]]
            s.cur[g] = s.leader[g] = (s.dealer[g] + 1) % P
            s.trump_card[g] = -1
            new_hands += 1
    return new_hands


@batch_kernel
def _step_kernel(
    state: tuple[np.ndarray, ...], result: tuple[np.ndarray, ...], actions: np.ndarray, active: np.ndarray,
    legal: np.ndarray, chunks: int, P: int, hand_sizes: np.ndarray, scoring: int,
) -> int:  # fmt: skip
    """Check every active action, then apply them all, in ``chunks`` ranges of
    games (split over threads in the parallel build).

    Returns ``-1 - g`` if game ``g`` (the first such) has an illegal action,
    with nothing changed; else how many games need a new deal.
    """
    bad = _check(state, result, actions, active, legal)
    if bad >= 0:
        return -1 - bad
    B, new_hands = actions.shape[0], 0
    for c in prange(chunks):
        lo, hi = c * B // chunks, (c + 1) * B // chunks
        new_hands += _apply(state, result, actions, active, lo, hi, P, hand_sizes, scoring)
    return new_hands


def _step_args(cfg: OhHellConfig) -> tuple:
    return cfg.players, _hand_sizes(cfg), OH_SCORINGS.index(cfg.scoring)


# --------------------------------------------------------------------------
# The game's answers to the rest of the package, under the names every core
# game module defines (the contract: core/contract.py's GameRules).
NAME = "oh_hell"
DECK = OH_HELL_DECK
card_str = oh_card_str  # card id -> notation ("QS")
parse_card = oh_parse_card  # notation -> card id; ValueError otherwise
ROLE_CARDS = np.zeros(N_CARDS, dtype=bool)  # no card has a trick role of its own
TRUMP_TURNED = True  # the trump is the suit of the card turned from the deck after the deal
N_TRUMPS = 4  # the suits: deal() takes the turned card's id


def score_bounds(cfg: OhHellConfig, hand_size: int) -> tuple[int, int]:
    """(low, high) one seat can score in a hand of ``hand_size`` tricks (OpenSpiel's utility range)."""
    if cfg.scoring == "negative":  # made: 10; missed by k tricks: -10 k
        return -MADE_BONUS * hand_size, MADE_BONUS
    return 0, hand_size + MADE_BONUS  # positive and neutral: 0 up to every trick and the bonus


def deal_attempt(state: State) -> np.ndarray:
    """(B,) zeros: no renege in Oh Hell, every hand is dealt once."""
    return np.zeros(state.batch_size, dtype=np.int16)


def role_holder(state: State) -> np.ndarray:
    """(B,) -1: Oh Hell has no role a seat holds."""
    return np.full(state.batch_size, -1, dtype=np.int8)


# --------------------------------------------------------------------------
# What a seat sees (the observation: layout, encoder, decoder) and what a search rebuilds from it
# (the public state). The shared, game-neutral parts are core/observe.py's and core/resample.py's.
_SUIT_OF64 = np.ascontiguousarray(OH_HELL_DECK.suit_of, dtype=np.int64)
_OBS_MAX_HANDS = 19  # the long deal styles with 10 cards: 10, 9, ..., 1, ..., 10
_SCORE_SCALE = 100.0
_U = np.uint64  # unsigned column indices: see core/observe.py's note on the kernels
_TAKEN_SCALE = 10.0


class ObsOffsets(NamedTuple):
    """What the Oh Hell encoder needs to know of a config and view (as :class:`.bobs_hat.ObsOffsets`)."""

    players: int
    n_cards: int
    n_hand_number: int
    hand: int
    played: int
    bids: int
    taken: int
    scores: int
    phase: int  # the first one-hot slice: the one-hot block runs from here to the end of ``trick``
    trump_suit: int
    trump_card: int
    hand_number: int
    hand_size: int
    dealer: int
    leader: int
    trick: int
    all_hands: int  # -1 unless the full view
    own_hand: int
    full: int
    bid_phase: int
    play_phase: int
    max_bid: int


@functools.lru_cache(maxsize=64)
def layout(cfg: OhHellConfig, view: str = "private") -> ObsLayout:
    """Observation layout for an Oh Hell configuration and view."""
    P = cfg.players
    return game_layout(
        view, OH_N_CARDS, P,
        # dense slices, written whole every step (after hand and played)
        ("bids", (P, MAX_BID + 2)),  # one-hot per relative seat: no bid yet, then bids 0-10
        ("taken", (P,)),  # tricks taken this hand per seat, / 10
        ("scores", (P,)),  # game totals, / 100
        # one-hot slices, zeroed then set
        ("phase", (2,)),  # bidding, play
        ("trump_suit", (4,)),  # C, D, S, H
        ("trump_card", (OH_N_CARDS,)),  # the card turned after the deal
        ("hand_number", (_OBS_MAX_HANDS,)),  # hand k at index k - 1
        ("hand_size", (MAX_BID,)),  # cards dealt to each seat, n at index n - 1
        ("dealer", (P,)),  # relative seat
        ("leader", (P,)),  # leader of the current trick
        ("trick", (P, OH_N_CARDS)),  # card each relative seat put in the current trick
    )  # fmt: skip


def _obs_values(cfg: OhHellConfig) -> dict[str, int]:
    """The :class:`ObsOffsets` fields that are not slice offsets: the game's constants."""
    return {"bid_phase": BID, "play_phase": PLAY, "max_bid": MAX_BID}


_OBS = GameObservation(
    layout, ObsOffsets, OH_HELL_DECK, _obs_values, _TAKEN_SCALE, _SCORE_SCALE,
    facts=("hand", "phase", "trump", "trump_card", "hand_number", "hand_size", "dealer", "bids", "leader", "trick",
           "played", "taken", "scores"),
)  # fmt: skip


obs_offsets = _OBS.offsets  # (cfg, view="private"): the :class:`ObsOffsets` as the plain tuple kernels take


@batch_kernel
def _obs_kernel(
    out: np.ndarray, seat: np.ndarray, each: bool, hands: np.ndarray, played: np.ndarray, taken: np.ndarray,
    scores: np.ndarray, hand_no: np.ndarray, dealer: np.ndarray, leader: np.ndarray, trick: np.ndarray,
    bids: np.ndarray, phase: np.ndarray, trump_card: np.ndarray, hand_size: np.ndarray, suit_of: np.ndarray,
    offsets: tuple[int, ...], taken_mul: float, score_mul: float,
) -> int:  # fmt: skip
    """Fill ``out`` (B, D) with Oh Hell observations, one row per game, every cell written.

    ``offsets`` is an :class:`ObsOffsets` as a plain tuple. Returns -1, or a
    failure code for :func:`check_result`.
    """
    o = ObsOffsets(*offsets)
    P, n_cards, n_hand_number, max_bid = o.players, o.n_cards, o.n_hand_number, o.max_bid
    B = out.shape[0]
    per_game = (hand_no.shape[0], dealer.shape[0], leader.shape[0], phase.shape[0], trump_card.shape[0],
                hand_size.shape[0], seat.shape[0] if each else B)  # fmt: skip
    taken3 = taken[:, :, np.newaxis]  # one count per seat, as the shared helper's (B, P, K)
    if not fits(B, P, n_cards, hands, played, taken3, scores, trick, bids, per_game):
        return BAD_STATE
    g: KernelInt  # Python ints in the checking loop, np.int64 in the parallel one
    s: KernelInt
    for g in range(B):  # check first, so that the encoding loop has no early exit
        me = np.int64(seat[g if each else 0])
        if me < 0 or me >= P:
            return B + g
        ok = shared_ok(g, P, n_cards, n_hand_number, hand_no, dealer, leader, trick)
        ok &= (trump_card[g] < n_cards) & (1 <= hand_size[g]) & (hand_size[g] <= max_bid)
        for s in range(P):
            ok &= (-1 <= bids[g, s]) & (bids[g, s] <= max_bid)
        if not ok:
            return g
    for row in prange(B):  # rows are independent: split over threads for large batches
        g = np.int64(row)  # a parallel loop counts in unsigned ints; int64 keeps index arithmetic signed
        me = np.int64(seat[g if each else 0])
        encode_shared(
            out, g, me, o, hands, played, taken3, taken_mul, scores, score_mul, hand_no, dealer, leader, trick
        )
        n_cols = max_bid + 2
        for i in range(o.bids, o.bids + P * n_cols):
            out[g, _U(i)] = 0.0
        s = me
        for r in range(P):  # bids are open: one-hot of bid + 1, column 0 = no bid yet
            set_onehot(out, g, o.bids + r * n_cols, n_cols, np.int64(bids[g, s]) + 1)
            s = s + 1 if s + 1 < P else 0
        ph, card = np.int64(phase[g]), np.int64(trump_card[g])
        set_onehot(out, g, o.phase, 2, ph - o.bid_phase if ph == o.bid_phase or ph == o.play_phase else -1)
        if card >= 0:  # no trump before the deal
            set_onehot(out, g, o.trump_suit, 4, suit_of[card])
            set_onehot(out, g, o.trump_card, n_cards, card)
        set_onehot(out, g, o.hand_size, max_bid, np.int64(hand_size[g]) - 1)
    return -1


def _obs_args(s: State) -> tuple:
    """The observation kernel's Oh Hell arrays. Everything but the hands is public in Oh Hell (bids are
    open), so the public view only drops the observer's hand."""
    return s.bids, s.phase, s.trump_card, s.hand_size, _SUIT_OF64


def _own_facts(cfg: OhHellConfig, d: dict[str, np.ndarray]) -> dict:
    """The facts of a decoded vector (its slices ``d``) only Oh Hell has: phase, trump card, hand size, bids.

    Cards are card ids. A bid is the number of tricks bid, ``None`` before the seat has bid.
    """
    phase = onehot_index(d["phase"])
    suit = onehot_index(d["trump_suit"])
    bids = [onehot_index(d["bids"][r]) for r in range(cfg.players)]
    size = onehot_index(d["hand_size"])  # None: an all-zero slice, which no observation of a state has
    return {
        "phase": PHASE_NAMES[phase + BID] if phase is not None else "other",
        "trump": OH_SUIT_CHARS[suit] if suit is not None else None,
        "trump_card": onehot_index(d["trump_card"]),
        "hand_size": None if size is None else size + 1,
        "bids": [None if v in (None, 0) else v - 1 for v in bids],
    }


def public_state(cfg: OhHellConfig, obs: np.ndarray, seat: np.ndarray) -> tuple[State, np.ndarray, np.ndarray]:
    """Oh Hell's :func:`.bobs_hat.public_state`: ``(state, counts, unseen)`` from private observations.

    The turned trump card is face up, so it is not among the unseen cards;
    nor are cards outside a small variant's deck.
    """
    f = _OBS.seen_frame(cfg, obs, seat, first_phase=BID, done=DONE)
    o = f.o
    size = np.argmax(o["hand_size"], axis=1) + 1
    bids = f.to_absolute(np.argmax(o["bids"], axis=2) - 1, -1, np.int8)
    trump_card = np.argmax(o["trump_card"], axis=1).astype(np.int8)
    hands, counts, unseen = seen_from(f.hand, f.played, f.trick, size, f.tricks_done, f.me, cfg.players)
    unseen[np.arange(f.me.shape[0]), trump_card.astype(np.int64)] = False
    unseen &= cfg.deck_mask
    state = State(
        **f.fields,
        hands=hands,
        bids=bids,
        n_bids=(bids >= 0).sum(axis=1).astype(np.int8),
        hand_size=size.astype(np.int8),
        trump_card=trump_card,
        taken=_OBS.taken(f),
    )
    return state, counts.astype(np.int64), unseen


# Suit symmetry (core/symmetry.py): see bobs_hat.py. The turned trump card is a card slice.
SYMMETRY_CARD_SLICES = ("hand", "played", "trick", "all_hands", "trump_card")
SYMMETRY_SUIT_SLICES = ("trump_suit",)
TRUMP_SLICE = "trump_suit"


def relabel_actions(cards: np.ndarray, suits: np.ndarray) -> np.ndarray:
    """(N_ACTIONS,) action ids under a suit relabelling: cards by ``cards``, bids unchanged."""
    return np.concatenate([cards, np.arange(N_CARDS, N_ACTIONS)])


# --------------------------------------------------------------------------
# The wrappers every game shares (core/game.py), bound to Oh Hell's kernels and hooks.
_GAME = GameWrappers(
    module=__name__, State=State, n_cards=N_CARDS, n_actions=N_ACTIONS, first_phase=BID, deal_phase=DEAL,
    step_kernel=_step_kernel, step_args=_step_args, mask_kernel=_mask_kernel, mask_call=_mask_call,
    own_fields=_own_fields, first_to_act=_first_to_act, hand_sizes=hand_size_for, trump_field="trump_card",
    random_deal=random_deal, deal_attempt=deal_attempt, bid_fault=_bid_fault, trump_fault=_trump_fault,
    observation=_OBS, obs_kernel=_obs_kernel, obs_args=_obs_args, own_facts=_own_facts,
)  # fmt: skip
init = _GAME.init
deal = _GAME.deal
observe = _GAME.observe
decode = _GAME.decode
legal_action_mask = _GAME.legal_action_mask
new_result = _GAME.new_result
step = _GAME.step
restart_hand = _GAME.restart_hand
