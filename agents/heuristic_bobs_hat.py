"""Hand-written strategies for Where's Bob's Hat?: ``simple`` and ``strong``.

Both are batched: they read B observations at once into :class:`Facts`
(arrays with seats relative to the acting player, 0 = me) and decide for the
whole batch in one call. The same decision functions also run on a full
:class:`~bobshat_env.core.bobs_hat.State` (:func:`facts_from_state`), which is
how the search bot uses them as fast playout policies.

Speed: reading the observations and the card play of both bots are compiled
loops over the rows (numba); the hat choice and the bids, one decision in
about ten, stay NumPy over the batch. A training run calls these bots for
every opponent decision, so their cost per decision bounds its throughput;
the compiled play costs a few µs per decision where the NumPy formulas it
replaced cost ~37 µs. The rules they apply (who wins a trick, follow-suit,
voids, card counting) are the core's own helpers
(:mod:`bobshat_env.core.tricks`); ``tests/test_golden.py`` pins their
decisions.

``simple`` (:class:`SimpleAgent`)
    Bids from counts: "most" of every suit where it holds at least a fair
    share of the cards with two or more high ones (or length in trump);
    "fewest" with a hand of low cards and nothing to bid; else the best suit.
    As dealer it picks +10 with two or more cards of rank 16 or more.
    In play it tries to win tricks whose cards it wants (suits it bid, and
    its own leads of those suits) with its highest card, and otherwise plays
    its lowest card; a fewest bidder ducks with the highest card that loses.

``strong`` (:class:`StrongAgent`)
    Counts cards: for each of its cards, how many unseen cards of the suit are
    higher, and which seats have shown a void (from the current trick, and
    from the whole hand when the arena provides the public void record).
    From that it estimates each card's chance to take a trick, and from those
    the expected tricks and cards of each suit it will take.
    Bidding: every bid card's expected score (most: ``p (5 + n) - 5 (1 - p)``
    with ``p`` from its expected share of the suit against the best
    opponent and the earlier bids; fewest: ``size (2p - 1)``), bidding all
    with positive value (never fewest with a most bid), or the best one.
    Hat: +10 if it expects to take more than its share of the tricks (and so
    the last hat card), else -10.
    Play: values who takes the current trick, for itself and against the
    opponents (cards of suits it bid, cards of suits an opponent bid, fewest
    bidders taking a trick, the hat), and estimates each legal card's chance
    to hold the trick against the seats still to play. Leading, it plays the
    top card of a suit it bid (which wins or draws out the opponents' high
    cards), else a low card of a suit no opponent collects, a fewest bidder
    its safest low card. Following, it takes the trick when that is worth it
    with the cheapest card likely to hold; otherwise it sheds the card worth
    least later, discarding other suits than its own, dumping a hat card onto
    someone else's trick under -10, a fewest bidder its highest losing card.
"""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit

from bobshat_env.core import bobs_hat as bh
from bobshat_env.core.bobs_hat import ObsOffsets, hand_size_of, obs_offsets
from bobshat_env.core.cards import BH_IS_HAT_CARD, BH_N_CARDS, BOBS_HAT_DECK
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

SUIT = BOBS_HAT_DECK.suit_of.astype(np.int64)  # (60,)
RANK = BOBS_HAT_DECK.rank_of.astype(np.int64)  # (60,) 0..19 (rank - 1)
HAT_CARD = BH_IS_HAT_CARD
SUIT_ONEHOT = (SUIT[:, None] == np.arange(3)[None, :]).astype(np.float64)  # (60, 3)
NEG = -1e9


@dataclass
class Facts:
    """What the acting player knows, batched; seats relative (0 = me, 1 = next clockwise)."""

    phase: np.ndarray  # (B,) bh.HAT / BID / PLAY
    hand: np.ndarray  # (B, 60) bool
    played: np.ndarray  # (B, 60) bool: completed tricks this hand
    trick: np.ndarray  # (B, P) int64: card of each relative seat in the current trick, -1 none
    leader: np.ndarray  # (B,) relative seat leading the trick
    n_in_trick: np.ndarray  # (B,)
    led_suit: np.ndarray  # (B,) -1 when leading
    trump: np.ndarray  # (B,) 0-2, 3 none
    bids: np.ndarray  # (B, P) int64 codes, -1 not bid yet (or hidden)
    taken: np.ndarray  # (B, P, 3) int64
    hat_value: np.ndarray  # (B,) +10 / -10 / 0
    hat_holder: np.ndarray  # (B,) relative seat, -1 centre
    dealer: np.ndarray  # (B,) relative seat
    hand_size: np.ndarray  # (B,)
    void: np.ndarray  # (B, P, 3) bool: seat known to hold no card of the suit

    @property
    def players(self) -> int:
        return int(self.trick.shape[1])


