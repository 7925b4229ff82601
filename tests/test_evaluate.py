"""Duplicate tournaments (train/evaluate/): deals, statistics, JSON report, workers, command line."""

from __future__ import annotations

import json
import math
from collections import defaultdict

import numpy as np
import pytest

from agents import make_agent, register
from agents.arena import play_games
from agents.base import RandomAgent
from bobshat.cli import main
from bobshat_env.core import rng
from bobshat_env.games import make_game
from bobshat_env.records import read_jsonl, replay_record
from train.evaluate.duplicate import make_seatings, play_duplicate
from train.evaluate.plots import plot
from train.evaluate.report import Evaluation, format_report
from train.evaluate.statistics import clustered_mean_ci, mean_ci, t_quantile_975, win_shares
from train.evaluate.tournament import evaluate, new_counters


class _FirstLegal:
    """Deterministic test bot: the lowest legal action id."""

    def __init__(self, game: object = None, seed: int | None = None) -> None:
        self.name = "test_first"

    def act(self, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray) -> np.ndarray:
        return np.argmax(mask, axis=1)


class _LastLegal:
    """Deterministic test bot: the highest legal action id."""

    def __init__(self, game: object = None, seed: int | None = None) -> None:
        self.name = "test_last"

    def act(self, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray) -> np.ndarray:
        return mask.shape[1] - 1 - np.argmax(mask[:, ::-1], axis=1)


register("test_first", _FirstLegal)
register("test_last", _LastLegal)
SPECS = ["test_first", "test_last", "random", "random"]


# --------------------------------------------------------------------------
# Statistics with known answers
def test_t_quantiles_and_mean_ci_known_values() -> None:
    assert t_quantile_975(1) == pytest.approx(12.706205, abs=1e-6)
    assert t_quantile_975(4) == pytest.approx(2.776445, abs=1e-6)
    assert t_quantile_975(10**9) == pytest.approx(1.959964, abs=1e-6)
    m, hw = mean_ci(np.array([1.0, 2.0, 3.0, 4.0, 5.0]))
    assert m == 3.0
    assert hw == pytest.approx(2.776445 * math.sqrt(2.5) / math.sqrt(5), abs=1e-6)
    assert math.isnan(mean_ci(np.array([4.0]))[1])


def test_t_quantiles_match_scipy() -> None:
    stats = pytest.importorskip("scipy.stats")
    for df in list(range(1, 60)) + [100, 500, 5000]:
        assert t_quantile_975(df) == pytest.approx(stats.t.ppf(0.975, df), rel=2e-5)


def test_clustered_ci_averages_within_a_deal_first() -> None:
    # Three deals of four correlated games; the deal means are exactly 1, 2, 3.
    values = np.array([0.0, 2.0, 1.0, 1.0, 2.0, 2.0, 1.5, 2.5, 3.0, 4.0, 2.0, 3.0])
    unit = np.repeat(np.arange(3), 4)
    m, hw = clustered_mean_ci(values, unit, 3)
    assert m == pytest.approx(2.0)
    assert hw == pytest.approx(4.302653 * 1.0 / math.sqrt(3), abs=1e-6)  # sd of (1, 2, 3) is 1
    # Treating the 12 games as independent would claim a much narrower interval.
    assert mean_ci(values)[1] < hw / 2


def _synthetic() -> Evaluation:
    """Two agents, a in one seat and b in two, over two deals of three seatings; hands = 1."""
    game = make_game("bobs_hat", players=3, hands=1)
    totals = np.array(
        [[1, 0, 0], [0, 1, 2], [0, 0, 1], [3, 3, 0], [0, 3, 6], [0, 0, 3]],
        dtype=np.int64,
    )
    return Evaluation(
        game=game,
        names=["a", "b"],
        seatings=np.array([[0, 1, 1], [1, 0, 1], [1, 1, 0]]),
        seed=0,
        duplicate=True,
        deals=2,
        batch_size=1,
        totals=totals,
        counters=new_counters("bobs_hat", 2),
    )


