"""Bob's Hat bots: key decisions in scripted positions, legality at scale, and a strength check."""

from __future__ import annotations

import numpy as np
import pytest
from bh_script import Game, card_action

from agents import make_agent
from agents.arena import play_games
from agents.base import RandomAgent
from agents.composite import CompositeAgent, parse_composite
from agents.pimc import PIMCAgent
from bobshat_env.core import bobs_hat as bh
from bobshat_env.core.config import BobsHatConfig
from bobshat_env.games import make_game

CFG4 = BobsHatConfig(players=4)
GAME4 = make_game("bobs_hat", config=CFG4)


def _decide(spec: str, g: Game, game=GAME4, public: dict | None = None) -> str:
    """The action the agent of ``spec`` takes for the seat to act in scripted game ``g``."""
    agent = make_agent(spec, game, seed=3)
    obs = bh.observe(game.config, g.state)
    mask = bh.legal_action_mask(game.config, g.state)
    seat = g.state.cur.astype(np.int64)
    if public is not None and getattr(agent, "needs_public", False):
        a = agent.act(obs, mask, seat, public=public)
    else:
        a = agent.act(obs, mask, seat)
    assert mask[0, a[0]], "the agent chose an illegal action"
    return bh.action_str(int(a[0]))


def _position(trump: str, hands: list[str], hat: int, bids: list[str], plays: str) -> Game:
    g = Game(CFG4)
    g.deal(trump, hands)
    g.hat(hat)
    g.bid(*bids)
    if plays:
        g.play(plays)
    return g


HANDS = [
    "blue20 red1 red2 black1 black2",  # seat 0 (dealer, leads)
    "blue11 red3 red4 black3 black4",
    "blue2 red5 red6 black5 black6",
    "blue3 blue9 blue12 red18 black7",  # seat 3: last to play
]


@pytest.mark.parametrize("spec", ["simple", "strong"])
def test_follows_suit_with_the_lowest_card_when_the_trick_is_lost(spec):
    g = _position("none", HANDS, 10, ["black", "black", "black", "red"], "blue20 blue11 blue2")
    # seat 3 bid most red; blue20 wins whatever it plays: it keeps its better blue cards
    assert _decide(spec, g) == "blue3"


TAKE_HANDS = [
    "blue10 red1 red2 black1 black2",
    "blue11 red3 red4 black3 black4",
    "blue2 red5 red6 black5 black6",
    "blue5 blue13 blue19 red18 black7",
]


def test_strong_takes_the_trick_its_bid_wants_with_the_cheapest_winner():
    g = _position("none", TAKE_HANDS, 10, ["red", "red", "red", "blue"], "blue10 blue11 blue2")
    # seat 3 bid most blue; three blue cards are on the table and it plays last: blue13 takes them
    assert _decide("strong", g) == "blue13"
    # the simple strategy takes it too, with its highest card
    assert _decide("simple", g) == "blue19"


def test_strong_does_not_take_an_unwanted_hat_card_under_minus_ten():
    hands = [
        "red14 blue1 blue2 black1 black2",
        "red3 blue3 blue4 black3 black4",
        "red5 blue5 blue6 black5 black6",
        "red2 red16 blue18 blue19 black7",
    ]
    g = _position("none", hands, -10, ["blue", "blue", "blue", "blue"], "red14 red3 red5")
    # the trick holds red14 (a hat card) and the hat is worth -10: seat 3 ducks with red2
    assert _decide("strong", g) == "red2"
    g = _position("none", hands, 10, ["blue", "blue", "blue", "blue"], "red14 red3 red5")
    # worth +10 it takes the hat
    assert _decide("strong", g) == "red16"


def test_strong_fewest_bidder_ducks_with_its_highest_losing_card():
    g = _position("none", HANDS, 10, ["black", "black", "black", "fewest"], "blue20 blue11 blue2")
    assert _decide("strong", g) == "blue12"
    assert _decide("simple", g) == "blue12"