# --------------------------------------------------------------------------
# Facts from observations: one compiled pass over the rows
@njit(cache=True, nogil=True)
def _facts_kernel(
    obs, offsets, seat, pub_void, has_pub, suit,
    phase, hand, played, trick, leader, n_in_trick, led_suit, trump, bids, taken,
    hat_value, hat_holder, dealer, hand_size, void,
):  # fmt: skip
    """Fill the Facts arrays (after ``suit``) from private observations; see :func:`facts_from_obs`.

    ``offsets``: the layout's :class:`~bobshat_env.core.bobs_hat.ObsOffsets` as a plain tuple."""
    o = ObsOffsets(*offsets)
    B, P = trick.shape
    half = np.float32(0.5)
    for g in range(B):
        phase[g] = argmax_at(obs, g, o.phase, 3) if any_at(obs, g, o.phase, 3) else bh.DONE
        for c in range(60):
            hand[g, c] = obs[g, o.hand + c] > half
            played[g, c] = obs[g, o.played + c] > half
        count = 0
        for p in range(P):
            start = o.trick + p * 60
            trick[g, p] = argmax_at(obs, g, start, 60) if any_at(obs, g, start, 60) else -1
            count += trick[g, p] >= 0
        n_in_trick[g] = count
        leader[g] = argmax_at(obs, g, o.leader, P)
        lead_card = trick[g, leader[g]]
        led = suit[lead_card] if lead_card >= 0 else -1
        led_suit[g] = led
        for p in range(P):
            for s in range(3):
                void[g, p, s] = has_pub and pub_void[g, (seat[g] + p) % P, s]
        mark_trick_voids(trick, g, led, suit, void)
        for p in range(P):
            b = o.bids + 6 * p
            if obs[g, b + 5] > half:
                code = obs[g, b] + 2 * obs[g, b + 1] + 4 * obs[g, b + 2] + 8 * (obs[g, b + 3] + obs[g, b + 4])
                bids[g, p] = np.int64(np.rint(code))
            else:
                bids[g, p] = -1
            for s in range(3):
                taken[g, p, s] = np.int64(np.rint(obs[g, o.taken + 3 * p + s] * np.float32(20)))
        trump[g] = argmax_at(obs, g, o.trump, 4)
        hat_holder[g] = argmax_at(obs, g, o.hat_holder, P + 1) - 1
        if obs[g, o.hat_value] > half:
            hat_value[g] = 10
        elif obs[g, o.hat_value + 1] > half:
            hat_value[g] = -10
        else:
            hat_value[g] = 0
        dealer[g] = argmax_at(obs, g, o.dealer, P)
        hand_size[g] = hand_size_of(argmax_at(obs, g, o.hand_number, o.n_hand_number), o.size_base)


def facts_from_obs(cfg: Any, obs: np.ndarray, seat: np.ndarray, public: dict | None = None) -> Facts:
    """Facts from private observations (B, D); ``public["void"]`` (B, P, 3) absolute, if given."""
    layout = bh.layout(cfg)
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
        phase=ints(), hand=np.empty((B, 60), dtype=bool), played=np.empty((B, 60), dtype=bool), trick=ints(P),
        leader=ints(), n_in_trick=ints(), led_suit=ints(), trump=ints(), bids=ints(P), taken=ints(P, 3),
        hat_value=ints(), hat_holder=ints(), dealer=ints(), hand_size=ints(), void=np.empty((B, P, 3), dtype=bool),
    )  # fmt: skip
    _facts_kernel(
        obs, obs_offsets(cfg), seat, pub, has_pub, SUIT,
        f.phase, f.hand, f.played, f.trick, f.leader, f.n_in_trick, f.led_suit, f.trump, f.bids, f.taken,
        f.hat_value, f.hat_holder, f.dealer, f.hand_size, f.void,
    )  # fmt: skip
    return f


def facts_from_state(cfg: Any, state: bh.State, seat: np.ndarray | None = None) -> Facts:
    """Facts of the seat to act (or ``seat``) read from a full state; voids from the current trick only."""
    P = cfg.players
    B = state.batch_size
    b = np.arange(B)
    me = (state.cur if seat is None else np.asarray(seat)).astype(np.int64)
    absolute = (me[:, None] + np.arange(P)[None, :]) % P
    trick = state.trick[b[:, None], absolute].astype(np.int64)
    led = state.led_suit.astype(np.int64)
    holder = state.hat_holder.astype(np.int64)
    return Facts(
        phase=state.phase.astype(np.int64),
        hand=state.hands[b, me],
        played=state.played,
        trick=trick,
        leader=(state.leader.astype(np.int64) - me) % P,
        n_in_trick=state.n_in_trick.astype(np.int64),
        led_suit=led,
        trump=state.trump.astype(np.int64),
        bids=state.bids[b[:, None], absolute].astype(np.int64),
        taken=state.taken[b[:, None], absolute].astype(np.int64),
        hat_value=state.hat_value.astype(np.int64),
        hat_holder=np.where(holder >= 0, (holder - me) % P, -1),
        dealer=(state.dealer.astype(np.int64) - me) % P,
        hand_size=state.hand_size.astype(np.int64),
        void=trick_voids(trick, led, BOBS_HAT_DECK),
    )


