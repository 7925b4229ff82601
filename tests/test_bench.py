"""The throughput harness in a tiny mode (schema and sanity, never timings) and ``sample_masked``."""

from __future__ import annotations

import json
import math
import sys
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest

from agents.base import sample_masked
from benchmarks import throughput
from bobshat.cli import main
from bobshat_env.games import GAMES

KEYS = {"system", "game", "interface", "batch", "decisions_per_s", "games_per_s", "bytes_per_game", "threads", "vs"}


def _check_rows(rows: list[dict]) -> None:
    assert rows, "no measurement"
    for row in rows:
        assert set(row) == KEYS
        assert isinstance(row["system"], str) and isinstance(row["game"], str)
        assert row["interface"] in ("vector", "engine", "aec")
        assert isinstance(row["batch"], int) and row["batch"] >= 1
        assert isinstance(row["threads"], int) and row["threads"] >= 1
        assert row["decisions_per_s"] > 0 and math.isfinite(row["decisions_per_s"])
        assert row["games_per_s"] > 0 and math.isfinite(row["games_per_s"])
        if row["system"] == throughput.SYSTEM:
            assert row["bytes_per_game"] > 0
        else:
            assert row["bytes_per_game"] is None and row["vs"] == {} and row["threads"] == 1
    peers = {r["system"]: r["decisions_per_s"] for r in rows if r["system"] != throughput.SYSTEM}
    for row in rows:  # each of our rows against each peer of the same run
        if row["system"] == throughput.SYSTEM:
            assert row["vs"].keys() == peers.keys()
            for peer, ratio in row["vs"].items():
                assert ratio == pytest.approx(row["decisions_per_s"] / peers[peer])


def test_bench_tiny_json(tmp_path):
    path = tmp_path / "bench.json"
    rows, table = throughput.bench(json_path=str(path), batches=(1, 3), reps=1, seconds=0, peers=True)
    data = json.loads(path.read_text())
    assert data == [asdict(r) for r in rows]
    _check_rows(data)
    ours = {(r["game"], r["interface"], r["batch"]) for r in data if r["system"] == "bobshat"}
    for game in GAMES:  # every game, the engine without observations at the largest batch
        assert {(game, "vector", 1), (game, "vector", 3), (game, "engine", 3), (game, "aec", 1)} <= ours
    assert any(r["system"] == "open_spiel" for r in data), "the tests' environment has OpenSpiel"
    # Bob's Hat games have a fixed length, so a vector cycle is exactly one game per slot:
    # games/s * decisions per game == decisions/s.
    bh = [r for r in data if r["system"] == "bobshat" and r["game"] == "bobs_hat"]
    per_game = {r["decisions_per_s"] / r["games_per_s"] for r in bh}
    assert max(per_game) - min(per_game) < 1e-6 * max(per_game)
    assert "decisions/s" in table and "bobs_hat" in table
    assert "| bobshat | bobs_hat | engine | 3 | 1 |" in table and "| vs open_spiel |" in table
    assert "bobs_hat, B=3: vector env (observation + mask) on 1 thread(s)" in table


def test_engine_rows_on_all_threads_and_on_one():
    """At a batch the kernels split over threads, the engine is measured on all of numba's threads and on one."""
    import numba

    from bobshat_env.core.compiled import PARALLEL_MIN_BATCH

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("numba has one thread here")
    with throughput.numba_threads(2):
        rows, _ = throughput.run((PARALLEL_MIN_BATCH,), throughput.TINY, peers=False, games=("bobs_hat",))
    engine = sorted(r.threads for r in rows if r.interface == "engine")
    assert engine == [1, 2]
    assert [r.threads for r in rows if r.interface == "vector"] == [2]


def test_the_harness_does_not_branch_on_game_names():
    """Issue 27: it asks the games (bobshat_env.games.GAMES), as tests/test_architecture.py checks the packages."""
    from test_architecture import name_branches

    source = (Path(throughput.__file__)).read_text()
    assert name_branches(source) == []


