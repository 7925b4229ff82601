"""Every numeric flag of the commands that run tournaments and benchmarks has the README's range, checked
before anything runs: a value outside it is one line naming the flag, status 2 (``bids`` took ``--deals
99999999999`` to a MemoryError, ``--worlds 100000000`` to 581 GiB, and ``--workers 1000``, ``--seed -1``)."""

from __future__ import annotations

import argparse
import dataclasses

import pytest

from bobshat import cli
from bobshat.cli import build_parser, main

BIG = "9" * 30


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["bids", "--bidders", "random", "--deals", "99999999999"], "--deals"),
        (["bids", "--bidders", "random", "--deals", "0"], "--deals"),
        (["bids", "--bidders", "random", "--worlds", "100000000"], "--worlds"),
        (["bids", "--bidders", "random", "--worlds", "0"], "--worlds"),
        (["bids", "--bidders", "random", "--playouts", "100000000"], "--playouts"),
        (["bids", "--bidders", "random", "--workers", "1000"], "--workers"),
        (["bids", "--bidders", "random", "--workers", "0"], "--workers"),
        (["bids", "--bidders", "random", "--seed", "-1"], "--seed"),
        (["bids", "--bidders", "random", "--seed", "1" + "0" * 23], "--seed"),
        (["bids", "--bidders", "random", "--seed", "1e23"], "--seed"),
        (["bids", "--bidders", "random", "--batch-size", "0"], "--batch-size"),
        (["bids", "--bidders", "random", "--batch-size", BIG], "--batch-size"),
        (["eval", "--deals", BIG], "--deals"),
        (["eval", "--workers", "1000"], "--workers"),
        (["eval", "--seed", "-1"], "--seed"),
        (["simulate", "--games", BIG], "--games"),
        (["simulate", "--seed", BIG], "--seed"),
    ],
)
def test_out_of_range_is_refused_up_front(argv, flag, capsys, monkeypatch) -> None:
    def ran(args) -> int:
        pytest.fail(f"{argv[0]} ran with {flag} out of range")

    monkeypatch.setattr(cli, f"cmd_{argv[0]}", ran)
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith(f"bobshat {argv[0]}: error: argument {flag}: "), err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--eval-deals", BIG], f"--eval-deals must be in [2, 100000], got {BIG}"),
        (["--seed", "-1"], "--seed must be in [0, 9.22337e+18], got -1"),
        (["--time-limit-min", "inf"], "--time-limit-min must be in [0, 1e+06], got inf"),
    ],
)
def test_exploit_s_options_are_refused_before_it_runs(argv, message, capsys, monkeypatch) -> None:
    """exploit's settings are the kit's options (train.options.ExploitOptions): their ranges are checked when
    they are made, in the command before anything is imported, read or written."""
    import sys

    monkeypatch.setitem(sys.modules, "train.exploit", None)  # the command going on would fail to import it
    assert main(["exploit", "--target", "random", *argv]) == 2
    assert capsys.readouterr().err.strip() == f"bobshat exploit: error: {message}"


def _actions(command: str) -> list[argparse.Action]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[command]._actions


@pytest.mark.parametrize("command", ["bids", "eval", "simulate", "exploit"])
def test_no_numeric_flag_takes_any_number(command) -> None:
    """Plain ``int``/``float`` accept any size or sign: every numeric flag goes through a ranged type.

    (Game options, such as ``--players``, take any integer here: the game's
    config checks them, since their range depends on the game.)
    """
    from train.options import ExploitOptions

    game_options = {a.dest for a in _actions("simulate") if a.container.title == "game options"}
    ranged = {f.name for f in dataclasses.fields(ExploitOptions) if f.metadata["lo"] is not None}  # the options'
    plain = [a.option_strings[0] for a in _actions(command) if a.type in (int, float) and a.dest not in game_options]
    assert [flag for flag in plain if command != "exploit" or flag[2:].replace("-", "_") not in ranged] == []