def test_summary_numbers_on_synthetic_games() -> None:
    s = _synthetic().summary()
    a, b = s["agents"]
    t1 = 12.706205  # t quantile with 1 degree of freedom
    # a: deal means 1 and 3. b: deal means (0+0+0+2+0+0)/6 = 1/3 and (3+0+0+6+0+0)/6 = 3/2.
    assert a["mean_per_hand"] == pytest.approx(2.0)
    assert a["ci95"] == pytest.approx(t1 * 1.0, rel=1e-6)
    assert b["mean_per_hand"] == pytest.approx((1 / 3 + 1.5) / 2)
    assert b["ci95"] == pytest.approx(t1 * abs(1.5 - 1 / 3) / 2, rel=1e-6)
    assert (a["seats_per_game"], b["seats_per_game"]) == (1, 2)
    d = s["pairwise"][0]
    assert (d["a"], d["b"]) == ("a", "b")
    assert d["diff_per_hand"] == pytest.approx((2 / 3 + 1.5) / 2)
    assert d["ci95"] == pytest.approx(t1 * abs(1.5 - 2 / 3) / 2, rel=1e-6)
    # Wins: deal 0 a wins games 0 and 2; deal 1 a shares game 3 with b and wins game 5.
    assert a["win_rate"] == pytest.approx((2 / 3 + 0.5) / 2)
    assert b["win_rate"] == pytest.approx((1 / 6 + 0.25) / 2)
    assert a["win_rate"] + 2 * b["win_rate"] == pytest.approx(1.0)
    # a ranks first in both deals.
    assert a["rating"]["mu"] > b["rating"]["mu"]


# --------------------------------------------------------------------------
# Seatings
def test_seatings_all_permutations_and_rotations() -> None:
    assert make_seatings([0, 1, 2, 3]).shape == (24, 4)
    multiset = make_seatings([0, 1, 2, 2])
    assert multiset.shape == (12, 4)
    assert multiset[0].tolist() == [0, 1, 2, 2]
    rot = make_seatings([0, 1, 2, 3, 4])
    assert rot.shape == (5, 5)
    assert make_seatings([0, 0, 0, 0]).shape == (1, 4)
    for table in (multiset, rot, make_seatings([0, 1, 2, 3], "rotations")):
        for a in np.unique(table):
            per_seat = (table == a).sum(axis=0)
            assert (per_seat == per_seat[0]).all(), "every agent holds every seat equally often"


def test_arena_keys_and_seating_keep_default_behaviour() -> None:
    game = make_game("bobs_hat", players=3, hands=2)
    plain = play_games(game, [RandomAgent(seed=i) for i in range(3)], 20, seed=5, batch_size=8)
    keys = rng.game_keys(5, np.arange(20), 0)
    seating = np.tile(np.arange(3), (20, 1))
    explicit = play_games(
        game, [RandomAgent(seed=i) for i in range(3)], 20, seed=0, batch_size=8, keys=keys, seating=seating
    )
    assert np.array_equal(plain.totals, explicit.totals)


