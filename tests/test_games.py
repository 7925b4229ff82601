"""The Game description: one place to ask for everything game-specific."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from bobshat_env.core import game_module
from bobshat_env.core.config import BobsHatConfig, ConfigError, OhHellConfig
from bobshat_env.core.symmetry import trump_canonical
from bobshat_env.games import GAMES, describe, describe_config, make_game
from bobshat_env.text import bobs_hat, oh_hell


def _midgame(game, steps=9):
    state = game.init(np.arange(3, dtype=np.uint64))
    gen = np.random.default_rng(0)
    for _ in range(steps):
        mask = game.legal_action_mask(state)
        game.step(state, np.array([gen.choice(np.flatnonzero(m)) for m in mask]))
    return state


def test_lookups_refuse_unknown_games_and_configs():
    assert GAMES == ("bobs_hat", "oh_hell")
    with pytest.raises(ConfigError, match="unknown game 'chess'; choose one of bobs_hat, oh_hell"):
        describe("chess")
    assert describe_config(OhHellConfig()).name == "oh_hell"
    with pytest.raises(TypeError, match="got dict"):
        describe_config({})
    with pytest.raises(ConfigError, match="bobs_hat needs a BobsHatConfig, got a OhHellConfig"):
        make_game("bobs_hat", config=OhHellConfig())
    for name in ("tricks", "observe", "chess", "../x"):
        with pytest.raises(ValueError, match="no game"):
            game_module(name)


@pytest.mark.parametrize("name, opts", [("bobs_hat", {"players": 3, "hands": 2}), ("oh_hell", {"players": 5})])
def test_game_answers_from_its_core_module_and_description(name, opts):
    game = make_game(name, **opts)
    state = _midgame(game)
    assert game.module is game_module(name) and game.name == game.module.NAME == name
    assert game.n_actions == game.module.N_ACTIONS and game.deck is game.module.DECK
    assert game.parse_card(game.card_str(7)) == 7
    assert game.layout().size == game.obs_size()
    # the same tables and states as the per-game functions give
    sym, by_name = game.symmetry(), trump_canonical(name, game.config)
    assert np.array_equal(sym.obs_index, by_name.obs_index) and np.array_equal(sym.action_index, by_name.action_index)
    obs, seat = game.observe(state), state.cur.astype(np.int64)
    mine = game.public_state(obs, seat)
    theirs = game_module(name).public_state(game.config, obs, seat)
    assert np.array_equal(mine[0].hands, theirs[0].hands) and np.array_equal(mine[2], theirs[2])
    text = (bobs_hat if name == "bobs_hat" else oh_hell).render(game, state, 1, show_hands=0)
    assert game.render(state, 1, show_hands=0) == text and text.startswith(game.title)


def test_game_pickles_as_name_and_config():
    game = make_game("bobs_hat", config=BobsHatConfig(players=5, no_bid=True))
    again = pickle.loads(pickle.dumps(game))
    assert again == game and again.module is game.module
    state = _midgame(game)
    assert np.array_equal(again.observe(state), game.observe(state))
