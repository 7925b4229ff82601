"""Random batched play of Where's Bob's Hat?, checked against an independent referee.

Over a grid of player counts and options, a few dozen games each are played
together by a deterministic pseudo-random policy (in renege mode it sometimes
plays a held card regardless of the mask). A plain-Python referee follows
every action and checks: turn order, masks, every dealt card played exactly
once by its owner, hands empty at the end of a hand, trick winners, Bob's Hat,
per-hand scores recomputed from scratch, renege penalties, dealer rotation and
that the game totals are the sum of the rewards. Finally B = 1 and B = 1000 with
the same seed must play identical games.
"""

from __future__ import annotations

import numpy as np
import pytest

from bobshat_env.core import bobs_hat as bh
from bobshat_env.core import rng
from bobshat_env.core.config import BobsHatConfig

OPTION_SETS = {
    "plain": {},
    "double_fewest": {"double_fewest": True},
    "no_bid": {"no_bid": True},
    "secret_bidding": {"secret_bidding": True},
    "negative_scoring": {"negative_scoring": True},
    "renege_mode": {"renege_mode": True},
    "all": {
        "double_fewest": True,
        "no_bid": True,
        "secret_bidding": True,
        "negative_scoring": True,
        "renege_mode": True,
    },
}
N_GAMES = 32
POLICY_KEY = np.uint64(0x5EED)
RENEGE_ONE_IN = 24  # in renege mode, this share of card plays ignores the mask


