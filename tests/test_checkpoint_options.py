"""A policy plays only the rules it learned: a game whose options change them is refused by name.

Found: ``check_compatible`` compared the game, the observation size and the
number of actions only. The shipped Oh Hell policy (scoring ``positive``) then
played a table with ``negative`` scoring, and Bob's Hat's with double-fewest
or renege mode, as if the rules were the ones it learned: the observation
sizes are equal, so nothing said otherwise. Options that only schedule the
hands (how many, their sizes, who deals first) stay accepted: tests and users
play the shipped policies at ``hands=2`` or ``deal_style=short_low``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.checkpoint import CheckpointError, check_compatible, load_checkpoint
from agents.ppo_agent import load_policy
from bobshat.cli import main as cli_main
from bobshat_env.games import make_game

ROOT = Path(__file__).resolve().parent.parent
BH4, OH4 = ROOT / "checkpoints" / "bobs_hat_4p.pt", ROOT / "checkpoints" / "oh_hell_4p.pt"


@pytest.mark.parametrize(
    "path, game, option, trained, here",
    [
        (OH4, "oh_hell", "scoring", "positive", "negative"),
        (OH4, "oh_hell", "scoring", "positive", "neutral"),
        (BH4, "bobs_hat", "double_fewest", False, True),
        (BH4, "bobs_hat", "negative_scoring", False, True),
        (BH4, "bobs_hat", "renege_mode", False, True),
        (BH4, "bobs_hat", "secret_bidding", False, True),
        (BH4, "bobs_hat", "no_bid", False, True),
    ],
)
def test_a_game_with_other_rules_is_refused_naming_the_option_and_both_values(path, game, option, trained, here):
    g = make_game(game, players=4, **{option: here})
    _, meta = load_checkpoint(path)
    assert meta["config"][option] == trained
    assert g.obs_size() == meta["obs_size"] and g.n_actions == meta["n_actions"]  # what the old check compared
    with pytest.raises(CheckpointError) as err:
        load_policy(path, g)
    assert f"with {option}={trained!r}; this game has {option}={here!r}" in str(err.value)


@pytest.mark.parametrize(
    "path, game, options",
    [
        (BH4, "bobs_hat", {"hands": 2}),
        (BH4, "bobs_hat", {"hands": 1, "first_dealer": -1}),
        (OH4, "oh_hell", {"deal_style": "short_low"}),
        (OH4, "oh_hell", {"deal_style": "long_inverted", "first_dealer": 3}),
    ],
)
def test_options_that_only_schedule_the_hands_are_accepted(path, game, options):
    net, meta = load_policy(path, make_game(game, players=4, **options))
    assert net.obs_size == meta["obs_size"]


def test_the_cli_refuses_it_in_one_line(capsys):
    argv = ["simulate", "--game", "oh_hell", "--scoring", "negative", "--games", "1"]
    assert cli_main([*argv, "--agents", f"ppo:{OH4},random,random,random"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("bobshat simulate: error: ") and "scoring='positive'; this game has scoring='negative'" in err


def test_old_checkpoints_without_options_are_accepted_and_a_missing_option_is_its_default():
    """Metadata written before the options were recorded: checked as before (game, sizes). An option the
    checkpoint's options do not list (added after it was trained) is taken at its default."""
    _, meta = load_checkpoint(BH4)
    renege = make_game("bobs_hat", players=4, renege_mode=True)
    check_compatible({k: v for k, v in meta.items() if k != "config"}, renege, BH4)
    without = {**meta, "config": {k: v for k, v in meta["config"].items() if k != "renege_mode"}}
    check_compatible(without, make_game("bobs_hat", players=4), BH4)
    with pytest.raises(CheckpointError, match="renege_mode=False; this game has renege_mode=True"):
        check_compatible(without, renege, BH4)


def test_the_bidding_benchmark_plays_strong_where_the_shipped_policy_learned_other_rules():
    """``bobshat bids``' default play policy is the table's shipped one: at a table with other scoring it is
    ``strong`` (the documented fallback), and the bidder ``shipped`` is an error naming the option."""
    from train.bids import bidders

    other = make_game("oh_hell", players=4, scoring="negative")
    assert bidders.shipped_play(other) == "strong"
    with pytest.raises(ValueError, match="bidder 'shipped': the shipped policy cannot play this table: .*scoring"):
        bidders.resolve_bidder("shipped", other)
    assert bidders.shipped_play(make_game("oh_hell", players=4, deal_style="short_low")) == f"ppo:{OH4}"
