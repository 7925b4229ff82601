"""Batched rules of Where's Bob's Hat? (RULES.md section 1), NumPy only.

B games are held in one :class:`State` of arrays with a leading batch
dimension and stepped together: every game has exactly one player to act, and
:func:`step` applies one action per game, whatever phase each game is in.
Phases are handled with boolean masks over the batch, never a loop over games.

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

from dataclasses import dataclass

import numpy as np

from ..config import BobsHatConfig
from . import rng
from .cards import BH_IS_HAT_CARD, BH_N_CARDS, BH_NO_TRUMP, BOBS_HAT_DECK, bh_card_str
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
_CHANCE_TRUMP, _CHANCE_DEAL = 1, 2


class IllegalActionError(ValueError):
    """An action that the rules do not allow in the game's current state."""


def bid_code(most: tuple[str, ...] | list[str] = (), fewest: int = 0) -> int:
    """Bid code of a set of most bids (names from ``BID_NAMES``) and fewest count."""
    bits = 0
    for name in most:
        bits |= 1 << BID_NAMES.index(name)
    return bits + 8 * fewest


def bid_cards(code: int) -> list[str]:
    """The bid cards of a bid code, as RECORDS.md writes them."""
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

    @property
    def hand_size(self) -> np.ndarray:
        """(B,) cards dealt to each player this hand."""
        return self.hand_no.astype(np.int64) + 5


