"""The small variants in OpenSpiel (bobshat_env/openspiel.py): chance over the variant's deck only, the
``variant`` parameter, OpenSpiel's random simulations, and the tiny trees' sizes, counted by hand below."""

from __future__ import annotations

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

import bobshat_env.openspiel as osp  # noqa: E402  (registers the games; needs pyspiel)
from bobshat_env.config import ConfigError  # noqa: E402

VARIANT_CASES = [
    ("python_oh_hell", {"variant": "tiny"}),
    ("python_oh_hell", {"variant": "small"}),
    ("python_oh_hell", {"players": 4, "suits": 3, "ranks": 4, "start_size": 2, "deal_style": "short_high"}),
    ("python_bobs_hat", {"variant": "tiny"}),
    ("python_bobs_hat", {"variant": "small", "no_bid": True, "secret_bidding": True}),
    ("python_bobs_hat", {"players": 4, "suits": 2, "ranks": 5, "hand_size_base": 0, "hands": 2}),
]


def _random_play(state, gen: np.random.Generator, offered: dict[str, set[int]], stop: int = 10**9):
    """Play at random (to the end, or to the first decision after ``stop`` actions), noting the chance
    outcomes offered by kind of chance node."""
    while not state.is_terminal() and (state.is_chance_node() or len(state.history()) < stop):
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            assert abs(sum(probs) - 1) < 1e-9 and len(set(probs)) == 1  # uniform over what is left
            offered.setdefault(state._table.chance_kind(), set()).update(outcomes)
            state.apply_action(int(gen.choice(outcomes)))
        else:
            state.apply_action(int(gen.choice(state.legal_actions())))
    return state


@pytest.mark.parametrize("name, params", VARIANT_CASES, ids=lambda x: x if isinstance(x, str) else repr(x))
def test_random_simulations_of_variants_pass_openspiels_checks(name, params):
    game = pyspiel.load_game(name, params)
    pyspiel.random_sim_test(game, num_sims=2, serialize=True, verbose=False)


@pytest.mark.parametrize("name", ["python_oh_hell", "python_bobs_hat"])
def test_chance_offers_only_the_variants_cards_and_trumps(name):
    game = pyspiel.load_game(name, {"variant": "small"})
    cfg, gen = game.rules.game.config, np.random.default_rng(3)
    offered: dict[str, set[int]] = {}
    for _ in range(30):
        _random_play(game.new_initial_state(), gen, offered)
    cards = np.zeros(game.rules.game.module.N_CARDS, dtype=bool)
    cards[sorted(offered.pop("card") | offered.pop("turned trump card", set()))] = True
    assert np.array_equal(cards, cfg.deck_mask)  # every card of the deck, no other
    assert offered == ({"trump": {0, 3}} if name == "python_bobs_hat" else {})  # one suit: blue or none


def test_the_variant_parameter_and_what_overrides_it():
    game = pyspiel.load_game("python_oh_hell", {"variant": "tiny", "scoring": "negative"})
    cfg = game.rules.game.config
    assert (cfg.players, cfg.suits, cfg.ranks, cfg.start_size, cfg.scoring) == (3, 2, 3, 1, "negative")
    assert game.get_parameters()["variant"] == "tiny"
    assert pyspiel.load_game("python_bobs_hat", {"variant": "tiny", "players": 5, "ranks": 5}).num_players() == 5
    # pyspiel fills in every default before the game sees its parameters: players=4 is the default, not an override
    assert pyspiel.load_game("python_bobs_hat", {"variant": "tiny", "players": 4}).num_players() == 3
    for params, words in [
        ({"variant": "huge"}, "unknown variant 'huge'; choose one of tiny, small"),
        ({"suits": 1, "ranks": 3}, "too small for 4 players"),
        ({"variant": "small", "start_size": 3}, "start_size=3 does not fit the 7-card deck (suits=1 x ranks=7)"),
    ]:
        with pytest.raises(ConfigError) as err:
            pyspiel.load_game("python_oh_hell", params)
        assert words in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("name", ["python_oh_hell", "python_bobs_hat"])
