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

Each game's ``public_state`` (in its own module, ``bobs_hat.public_state``,
``oh_hell.public_state``: the contract of core/contract.py) rebuilds, from one
seat's private observation, a state in which every other seat's hand is empty
(the hidden part), together with the number of cards each seat still holds
(:func:`seen_from`, shared); the search fills in the hidden hands with
:func:`sample_hands`. This module imports no game: the games import it.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from .cards import Deck
from .tricks import trick_voids

if TYPE_CHECKING:
    from .contract import BoundGame


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
    the games where a new hand starts. ``play_phase`` and ``bid_phase`` are
    the game's phase values (its module's ``PLAY`` and ``BID``; :func:`void_tracker`
    reads them from a game's description).
    """

    def __init__(
        self,
        batch: int,
        players: int,
        deck: Deck,
        play_phase: int,
        bid_phase: int,
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
        row = int(np.nonzero(counts.sum(axis=1) > unseen.sum(axis=1))[0][0])
        raise ValueError(
            f"row {row}: the other seats hold {counts[row].sum()} cards but only {unseen[row].sum()} are unseen"
        )
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
# What one seat has seen, for the games' public states (``public_state`` in each game's module)
def seen_from(
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


def void_tracker(game: BoundGame, batch: int) -> VoidTracker:
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
