"""The ``bobshat`` command line: help for every command, simulate, replay, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bobshat.cli import build_parser, main

COMMANDS = (
    "simulate",
    "replay",
    "eval",
    "bids",
    "play",
    "serve",
    "bench",
    "train",
    "exploit",
    "imitate",
    "expert",
    "average",
    "infer",
    "exact",
)


def test_every_command_has_help(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    top = capsys.readouterr().out
    for command in COMMANDS:
        assert command in top
        with pytest.raises(SystemExit) as exc:
            main([command, "--help"])
        assert exc.value.code == 0, command
        assert "usage" in capsys.readouterr().out.lower()
    assert set(COMMANDS) == set(build_parser()._subparsers._group_actions[0].choices)


def test_simulate_prints_a_table_and_writes_records_that_replay(tmp_path, capsys):
    out = tmp_path / "games.jsonl"
    assert main(["simulate", "--players", "3", "--games", "6", "--seed", "2", "--records", str(out), "--no-bid"]) == 0
    text = capsys.readouterr().out
    assert "bobs_hat, 3 players, 6 games, seed 2" in text and "wrote 6 records" in text
    lines = out.read_text().splitlines()
    assert len(lines) == 6 and json.loads(lines[0])["config"]["no_bid"] is True
    assert main(["replay", str(out)]) == 0
    assert "6 record(s), all valid" in capsys.readouterr().out

    record = json.loads(lines[1])
    record["totals"][0] += 1
    lines[1] = json.dumps(record)
    out.write_text("\n".join(lines) + "\n")
    assert main(["replay", str(out)]) == 1
    assert "totals" in capsys.readouterr().out


def test_simulate_oh_hell(capsys):
    assert main(["simulate", "--game", "oh_hell", "--players", "7", "--deal-style", "short_low", "--games", "3"]) == 0
    assert "oh_hell, 7 players, 3 games" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["simulate", "--players", "6"], "players must be 3, 4 or 5"),
        (["simulate", "--hands", "14"], "hands=14 does not fit"),
        (["simulate", "--game", "oh_hell", "--players", "8"], "players must be 3 to 7"),
        (["simulate", "--game", "oh_hell", "--deal-style", "medium"], "unknown deal_style"),
        (["simulate", "--game", "oh_hell", "--no-bid"], "Where's Bob's Hat? option"),
        (["simulate", "--scoring", "negative"], "--scoring is one of the Oh Hell options"),
        (["eval", "--deal-style", "short_low"], "--deal-style is one of the Oh Hell options"),
        (["simulate", "--agents", "random,random"], "names 2 agents but the game has 4 players"),
        (["simulate", "--agents", "random,random,random,genius"], "unknown agent 'genius'"),
        (["replay", "/nonexistent/records.jsonl"], ""),
    ],
)
def test_bad_input_is_a_clear_error(argv, message, capsys):
    assert main(argv) != 0
    captured = capsys.readouterr()
    assert message in captured.err + captured.out
    assert "Traceback" not in captured.err


def test_agent_lists_keep_each_specs_options():
    from agents.registry import split_specs

    assert split_specs("pimc:worlds=32,playout=strong,random, bid=strong+play=pimc:worlds=8,simple") == [
        "pimc:worlds=32,playout=strong",
        "random",
        "bid=strong+play=pimc:worlds=8",
        "simple",
    ]
    assert split_specs("random,,random") == ["random", "random"]


# --------------------------------------------------------------------------
# Issue 13.6: output paths are checked before playing, corrupt lines do not stop a replay
@pytest.mark.parametrize(
    "argv",
    [
        ["simulate", "--games", "2", "--records", "{dir}"],
        ["eval", "--deals", "1", "--json", "{dir}"],
        ["eval", "--deals", "1", "--plot", "{dir}"],
        ["eval", "--deals", "1", "--records", "{dir}"],
        ["eval", "--deals", "1", "--json", "{dir}/no/such/folder/x.json"],
    ],
)
def test_output_paths_are_checked_before_any_game(argv, tmp_path, capsys):
    argv = [a.replace("{dir}", str(tmp_path)) for a in argv]
    flag = next(a for a in argv if a.startswith("--") and a not in ("--games", "--deals"))
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith(f"bobshat {argv[0]}: error: {flag}: cannot write {argv[-1]}: ")
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err
    assert "decisions" not in captured.out  # no game was played
    assert list(tmp_path.iterdir()) == []


def test_replay_reports_a_deeply_nested_line_and_goes_on(tmp_path, capsys):
    path = tmp_path / "games.jsonl"
    assert main(["simulate", "--players", "3", "--hands", "1", "--games", "2", "--records", str(path)]) == 0
    good = path.read_text().splitlines()
    path.write_text("\n".join([good[0], "[" * 100_000 + "]" * 100_000, good[1]]) + "\n")
    capsys.readouterr()
    assert main(["replay", str(path)]) == 1
    out = capsys.readouterr().out
    assert "record 1 (line 1): bobs_hat, 3 players, 1 hand entry" in out and ": ok" in out
    assert "record 2 (line 2): 1 fault(s)\n  line 2: line 2 is nested too deeply to read" in out
    assert "record 3 (line 3): bobs_hat" in out
    assert "3 record(s): 2 valid, 1 with faults" in out


@pytest.mark.parametrize(
    "argv, flag, message",
    [
        (["simulate", "--batch-size", "-1"], "--batch-size", "must be 1 to 65,536, got -1"),
        (["simulate", "--batch-size", "0"], "--batch-size", "must be 1 to 65,536, got 0"),
        (["simulate", "--seed", "-5"], "--seed", "got -5"),
        (["eval", "--seed", "-5"], "--seed", "got -5"),
        (["play", "--seed", "-5"], "--seed", "got -5"),
        (["simulate", "--games", str(10**12)], "--games", "must be 1 to 10,000,000"),
        (["simulate", "--games", "0"], "--games", "must be 1 to 10,000,000, got 0"),
        (["eval", "--deals", str(10**12)], "--deals", "must be 1 to 100,000"),
        (["eval", "--workers", "0"], "--workers", "must be 1 to 64"),
        (["eval", "--batch-size", "0"], "--batch-size", "must be 1 to 65,536"),
        (["simulate", "--players", "\u0664"], "--players", "expected an integer"),  # an Arabic-Indic 4
        (["bench", "--reps", "0"], "--reps", "must be 1 to 1,000"),
        (["bench", "--seconds", "nan"], "--seconds", "must be 0 to 3600"),
        (["bench", "--batches", "64,-1"], "--batches", "got -1"),
    ],
    ids=lambda v: "_".join(v) if isinstance(v, list) else "",
)
def test_numeric_options_are_range_checked_naming_the_flag(argv, flag, message, capsys):
    # argparse checks every numeric option before anything runs, names the flag and exits with status 2
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {flag}: " in err and message in err, err


def test_simulate_records_stream_by_batch_and_match_one_batch(tmp_path, capsys):
    # records are written batch by batch (memory stays one batch's); with deterministic bots the games do
    # not depend on the batch size (random bots draw per call, so theirs do)
    one, many = tmp_path / "one.jsonl", tmp_path / "many.jsonl"
    argv = [
        "simulate",
        "--players",
        "3",
        "--hands",
        "2",
        "--games",
        "7",
        "--seed",
        "4",
        "--agents",
        "strong,simple,strong",
    ]
    assert main([*argv, "--records", str(one)]) == 0
    first = capsys.readouterr().out
    assert main([*argv, "--records", str(many), "--batch-size", "3"]) == 0
    second = capsys.readouterr().out
    assert one.read_text() == many.read_text() and len(one.read_text().splitlines()) == 7
    assert first.splitlines()[:5] == second.splitlines()[:5] and "wrote 7 records" in second


@pytest.mark.parametrize(
    "flag, value, message",
    [
        ("--seed", "-5", "seed must be 0 to 9,223,372,036,854,775,807, got -5"),
        ("--num-envs", "10000000", "num_envs must be 1 to 65,536, got 10,000,000"),
        ("--eval-deals", "0", "eval_deals must be 1 to 100,000, got 0"),
        ("--gamma", "1.5", "gamma must be 0.0 to 1.0, got 1.5"),
        ("--learning-rate", "nan", "learning_rate must be a finite number, got nan"),
        ("--time-limit-min", "nan", "time_limit_min must be a finite number"),
    ],
)
def test_train_numbers_are_range_checked_naming_the_field(flag, value, message, tmp_path, capsys):
    smoke = str(Path(__file__).resolve().parents[1] / "configs" / "smoke.yaml")
    assert main(["train", "--config", smoke, "--runs-dir", str(tmp_path), flag, value]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err, err
    assert list(tmp_path.iterdir()) == []  # refused before any run folder was made
