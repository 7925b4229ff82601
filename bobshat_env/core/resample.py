"""Determinization: sample hidden hands consistent with what one seat has seen.

Search bots (PIMC) do not know the other seats' cards. They sample *worlds*:
full deals that agree with everything the searching seat knows, and search
each world as if it were a perfect-information game. A world must respect

- the seat's own hand (kept as it is);
- every card already seen (completed tricks, the current trick, Oh Hell's
  turned trump card): nobody holds those any more;
- each other seat's number of cards (known from the hand size and the play);
- voids: a seat that did not follow the suit led holds no card of that suit;
- the rest: unseen cards that nobody holds (out of play for the hand) are
  simply the unseen cards left over; Bob's Hat deals only part of the deck.

:func:`sample_hands` draws worlds uniformly over all deals that satisfy these
constraints: it shuffles the unseen cards, deals them in seat order, and
rejects worlds that break a void (rejection keeps the draw exactly uniform).
Rows that keep failing after ``max_tries`` rounds (many voids late in a hand)
go to an exact sampler that counts the consistent deals suit by suit
(:func:`_exact_worlds`), so every world returned is consistent and the
distribution is uniform over consistent deals either way.

:class:`VoidTracker` records the voids a seat can see: which seat failed to
follow which suit this hand. That is public information in the real game
(everybody sees every card played) but a seat's observation vector only holds
the current trick and the set of played cards, so an arena keeps one tracker
per batch of games and hands it to agents that declare ``needs_public``.
The tracker never holds a card that is not face up.

:func:`bh_public_state` rebuilds, from one seat's private observation, a
Bob's Hat state in which every other seat's hand is empty (the hidden part),
together with the number of cards each seat still holds; the search fills in
the hidden hands with :func:`sample_hands`.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from ..config import BobsHatConfig
from . import bobs_hat as bh
from . import observe as _observe
from . import oh_hell as oh
from .cards import BOBS_HAT_DECK, OH_HELL_DECK, Deck, bh_hand_size
from .tricks import trick_voids


# --------------------------------------------------------------------------
# Public void information
class VoidTracker:
    """The public record of the hand, per game of a batch: voids, who played which card, the actions in order.

    Everything in it is face up at a real table: which seat has failed to
    follow which suit (``void``), which seat played which card (``played_by``)
    and the hand's actions in the order they were taken (``history``: the
    hat choice, the bids, the cards). With secret bidding the bids stay out of
    what :meth:`rows` hands out until everybody has bid, as in the
    observations.

    Call :meth:`before_step` with the state and the actions about to be
    applied (it reads only the face-up facts: phase, seat to act, suit led,
    the action) and :meth:`after_step` with the step's result, which clears
    the games where a new hand starts.
    """

    def __init__(
        self,
        batch: int,
        players: int,
        deck: Deck,
        play_phase: int = bh.PLAY,
        bid_phase: int = bh.BID,
        secret_bids: bool = False,
        max_actions: int | None = None,
    ):
        self.deck = deck
        self.play_phase, self.bid_phase, self.secret_bids = play_phase, bid_phase, bool(secret_bids)
        L = max_actions if max_actions is not None else deck.n_cards + players + 1  # every card once, bids, hat
        self.void = np.zeros((batch, players, deck.n_suits), dtype=bool)  # (B, P, S) absolute seats
        self.played_by = np.zeros((batch, players, deck.n_cards), dtype=bool)  # (B, P, N) cards played this hand
        self.history = np.full((batch, L), -1, dtype=np.int16)  # (B, L) the hand's actions in order, -1 after
        self.history_phase = np.zeros((batch, L), dtype=np.int8)  # (B, L) the phase each action was taken in
        self.n_history = np.zeros(batch, dtype=np.int64)  # (B,) entries of history
        self.bidding = np.zeros(batch, dtype=bool)  # (B,) the hand's bidding has begun but not ended

    def before_step(self, state: Any, actions: np.ndarray, active: np.ndarray | None = None) -> None:
        """Note the actions about to be applied, and the voids and cards they reveal."""
        actions = np.asarray(actions, dtype=np.int64)
        live = np.ones(actions.shape[0], dtype=bool) if active is None else np.asarray(active, dtype=bool)
        g = np.nonzero(live)[0]
        if g.size:
            n = self.n_history[g]
            fits = n < self.history.shape[1]
            phase = state.phase[g]
            self.history[g[fits], n[fits]] = actions[g[fits]]
            self.history_phase[g[fits], n[fits]] = phase[fits]
            self.n_history[g] += 1
            self.bidding[g] = (phase == self.bid_phase) & (state.n_bids[g] + 1 < self.void.shape[1])  # bids to come
        play = live & (state.phase == self.play_phase)
        g = np.nonzero(play)[0]
        if not g.size:
            return
        cur = state.cur[g].astype(np.int64)
        self.played_by[g, cur, actions[g]] = True
        follow = state.n_in_trick[g] > 0
        g, cur = g[follow], cur[follow]
        if g.size:
            # the card about to be played, as a trick of one card: off the suit led, it shows a void
            shown = trick_voids(actions[g, None], state.led_suit[g], self.deck)[:, 0]  # (n, S)
            self.void[g, cur] |= shown

    def after_step(self, result: Any) -> None:
        """Forget the record of games that start a new hand."""
        new = np.asarray(result.new_hand, dtype=bool)
        self.void[new] = False
        self.played_by[new] = False
        self.history[new] = -1
        self.history_phase[new] = 0
        self.n_history[new] = 0
        self.bidding[new] = False

    def rows(self, idx: np.ndarray) -> dict[str, np.ndarray]:
        """The public facts of games ``idx``, as handed to an agent's ``act``.

        ``void`` (n, P, S) and ``played_by`` (n, P, N) by absolute seat;
        ``history`` (n, L) the hand's actions, -1 after the last one (and from
        the first bid on while secret bids are still hidden).
        """
        history = self.history[idx].copy()
        if self.secret_bids:  # bids of a secret bidding still under way are not face up yet
            history[self.bidding[idx][:, None] & (self.history_phase[idx] == self.bid_phase)] = -1
        return {"void": self.void[idx].copy(), "played_by": self.played_by[idx].copy(), "history": history}


def relative_voids(void: np.ndarray, seat: np.ndarray) -> np.ndarray:
    """(B, P, S) voids by absolute seat -> by seat relative to ``seat`` (0 = me)."""
    B, P = void.shape[:2]
    absolute = (np.asarray(seat, dtype=np.int64)[:, None] + np.arange(P)[None, :]) % P
    return void[np.arange(B)[:, None], absolute]


# --------------------------------------------------------------------------
# Sampling
def sample_hands(
    own_hand: np.ndarray,
    seat: np.ndarray,
    unseen: np.ndarray,
    counts: np.ndarray,
    void: np.ndarray,
    deck: Deck,
    worlds: int,
    gen: np.random.Generator,
    max_tries: int = 100,
) -> np.ndarray:
    """(B, W, P, N) bool hands: ``worlds`` consistent deals per row, uniform.

    own_hand: (B, N) the searching seat's cards; seat: (B,) its absolute seat;
    unseen: (B, N) cards the seat has not seen (not in its hand, not played,
    not face up); counts: (B, P) cards each seat holds (the searching seat's
    entry is ignored); void: (B, P, S) seats known to hold no card of a suit.
    Raises ValueError when a row has no consistent deal (the inputs contradict
    each other, which an honest observation never does).
    """
    own_hand = np.asarray(own_hand, dtype=bool)
    unseen = np.asarray(unseen, dtype=bool) & ~own_hand
    B, N = unseen.shape
    P = counts.shape[1]
    seat = np.asarray(seat, dtype=np.int64).reshape(B)
    counts = np.asarray(counts, dtype=np.int64).copy()
    counts[np.arange(B), seat] = 0
    void = np.asarray(void, dtype=bool).copy()
    void[np.arange(B), seat] = False
    if np.any(counts.sum(axis=1) > unseen.sum(axis=1)):
        r = int(np.nonzero(counts.sum(axis=1) > unseen.sum(axis=1))[0][0])
        raise ValueError(f"row {r}: the other seats hold {counts[r].sum()} cards but only {unseen[r].sum()} are unseen")
    W = worlds
    R = B * W
    row_of = np.repeat(np.arange(B), W)
    owner = np.full((R, N), -1, dtype=np.int64)  # seat holding each card in each world, -1 none
    todo = np.arange(R)
    cum = np.cumsum(counts, axis=1)  # (B, P)
    for _ in range(max_tries):
        if not todo.size:
            break
        rows = row_of[todo]
        u = unseen[rows]
        keys = np.where(u, gen.random((todo.size, N)), 2.0)
        order = np.argsort(keys, axis=1)
        pos = np.empty_like(order)
        pos[np.arange(todo.size)[:, None], order] = np.arange(N)[None, :]  # rank of each card among the unseen
        own = (pos[:, :, None] >= cum[rows][:, None, :]).sum(axis=2)  # (n, N): P means nobody
        own = np.where(u & (own < P), own, -1)
        bad = np.zeros((todo.size, N), dtype=bool)
        held = own >= 0
        t, c = np.nonzero(held)
        bad[t, c] = void[rows[t], own[t, c], deck.suit_of[c]]
        ok = ~bad.any(axis=1)
        owner[todo[ok]] = own[ok]
        todo = todo[~ok]
    if todo.size:
        for b in np.unique(row_of[todo]):
            need = todo[row_of[todo] == b]
            owner[need] = _exact_worlds(unseen[b], counts[b], void[b], deck, need.size, gen)
    hands = np.zeros((R, P, N), dtype=bool)
    r, c = np.nonzero(owner >= 0)
    hands[r, owner[r, c], c] = True
    hands[np.arange(R), seat[row_of]] = own_hand[row_of]
    return hands.reshape(B, W, P, N)


def _exact_worlds(
    unseen: np.ndarray, counts: np.ndarray, void: np.ndarray, deck: Deck, n: int, gen: np.random.Generator
) -> np.ndarray:
    """(n, N) owners (-1 none) of ``n`` uniform consistent deals of one row.

    Counts the deals seat by seat over how many cards of each suit a seat
    gets (a deal is a choice of cards; a count vector ``k`` for a seat with
    ``r_s`` cards of suit ``s`` left has ``prod C(r_s, k_s)`` of them), then
    draws a count vector with probability proportional to its completions
    and the cards of each suit uniformly.
    """
    S = deck.n_suits
    seats = [p for p in range(counts.shape[0]) if counts[p] > 0]
    by_suit = [np.nonzero(unseen & (deck.suit_of == s))[0] for s in range(S)]
    allowed = {p: tuple(not void[p, s] for s in range(S)) for p in seats}

    def splits(total: int, rem: tuple[int, ...], ok: tuple[bool, ...]) -> list[tuple[int, ...]]:
        out: list[tuple[int, ...]] = []

        def rec(s: int, left: int, acc: tuple[int, ...]) -> None:
            if s == S:
                if left == 0:
                    out.append(acc)
                return
            hi = min(left, rem[s]) if ok[s] else 0
            for k in range(hi + 1):
                rec(s + 1, left - k, acc + (k,))

        rec(0, total, ())
        return out

    @functools.cache
    def ways(i: int, rem: tuple[int, ...]) -> float:
        if i == len(seats):
            return 1.0
        p = seats[i]
        total = 0.0
        for k in splits(int(counts[p]), rem, allowed[p]):
            w = math.prod(math.comb(rem[s], k[s]) for s in range(S))
            total += w * ways(i + 1, tuple(rem[s] - k[s] for s in range(S)))
        return total

    start = tuple(len(x) for x in by_suit)
    if ways(0, start) == 0:
        raise ValueError("no deal of the unseen cards is consistent with the hand sizes and voids")
    out = np.full((n, unseen.shape[0]), -1, dtype=np.int64)
    for w in range(n):
        rem = start
        pools = [gen.permutation(x) for x in by_suit]
        taken = [0] * S
        for i, p in enumerate(seats):
            options = splits(int(counts[p]), rem, allowed[p])
            weights = np.array(
                [
                    math.prod(math.comb(rem[s], k[s]) for s in range(S))
                    * ways(i + 1, tuple(rem[s] - k[s] for s in range(S)))
                    for k in options
                ]
            )
            k = options[int(gen.choice(len(options), p=weights / weights.sum()))]
            for s in range(S):
                out[w, pools[s][taken[s] : taken[s] + k[s]]] = p
                taken[s] += k[s]
            rem = tuple(rem[s] - k[s] for s in range(S))
    return out


def consistent(
    hands: np.ndarray,
    own_hand: np.ndarray,
    seat: np.ndarray,
    unseen: np.ndarray,
    counts: np.ndarray,
    void: np.ndarray,
    deck: Deck,
) -> np.ndarray:
    """(B, W) bool: each sampled world respects every constraint (for tests and checks)."""
    hands = np.asarray(hands, dtype=bool)
    B, W, P, N = hands.shape
    b = np.arange(B)
    seat = np.asarray(seat, dtype=np.int64)
    mine = hands[b, :, seat]  # (B, W, N)
    ok = np.all(mine == own_hand[:, None, :], axis=2)
    others = hands.copy()
    others[b, :, seat] = False
    ok &= hands.sum(axis=2).max(axis=2) <= 1  # no card twice
    ok &= ~np.any(others & ~unseen[:, None, None, :], axis=(2, 3))
    cnt = others.sum(axis=3)  # (B, W, P)
    want = np.asarray(counts, dtype=np.int64).copy()
    want[b, seat] = 0
    ok &= np.all(cnt == want[:, None, :], axis=2)
    suit_onehot = deck.suit_of[None, :] == np.arange(deck.n_suits)[:, None]  # (S, N)
    per_suit = np.einsum("bwpn,sn->bwps", others.astype(np.int64), suit_onehot.astype(np.int64))
    ok &= ~np.any((per_suit > 0) & np.asarray(void, dtype=bool)[:, None], axis=(2, 3))
    return ok


# --------------------------------------------------------------------------
# Bob's Hat: a public state from one seat's observation
def _seen_from(
    hand: np.ndarray,
    played: np.ndarray,
    trick: np.ndarray,
    size: np.ndarray,
    tricks_done: np.ndarray,
    me: np.ndarray,
    P: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What one seat knows of the cards, for both games' public states.

    Returns hands (B, P, N) with only the observer's own cards, the number of
    cards each seat still holds (B, P) and the cards nobody has seen (B, N).
    trick: (B, P) card ids by absolute seat, -1 where none.
    """
    B, N = hand.shape
    b = np.arange(B)
    hands = np.zeros((B, P, N), dtype=bool)
    hands[b, me] = hand
    in_trick = np.zeros((B, N), dtype=bool)
    g, p = np.nonzero(trick >= 0)
    in_trick[g, trick[g, p]] = True
    # Cards held: the hand size less completed tricks, less one for a card in the current trick.
    counts = size[:, None] - tricks_done[:, None] - (trick >= 0)
    counts[b, me] = hand.sum(axis=1)
    return hands, counts, ~hand & ~played & ~in_trick


