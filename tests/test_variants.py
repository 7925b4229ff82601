"""Small variants of both games (docs/rules.md, "Small variants"): a subset of the deck, the same rules engine.

The options are checked up front (one ConfigError naming the option); a
variant deals, turns and resamples only cards of its deck, with the same
deals for a seed on any batch size; the full deck's deals are unchanged
(``tests/test_golden.py`` pins them); the named variants reach the command
line and OpenSpiel, whose tiny trees are pinned at counts derived by hand.
"""

from __future__ import annotations

import numpy as np
import pytest

from bobshat_env.core import bobs_hat as bh
from bobshat_env.core import oh_hell as oh
from bobshat_env.core import rng
from bobshat_env.core.cards import BH_IS_HAT_CARD, bh_deck_mask, bh_kept_ranks, oh_deck_mask
from bobshat_env.core.config import BobsHatConfig, ConfigError, OhHellConfig, variant_options
from bobshat_env.core.resample import sample_hands
from bobshat_env.core.tricks import deal_shuffled
from bobshat_env.games import make_game


# --------------------------------------------------------------------------
# Options
@pytest.mark.parametrize(
    "options, words",
    [
        ({"suits": 0}, "suits must be 1 to 3 for Where's Bob's Hat? (blue, red, black), got 0"),
        ({"suits": 4}, "suits must be 1 to 3"),
        ({"suits": "2"}, "suits must be an integer, got '2'"),
        ({"ranks": 2}, "ranks must be 3 to 20 for Where's Bob's Hat? (the hat ranks 14 and 15"),
        ({"ranks": 21}, "ranks must be 3 to 20"),
        ({"hand_size_base": -1}, "hand_size_base must be 0 or more"),
        ({"players": 3, "suits": 1, "ranks": 4}, "hand_size_base=4 does not fit the 4-card deck (suits=1 x ranks=4)"),
        ({"players": 3, "suits": 1, "ranks": 4, "hand_size_base": 0}, "hands=12 (the default for 3 players) does"),
        ({"players": 4, "suits": 2, "ranks": 10, "hands": 2}, "hands=2 does not fit the 20-card deck with 4 players"),
        ({"players": 3, "hand_size_base": 0, "hands": 17}, "hands must be 1 to 16 (the observation counts at most 16"),
    ],
)
def test_a_bad_bobs_hat_variant_is_one_line_naming_the_option(options, words):
    with pytest.raises(ConfigError) as err:
        BobsHatConfig(**options)
    assert words in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize(
    "options, words",
    [
        ({"suits": 0}, "suits must be 1 to 4 for Oh Hell"),
        ({"suits": 5}, "suits must be 1 to 4"),
        ({"ranks": 0}, "ranks must be 1 to 13 for Oh Hell"),
        ({"ranks": 14}, "ranks must be 1 to 13"),
        ({"ranks": 2.0}, "ranks must be an integer"),
        ({"players": 4, "suits": 1, "ranks": 4}, "suits=1 x ranks=4 = 4 cards is too small for 4 players"),
        ({"players": 3, "suits": 2, "ranks": 3}, "start_size=10 (the default for 3 players) does not fit the 6-card"),
        ({"players": 3, "suits": 2, "ranks": 4, "start_size": 3}, "players * start_size + 1 (the turned trump card)"),
        ({"players": 3, "suits": 2, "ranks": 4, "start_size": 3}, "so start_size must be 1 to 2"),
        ({"players": 3, "suits": 2, "ranks": 3, "start_size": 2}, "must be at most 6, so start_size must be 1 to 1"),
        ({"start_size": 11}, "bids go up to 10, so start_size must be 1 to 10"),
        ({"start_size": 0}, "start_size must be 1 to 10"),
        ({"start_size": 2, "hands": 4}, "hands=4 does not fit the long deal style from start_size=2: hands must be 1"),
        ({"hands": 0}, "hands must be 1 to 19"),
    ],
)
def test_a_bad_oh_hell_variant_is_one_line_naming_the_option(options, words):
    with pytest.raises(ConfigError) as err:
        OhHellConfig(**options)
    assert words in str(err.value) and "\n" not in str(err.value)


