"""Hand-written strategies for Oh Hell: ``simple`` and ``strong``.

Batched like the Bob's Hat ones: observations are read into :class:`Facts`
(seats relative to the acting player) and every decision is NumPy over the
batch; :func:`facts_from_state` lets the search bot use them as playouts.
Card ids are OpenSpiel's, ``rank * 4 + suit`` (ranks 2..A = 0..12).

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

from bobshat_env.core import oh_hell as oh
from bobshat_env.core.cards import OH_HELL_DECK
from bobshat_env.core.observe import oh_layout
from bobshat_env.core.resample import relative_voids

from .trick_facts import trick_facts, trick_void

N = 52
SUIT = OH_HELL_DECK.suit_of.astype(np.int64)
RANK = OH_HELL_DECK.rank_of.astype(np.int64)
RANK_F = RANK.astype(np.float64)
SUIT_ONEHOT = (SUIT[:, None] == np.arange(4)[None, :]).astype(np.float64)
NEG = -1e9


def _strength_table() -> np.ndarray:
    """(5, 5, 52) strength per (suit led + 1, trump + 1): trumps, then the suit led, by rank."""
    led = np.arange(-1, 4)[:, None, None]
    trump = np.arange(-1, 4)[None, :, None]
    card = np.arange(N)[None, None, :]
    return (RANK[card] + 13 * (SUIT[card] == led) + 26 * (SUIT[card] == trump)).astype(np.int16)


STRENGTH = _strength_table()


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


def facts_from_obs(cfg: Any, obs: np.ndarray, seat: np.ndarray, public: dict | None = None) -> Facts:
    """Facts from private Oh Hell observations; ``public["void"]`` (B, P, 4) absolute seats, if given."""
    o = oh_layout(cfg).views(np.asarray(obs, dtype=np.float32))
    trick, leader, led, void = trick_facts(o, OH_HELL_DECK)
    if public is not None and "void" in public:
        void |= relative_voids(np.asarray(public["void"], dtype=bool), seat)
    ph = o["phase"]
    return Facts(
        phase=np.where(ph.any(axis=1), np.argmax(ph, axis=1) + oh.BID, oh.DONE),
        hand=o["hand"] > 0.5,
        played=o["played"] > 0.5,
        trump_card=np.argmax(o["trump_card"], axis=1),
        trick=trick,
        leader=leader,
        n_in_trick=(trick >= 0).sum(axis=1),
        led_suit=led,
        trump=np.argmax(o["trump_suit"], axis=1),
        bids=np.argmax(o["bids"], axis=2) - 1,
        taken=np.rint(o["taken"] * 10).astype(np.int64),
        dealer=np.argmax(o["dealer"], axis=1),
        hand_size=np.argmax(o["hand_size"], axis=1) + 1,
        void=void,
    )


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
        void=trick_void(trick, led, OH_HELL_DECK),
    )


def legal_cards(f: Facts) -> np.ndarray:
    of_led = f.hand & (SUIT[None, :] == f.led_suit[:, None])
    return np.where(of_led.any(axis=1)[:, None], of_led, f.hand)


def _pick(score: np.ndarray, legal: np.ndarray) -> np.ndarray:
    return np.argmax(np.where(legal, score, NEG), axis=1)


def _best_in_trick(f: Facts) -> np.ndarray:
    c = np.maximum(f.trick, 0)
    s = STRENGTH[f.led_suit[:, None] + 1, f.trump[:, None] + 1, c]
    return np.where(f.trick >= 0, s, -1).max(axis=1)


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
    rows = np.nonzero(f.phase == oh.BID)[0]
    if rows.size:
        out[rows] = _nearest_legal_bid(bid_fn(_take(f, rows)), mask[rows])
    rows = np.nonzero(f.phase == oh.PLAY)[0]
    if rows.size:
        out[rows] = play_fn(_take(f, rows))
    bad = ~mask[np.arange(B), out]
    out[bad] = np.argmax(mask[bad], axis=1)
    return out


def _take(f: Facts, rows: np.ndarray) -> Facts:
    return Facts(**{k: v[rows] for k, v in f.__dict__.items()})


# --------------------------------------------------------------------------
# simple
def simple_bid(f: Facts) -> np.ndarray:
    """Aces and kings, plus trumps queen or better."""
    high = f.hand & (RANK[None, :] >= 11)
    trump_high = f.hand & (SUIT[None, :] == f.trump[:, None]) & (RANK[None, :] == 10)
    return (high.sum(axis=1) + trump_high.sum(axis=1)).astype(np.float64)


def simple_play(f: Facts) -> np.ndarray:
    legal = legal_cards(f)
    need = f.bids[:, 0] - f.taken[:, 0]
    strength = STRENGTH[f.led_suit[:, None] + 1, f.trump[:, None] + 1, np.arange(N)[None, :]]
    beats = strength > _best_in_trick(f)[:, None]
    rank = RANK_F[None, :]
    lead = (f.n_in_trick == 0)[:, None]
    want = (need > 0)[:, None]
    score = np.where(
        lead,
        np.where(want, rank, -rank),
        np.where(want, np.where(beats, 100 + rank, -rank), np.where(beats, -100 - rank, rank)),
    )
    return _pick(score, legal)


class SimpleAgent:
    """Count high cards, then win until the bid is made and duck after (module docstring)."""

    needs_public = False

    def __init__(self, game: Any = None, seed: int | None = None):
        if game is None or game.name != "oh_hell":
            raise ValueError("the Oh Hell 'simple' agent needs an oh_hell game")
        self.name = "simple"
        self.cfg = game.config

    def act(self, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray, public: dict | None = None) -> np.ndarray:
        return decide(facts_from_obs(self.cfg, obs, seat, public), np.asarray(mask, bool), simple_bid, simple_play)


# --------------------------------------------------------------------------
# strong
def win_chances(f: Facts) -> dict[str, np.ndarray]:
    """Per card in hand: the chance it takes a trick it leads; unseen cards and seats' holdings."""
    B, P = f.trick.shape
    b = np.arange(B)
    in_trick = np.zeros((B, N), dtype=bool)
    g, p = np.nonzero(f.trick >= 0)
    in_trick[g, f.trick[g, p]] = True
    unseen = ~f.hand & ~f.played & ~in_trick
    unseen[b, f.trump_card] = False
    u = unseen.reshape(B, 13, 4)  # (B, rank, suit)
    above = np.cumsum(u[:, ::-1], axis=1)[:, ::-1] - u
    higher = above.reshape(B, N).astype(np.float64)
    tricks_done = f.played.sum(axis=1) // P
    held = ((f.hand_size - tricks_done)[:, None] - (f.trick >= 0)).astype(np.float64)
    held[:, 0] = f.hand.sum(axis=1)
    n_unseen = np.maximum(unseen.sum(axis=1), 1).astype(np.float64)
    frac = (unseen @ SUIT_ONEHOT) / n_unseen[:, None]
    p_void = np.where(f.void, 1.0, (1 - frac[:, None, :]) ** held[:, :, None])
    tfrac = frac[b, f.trump]
    p_trump = 1 - (1 - tfrac[:, None]) ** held
    p_trump = np.where(f.void[b, :, f.trump], 0.0, p_trump)
    opp = held.copy()
    opp[:, 0] = 0
    q_s = (opp[:, :, None] * ~f.void).sum(axis=1) / n_unseen[:, None]
    p_top = (1 - np.clip(q_s[:, SUIT], 0, 1)) ** higher
    p_ruff = 1 - np.prod(1 - p_void[:, 1:, :] * p_trump[:, 1:, None], axis=1)  # (B, 4)
    is_trump = SUIT[None, :] == f.trump[:, None]
    p_win = p_top * np.where(is_trump, 1.0, 1 - p_ruff[:, SUIT]) * f.hand
    return {"p_win": p_win, "higher": higher, "held": held, "p_void": p_void, "p_trump": p_trump, "unseen": unseen}


