"""Hand-written strategies for Oh Hell: ``simple`` and ``strong``.

Batched like the Bob's Hat ones: observations are read into :class:`Facts`
(seats relative to the acting player) and decided for the whole batch in one
call; :func:`facts_from_state` lets the search bot use them as playouts.
Card ids are OpenSpiel's, ``rank * 4 + suit`` (ranks 2..A = 0..12).

Speed: reading the observations, the strong bot's trick estimate and both
bots' card play are compiled loops over the rows (numba): a training run
calls them for every opponent decision. The rules they apply are the core's
own helpers (:mod:`bobshat_env.core.tricks`); ``tests/test_golden.py`` pins
their decisions.

``simple`` (:class:`SimpleAgent`)
    Bids the number of aces and kings plus trumps of queen or better; the
    dealer's hook is met by the nearest legal bid. In play, while it still
    needs tricks it wins with its highest card when that beats the trick and
    otherwise plays its lowest; once it has its bid it ducks with the highest
    card that loses (and dumps its lowest when it must lead).

``strong`` (:class:`StrongAgent`)
    Counts cards: for every card in hand, the unseen higher cards of its
    suit, and which seats have shown a void (current trick; the whole hand
    with the arena's public void record). It bids the rounded sum of its
    cards' chances to take a trick (high cards that no unseen card beats,
    trumps, and low trumps that can ruff a short suit), the hook-aware way:
    the dealer picks the legal bid nearest its estimate, on the side the
    estimate leans to. In play it compares the tricks it still needs with
    the tricks its hand should still take: short of its bid it takes tricks
    with the cheapest card likely to hold (leading its surest winner); on
    its bid it ducks with the highest card that still loses and leads its
    safest low card; over its bid (a broken bid still scores a point a trick
    with positive scoring) it takes what it can.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit

from bobshat_env.core import oh_hell as oh
from bobshat_env.core.cards import OH_HELL_DECK
from bobshat_env.core.oh_hell import ObsOffsets, obs_offsets
from bobshat_env.core.tricks import (
    card_strength,
    count_unseen,
    follow_suit_row,
    mark_trick_voids,
    trick_voids,
    trick_winner_so_far,
)

from .heuristic import heuristic_agent
from .trick_facts import any_at, argmax_at, mark_seen, none_of, pick_row

N = 52
SUIT = OH_HELL_DECK.suit_of.astype(np.int64)
RANK = OH_HELL_DECK.rank_of.astype(np.int64)
SUIT_ONEHOT = (SUIT[:, None] == np.arange(4)[None, :]).astype(np.float64)


@dataclass
class Facts:
    """What the acting player knows, batched; seats relative (0 = me)."""

    phase: np.ndarray  # (B,) oh.BID / oh.PLAY
    hand: np.ndarray  # (B, 52) bool
    played: np.ndarray  # (B, 52) bool
    trump_card: np.ndarray  # (B,) card id
    trick: np.ndarray  # (B, P) card per relative seat, -1 none
    leader: np.ndarray  # (B,) relative seat
    n_in_trick: np.ndarray  # (B,)
    led_suit: np.ndarray  # (B,) -1 when leading
    trump: np.ndarray  # (B,) 0-3
    bids: np.ndarray  # (B, P) tricks bid, -1 not yet
    taken: np.ndarray  # (B, P) tricks taken
    dealer: np.ndarray  # (B,) relative seat
    hand_size: np.ndarray  # (B,)
    void: np.ndarray  # (B, P, 4) bool

    @property
    def players(self) -> int:
        return int(self.trick.shape[1])


@njit(cache=True, nogil=True)
def _facts_kernel(
    obs, offsets, seat, pub_void, has_pub, suit,
    phase, hand, played, trump_card, trick, leader, n_in_trick, led_suit, trump, bids, taken, dealer, hand_size, void,
):  # fmt: skip
    """Fill the Facts arrays (after ``suit``) from private observations; see :func:`facts_from_obs`.

    ``offsets``: the layout's :class:`~bobshat_env.core.oh_hell.ObsOffsets` as a plain tuple."""
    o = ObsOffsets(*offsets)
    B, P = trick.shape
    n_bid_slots = o.max_bid + 2  # per seat: no bid yet, then bids 0..max_bid
    half = np.float32(0.5)
    for g in range(B):
        phase[g] = argmax_at(obs, g, o.phase, 2) + oh.BID if any_at(obs, g, o.phase, 2) else oh.DONE
        for c in range(N):
            hand[g, c] = obs[g, o.hand + c] > half
            played[g, c] = obs[g, o.played + c] > half
        count = 0
        for p in range(P):
            start = o.trick + p * N
            trick[g, p] = argmax_at(obs, g, start, N) if any_at(obs, g, start, N) else -1
            count += trick[g, p] >= 0
        n_in_trick[g] = count
        leader[g] = argmax_at(obs, g, o.leader, P)
        lead_card = trick[g, leader[g]]
        led = suit[lead_card] if lead_card >= 0 else -1
        led_suit[g] = led
        for p in range(P):
            for s in range(4):
                void[g, p, s] = has_pub and pub_void[g, (seat[g] + p) % P, s]
        mark_trick_voids(trick, g, led, suit, void)
        for p in range(P):
            bids[g, p] = argmax_at(obs, g, o.bids + n_bid_slots * p, n_bid_slots) - 1
            taken[g, p] = np.int64(np.rint(obs[g, o.taken + p] * np.float32(10)))
        trump_card[g] = argmax_at(obs, g, o.trump_card, N)
        trump[g] = argmax_at(obs, g, o.trump_suit, 4)
        dealer[g] = argmax_at(obs, g, o.dealer, P)
        hand_size[g] = argmax_at(obs, g, o.hand_size, o.max_bid) + 1