def _dealer(trump: str, hand: str) -> Game:
    rest = ["red1 red2 red3 red4 red5", "red6 red7 red8 red9 red10", "red11 red12 red13 black1 black2"]
    g = Game(CFG4)
    g.deal(trump, [hand, *rest])
    return g


def test_dealer_hat_choice():
    strong_hand = _dealer("blue", "blue16 blue17 blue18 blue19 blue20")
    weak_hand = _dealer("blue", "black3 black4 black5 black6 black7")
    assert _decide("strong", strong_hand) == "hat+10"
    assert _decide("strong", weak_hand) == "hat-10"
    assert _decide("simple", strong_hand) == "hat+10"
    assert _decide("simple", weak_hand) == "hat-10"


def test_strong_bids_its_long_strong_suit_and_fewest_with_a_weak_hand():
    g = _dealer("blue", "blue16 blue17 blue18 blue19 blue20")
    g.hat(10)
    assert _decide("strong", g) == "bid:most_blue"
    g = _dealer("none", "black3 black4 blue1 blue4 blue6")
    g.hat(-10)
    assert _decide("strong", g) == "bid:fewest"


def test_pimc_takes_the_trick_and_chooses_plus_ten_with_a_strong_hand():
    g = _position("none", TAKE_HANDS, 10, ["red", "red", "red", "blue"], "blue10 blue11 blue2")
    assert _decide("pimc:worlds=16", g) in ("blue13", "blue19")
    assert _decide("pimc:worlds=16", _dealer("blue", "blue16 blue17 blue18 blue19 blue20")) == "hat+10"


def test_pimc_values_are_per_legal_action_and_reproducible():
    g = _position("none", TAKE_HANDS, 10, ["red", "red", "red", "blue"], "blue10 blue11 blue2")
    obs = bh.observe(CFG4, g.state)
    mask = bh.legal_action_mask(CFG4, g.state)
    seat = g.state.cur.astype(np.int64)
    v1 = PIMCAgent(GAME4, seed=5, worlds=8).action_values(obs, mask, seat)
    v2 = PIMCAgent(GAME4, seed=5, worlds=8).action_values(obs, mask, seat)
    assert np.array_equal(np.isnan(v1[0]), ~mask[0])
    np.testing.assert_array_equal(v1, v2)
    # taking the three blue cards (and the bid) is worth more than letting seat 0 keep them
    assert v1[0, card_action("blue13")] > v1[0, card_action("blue5")] + 5


def test_pimc_never_sees_the_hidden_hands():
    """Worlds differ from the true deal: the search only knows its own cards."""
    g = _position("none", TAKE_HANDS, 10, ["red", "red", "red", "blue"], "blue10 blue11 blue2")

    pub, counts, unseen = bh.public_state(CFG4, bh.observe(CFG4, g.state), g.state.cur.astype(np.int64))
    assert not pub.hands[0, :3].any() and counts[0].tolist() == [4, 4, 4, 5]
    assert unseen[0].sum() == 60 - 5 - 3


SPECS = ["simple", "strong", "pimc:worlds=2", "bid=strong+play=simple", "bid=simple+play=pimc:worlds=2,playout=strong"]


@pytest.mark.parametrize("players", [3, 4, 5])
def test_every_bot_plays_only_legal_actions(players):
    game = make_game("bobs_hat", players=players, hands=2)
    agents = [make_agent(SPECS[(i + players) % len(SPECS)], game, seed=i) for i in range(players)]
    res = play_games(game, agents, 12, seed=players)  # step() raises on any illegal action
    assert res.games == 12 and res.decisions > 12 * players * 11


def test_bots_with_options_keep_legal_under_rule_options():
    game = make_game("bobs_hat", players=4, hands=2, double_fewest=True, no_bid=True, negative_scoring=True)
    agents = [make_agent(s, game, seed=1) for s in ("strong", "simple", "pimc:worlds=2", "strong")]
    assert play_games(game, agents, 8, seed=1).games == 8