def test_resampled_worlds_hold_only_the_variants_cards(name):
    game = pyspiel.load_game(name, {"variant": "small"})
    deck = game.rules.game.config.deck_mask
    gen = np.random.default_rng(5)
    for seed in range(10):
        state = _random_play(game.new_initial_state(), gen, {}, stop=12)  # into the play
        player = state.current_player()
        world = state.resample_from_infostate(player, np.random.default_rng(seed).random)
        assert not (world._table.hands[-1].dealt.any(axis=0) & ~deck).any()
        assert world.information_state_string(player) == state.information_state_string(player)


def test_the_tiny_trees_have_the_sizes_counted_by_hand():
    """Three players, one card each, seat 0 deals; a history is any node (chance, decision or terminal).

    Oh Hell tiny: 6 cards (Q K A of clubs and diamonds). Chance deals one card
    to each seat (6 x 5 x 4 ordered deals) and turns one of the 3 left. Seats
    1 and 2 bid 0 or 1; the dealer may not make the bids add up to 1, so it
    has 1 choice when the others bid 0 + 0 or 0 + 1 / 1 + 0 and 2 after 1 + 1:
    5 bid sequences. Then 3 forced plays (seat 1 leads).
    Bob's Hat tiny: 4 cards (blue 13-16). Chance draws the trump (blue or
    none), then deals 4 x 3 x 2; the dealer chooses the hat (2); bids are 3
    each (most blue, fewest, both: no other suit, no double fewest); then 3
    forced plays (the dealer leads).
    """
    deals, bid_seqs = 6 * 5 * 4 * 3, 5
    oh_chance = 1 + 6 + 6 * 5 + 6 * 5 * 4  # root and partial deals (the turned card's node is the last)
    oh_decisions = deals * (1 + 2 + 4) + deals * bid_seqs * 3  # bids by seat 1, seat 2, the dealer; 3 plays
    oh_terminal = deals * bid_seqs
    # information states: (own card, turned card) = 6 x 5; bids before one's own; in play, all bids and the cards
    # played before (seat 1 leads: none, seat 2: seat 1's card, 4 left; the dealer: 4 x 3 ordered)
    oh_info = (30 * 1 + 30 * bid_seqs, 30 * 2 + 30 * bid_seqs * 4, 30 * 4 + 30 * bid_seqs * 4 * 3)  # seats 1, 2, 0
    oh = osp.tree_size(pyspiel.load_game("python_oh_hell", {"variant": "tiny"}))
    assert oh == osp.TreeSize(oh_chance + oh_decisions + oh_terminal, oh_terminal, oh_decisions,
                              (oh_info[2], oh_info[0], oh_info[1]))  # fmt: skip
    assert oh.histories == 9877 and oh.info_states == (1920, 180, 660)

    deals, hats, bids = 2 * 4 * 3 * 2, 2, 3
    bh_chance = 1 + 2 + 2 * 4 + 2 * 4 * 3  # root (the trump), then partial deals
    bh_decisions = deals + deals * hats * (1 + bids + bids**2) + deals * hats * bids**3 * 3
    bh_terminal = deals * hats * bids**3
    seen = 2 * 4  # trump and own card
    bh_info = (
        seen + seen * hats + seen * hats * bids**3,  # the dealer: hat, bid, lead (sees no card played)
        seen * hats * bids + seen * hats * bids**3 * 3,  # seat 1: bid after the dealer; plays after the dealer's card
        seen * hats * bids**2 + seen * hats * bids**3 * 3 * 2,  # seat 2: after two bids; after two cards
    )
    bh = osp.tree_size(pyspiel.load_game("python_bobs_hat", {"variant": "tiny"}))
    assert bh == osp.TreeSize(bh_chance + bh_decisions + bh_terminal, bh_terminal, bh_decisions, bh_info)
    assert bh.histories == 11699 and bh.info_states == (456, 1344, 2736)


def test_tree_size_refuses_a_tree_past_its_limit():
    with pytest.raises(ValueError, match="the tree has more than 500 histories"):
        osp.tree_size(pyspiel.load_game("python_oh_hell", {"variant": "tiny"}), max_histories=500)