def facts_from_obs(cfg: Any, obs: np.ndarray, seat: np.ndarray, public: dict | None = None) -> Facts:
    """Facts from private Oh Hell observations; ``public["void"]`` (B, P, 4) absolute seats, if given."""
    layout = oh.layout(cfg)
    obs = np.ascontiguousarray(obs, dtype=np.float32)
    B, P = obs.shape[0], cfg.players
    if obs.ndim != 2 or obs.shape[1] != layout.size:
        raise ValueError(f"expected observations of shape (B, {layout.size}), got {obs.shape}")
    has_pub = public is not None and "void" in public
    pub = (
        np.ascontiguousarray(public["void"], dtype=np.bool_)
        if public is not None and has_pub
        else np.zeros((1, 1, 1), dtype=bool)
    )
    seat = np.ascontiguousarray(np.broadcast_to(np.asarray(seat, dtype=np.int64), (B,)))
    ints = lambda *shape: np.empty((B, *shape), dtype=np.int64)  # noqa: E731
    f = Facts(
        phase=ints(), hand=np.empty((B, N), dtype=bool), played=np.empty((B, N), dtype=bool), trump_card=ints(),
        trick=ints(P), leader=ints(), n_in_trick=ints(), led_suit=ints(), trump=ints(), bids=ints(P), taken=ints(P),
        dealer=ints(), hand_size=ints(), void=np.empty((B, P, 4), dtype=bool),
    )  # fmt: skip
    _facts_kernel(
        obs, obs_offsets(cfg), seat, pub, has_pub, SUIT,
        f.phase, f.hand, f.played, f.trump_card, f.trick, f.leader, f.n_in_trick, f.led_suit, f.trump, f.bids,
        f.taken, f.dealer, f.hand_size, f.void,
    )  # fmt: skip
    return f


