"""Determinization: sampled worlds respect what the seat saw, and are uniform over consistent deals."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest
from bh_script import Game

from agents.base import sample_masked
from bobshat_env.core import bobs_hat as bh
from bobshat_env.core import resample
from bobshat_env.core.cards import BOBS_HAT_DECK, Deck, bh_parse_card
from bobshat_env.core.config import BobsHatConfig
from bobshat_env.games import make_game


def _random_positions(players: int, n_games: int, seed: int):
    """Play random games; yield (state copy, true voids) at many decision points."""
    game = make_game("bobs_hat", players=players)
    state = game.init(np.arange(n_games, dtype=np.uint64) + 1000 * players)
    tracker = resample.void_tracker(game, n_games)
    gen = np.random.default_rng(seed)
    for t in range(400):
        mask = game.legal_action_mask(state)
        live = mask.any(axis=1)
        if not live.any():
            break
        mask[~live, 0] = True
        actions = sample_masked(mask, gen)
        if t % 7 == 3:
            yield state.copy(), tracker.void.copy()
        tracker.before_step(state, actions, live)
        res = game.step(state, actions, active=live)
        tracker.after_step(res)


def _true_voids_ok(state: bh.State, void: np.ndarray) -> None:
    """A recorded void is never contradicted by the cards the seat still holds."""
    per_suit = state.hands.reshape(*state.hands.shape[:2], 3, 20).any(axis=3)
    assert not np.any(per_suit & void)


@pytest.mark.parametrize("players", [3, 4, 5])
def test_public_state_and_worlds_are_consistent(players):
    cfg = BobsHatConfig(players=players)
    gen = np.random.default_rng(7)
    checked = 0
    n_voids = 0
    for state, void in _random_positions(players, 24, seed=players):
        _true_voids_ok(state, void)
        rows = np.nonzero(state.phase < bh.DEAL)[0]
        st = state.take(rows)
        seat = st.cur.astype(np.int64)
        obs = bh.observe(cfg, st)
        pub, counts, unseen = bh.public_state(cfg, obs, seat)
        b = np.arange(rows.size)
        # the public state agrees with the true one on every public field, and hides the other hands
        for name in (
            "phase",
            "hand_no",
            "dealer",
            "cur",
            "trump",
            "hat_value",
            "hat_holder",
            "bids",
            "n_bids",
            "trick",
            "leader",
            "n_in_trick",
            "led_suit",
            "tricks_done",
            "taken",
            "played",
            "scores",
        ):
            assert np.array_equal(getattr(pub, name), getattr(st, name)), name
        assert np.array_equal(counts, st.hands.sum(axis=2))
        assert np.array_equal(pub.hands[b, seat], st.hands[b, seat])
        others = pub.hands.copy()
        others[b, seat] = False
        assert not others.any() and not pub.key.any()
        # the true deal is one of the consistent deals; every sampled world is consistent
        v = void[rows]
        n_voids += int(v.sum())
        truth = st.hands[:, None]
        assert resample.consistent(truth, st.hands[b, seat], seat, unseen, counts, v, BOBS_HAT_DECK).all()
        worlds = resample.sample_hands(st.hands[b, seat], seat, unseen, counts, v, BOBS_HAT_DECK, 6, gen)
        assert worlds.shape == (rows.size, 6, players, 60)
        assert resample.consistent(worlds, st.hands[b, seat], seat, unseen, counts, v, BOBS_HAT_DECK).all()
        checked += rows.size
    assert checked > 200 and n_voids > 20  # the check saw many positions, with voids


def _small_case():
    """Six unseen cards (two per suit) for two other seats of two cards each; two stay out of play.
    Seat 1 is void in suit 0 and seat 2 in suit 2."""
    deck = Deck(
        "mini", 3, np.array([0, 0, 1, 1, 2, 2, 0], dtype=np.int8), np.array([0, 1, 0, 1, 0, 1, 2], dtype=np.int8)
    )
    own = np.zeros((1, 7), dtype=bool)
    own[0, 6] = True  # the seat's own card
    unseen = np.ones((1, 7), dtype=bool)
    unseen[0, 6] = False
    counts = np.array([[1, 2, 2]])
    void = np.zeros((1, 3, 3), dtype=bool)
    void[0, 1, 0] = True
    void[0, 2, 2] = True
    return deck, own, unseen, counts, void


def _all_consistent(deck, unseen, counts, void) -> list[tuple[int, ...]]:
    cards = np.nonzero(unseen[0])[0]
    out = []
    for owners in itertools.product([-1, 1, 2], repeat=cards.size):
        o = np.array(owners)
        if (o == 1).sum() != counts[0, 1] or (o == 2).sum() != counts[0, 2]:
            continue
        if any(p >= 0 and void[0, p, deck.suit_of[c]] for p, c in zip(o, cards)):
            continue
        out.append(tuple(owners))
    return out


@pytest.mark.parametrize("max_tries", [100, 0])  # rejection sampling; the exact counting sampler
def test_worlds_are_uniform_over_consistent_deals(max_tries):
    deck, own, unseen, counts, void = _small_case()
    deals = _all_consistent(deck, unseen, counts, void)
    # by hand: seat 1 takes two of {2,3,4,5}: {2,3} leaves seat 2 one pair, {4,5} six, a mixed pair three (x4)
    assert len(deals) == 1 + 6 + 4 * 3
    n = 19000
    worlds = resample.sample_hands(
        own, np.array([0]), unseen, counts, void, deck, n, np.random.default_rng(1), max_tries=max_tries
    )
    assert resample.consistent(worlds, own, np.array([0]), unseen, counts, void, deck).all()
    cards = np.nonzero(unseen[0])[0]
    owner = np.where(worlds[0][:, 1][:, cards], 1, np.where(worlds[0][:, 2][:, cards], 2, -1))
    freq = Counter(map(tuple, owner))
    assert set(freq) == set(deals)  # every consistent deal appears, nothing else
    expected = n / len(deals)
    chi2 = sum((freq[d] - expected) ** 2 / expected for d in deals)
    assert chi2 < 45.0  # 18 degrees of freedom: p < 0.001 above 42.3


def test_contradiction_raises():
    deck, own, unseen, counts, void = _small_case()
    void[0, 1] = True  # seat 1 holds two cards but is void in every suit
    with pytest.raises(ValueError, match="consistent"):
        resample.sample_hands(own, np.array([0]), unseen, counts, void, deck, 2, np.random.default_rng(0), max_tries=3)
    with pytest.raises(ValueError, match="unseen"):
        resample.sample_hands(
            own, np.array([0]), unseen, np.array([[1, 4, 4]]), void * False, deck, 2, np.random.default_rng(0)
        )


def test_void_tracker_records_discards_and_resets():
    cfg = BobsHatConfig(players=3, hands=2)
    g = Game(cfg)
    tracker = resample.VoidTracker(1, 3, BOBS_HAT_DECK, bh.PLAY, bh.BID)

    def act(text: str) -> None:
        a = int(text) if text.isdigit() else bh_parse_card(text)
        tracker.before_step(g.state, np.array([a]))
        tracker.after_step(g.act(a))

    g.deal("none", ["blue1 blue2 blue3 red1 red2", "blue4 red3 red4 red5 red6", "black1 black2 black3 black4 black5"])
    act(str(bh.HAT_PLUS))
    for code in (1, 2, 4):
        act(str(bh.BID_BASE + code))
    act("blue1")  # seat 0 leads blue
    act("blue4")  # seat 1 follows
    act("black1")  # seat 2 shows void in blue
    assert tracker.void[0].tolist() == [[False] * 3, [False] * 3, [True, False, False]]
    # seat 1 took the trick and leads red; seat 2 shows void in red, seat 0 follows
    act("red3")
    act("black2")
    act("red1")
    assert tracker.void[0, 2].tolist() == [True, True, False]
    assert not tracker.void[0, :2].any()


@pytest.mark.parametrize("secret", [False, True])
def test_public_record_keeps_the_hands_actions_in_order_and_hides_secret_bids_until_all_have_bid(secret):
    cfg = BobsHatConfig(players=3, hands=2, secret_bidding=secret)
    g = Game(cfg)
    tracker = resample.VoidTracker(1, 3, BOBS_HAT_DECK, bh.PLAY, bh.BID, secret_bids=secret)
    actions: list[int] = []

    def act(text: str) -> None:
        a = int(text) if text.isdigit() else bh_parse_card(text)
        actions.append(a)
        tracker.before_step(g.state, np.array([a]))
        tracker.after_step(g.act(a))

    def history() -> list[int]:
        h = tracker.rows(np.array([0]))["history"][0]
        return h[h >= 0].tolist()

    g.deal("none", ["blue1 blue2 blue3 red1 red2", "blue4 red3 red4 red5 red6", "black1 black2 black3 black4 black5"])
    act(str(bh.HAT_PLUS))
    act(str(bh.BID_BASE + 1))
    act(str(bh.BID_BASE + 2))
    # while secret bids are under way only the hat choice is face up; open bids are public at once
    assert history() == (actions[:1] if secret else actions)
    act(str(bh.BID_BASE + 4))  # the last bid: now every bid is revealed
    assert history() == actions
    for card in ("blue1", "blue4", "black1", "red3"):
        act(card)
    assert history() == actions
    played_by = tracker.rows(np.array([0]))["played_by"][0]
    assert [sorted(np.flatnonzero(played_by[p]).tolist()) for p in range(3)] == [
        [bh_parse_card("blue1")],
        sorted([bh_parse_card("blue4"), bh_parse_card("red3")]),
        [bh_parse_card("black1")],
    ]
    while g.phase == bh.PLAY:  # play the hand out with the lowest legal card: the record clears at the new hand
        a = int(np.flatnonzero(bh.legal_action_mask(cfg, g.state)[0])[0])
        tracker.before_step(g.state, np.array([a]))
        tracker.after_step(g.act(a))
    rows = tracker.rows(np.array([0]))
    assert history() == [] and not rows["played_by"].any() and not rows["void"].any()