# --------------------------------------------------------------------------
# Shared helpers
def wants(f: Facts) -> tuple[np.ndarray, np.ndarray]:
    """(B, P, 3) bool most bids and (B, P) int fewest multiplicity, relative seats (unbid = nothing)."""
    code = np.maximum(f.bids, 0)
    most = ((code[:, :, None] >> np.arange(3)) & 1).astype(bool) & (f.bids >= 0)[:, :, None]
    return most, np.where(f.bids >= 0, code // 8, 0)


def bid_action(code: np.ndarray) -> np.ndarray:
    return bh.BID_BASE + np.asarray(code, dtype=np.int64)


def _fit_bid(code: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The chosen bid code if legal, else the legal code closest to it (no-bid only when nothing else)."""
    legal = mask[:, bh.BID_BASE :]
    ok = legal[np.arange(code.shape[0]), code]
    if ok.all():
        return code
    codes = np.arange(bh.N_BID_CODES)
    dist = np.abs(codes[None, :] - code[:, None]) + 100 * (codes[None, :] == 0)
    alt = np.argmin(np.where(legal, dist, 10**6), axis=1)
    return np.where(ok, code, alt)


# The Facts arrays the play and bid kernels read, by name. A kernel takes them as the plain tuple of
# :func:`_play_args` (numba types a plain tuple of arrays at the call quickly) and rebuilds this named
# tuple inside, as the core's step kernels do with their state.
PlayFacts = namedtuple(
    "PlayFacts",
    "hand played trick leader n_in_trick led_suit trump bids taken hat_value hat_holder hand_size void",
)


def _play_args(f: Facts) -> tuple[np.ndarray, ...]:
    """The Facts arrays the kernels read (:data:`PlayFacts` order), contiguous and int64/bool (one
    compiled signature)."""
    c = np.ascontiguousarray
    return (
        c(f.hand, dtype=bool), c(f.played, dtype=bool), c(f.trick, dtype=np.int64), c(f.leader, dtype=np.int64),
        c(f.n_in_trick, dtype=np.int64), c(f.led_suit, dtype=np.int64), c(f.trump, dtype=np.int64),
        c(f.bids, dtype=np.int64), c(f.taken, dtype=np.int64), c(f.hat_value, dtype=np.int64),
        c(f.hat_holder, dtype=np.int64), c(f.hand_size, dtype=np.int64), c(f.void, dtype=bool),
    )  # fmt: skip


# --------------------------------------------------------------------------
# simple
def simple_hat(f: Facts) -> np.ndarray:
    """+10 with two or more cards of rank 16+, else -10."""
    high = (f.hand & (RANK[None, :] >= 15)).sum(axis=1)
    return np.where(high >= 2, bh.HAT_PLUS, bh.HAT_MINUS)


def simple_bid_code(f: Facts) -> np.ndarray:
    """Bid code from counts of cards and high cards per suit."""
    n = f.hand_size
    cnt = f.hand.astype(np.int64) @ SUIT_ONEHOT.astype(np.int64)  # (B, 3)
    high = (f.hand & (RANK[None, :] >= 14)).astype(np.int64) @ SUIT_ONEHOT.astype(np.int64)
    is_trump = np.arange(3)[None, :] == f.trump[:, None]
    fair = n[:, None] / 3.0
    good = ((cnt >= fair + 1) & (high >= 2)) | (is_trump & (cnt >= fair) & (high >= 1))
    bits = (good * (1 << np.arange(3))[None, :]).sum(axis=1)
    low = (f.hand & (RANK[None, :] <= 7)).sum(axis=1)
    best = np.argmax(cnt + 2 * high + 2 * is_trump, axis=1)
    code = np.where(bits > 0, bits, np.where(2 * low >= n, 8, 1 << best))
    return code


@njit(cache=True, nogil=True)
def _simple_play_kernel(facts, suit, rank, out):
    """Card of the simple strategy for each row (see :func:`simple_play`)."""
    f = PlayFacts(*facts)
    hand, trick, n_in_trick, led_suit, trump, bids = f.hand, f.trick, f.n_in_trick, f.led_suit, f.trump, f.bids
    B, P = trick.shape
    hands, legal = hand.reshape((B, 1, 60)), np.empty((B, 60), dtype=np.bool_)
    score = np.empty(60)
    my_most = np.empty(3, dtype=np.bool_)
    for g in range(B):
        led, tr = led_suit[g], trump[g]
        follow_suit_row(hands, g, 0, led, suit, legal)
        code = max(bids[g, 0], 0)
        for s in range(3):
            my_most[s] = bids[g, 0] >= 0 and (code >> s) & 1 == 1
        few = code >= 8 and not (my_most[0] or my_most[1] or my_most[2])
        best, _ = trick_winner_so_far(trick, g, led, tr, suit, rank)
        interesting = False  # the trick holds cards of a suit I bid (the suit led counts: followers bring it)
        for p in range(P):
            if trick[g, p] >= 0 and my_most[suit[trick[g, p]]]:
                interesting = True
        leading = n_in_trick[g] == 0
        for c in range(60):
            r = np.float64(rank[c])
            wanted = my_most[suit[c]]
            beats = card_strength(c, led, tr, suit, rank) > best
            if leading:  # lead: my suit high, else low
                v = -r if few else (100 + r if wanted else -r)
            elif few:  # fewest: the highest card that loses, else the highest
                v = r if beats else 100 + r
            elif interesting:
                v = 100 + r if beats else -r
            else:
                v = -r + (0.0 if wanted else 0.5)
            score[c] = v
        out[g] = pick_row(score, legal, g)


def simple_play(f: Facts) -> np.ndarray:
    """Card ids: win wanted tricks with the highest card, else the lowest; fewest ducks."""
    out = np.empty(f.trick.shape[0], dtype=np.int64)
    _simple_play_kernel(_play_args(f), SUIT, RANK, out)
    return out


def decide(cfg: Any, f: Facts, mask: np.ndarray, hat_fn: Any, bid_fn: Any, play_fn: Any) -> np.ndarray:
    """Route each row to the hat, bid or play decision by its phase; always a legal action."""
    B = mask.shape[0]
    out = np.zeros(B, dtype=np.int64)
    for phase, fn in ((bh.HAT, hat_fn), (bh.BID, bid_fn), (bh.PLAY, play_fn)):
        rows = np.nonzero(f.phase == phase)[0]
        if not rows.size:
            continue
        whole = rows.size == B  # a training batch is all in one phase: no copy
        sub = f if whole else take_facts(f, rows)
        if phase == bh.BID:
            out[rows] = bid_action(_fit_bid(fn(sub), mask if whole else mask[rows]))
        else:
            out[rows] = fn(sub)
    # Anything not legal (should not happen) falls back to the first legal action.
    bad = ~mask[np.arange(B), out]
    if bad.any():
        out[bad] = np.argmax(mask[bad], axis=1)
    return out


def take_facts(f: Facts, rows: np.ndarray) -> Facts:
    return Facts(**{k: v[rows] for k, v in f.__dict__.items()})


# --------------------------------------------------------------------------
# strong: card counting and estimates
Counting = namedtuple("Counting", "seen above higher held frac unseen_s opp_s p_ruff p_void p_trump p_win_lead")


@njit(cache=True, nogil=True)
def _counting(P: int) -> Counting:
    """Scratch arrays for :func:`_estimate` at a table of ``P`` seats."""
    return Counting(
        np.empty(60, dtype=np.bool_), np.empty((3, 21), dtype=np.int64), np.empty(60), np.empty(P), np.empty(3),
        np.empty(3), np.empty(3), np.empty(3), np.empty((P, 3)), np.empty(P), np.empty(60),
    )  # fmt: skip


@njit(cache=True, nogil=True)
def _estimate(
    g, hand, played, trick, trump, hand_size, void, suit, rank,
    seen, above, higher, held, frac, unseen_s, opp_s, p_ruff, p_void, p_trump, p_win_lead,
):  # fmt: skip
    """Card counting for row ``g``; fills the arrays after ``rank`` (a :data:`Counting`) and returns the
    unseen count (>= 1).

    seen (60,): cards in my hand, played or in the trick (the rest are
    unseen); above (3, 21): scratch for :func:`count_unseen`; higher (60,):
    unseen cards of the same suit ranked higher; held (P,): cards each seat
    still holds; frac (3,): share of each suit among the unseen; unseen_s
    (3,): unseen cards per suit; opp_s (3,): cards held by opponents not void
    in the suit; p_ruff (3,): chance an opponent void in the suit ruffs it;
    p_void (P, 3): chance a seat holds no card of a suit (a seat with k cards
    drawn from the unseen: ``(1 - frac) ** k``); p_trump (P,): chance a seat
    holds a trump; p_win_lead (60,): chance each of my cards takes a trick it
    leads (or follows in suit).
    """
    P = trick.shape[1]
    mark_seen(hand, played, trick, g, seen)
    n_unseen = count_unseen(seen, suit, rank, above, unseen_s, higher)
    n_hand = n_played = 0
    for c in range(60):
        n_hand += hand[g, c]
        n_played += played[g, c]
    tricks_done = n_played // P
    for p in range(P):
        held[p] = hand_size[g] - tricks_done - (trick[g, p] >= 0)
    held[0] = n_hand
    n = np.float64(max(n_unseen, 1))
    for s in range(3):
        frac[s] = unseen_s[s] / n
    for p in range(P):
        for s in range(3):
            p_void[p, s] = 1.0 if void[g, p, s] else none_of(unseen_s[s], n, held[p])
    has_trump = trump[g] < 3
    t = min(trump[g], 2)
    for p in range(P):
        v = 1 - none_of(unseen_s[t], n, held[p]) if has_trump else 0.0
        p_trump[p] = 0.0 if void[g, p, t] and has_trump else v
    p_trump[0] = 0.0
    for s in range(3):
        x = 0.0
        for p in range(1, P):
            x += held[p] * (not void[g, p, s])
        opp_s[s] = x
        prod = 1.0
        for p in range(1, P):
            prod *= 1 - p_void[p, s] * p_trump[p]
        p_ruff[s] = 1 - prod
    for c in range(60):
        if not hand[g, c]:
            p_win_lead[c] = 0.0
            continue
        s = suit[c]
        p_top = none_of(opp_s[s], n, higher[c])  # (1 - q) ** higher, q = min(opp_s / n, 1)
        p_win_lead[c] = p_top * (1 - p_ruff[s]) if s != trump[g] else p_top
    return n


@njit(cache=True, nogil=True)
def _bid_inputs_kernel(facts, suit, rank, cards, tricks, total_s):
    """Per row: expected cards of each suit (B, 3) and tricks (B,) I take over the rest of the hand, and the
    expected number of cards of each suit in play (B, 3); see :func:`strong_bid_values`."""
    f = PlayFacts(*facts)
    hand, played, trump, taken, hand_size = f.hand, f.played, f.trump, f.taken, f.hand_size
    B, P = f.trick.shape
    tricks_s, my_cnt, played_s, short = np.empty(3), np.empty(3), np.empty(3), np.empty(3)
    seen, above, higher, held, frac, unseen_s, opp_s, p_ruff, p_void, p_trump, p_win_lead = _counting(P)
    for g in range(B):
        _estimate(
            g, hand, played, f.trick, trump, hand_size, f.void, suit, rank,
            seen, above, higher, held, frac, unseen_s, opp_s, p_ruff, p_void, p_trump, p_win_lead,
        )  # fmt: skip
        for s in range(3):
            my_cnt[s] = played_s[s] = 0.0
        for c in range(60):
            my_cnt[suit[c]] += hand[g, c]
            played_s[suit[c]] += played[g, c]
        for s in range(3):
            # a trick won with a card of suit s carries it and the followers' cards, mostly of suit s
            follow = 0.0
            for p in range(1, P):
                follow += 1 - p_void[p, s]
            tricks_s[s] = 0.0  # tricks I win with cards of each suit
            for c in range(60):
                if suit[c] == s:
                    tricks_s[s] += p_win_lead[c]
            cards[g, s] = tricks_s[s] * (1 + follow)
        # low trumps also ruff tricks of suits I am short in: they carry that suit's cards
        t = min(trump[g], 2)
        n = np.float64(hand_size[g])
        for s in range(3):
            short[s] = max(n / 3 - my_cnt[s], 0.0)  # tricks of a suit I cannot follow
        short[t] = 0.0
        short_sum = short[0] + short[1] + short[2]
        trump_left = my_cnt[t] - tricks_s[t]
        ruffs = min(short_sum, max(trump_left, 0.0)) * 0.6 * (trump[g] < 3)
        for s in range(3):
            share = short[s] / max(short_sum, 1e-9)
            cards[g, s] = cards[g, s] + ruffs * share * (P - 1) + taken[g, 0, s]
        tricks[g] = tricks_s[0] + tricks_s[1] + tricks_s[2] + ruffs
        held_others = 0.0
        for p in range(1, P):
            held_others += held[p]
        in_play_unseen = held_others / np.float64(max(unseen_s[0] + unseen_s[1] + unseen_s[2], 1.0))
        for s in range(3):  # cards of the suit in play: mine, played, and the unseen ones the others hold
            total_s[g, s] = my_cnt[s] + unseen_s[s] * in_play_unseen + played_s[s]


# strong: tunable constants (kept together so the benchmark can sweep them)
SHARE_SPREAD = 1.5  # best opponent's count vs the average opponent's
MOST_TEMP = 1.6  # softness (cards) of the made/missed estimate for most
FEWEST_TEMP = 0.6  # softness (tricks) for fewest
RIVAL_PENALTY = 2.0  # cards: an earlier bid on the same suit
KEEP_SCALE = 1.0  # weight of a card's value kept for later tricks
LEAD_SURE = 0.0  # lead a card of my suit when it takes the trick at least this often
FOLLOW_SURE = 0.45  # overtake with a card that holds the trick this often
TAKE_MIN = 0.5  # take a trick worth at least this much more than losing it


def strong_bid_values(f: Facts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Expected score of each most bid (B, 3) and of fewest (B,), and expected tricks (B,)."""
    P = f.players
    B = f.trick.shape[0]
    cards, tricks, total_s = np.empty((B, 3)), np.empty(B), np.empty((B, 3))
    _bid_inputs_kernel(_play_args(f), SUIT, RANK, cards, tricks, total_s)
    n = f.hand_size.astype(np.float64)
    others = np.clip(total_s - cards, 0, None)
    rival = others / (P - 1) * SHARE_SPREAD
    most, fewest = wants(f)
    earlier = most[:, 1:].sum(axis=1)  # (B, 3) opponents who bid most of s already
    margin = cards - rival - RIVAL_PENALTY * earlier
    p_most = 1 / (1 + np.exp(-margin / MOST_TEMP))
    v_most = p_most * (5 + cards) - 5 * (1 - p_most)
    # fewest: strictly fewer tricks than every opponent
    avg_other = (n - tricks) / (P - 1)
    low_other = np.maximum(avg_other - 0.8 * np.sqrt(np.maximum(avg_other, 0.1)), 0)
    p_few = 1 / (1 + np.exp(-(low_other - tricks - 0.5) / FEWEST_TEMP))
    p_few = p_few * np.where((fewest[:, 1:] > 0).any(axis=1), 0.5, 1.0)
    v_few = n * (2 * p_few - 1)
    return v_most, v_few, tricks


def strong_bid_code(f: Facts) -> np.ndarray:
    """All most bids with positive expected score, or fewest alone, or the single best bid card."""
    v_most, v_few, _ = strong_bid_values(f)
    pos = v_most > 0
    bits = (pos * (1 << np.arange(3))[None, :]).sum(axis=1)
    gain_most = np.where(pos, v_most, 0).sum(axis=1)
    best_suit = np.argmax(v_most, axis=1)
    best_most = v_most.max(axis=1)
    code = np.where(bits > 0, bits, 1 << best_suit)
    code = np.where((v_few > gain_most) & (v_few > best_most), 8, code)
    return code


def strong_hat(f: Facts) -> np.ndarray:
    """+10 if I expect more than my share of the tricks (so of the last hat card), else -10."""
    _, v_few, tricks = strong_bid_values(f)
    share = tricks / f.hand_size
    p = f.players
    plus = (share > 1.0 / p) & ~(v_few > 0)
    return np.where(plus, bh.HAT_PLUS, bh.HAT_MINUS)


@njit(cache=True, nogil=True)
def _strong_play_kernel(facts, suit, rank, hat_card, tuning, out):
    """Card of the strong strategy for each row (see :func:`strong_play`), phase by phase.

    The phases are inlined (numba's ``inline="always"``) and take the arrays
    they read and write one by one: numba counts references to every array
    a call receives, so handing each phase named tuples of all of them made
    the kernel much slower than the single loop it replaced; this way it
    costs a little more (docs/results/engineering.md, "The bots' kernels").
    """
    hand, played, trick, leader, n_in_trick, led_suit, trump, bids, taken, hat_value, hat_holder, hand_size, void = (
        PlayFacts(*facts)
    )
    keep_scale, lead_sure, follow_sure, take_min = tuning
    B, P = trick.shape
    seen, above, higher, held, frac, unseen_s, opp_s, p_ruff, p_void, p_trump, p_win_lead = _counting(P)
    hands, legal, cards = hand.reshape((B, 1, 60)), np.empty((B, 60), dtype=np.bool_), np.empty(60, np.int64)
    most, fewest, my_take = np.empty((P, 3), dtype=np.bool_), np.empty(P, np.int64), np.empty(P, np.int64)
    A, T, H, after, U = np.empty((P, 3)), np.empty(P), np.empty(P), np.empty(P, dtype=np.bool_), np.empty((60, P))
    beats, p_win, keep, shed, score = np.empty(60, np.bool_), np.empty(60), np.empty(60), np.empty(60), np.empty(60)
    later_led = np.empty(4)
    for g in range(B):
        n_unseen = _estimate(
            g, hand, played, trick, trump, hand_size, void, suit, rank,
            seen, above, higher, held, frac, unseen_s, opp_s, p_ruff, p_void, p_trump, p_win_lead,
        )  # fmt: skip
        led, tr = led_suit[g], trump[g]
        follow_suit_row(hands, g, 0, led, suit, legal)
        n_legal = 0
        for c in range(60):
            if legal[g, c]:
                cards[n_legal] = c  # only the legal cards' values are ever read
                n_legal += 1
        mine = cards[:n_legal]
        _read_bids(g, bids, taken, most, fewest, my_take)
        few_me = fewest[0] > 0
        hv = np.float64(hat_value[g])
        # what the trick is worth to me, by who takes it, and what it will hold
        holder_val, hat_unseen = _trick_values(g, hand, hand_size[g], hv, hat_holder[g], hat_card, seen, most,
                                               fewest, my_take, A, T, H)  # fmt: skip
        pos = (0 - leader[g]) % P  # my position in the trick
        for p in range(P):
            after[p] = 0 < p <= P - 1 - pos  # relative seats still to play
        later_hats = _followers(after, p_void, hat_unseen, n_unseen, later_led)
        _trick_outcomes(g, trick, led, suit, hat_card, mine, frac, later_led, later_hats, A, T, H, holder_val, U)
        # my chance to take it with each card, and each card's worth kept for later
        best_seat = _take_chances(g, trick, led, tr, n_in_trick[g] > 0, void, suit, rank, held, higher, p_void,
                                  p_trump, after, n_unseen, mine, beats, p_win)  # fmt: skip
        _keep_values(suit, rank, hat_card, hv, few_me, p_void, p_win_lead, A, T, keep_scale, mine, keep)
        # the card
        _score_cards(suit, rank, hat_card, hv < 0, n_in_trick[g] == 0, most, few_me, best_seat, U, p_win_lead,
                     beats, p_win, keep, lead_sure, follow_sure, take_min, mine, shed, score)  # fmt: skip
        out[g] = pick_row(score, legal, g)


@njit(cache=True, nogil=True, inline="always")
def _read_bids(g, bids, taken, most, fewest, my_take):
    """Each relative seat's most bids ``most`` (P, 3), fewest multiplicity and cards taken so far."""
    for p in range(bids.shape[1]):
        code = max(bids[g, p], 0)
        for s in range(3):
            most[p, s] = bids[g, p] >= 0 and (code >> s) & 1 == 1
        fewest[p] = code // 8 if bids[g, p] >= 0 else 0
        my_take[p] = taken[g, p, 0] + taken[g, p, 1] + taken[g, p, 2]


@njit(cache=True, nogil=True, inline="always")
def _trick_values(g, hand, hand_size, hv, holder, hat_card, seen, most, fewest, my_take, A, T, H):
    """What a trick is worth to me, by the relative seat r that takes it: ``A[r, s]`` per card of suit s
    in it, ``T[r]`` for taking a trick at all, ``H[r]`` for taking the hat (``hv``, held by ``holder``).
    Returns (the hat's value to me if it stays where it is, the hat cards unseen)."""
    P = most.shape[0]
    n = np.float64(hand_size)
    # one card of suit s going to relative seat r: A[r, s]; helping a rival (or a competitor of my suit) is bad
    for s in range(3):
        A[0, s] = 1.6 * most[0, s]
        for p in range(1, P):
            A[p, s] = -0.8 * most[p, s] - 0.5 * most[0, s]
    # taking a trick at all: bad for a fewest bidder (while it still leads the count), good to see an
    # opponent fewest bidder take one
    low_opp = my_take[1]
    for p in range(2, P):
        low_opp = min(low_opp, my_take[p])
    few_me = fewest[0] > 0
    still_low = my_take[0] <= low_opp
    T[0] = -((n * fewest[0]) * (0.9 if still_low else 0.2) if few_me else 0.0)
    for p in range(1, P):
        T[p] = 0.6 * n / (P - 1) * (fewest[p] > 0 and my_take[p] <= low_opp)
    # the hat: who takes a hat card now holds it; it matters fully once no hat card is left unseen
    hat_unseen = hat_hand = 0
    for c in range(60):
        if hat_card[c]:
            hat_unseen += not seen[c]
            hat_hand += hand[g, c]
    stick = 0.5 if hat_unseen + hat_hand > 0 else 1.0
    H[0] = hv * stick
    for p in range(1, P):
        H[p] = -hv * stick / (P - 1)
    return (hv if holder == 0 else (-hv / (P - 1) if holder > 0 else 0.0)) * stick, hat_unseen


@njit(cache=True, nogil=True, inline="always")
def _followers(after, p_void, hat_unseen, n_unseen, later_led):
    """``later_led[s]``: the expected followers of suit s among the seats still to play (``after``), and
    ``later_led[3]`` their number; returns the hat cards they are expected to add (they tend to hold those
    of the suit led)."""
    n_after = 0.0
    for s in range(3):
        x = 0.0
        for p in range(after.shape[0]):
            x += (1 - p_void[p, s]) * after[p]
        later_led[s] = x
    for p in range(after.shape[0]):
        n_after += after[p]
    later_led[3] = n_after
    hat_rate = hat_unseen / np.float64(max(n_unseen, 1.0))
    return n_after * hat_rate * 1.5


@njit(cache=True, nogil=True, inline="always")
def _trick_outcomes(g, trick, led, suit, hat_card, cards, frac, later_led, later_hats, A, T, H, holder_val, U):
    """``U[c, r]``: the value to me of relative seat r taking the trick if I play card ``c``: the cards in
    it now, plus the expected cards of the seats still to play (``later_led``: followers of each suit,
    then their number; the rest discard other suits), valued by :func:`_trick_values`."""
    P = trick.shape[1]
    hats_now = in0 = in1 = in2 = 0.0  # cards of each suit in the trick now
    for p in range(P):
        if trick[g, p] >= 0:
            s = suit[trick[g, p]]
            in0, in1, in2 = in0 + (s == 0), in1 + (s == 1), in2 + (s == 2)
            hats_now += hat_card[trick[g, p]]
    n_after = later_led[3]
    for c in cards:
        lc = led if led >= 0 else suit[c]  # the suit led (mine when leading)
        llc = later_led[lc]
        off = max(n_after - llc, 0.0)  # discards of other suits
        sh0, sh1, sh2 = frac[0] * (lc != 0), frac[1] * (lc != 1), frac[2] * (lc != 2)
        total = max(sh0 + sh1 + sh2, 1e-9)
        c0 = in0 + (suit[c] == 0) + llc * (lc == 0) + off * (sh0 / total)
        c1 = in1 + (suit[c] == 1) + llc * (lc == 1) + off * (sh1 / total)
        c2 = in2 + (suit[c] == 2) + llc * (lc == 2) + off * (sh2 / total)
        hat_in = min(max(hats_now + hat_card[c] + later_hats, 0.0), 1.0)
        for p in range(P):  # value to me if relative seat p takes the trick
            u = c0 * A[p, 0] + c1 * A[p, 1] + c2 * A[p, 2] + T[p]
            U[c, p] = u + (hat_in * H[p] + (1 - hat_in) * holder_val)


@njit(cache=True, nogil=True, inline="always")
def _take_chances(
    g, trick, led, tr, following, void, suit, rank, held, higher, p_void, p_trump, after, n_unseen, cards, beats,
    p_win,
):  # fmt: skip
    """``beats[c]``: card ``c`` beats the trick so far; ``p_win[c]``: my chance to take the trick with it.
    Seats after me beat it with a higher card of its suit (if they follow) or a trump (if void); a trick
    already trumped only by a higher trump. Returns the seat winning the trick so far (-1: none)."""
    P = trick.shape[1]
    best, best_seat = trick_winner_so_far(trick, g, led, tr, suit, rank)
    held_after = hold0 = hold1 = hold2 = 0.0  # cards the later seats hold, of each suit they may hold
    for p in range(P):
        held_after += held[p] * after[p]
        hold0 += held[p] * (not void[g, p, 0]) * after[p]
        hold1 += held[p] * (not void[g, p, 1]) * after[p]
        hold2 += held[p] * (not void[g, p, 2]) * after[p]
    nonvoid_after = (hold0, hold1, hold2)
    trumped = False
    for p in range(P):
        if trick[g, p] >= 0 and suit[trick[g, p]] == tr and tr < 3:
            trumped = True
    for c in cards:
        beats[c] = card_strength(c, led if following else suit[c], tr, suit, rank) > best
        lc = led if led >= 0 else suit[c]
        p_no_higher = none_of(nonvoid_after[suit[c]], n_unseen, higher[c])
        prod = 1.0
        for p in range(P):
            prod *= 1 - p_void[p, lc] * p_trump[p] * after[p]
        p_ruff_after = 1 - prod  # a later seat void in the suit led ruffs
        if suit[c] == tr and tr < 3:
            p_hold = p_no_higher
        else:
            p_hold = p_no_higher * (1 - p_ruff_after * (not trumped))
        if not held_after > 0:
            p_hold = 1.0
        p_win[c] = p_hold if beats[c] else 0.0
    return best_seat


@njit(cache=True, nogil=True, inline="always")
def _keep_values(suit, rank, hat_card, hv, few_me, p_void, p_win_lead, A, T, keep_scale, cards, keep):
    """``keep[c]``: what card ``c`` is worth kept for later: its chance to win a later trick times that
    trick's value, plus exits for a fewest bidder and the hat card's liability or asset."""
    x0 = x1 = x2 = 0.0  # opponents expected to follow each suit
    for p in range(1, p_void.shape[0]):
        x0, x1, x2 = x0 + (1 - p_void[p, 0]), x1 + (1 - p_void[p, 1]), x2 + (1 - p_void[p, 2])
    later = ((1 + x0) * A[0, 0], (1 + x1) * A[0, 1], (1 + x2) * A[0, 2])  # a later trick I win, by suit
    for c in cards:
        win_later = later[suit[c]] + T[0] + 0.25
        k = keep_scale * p_win_lead[c] * win_later
        k = k + few_me * (19 - rank[c]) * 0.05  # low cards are safe exits for a fewest bidder
        keep[c] = k + hat_card[c] * hv * 0.08  # a hat card in hand under -10 is a liability, under +10 an asset


@njit(cache=True, nogil=True, inline="always")
def _score_cards(
    suit, rank, hat_card, hv_neg, leading, most, few_me, best_seat, U, p_win_lead, beats, p_win, keep,
    lead_sure, follow_sure, take_min, cards, shed, score,
):  # fmt: skip
    """``score[c]``: the score of each legal card ``c``, the highest is played. Leading: my suit's highest
    card (it draws the opponents' high cards even when it loses), else a low card of a suit no rival
    collects. Following: take the trick when that is worth more than losing it (by ``take_min``) with the
    cheapest card likely to hold, else shed the card worth least later. ``shed`` is scratch."""
    P = most.shape[0]
    few = few_me and not (most[0, 0] or most[0, 1] or most[0, 2])
    lose_to = best_seat if best_seat >= 0 else 1  # who takes it if I do not: the current winner, or
    om0 = om1 = om2 = False  # (when leading) an average opponent; the suits an opponent bid most of
    for p in range(1, P):
        om0, om1, om2 = om0 or most[p, 0], om1 or most[p, 1], om2 or most[p, 2]
    opp_most = (om0, om1, om2)
    want = -np.inf
    for c in cards:
        r = np.float64(rank[c])
        wanted = most[0, suit[c]]
        pw = p_win_lead[c]
        hat_neg = hat_card[c] and hv_neg
        if leading:
            lead_win = 1000 + r + 10 * pw if wanted and pw >= lead_sure else NEG / 2
            harm = opp_most[suit[c]] * 30 + wanted * 20 + hat_neg * 15
            lead_low = -harm - r - 10 * pw
            score[c] = -100 * pw - r if few else max(lead_win, lead_low)
            continue
        gain = U[c, 0] - U[c, lose_to]  # value of taking the trick rather than letting it go
        pc = p_win[c]
        take = pc * gain
        winner = beats[c] and pc >= follow_sure
        score[c] = 500 + 100 * pc - 3 * keep[c] - r if winner else NEG / 2  # taking it
        sh = -keep[c] - 0.05 * r + hat_neg * 8 - wanted * 2
        if few:
            sh = r + hat_neg * 5
        if beats[c]:  # avoid taking an unwanted trick
            sh = sh - 300 - 3 * min(take, 0.0)
        shed[c] = sh
        if winner and take > want:
            want = take
    if not leading:
        want_take = want > take_min
        for c in cards:
            score[c] = max(score[c], shed[c]) if want_take else shed[c]


def strong_play(f: Facts) -> np.ndarray:
    """Card play of the strong strategy (see the module docstring).

    Leading: a card of a suit I bid that should hold the trick, else a low
    card of a suit nobody bid most of (not one a rival collects), a fewest
    bidder its safest low card. Following: take the trick when taking it is
    worth more than losing it, with the cheapest card likely to hold, else
    shed the card worth least later (a fewest bidder the highest card that
    loses; a hat card under -10 when someone else takes the trick).
    """
    out = np.empty(f.trick.shape[0], dtype=np.int64)
    tuning = (float(KEEP_SCALE), float(LEAD_SURE), float(FOLLOW_SURE), float(TAKE_MIN))
    _strong_play_kernel(_play_args(f), SUIT, RANK, HAT_CARD, tuning, out)
    return out


def choose_simple(cfg: Any, f: Facts, mask: np.ndarray) -> np.ndarray:
    """The simple strategy's action for each row of facts (``mask``: bool, the legal actions)."""
    return decide(cfg, f, mask, simple_hat, simple_bid_code, simple_play)


def choose_strong(cfg: Any, f: Facts, mask: np.ndarray) -> np.ndarray:
    """The strong strategy's action for each row of facts (``mask``: bool, the legal actions)."""
    return decide(cfg, f, mask, strong_hat, strong_bid_code, strong_play)


SimpleAgent = heuristic_agent(
    "bobs_hat", "simple", facts_from_obs, choose_simple, needs_public=False,
    doc="Count-based bids, win the tricks you want, shed the rest (see the module docstring).",
)  # fmt: skip
StrongAgent = heuristic_agent(
    "bobs_hat", "strong", facts_from_obs, choose_strong, needs_public=True,
    doc="Card counting, bid-value estimates and trick valuation (see the module docstring).",
)  # fmt: skip


# Playout policies on full states (used by the search bot)
def simple_state_policy(cfg: Any, state: bh.State, mask: np.ndarray) -> np.ndarray:
    """The simple strategy for the seat to act in each game of a full state."""
    return choose_simple(cfg, facts_from_state(cfg, state), mask)


def strong_state_policy(cfg: Any, state: bh.State, mask: np.ndarray) -> np.ndarray:
    """The strong strategy for the seat to act in each game of a full state."""
    return choose_strong(cfg, facts_from_state(cfg, state), mask)


__all__ = [
    "BH_N_CARDS",
    "Facts",
    "SimpleAgent",
    "StrongAgent",
    "facts_from_obs",
    "facts_from_state",
    "simple_state_policy",
    "strong_state_policy",
]