def facts_from_state(cfg: Any, state: oh.State, seat: np.ndarray | None = None) -> Facts:
    """Facts of the seat to act (or ``seat``) from a full state; voids from the current trick only."""
    P = cfg.players
    B = state.batch_size
    b = np.arange(B)
    me = (state.cur if seat is None else np.asarray(seat)).astype(np.int64)
    absolute = (me[:, None] + np.arange(P)[None, :]) % P
    trick = state.trick[b[:, None], absolute].astype(np.int64)
    led = state.led_suit.astype(np.int64)
    return Facts(
        phase=state.phase.astype(np.int64),
        hand=state.hands[b, me],
        played=state.played,
        trump_card=state.trump_card.astype(np.int64),
        trick=trick,
        leader=(state.leader.astype(np.int64) - me) % P,
        n_in_trick=state.n_in_trick.astype(np.int64),
        led_suit=led,
        trump=np.maximum(state.trump, 0),
        bids=state.bids[b[:, None], absolute].astype(np.int64),
        taken=state.taken[b[:, None], absolute].astype(np.int64),
        dealer=(state.dealer.astype(np.int64) - me) % P,
        hand_size=state.hand_size.astype(np.int64),
        void=trick_voids(trick, led, OH_HELL_DECK),
    )


def _nearest_legal_bid(estimate: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The legal bid nearest a real-valued estimate (ties: the side the estimate leans to)."""
    bids = np.arange(oh.MAX_BID + 1, dtype=np.float64)
    legal = mask[:, oh.BID_BASE :]
    dist = np.abs(bids[None, :] - estimate[:, None]) + 1e-6 * bids[None, :]
    return oh.BID_BASE + np.argmin(np.where(legal, dist, np.inf), axis=1)


def decide(f: Facts, mask: np.ndarray, bid_fn: Any, play_fn: Any) -> np.ndarray:
    """Route rows to the bid or the play decision; always a legal action."""
    B = mask.shape[0]
    out = np.argmax(mask, axis=1)
    for phase in (oh.BID, oh.PLAY):
        rows = np.nonzero(f.phase == phase)[0]
        if not rows.size:
            continue
        whole = rows.size == B  # a training batch is all in one phase: no copy
        sub = f if whole else _take(f, rows)
        if phase == oh.BID:
            out[rows] = _nearest_legal_bid(bid_fn(sub), mask if whole else mask[rows])
        else:
            out[rows] = play_fn(sub)
    bad = ~mask[np.arange(B), out]
    out[bad] = np.argmax(mask[bad], axis=1)
    return out


def _take(f: Facts, rows: np.ndarray) -> Facts:
    return Facts(**{k: v[rows] for k, v in f.__dict__.items()})


# what _kernel_args returns: eleven arrays (a type checker counts the arguments a kernel gets after them)
_KernelArgs = tuple[
    np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray,
    np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray,
]  # fmt: skip


def _kernel_args(f: Facts) -> _KernelArgs:
    """The Facts arrays the kernels read, contiguous and int64/bool (one compiled signature)."""
    c = np.ascontiguousarray
    return (
        c(f.hand, dtype=bool), c(f.played, dtype=bool), c(f.trump_card, dtype=np.int64), c(f.trick, dtype=np.int64),
        c(f.leader, dtype=np.int64), c(f.n_in_trick, dtype=np.int64), c(f.led_suit, dtype=np.int64),
        c(f.trump, dtype=np.int64), c(f.bids, dtype=np.int64), c(f.taken, dtype=np.int64), c(f.void, dtype=bool),
    )  # fmt: skip


# --------------------------------------------------------------------------
# simple
def simple_bid(f: Facts) -> np.ndarray:
    """Aces and kings, plus trumps queen or better."""
    high = f.hand & (RANK[None, :] >= 11)
    trump_high = f.hand & (SUIT[None, :] == f.trump[:, None]) & (RANK[None, :] == 10)
    return (high.sum(axis=1) + trump_high.sum(axis=1)).astype(np.float64)


@njit(cache=True, nogil=True)
def _simple_play_kernel(
    hand, played, trump_card, trick, leader, n_in_trick, led_suit, trump, bids, taken, void, suit, rank, out
):  # fmt: skip
    """Card of the simple strategy for each row (see :func:`simple_play`)."""
    B = trick.shape[0]
    hands, legal = hand.reshape((B, 1, N)), np.empty((B, N), dtype=np.bool_)
    score = np.empty(N)
    for g in range(B):
        led, tr = led_suit[g], trump[g]
        follow_suit_row(hands, g, 0, led, suit, legal)
        best, _ = trick_winner_so_far(trick, g, led, tr, suit, rank)
        want = bids[g, 0] - taken[g, 0] > 0  # still needs tricks
        for c in range(N):
            r = np.float64(rank[c])
            beats = card_strength(c, led, tr, suit, rank) > best
            if n_in_trick[g] == 0:
                score[c] = r if want else -r
            elif want:
                score[c] = 100 + r if beats else -r
            else:
                score[c] = -100 - r if beats else r
        out[g] = pick_row(score, legal, g)


def simple_play(f: Facts) -> np.ndarray:
    """Short of the bid: win with the highest card that beats the trick, else the lowest; on it: duck."""
    out = np.empty(f.trick.shape[0], dtype=np.int64)
    _simple_play_kernel(*_kernel_args(f), SUIT, RANK, out)
    return out


# --------------------------------------------------------------------------
# strong
@njit(cache=True, nogil=True)
def _win_chances(
    g, hand, played, trump_card, trick, trump, void, hand_size, suit, rank,
    seen, above, higher, held, unseen_s, opp_s, p_ruff, p_void, p_trump, p_win,
):  # fmt: skip
    """Card counting for row ``g``; fills the arrays after ``rank``, returns the unseen count (>= 1).

    seen (52,): cards in my hand, played, in the trick or turned up (the rest
    are unseen); above (4, 14): scratch for :func:`count_unseen`; higher
    (52,): unseen cards of the same suit ranked higher; held (P,): cards each
    seat still holds; unseen_s (4,): unseen cards per suit; opp_s
    (4,): cards held by opponents not void in the suit; p_ruff (4,): chance an
    opponent void in the suit ruffs it; p_void (P, 4): chance a seat holds no
    card of a suit; p_trump (P,): chance a seat holds a trump; p_win (52,):
    chance each card in hand takes a trick it leads.
    """
    P = trick.shape[1]
    mark_seen(hand, played, trick, g, seen)
    if trump_card[g] >= 0:
        seen[trump_card[g]] = True
    n_unseen = count_unseen(seen, suit, rank, above, unseen_s, higher)
    n_hand = n_played = 0
    for c in range(N):
        n_hand += hand[g, c]
        n_played += played[g, c]
    tricks_done = n_played // P
    for p in range(P):
        held[p] = hand_size[g] - tricks_done - (trick[g, p] >= 0)
    held[0] = n_hand
    n = np.float64(max(n_unseen, 1))
    t = trump[g]
    for p in range(P):
        for s in range(4):
            p_void[p, s] = 1.0 if void[g, p, s] else none_of(unseen_s[s], n, held[p])
        p_trump[p] = 0.0 if void[g, p, t] else 1 - none_of(unseen_s[t], n, held[p])
    for s in range(4):
        x = 0.0
        for p in range(1, P):
            x += held[p] * (not void[g, p, s])
        opp_s[s] = x
        prod = 1.0
        for p in range(1, P):
            prod *= 1 - p_void[p, s] * p_trump[p]
        p_ruff[s] = 1 - prod
    for c in range(N):
        if not hand[g, c]:
            p_win[c] = 0.0
            continue
        p_top = none_of(opp_s[suit[c]], n, higher[c])  # (1 - q) ** higher, q = min(opp_s / n, 1)
        p_win[c] = p_top if suit[c] == t else p_top * (1 - p_ruff[suit[c]])
    return n


@njit(cache=True, nogil=True)
def _expected_tricks(g, hand, trump, suit, p_win, players, cnt):
    """Tricks row ``g``'s hand should still take: its cards' chances plus ruffs with spare trumps.

    cnt (4,) is scratch space.
    """
    t = trump[g]
    n_left = 0.0
    for s in range(4):
        cnt[s] = 0.0
    for c in range(N):
        cnt[suit[c]] += hand[g, c]
        n_left += hand[g, c]
    short_sum = 0.0
    for s in range(4):  # suits I am short in: tricks of them others lead that I can ruff with a spare trump
        short_sum += 0.0 if s == t else max(n_left / 4 - cnt[s], 0.0)
    trump_wins = all_wins = 0.0
    for c in range(N):
        all_wins += p_win[c]
        if suit[c] == t:
            trump_wins += p_win[c]
    spare = max(cnt[t] - trump_wins, 0.0)
    ruffs = min(short_sum, spare) * (0.5 if players > 3 else 0.6)
    return all_wins + ruffs


@njit(cache=True, nogil=True)
def _strong_bid_kernel(
    hand, played, trump_card, trick, leader, n_in_trick, led_suit, trump, bids, taken, void, hand_size, suit,
    rank, bias, out,
):  # fmt: skip
    """The strong bid estimate of each row (see :func:`strong_bid`)."""
    B, P = trick.shape
    seen, above = np.empty(N, dtype=np.bool_), np.empty((4, 14), dtype=np.int64)
    higher, p_win = np.empty(N), np.empty(N)
    held, p_trump = np.empty(P), np.empty(P)
    unseen_s, opp_s, p_ruff, cnt = np.empty(4), np.empty(4), np.empty(4), np.empty(4)
    p_void = np.empty((P, 4))
    for g in range(B):
        _win_chances(
            g, hand, played, trump_card, trick, trump, void, hand_size, suit, rank,
            seen, above, higher, held, unseen_s, opp_s, p_ruff, p_void, p_trump, p_win,
        )  # fmt: skip
        out[g] = _expected_tricks(g, hand, trump, suit, p_win, P, cnt) + bias


BID_BIAS = -0.1  # the estimate is shaded down a little: an extra trick costs the bonus as surely as one too few


def strong_bid(f: Facts) -> np.ndarray:
    """(B,) real-valued bid estimates: the tricks the hand should take, shaded by ``BID_BIAS``."""
    out = np.empty(f.trick.shape[0])
    _strong_bid_kernel(*_kernel_args(f), np.ascontiguousarray(f.hand_size, dtype=np.int64), SUIT, RANK,
                       float(BID_BIAS), out)  # fmt: skip
    return out


@njit(cache=True, nogil=True)
def _strong_play_kernel(
    hand, played, trump_card, trick, leader, n_in_trick, led_suit, trump, bids, taken, void, hand_size, suit, rank,
    out,
):  # fmt: skip
    """Card of the strong strategy for each row (see :func:`strong_play`)."""
    B, P = trick.shape
    seen, above = np.empty(N, dtype=np.bool_), np.empty((4, 14), dtype=np.int64)
    higher, p_win, score = np.empty(N), np.empty(N), np.empty(N)
    held, p_trump = np.empty(P), np.empty(P)
    unseen_s, opp_s, p_ruff, cnt, held_after = np.empty(4), np.empty(4), np.empty(4), np.empty(4), np.empty(4)
    p_void = np.empty((P, 4))
    hands, legal = hand.reshape((B, 1, N)), np.empty((B, N), dtype=np.bool_)
    after = np.empty(P, dtype=np.bool_)
    for g in range(B):
        n_unseen = _win_chances(
            g, hand, played, trump_card, trick, trump, void, hand_size, suit, rank,
            seen, above, higher, held, unseen_s, opp_s, p_ruff, p_void, p_trump, p_win,
        )  # fmt: skip
        led, t = led_suit[g], trump[g]
        follow_suit_row(hands, g, 0, led, suit, legal)
        need = bids[g, 0] - taken[g, 0]
        expect = _expected_tricks(g, hand, trump, suit, p_win, P, cnt)
        lead = n_in_trick[g] == 0
        best, _ = trick_winner_so_far(trick, g, led, t, suit, rank)
        # chance a card holds against the seats still to play
        pos = (0 - leader[g]) % P
        for p in range(P):
            after[p] = 0 < p <= P - 1 - pos
        for s in range(4):
            x = 0.0
            for p in range(P):
                x += held[p] * (not void[g, p, s]) * after[p]
            held_after[s] = x  # cards of the suit the later seats may hold (over the unseen count)
        trumped = False
        for p in range(P):
            if trick[g, p] >= 0 and suit[trick[g, p]] == t:
                trumped = True
        spare = expect - need  # expected tricks beyond the need
        for c in range(N):
            if not legal[g, c]:  # only legal cards' scores are read
                continue
            r = np.float64(rank[c])
            beats = card_strength(c, suit[c] if lead else led, t, suit, rank) > best
            p_no_higher = none_of(held_after[suit[c]], n_unseen, higher[c])
            lc = suit[c] if lead else led
            prod = 1.0
            for p in range(P):
                prod *= 1 - p_void[p, lc] * p_trump[p] * after[p]
            p_ruff_c = 1 - prod
            p_hold = p_no_higher if suit[c] == t or trumped else p_no_higher * (1 - p_ruff_c)
            p_take = p_hold if beats else 0.0
            pw = p_win[c]
            if lead:
                if need > 0 or need < 0:  # short of the bid or over it: lead the surest winner
                    v = 100 * pw + 0.1 * r
                else:  # on the bid: the safest low card
                    v = -100 * pw - r
            elif need > 0:  # short: take with the cheapest card that holds, keep sure winners if there is spare
                v = 200 + 50 * p_take - r - 20 * pw * (spare > 0.5) if p_take >= 0.5 else -r
            elif need == 0:  # on the bid: lose with the highest card that surely loses, else the lowest
                v = -100 * p_take - r if beats and p_take > 0.0 else r + 30 * pw
            else:  # over the bid: every trick is a point
                v = 100 * p_take - r if beats else -r
            score[c] = v
        out[g] = pick_row(score, legal, g)


def strong_play(f: Facts) -> np.ndarray:
    """Card play of the strong strategy (see the module docstring)."""
    out = np.empty(f.trick.shape[0], dtype=np.int64)
    hand_size = np.ascontiguousarray(f.hand_size, dtype=np.int64)
    _strong_play_kernel(*_kernel_args(f), hand_size, SUIT, RANK, out)
    return out


def choose_simple(cfg: Any, f: Facts, mask: np.ndarray) -> np.ndarray:
    """The simple strategy's action for each row of facts (``mask``: bool, the legal actions)."""
    return decide(f, mask, simple_bid, simple_play)


def choose_strong(cfg: Any, f: Facts, mask: np.ndarray) -> np.ndarray:
    """The strong strategy's action for each row of facts (``mask``: bool, the legal actions)."""
    return decide(f, mask, strong_bid, strong_play)


SimpleAgent = heuristic_agent(
    "oh_hell", "simple", facts_from_obs, choose_simple, needs_public=False,
    doc="Count high cards, then win until the bid is made and duck after (module docstring).",
)  # fmt: skip
StrongAgent = heuristic_agent(
    "oh_hell", "strong", facts_from_obs, choose_strong, needs_public=True,
    doc="Card counting, estimated tricks, hook-aware bids and bid-driven play (module docstring).",
)  # fmt: skip


def simple_state_policy(cfg: Any, state: oh.State, mask: np.ndarray) -> np.ndarray:
    """The simple strategy on full states (a playout policy)."""
    return choose_simple(cfg, facts_from_state(cfg, state), mask)


def strong_state_policy(cfg: Any, state: oh.State, mask: np.ndarray) -> np.ndarray:
    """The strong strategy on full states (a playout policy)."""
    return choose_strong(cfg, facts_from_state(cfg, state), mask)