def policy(cfg: BobsHatConfig, state: bh.State, game_ids: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """A legal action chosen by a hash of (game id, the game's step number).

    In renege mode about one card play in RENEGE_ONE_IN picks any held card
    instead, which reneges when it breaks follow suit. Rows of finished games
    get action 0 (they are inactive).
    """
    mask = bh.legal_action_mask(cfg, state)
    h = rng.combine(POLICY_KEY, game_ids.astype(np.uint64), steps.astype(np.uint64))
    if cfg.renege_mode:
        wild = (state.phase == bh.PLAY) & ((h >> np.uint64(40)) % np.uint64(RENEGE_ONE_IN) == 0)
        b = np.nonzero(wild)[0]
        mask[b, : bh.N_CARDS] = state.hands[b, state.cur[b]]
    n = mask.sum(axis=1)
    k = (h % np.maximum(n, 1).astype(np.uint64)).astype(np.int64)
    act = np.argmax(np.cumsum(mask, axis=1) > k[:, None], axis=1)
    return np.where(n > 0, act, 0).astype(np.int64)


# --------------------------------------------------------------------------
# The referee: plain Python, no use of the core's scoring or trick code
def ref_trick_winner(cards: list[int], leader: int, trump: int) -> int:
    led = cards[leader] // 20
    best, best_key = -1, (-1, -1)
    for seat, c in enumerate(cards):
        suit, rank = c // 20, c % 20 + 1
        key = (2 if suit == trump else 1 if suit == led else 0, rank)
        if key > best_key:
            best, best_key = seat, key
    return best


def ref_hand_scores(
    cfg: BobsHatConfig,
    bids: list[int],
    taken: list[list[int]],
    dealt_per_suit: list[int],
    hat_value: int,
    hat_holder: int,
    size: int,
) -> list[int]:
    P = cfg.players
    totals = [sum(t) for t in taken]
    out = []
    for p in range(P):
        code = bids[p]
        assert 0 <= code < 24
        if code == 0:
            out.append(0)
            continue
        s = 0
        for suit in range(3):
            if code >> suit & 1:
                mine = taken[p][suit]
                if dealt_per_suit[suit] == 0 or all(mine > taken[q][suit] for q in range(P) if q != p):
                    s += 5 + mine
                else:
                    s += -5 - (mine if cfg.negative_scoring else 0)
        made = all(totals[p] < totals[q] for q in range(P) if q != p)
        s += (code // 8) * (size if made else -size)
        if hat_holder == p:
            s += hat_value
        out.append(s)
    return out


class Referee:
    """Follows B games action by action and checks everything it can."""

    def __init__(self, cfg: BobsHatConfig, state: bh.State):
        B, P = state.batch_size, cfg.players
        self.cfg, self.state, self.B, self.P = cfg, state, B, P
        self.first_dealer = state.first_dealer.astype(np.int64).copy()
        self.hand = np.zeros(B, dtype=np.int64)
        self.attempt = np.zeros(B, dtype=np.int64)
        self.dealer = self.first_dealer.copy()
        self.trump = np.zeros(B, dtype=np.int64)
        self.dealt = np.zeros((B, P, 60), dtype=bool)
        self.played_by = np.zeros((B, P, 60), dtype=np.int64)
        self.taken = np.zeros((B, P, 3), dtype=np.int64)
        self.holder = np.full(B, -1, dtype=np.int64)
        self.hat_value = np.zeros(B, dtype=np.int64)
        self.bids = np.full((B, P), -1, dtype=np.int64)
        self.n_bids = np.zeros(B, dtype=np.int64)
        self.trick_cards = np.full((B, P), -1, dtype=np.int64)
        self.trick_n = np.zeros(B, dtype=np.int64)
        self.leader = np.zeros(B, dtype=np.int64)
        self.no_bid_used = np.zeros((B, P), dtype=bool)
        self.rewards = np.zeros((B, P), dtype=np.int64)  # sum of every step's rewards
        self.ledger = np.zeros((B, P), dtype=np.int64)  # referee's hand scores + renege penalties
        self.hands_scored = np.zeros(B, dtype=np.int64)
        self.reneges = 0
        self.tricks = 0

    def deal(self, idx: np.ndarray) -> None:
        """Deal the pending hand of games idx from their keys, as auto_deal would."""
        if not idx.size:
            return
        cfg, st = self.cfg, self.state
        assert np.all(st.phase[idx] == bh.DEAL)
        assert np.array_equal(st.hand_no[idx], self.hand[idx]) and np.array_equal(st.attempt[idx], self.attempt[idx])
        trump, hands = bh.random_deal(cfg, st.key[idx], self.hand[idx], self.attempt[idx])
        bh.deal(cfg, st, idx, trump, hands)
        self.dealer[idx] = (self.first_dealer[idx] + self.hand[idx]) % self.P
        assert np.array_equal(st.dealer[idx], self.dealer[idx])
        assert np.all(hands.sum(axis=2) == (5 + self.hand[idx])[:, None])
        assert hands.sum(axis=1).max() <= 1
        self.trump[idx] = trump
        self.dealt[idx] = hands
        self.played_by[idx] = 0
        self.taken[idx] = 0
        self.holder[idx] = -1
        self.hat_value[idx] = 0
        self.bids[idx] = -1
        self.n_bids[idx] = 0
        self.trick_cards[idx] = -1
        self.trick_n[idx] = 0
        self.leader[idx] = self.dealer[idx]

    def held(self, b: int, seat: int) -> np.ndarray:
        return self.dealt[b, seat] & (self.played_by[b, seat] == 0)

    def check_before(self, running: np.ndarray, mask: np.ndarray) -> None:
        st, P = self.state, self.P
        assert mask[running].any(axis=1).all(), "a running game has no legal action"
        assert not mask[~running].any()
        ph, cur = st.phase, st.cur.astype(np.int64)
        hat = running & (ph == bh.HAT)
        assert np.array_equal(cur[hat], self.dealer[hat])
        assert mask[hat, bh.HAT_PLUS : bh.HAT_MINUS + 1].all() and mask[hat].sum() == 2 * hat.sum()
        bid = running & (ph == bh.BID)
        assert np.array_equal(cur[bid], (self.dealer[bid] + self.n_bids[bid]) % P)
        assert not mask[bid, : bh.BID_BASE].any()
        b = np.nonzero(bid)[0]
        legal_codes = mask[b, bh.BID_BASE :]
        assert not legal_codes[:, 16:].any() or self.cfg.double_fewest
        assert np.array_equal(legal_codes[:, 0], self.cfg.no_bid & ~self.no_bid_used[b, cur[b]])
        assert legal_codes[:, 1:16].all()
        play = running & (ph == bh.PLAY)
        assert np.array_equal(cur[play], (self.leader[play] + self.trick_n[play]) % P)
        assert not mask[play, bh.N_CARDS :].any()
        for g in np.nonzero(play)[0]:
            held = self.held(g, cur[g])
            assert np.array_equal(st.hands[g, cur[g]], held)
            if self.trick_n[g] == 0:
                expect = held
            else:
                led = self.trick_cards[g, self.leader[g]] // 20
                of_led = held & (np.arange(60) // 20 == led)
                expect = of_led if of_led.any() else held
            assert np.array_equal(mask[g, : bh.N_CARDS], expect)
        assert running.sum() == (hat | bid | play).sum()

    def after(self, ph: np.ndarray, cur: np.ndarray, actions: np.ndarray, running: np.ndarray, res) -> None:
        cfg, st, P = self.cfg, self.state, self.P
        self.rewards += res.rewards
        assert not (res.trick_done | res.hand_done | res.renege | res.new_hand | res.game_done)[~running].any()
        assert not res.rewards[~running].any()

        b = np.nonzero(running & (ph == bh.HAT))[0]
        self.hat_value[b] = np.where(actions[b] == bh.HAT_PLUS, 10, -10)
        assert np.array_equal(st.hat_value[b], self.hat_value[b])

        b = np.nonzero(running & (ph == bh.BID))[0]
        self.bids[b, cur[b]] = actions[b] - bh.BID_BASE
        self.n_bids[b] += 1

        renege = res.renege
        if not cfg.renege_mode:
            assert not renege.any()
        for g in np.nonzero(renege)[0]:
            seat, card = int(cur[g]), int(actions[g])
            held = self.held(g, seat)
            led = self.trick_cards[g, self.leader[g]] // 20
            assert ph[g] == bh.PLAY and self.trick_n[g] > 0 and held[card] and card // 20 != led
            assert (held & (np.arange(60) // 20 == led)).any()
            penalty = np.zeros(P, dtype=np.int64)
            penalty[seat] = -15
            assert np.array_equal(res.rewards[g], penalty)
            assert np.array_equal(st.last_scores[g], penalty)
            self.ledger[g] += penalty
            self.attempt[g] += 1
            self.reneges += 1

        play = np.nonzero(running & (ph == bh.PLAY) & ~renege)[0]
        seats, cards = cur[play], actions[play]
        assert np.all(self.dealt[play, seats, cards]) and not self.played_by[play, seats, cards].any()
        for g, seat, card in zip(play, seats, cards, strict=True):
            if self.trick_n[g] > 0:  # follow suit, checked without the core
                led = self.trick_cards[g, self.leader[g]] // 20
                if card // 20 != led:
                    assert not (self.held(g, seat) & (np.arange(60) // 20 == led)).any()
        self.played_by[play, seats, cards] += 1
        self.trick_cards[play, seats] = cards
        self.trick_n[play] += 1

        done = play[self.trick_n[play] == P]
        assert np.array_equal(np.nonzero(res.trick_done)[0], done)
        for g in done:
            cards_g = self.trick_cards[g].tolist()
            w = ref_trick_winner(cards_g, int(self.leader[g]), int(self.trump[g]))
            assert res.trick_winner[g] == w and res.trick_leader[g] == self.leader[g]
            assert res.trick_cards[g].tolist() == cards_g
            for c in cards_g:
                self.taken[g, w, c // 20] += 1
            if any(c % 20 + 1 in (14, 15) for c in cards_g):
                self.holder[g] = w
            assert st.hat_holder[g] == self.holder[g]
            self.leader[g] = w
            self.trick_n[g] = 0
            self.trick_cards[g] = -1
            self.tricks += 1

        hand_done = np.nonzero(res.hand_done)[0]
        ended = np.zeros(self.B, dtype=bool)
        for g in hand_done:
            size = int(5 + self.hand[g])
            assert not st.hands[g].any(), "cards left in a hand at its end"
            assert np.array_equal(self.played_by[g], self.dealt[g].astype(np.int64))
            assert np.array_equal(st.played[g], self.dealt[g].any(axis=0))
            assert self.taken[g].sum() == P * size
            assert np.array_equal(st.taken[g], self.taken[g])
            dealt_per_suit = self.dealt[g].any(axis=0).reshape(3, 20).sum(axis=1).tolist()
            ref = ref_hand_scores(
                cfg,
                self.bids[g].tolist(),
                self.taken[g].tolist(),
                dealt_per_suit,
                int(self.hat_value[g]),
                int(self.holder[g]),
                size,
            )
            assert res.rewards[g].tolist() == ref
            assert st.last_scores[g].tolist() == ref
            self.ledger[g] += ref
            self.no_bid_used[g] |= self.bids[g] == 0
            self.hand[g] += 1
            self.attempt[g] = 0
            self.hands_scored[g] += 1
            ended[g] = self.hand[g] == cfg.hands
        quiet = ~(res.hand_done | renege)
        assert not res.rewards[quiet].any()
        assert np.array_equal(res.game_done, ended)
        assert np.all(st.phase[ended] == bh.DONE)
        assert np.array_equal(st.no_bid_used, self.no_bid_used)
        pending = (res.hand_done & ~ended) | renege
        assert np.array_equal(res.new_hand, pending)
        self.deal(np.nonzero(pending)[0])


def play_checked(cfg: BobsHatConfig, n_games: int, seed: int) -> Referee:
    keys = rng.game_keys(seed, np.arange(n_games))
    state = bh.init(cfg, keys, auto_deal=False)
    ref = Referee(cfg, state)
    ref.deal(np.arange(n_games))
    ids = np.arange(n_games)
    steps = np.zeros(n_games, dtype=np.int64)
    while True:
        running = state.phase != bh.DONE
        if not running.any():
            break
        mask = bh.legal_action_mask(cfg, state)
        ref.check_before(running, mask)
        actions = policy(cfg, state, ids, steps)
        ph, cur = state.phase.copy(), state.cur.astype(np.int64)
        res = bh.step(cfg, state, actions, active=running, auto_deal=False)
        steps += running
        ref.after(ph, cur, actions, running, res)
    assert np.all(ref.hands_scored == cfg.hands)
    assert np.array_equal(ref.rewards, state.scores)
    assert np.array_equal(ref.ledger, state.scores)
    assert np.all(bh.legal_action_mask(cfg, state) == 0)
    return ref


@pytest.mark.parametrize("options", list(OPTION_SETS))
@pytest.mark.parametrize("players", [3, 4, 5])
def test_random_play_invariants(players, options):
    cfg = BobsHatConfig(players=players, **OPTION_SETS[options])
    ref = play_checked(cfg, N_GAMES, seed=1000 * players + len(options))
    sizes = sum(5 + h for h in range(cfg.hands))
    if cfg.renege_mode:
        assert ref.reneges > 0  # the policy does renege now and then
        assert ref.tricks >= N_GAMES * sizes
    else:
        assert ref.reneges == 0 and ref.tricks == N_GAMES * sizes


def test_random_first_dealer_invariants():
    cfg = BobsHatConfig(players=5, hands=3, first_dealer=-1, no_bid=True, renege_mode=True)
    ref = play_checked(cfg, N_GAMES, seed=77)
    assert len(set(ref.first_dealer.tolist())) > 1


# --------------------------------------------------------------------------
# B = 1 and B = 1000 play the same games
def play_traced(cfg: BobsHatConfig, seed: int, game_ids: np.ndarray):
    """Auto-dealt play of the games ``game_ids``; per step actions, activity, rewards."""
    keys = rng.game_keys(seed, game_ids)
    state = bh.init(cfg, keys)
    B = len(game_ids)
    steps = np.zeros(B, dtype=np.int64)
    trace_a, trace_on, trace_r = [], [], []
    while True:
        running = state.phase != bh.DONE
        if not running.any():
            break
        actions = policy(cfg, state, game_ids, steps)
        res = bh.step(cfg, state, actions, active=running)
        steps += running
        trace_a.append(actions)
        trace_on.append(running)
        trace_r.append(res.rewards.copy())
    return state, np.array(trace_a), np.array(trace_on), np.array(trace_r)


@pytest.mark.parametrize(
    "cfg",
    [
        BobsHatConfig(players=4),
        BobsHatConfig(
            players=5,
            hands=5,
            first_dealer=-1,
            double_fewest=True,
            no_bid=True,
            secret_bidding=True,
            negative_scoring=True,
            renege_mode=True,
        ),
    ],
    ids=["plain4", "all5"],
)
def test_batch_size_does_not_change_games(cfg):
    seed = 2024
    big, a_big, on_big, r_big = play_traced(cfg, seed, np.arange(1000))
    assert np.array_equal(r_big.sum(axis=0), big.scores)
    lengths = on_big.sum(axis=0)
    if cfg.renege_mode:
        assert lengths.min() < lengths.max()  # reneges make games of different lengths
    for i in (0, 1, 137, 500, 998, 999):
        one, a_one, on_one, r_one = play_traced(cfg, seed, np.array([i]))
        assert on_one.all() and len(a_one) == lengths[i]
        sel = on_big[:, i]
        assert np.array_equal(a_big[sel, i], a_one[:, 0])
        assert np.array_equal(r_big[sel, i], r_one[:, 0])
        small = big.take(np.array([i]))
        for name, arr in vars(small).items():
            assert np.array_equal(arr, getattr(one, name)), name
