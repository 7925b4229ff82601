"""Batched rules of Oh Hell (RULES.md section 2), NumPy only.

B games are held in one :class:`State` of arrays with a leading batch
dimension and stepped together: every running game has exactly one player to
act, and :func:`step` applies one action per game, whatever phase each game is
in. Phases are handled with boolean masks over the batch, never a loop over
games. The trick mechanics (follow suit, trick winner) are the shared ones of
:mod:`tricks`.

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

from dataclasses import dataclass

import numpy as np

from ..config import OhHellConfig
from . import rng
from .bobs_hat import IllegalActionError
from .cards import OH_HELL_DECK, OH_N_CARDS, OH_SUIT_CHARS, oh_card_str
from .tricks import (
    StepResult,
    TrickState,
    clear_hand,
    common_fields,
    deal_from_permutation,
    follow_suit_mask,
    play_cards,
    random_first_dealer,
    score_hands,
)

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


# --------------------------------------------------------------------------
# Chance
def hand_size_for(cfg: OhHellConfig, hand_no: np.ndarray) -> np.ndarray:
    """Cards per seat of each hand number (0-based), from the deal style."""
    return np.asarray(cfg.hand_sizes, dtype=np.int8)[np.asarray(hand_no, dtype=np.int64)]


def random_deal(cfg: OhHellConfig, keys: np.ndarray, hand_no: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A uniformly random deal and the trump card turned after it.

    The deck is shuffled; seat p gets the cards at positions
    ``p * size .. (p + 1) * size - 1`` and the card at position ``P * size``
    is the trump card. Returns trump_card (n,) int8 and hands (n, P, 52) bool.
    A pure function of (key, hand_no).
    """
    keys = np.asarray(keys, dtype=np.uint64).reshape(-1)
    hand_no = np.asarray(hand_no).reshape(-1)
    n, P = keys.shape[0], cfg.players
    perm = rng.permutations(rng.combine(rng.combine(keys, hand_no), _CHANCE_DEAL), N_CARDS)  # (n, 52)
    size = hand_size_for(cfg, hand_no).astype(np.int64)
    trump_card = perm[np.arange(n), P * size].astype(np.int8)
    return trump_card, deal_from_permutation(perm, size, P)


# --------------------------------------------------------------------------
# Construction
def init(cfg: OhHellConfig, keys: np.ndarray, auto_deal: bool = True) -> State:
    """New games, one per key, at the first hand.

    With ``auto_deal`` the first hand is dealt from the key and every later
    hand too; without it each game waits in phase DEAL for :func:`deal`.
    """
    keys = np.asarray(keys, dtype=np.uint64).reshape(-1)
    B, P = keys.shape[0], cfg.players
    first = random_first_dealer(cfg, keys)
    state = State(
        **common_fields(keys, P, N_CARDS, first, DEAL),
        hand_size=np.full(B, cfg.hand_sizes[0], dtype=np.int8),
        trump_card=np.full(B, -1, dtype=np.int8),
        taken=np.zeros((B, P), dtype=np.int8),
    )
    state.cur[:] = state.leader[:] = (first + 1) % P  # the dealer's left bids and leads first
    if auto_deal:
        trump_card, hands = random_deal(cfg, keys, state.hand_no)
        _start_hand(cfg, state, np.arange(B), trump_card, hands)
    return state


