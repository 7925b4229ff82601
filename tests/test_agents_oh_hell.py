"""Oh Hell bots: the hook-aware bid, bid-driven play, legality, honesty of the search, strength."""

from __future__ import annotations

import numpy as np
import pytest

from agents import heuristic_oh_hell as ho
from agents import make_agent
from agents.arena import play_games
from agents.base import sample_masked
from bobshat_env.core import oh_hell as oh
from bobshat_env.core import resample
from bobshat_env.core.cards import OH_HELL_DECK, oh_card_str, oh_parse_card
from bobshat_env.core.config import OhHellConfig
from bobshat_env.games import make_game

CFG = OhHellConfig(players=4)  # long deal style: the first hand deals 10 cards, seat 0 deals
GAME = make_game("oh_hell", config=CFG)


def _deal(mine: dict[int, str], trump_card: str) -> oh.State:
    """A 10-card first hand: the given seats' cards, the rest filled in card order."""
    state = oh.init(CFG, np.array([0], dtype=np.uint64), auto_deal=False)
    hands = np.zeros((1, 4, 52), dtype=bool)
    used = {oh_parse_card(trump_card)}
    for seat, text in mine.items():
        for c in text.split():
            hands[0, seat, oh_parse_card(c)] = True
            used.add(oh_parse_card(c))
    free = iter(c for c in range(52) if c not in used)
    for seat in range(4):
        while hands[0, seat].sum() < 10:
            hands[0, seat, next(free)] = True
    oh.deal(CFG, state, np.array([0]), np.array([oh_parse_card(trump_card)]), hands)
    return state


def _act(state: oh.State, action: int) -> None:
    oh.step(CFG, state, np.array([action]), auto_deal=False)


def _decide(spec: str, state: oh.State) -> int:
    agent = make_agent(spec, GAME, seed=0)
    mask = oh.legal_action_mask(CFG, state)
    a = int(agent.act(oh.observe(CFG, state), mask, state.cur.astype(np.int64))[0])
    assert mask[0, a]
    return a


DEALER = "AS KS QS AH KH 7D 5D 4C 3C 2C"  # trump spades: about five tricks