def bh_public_state(cfg: BobsHatConfig, obs: np.ndarray, seat: np.ndarray) -> tuple[bh.State, np.ndarray, np.ndarray]:
    """Rebuild what seat ``seat`` knows from its private observations.

    Returns ``(state, counts, unseen)``: a :class:`bobs_hat.State` whose
    ``hands`` hold only the observer's cards (every other hand is empty:
    hidden), ``counts`` (B, P) the number of cards each absolute seat holds,
    and ``unseen`` (B, 60) the cards the observer has not seen. The state's
    ``key`` is zero: the real key would reveal the deal, and a search only
    plays to the end of the hand.
    """
    P = cfg.players
    obs = np.asarray(obs, dtype=np.float32)
    B = obs.shape[0]
    b = np.arange(B)
    o = _observe.bh_layout(cfg).views(obs)
    me = np.asarray(seat, dtype=np.int64).reshape(B)
    absolute = (me[:, None] + np.arange(P)[None, :]) % P  # relative r -> absolute seat
    onehot = lambda a: np.argmax(a, axis=1)  # noqa: E731
    hand = o["hand"] > 0.5
    played = o["played"] > 0.5
    trick_rel = np.where(o["trick"].any(axis=2), np.argmax(o["trick"], axis=2), -1)  # (B, P) relative
    trick = np.full((B, P), -1, dtype=np.int8)
    trick[b[:, None], absolute] = trick_rel
    n_in_trick = (trick >= 0).sum(axis=1)
    leader = (onehot(o["leader"]) + me) % P
    lead_card = trick[b, leader].astype(np.int64)
    led_suit = np.where(lead_card >= 0, BOBS_HAT_DECK.suit_of[np.maximum(lead_card, 0)], -1)
    hand_no = onehot(o["hand_number"])
    size = bh_hand_size(hand_no)
    tricks_done = played.sum(axis=1) // P
    phase_oh = o["phase"]
    phase = np.where(phase_oh.any(axis=1), onehot(phase_oh), bh.DONE)
    rb = o["bids"]  # (B, P, 6) relative
    code = rb[..., 0] + 2 * rb[..., 1] + 4 * rb[..., 2] + 8 * (rb[..., 3] + rb[..., 4])
    code = np.where(rb[..., 5] > 0.5, np.rint(code), -1).astype(np.int8)
    bids = np.full((B, P), -1, dtype=np.int8)
    bids[b[:, None], absolute] = code
    taken = np.zeros((B, P, 3), dtype=np.int8)
    taken[b[:, None], absolute] = np.rint(o["taken"] * 20).astype(np.int8)
    scores = np.zeros((B, P), dtype=np.int32)
    scores[b[:, None], absolute] = np.rint(o["scores"] * 100).astype(np.int32)
    holder_rel = onehot(o["hat_holder"])
    hat_holder = np.where(holder_rel == 0, -1, (holder_rel - 1 + me) % P).astype(np.int8)
    hat_value = np.where(o["hat_value"][:, 0] > 0.5, 10, np.where(o["hat_value"][:, 1] > 0.5, -10, 0)).astype(np.int8)
    dealer = ((onehot(o["dealer"]) + me) % P).astype(np.int8)
    no_bid_used = np.zeros((B, P), dtype=bool)
    if cfg.no_bid:
        no_bid_used[b[:, None], absolute] = o["no_bid_left"] < 0.5
    hands, counts, unseen = _seen_from(hand, played, trick, size, tricks_done, me, P)
    n_bids = (bids >= 0).sum(axis=1)
    state = bh.State(
        key=np.zeros(B, dtype=np.uint64),
        phase=phase.astype(np.int8),
        hand_no=hand_no.astype(np.int8),
        attempt=np.zeros(B, dtype=np.int16),
        dealer=dealer,
        first_dealer=((dealer.astype(np.int64) - hand_no) % P).astype(np.int8),
        cur=me.astype(np.int8),
        trump=onehot(o["trump"]).astype(np.int8),
        hands=hands,
        hat_value=hat_value,
        hat_holder=hat_holder,
        bids=bids,
        n_bids=n_bids.astype(np.int8),
        no_bid_used=no_bid_used,
        trick=trick,
        leader=leader.astype(np.int8),
        n_in_trick=n_in_trick.astype(np.int8),
        led_suit=led_suit.astype(np.int8),
        tricks_done=tricks_done.astype(np.int8),
        taken=taken,
        played=played,
        scores=scores,
        last_scores=np.zeros((B, P), dtype=np.int16),
    )
    return state, counts.astype(np.int64), unseen