def strong_tricks(f: Facts, w: dict[str, np.ndarray]) -> np.ndarray:
    """(B,) tricks the hand should still take: its cards' chances plus ruffs with spare trumps."""
    B = f.hand.shape[0]
    b = np.arange(B)
    cnt = f.hand @ SUIT_ONEHOT  # (B, 4)
    n_left = f.hand.sum(axis=1).astype(np.float64)
    P = f.players
    # suits I am short in: tricks of them others lead that I can ruff with a spare trump
    per_suit_tricks = n_left[:, None] / 4
    short = np.clip(per_suit_tricks - cnt, 0, None)
    short[b, f.trump] = 0
    trumps = cnt[b, f.trump]
    spare = np.clip(trumps - (w["p_win"] * (SUIT[None, :] == f.trump[:, None])).sum(axis=1), 0, None)
    ruffs = np.minimum(short.sum(axis=1), spare) * (0.5 if P > 3 else 0.6)
    return w["p_win"].sum(axis=1) + ruffs


BID_BIAS = -0.1  # the estimate is shaded down a little: an extra trick costs the bonus as surely as one too few


def strong_bid(f: Facts) -> np.ndarray:
    return strong_tricks(f, win_chances(f)) + BID_BIAS


def strong_play(f: Facts) -> np.ndarray:
    B, P = f.trick.shape
    b = np.arange(B)
    legal = legal_cards(f)
    w = win_chances(f)
    need = f.bids[:, 0] - f.taken[:, 0]
    expect = strong_tricks(f, w)
    rank = RANK_F[None, :]
    strength = STRENGTH[f.led_suit[:, None] + 1, f.trump[:, None] + 1, np.arange(N)[None, :]]
    lead_strength = STRENGTH[SUIT[None, :] + 1, f.trump[:, None] + 1, np.arange(N)[None, :]]
    lead = f.n_in_trick == 0
    strength = np.where(lead[:, None], lead_strength, strength)
    beats = strength > _best_in_trick(f)[:, None]
    # chance the card holds against the seats still to play
    pos = (0 - f.leader) % P
    after = (np.arange(P)[None, :] > 0) & (np.arange(P)[None, :] <= (P - 1 - pos)[:, None])
    n_unseen = np.maximum(w["unseen"].sum(axis=1), 1).astype(np.float64)
    held_after = (w["held"][:, :, None] * ~f.void * after[:, :, None]).sum(axis=1) / n_unseen[:, None]
    p_no_higher = (1 - np.clip(held_after[b[:, None], SUIT[None, :]], 0, 1)) ** w["higher"]
    led_or_card = np.where(lead[:, None], SUIT[None, :], f.led_suit[:, None])
    pv = np.take_along_axis(w["p_void"], np.broadcast_to(led_or_card[:, None, :], (B, P, N)), axis=2)
    p_ruff = 1 - np.prod(1 - pv * (w["p_trump"] * after)[:, :, None], axis=1)
    is_trump = SUIT[None, :] == f.trump[:, None]
    trick_trumped = ((f.trick >= 0) & (SUIT[np.maximum(f.trick, 0)] == f.trump[:, None])).any(axis=1)
    p_hold = np.where(is_trump | trick_trumped[:, None], p_no_higher, p_no_higher * (1 - p_ruff))
    p_take = np.where(beats, p_hold, 0.0)
    short = need > 0  # still need tricks
    made = need == 0
    # short of the bid: take with the cheapest card that holds, keep sure winners if the hand has spare
    spare = expect - need  # expected tricks beyond the need
    take_score = np.where(p_take >= 0.5, 200 + 50 * p_take - rank - 20 * w["p_win"] * (spare > 0.5)[:, None], -rank)
    lead_take = 100 * w["p_win"] + 0.1 * rank
    # on the bid: lose with the highest card that surely loses, else the lowest
    duck = np.where(beats & (p_take > 0.0), -100 * p_take - rank, rank + 30 * w["p_win"])
    lead_duck = -100 * w["p_win"] - rank
    # over the bid: every trick is a point
    over = np.where(beats, 100 * p_take - rank, -rank)
    score = np.where(
        lead[:, None],
        np.where(short[:, None], lead_take, np.where(made[:, None], lead_duck, lead_take)),
        np.where(short[:, None], take_score, np.where(made[:, None], duck, over)),
    )
    return _pick(score, legal)


class StrongAgent:
    """Card counting, estimated tricks, hook-aware bids and bid-driven play (module docstring)."""

    needs_public = True

    def __init__(self, game: Any = None, seed: int | None = None):
        if game is None or game.name != "oh_hell":
            raise ValueError("the Oh Hell 'strong' agent needs an oh_hell game")
        self.name = "strong"
        self.cfg = game.config

    def act(self, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray, public: dict | None = None) -> np.ndarray:
        return decide(facts_from_obs(self.cfg, obs, seat, public), np.asarray(mask, bool), strong_bid, strong_play)


def simple_state_policy(cfg: Any, state: oh.State, mask: np.ndarray) -> np.ndarray:
    """The simple strategy on full states (a playout policy)."""
    return decide(facts_from_state(cfg, state), mask, simple_bid, simple_play)


def strong_state_policy(cfg: Any, state: oh.State, mask: np.ndarray) -> np.ndarray:
    """The strong strategy on full states (a playout policy)."""
    return decide(facts_from_state(cfg, state), mask, strong_bid, strong_play)
