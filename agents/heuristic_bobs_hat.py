"""Hand-written strategies for Where's Bob's Hat?: ``simple`` and ``strong``.

Both are batched: they read B observations at once into :class:`Facts`
(arrays with seats relative to the acting player, 0 = me) and decide with
NumPy over the batch. The same decision functions also run on a full
:class:`~bobshat_env.core.bobs_hat.State` (:func:`facts_from_state`), which is
how the search bot uses them as fast playout policies.

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

from dataclasses import dataclass
from typing import Any

import numpy as np

from bobshat_env.core import bobs_hat as bh
from bobshat_env.core.cards import BH_IS_HAT_CARD, BH_N_CARDS, BOBS_HAT_DECK
from bobshat_env.core.observe import bh_layout
from bobshat_env.core.resample import relative_voids

from .trick_facts import trick_facts, trick_void

SUIT = BOBS_HAT_DECK.suit_of.astype(np.int64)  # (60,)
RANK = BOBS_HAT_DECK.rank_of.astype(np.int64)  # (60,) 0..19 (rank - 1)
HAT_CARD = BH_IS_HAT_CARD
RANK_F = RANK.astype(np.float32)
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


def facts_from_obs(cfg: Any, obs: np.ndarray, seat: np.ndarray, public: dict | None = None) -> Facts:
    """Facts from private observations (B, D); ``public["void"]`` (B, P, 3) absolute, if given."""
    o = bh_layout(cfg).views(np.asarray(obs, dtype=np.float32))
    trick, leader, led, void = trick_facts(o, BOBS_HAT_DECK)
    rb = o["bids"]
    code = rb[..., 0] + 2 * rb[..., 1] + 4 * rb[..., 2] + 8 * (rb[..., 3] + rb[..., 4])
    bids = np.where(rb[..., 5] > 0.5, np.rint(code), -1).astype(np.int64)
    holder = np.argmax(o["hat_holder"], axis=1) - 1
    phase = np.where(o["phase"].any(axis=1), np.argmax(o["phase"], axis=1), bh.DONE)
    if public is not None and "void" in public:
        void |= relative_voids(np.asarray(public["void"], dtype=bool), seat)
    return Facts(
        phase=phase,
        hand=o["hand"] > 0.5,
        played=o["played"] > 0.5,
        trick=trick,
        leader=leader,
        n_in_trick=(trick >= 0).sum(axis=1),
        led_suit=led,
        trump=np.argmax(o["trump"], axis=1),
        bids=bids,
        taken=np.rint(o["taken"] * 20).astype(np.int64),
        hat_value=np.where(o["hat_value"][:, 0] > 0.5, 10, np.where(o["hat_value"][:, 1] > 0.5, -10, 0)),
        hat_holder=holder,
        dealer=np.argmax(o["dealer"], axis=1),
        hand_size=np.argmax(o["hand_number"], axis=1) + 5,
        void=void,
    )


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
        void=trick_void(trick, led, BOBS_HAT_DECK),
    )


# --------------------------------------------------------------------------
# Shared helpers
def legal_cards(f: Facts) -> np.ndarray:
    """(B, 60) bool: follow suit if able."""
    of_led = f.hand & (SUIT[None, :] == f.led_suit[:, None])
    return np.where(of_led.any(axis=1)[:, None], of_led, f.hand)


def _strength_table() -> np.ndarray:
    """(5, 4, 60) strength of each card for (suit led + 1, trump): trumps, then the suit led, by rank."""
    led = np.arange(-1, 4)[:, None, None]
    trump = np.arange(4)[None, :, None]
    card = np.arange(60)[None, None, :]
    return (RANK[card] + 20 * (SUIT[card] == led) + 40 * (SUIT[card] == trump)).astype(np.int16)


STRENGTH = _strength_table()


def card_strength(cards: np.ndarray, led: np.ndarray, trump: np.ndarray) -> np.ndarray:
    """Strength of cards in a trick (higher wins): trumps, then the suit led, by rank; -1 for no card.

    cards (B, K); led (B,) or (B, K) suit led (-1 none); trump (B,).
    """
    led = led if led.ndim == cards.ndim else np.broadcast_to(led[:, None], cards.shape)
    trump = np.broadcast_to(trump[:, None], cards.shape)
    s = STRENGTH[led + 1, trump, np.maximum(cards, 0)]
    return np.where(cards >= 0, s, -1)


def all_strength(led: np.ndarray, trump: np.ndarray) -> np.ndarray:
    """(B, 60) strength of every card for the suit led (B,) and trump (B,)."""
    return STRENGTH[led + 1, trump]


def current_best(f: Facts) -> tuple[np.ndarray, np.ndarray]:
    """(B,) strength of the card winning the trick so far (-1 if none) and its relative seat (-1)."""
    st = card_strength(f.trick, f.led_suit, f.trump)  # (B, P)
    seat = np.argmax(st, axis=1)
    best = st[np.arange(st.shape[0]), seat]
    return best, np.where(best >= 0, seat, -1)


def wants(f: Facts) -> tuple[np.ndarray, np.ndarray]:
    """(B, P, 3) bool most bids and (B, P) int fewest multiplicity, relative seats (unbid = nothing)."""
    code = np.maximum(f.bids, 0)
    most = ((code[:, :, None] >> np.arange(3)) & 1).astype(bool) & (f.bids >= 0)[:, :, None]
    return most, np.where(f.bids >= 0, code // 8, 0)


def _pick(score: np.ndarray, legal: np.ndarray) -> np.ndarray:
    return np.argmax(np.where(legal, score, NEG), axis=1)


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


def simple_play(f: Facts) -> np.ndarray:
    """Card ids: win wanted tricks with the highest card, else the lowest; fewest ducks."""
    B, P = f.trick.shape
    legal = legal_cards(f)
    code = np.maximum(f.bids[:, 0], 0)
    my_most = ((code[:, None] >> np.arange(3)) & 1).astype(bool) & (f.bids[:, :1] >= 0)  # (B, 3)
    only_fewest = (code >= 8) & ~my_most.any(axis=1)
    strength = all_strength(f.led_suit, f.trump)
    best = card_strength(f.trick, f.led_suit, f.trump).max(axis=1)
    beats = strength > best[:, None]
    rank = RANK_F[None, :]
    leading = (f.n_in_trick == 0)[:, None]
    wanted_card = my_most[:, SUIT]  # (B, 60): my card is of a suit I bid
    # Does the trick hold cards of a suit I bid (the suit led counts: followers bring it)?
    tsuit = np.where(f.trick >= 0, SUIT[np.maximum(f.trick, 0)], 3)
    interesting = (my_most[np.arange(B)[:, None], np.minimum(tsuit, 2)] & (tsuit < 3)).any(axis=1)[:, None]
    few = only_fewest[:, None]
    score = np.where(
        leading,
        np.where(few, -rank, np.where(wanted_card, 100 + rank, -rank)),  # lead: my suit high, else low
        np.where(
            few,
            np.where(beats, rank, 100 + rank),  # fewest: the highest card that loses, else the highest
            np.where(interesting, np.where(beats, 100 + rank, -rank), -rank + 0.5 * ~wanted_card),
        ),
    )
    return _pick(score, legal)


class SimpleAgent:
    """Count-based bids, win the tricks you want, shed the rest (see the module docstring)."""

    needs_public = False

    def __init__(self, game: Any = None, seed: int | None = None):
        if game is None or game.name != "bobs_hat":
            raise ValueError("the 'simple' Bob's Hat agent needs a bobs_hat game")
        self.name = "simple"
        self.cfg = game.config

    def act(self, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray, public: dict | None = None) -> np.ndarray:
        f = facts_from_obs(self.cfg, obs, seat, public)
        return decide(self.cfg, f, np.asarray(mask, dtype=bool), simple_hat, simple_bid_code, simple_play)


def decide(cfg: Any, f: Facts, mask: np.ndarray, hat_fn: Any, bid_fn: Any, play_fn: Any) -> np.ndarray:
    """Route each row to the hat, bid or play decision by its phase; always a legal action."""
    B = mask.shape[0]
    out = np.zeros(B, dtype=np.int64)
    for phase, fn in ((bh.HAT, hat_fn), (bh.BID, bid_fn), (bh.PLAY, play_fn)):
        rows = np.nonzero(f.phase == phase)[0]
        if not rows.size:
            continue
        sub = take_facts(f, rows)
        if phase == bh.BID:
            out[rows] = bid_action(_fit_bid(fn(sub), mask[rows]))
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
@dataclass
class Estimates:
    """Per-row estimates the strong strategy decides with."""

    unseen: np.ndarray  # (B, 60) bool
    higher: np.ndarray  # (B, 60) unseen cards of the same suit ranked higher
    held: np.ndarray  # (B, P) cards each relative seat still holds
    frac: np.ndarray  # (B, 3) share of each suit among the unseen cards
    p_void: np.ndarray  # (B, P, 3) chance a seat holds no card of a suit
    p_trump: np.ndarray  # (B, P) chance a seat holds a trump
    p_win_lead: np.ndarray  # (B, 60) chance each of my cards takes a trick it leads (or follows in suit)


def estimate(f: Facts) -> Estimates:
    B, P = f.trick.shape
    b = np.arange(B)
    in_trick = np.zeros((B, 60), dtype=bool)
    g, p = np.nonzero(f.trick >= 0)
    in_trick[g, f.trick[g, p]] = True
    unseen = ~f.hand & ~f.played & ~in_trick
    u3 = unseen.reshape(B, 3, 20)
    # unseen cards of the same suit with a higher rank: reversed exclusive cumsum
    above = np.cumsum(u3[:, :, ::-1], axis=2)[:, :, ::-1] - u3
    higher = above.reshape(B, 60).astype(np.float64)
    tricks_done = f.played.sum(axis=1) // P
    held = (f.hand_size - tricks_done)[:, None] - (f.trick >= 0)
    held[:, 0] = f.hand.sum(axis=1)
    held = held.astype(np.float64)
    n_unseen = np.maximum(unseen.sum(axis=1), 1).astype(np.float64)
    frac = (unseen.astype(np.float64) @ SUIT_ONEHOT) / n_unseen[:, None]  # (B, 3)
    # a seat with k cards drawn from the unseen: void in s with chance (1 - frac_s)^k
    p_void = (1 - frac[:, None, :]) ** held[:, :, None]
    p_void = np.where(f.void, 1.0, p_void)
    has_trump = f.trump < 3
    tfrac = frac[b, np.minimum(f.trump, 2)]
    p_trump = np.where(has_trump[:, None], 1 - (1 - tfrac[:, None]) ** held, 0.0)
    p_trump = np.where(f.void[b, :, np.minimum(f.trump, 2)] & has_trump[:, None], 0.0, p_trump)
    p_trump[:, 0] = 0
    # chance a given unseen card of suit s is held by an opponent who is not void in s
    opp_held = held.copy()
    opp_held[:, 0] = 0
    nonvoid = (~f.void).astype(np.float64)
    q_s = (opp_held[:, :, None] * nonvoid).sum(axis=1) / n_unseen[:, None]  # (B, 3)
    q = np.clip(q_s[:, SUIT], 0, 1)  # (B, 60)
    p_top = (1 - q) ** higher
    # ruffs: an opponent void in the suit who holds a trump
    p_ruff = 1 - np.prod(1 - p_void[:, 1:, :] * p_trump[:, 1:, None], axis=1)  # (B, 3)
    not_trump = SUIT[None, :] != f.trump[:, None]
    p_win = p_top * np.where(not_trump, 1 - p_ruff[:, SUIT], 1.0)
    return Estimates(unseen, higher, held, frac, p_void, p_trump, p_win * f.hand)


def expected_take(f: Facts, e: Estimates) -> tuple[np.ndarray, np.ndarray]:
    """(B,) expected tricks and (B, 3) expected cards per suit I take over the rest of the hand."""
    P = f.players
    B = f.hand.shape[0]
    w = e.p_win_lead
    # a trick won with a card of suit s carries it and the followers' cards, mostly of suit s
    follow = 1 - e.p_void[:, 1:, :]  # (B, P-1, 3)
    per_trick_s = 1 + follow.sum(axis=1)  # (B, 3) cards of s in a trick led in s
    tricks_s = w @ SUIT_ONEHOT  # (B, 3) tricks I win with cards of each suit
    cards = tricks_s * per_trick_s[np.arange(B)[:, None], np.arange(3)[None, :]]
    # low trumps also ruff tricks of suits I am short in: they carry that suit's cards
    has_trump = f.trump < 3
    t = np.minimum(f.trump, 2)
    my_cnt = f.hand.astype(np.float64) @ SUIT_ONEHOT  # (B, 3)
    n = f.hand_size.astype(np.float64)
    short = np.clip(n[:, None] / 3 - my_cnt, 0, None)  # tricks of a suit I cannot follow
    short[np.arange(B), t] = 0
    trump_left = my_cnt[np.arange(B), t] - tricks_s[np.arange(B), t]
    ruffs = np.minimum(short.sum(axis=1), np.clip(trump_left, 0, None)) * 0.6 * has_trump
    share = short / np.maximum(short.sum(axis=1, keepdims=True), 1e-9)
    cards = cards + ruffs[:, None] * share * (P - 1)
    tricks = tricks_s.sum(axis=1) + ruffs
    return tricks, cards + f.taken[:, 0]


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
    e = estimate(f)
    tricks, cards = expected_take(f, e)
    n = f.hand_size.astype(np.float64)
    held_others = e.held[:, 1:].sum(axis=1)
    in_play_unseen = held_others / np.maximum(e.unseen.sum(axis=1), 1)  # share of unseen cards in play
    total_s = (f.hand.astype(np.float64) @ SUIT_ONEHOT) + (e.unseen.astype(np.float64) @ SUIT_ONEHOT) * in_play_unseen[
        :, None
    ]
    total_s += f.played.astype(np.float64) @ SUIT_ONEHOT
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


def trick_values(f: Facts, e: Estimates) -> dict[str, np.ndarray]:
    """Per candidate card (B, 60): value to me of taking the trick with it, of losing it, and my chance to take it.

    The trick's content is the cards in it now, my card and the expected
    cards of the seats still to play (the suit led if they hold it, else a
    discard). Values count the cards of suits I bid (for me), suits an
    opponent bid (against me), fewest bidders taking a trick, and the hat.
    """
    B, P = f.trick.shape
    b = np.arange(B)
    most, fewest = wants(f)
    n = f.hand_size.astype(np.float64)
    # Value to me of one card of suit s going to relative seat r: A (B, P, 3)
    my_take = f.taken.sum(axis=2)  # (B, P) cards taken so far
    A = np.zeros((B, P, 3))
    A[:, 0] = 1.6 * most[:, 0]
    opp_most = most[:, 1:]  # (B, P-1, 3)
    A[:, 1:] = -0.8 * opp_most - 0.5 * most[:, :1]  # helping a rival (or a competitor of my suit) is bad
    # Taking a trick at all: bad for a fewest bidder, good to see an opponent fewest bidder take one.
    T = np.zeros((B, P))
    few_me = fewest[:, 0] > 0
    # fewest: taking a trick is costly while I still lead the count
    still_low = my_take[:, 0] <= my_take[:, 1:].min(axis=1)
    T[:, 0] = -np.where(few_me, (n * fewest[:, 0]) * np.where(still_low, 0.9, 0.2), 0)
    opp_few = (fewest[:, 1:] > 0) & (my_take[:, 1:] <= np.delete(my_take, 0, axis=1).min(axis=1, keepdims=True))
    T[:, 1:] = 0.6 * n[:, None] / (P - 1) * opp_few
    # The hat: who takes a hat card now holds it; it matters fully once no hat card is left unseen.
    hat_left = (e.unseen & HAT_CARD[None, :]).sum(axis=1) + (f.hand & HAT_CARD[None, :]).sum(axis=1)
    stick = np.where(hat_left > 0, 0.5, 1.0)
    H = np.zeros((B, P))
    hv = f.hat_value.astype(np.float64)
    H[:, 0] = hv * stick
    H[:, 1:] = -hv[:, None] * stick[:, None] / (P - 1)
    holder_val = np.zeros(B)  # value of the hat staying where it is
    h = f.hat_holder
    holder_val = np.where(h == 0, hv, np.where(h > 0, -hv / (P - 1), 0.0)) * stick

    # What the trick will hold: cards now, plus expected cards of those still to play.
    pos = (0 - f.leader) % P  # my position in the trick
    after = np.arange(P)[None, :] > 0
    after = after & (np.arange(P)[None, :] <= (P - 1 - pos)[:, None])  # relative seats still to play
    in_now = np.zeros((B, 3))
    hats_now = np.zeros(B)
    g, r = np.nonzero(f.trick >= 0)
    np.add.at(in_now, (g, SUIT[f.trick[g, r]]), 1.0)
    np.add.at(hats_now, g, HAT_CARD[f.trick[g, r]].astype(float))
    # expected later cards by suit (for each candidate lead suit when leading)
    led_or_card = np.where(f.led_suit[:, None] >= 0, f.led_suit[:, None], SUIT[None, :])  # (B, 60) suit led
    p_follow = 1 - e.p_void  # (B, P, 3)
    later_led = (p_follow * after[:, :, None]).sum(axis=1)  # (B, 3) followers of each suit
    n_after = after.sum(axis=1).astype(np.float64)
    later_led_c = later_led[b[:, None], led_or_card]  # (B, 60)
    hat_rate = (e.unseen & HAT_CARD[None, :]).sum(axis=1) / np.maximum(e.unseen.sum(axis=1), 1)
    later_hats = n_after * hat_rate * 1.5  # followers tend to hold the hat cards of the suit led

    # content per candidate card: (B, 60, 3)
    content = in_now[:, None, :] + SUIT_ONEHOT[None, :, :]
    content += later_led_c[:, :, None] * (np.arange(3)[None, None, :] == led_or_card[:, :, None])
    off = np.clip(n_after[:, None] - later_led_c, 0, None)  # discards of other suits
    other_share = e.frac[:, None, :] * (np.arange(3)[None, None, :] != led_or_card[:, :, None])
    other_share = other_share / np.maximum(other_share.sum(axis=2, keepdims=True), 1e-9)
    content += off[:, :, None] * other_share
    hats = hats_now[:, None] + HAT_CARD[None, :] + later_hats[:, None]
    hat_in = np.clip(hats, 0, 1)

    # value to me if relative seat r takes the trick with this content: (B, 60, P)
    U = np.einsum("bcs,bps->bcp", content, A) + T[:, None, :]
    U += hat_in[:, :, None] * H[:, None, :] + (1 - hat_in[:, :, None]) * holder_val[:, None, None]

    # my chance to take the trick with each card
    strength = all_strength(f.led_suit, f.trump)
    lead_strength = STRENGTH[SUIT[None, :] + 1, f.trump[:, None], np.arange(60)[None, :]]
    strength = np.where(f.n_in_trick[:, None] > 0, strength, lead_strength)
    best, best_seat = current_best(f)
    beats = strength > best[:, None]
    # seats after me beat it with a higher card of its suit (if they follow) or a trump (if void)
    held_after = (e.held * after).sum(axis=1)
    n_unseen = np.maximum(e.unseen.sum(axis=1), 1).astype(np.float64)
    nonvoid_after = (e.held[:, :, None] * (~f.void) * after[:, :, None]).sum(axis=1) / n_unseen[:, None]  # (B,3)
    q_card = np.clip(nonvoid_after[b[:, None], SUIT[None, :]], 0, 1)
    p_no_higher = (1 - q_card) ** e.higher
    is_trump = (SUIT[None, :] == f.trump[:, None]) & (f.trump[:, None] < 3)
    p_ruff_after = 1 - np.prod(
        1 - (e.p_void[b[:, None], :, led_or_card].transpose(0, 2, 1) * e.p_trump[:, :, None] * after[:, :, None]),
        axis=1,
    )  # (B, 60): a later seat void in the suit led ruffs
    # a trick already trumped can only be beaten by a higher trump
    trumped = (f.trick >= 0) & (SUIT[np.maximum(f.trick, 0)] == f.trump[:, None]) & (f.trump[:, None] < 3)
    trumped = trumped.any(axis=1)
    p_hold = np.where(is_trump, p_no_higher, p_no_higher * (1 - p_ruff_after * ~trumped[:, None]))
    p_hold = np.where(held_after[:, None] > 0, p_hold, 1.0)
    p_win = np.where(beats, p_hold, 0.0)

    # who takes it if I do not: the current winner, or (when leading) an average opponent
    lose_to = np.where(best_seat >= 0, best_seat, 1)
    U_me = U[:, :, 0]
    U_cur = U[b, :, lose_to]
    U_avg = U[:, :, 1:].mean(axis=2)
    U_lose = np.where((f.n_in_trick == 0)[:, None], U_avg, U_cur)

    # what each card is worth kept for later: its chance to win a later trick times that trick's value
    later_content = SUIT_ONEHOT * (1 + (1 - e.p_void[:, 1:, :]).sum(axis=1))[:, None, :]  # (B, 60, 3)
    win_later = np.einsum("bcs,bs->bc", later_content, A[:, 0]) + T[:, 0:1] + 0.25
    keep = KEEP_SCALE * e.p_win_lead * win_later
    # low cards are safe exits for a fewest bidder
    keep = keep + few_me[:, None] * (19 - RANK[None, :]) * 0.05
    # a hat card in hand under -10 is a liability, under +10 an asset
    keep = keep + HAT_CARD[None, :] * hv[:, None] * 0.08
    return {"win": U_me, "lose": U_lose, "p_win": p_win, "beats": beats, "keep": keep, "wanted": A[:, 0]}


def strong_play(f: Facts) -> np.ndarray:
    """Card play of the strong strategy (see the module docstring).

    Leading: a card of a suit I bid that should hold the trick, else a low
    card of a suit nobody bid most of (not one a rival collects), a fewest
    bidder its safest low card. Following: take the trick when taking it is
    worth more than losing it, with the cheapest card likely to hold, else
    shed the card worth least later (a fewest bidder the highest card that
    loses; a hat card under -10 when someone else takes the trick).
    """
    B, P = f.trick.shape
    e = estimate(f)
    legal = legal_cards(f)
    v = trick_values(f, e)
    most, fewest = wants(f)
    my_most = most[:, 0]
    few = (fewest[:, 0] > 0) & ~my_most.any(axis=1)
    rank = RANK[None, :].astype(np.float64)
    wanted_card = my_most[:, SUIT]  # (B, 60)
    hv = f.hat_value.astype(np.float64)[:, None]
    keep = v["keep"]
    # -- leading
    opp_most = most[:, 1:].any(axis=1)  # (B, 3) suits an opponent collects
    # my suit: its highest card (it draws the opponents' high cards of the suit even when it loses)
    lead_win = np.where(wanted_card & (e.p_win_lead >= LEAD_SURE), 1000 + rank + 10 * e.p_win_lead, NEG / 2)
    harm = opp_most[:, SUIT] * 30 + wanted_card * 20 + HAT_CARD[None, :] * (hv < 0) * 15
    lead_low = -harm - rank - 10 * e.p_win_lead
    lead_few = -100 * e.p_win_lead - rank
    lead = np.where(few[:, None], lead_few, np.maximum(lead_win, lead_low))
    # -- following
    gain = v["win"] - v["lose"]  # value of taking the trick rather than letting it go
    p = v["p_win"]
    take = p * gain
    winners = v["beats"] & (p >= FOLLOW_SURE)
    take_score = np.where(winners, 500 + 100 * p - 3 * keep - rank, NEG / 2)
    shed = -keep - 0.05 * rank + (hv < 0) * HAT_CARD[None, :] * 8 - wanted_card * 2
    shed = np.where(few[:, None], rank + (hv < 0) * HAT_CARD[None, :] * 5, shed)
    shed = np.where(v["beats"], shed - 300 - 3 * take.clip(None, 0), shed)  # avoid taking an unwanted trick
    want_take = (np.where(legal & winners, take, -np.inf).max(axis=1) > TAKE_MIN)[:, None]
    follow = np.where(want_take, np.maximum(take_score, shed), shed)
    score = np.where((f.n_in_trick == 0)[:, None], lead, follow)
    return _pick(score, legal)


class StrongAgent:
    """Card counting, bid-value estimates and trick valuation (see the module docstring).

    With ``needs_public`` the arena hands it the public void record of the
    hand (which seat failed to follow which suit); without it (e.g. inside a
    Gymnasium env) it uses the voids visible in the current trick.
    """

    needs_public = True

    def __init__(self, game: Any = None, seed: int | None = None):
        if game is None or game.name != "bobs_hat":
            raise ValueError("the 'strong' Bob's Hat agent needs a bobs_hat game")
        self.name = "strong"
        self.cfg = game.config

    def act(self, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray, public: dict | None = None) -> np.ndarray:
        f = facts_from_obs(self.cfg, obs, seat, public)
        return decide(self.cfg, f, np.asarray(mask, dtype=bool), strong_hat, strong_bid_code, strong_play)


# Playout policies on full states (used by the search bot)
def simple_state_policy(cfg: Any, state: bh.State, mask: np.ndarray) -> np.ndarray:
    """The simple strategy for the seat to act in each game of a full state."""
    return decide(cfg, facts_from_state(cfg, state), mask, simple_hat, simple_bid_code, simple_play)


def strong_state_policy(cfg: Any, state: bh.State, mask: np.ndarray) -> np.ndarray:
    """The strong strategy for the seat to act in each game of a full state."""
    return decide(cfg, facts_from_state(cfg, state), mask, strong_hat, strong_bid_code, strong_play)


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