# --------------------------------------------------------------------------
# Chance
def random_deal(
    cfg: BobsHatConfig, keys: np.ndarray, hand_no: np.ndarray, attempt: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Trump (each of the four trump cards 1/4) and a uniformly random deal.

    Returns trump (n,) int8 and hands (n, P, 60) bool with ``5 + hand_no``
    cards per player. A pure function of (key, hand_no, attempt).
    """
    base = rng.combine(keys, hand_no, attempt)
    trump = rng.uniform_ints(rng.combine(base, _CHANCE_TRUMP), 4).astype(np.int8)
    perm = rng.permutations(rng.combine(base, _CHANCE_DEAL), N_CARDS)  # (n, 60)
    return trump, deal_from_permutation(perm, hand_no.astype(np.int64) + 5, cfg.players)


# --------------------------------------------------------------------------
# Construction
def init(cfg: BobsHatConfig, keys: np.ndarray, auto_deal: bool = True) -> State:
    """New games, one per key, at the first hand.

    With ``auto_deal`` the first hand is dealt from the key and every later
    hand too; without it each game waits in phase DEAL for :func:`deal`.
    """
    keys = np.asarray(keys, dtype=np.uint64).reshape(-1)
    B, P = keys.shape[0], cfg.players
    state = State(
        **common_fields(keys, P, N_CARDS, random_first_dealer(cfg, keys), DEAL),
        attempt=np.zeros(B, dtype=np.int16),
        trump=np.zeros(B, dtype=np.int8),
        hat_value=np.zeros(B, dtype=np.int8),
        hat_holder=np.full(B, -1, dtype=np.int8),
        no_bid_used=np.zeros((B, P), dtype=bool),
        taken=np.zeros((B, P, 3), dtype=np.int8),
    )
    if auto_deal:
        idx = np.arange(B)
        trump, hands = random_deal(cfg, keys, state.hand_no, state.attempt)
        _start_hand(state, idx, trump, hands)
    return state


def deal(cfg: BobsHatConfig, state: State, games: np.ndarray, trump: np.ndarray, hands: np.ndarray) -> None:
    """Start the pending hand of ``games`` (all in phase DEAL) with a given deal.

    trump: (n,) 0-2 or 3 (none). hands: (n, P, 60) bool, ``5 + hand_no``
    cards per player, no card twice. Raises ValueError naming the fault.
    """
    games = np.asarray(games, dtype=np.int64).reshape(-1)
    trump = np.asarray(trump, dtype=np.int8).reshape(-1)
    hands = np.asarray(hands, dtype=bool)
    if hands.shape != (games.shape[0], cfg.players, N_CARDS):
        raise ValueError(f"hands must have shape ({games.shape[0]}, {cfg.players}, {N_CARDS}), got {hands.shape}")
    if np.any(state.phase[games] != DEAL):
        raise ValueError("deal() needs games waiting for a deal (phase 'deal')")
    if np.any((trump < 0) | (trump > BH_NO_TRUMP)):
        raise ValueError("trump must be 0-2 (blue, red, black) or 3 (none)")
    size = state.hand_size[games]
    counts = hands.sum(axis=2)
    if np.any(counts != size[:, None]):
        g, p = np.argwhere(counts != size[:, None])[0]
        raise ValueError(f"seat {p} was dealt {counts[g, p]} cards; hand {state.hand_no[games[g]] + 1} deals {size[g]}")
    if np.any(hands.sum(axis=1) > 1):
        card = int(np.argwhere(hands.sum(axis=1) > 1)[0, 1])
        raise ValueError(f"card {bh_card_str(card)} was dealt to two seats")
    _start_hand(state, games, trump, hands)


def _start_hand(state: State, idx: np.ndarray, trump: np.ndarray, hands: np.ndarray) -> None:
    # The dealer chooses the hat first, bids first and leads the first trick.
    clear_hand(state, idx, hands, HAT, state.dealer[idx])
    state.trump[idx] = trump
    state.hat_value[idx] = 0
    state.hat_holder[idx] = -1
    state.taken[idx] = 0


# --------------------------------------------------------------------------
# Legal actions
def legal_bid_codes(cfg: BobsHatConfig, no_bid_used: np.ndarray) -> np.ndarray:
    """(n, 24) bool: legal bid codes for bidders with these no-bid flags."""
    codes = np.arange(N_BID_CODES)
    base = np.ones(N_BID_CODES, dtype=bool)
    if not cfg.double_fewest:
        base &= codes // 8 < 2
    legal = np.broadcast_to(base, (no_bid_used.shape[0], N_BID_CODES)).copy()
    legal[:, 0] = cfg.no_bid & ~no_bid_used
    return legal


def legal_action_mask(cfg: BobsHatConfig, state: State) -> np.ndarray:
    """(B, 86) bool: the legal actions of the player to act in each game.

    All False in a finished game or one waiting for a deal.
    """
    B = state.batch_size
    mask = np.zeros((B, N_ACTIONS), dtype=bool)
    ph = state.phase
    mask[ph == HAT, HAT_PLUS : HAT_MINUS + 1] = True
    bid = np.nonzero(ph == BID)[0]
    if bid.size:
        mask[bid, BID_BASE:] = legal_bid_codes(cfg, state.no_bid_used[bid, state.cur[bid]])
    play = np.nonzero(ph == PLAY)[0]
    if play.size:
        hand = state.hands[play, state.cur[play]]
        mask[play, :N_CARDS] = follow_suit_mask(hand, state.led_suit[play], BOBS_HAT_DECK)
    return mask


def _validate(cfg: BobsHatConfig, state: State, actions: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """Raise on any illegal action; return (B,) bool: the follow-suit violations
    that renege mode turns into reneges."""
    B = state.batch_size
    b = np.arange(B)
    in_range = (actions >= 0) & (actions < N_ACTIONS)
    ok = np.zeros(B, dtype=bool)
    ok[in_range] = legal[b[in_range], actions[in_range]]
    renege = np.zeros(B, dtype=bool)
    if cfg.renege_mode:
        is_card = in_range & (actions < N_CARDS) & (state.phase == PLAY)
        held = np.zeros(B, dtype=bool)
        held[is_card] = state.hands[b[is_card], state.cur[is_card], actions[is_card]]
        renege = held & ~ok
    bad = ~(ok | renege)
    if bad.any():
        g = int(np.nonzero(bad)[0][0])
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
                else f"seat {seat} must follow the suit led ({cfg_suit(int(state.led_suit[g]))})"
            )
        elif ph == BID and BID_BASE <= a < N_ACTIONS:
            code = a - BID_BASE
            why = (
                "the no-bid option is off or already used by this seat"
                if code == 0
                else "double fewest needs the double_fewest option"
            )
        else:
            why = f"it is the {PHASE_NAMES[ph]} phase"
        raise IllegalActionError(
            f"illegal action {a} ({what}) in game {g} for seat {seat}: {why}; "
            f"legal actions: {np.nonzero(legal[g])[0].tolist()}"
        )
    return renege


def cfg_suit(s: int) -> str:
    return ("blue", "red", "black")[s] if 0 <= s < 3 else "none"


# --------------------------------------------------------------------------
# Scoring
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
    bids = np.asarray(bids, dtype=np.int64)
    taken = np.asarray(taken, dtype=np.int64)
    n, P = bids.shape
    size = np.asarray(hand_size, dtype=np.int64).reshape(-1)[:, None]
    srt = np.sort(taken, axis=1)  # (n, P, 3) ascending over seats
    top, second = srt[:, -1], srt[:, -2]  # (n, 3)
    best_other = np.where(taken == top[:, None, :], second[:, None, :], top[:, None, :])
    # A tie for the top makes second == top, so nobody strictly leads: correct.
    most_made = (taken > best_other) | (taken.sum(axis=1, keepdims=True) == 0)
    miss = -5 - (taken if cfg.negative_scoring else 0)
    most_pts = np.where(most_made, 5 + taken, miss)
    bid_bits = (bids[:, :, None] >> np.arange(3)) & 1
    score = (most_pts * bid_bits).sum(axis=2)

    total = taken.sum(axis=2)  # (n, P)
    tsrt = np.sort(total, axis=1)
    low, low2 = tsrt[:, :1], tsrt[:, 1:2]
    fewest_other = np.where(total == low, low2, low)
    fewest_made = total < fewest_other
    score += (bids // 8) * np.where(fewest_made, size, -size)

    holder = np.asarray(hat_holder, dtype=np.int64).reshape(-1)
    has = holder >= 0
    score[np.nonzero(has)[0], holder[has]] += np.asarray(hat_value, dtype=np.int64).reshape(-1)[has]
    return np.where(bids == 0, 0, score)


# --------------------------------------------------------------------------
# Transition
def step(
    cfg: BobsHatConfig,
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
    seat and reason, and nothing is changed. In renege mode a card that
    breaks follow suit is not an error: it applies the renege rule.
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
    renege = _validate(cfg, state, np.where(active, actions, 0), legal)
    res = StepResult.empty(B, P)
    res.renege[:] = renege
    ph = np.where(active, state.phase, -1)

    # Hat choice by the dealer; bidding then starts with the dealer.
    g = np.nonzero(ph == HAT)[0]
    if g.size:
        state.hat_value[g] = np.where(actions[g] == HAT_PLUS, 10, -10)
        state.phase[g] = BID
        state.cur[g] = state.dealer[g]

    # Bidding, clockwise from the dealer; play then starts with the dealer's lead.
    g = np.nonzero(ph == BID)[0]
    if g.size:
        state.bids[g, state.cur[g]] = actions[g] - BID_BASE
        state.n_bids[g] += 1
        state.cur[g] = (state.cur[g] + 1) % P
        done = g[state.n_bids[g] == P]
        state.phase[done] = PLAY
        state.cur[done] = state.dealer[done]
        state.leader[done] = state.dealer[done]

    # Card play.
    g = np.nonzero((ph == PLAY) & ~renege)[0]
    if g.size:
        _play_cards(cfg, state, g, actions[g], res)

    # Renege: -15 to the offender, the same hand dealt again.
    g = np.nonzero(renege)[0]
    if g.size:
        res.rewards[g, state.cur[g]] += RENEGE_PENALTY
        state.scores[g, state.cur[g]] += RENEGE_PENALTY
        state.last_scores[g] = 0
        state.last_scores[g, state.cur[g]] = RENEGE_PENALTY
        state.attempt[g] += 1
        state.phase[g] = DEAL
        res.new_hand[g] = True

    # Deal the next hand (after a scored hand or a renege).
    pending = np.nonzero(res.new_hand)[0]
    if pending.size and auto_deal:
        trump, hands = random_deal(cfg, state.key[pending], state.hand_no[pending], state.attempt[pending])
        _start_hand(state, pending, trump, hands)
    return res


def _play_cards(cfg: BobsHatConfig, state: State, g: np.ndarray, card: np.ndarray, res: StepResult) -> None:
    t, cards, winner = play_cards(state, g, card, state.trump, BOBS_HAT_DECK, res)
    if not t.size:
        return
    suits = _SUIT_OF[cards]  # (n, P)
    for s in range(3):
        state.taken[t, winner, s] += (suits == s).sum(axis=1).astype(np.int8)
    has_hat = BH_IS_HAT_CARD[cards].any(axis=1)  # a 14 or 15 in the trick: its taker takes the hat
    state.hat_holder[t[has_hat]] = winner[has_hat]
    h = t[state.tricks_done[t] == state.hand_size[t]]
    if h.size:
        _end_hand(cfg, state, h, res)


def _end_hand(cfg: BobsHatConfig, state: State, h: np.ndarray, res: StepResult) -> None:
    pts = score_hand(cfg, state.bids[h], state.taken[h], state.hat_value[h], state.hat_holder[h], state.hand_size[h])
    state.no_bid_used[h] |= state.bids[h] == 0
    _, nxt = score_hands(state, h, pts, cfg.hands, res, DEAL, DONE)
    state.attempt[nxt] = 0
