"""The PettingZoo AEC env: API compliance, seeding, illegal actions, rewards, rendering."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from bobshat_env import bobs_hat_v0
from bobshat_env.core.bobs_hat import IllegalActionError


@pytest.mark.parametrize("options", [{}, {"players": 3, "secret_bidding": True}, {"players": 5, "no_bid": True}])
def test_api_test_passes(options):
    api_test(bobs_hat_v0.env(**options), num_cycles=300, verbose_progress=False)


def test_seed_test_passes():
    seed_test(lambda: bobs_hat_v0.env(hands=2), num_cycles=200)


def _play_random(env, seed):
    env.reset(seed=seed)
    gen = np.random.default_rng(seed)
    total = {a: 0.0 for a in env.possible_agents}
    steps = 0
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        total[agent] += reward
        if term or trunc:
            env.step(None)
            continue
        env.step(int(gen.choice(np.flatnonzero(obs["action_mask"]))))
        steps += 1
    return total, steps, info


def test_rewards_sum_to_final_scores():
    env = bobs_hat_v0.env(players=4, hands=3)
    total, steps, info = _play_random(env, 5)
    # hands of 5, 6, 7 cards: 18 card plays each, one hat choice and 4 bids per hand
    assert steps == 4 * 18 + 3 * 5
    assert [total[a] for a in env.possible_agents] == info["final_scores"]


def test_same_seed_same_game():
    env = bobs_hat_v0.env(players=3, hands=2)
    assert _play_random(env, 11)[0] == _play_random(env, 11)[0]


def test_illegal_action_raises_and_changes_nothing():
    env = bobs_hat_v0.raw_env(players=4)
    env.reset(seed=0)
    agent = env.agent_selection
    before = env.state.copy()
    with pytest.raises(IllegalActionError, match="hat phase"):
        env.step(3)  # a card during the dealer's hat choice
    for name, value in vars(before).items():
        np.testing.assert_array_equal(getattr(env.state, name), value, err_msg=name)
    assert env.agent_selection == agent
    with pytest.raises(ValueError, match="integer action"):
        env.step(None)


def test_mask_only_for_the_agent_to_act():
    env = bobs_hat_v0.raw_env(players=4)
    env.reset(seed=1)
    for agent in env.possible_agents:
        mask = env.observe(agent)["action_mask"]
        if agent == env.agent_selection:
            assert mask[60] == 1 and mask[61] == 1 and mask.sum() == 2  # the dealer's hat choice
        else:
            assert mask.sum() == 0


def test_secret_bidding_hides_bids_until_all_have_bid():
    env = bobs_hat_v0.raw_env(players=3, secret_bidding=True)
    env.reset(seed=2)
    env.step(60)  # dealer (seat 0) chooses +10
    env.step(62 + 1)  # seat 0 bids most blue
    env.step(62 + 8)  # seat 1 bids fewest
    facts = env.game.decode(env.observe("player_2")["observation"])
    assert facts["bids"] == [None, "hidden", "hidden"]  # seat 2 sees that 0 and 1 have bid, not what
    open_env = bobs_hat_v0.raw_env(players=3)
    open_env.reset(seed=2)
    for a in (60, 63, 70):
        open_env.step(a)
    assert open_env.game.decode(open_env.observe("player_2")["observation"])["bids"] == [
        None,
        ["most_blue"],
        ["fewest"],
    ]
    env.step(62 + 4)  # seat 2 bids most black: now all bids are revealed
    revealed = env.game.decode(env.observe("player_0")["observation"])["bids"]
    assert revealed == [["most_blue"], ["fewest"], ["most_black"]]


def test_render_ansi_shows_the_table():
    env = bobs_hat_v0.env(render_mode="ansi", players=4)
    env.reset(seed=3)
    text = env.render()
    assert "hand 1 of 10" in text and "Trump:" in text and "player_3" in text


def test_bad_configuration_fails_at_construction():
    with pytest.raises(ValueError, match="players must be 3, 4 or 5"):
        bobs_hat_v0.env(players=6)
    with pytest.raises(ValueError, match="unknown option"):
        bobs_hat_v0.env(double_trouble=True)
    with pytest.raises(ValueError, match="render_mode"):
        bobs_hat_v0.env(render_mode="rgb_array")


@pytest.mark.parametrize(
    "options", [{"players": 3}, {"players": 7, "deal_style": "short_high_low", "scoring": "negative"}]
)
def test_oh_hell_api_and_seed_tests_pass(options):
    from bobshat_env import oh_hell_v0

    api_test(oh_hell_v0.env(**options), num_cycles=300, verbose_progress=False)
    seed_test(lambda: oh_hell_v0.env(**options), num_cycles=200)


def test_oh_hell_rewards_sum_to_final_scores_and_render():
    from bobshat_env import oh_hell_v0

    env = oh_hell_v0.env(players=4, deal_style="short_high", render_mode="ansi")
    total, steps, info = _play_random(env, 3)
    sizes = range(1, 11)  # short_high with 4 players: 1, 2, ..., 10 cards
    assert steps == sum(4 + 4 * s for s in sizes)  # four bids and 4 * s cards per hand
    assert [total[a] for a in env.possible_agents] == info["final_scores"]
    assert "Oh Hell - hand 10 of 10" in env.render()
    with pytest.raises(ValueError, match="players must be 3 to 7"):
        oh_hell_v0.env(players=8)