def test_strong_dealer_meets_the_hook_with_the_nearest_legal_bid():
    state = _deal({0: DEALER}, "2S")
    for b in (3, 3, 3):  # seats 1-3 bid; the dealer (seat 0) bids last: 1 is forbidden
        _act(state, oh.BID_BASE + b)
    est = float(ho.strong_bid(ho.facts_from_state(CFG, state))[0])
    free = _decide("strong", state) - oh.BID_BASE
    assert round(est) != 1 and free == round(est)  # its own estimate when that is allowed
    # now make the dealer's natural bid the forbidden one
    state = _deal({0: DEALER}, "2S")
    others = 10 - round(est)
    for b in (others // 3, others // 3, others - 2 * (others // 3)):
        _act(state, oh.BID_BASE + b)
    assert oh.forbidden_bid(state)[0] == round(est)
    hooked = _decide("strong", state) - oh.BID_BASE
    lean = 1 if est > round(est) else -1
    assert hooked == round(est) + lean  # the legal bid on the side the estimate leans to
    assert _decide("simple", state) - oh.BID_BASE != round(est)


def _first_trick(my_bid: int, plays: str, hand: str, trump: str = "2D") -> oh.State:
    """Seat 0 deals; seats 1, 2, 3 have led/followed with ``plays``; seat 0 (holding ``hand``) plays last."""
    state = _deal({0: hand, 1: "KC 9H", 2: "QC 8H", 3: "JC 7H"}, trump)
    for b in (3, 3, 3, my_bid):
        _act(state, oh.BID_BASE + b)
    for c in plays.split():
        _act(state, oh_parse_card(c))
    assert state.cur[0] == 0
    return state


HAND = "AC TC 3C 4H 5H 6H 2S 3S 4S 5S"


@pytest.mark.parametrize("spec", ["simple", "strong"])
def test_on_its_bid_it_ducks_with_the_highest_card_that_loses(spec):
    state = _first_trick(0, "KC QC JC", HAND)  # bid 0: clubs led, AC would win
    assert oh_card_str(_decide(spec, state)) == "TC"


@pytest.mark.parametrize("spec", ["simple", "strong"])
def test_short_of_its_bid_it_takes_the_trick(spec):
    state = _first_trick(4, "KC QC JC", HAND)
    assert oh_card_str(_decide(spec, state)) == "AC"


def test_strong_plays_its_lowest_card_when_the_trick_is_lost():
    state = _first_trick(4, "9H 8H 7H", HAND)  # hearts led, any of my hearts below 9 loses
    # 4H 5H 6H all lose: short of its bid it keeps the higher ones and plays the lowest
    assert oh_card_str(_decide("strong", state)) == "4H"


@pytest.mark.parametrize("spec", ["simple", "strong", "pimc:worlds=2", "bid=strong+play=pimc:worlds=2"])
def test_oh_hell_bots_play_only_legal_actions(spec):
    game = make_game("oh_hell", players=3, deal_style="short_high_low")
    agents = [make_agent(spec, game, seed=1), make_agent("random", game, seed=2), make_agent("strong", game)]
    res = play_games(game, agents, 6, seed=4)
    assert res.games == 6


def test_oh_hell_public_state_and_worlds_are_consistent():
    game = make_game("oh_hell", players=4)
    state = game.init(np.arange(16, dtype=np.uint64) + 77)
    tracker = resample.void_tracker(game, 16)
    gen = np.random.default_rng(0)
    checked = 0
    for t in range(160):
        mask = game.legal_action_mask(state)
        live = mask.any(axis=1)
        mask[~live, 0] = True
        actions = sample_masked(mask, gen)
        if t % 5 == 2:
            rows = np.nonzero(live)[0]
            st = state.take(rows)
            seat = st.cur.astype(np.int64)
            pub, counts, unseen = oh.public_state(game.config, oh.observe(game.config, st), seat)
            for name in ("phase", "dealer", "cur", "trump_card", "bids", "trick", "leader", "taken", "played"):
                assert np.array_equal(getattr(pub, name), getattr(st, name)), name
            assert np.array_equal(counts, st.hands.sum(axis=2))
            b = np.arange(rows.size)
            assert not unseen[b, st.trump_card.astype(np.int64)].any()
            v = tracker.void[rows]
            own = st.hands[b, seat]
            assert resample.consistent(st.hands[:, None], own, seat, unseen, counts, v, OH_HELL_DECK).all()
            worlds = resample.sample_hands(own, seat, unseen, counts, v, OH_HELL_DECK, 4, gen)
            assert resample.consistent(worlds, own, seat, unseen, counts, v, OH_HELL_DECK).all()
            checked += rows.size
        tracker.before_step(state, actions, live)
        tracker.after_step(game.step(state, actions, active=live))
    assert checked > 300


def _diff(game, spec_a: str, spec_b: str, n: int, seed: int) -> tuple[float, float]:
    P = game.players
    diff = np.zeros((P, n))
    for r in range(P):
        agents = [make_agent(spec_b, game, seed=seed)] * P
        agents[r] = make_agent(spec_a, game, seed=seed + 1)
        tot = play_games(game, agents, n, seed=seed).totals.astype(float)
        diff[r] = tot[:, r] - np.delete(tot, r, axis=1).mean(axis=1)
    per = diff.mean(axis=0) / game.config.hands
    return per.mean(), 1.96 * per.std(ddof=1) / np.sqrt(n)


def test_oh_hell_strong_and_simple_beat_random():
    game = make_game("oh_hell", players=4, deal_style="short_low")
    mean, ci = _diff(game, "strong", "random", 30, seed=3)
    assert mean - ci > 1.5, (mean, ci)  # measured +3.7 per hand (long deals)
    mean, ci = _diff(game, "simple", "random", 30, seed=4)
    assert mean - ci > 1.5, (mean, ci)