# --------------------------------------------------------------------------
# Duplicate deals
@pytest.mark.parametrize("name", ["bobs_hat", "oh_hell"])
def test_duplicate_deals_identical_across_seatings(tmp_path, name: str) -> None:
    opts = {"hands": 3} if name == "bobs_hat" else {"deal_style": "short_high"}
    game = make_game(name, players=4, **opts)
    path = tmp_path / "games.jsonl"
    ev = evaluate(game, SPECS, 3, seed=11, batch_size=24, records_path=path)
    records = [r for _, r in read_jsonl(path)]
    assert len(records) == ev.totals.shape[0] == 3 * 12
    chance = "trump" if name == "bobs_hat" else "trump_card"
    by_deal: dict[int, list[dict]] = defaultdict(list)
    for g, r in enumerate(records):
        assert replay_record(r) == []
        assert r["totals"] == ev.totals[g].tolist()
        by_deal[g // 12].append(r)
    seen_deals = set()
    for d, group in by_deal.items():
        assert {r["seed"] for r in group} == {int(rng.game_keys(11, d, 0))}
        first = group[0]
        for r in group:
            for h0, h in zip(first["hands"], r["hands"]):
                assert h["deal"] == h0["deal"] and h[chance] == h0[chance] and h["dealer"] == h0["dealer"]
        seatings = sorted(tuple(r["agents"]) for r in group)
        assert len(set(seatings)) == 12 and all(sorted(s) == sorted(SPECS) for s in seatings)
        seen_deals.add(json.dumps(first["hands"][-1]["deal"]))
    assert len(seen_deals) == 3, "different deals differ"


def test_no_duplicate_gives_every_game_its_own_deal(tmp_path) -> None:
    game = make_game("bobs_hat", players=4, hands=1)
    path = tmp_path / "games.jsonl"
    evaluate(game, SPECS, 2, seed=1, duplicate=False, records_path=path)
    records = [r for _, r in read_jsonl(path)]
    assert len({r["seed"] for r in records}) == len(records) == 24
    assert len({json.dumps(r["hands"][0]["deal"]) for r in records}) == 24


@pytest.mark.parametrize("name", ["bobs_hat", "oh_hell"])
def test_bid_counters_agree_with_totals(name: str) -> None:
    game = make_game(
        name, players=4, **({"hands": 4, "no_bid": True, "double_fewest": True} if name == "bobs_hat" else {})
    )
    ev = evaluate(game, SPECS, 4, seed=3, batch_size=20)
    c = ev.counters
    for a in range(3):
        assert c["score_sum"][a] == ev.agent_scores(a).sum()
    seats = np.array([1, 1, 2])
    hands = c["hands"] if name == "bobs_hat" else c["hands"].sum(axis=1)
    assert hands.tolist() == (ev.totals.shape[0] * ev.hands * seats).tolist()
    s = ev.summary()
    if name == "bobs_hat":
        first, last = s["agents"][0]["bids"], s["agents"][1]["bids"]
        assert first["types"]["no_bid"]["rate"] == pytest.approx(1 / ev.hands)  # once per game, then most blue
        assert first["hat"]["chose_plus"] == 1.0 and last["hat"]["chose_plus"] == 0.0
        assert last["types"]["double_fewest"]["rate"] == 1.0 and last["mean_bid_cards"] == 5.0
        assert first["hat"]["dealer_hands"] == ev.totals.shape[0] * ev.hands // 4
    else:
        first = s["agents"][0]["bids"]
        assert first["mean_bid"] < 0.2 and 0 <= first["exact_rate"] <= 1


# --------------------------------------------------------------------------
# Report, workers, command line
def test_json_schema() -> None:
    game = make_game("bobs_hat", players=4, hands=2)
    s = evaluate(game, SPECS, 3, seed=0).summary()
    json.dumps(s, allow_nan=False)
    assert s["schema"] == "bobshat.eval/1"
    for key in ("game", "config", "seed", "duplicate", "deals", "seatings", "games", "hands_per_game", "run"):
        assert key in s
    assert [a["name"] for a in s["agents"]] == ["test_first", "test_last", "random"]
    for a in s["agents"]:
        assert isinstance(a["mean_per_hand"], float) and a["ci95"] > 0 and 0 <= a["win_rate"] <= 1
        assert a["mean_per_game"] == pytest.approx(a["mean_per_hand"] * 2)
        assert set(a["rating"]) == {"mu", "sigma", "ordinal"}
        assert set(a["bids"]["types"]) == {"most_blue", "most_red", "most_black", "fewest", "double_fewest", "no_bid"}
        assert {"rate", "success", "points", "points_per_hand"} <= set(a["bids"]["types"]["fewest"])
        assert {"chose_plus", "dealer_kept", "held_plus", "held_minus", "points_per_hand"} <= set(a["bids"]["hat"])
    assert sum(a["win_rate"] * a["seats_per_game"] for a in s["agents"]) == pytest.approx(1.0)
    assert len(s["pairwise"]) == 3 and len(s["seats"]) == 4


def _without_run(s: dict) -> dict:
    return {k: v for k, v in s.items() if k != "run"}


# How a tournament can be spread; every way must give the numbers of one in-process worker.
# The Ray path (issue 15) adds its entry here, e.g. ("ray_2", {"workers": 2, "backend": "ray"}).
PARALLEL_RUNS = [
    ("processes_2", {"workers": 2, "mp_context": "fork"}),
    ("processes_3", {"workers": 3, "mp_context": "fork"}),
]


@pytest.fixture(scope="module")
def one_worker_run(tmp_path_factory):
    """7 deals x 12 seatings in 4 chunks (so 3 workers finish them out of order), with records."""
    records = tmp_path_factory.mktemp("eval") / "one.jsonl"
    game = make_game("bobs_hat", players=4, hands=2)
    return evaluate(game, SPECS, 7, seed=4, batch_size=24, workers=1, records_path=records), records


@pytest.mark.parametrize("how", [options for _, options in PARALLEL_RUNS], ids=[name for name, _ in PARALLEL_RUNS])
def test_workers_give_identical_results(how, one_worker_run, tmp_path) -> None:
    one, one_records = one_worker_run
    records = tmp_path / "many.jsonl"
    many = evaluate(one.game, SPECS, 7, seed=4, batch_size=24, records_path=records, **how)
    assert many.workers == how["workers"]
    assert np.array_equal(one.totals, many.totals)
    for k in one.counters:
        assert np.array_equal(one.counters[k], many.counters[k])
    assert _without_run(one.summary()) == _without_run(many.summary())
    assert records.read_bytes() == one_records.read_bytes()  # every game, in game order


def test_cli_eval_tiny_run(tmp_path, capsys) -> None:
    out1, out2 = tmp_path / "one.json", tmp_path / "two.json"
    common = ["eval", "--players", "3", "--hands", "2", "--agents", "random,random,random", "--deals", "5"]
    common += ["--batch-size", "2", "--quiet"]
    rec, png = tmp_path / "g.jsonl", tmp_path / "p.png"
    assert main(common + ["--json", str(out1), "--records", str(rec), "--plot", str(png)]) == 0
    text = capsys.readouterr().out
    assert "per hand" in text and "Bob's Hat" in text
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(list(read_jsonl(rec))) == 5
    # Spread over two spawned processes: the same numbers.
    assert main(common + ["--json", str(out2), "--workers", "2"]) == 0
    one, two = json.loads(out1.read_text()), json.loads(out2.read_text())
    assert _without_run(one) == _without_run(two) and two["run"]["workers"] == 2
    assert one["agents"][0]["rating"] is None  # one entrant: nothing to rate


def test_cli_eval_oh_hell_and_errors(tmp_path, capsys) -> None:
    png = tmp_path / "oh.png"
    args = ["eval", "--game", "oh_hell", "--players", "3", "--deal-style", "short_low", "--deals", "2", "--quiet"]
    assert main(args + ["--agents", "random,random,random", "--plot", str(png)]) == 0
    assert "exact" in capsys.readouterr().out and png.exists()
    assert main(["eval", "--agents", "random,random", "--deals", "2", "--quiet"]) == 2
    assert "--agents names 2 agents" in capsys.readouterr().err
    assert main(["eval", "--agents", "nosuchbot,random,random,random", "--deals", "2", "--quiet"]) == 2


def test_play_duplicate_gives_every_seating_of_a_deal_the_same_cards_in_either_order():
    game = make_game("bobs_hat", players=4, hands=2)
    agents = [make_agent("simple", game), make_agent("strong", game)]  # deterministic bots
    seatings = np.array([[0, 1, 1, 1], [1, 1, 0, 1]])
    deals = np.array([3, 7, 8])
    by_deal = play_duplicate(game, agents, seatings, deals, seed=5).totals  # game g: deal g // 2, seating g % 2
    by_seating = play_duplicate(game, agents, seatings, deals, seed=5, seating_major=True, batch_size=2).totals
    np.testing.assert_array_equal(by_deal.reshape(3, 2, 4), by_seating.reshape(2, 3, 4).transpose(1, 0, 2))
    for i, d in enumerate(deals):  # deal d is the game of key rng.game_keys(seed, d), whatever the seating
        for r, row in enumerate(seatings):
            one = play_games(game, [agents[j] for j in row], 1, keys=rng.game_keys(5, np.array([d]), 0)).totals
            np.testing.assert_array_equal(one[0], by_deal[2 * i + r])
    own = play_duplicate(game, agents, seatings, deals, seed=5, duplicate=False).totals  # a deal per game
    second = [agents[j] for j in seatings[1]]  # game 1: deal 3 under seating 1
    one = play_games(game, second, 1, keys=rng.game_keys(5, np.array([3 * 2 + 1]), 0)).totals  # key d * R + r
    np.testing.assert_array_equal(own[1], one[0])
    with pytest.raises(ValueError, match="deal-major only"):
        play_duplicate(game, agents, seatings, deals, seed=5, duplicate=False, seating_major=True)


def test_win_shares_split_a_shared_first_place():
    shares = win_shares(np.array([[10, 3, 10, -2], [0, 5, 1, 2]]))
    np.testing.assert_array_equal(shares, [[0.5, 0, 0.5, 0], [0, 1, 0, 0]])


def test_layout_seats_two_entrants_and_reports_their_paired_difference(tmp_path, capsys) -> None:
    from train.evaluate.command import layout_specs

    assert layout_specs(["a", "b"], "2v2", 4) == ["a", "a", "b", "b"]
    assert layout_specs(["a", "b"], "1V4", 5) == ["a", "b", "b", "b", "b"]
    out = tmp_path / "h2h.json"
    args = ["eval", "--hands", "2", "--agents", "test_first,random", "--layout", "1v3", "--deals", "6", "--quiet"]
    assert main(args + ["--json", str(out)]) == 0
    s = json.loads(out.read_text())
    assert sorted(map(sorted, s["seatings"])) == [["random", "random", "random", "test_first"]] * 4  # 4 seatings
    (pair,) = s["pairwise"]
    assert (pair["a"], pair["b"]) == ("test_first", "random")
    by_name = {a["name"]: a for a in s["agents"]}
    assert pair["diff_per_hand"] == pytest.approx(
        by_name["test_first"]["mean_per_hand"] - by_name["random"]["mean_per_hand"]
    )
    assert pair["ci95"] > 0
    # the same tournament spelled out seat by seat gives the same numbers
    spelled = tmp_path / "spelled.json"
    args2 = ["eval", "--hands", "2", "--agents", "test_first,random,random,random", "--deals", "6", "--quiet"]
    assert main(args2 + ["--json", str(spelled)]) == 0
    assert _without_run(json.loads(spelled.read_text())) == _without_run(s)
    capsys.readouterr()
    for bad, msg in (
        (["--agents", "test_first,random", "--layout", "2v3"], "seats 5 players but the game has 4"),
        (["--agents", "test_first,random", "--layout", "two"], "must look like 2v2"),
        (["--agents", "test_first,random", "--layout", "0v4"], "must look like 2v2"),
        (["--agents", "test_first,random,random", "--layout", "2v2"], "exactly two agents"),
        (["--agents", "random,random", "--layout", "2v2"], "two different agents"),
    ):
        assert main(["eval", "--hands", "2", "--deals", "2", "--quiet", *bad]) == 2
        assert msg in capsys.readouterr().err


def _drawn_figure(monkeypatch, draw) -> object:
    """The matplotlib figure ``draw()`` saves, kept open (its plt.close is caught) to inspect."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kept = []
    monkeypatch.setattr(plt, "close", lambda fig=None: kept.append(fig))
    draw()
    (fig,) = kept
    fig.canvas.draw()
    return fig


def _data_boxes(ax, renderer) -> list:
    """Display boxes of what an axes plots: shapes and lines by their extent, scatter marks by their points."""
    from matplotlib.collections import LineCollection, PathCollection
    from matplotlib.transforms import Bbox

    boxes = []
    for c in ax.collections:
        if isinstance(c, PathCollection):  # scatter: its marks' centres
            boxes += [Bbox([p, p]) for p in c.get_offset_transform().transform(c.get_offsets())]
        elif isinstance(c, LineCollection):
            for seg in c.get_segments():
                pts = c.get_transform().transform(seg)
                boxes.append(Bbox([pts.min(axis=0), pts.max(axis=0)]))
        else:
            boxes.append(c.get_window_extent(renderer))
    boxes += [a.get_window_extent(renderer) for a in [*ax.patches, *ax.lines]]
    return boxes


def test_score_plot_gives_each_agent_its_own_distribution_and_keeps_the_legend_off_the_data(monkeypatch, tmp_path):
    """eval.png: three agents that score alike were three step histograms on top of each other, their peaks
    under the legend; each now has its own place on the axis, and the legend covers no data."""
    from matplotlib.collections import PolyCollection

    ev = evaluate(make_game("bobs_hat", players=4, hands=2), ["strong", "simple", "random", "random"], 3, seed=0)
    fig = _drawn_figure(monkeypatch, lambda: plot(ev, tmp_path / "eval.png"))
    ax = fig.axes[0]
    renderer = fig.canvas.get_renderer()
    bodies = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert len(bodies) == len(ev.names) == 3  # one distribution per agent
    spans = sorted((b.get_window_extent(renderer).x0, b.get_window_extent(renderer).x1) for b in bodies)
    assert all(right <= left for (_, right), (left, _) in zip(spans, spans[1:]))  # side by side, none overlaid
    labels = [t.get_text() for t in ax.get_xticklabels()]
    for name, agent in zip(ev.names, ev.summary()["agents"]):
        assert any(name in text and f"{agent['mean_per_game']:+.1f}" in text for text in labels), name
    legend = ax.get_legend().get_window_extent(renderer)
    data = _data_boxes(ax, renderer)
    assert len(data) > 3 and not any(legend.overlaps(box) for box in data), "the legend covers plotted data"
    for ax in fig.axes[1:]:  # the bid panels: their keys sit under them, off the bars
        legend = ax.get_legend().get_window_extent(renderer)
        assert not any(legend.overlaps(box) for box in _data_boxes(ax, renderer)), ax.get_title()


def test_oh_hell_bid_table_explains_its_columns(capsys):
    """The Oh Hell bidding table's exact/over/under columns are explained right under it."""
    ev = evaluate(make_game("oh_hell", players=3, deal_style="short_low"), ["strong", "random", "random"], 2)
    lines = format_report(ev.summary()).splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("bids: mean bid"))
    legend = lines[head + 2 + 2]  # the header line, the column names, one row per entrant (2)
    assert legend.startswith("(exact: ")
    assert "over: more tricks than bid" in legend and "under: fewer" in legend and "zero ok" in legend