def deal(cfg: OhHellConfig, state: State, games: np.ndarray, trump_card: np.ndarray, hands: np.ndarray) -> None:
    """Start the pending hand of ``games`` (all in phase DEAL) with a given deal.

    trump_card: (n,) card ids 0-51, the card turned after the deal.
    hands: (n, P, 52) bool, ``hand_size`` cards per seat, no card twice and
    not the trump card. Raises ValueError naming the fault.
    """
    games = np.asarray(games, dtype=np.int64).reshape(-1)
    trump_card = np.asarray(trump_card, dtype=np.int64).reshape(-1)
    hands = np.asarray(hands, dtype=bool)
    n = games.shape[0]
    if hands.shape != (n, cfg.players, N_CARDS):
        raise ValueError(f"hands must have shape ({n}, {cfg.players}, {N_CARDS}), got {hands.shape}")
    if trump_card.shape != (n,):
        raise ValueError(f"trump_card must have one card per game ({n}), got shape {trump_card.shape}")
    if np.any(state.phase[games] != DEAL):
        g = int(games[np.nonzero(state.phase[games] != DEAL)[0][0]])
        raise ValueError(f"deal() needs games waiting for a deal (phase 'deal'); game {g} is not")
    if np.any((trump_card < 0) | (trump_card >= N_CARDS)):
        raise ValueError(f"trump_card must be a card id 0-{N_CARDS - 1}, got {trump_card.tolist()}")
    size = hand_size_for(cfg, state.hand_no[games]).astype(np.int64)
    counts = hands.sum(axis=2)
    if np.any(counts != size[:, None]):
        g, p = np.argwhere(counts != size[:, None])[0]
        raise ValueError(
            f"game {games[g]}: seat {p} was dealt {counts[g, p]} cards; hand {state.hand_no[games[g]] + 1} "
            f"deals {size[g]}"
        )
    if np.any(hands.sum(axis=1) > 1):
        g, card = np.argwhere(hands.sum(axis=1) > 1)[0]
        raise ValueError(f"game {games[g]}: card {oh_card_str(int(card))} was dealt to two seats")
    in_hand = hands.any(axis=1)[np.arange(n), trump_card]
    if in_hand.any():
        g = int(np.nonzero(in_hand)[0][0])
        raise ValueError(f"game {games[g]}: the trump card {oh_card_str(int(trump_card[g]))} was also dealt to a seat")
    _start_hand(cfg, state, games, trump_card, hands)


def _start_hand(cfg: OhHellConfig, state: State, idx: np.ndarray, trump_card: np.ndarray, hands: np.ndarray) -> None:
    # The dealer's left bids first and leads the first trick.
    first = ((state.dealer[idx].astype(np.int64) + 1) % cfg.players).astype(np.int8)
    clear_hand(state, idx, hands, BID, first)
    state.hand_size[idx] = hand_size_for(cfg, state.hand_no[idx])
    state.trump_card[idx] = trump_card
    state.taken[idx] = 0


# --------------------------------------------------------------------------
# Legal actions
def forbidden_bid(state: State) -> np.ndarray:
    """(B,) the bid the hook rule forbids the player to act, or -1 if none.

    Only the dealer (the last bidder) is restricted: they may not bid
    ``hand_size - sum(other bids)``. When that is negative (the others
    overbid) nothing is forbidden.
    """
    last = (state.phase == BID) & (state.n_bids == state.bids.shape[1] - 1)
    others = np.where(state.bids >= 0, state.bids, 0).sum(axis=1, dtype=np.int64)
    value = state.hand_size.astype(np.int64) - others
    return np.where(last & (value >= 0), value, -1)


def legal_action_mask(cfg: OhHellConfig, state: State) -> np.ndarray:
    """(B, 63) bool: the legal actions of the player to act in each game.

    All False in a finished game or one waiting for a deal.
    """
    B = state.batch_size
    mask = np.zeros((B, N_ACTIONS), dtype=bool)
    bidding = state.phase == BID
    bids = np.arange(MAX_BID + 1)
    mask[:, BID_BASE:] = bidding[:, None] & (bids[None, :] <= state.hand_size[:, None])
    mask[:, BID_BASE:] &= bids[None, :] != forbidden_bid(state)[:, None]
    play = np.nonzero(state.phase == PLAY)[0]
    if play.size:
        hand = state.hands[play, state.cur[play]]
        mask[play, :N_CARDS] = follow_suit_mask(hand, state.led_suit[play], OH_HELL_DECK)
    return mask


def _validate(state: State, actions: np.ndarray, legal: np.ndarray) -> None:
    """Raise :class:`IllegalActionError` naming the first game with an illegal action."""
    B = state.batch_size
    b = np.arange(B)
    in_range = (actions >= 0) & (actions < N_ACTIONS)
    ok = np.zeros(B, dtype=bool)
    ok[in_range] = legal[b[in_range], actions[in_range]]
    if ok.all():
        return
    g = int(np.nonzero(~ok)[0][0])
    a, ph, seat = int(actions[g]), int(state.phase[g]), int(state.cur[g])
    what = action_str(a)
    if ph == DONE:
        why = "the game is over"
    elif ph == DEAL:
        why = "the hand has not been dealt"
    elif ph == PLAY and 0 <= a < N_CARDS:
        why = (
            f"seat {seat} does not hold {what}"
            if not state.hands[g, seat, a]
            else f"seat {seat} must follow the suit led ({OH_SUIT_CHARS[int(state.led_suit[g])]})"
        )
    elif ph == BID and BID_BASE <= a < N_ACTIONS:
        bid, size = a - BID_BASE, int(state.hand_size[g])
        why = (
            f"a bid is 0 to the hand size {size}"
            if bid > size
            else f"hook rule: the dealer may not bid {bid}, which would make the bids add up to {size}"
        )
    else:
        why = f"it is the {PHASE_NAMES.get(ph, str(ph))} phase"
    raise IllegalActionError(
        f"illegal action {a} ({what}) in game {g} for seat {seat}: {why}; "
        f"legal actions: {np.nonzero(legal[g])[0].tolist()}"
    )


