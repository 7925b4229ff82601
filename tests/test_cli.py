"""The ``bobshat`` command line: help for every command, simulate, replay, errors."""

from __future__ import annotations

import json

import pytest

from bobshat_env.cli import build_parser, main

COMMANDS = ("simulate", "replay", "eval", "play", "bench", "train")


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
    assert set(COMMANDS) <= set(build_parser()._subparsers._group_actions[0].choices)


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