def test_the_defaults_are_the_full_games():
    bh_cfg, oh_cfg = BobsHatConfig(players=3), OhHellConfig(players=6)
    assert bh_cfg.deck_mask.all() and bh_cfg.trumps == (0, 1, 2, 3) and bh_cfg.hand_sizes[:2] == (5, 6)
    assert oh_cfg.deck_mask.all() and oh_cfg.start_size == 8 and oh_cfg.hands == 15 and oh_cfg.hand_sizes[0] == 8
    assert OhHellConfig(deal_style="short_high_low").hand_sizes == (6, 5, 4, 3, 2, 1, 2, 3, 4, 5, 6)


def test_start_size_builds_the_deal_styles_sequence_and_hands_keeps_its_first_hands():
    assert OhHellConfig(start_size=3).hand_sizes == (3, 2, 1, 2, 3)
    assert OhHellConfig(start_size=3, deal_style="long_inverted").hand_sizes == (1, 2, 3, 2, 1)
    assert OhHellConfig(start_size=3, deal_style="short_high", hands=2).hand_sizes == (1, 2)
    assert OhHellConfig(players=3, start_size=1).hand_sizes == (1,)  # one hand of one card
    assert BobsHatConfig(players=3, hand_size_base=0, hands=3).hand_sizes == (1, 2, 3)


def test_ranks_keep_the_hat_cards_and_their_neighbours():
    assert bh_kept_ranks(3) == (13, 14, 15)
    assert bh_kept_ranks(4) == (13, 14, 15, 16)
    assert bh_kept_ranks(5) == (12, 13, 14, 15, 16)
    assert bh_kept_ranks(12) == tuple(range(9, 21))
    assert bh_kept_ranks(20) == tuple(range(1, 21))
    for ranks in range(3, 21):
        kept = bh_kept_ranks(ranks)
        assert len(kept) == ranks and {14, 15} <= set(kept) and kept == tuple(range(kept[0], kept[-1] + 1))
        mask = bh_deck_mask(3, ranks)
        assert mask.sum() == 3 * ranks and (mask & BH_IS_HAT_CARD).sum() == 6
    names = [oh.oh_card_str(c) for c in np.flatnonzero(oh_deck_mask(2, 3))]
    assert names == ["QC", "QD", "KC", "KD", "AC", "AD"]
    assert bh_deck_mask().all() and oh_deck_mask().all()


def test_named_variants_expand_and_options_given_win():
    for game, cls in (("bobs_hat", BobsHatConfig), ("oh_hell", OhHellConfig)):
        assert list(cls.VARIANTS) == ["tiny", "small"]
        for name in cls.VARIANTS:
            assert make_game(game, variant=name).config.players == 3
    game = make_game("oh_hell", variant="tiny", scoring="negative")
    assert (game.config.suits, game.config.ranks, game.config.start_size, game.config.scoring) == (2, 3, 1, "negative")
    assert variant_options(BobsHatConfig, "tiny", ranks=5)["ranks"] == 5
    with pytest.raises(ConfigError, match="unknown variant 'huge'; choose one of tiny, small"):
        make_game("oh_hell", variant="huge")


