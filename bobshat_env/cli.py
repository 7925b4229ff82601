"""The ``bobshat`` command line.

Subcommands: ``simulate`` (bots play each other, with a results table and
optional records) and ``replay`` (check records against the rules). Each
command's ``--help`` lists its flags. Heavy imports happen inside the
command that needs them, so ``bobshat --help`` stays fast.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from .config import ConfigError


def _add_game_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("game options")
    g.add_argument("--game", choices=("bobs_hat", "oh_hell"), default="bobs_hat", help="which game (default bobs_hat)")
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
        "--deal-style", default="long", help="Oh Hell: long, long_inverted, short_high_low, short_high, short_low"
    )
    g.add_argument("--scoring", default="positive", help="Oh Hell: positive, neutral or negative")


def game_options(args: argparse.Namespace) -> dict[str, Any]:
    """The game options named by the flags, for ``make_game``."""
    opts: dict[str, Any] = {"players": args.players, "first_dealer": args.first_dealer}
    if args.game == "bobs_hat":
        opts.update(
            hands=args.hands,
            double_fewest=args.double_fewest,
            no_bid=args.no_bid,
            secret_bidding=args.secret_bidding,
            negative_scoring=args.negative_scoring,
            renege_mode=args.renege_mode,
        )
    else:
        bh_only = [
            f
            for f in ("double_fewest", "no_bid", "secret_bidding", "negative_scoring", "renege_mode")
            if getattr(args, f)
        ]
        if args.hands is not None:
            bh_only.append("hands")
        if bh_only:
            raise ConfigError(f"--{bh_only[0].replace('_', '-')} is a Where's Bob's Hat? option, not an Oh Hell one")
        opts.update(deal_style=args.deal_style, scoring=args.scoring)
    return opts


def cmd_simulate(args: argparse.Namespace) -> int:
    from agents import make_agent
    from agents.arena import play_games

    from .games import make_game

    game = make_game(args.game, **game_options(args))
    specs = [s for s in args.agents.split(",") if s] if args.agents else ["random"] * game.players
    if len(specs) != game.players:
        raise ConfigError(f"--agents names {len(specs)} agents but the game has {game.players} players")
    if args.games < 1:
        raise ConfigError(f"--games must be at least 1, got {args.games}")
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