def void_tracker(game: Any, batch: int) -> VoidTracker:
    """A :class:`VoidTracker` for a batch of games of ``game`` (a :class:`bobshat_env.games.Game`)."""
    module = game.module
    return VoidTracker(
        batch,
        game.players,
        module.DECK,
        play_phase=module.PLAY,
        bid_phase=module.BID,
        secret_bids=game.secret_bids,
    )


# --------------------------------------------------------------------------
# Oh Hell: a public state from one seat's observation
def oh_public_state(cfg: Any, obs: np.ndarray, seat: np.ndarray) -> tuple[Any, np.ndarray, np.ndarray]:
    """Oh Hell's :func:`bh_public_state`: ``(state, counts, unseen)`` from private observations.

    The turned trump card is face up, so it is not among the unseen cards.
    """
    P = cfg.players
    obs = np.asarray(obs, dtype=np.float32)
    B = obs.shape[0]
    b = np.arange(B)
    o = _observe.oh_layout(cfg).views(obs)
    me = np.asarray(seat, dtype=np.int64).reshape(B)
    absolute = (me[:, None] + np.arange(P)[None, :]) % P
    onehot = lambda a: np.argmax(a, axis=1)  # noqa: E731
    hand = o["hand"] > 0.5
    played = o["played"] > 0.5
    trick_rel = np.where(o["trick"].any(axis=2), np.argmax(o["trick"], axis=2), -1)
    trick = np.full((B, P), -1, dtype=np.int8)
    trick[b[:, None], absolute] = trick_rel
    leader = (onehot(o["leader"]) + me) % P
    lead_card = trick[b, leader].astype(np.int64)
    led_suit = np.where(lead_card >= 0, OH_HELL_DECK.suit_of[np.maximum(lead_card, 0)], -1)
    hand_no = onehot(o["hand_number"])
    size = onehot(o["hand_size"]) + 1
    tricks_done = played.sum(axis=1) // P
    ph = o["phase"]
    phase = np.where(ph.any(axis=1), onehot(ph) + oh.BID, oh.DONE)
    bids = np.full((B, P), -1, dtype=np.int8)
    bids[b[:, None], absolute] = np.argmax(o["bids"], axis=2) - 1
    taken = np.zeros((B, P), dtype=np.int8)
    taken[b[:, None], absolute] = np.rint(o["taken"] * 10).astype(np.int8)
    scores = np.zeros((B, P), dtype=np.int32)
    scores[b[:, None], absolute] = np.rint(o["scores"] * 100).astype(np.int32)
    dealer = ((onehot(o["dealer"]) + me) % P).astype(np.int8)
    trump_card = onehot(o["trump_card"]).astype(np.int8)
    hands, counts, unseen = _seen_from(hand, played, trick, size, tricks_done, me, P)
    unseen[b, trump_card.astype(np.int64)] = False
    state = oh.State(
        key=np.zeros(B, dtype=np.uint64),
        phase=phase.astype(np.int8),
        hand_no=hand_no.astype(np.int8),
        dealer=dealer,
        first_dealer=((dealer.astype(np.int64) - hand_no) % P).astype(np.int8),
        cur=me.astype(np.int8),
        hands=hands,
        bids=bids,
        n_bids=(bids >= 0).sum(axis=1).astype(np.int8),
        trick=trick,
        leader=leader.astype(np.int8),
        n_in_trick=(trick >= 0).sum(axis=1).astype(np.int8),
        led_suit=led_suit.astype(np.int8),
        tricks_done=tricks_done.astype(np.int8),
        played=played,
        scores=scores,
        last_scores=np.zeros((B, P), dtype=np.int16),
        hand_size=size.astype(np.int8),
        trump_card=trump_card,
        taken=taken,
    )
    return state, counts.astype(np.int64), unseen
