"""The ``bobshat`` command line.

Subcommands: ``simulate`` (bots play each other, with a results table and
optional records), ``replay`` (check records against the rules), ``eval``
(duplicate tournaments), ``bids`` (the bidding benchmark: regret against
oracles), ``play`` (a human against bots in the terminal), ``bench``
(throughput against peers) and ``train`` (PPO with self-play). Each
command's ``--help`` lists its flags. Heavy imports happen inside the
command that needs them, so ``bobshat --help`` stays fast.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from .config import ConfigError
from .games import DESCRIPTIONS, GAMES, describe


def _add_game_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("game options")
    g.add_argument("--game", choices=GAMES, default=GAMES[0], help=f"which game (default {GAMES[0]})")
    g.add_argument("--players", type=int, default=4, help="number of players (default 4)")
    g.add_argument("--first-dealer", type=int, default=0, help="first dealer's seat, -1 to draw it (default 0)")
    g.add_argument("--hands", type=int, default=None, help="Bob's Hat: number of hands (default 12/10/8)")
    for flag, text in (
        ("double-fewest", "a player may bid fewest twice, scoring double"),
        ("no-bid", "once per game a player may bid nothing and score 0"),
        ("secret-bidding", "bids stay hidden until everybody has bid"),
        ("negative-scoring", "a missed most bid scores -5 - count"),
        ("renege-mode", "a card that breaks follow suit is a renege (-15, hand dealt again), not an error"),
    ):
        g.add_argument(f"--{flag}", action="store_true", help=f"Bob's Hat option: {text}")
    g.add_argument(
        "--deal-style", help="Oh Hell: long (default), long_inverted, short_high_low, short_high, short_low"
    )
    g.add_argument("--scoring", help="Oh Hell: positive (default), neutral or negative")


def game_options(args: argparse.Namespace) -> dict[str, Any]:
    """The game options named by the flags, for ``make_game``.

    Each game's description lists the options its flags set; a flag of
    another game's option, given, is an error rather than silently ignored.
    """
    game = describe(args.game)
    opts: dict[str, Any] = {"players": args.players, "first_dealer": args.first_dealer}
    opts.update({k: getattr(args, k) for k in game.cli_options if getattr(args, k) is not None})
    for other in DESCRIPTIONS:
        given = [k for k in other.cli_options if k not in game.cli_options and getattr(args, k) not in (None, False)]
        if given:
            flag = "--" + given[0].replace("_", "-")
            raise ConfigError(f"{flag} is one of the {other.title} options; {game.title} has no such option")
    return opts


def cmd_simulate(args: argparse.Namespace) -> int:
    from agents import make_agent
    from agents.arena import play_games
    from agents.registry import split_specs

    from .games import make_game

    game = make_game(args.game, **game_options(args))
    specs = split_specs(args.agents) if args.agents else ["random"] * game.players
    if len(specs) != game.players:
        raise ConfigError(f"--agents names {len(specs)} agents but the game has {game.players} players")
    if args.games < 1:
        raise ConfigError(f"--games must be at least 1, got {args.games}")
    check_outputs(args, "records")
    agents = [make_agent(s, game, seed=args.seed * 1000 + i) for i, s in enumerate(specs)]
    factory = None
    if args.records:
        from .records import Recorder

        factory = lambda g, state, ids: Recorder(g, state, ids, seed=args.seed, agents=specs)  # noqa: E731
    res = play_games(game, agents, args.games, seed=args.seed, batch_size=args.batch_size, recorder_factory=factory)
    totals = res.totals
    win = totals == totals.max(axis=1, keepdims=True)
    print(f"{args.game}, {game.players} players, {res.games} games, seed {args.seed}")
    print(f"{'seat':<6}{'agent':<24}{'mean total':>12}{'sd':>8}{'wins':>8}")
    for p in range(game.players):
        print(f"{p:<6}{specs[p]:<24}{totals[:, p].mean():>12.2f}{totals[:, p].std():>8.2f}{win[:, p].mean():>8.1%}")
    print(f"{res.decisions} decisions in {res.seconds:.2f} s ({res.decisions / max(res.seconds, 1e-9):,.0f} per s)")
    if args.records:
        from .records import write_jsonl

        write_jsonl(args.records, res.records)
        print(f"wrote {len(res.records)} records to {args.records}")
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    from .records import replay_main

    return replay_main(args.file)


def check_outputs(args: argparse.Namespace, *flags: str) -> None:
    """Refuse output paths that cannot be written before any game is played (``-`` is stdout)."""
    from .paths import check_writable

    for flag in flags:
        path = getattr(args, flag)
        if path is not None and path != "-":
            check_writable(path, f"--{flag}")


def cmd_eval(args: argparse.Namespace) -> int:
    from train.evaluate import cli_eval

    options = game_options(args)
    check_outputs(args, "json", "records", "plot")
    return cli_eval(args, options)


def cmd_bids(args: argparse.Namespace) -> int:
    """``bobshat bids``: the game options default to None here, so ``--suite`` can refuse any given one."""
    from train.bids import cli_bids

    defaults = vars(_game_option_parser().parse_args([]))
    given = [k for k in defaults if getattr(args, k) is not None]
    check_outputs(args, "json", "plot")
    if args.suite:
        if given:
            raise ConfigError(
                f"--suite {args.suite} fixes the game and its options; drop --{given[0].replace('_', '-')}"
            )
        return cli_bids(args, None)
    for k, v in defaults.items():
        if getattr(args, k) is None:
            setattr(args, k, v)
    return cli_bids(args, game_options(args))


def _game_option_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(add_help=False)
    _add_game_options(p)
    return p


def cmd_play(args: argparse.Namespace) -> int:
    if sys.stdin is None or sys.stdin.closed:
        raise ConfigError("standard input is closed: play reads your moves from it (run it in a terminal)")
    from .games import make_game
    from .play import default_opponent, play

    game = make_game(args.game, **game_options(args))
    P = game.players
    if not 0 <= args.seat < P:
        raise ConfigError(f"--seat must be 0-{P - 1} for {P} players, got {args.seat}")
    from agents.registry import split_specs

    specs = split_specs(args.opponents or default_opponent(game))
    if len(specs) == 1:
        specs = specs * (P - 1)
    if len(specs) != P - 1:
        raise ConfigError(f"--opponents names {len(specs)} bots but {P} players need {P - 1} (or one for all)")
    result = play(game, args.seat, specs, seed=args.seed, save=args.save)
    return result.exit_code


def cmd_bench(args: argparse.Namespace) -> int:
    """Throughput of random legal play: our vector and AEC envs and the peers (benchmarks/throughput.py)."""
    from benchmarks.throughput import bench

    batches = [int(b) for b in args.batches.split(",") if b.strip()] if args.batches else None
    log = None if args.quiet else (lambda msg: print(msg, file=sys.stderr, flush=True))
    _rows, table = bench(
        json_path=args.json,
        quick=args.quick,
        batches=batches,
        reps=args.reps,
        seconds=args.seconds,
        peers=not args.no_peers,
        clock=args.clock,
        log=log,
    )
    print(table)
    if args.json:
        print(f"wrote {args.json}")
    return 0


def cmd_train(args: argparse.Namespace) -> int:
    from train.ppo import main as train_main  # imports torch

    return train_main(list(args.train_args))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bobshat", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("simulate", help="bots play each other; prints mean totals per seat")
    _add_game_options(p)
    p.add_argument("--agents", default=None, help="comma-separated agent specs, one per seat (default all random)")
    p.add_argument("--games", type=int, default=100, help="number of games (default 100)")
    p.add_argument("--seed", type=int, default=0, help="seed of the deals and the agents (default 0)")
    p.add_argument("--batch-size", type=int, default=1024, help="games stepped together (default 1024)")
    p.add_argument("--records", default=None, help="write every game to this JSON Lines file")
    p.set_defaults(func=cmd_simulate)

    p = sub.add_parser("replay", help="check every action and score of a records file against the rules")
    p.add_argument("file", help="a JSON Lines file of game records")
    p.set_defaults(func=cmd_replay)
    p = sub.add_parser("eval", help="duplicate tournament: scores with 95%% CIs, ratings, bidding report, plot")
    _add_game_options(p)
    p.add_argument("--agents", default=None, help="comma-separated agent specs, one per seat (default all random)")
    p.add_argument("--deals", type=int, default=1000, help="deals, each played once per seating (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the deals and the agents (default 0)")
    p.add_argument("--no-duplicate", action="store_true", help="give every game its own deal (seatings still cycle)")
    p.add_argument(
        "--seatings", choices=("auto", "all", "rotations"), default="auto", help="seatings per deal (auto: all if P<=4)"
    )
    p.add_argument("--workers", type=int, default=1, help="processes to spread the deals over (same results)")
    p.add_argument("--batch-size", type=int, default=1024, help="games stepped together (default 1024)")
    p.add_argument("--json", default=None, help="write the report as JSON to this file ('-' for stdout)")
    p.add_argument("--records", default=None, help="write every game to this JSON Lines file")
    p.add_argument("--plot", default=None, help="write a PNG of score distributions and bid success")
    p.add_argument("--quiet", action="store_true", help="no progress bar on stderr")
    p.set_defaults(func=cmd_eval)
    p = sub.add_parser("bids", help="bidding benchmark: regret against hindsight and information-set oracles")
    _add_game_options(p)
    p.set_defaults(**{k: None for k in vars(_game_option_parser().parse_args([]))})
    p.add_argument("--bidders", default=None, help="comma-separated agent specs, used for bids and hat choices only")
    p.add_argument(
        "--play", default=None, help="card play of every seat and the other seats' bids (default: the shipped "
        "policy of the table, checkpoints/GAME_Pp.pt, else strong)"
    )  # fmt: skip
    p.add_argument("--suite", default=None, help="a versioned benchmark, v1 (fixes the games, deals, seed, ...)")
    p.add_argument(
        "--deals", type=int, default=None, help="games per bidder, the bidder in seat game %% P (default 100)"
    )
    p.add_argument("--seed", type=int, default=None, help="seed of the deals, agents and worlds (default 0)")
    p.add_argument("--worlds", type=int, default=None, help="K deals of the information-set oracle (default 8)")
    p.add_argument("--playouts", type=int, default=None, help="playouts per world with a sampling play policy (8)")
    p.add_argument("--batch-size", type=int, default=None, help="games per chunk (default 16)")
    p.add_argument("--workers", type=int, default=1, help="processes to spread the chunks over (same results)")
    p.add_argument("--json", default=None, help="write the report as JSON to this file ('-' for stdout)")
    p.add_argument("--plot", default=None, help="write a PNG of regrets and calibration")
    p.add_argument("--quiet", action="store_true", help="no progress bar on stderr")
    p.set_defaults(func=cmd_bids)
    p = sub.add_parser("play", help="play a game in the terminal against bots")
    _add_game_options(p)
    p.add_argument("--seat", type=int, default=0, help="your seat (default 0)")
    p.add_argument(
        "--opponents",
        default=None,
        help="comma-separated agent specs for the other seats in seat order, or one for all "
        "(default the strongest registered bot: strong, simple or random)",
    )
    p.add_argument(
        "--seed", type=int, default=None, help="seed of the deals and the bots (default: a fresh one, printed first)"
    )
    p.add_argument("--save", default=None, metavar="FILE.jsonl", help="append the finished game's record to this file")
    p.set_defaults(func=cmd_play)

    p = sub.add_parser("bench", help="throughput with random legal play (decisions/s, games/s), with peers")
    p.add_argument("--json", default=None, metavar="FILE", help="write one JSON row per measurement to FILE")
    p.add_argument("--quick", action="store_true", help="shorter runs, batches 1, 64, 1024")
    p.add_argument("--batches", default=None, help="comma-separated vector batch sizes (default 1,64,1024,4096,16384)")
    p.add_argument("--reps", type=int, default=None, help="repetitions per measurement; the median is reported")
    p.add_argument("--seconds", type=float, default=None, help="least seconds per repetition (whole games)")
    p.add_argument("--clock", choices=("wall", "cpu"), default="wall", help="wall clock or process CPU time")
    p.add_argument("--no-peers", action="store_true", help="skip OpenSpiel and PettingZoo")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.set_defaults(func=cmd_bench)

    # train.ppo parses these flags itself (one per Args field, see `bobshat train --help`); this parser
    # only passes them through: with prefix "+" none of them looks like an option here.
    p = sub.add_parser("train", help="PPO with self-play (train/ppo.py)", prefix_chars="+", add_help=False)
    p.add_argument("train_args", nargs="*", help="--config configs/NAME.yaml [--key value ...]")
    p.set_defaults(func=cmd_train)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``bobshat`` console script; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except (ConfigError, ValueError, FileNotFoundError) as err:
        print(f"bobshat {args.command}: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