# --------------------------------------------------------------------------
# Scoring
def score_hand(cfg: OhHellConfig, bids: np.ndarray, taken: np.ndarray) -> np.ndarray:
    """Hand scores (n, P) int64 from bids (n, P) and tricks taken (n, P).

    positive: ``tricks + 10`` if the bid was made, else ``tricks``;
    neutral: ``10 + tricks`` if made, else 0;
    negative: ``10`` if made, else ``-10 * |tricks - bid|``.
    """
    bids = np.asarray(bids, dtype=np.int64)
    taken = np.asarray(taken, dtype=np.int64)
    made = taken == bids
    if cfg.scoring == "positive":
        return taken + MADE_BONUS * made
    if cfg.scoring == "neutral":
        return np.where(made, MADE_BONUS + taken, 0)
    return np.where(made, MADE_BONUS, -MADE_BONUS * np.abs(taken - bids))


# --------------------------------------------------------------------------
# Transition
def step(
    cfg: OhHellConfig,
    state: State,
    actions: np.ndarray,
    active: np.ndarray | None = None,
    auto_deal: bool = True,
    legal: np.ndarray | None = None,
) -> StepResult:
    """Apply one action per game, in place, and report what happened.

    actions: (B,) action ids. active: (B,) bool, the games to step (default
    all); the others are left untouched and their action is ignored, which is
    how finished games ride along in a batch. Every active action is checked
    first: an illegal one raises :class:`IllegalActionError` naming the game,
    seat and reason, and nothing is changed.
    With ``auto_deal`` False, a new hand waits in phase DEAL for :func:`deal`.
    ``legal``: this state's :func:`legal_action_mask`, when the caller has it
    already (saves computing it twice per step).
    """
    P = cfg.players
    B = state.batch_size
    actions = np.asarray(actions).astype(np.int64).reshape(-1)
    if actions.shape[0] != B:
        raise ValueError(f"expected {B} actions, one per game, got {actions.shape[0]}")
    active = np.ones(B, dtype=bool) if active is None else np.asarray(active, dtype=bool).reshape(-1)
    # An inactive game is never at fault: its row of the mask is all True.
    if legal is None:
        legal = legal_action_mask(cfg, state)
    legal = legal | ~active[:, None]
    _validate(state, np.where(active, actions, 0), legal)
    res = StepResult.empty(B, P)
    ph = np.where(active, state.phase, -1)

    # Bidding, clockwise from the dealer's left; the dealer's left then leads.
    g = np.nonzero(ph == BID)[0]
    if g.size:
        state.bids[g, state.cur[g]] = actions[g] - BID_BASE
        state.n_bids[g] += 1
        state.cur[g] = (state.cur[g] + 1) % P
        done = g[state.n_bids[g] == P]
        state.phase[done] = PLAY
        state.cur[done] = state.leader[done]

    # Card play.
    g = np.nonzero(ph == PLAY)[0]
    if g.size:
        _play_cards(cfg, state, g, actions[g], res)

    pending = np.nonzero(res.new_hand)[0]
    if pending.size and auto_deal:
        trump_card, hands = random_deal(cfg, state.key[pending], state.hand_no[pending])
        _start_hand(cfg, state, pending, trump_card, hands)
    return res


def _play_cards(cfg: OhHellConfig, state: State, g: np.ndarray, card: np.ndarray, res: StepResult) -> None:
    t, _, winner = play_cards(state, g, card, state.trump, OH_HELL_DECK, res)
    state.taken[t, winner] += 1
    h = t[state.tricks_done[t] == state.hand_size[t]]
    if h.size:
        _end_hand(cfg, state, h, res)


def _end_hand(cfg: OhHellConfig, state: State, h: np.ndarray, res: StepResult) -> None:
    pts = score_hand(cfg, state.bids[h], state.taken[h])
    _, nxt = score_hands(state, h, pts, cfg.hands, res, DEAL, DONE)
    state.hand_size[nxt] = hand_size_for(cfg, state.hand_no[nxt])
    state.cur[nxt] = state.leader[nxt] = (state.dealer[nxt] + 1) % cfg.players
    state.trump_card[nxt] = -1