def test_composite_routes_bids_and_plays():
    assert parse_composite("bid=strong+play=pimc:worlds=8,playout=strong") == {
        "bid": "strong",
        "play": "pimc:worlds=8,playout=strong",
    }
    agent = make_agent("bid=strong+play=simple", GAME4, seed=0)
    assert isinstance(agent, CompositeAgent) and agent.needs_public
    state = GAME4.init(np.arange(64, dtype=np.uint64))
    strong, simple = make_agent("strong", GAME4), make_agent("simple", GAME4)
    gen = np.random.default_rng(0)
    seen = set()
    for _ in range(40):
        obs, mask, seat = bh.observe(CFG4, state), bh.legal_action_mask(CFG4, state), state.cur.astype(np.int64)
        got = agent.act(obs, mask, seat)
        play = mask[:, :60].any(axis=1)
        ref = np.where(play, simple.act(obs, mask, seat), strong.act(obs, mask, seat))
        np.testing.assert_array_equal(got, ref)
        seen |= set(np.unique(play).tolist())
        bh.step(CFG4, state, np.where(gen.random(64) < 0.5, got, ref))
    assert seen == {True, False}
    for bad in ("bid=strong", "bid=strong+play=", "bid=strong+bid=simple", "play=x+bid=y+play=z"):
        with pytest.raises(ValueError):
            make_agent(bad, GAME4)


def _duplicate_diff(game, spec_a: str, spec_b: str, n: int, seed: int) -> tuple[float, float]:
    """A's score minus the B seats' mean, per hand, over n deals played in every seat: mean and 95% CI."""
    P = game.players
    diff = np.zeros((P, n))
    for r in range(P):
        agents = [make_agent(spec_b, game, seed=seed)] * P
        agents[r] = make_agent(spec_a, game, seed=seed + 1)
        tot = play_games(game, agents, n, seed=seed).totals.astype(float)
        diff[r] = tot[:, r] - np.delete(tot, r, axis=1).mean(axis=1)
    per = diff.mean(axis=0) / game.config.hands
    return per.mean(), 1.96 * per.std(ddof=1) / np.sqrt(n)


def test_strong_beats_simple_beats_random():
    game = make_game("bobs_hat", players=4, hands=4)  # hands of 5 to 8 cards: short games
    mean, ci = _duplicate_diff(game, "strong", "random", 40, seed=11)
    assert mean - ci > 5.0, (mean, ci)
    mean, ci = _duplicate_diff(game, "simple", "random", 40, seed=12)
    assert mean - ci > 5.0, (mean, ci)
    mean, ci = _duplicate_diff(game, "strong", "simple", 200, seed=13)
    assert mean - ci > 0.5, (mean, ci)  # measured +1.9 ± 0.4 here


def test_pimc_beats_random():
    game = make_game("bobs_hat", players=3, hands=3)
    mean, ci = _duplicate_diff(game, "pimc:worlds=4", "random", 16, seed=2)
    assert mean - ci > 3.0, (mean, ci)


def test_pimc_values_cover_every_legal_action_in_a_batch_of_unequal_choices():
    """Rows with fewer legal actions than the widest row are padded inside the search; the padding must not
    overwrite a real value (it used to leave NaN on each such row's first legal action)."""
    game = make_game("bobs_hat", players=4)
    state = game.init(np.arange(1, 9, dtype=np.uint64))
    rnd = RandomAgent(seed=0)
    for _ in range(12):  # into the first trick: the rows hold 1 to 4 legal cards
        mask = game.legal_action_mask(state)
        game.step(state, rnd.act(game.observe(state), mask, state.cur), legal=mask)
    mask = game.legal_action_mask(state)
    assert len(set(mask.sum(axis=1).tolist())) > 1
    values = PIMCAgent(game, seed=0, worlds=4).action_values(game.observe(state), mask, state.cur.astype(np.int64))
    assert np.isfinite(values[mask]).all() and np.isnan(values[~mask]).all()


def test_a_composite_spec_without_a_game_is_refused_by_name():
    """It failed with "'NoneType' object has no attribute 'module'" before mypy pointed at it."""
    with pytest.raises(ValueError, match="^the composite agent 'bid=random\\+play=random' needs a game$"):
        make_agent("bid=random+play=random", None)