def test_bench_cli_tiny(tmp_path, capsys):
    path = tmp_path / "rows.json"
    code = main(
        ["bench", "--batches", "2", "--reps", "1", "--seconds", "0", "--no-peers", "--quiet", "--json", str(path)]
    )
    assert code == 0
    data = json.loads(path.read_text())
    _check_rows(data)
    assert all(r["system"] == "bobshat" for r in data)
    assert "| bobshat | bobs_hat | vector | 2 |" in capsys.readouterr().out


def test_bench_rejects_bad_settings():
    with pytest.raises(ValueError, match="batch"):
        throughput.run(batches=(0,), settings=throughput.TINY, peers=False)
    with pytest.raises(ValueError, match="clock"):
        throughput.Settings(clock="sundial")
    with pytest.raises(SystemExit) as exc:  # argparse checks the numbers: status 2 before anything runs
        main(["bench", "--batches", "-4", "--quiet"])
    assert exc.value.code == 2


def _sample_masked_reference(mask: np.ndarray, gen: np.random.Generator) -> np.ndarray:
    """The earlier cumulative-sum implementation: the pick-th legal action, pick = floor(u * count)."""
    counts = mask.sum(axis=1)
    pick = (gen.random(mask.shape[0]) * counts).astype(np.int64)
    return np.argmax(np.cumsum(mask, axis=1) > pick[:, None], axis=1)


def test_sample_masked_uniform():
    mask = np.zeros((4, 12), dtype=bool)
    mask[0, [0, 5, 11]] = True
    mask[1, :] = True
    mask[2, [7]] = True
    mask[3, 3:9] = True
    n = 20000
    draws = sample_masked(np.repeat(mask, n, axis=0), np.random.default_rng(123)).reshape(4, n)
    for row in range(4):
        legal = np.flatnonzero(mask[row])
        assert np.isin(draws[row], legal).all()
        counts = np.array([(draws[row] == a).sum() for a in legal])
        expected = n / legal.size
        chi2 = ((counts - expected) ** 2 / expected).sum()
        dof = max(legal.size - 1, 1)
        assert chi2 < dof + 6 * math.sqrt(2 * dof) + 10, (row, counts)  # loose: far beyond p = 0.001


def test_sample_masked_matches_reference_and_validates():
    gen = np.random.default_rng(0)
    for B, A, p in [(1, 86, 0.1), (7, 3, 0.5), (1000, 86, 0.05), (64, 63, 0.9)]:
        mask = gen.random((B, A)) < p
        mask[np.arange(B), gen.integers(0, A, B)] = True
        seed = int(gen.integers(1 << 30))
        got = sample_masked(mask, np.random.default_rng(seed))
        assert got.dtype == np.int64 and got.shape == (B,)
        assert mask[np.arange(B), got].all()
        np.testing.assert_array_equal(got, _sample_masked_reference(mask, np.random.default_rng(seed)))
    assert sample_masked(np.array([[0, 0, 1]], dtype=np.int8), gen).tolist() == [2]
    assert sample_masked(np.zeros((0, 5), dtype=bool), gen).shape == (0,)
    with pytest.raises(ValueError, match="row 1"):
        sample_masked(np.array([[True, False], [False, False]]), gen)


def test_search_latency_tiny(capsys):
    """benchmarks/search_latency.py: a bot's decisions at B = 1 are all timed (schema and sanity, never timings)."""
    from benchmarks import search_latency

    search_latency.main(["--players", "3", "--game-options", '{"hands": 1}', "--bots", "strong,random", "--games", "2"])
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["bot"] for r in rows] == ["strong", "random"]
    for r in rows:
        # hands=1, 3 players: seats 0 and 2 bid and play 5 cards each per game, and choose the hat when dealing
        assert 2 * 12 <= r["decisions"] <= 2 * 13
        for key in ("wall_ms", "cpu_ms", "cpu_ms_card_play", "cpu_ms_bids"):
            assert 0 <= r[key]["p50"] <= r[key]["p95"] <= r[key]["max"] and math.isfinite(r[key]["mean"])