# --------------------------------------------------------------------------
# Chance: deals, trumps, resampling
def _fitting(game: str, players: int) -> dict:
    """A small deck that leaves cards out, with several hands, for each player count."""
    if game == "bobs_hat":
        return {"players": players, "suits": 2, "ranks": 9, "hand_size_base": 0, "hands": 18 // players}
    return {"players": players, "suits": 3, "ranks": 5, "start_size": 14 // players, "deal_style": "short_low"}


CASES = [("bobs_hat", p) for p in (3, 4, 5)] + [("oh_hell", p) for p in (3, 4, 5, 6, 7)]


@pytest.mark.parametrize("game_name, players", CASES)
def test_a_variant_deals_and_turns_only_cards_of_its_deck(game_name, players):
    """Every hand of many seeds, with random legal play between them (so the step's own deals too)."""
    game = make_game(game_name, **_fitting(game_name, players))
    deck, mod = game.config.deck_mask, game.module
    state = game.init(rng.game_keys(7, np.arange(300)))
    seen = np.zeros(mod.N_CARDS, dtype=bool)
    gen = np.random.default_rng(0)
    hands_started = 0
    while not game.done(state).all():
        if np.any(state.phase == mod.HAT if game_name == "bobs_hat" else state.n_bids == 0):
            hands_started += 1
        dealt = state.hands.any(axis=(0, 1))
        assert not (dealt & ~deck).any(), [game.card_str(c) for c in np.flatnonzero(dealt & ~deck)]
        seen |= dealt
        if game_name == "oh_hell":
            live = state.trump_card >= 0
            assert deck[state.trump_card[live]].all()
            assert not state.hands[np.flatnonzero(live), :, state.trump_card[live]].any()
        else:
            assert np.isin(state.trump, game.config.trumps).all()
        mask = game.legal_action_mask(state)
        live = mask.any(axis=1)
        actions = np.array([gen.choice(np.flatnonzero(m)) if m.any() else 0 for m in mask])
        game.step(state, actions, active=live)
    assert hands_started >= game.config.hands and seen.sum() == deck.sum()  # the whole deck comes into play


def test_bobs_hat_draws_only_the_decks_suits_and_none_and_offers_only_their_bids():
    cfg = BobsHatConfig(players=3, suits=2, ranks=9, hand_size_base=0, hands=2)
    keys = rng.game_keys(3, np.arange(4000))
    trump, _ = bh.random_deal(cfg, keys, np.zeros(4000, dtype=np.int64))
    counts = np.bincount(trump, minlength=4)
    assert counts[2] == 0 and all(1200 < counts[t] < 1470 for t in (0, 1, 3)), counts  # 1/3 each
    state = bh.init(cfg, keys[:1])
    bh.step(cfg, state, np.array([bh.HAT_PLUS]))
    legal = np.flatnonzero(bh.legal_action_mask(cfg, state)[0]) - bh.BID_BASE
    assert legal.tolist() == [1, 2, 3, 8, 9, 10, 11]  # blue, red, fewest: no most black (bit 2), no double fewest
    with pytest.raises(bh.IllegalActionError, match="this deck has 2 suit\\(s\\): no most bid of most_black"):
        bh.step(cfg, state, np.array([bh.BID_BASE + bh.bid_code(["most_black"])]))


def test_a_given_deal_outside_the_deck_is_refused():
    cfg = BobsHatConfig(players=3, suits=1, ranks=4, hand_size_base=0, hands=1)
    state = bh.init(cfg, np.zeros(1, dtype=np.uint64), auto_deal=False)
    hands = np.zeros((1, 3, 60), dtype=bool)
    hands[0, [0, 1, 2], [12, 13, 14]] = True  # blue13, blue14, blue15
    with pytest.raises(ValueError, match="trump red is not in this deck of 1 suit"):
        bh.deal(cfg, state, np.array([0]), np.array([1]), hands)
    bad = hands.copy()
    bad[0, 2, 14], bad[0, 2, 0] = False, True  # blue1: not kept with 4 ranks
    with pytest.raises(ValueError, match="card blue1 is not in this variant's deck"):
        bh.deal(cfg, state, np.array([0]), np.array([3]), bad)
    bh.deal(cfg, state, np.array([0]), np.array([0]), hands)  # nothing changed before: the good deal still fits
    assert state.phase[0] == bh.HAT
    ocfg = OhHellConfig(players=3, suits=2, ranks=3, start_size=1)
    ostate = oh.init(ocfg, np.zeros(1, dtype=np.uint64), auto_deal=False)
    ohands = np.zeros((1, 3, 52), dtype=bool)
    ohands[0, [0, 1, 2], [40, 41, 44]] = True  # QC, QD, KC
    with pytest.raises(ValueError, match="card 2C is not in this variant's deck"):
        oh.deal(ocfg, ostate, np.array([0]), np.array([0]), ohands)  # the turned card, 2C
    oh.deal(ocfg, ostate, np.array([0]), np.array([48]), ohands)


def test_a_subsets_shuffle_is_the_full_decks_with_the_other_cards_left_out():
    """The deck is ordered by each card's hash, ``combine(key, id + 1)``; a subset keeps that order."""
    keys = rng.game_keys(11, np.arange(50))
    deck = oh_deck_mask(2, 5)
    full, _ = deal_shuffled(keys, 12, 4, 52)
    part, turned = deal_shuffled(keys, 3, 3, 52, deck)
    for g in range(50):
        ranked = np.argsort(rng.combine(np.uint64(keys[g]), np.arange(1, 53)))
        assert all(set(ranked[12 * p : 12 * p + 12]) == set(np.flatnonzero(full[g, p])) for p in range(4))
        sub = [c for c in ranked if deck[c]]
        assert all(set(sub[3 * p : 3 * p + 3]) == set(np.flatnonzero(part[g, p])) for p in range(3))
        assert turned[g] == sub[9]


@pytest.mark.parametrize("game_name", ["bobs_hat", "oh_hell"])
def test_the_same_seed_gives_the_same_variant_games_on_any_batch_size(game_name):
    game = make_game(game_name, **_fitting(game_name, 3))
    keys = rng.game_keys(5, np.arange(600))  # 600: the large batch runs the parallel deal kernel
    big, small = game.init(keys), game.init(keys[:3])
    assert np.array_equal(big.hands[:3], small.hands)
    trump = "trump" if game_name == "bobs_hat" else "trump_card"
    assert np.array_equal(getattr(big, trump)[:3], getattr(small, trump))
    trump_b, hands_b = game.module.random_deal(game.config, keys, np.ones(600, dtype=np.int64))
    trump_s, hands_s = game.module.random_deal(game.config, keys[:2], np.ones(2, dtype=np.int64))
    assert np.array_equal(hands_b[:2], hands_s) and np.array_equal(trump_b[:2], trump_s)


@pytest.mark.parametrize("game_name", ["bobs_hat", "oh_hell"])
def test_resampling_never_draws_a_card_outside_the_deck(game_name):
    """A search's worlds (public_state, then sample_hands) hold only cards of the variant's deck."""
    game = make_game(game_name, **_fitting(game_name, 3))
    deck, mod = game.config.deck_mask, game.module
    state = game.init(rng.game_keys(9, np.arange(64)))
    gen = np.random.default_rng(1)
    for _ in range(12):  # into the play of the first hand
        mask = game.legal_action_mask(state)
        game.step(state, np.array([gen.choice(np.flatnonzero(m)) for m in mask]))
    seat = state.cur.astype(np.int64)
    public, counts, unseen = game.public_state(game.observe(state), seat)
    assert not (unseen & ~deck).any() and (unseen.sum(axis=1) < deck.sum()).all()
    void = np.zeros((64, 3, mod.DECK.n_suits), dtype=bool)
    worlds = sample_hands(public.hands[np.arange(64), seat], seat, unseen, counts, void, mod.DECK, 20, gen)
    assert not (worlds.any(axis=(1, 2)) & ~deck).any()
    assert (worlds.sum(axis=3) == state.hands.sum(axis=2)[:, None]).all()  # every seat's count, as dealt


# --------------------------------------------------------------------------
# The command line
def test_the_command_line_plays_a_named_variant_and_writes_records_that_replay(tmp_path, capsys):
    from bobshat.cli import main

    out = tmp_path / "tiny.jsonl"
    assert main(["simulate", "--game", "oh_hell", "--variant", "tiny", "--games", "4", "--records", str(out)]) == 0
    assert "oh_hell, 3 players, 4 games" in capsys.readouterr().out
    assert '"suits":2,"ranks":3,"start_size":1' in out.read_text()
    assert main(["replay", str(out)]) == 0
    flags = ["--game", "bobs_hat", "--variant", "small", "--players", "4", "--ranks", "10", "--games", "2"]
    assert main(["simulate", *flags]) == 0
    assert "bobs_hat, 4 players, 2 games" in capsys.readouterr().out
    assert main(["simulate", "--game", "oh_hell", "--hand-size-base", "0"]) == 2
    assert "--hand-size-base is one of the Where's Bob's Hat? options" in capsys.readouterr().err


def test_a_variant_that_does_not_fit_names_the_flags_that_chose_it(tmp_path, capsys):
    """The CLI fuzzer found these: the error named only option names no flag had set (hand_size_base), and
    ``exploit --variant small`` ran it at the default 4 players, which its 6-card deck cannot deal."""
    from bobshat.cli import main

    assert main(["simulate", "--game", "bobs_hat", "--variant", "small", "--players", "5"]) == 2
    assert "error: --variant small with --players 5: hand_size_base=1 does not fit" in capsys.readouterr().err
    assert main(["infer", "--game", "bobs_hat", "--variant", "small", "--games", "1", "--quiet"]) == 2
    assert "error: --variant small: no shipped policy plays it; give --policy" in capsys.readouterr().err
    runs = tmp_path / "runs"
    flags = ["--target", "random", "--quiet", "--runs-dir", str(runs), "--total-decisions", "1", "--final-deals", "0"]
    assert main(["exploit", *flags, "--eval-every", "0", "--variant", "small"]) == 0
    assert [p.name for p in runs.iterdir()] == ["bobs_hat_3p_exploit_random_s1"]  # the variant's 3 players
