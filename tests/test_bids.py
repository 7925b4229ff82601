"""The bidding benchmark (train/bids/): exact oracle values on hand-built deals, regret's
invariants, the JSON schema, the command line and its errors."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from bobshat.cli import main
from bobshat_env.core import bobs_hat as bh
from bobshat_env.core import oh_hell as oh
from bobshat_env.games import make_game
from train import bids
from train.bids import bidders, decision_values, measure, regrets, report, report_json

SUITS = ("blue", "red", "black")


def bh_card(suit: str, rank: int) -> int:
    return SUITS.index(suit) * 20 + rank - 1


def bh_sweep_state():
    """Hand 1 of Bob's Hat (5 cards each), blue trump, seat 0 deals and holds blue 16-20: the five
    highest trumps, so it takes every card whatever anyone plays (7 blue, 8 red, 5 black, and the
    hat with blue 14 and 15)."""
    game = make_game("bobs_hat", players=4)
    st = game.init(np.array([7], dtype=np.uint64), auto_deal=False)
    seats = [
        [bh_card("blue", r) for r in range(16, 21)],
        [bh_card("blue", 14), bh_card("blue", 15)] + [bh_card("red", r) for r in (1, 2, 3)],
        [bh_card("red", r) for r in range(4, 9)],
        [bh_card("black", r) for r in range(1, 6)],
    ]
    hands = np.zeros((1, 4, 60), dtype=bool)
    for p, cards in enumerate(seats):
        hands[0, p, cards] = True
    bh.deal(game.config, st, np.array([0]), np.array([0]), hands)  # trump 0 = blue
    return game, st


def bh_sweep_value(code: int, hat: int = 10) -> int:
    """Seat 0's exact score for bid ``code`` when it takes every card: most of a suit +5 + count
    (counts blue 7, red 8, black 5), fewest -5, and the hat it holds."""
    counts = (7, 8, 5)
    most = sum(5 + counts[s] for s in range(3) if code >> s & 1)
    return most - 5 * (code // 8) + hat


@pytest.mark.parametrize("play", ["strong", "random"])
def test_bobs_hat_oracles_value_every_bid_of_a_sweep_exactly(play):
    game, st = bh_sweep_state()
    game.step(st, np.array([bh.HAT_PLUS]))  # the dealer puts the hat at +10, then bids first
    hind, info = decision_values(game, st, play, worlds=4, seed=1, playouts=2)
    legal = game.legal_action_mask(st)[0]
    assert np.isnan(hind[0, ~legal]).all() and np.isnan(info[0, ~legal]).all()
    for code in range(1, 16):
        assert hind[0, bh.BID_BASE + code] == bh_sweep_value(code), code
    best = bh.BID_BASE + 7  # most of all three suits
    assert np.nanargmax(hind[0]) == best and np.nanargmax(info[0]) == best
    # In every world seat 0 takes every card: each most bid adds at least +5, fewest always costs 5.
    assert info[0, best] > np.nanmax(np.delete(info[0], best))
    assert regrets(hind, np.array([best]), 0)[0] == 0 and regrets(info, np.array([best]), 0)[0] == 0
    assert regrets(hind, np.array([bh.BID_BASE + 1]), 0)[0] == bh_sweep_value(7) - bh_sweep_value(1) == 23


def test_bobs_hat_hat_choice_is_valued_with_the_dealers_own_bid():
    game, st = bh_sweep_state()
    follow = np.array([bh.BID_BASE + 7])
    hind, info = decision_values(game, st, "strong", worlds=4, seed=2, follow=follow)
    assert hind[0, bh.HAT_PLUS] == bh_sweep_value(7, 10) and hind[0, bh.HAT_MINUS] == bh_sweep_value(7, -10)
    # The sweeper takes any hat card dealt: the +10 hat is never worse, in any world.
    assert info[0, bh.HAT_PLUS] >= info[0, bh.HAT_MINUS]
    assert np.isnan(hind[0, : bh.HAT_PLUS]).all() and np.isnan(hind[0, bh.BID_BASE :]).all()


def test_oh_hell_oracles_value_every_bid_of_a_hand_of_top_trumps_exactly():
    """Seat 1 (the dealer's left, first to bid) holds the ten highest spades, spades are trump
    (the 2 is turned): it takes all ten tricks, so bidding 10 scores 20 and any other bid 10."""
    game = make_game("oh_hell", players=4)
    st = game.init(np.array([3], dtype=np.uint64), auto_deal=False)
    hands = np.zeros((1, 4, 52), dtype=bool)
    for rank in range(10):
        hands[0, 0, rank * 4 + 3] = True  # hearts 2-J
        hands[0, 1, (rank + 3) * 4 + 2] = True  # spades 5-A
        hands[0, 2, rank * 4 + 1] = True  # diamonds
        hands[0, 3, rank * 4 + 0] = True  # clubs
    oh.deal(game.config, st, np.array([0]), np.array([2]), hands)  # trump card 2S
    assert st.cur[0] == 1
    hind, info = decision_values(game, st, "strong", worlds=3, seed=0)
    expected = np.full(11, 10.0)
    expected[10] = 20.0
    np.testing.assert_array_equal(hind[0, oh.BID_BASE : oh.BID_BASE + 11], expected)
    np.testing.assert_array_equal(info[0, oh.BID_BASE : oh.BID_BASE + 11], expected)
    assert np.isnan(hind[0, : oh.BID_BASE]).all()
    assert regrets(info, np.array([oh.BID_BASE + 10]), 0)[0] == 0
    assert regrets(info, np.array([oh.BID_BASE + 3]), 0)[0] == 10


@pytest.fixture(scope="module")
def small_runs():
    """Tiny runs of both games with the strong play policy (deterministic, one playout)."""
    out = {}
    for name in ("bobs_hat", "oh_hell"):
        game = make_game(name, players=4)
        out[name] = measure(game, ["random", "strong"], deals=3, seed=5, worlds=2, play="strong", batch_size=2)
    return out


@pytest.mark.parametrize("name", ["bobs_hat", "oh_hell"])
def test_regret_is_never_negative_and_hindsight_of_the_choice_is_the_score(small_runs, name):
    res = small_runs[name]
    offset = res.game.module.N_CARDS
    for dec in res.decisions.values():
        for q in (dec.q_hind, dec.q_info, dec.m_hind, dec.m_info):
            r = regrets(q, dec.chosen, offset)
            assert np.all(r >= 0) and np.isfinite(r).all()
            assert np.all((r == 0) == (q[np.arange(len(r)), dec.chosen - offset] == np.nanmax(q, axis=1)))
        # The play policy is deterministic, so the actual deal played from the bid chosen is the hand as played.
        pick = (np.arange(dec.chosen.size), dec.chosen - offset)
        np.testing.assert_array_equal(dec.q_hind[pick], dec.score)
        np.testing.assert_allclose(dec.m_hind[pick], dec.margin, atol=1e-12)  # (the margin's own formula is
        # checked against a hand count in test_bids_oracles.py: both sides here use it)
        assert (~dec.is_hat).sum() == 3 * res.game.config.hands  # one bid per hand of each game
    table = res.table
    assert [b["name"] for b in table["bidders"]] == ["random", "strong"]
    for b in table["bidders"]:
        for objective in ("score", "margin"):
            for oracle in ("hindsight", "info_set"):
                assert b["regret"][objective][oracle]["per_hand"] >= 0
    if name == "bobs_hat":
        assert all(b["decisions"]["hat"] > 0 for b in table["bidders"])  # the bidder deals in its games


def _doc_keys() -> set[str]:
    text = bids.__doc__
    return set(re.findall(r'"([a-z_0-9]+)"', text[text.index("JSON schema") :]))


def _json_keys(x, out: set[str]) -> set[str]:
    dynamic = ("bid_distribution", "by_hand_size", "by_seat_from_dealer")
    if isinstance(x, dict):
        for k, v in x.items():
            out.add(k)
            if k == "config":  # the game's options, as config.to_dict() writes them
                continue
            if k in dynamic:  # keys are bids, hand sizes, seats: their rows are documented
                for row in v.values():
                    _json_keys(row, out)
            else:
                _json_keys(v, out)
    elif isinstance(x, list):
        for v in x:
            _json_keys(v, out)
    return out


def test_json_schema_is_the_documented_one(small_runs, tmp_path):
    doc = report_json([small_runs["bobs_hat"], small_runs["oh_hell"]])
    text = json.dumps(doc)  # plain JSON: no NaN, no NumPy types
    assert "NaN" not in text
    doc = json.loads(text)
    assert doc["schema"] == "bobshat.bids/1" == report.SCHEMA and doc["suite"] is None
    keys = _json_keys(doc, set())
    documented = _doc_keys()
    assert keys <= documented, f"undocumented keys: {sorted(keys - documented)}"
    values = {"bobs_hat", "oh_hell", "v1", "none", "0", "10", "double_fewest", "shipped"}  # quoted values
    assert documented - keys <= values, f"documented but never written: {sorted(documented - keys - values)}"
    bh_table, oh_table = doc["tables"]
    assert set(bh_table["bidders"][0]["calibration"]["types"]) == {"most_blue", "most_red", "most_black", "fewest"}
    curve = oh_table["bidders"][0]["calibration"]["curve"]
    assert len(curve["bid"]) == len(curve["hands"]) == 11 and sum(curve["hands"]) == 3 * 19
    bids.plot(doc, tmp_path / "bids.png")
    assert (tmp_path / "bids.png").read_bytes()[:4] == b"\x89PNG"


def test_random_bidding_has_more_hindsight_regret_than_simple_and_strong():
    """On a small Oh Hell run the random bidder's regret is clearly the largest (the paired CIs
    exclude 0). simple and strong are too close for a test this size: the v1 suite's numbers for
    them are in the README."""
    game = make_game("oh_hell", players=4)
    res = measure(game, ["random", "simple", "strong"], deals=6, seed=11, worlds=1, play="strong", batch_size=3)
    pairs = {(d["a"], d["b"]): d for d in res.table["pairwise"]}
    for other in ("simple", "strong"):
        d = pairs[("random", other)]
        assert d["hindsight_regret_diff"] - d["hindsight_ci95"] > 0, d


def test_a_bidders_numbers_do_not_depend_on_the_others_or_the_workers():
    game = make_game("oh_hell", players=4, deal_style="short_high")
    kw = {"deals": 2, "seed": 3, "worlds": 2, "play": "strong", "batch_size": 1}
    alone = measure(game, ["simple"], **kw)
    both = measure(game, ["random", "simple"], **kw, workers=2, mp_context="fork")
    a, b = alone.table["bidders"][0], both.table["bidders"][1]
    assert a == b


def test_bad_inputs_are_clear_errors(monkeypatch, tmp_path):
    bh_game = make_game("bobs_hat", players=4)
    oh_game = make_game("oh_hell", players=4)
    with pytest.raises(ValueError, match="bidder 'nosuch': unknown agent"):
        measure(bh_game, ["random", "nosuch"], deals=1)
    with pytest.raises(ValueError, match="bad agent option"):
        measure(bh_game, ["pimc:worlds"], deals=1)
    with pytest.raises(ValueError, match=r"--play 'ppo:checkpoints/bobs_hat_4p.pt'.*cannot play oh_hell"):
        measure(oh_game, ["random"], deals=1, play=f"ppo:{bidders.ROOT / 'checkpoints' / 'bobs_hat_4p.pt'}")
    with pytest.raises(ValueError, match="worlds must be an integer >= 1, got 0"):
        measure(bh_game, ["random"], deals=1, worlds=0)
    with pytest.raises(ValueError, match="deals must be"):
        measure(bh_game, ["random"], deals=0)
    assert (
        bidders.resolve_bidder("shipped", oh_game).endswith("oh_hell_4p.pt")
        and bidders.resolve_bidder("x", oh_game) == "x"
    )
    with monkeypatch.context() as m:  # a table without a shipped checkpoint (every table has one in checkpoints/)
        m.setattr("agents.shipped.SHIPPED_DIR", tmp_path)
        with pytest.raises(ValueError, match="no shipped policy for bobs_hat with 3 players"):
            measure(make_game("bobs_hat", players=3), ["shipped"], deals=1)
    with pytest.raises(ValueError, match="named twice"):
        measure(bh_game, ["random", "random"], deals=1)
    game, st = bh_sweep_state()
    with pytest.raises(ValueError, match="worlds must be"):
        decision_values(game, st, "strong", worlds=0)
    with pytest.raises(ValueError, match="objective must be one of score, margin"):
        decision_values(game, st, "strong", objective="win")
    game.step(st, np.array([bh.HAT_PLUS]))
    for _ in range(4):
        game.step(st, np.array([bh.BID_BASE + 1]))
    with pytest.raises(ValueError, match="needs bidding decisions"):
        decision_values(game, st, "strong")


def test_the_progress_bar_says_its_games_are_deals_times_bidders(capsys):
    """`bids --deals 2` with two bidders showed "4 games" with nothing to say why."""
    argv = ["bids", "--game", "oh_hell", "--deal-style", "short_low", "--bidders", "simple,random", "--play", "strong"]
    assert main([*argv, "--deals", "2", "--worlds", "1"]) == 0
    err = capsys.readouterr().err
    assert "/4 games (2 deals x 2 bidders)" in err, err


def test_cli_runs_and_refuses_bad_arguments(tmp_path, capsys):
    out, png = tmp_path / "bids.json", tmp_path / "bids.png"
    argv = ["bids", "--game", "oh_hell", "--deal-style", "short_low", "--bidders", "simple", "--play", "strong"]
    argv += ["--deals", "1", "--worlds", "1", "--json", str(out), "--plot", str(png), "--quiet"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "oh_hell, 4 players, 10 hands; 1 games" in text and "ms per bidding decision" in text
    doc = json.loads(out.read_text())
    assert doc["tables"][0]["config"]["deal_style"] == "short_low" and png.stat().st_size > 0
    for bad, message in (
        (["bids", "--bidders", "random", "--worlds", "0"], "--worlds: must be 1 to 1,024, got 0"),
        (["bids", "--bidders", ""], "names no bidder"),
        (["bids", "--suite", "v1", "--bidders", "random", "--deals", "5"], "--suite v1 fixes --deals"),
        (["bids", "--suite", "v1", "--bidders", "random", "--game", "oh_hell"], "fixes the game"),
        (["bids", "--suite", "v0", "--bidders", "random"], "unknown suite 'v0'"),
        (["bids", "--bidders", "random", "--json", str(tmp_path / "no" / "x.json")], "--json: cannot write"),
        (["bids", "--game", "oh_hell", "--bidders", "random", "--no-bid"], "Oh Hell has no such option"),
    ):
        try:  # argparse refuses a flag's range itself (SystemExit); main() returns 2 for the rest
            code = main(bad)
        except SystemExit as exc:
            code = exc.code
        assert code == 2, bad
        assert message in capsys.readouterr().err, bad
    with pytest.raises(SystemExit) as exc:
        main(["bids", "--help"])
    assert exc.value.code == 0 and "--worlds" in capsys.readouterr().out


def test_report_explains_the_best_and_made_columns(small_runs):
    """Under each table's leaderboard, a legend line says what 'best' (and bid, hat, made) count."""
    from train.bids import format_report

    lines = format_report(report_json([small_runs["bobs_hat"], small_runs["oh_hell"]])).splitlines()
    heads = [i for i, line in enumerate(lines) if line.startswith("bidder ") and line.rstrip().endswith("made")]
    assert len(heads) == 2
    for head, made in zip(heads, ("bid cards bid that were made", "hands taking exactly the tricks bid")):
        legend = lines[head + 1 + 2]  # after the column names and one row per bidder (random, strong)
        assert legend.startswith("(bid, hat: hindsight regret")
        assert "best: share of decisions whose choice was a best one in hindsight, regret 0" in legend
        assert made in legend


def test_bid_card_plot_names_its_markers_in_words(small_runs, monkeypatch, tmp_path):
    """bids.png: the calibration of bid cards had 'o blue, s red, D black, ^ fewest' for a key."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.legend import Legend

    kept = []
    monkeypatch.setattr(plt, "close", lambda fig=None: kept.append(fig))
    bids.plot(report_json([small_runs["bobs_hat"]]), tmp_path / "bids.png")
    (ax,) = [a for a in kept[0].axes if a.get_title().startswith("bid cards")]
    assert not re.search(r"\b[osD^v] (blue|red|black|fewest)\b", ax.get_title())
    keys = {}
    for legend in (c for c in ax.get_children() if isinstance(c, Legend)):
        for handle, text in zip(legend.legend_handles, legend.get_texts()):
            keys[text.get_text()] = (handle.get_marker(), handle.get_color())
    shapes = {"most blue", "most red", "most black", "fewest"}
    assert shapes | {"random", "strong"} <= set(keys)
    assert len({keys[k][0] for k in shapes}) == 4  # a shape per bid card
    assert keys["random"][1] != keys["strong"][1]  # a colour per bidder