def test_replicate_ceiling_replays_the_deals_and_redraws_only_the_agents_dice() -> None:
    """benchmarks/replicate_ceiling.py: deterministic agents replay each deal exactly (r = 1, no ceiling); with
    `random` in the match the second replicate differs (its dice are drawn anew) on the same deals."""
    from benchmarks.replicate_ceiling import ceiling, replicates

    fixed = replicates("bobs_hat", "strong,simple", deals=3, seed=4, batch_size=6)
    assert np.allclose(fixed["first"], fixed["second"], rtol=0, atol=1e-12)  # same deals, no dice: same games
    assert ceiling(fixed["first"], fixed["second"])["r"] > 0.999999
    dice = replicates("bobs_hat", "random,simple", deals=3, seed=4, batch_size=6)
    assert not np.allclose(dice["first"], dice["second"], rtol=0, atol=1e-6)
    assert ceiling([1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.5])["r"] > 0.9  # the correlation, not a constant
    with pytest.raises(ValueError, match="two entrants"):
        replicates("bobs_hat", "strong,simple,random", deals=1, seed=0)


def test_replicate_ceiling_refuses_bad_flags_before_playing(tmp_path, capsys) -> None:
    """Too few deals for a correlation, or a --json that cannot be written: a one-line error, nothing played."""
    from benchmarks.replicate_ceiling import main

    for argv, says in (
        (["--agents", "strong,simple", "--deals", "2"], "at least 3"),
        (["--agents", "strong,simple", "--deals", "3", "--json", str(tmp_path / "no" / "r.json")], "--json"),
        (["--agents", "strong,simple", "--deals", "3", "--json", str(tmp_path)], "--json"),
    ):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2 and says in capsys.readouterr().err
    main(["--agents", "strong,simple", "--deals", "3", "--workers", "1", "--json", str(tmp_path / "r.json")])
    assert json.loads((tmp_path / "r.json").read_text())["r"] == 1.0  # deterministic agents: r = 1


def test_checkout_comparison_measures_a_checkout_in_a_fresh_interpreter(capsys):
    """``python benchmarks/throughput.py --repo OLD``'s child: one checkout's cases, positive decisions/s."""
    here = str(Path(throughput.__file__).resolve().parents[1])
    got = throughput.measure_checkout(here, ["oh_hell"], [2], seconds=0.01)
    assert set(got) == {"oh_hell engine B=2", "oh_hell vector B=2"}
    assert all(v > 0 and math.isfinite(v) for v in got.values())
    with pytest.raises(SystemExit) as exc:  # argparse refuses before measuring anything
        throughput.main(["--reps", "0"])
    assert exc.value.code == 2
    assert "--reps" in capsys.readouterr().err


def test_checkout_comparison_refuses_a_repo_that_is_not_a_checkout(tmp_path, capsys):
    """A commit id given as ``--repo`` (it takes a folder) is refused at once, naming the flag, not
    after the first checkout's minutes of measuring."""
    with pytest.raises(SystemExit) as exc:
        throughput.main(["--repo", "cb0221f", "--reps", "1", "--seconds", "60"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--repo 'cb0221f' is not a bobshat checkout" in err and "git worktree add" in err
    with pytest.raises(SystemExit):  # an empty folder neither
        throughput.main(["--repo", str(tmp_path), "--reps", "1", "--seconds", "60"])


def test_engine_ab_pairs_two_copies_of_an_engine_in_one_process(capsys):
    """``python -m benchmarks.engine_ab --repo OLD``: this checkout against itself, a copy imported under
    another name beside it; every case gets a finite positive ratio and rate."""
    from benchmarks import engine_ab

    got = engine_ab.compare(engine_ab.HERE, ["oh_hell"], [2], pairs=3, seconds=0.01)
    case = got["oh_hell B=2"]
    copy = sys.modules["bobshat_env_ab"]
    assert copy is not sys.modules["bobshat_env"] and copy.__name__ == "bobshat_env_ab"
    assert sys.modules["bobshat_env_ab.core.oh_hell"].step is not sys.modules["bobshat_env.core.oh_hell"].step
    assert all(math.isfinite(v) and v > 0 for v in case.values())
    assert case["q1"] <= case["ratio"] <= case["q3"]
    with pytest.raises(SystemExit) as exc:  # a commit id is not a folder: refused before anything runs
        engine_ab.main(["--repo", "cb0221f"])
    assert exc.value.code == 2 and "is not a bobshat checkout" in capsys.readouterr().err
