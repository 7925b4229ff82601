"""The ``bobshat`` command line.

Subcommands: ``simulate`` (bots play each other, with a results table and
optional records), ``replay`` (check records against the rules), ``eval``
(duplicate tournaments), ``bids`` (the bidding benchmark: regret against
oracles), ``play`` (a human against bots in the terminal), ``serve`` (play,
watch and replay in the browser), ``bench`` (throughput against peers),
``train`` (PPO with self-play), ``exploit`` (a learned best response
against a frozen bot), ``imitate`` (a policy fitted to records),
``expert`` (the policy distilled toward search on it), ``average``
(one policy from the mean of several policies' weights), ``infer``
(how close the search's inferred worlds come to the hidden hands) and
``exact`` (exact exploitability and CFR+ on small variants). Each
command's ``--help`` lists its flags. Heavy imports happen inside the
command that needs them, so ``bobshat --help`` stays fast.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any

from bobshat_env.core.config import ConfigError, variant_options
from bobshat_env.games import DESCRIPTIONS, GAMES, describe

# Upper bounds of the numeric options (every one is checked by the types below, one place for all).
# Memory, not time, sets them: simulate keeps each game's totals (P int64s, 40 bytes with 5 players:
# 400 MB at the bound) and writes records batch by batch; eval keeps the totals of every game of every
# seating for its statistics (up to 24 seatings a deal with 4 players: 2.4M games, a 77 MB array at the
# bound, of which the statistics make a few copies).
MAX_GAMES = 10_000_000
MAX_DEALS = 100_000
MAX_BATCH = 65_536  # games stepped together; the benchmarks top out at 16,384 (no gain past 4,096)
MAX_WORKERS = 64
MAX_WORLDS = 1024  # bids: sampled worlds (and playouts per world) of each decision; 8 by default
MAX_SEED = 2**63 - 1  # game keys are 64-bit: larger seeds would repeat smaller ones' deals
_INT = re.compile(r"[+-]?[0-9][0-9_]*")  # ASCII digits only: int() also reads '١٤' and ' 14 '


def int_range(lo: int | None = None, hi: int | None = None) -> Callable[[str], int]:
    """An argparse ``type`` for an integer in ``[lo, hi]`` (``None``: unbounded on that side).

    argparse names the flag in the error (``argument --batch-size: must be
    at least 1, got 0``), exits with status 2, and nothing has run yet.
    """

    def parse(text: str) -> int:
        if not _INT.fullmatch(text.strip()):
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}")
        value = int(text.strip())
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            want = f"at least {lo:,}" if hi is None else f"at most {hi:,}" if lo is None else f"{lo:,} to {hi:,}"
            raise argparse.ArgumentTypeError(f"must be {want}, got {value:,}")
        return value

    parse.__name__ = "integer"  # argparse's fallback message names the type
    return parse


def float_range(lo: float, hi: float) -> Callable[[str], float]:
    """An argparse ``type`` for a finite number in ``[lo, hi]`` (NaN and inf are refused)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not lo <= value <= hi:  # False for NaN
            raise argparse.ArgumentTypeError(f"must be {lo:g} to {hi:g}, got {text}")
        return value

    parse.__name__ = "number"
    return parse


def int_list(lo: int | None = None, hi: int | None = None) -> Callable[[str], list[int]]:
    """An argparse ``type`` for a comma-separated list of integers in ``[lo, hi]`` (``None``: unbounded)."""
    one = int_range(lo, hi)

    def parse(text: str) -> list[int]:
        values = [one(part) for part in text.split(",") if part.strip()]
        if not values:
            raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}")
        return values

    parse.__name__ = "list"
    return parse


INT = int_range()  # ASCII digits; the range is the game config's to check (it depends on the game)
SEED = int_range(0, MAX_SEED)
BATCH = int_range(1, MAX_BATCH)
# the policy commands' flags (train.runtime.kit.add_flags) are read by these; their options check the ranges
KIT_TYPES = {"int": INT, "float": float, "seq int": int_list()}


def _add_game_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("game options")
    g.add_argument("--game", choices=GAMES, default=GAMES[0], help=f"which game (default {GAMES[0]})")
    # ranges depend on the game: its config checks them (players 3-5 or 3-7, hands that fit the deck, ...)
    g.add_argument("--players", type=INT, default=None, help="number of players (default 4, or the variant's)")
    g.add_argument("--first-dealer", type=INT, default=0, help="first dealer's seat, -1 to draw it (default 0)")
    g.add_argument(
        "--hands", type=INT, default=None,
        help="number of hands (Bob's Hat default 12/10/8; Oh Hell: the first hands of the deal style, default all)",
    )  # fmt: skip
    g.add_argument(
        "--variant", choices=sorted({v for d in DESCRIPTIONS for v in d.config_cls.VARIANTS}), default=None,
        help="a named small variant of the game (docs/rules.md); the other game flags given override its options",
    )  # fmt: skip
    g.add_argument("--suits", type=INT, default=None, help="small variant: suits in the deck (default all)")
    g.add_argument("--ranks", type=INT, default=None, help="small variant: ranks per suit (default all)")
    g.add_argument("--hand-size-base", type=INT, default=None, help="Bob's Hat: hand k deals BASE + k (default 4)")
    g.add_argument("--start-size", type=INT, default=None, help="Oh Hell: cards in the largest hand (default 10/8/7)")
    for flag, text in (
        ("double-fewest", "a player may bid fewest twice, scoring double"),
        ("no-bid", "once per game a player may bid nothing and score 0"),
        ("secret-bidding", "bids stay hidden until everybody has bid"),
        ("negative-scoring", "a missed most bid scores -5 - count"),
        ("renege-mode", "a card that breaks follow suit is a renege (-15, hand dealt again), not an error"),
    ):
        g.add_argument(f"--{flag}", action="store_true", help=f"Bob's Hat option: {text}")
    g.add_argument("--deal-style", help="Oh Hell: long (default), long_inverted, short_high_low, short_high, short_low")
    g.add_argument("--scoring", help="Oh Hell: positive (default), neutral or negative")


class _Unset:
    """Stands for the values of a game flag left out: None, or a switch's False (never a number 0)."""

    def __contains__(self, value: Any) -> bool:
        return value is None or value is False


_NOT_GIVEN = _Unset()


def game_options(args: argparse.Namespace) -> dict[str, Any]:
    """The game options named by the flags, for ``make_game``.

    Each game's description lists the options its flags set; a flag of
    another game's option, given, is an error rather than silently ignored.
    """
    game = describe(args.game)
    opts: dict[str, Any] = {"first_dealer": args.first_dealer}
    if args.players is not None:
        opts["players"] = args.players
    opts.update({k: getattr(args, k) for k in game.cli_options if getattr(args, k) is not None})
    for other in DESCRIPTIONS:
        # a switch set or a value given (by identity: a number 0 equals False)
        given = [k for k in other.cli_options if k not in game.cli_options and getattr(args, k) not in _NOT_GIVEN]
        if given:
            flag = "--" + given[0].replace("_", "-")
            raise ConfigError(f"{flag} is one of the {other.title} options; {game.title} has no such option")
    if getattr(args, "variant", None):  # the variant's options, under the flags given
        options = variant_options(game.config_cls, args.variant, **opts)
        try:
            game.config_cls(**options)
        except ConfigError as err:  # e.g. more players than the variant's deck holds: name the flags that chose it
            given = f" with --players {args.players}" if args.players is not None else ""
            raise ConfigError(f"--variant {args.variant}{given}: {err}") from None
        return options
    return {"players": 4, **opts}


def cmd_simulate(args: argparse.Namespace) -> int:
    import numpy as np

    from agents import make_agent
    from agents.arena import play_games
    from agents.registry import count_error, spec_checkpoints, split_specs
    from bobshat_env.games import make_game

    game = make_game(args.game, **game_options(args))
    specs = split_specs(args.agents) if args.agents else ["random"] * game.players
    if len(specs) != game.players:
        raise ConfigError(count_error("--agents", len(specs), game.players))
    check_outputs(args, "records", inputs=spec_checkpoints("--agents", args.agents))
    agents = [make_agent(s, game, seed=args.seed * 1000 + i) for i, s in enumerate(specs)]
    factory = None
    if args.records:
        from bobshat_env.records import Recorder

        factory = lambda g, state, ids: Recorder(g, state, ids, seed=args.seed, agents=specs)  # noqa: E731
    # One batch at a time, its records streamed out before the next (a record is ~50 KB in memory: a
    # million games' worth would not fit); the file appears whole at the end or not at all. Game i's deal
    # is key (seed, i) whatever the batches: the same games.
    decisions, seconds, parts = 0, 0.0, []
    with contextlib.ExitStack() as stack:
        out = None
        if args.records:
            from bobshat_env.records import JsonlWriter

            out = stack.enter_context(JsonlWriter(args.records))
        for start in range(0, args.games, args.batch_size):
            n = min(args.batch_size, args.games - start)
            res = play_games(game, agents, n, seed=args.seed, batch_size=n, recorder_factory=factory, game_offset=start)
            parts.append(res.totals)
            decisions, seconds = decisions + res.decisions, seconds + res.seconds
            if out is not None:
                out.write(res.records)
        n_written = out.count if out is not None else 0
    totals = np.concatenate(parts)
    win = totals == totals.max(axis=1, keepdims=True)
    print(f"{args.game}, {game.players} players, {totals.shape[0]} games, seed {args.seed}")
    print(f"{'seat':<6}{'agent':<24}{'mean total':>12}{'sd':>8}{'wins':>8}")
    for p in range(game.players):
        print(f"{p:<6}{specs[p]:<24}{totals[:, p].mean():>12.2f}{totals[:, p].std():>8.2f}{win[:, p].mean():>8.1%}")
    print(f"{decisions} decisions in {seconds:.2f} s ({decisions / max(seconds, 1e-9):,.0f} per s)")
    if args.records:
        print(f"wrote {n_written} records to {args.records}")
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    from bobshat_env.records import replay_main

    return replay_main(args.file)


# The flags that name an output file; ``-`` means stdout only for the JSON reports.
OUTPUT_FLAGS = ("records", "json", "plot", "save", "out")
STDOUT_FLAGS = ("json",)
RECORD_FLAGS = ("records", "save")  # outputs that get game records: only a new or empty file, or records


def check_outputs(
    args: argparse.Namespace,
    *flags: str,
    outputs: Sequence[tuple[str, Any]] = (),
    inputs: Sequence[tuple[str, Any]] = (),
) -> None:
    """Refuse output paths that cannot be written before any game is played.

    First, no output is the same file as an input or as another output
    (:func:`bobshat_env.paths.check_distinct`): ``outputs`` are the
    command's other outputs (``--out`` and its sidecar), listed before the
    ``flags``, and ``inputs`` what it reads (``(name, path)`` pairs: see
    :func:`~bobshat_env.paths.checkpoint_files`,
    :func:`agents.registry.spec_checkpoints`). Then each flag's file:
    ``-`` is stdout for ``--json``; anywhere else it is refused (it would be
    a file named ``-``). A ``--plot`` name must end with an image extension.
    Records (``--records``, ``--save``) go only to a new or empty file or
    one of records (:func:`bobshat_env.records.io.check_records_output`).
    """
    from bobshat_env.paths import check_distinct, check_plot_path, check_writable

    check_distinct([*outputs, *((f"--{flag}", getattr(args, flag)) for flag in flags)], inputs)
    for flag in flags:
        path = getattr(args, flag)
        if path is None:
            continue
        if path == "-":
            if flag in STDOUT_FLAGS:
                continue
            raise ConfigError(f"--{flag}: '-' (standard output) is not supported here; name a file")
        check_writable(path, f"--{flag}")
        if flag == "plot":
            check_plot_path(path, "--plot")
        if flag in RECORD_FLAGS:
            from bobshat_env.records.io import check_records_output

            check_records_output(path, f"--{flag}")


def _output_flag(args: argparse.Namespace, path: str) -> str | None:
    """The flag (``--records``) whose value is ``path``, if one is; for errors met while writing it."""
    import os

    for flag in OUTPUT_FLAGS:
        value = getattr(args, flag, None)
        if isinstance(value, str) and value and os.path.abspath(value) == os.path.abspath(path):
            return f"--{flag}"
    return None


def cmd_eval(args: argparse.Namespace) -> int:
    from agents.registry import spec_checkpoints
    from agents.shipped import shipped_checkpoint_files
    from bobshat_env.paths import checkpoint_files
    from train.evaluate.command import cli_eval

    options = game_options(args)
    inputs = spec_checkpoints("--agents", args.agents) + checkpoint_files("--vr-value", args.vr_value)
    inputs += spec_checkpoints("--vr-proxy", args.vr_proxy)
    if args.variance_reduction and not args.vr_value:
        inputs += shipped_checkpoint_files()  # the table's value function
    check_outputs(args, "json", "records", "plot", inputs=inputs)
    return cli_eval(args, options)


def cmd_bids(args: argparse.Namespace) -> int:
    """``bobshat bids``: the game options default to None here, so ``--suite`` can refuse any given one."""
    from agents.registry import spec_checkpoints
    from agents.shipped import shipped_checkpoint_files
    from train.bids.command import cli_bids

    defaults = vars(_game_option_parser().parse_args([]))
    given = [k for k in defaults if getattr(args, k) is not None]
    inputs = spec_checkpoints("--bidders", args.bidders) + spec_checkpoints("--play", args.play)
    check_outputs(args, "json", "plot", inputs=inputs + shipped_checkpoint_files())  # the default play policy
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
    from bobshat_env.games import make_game

    from .terminal import default_opponent, play

    game = make_game(args.game, **game_options(args))
    P = game.players
    if not 0 <= args.seat < P:
        raise ConfigError(f"--seat must be 0-{P - 1} for {P} players, got {args.seat}")
    from agents.registry import spec_checkpoints, split_specs

    specs = split_specs(args.opponents or default_opponent(game))
    if len(specs) == 1:
        specs = specs * (P - 1)
    if len(specs) != P - 1:
        raise ConfigError(f"--opponents names {len(specs)} bots but {P} players need {P - 1} (or one for all)")
    check_outputs(args, "save", inputs=spec_checkpoints("--opponents", args.opponents))  # play checks it again
    result = play(game, args.seat, specs, seed=args.seed, save=args.save)
    return result.exit_code


def _host(text: str) -> str:
    """An argparse ``type`` for ``--host``: an address or a name, not empty (which would listen everywhere)."""
    if not text.strip() or any(c.isspace() for c in text):
        raise argparse.ArgumentTypeError(f"expected an address such as 127.0.0.1 or 0.0.0.0, got {text!r}")
    return text


def cmd_serve(args: argparse.Namespace) -> int:
    """Play, watch and replay in the browser (bobshat/web)."""
    import os

    from agents.registry import spec_checkpoints, split_specs
    from bobshat_env.paths import check_distinct

    from .web import serve
    from .web.session import RECORDS_FILE

    games = os.path.join(args.records_dir, RECORDS_FILE)
    check_distinct([(f"--records-dir's {RECORDS_FILE}", games)], spec_checkpoints("--agents", args.agents))

    return serve(
        host=args.host,
        port=args.port,
        records_dir=args.records_dir,
        agents=split_specs(args.agents) if args.agents else (),
        idle_timeout=args.idle_timeout,
        max_games=args.max_games,
        max_upload=int(args.max_upload_mb * 1024 * 1024),
    )


def cmd_bench(args: argparse.Namespace) -> int:
    """Throughput of random legal play: our vector and AEC envs and the peers (benchmarks/throughput.py);
    with ``--train`` the trainer's rate and time split (benchmarks/train_speed.py)."""
    check_outputs(args, "json")
    if args.train:
        from benchmarks.train_speed import main as train_speed

        extra = [f"--repo={r}" for r in args.repo] + [f"--reps={args.reps or 3}", f"--decisions={args.decisions}"]
        return train_speed(extra + ([f"--json={args.json}"] if args.json else []))
    from benchmarks.throughput import bench

    to_stdout = args.json == "-"  # the JSON alone on stdout (for pipes), the table on stderr
    log = None if args.quiet else (lambda msg: print(msg, file=sys.stderr, flush=True))
    rows, table = bench(
        json_path=None if to_stdout else args.json,
        quick=args.quick,
        batches=args.batches,
        reps=args.reps,
        seconds=args.seconds,
        peers=not args.no_peers,
        clock=args.clock,
        log=log,
    )
    if to_stdout:
        from benchmarks.throughput import rows_json

        print(table, file=sys.stderr)
        print(rows_json(rows), end="")
    else:
        print(table)
        if args.json:
            print(f"wrote {args.json}")
    return 0


def cmd_train(args: argparse.Namespace) -> int:
    from train.ppo.run import main as train_main  # imports torch

    return train_main(list(args.train_args))


def cmd_imitate(args: argparse.Namespace) -> int:
    """A policy fitted to the decisions in records files (train/imitate.py)."""
    from bobshat_env.paths import checkpoint_files
    from train.imitate import cli_imitate  # imports torch

    inputs = [("--records", path) for path in args.records] + checkpoint_files("--init-from", args.init_from)
    check_outputs(args, "json", outputs=checkpoint_files("--out", args.out), inputs=inputs)
    return cli_imitate(args, game_options(args))


def cmd_infer(args: argparse.Namespace) -> int:
    """Inference quality measured, or the card-location network trained (train/inference/)."""
    from agents.registry import spec_checkpoints
    from bobshat_env.paths import checkpoint_files
    from train.inference.command import cli_infer  # imports torch

    inputs = spec_checkpoints("--play", args.play) + checkpoint_files("--policy", args.policy)
    inputs += checkpoint_files("--cards", args.cards)
    check_outputs(args, "json", outputs=checkpoint_files("--out", args.out), inputs=inputs)
    if getattr(args, "variant", None) and args.policy is None:  # the default is a shipped full-game policy
        raise ConfigError(f"--variant {args.variant}: no shipped policy plays it; give --policy a checkpoint of it")
    return cli_infer(args, game_options(args))


def cmd_expert(args: argparse.Namespace) -> int:
    """Expert iteration: the policy distilled toward search on it, round after round (train/expert.py)."""
    from bobshat_env.paths import checkpoint_files
    from train.expert import cli_expert, options_from  # imports torch
    from train.options import ExpertError
    from train.runtime.kit import read_preset

    opts = options_from(read_preset(args.config, ExpertError), vars(args))
    args.game = args.game or opts.extra.get("game", GAMES[0])
    args.players = args.players if args.players is not None else opts.extra.get("players", 4)
    options = {**dict(opts.extra.get("game_options") or {}), **game_options(args)}
    inputs = checkpoint_files("--init-from", opts.init_from) + [("--config", args.config)]
    check_outputs(args, "json", outputs=checkpoint_files("--out", opts.out), inputs=inputs)
    return cli_expert(args, options, opts)


def cmd_average(args: argparse.Namespace) -> int:
    """One policy whose weights are the mean of several policies' (train/average.py)."""
    from bobshat_env.paths import checkpoint_files
    from train.average import cli_average  # imports torch

    inputs = [pair for path in args.checkpoints for pair in checkpoint_files("CKPT", path)]
    check_outputs(args, outputs=checkpoint_files("--out", args.out), inputs=inputs)
    return cli_average(args)


def cmd_exploit(args: argparse.Namespace) -> int:
    """A PPO exploiter of a frozen target (train/exploit.py); the preset may name the game.

    Its options are made (and their ranges checked) before train.exploit imports torch."""
    from train import options

    made = options.ExploitOptions(**{f: getattr(args, f) for f in options.ExploitOptions.__dataclass_fields__})
    from train.exploit import cli_exploit, preset_game  # imports torch

    given = args.players
    args.game, args.players = preset_game(args.config, args.game, args.players)
    if getattr(args, "variant", None) and given is None:  # a variant's own player count, not the default 4
        args.players = variant_options(describe(args.game).config_cls, args.variant).get("players", args.players)
    check_outputs(args, "json")
    return cli_exploit(args, made, {"game": args.game, **game_options(args)})


def cmd_exact(args: argparse.Namespace) -> int:
    """Exact exploitability of bots and CFR+ on a small variant (train/exact.py)."""
    from agents.registry import spec_checkpoints
    from train.exact import cli_exact  # imports OpenSpiel

    check_outputs(args, "json", inputs=spec_checkpoints("--agents", args.agents))
    return cli_exact(args, game_options(args))


_AGENT_LIST = "{agent specs}"  # in a help text: the registered agents, filled in when help is shown


class _HelpFormatter(argparse.HelpFormatter):
    """Fills in the agent list from the registry when (only when) a command's help is printed.

    The registry imports the agents' package (about a second); ``bobshat
    --help`` and every command that is not asking for help stay without it.
    """

    def _expand_help(self, action: argparse.Action) -> str:
        text = super()._expand_help(action)
        if _AGENT_LIST in text:
            from agents.registry import describe

            text = text.replace(_AGENT_LIST, "; ".join(describe()))
        return text


AGENTS_HELP = f"comma-separated agent specs, one per seat (default all random). Agents: {_AGENT_LIST}"


def _simulate_parser(sub: Any) -> None:
    """The flags of ``bobshat simulate``."""
    p = sub.add_parser("simulate", help="bots play each other; prints mean totals per seat")
    _add_game_options(p)
    p.add_argument("--agents", default=None, help=AGENTS_HELP)
    p.add_argument(
        "--games",
        type=int_range(1, MAX_GAMES),
        default=100,
        help=f"number of games (default 100, at most {MAX_GAMES:,})",
    )
    p.add_argument("--seed", type=SEED, default=0, help="seed of the deals and the agents (default 0)")
    p.add_argument("--batch-size", type=BATCH, default=1024, help="games stepped together (default 1024)")
    p.add_argument("--records", default=None, help="write every game to this JSON Lines file")
    p.set_defaults(func=cmd_simulate)


def _replay_parser(sub: Any) -> None:
    """The flags of ``bobshat replay``."""
    p = sub.add_parser("replay", help="check every action and score of a records file against the rules")
    p.add_argument("file", help="a JSON Lines file of game records")
    p.set_defaults(func=cmd_replay)


def _eval_parser(sub: Any) -> None:
    """The flags of ``bobshat eval``."""
    p = sub.add_parser("eval", help="duplicate tournament: scores with 95%% CIs, ratings, bidding report, plot")
    _add_game_options(p)
    p.add_argument("--agents", default=None, help=AGENTS_HELP)
    p.add_argument(
        "--layout",
        default=None,
        help="head-to-head of the two --agents: NvM seats (2v2, 1v3); the report's pairwise line is their difference",
    )
    p.add_argument(
        "--deals",
        type=int_range(1, MAX_DEALS),
        default=1000,
        help=f"deals, each played once per seating (default 1000, at most {MAX_DEALS:,})",
    )
    p.add_argument("--seed", type=SEED, default=0, help="seed of the deals and the agents (default 0)")
    p.add_argument("--no-duplicate", action="store_true", help="give every game its own deal (seatings still cycle)")
    p.add_argument(
        "--seatings", choices=("auto", "all", "rotations"), default="auto", help="seatings per deal (auto: all if P<=4)"
    )
    p.add_argument(
        "--workers", type=int_range(1, MAX_WORKERS), default=1, help="processes to spread the deals over (same results)"
    )
    p.add_argument(
        "--ray-address",
        default=None,
        metavar="ADDR",
        help="spread the deals over Ray tasks instead (same results): local, auto or HOST:PORT; needs .[ray]",
    )
    p.add_argument("--batch-size", type=BATCH, default=1024, help="games stepped together (default 1024)")
    p.add_argument(
        "--json",
        default=None,
        help="write the report as JSON to this file ('-': stdout, the table then goes to stderr)",
    )
    p.add_argument("--records", default=None, help="write every game to this JSON Lines file")
    p.add_argument("--plot", default=None, help="write a PNG of score distributions and bid success")
    p.add_argument("--quiet", action="store_true", help="no progress bar on stderr")
    p.add_argument(
        "--variance-reduction",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="also report unbiased variance-reduced estimates (control variates from a policy's value head; "
        "docs/variance_reduction.md); default off",
    )
    p.add_argument(
        "--vr-value", default=None, metavar="PATH", help="value function checkpoint (default: the table's shipped one)"
    )
    # the --vr-* defaults are None, so that one given without --variance-reduction is refused (cli_eval)
    p.add_argument("--vr-fresh", type=int_range(1, 1024), default=None, help="fresh deals per chance event (default 8)")
    p.add_argument(
        "--vr-decisions",
        choices=("bids", "all", "none"),
        default=None,
        help="decisions of agents with known probabilities that get a control variate: bids (and hat choices), "
        "all (card play too, slower), none (default bids)",
    )
    p.add_argument(
        "--vr-proxy",
        default=None,
        metavar="SPECS",
        help="multi-fidelity control variate: every deal also played by cheap proxies of the agents (auto: pimc "
        "and search with 1/8 of their worlds, used when an agent has one; none; or one spec per distinct agent)",
    )
    p.add_argument(
        "--vr-proxy-fresh", type=int_range(1, 1024), default=None, help="the proxies' fresh deals per deal (default 4)"
    )
    p.set_defaults(func=cmd_eval)


def _bids_parser(sub: Any) -> None:
    """The flags of ``bobshat bids``."""
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
        "--deals",
        type=int_range(1, MAX_DEALS),
        default=None,
        help=f"games per bidder, the bidder in seat game %% P (default 100, at most {MAX_DEALS:,})",
    )
    p.add_argument("--seed", type=SEED, default=None, help="seed of the deals, agents and worlds (default 0)")
    p.add_argument(
        "--worlds",
        type=int_range(1, MAX_WORLDS),
        default=None,
        help=f"K deals of the information-set oracle (default 8, at most {MAX_WORLDS:,})",
    )
    p.add_argument(
        "--playouts",
        type=int_range(1, MAX_WORLDS),
        default=None,
        help=f"playouts per world with a sampling play policy (default 8, at most {MAX_WORLDS:,})",
    )
    p.add_argument("--batch-size", type=BATCH, default=None, help="games per chunk (default 16)")
    p.add_argument(
        "--workers", type=int_range(1, MAX_WORKERS), default=1, help="processes for the chunks (same numbers)"
    )
    p.add_argument("--json", default=None, help="write the report as JSON to this file ('-' for stdout)")
    p.add_argument("--plot", default=None, help="write a PNG of regrets and calibration")
    p.add_argument("--quiet", action="store_true", help="no progress bar on stderr")
    p.add_argument(
        "--variance-reduction",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also report variance-reduced scores and regrets of bidders with known probabilities "
        "(docs/variance_reduction.md; default on)",
    )
    p.set_defaults(func=cmd_bids)


def _play_parser(sub: Any) -> None:
    """The flags of ``bobshat play``."""
    p = sub.add_parser("play", help="play a game in the terminal against bots")
    _add_game_options(p)
    p.add_argument("--seat", type=INT, default=0, help="your seat (default 0)")
    p.add_argument(
        "--opponents",
        default=None,
        help="comma-separated agent specs for the other seats in seat order, or one for all "
        f"(default the strongest registered bot: strong, simple or random). Agents: {_AGENT_LIST}",
    )
    p.add_argument(
        "--seed", type=SEED, default=None, help="seed of the deals and the bots (default: a fresh one, printed first)"
    )
    p.add_argument("--save", default=None, metavar="FILE.jsonl", help="append the finished game's record to this file")
    p.set_defaults(func=cmd_play)


def _serve_parser(sub: Any) -> None:
    """The flags of ``bobshat serve``."""
    p = sub.add_parser("serve", help="play, watch and replay in the browser (needs the web extra)")
    p.add_argument(
        "--host", type=_host, default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)"
    )
    p.add_argument("--port", type=int_range(0, 65535), default=8000, help="port (default 8000)")
    p.add_argument(
        "--records-dir",
        default="records",
        help="folder where finished games are saved and replays listed (default records)",
    )
    p.add_argument(
        "--agents",
        default=None,
        help="extra agent specs to offer, e.g. ppo:runs/NAME/policy.pt (checked at start; a checkpoint is offered "
        "at its own game and player count)",
    )
    p.add_argument(
        "--idle-timeout",
        type=float_range(1.0, 7 * 86400.0),
        default=1800.0,
        help="seconds before an abandoned game is dropped (1 to 604800, default 1800)",
    )
    p.add_argument(
        "--max-games",
        type=int_range(1, 10_000),
        default=100,
        help="games in play at once (default 100); when full, a new game replaces the one idle longest that "
        "never got a move",
    )
    p.add_argument(
        "--max-upload-mb",
        type=float_range(0.001, 1024.0),
        default=2.0,
        help="largest records file to upload, in MB (0.001 to 1024, default 2)",
    )
    p.set_defaults(func=cmd_serve)


def _bench_parser(sub: Any) -> None:
    """The flags of ``bobshat bench``."""
    p = sub.add_parser("bench", help="throughput with random legal play (decisions/s, games/s), with peers")
    p.add_argument(
        "--json", default=None, metavar="FILE", help="write one JSON row per measurement to FILE ('-': stdout)"
    )
    p.add_argument("--quick", action="store_true", help="shorter runs, batches 1, 64, 1024")
    p.add_argument(
        "--batches",
        type=int_list(1, MAX_BATCH),
        default=None,
        help="comma-separated vector batch sizes (default 1,64,1024,4096,16384)",
    )
    p.add_argument(
        "--reps", type=int_range(1, 1000), default=None, help="repetitions per measurement; the median is reported"
    )
    p.add_argument(
        "--seconds", type=float_range(0.0, 3600.0), default=None, help="least seconds per repetition (whole games)"
    )
    p.add_argument("--clock", choices=("wall", "cpu"), default="wall", help="wall clock or process CPU time")
    p.add_argument("--no-peers", action="store_true", help="skip OpenSpiel and PettingZoo")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.add_argument("--train", action="store_true", help="the trainer instead: the default preset's decisions/s, split")
    p.add_argument("--repo", action="append", default=[], metavar="DIR", help="--train: also this checkout (old code)")
    p.add_argument("--decisions", type=int_range(1, 10**9), default=1_500_000, help="--train: decisions per run")
    p.set_defaults(func=cmd_bench)


def _train_parser(sub: Any) -> None:
    """``bobshat train``: its flags go through to train.ppo, which parses them."""
    # train.ppo parses these flags itself (one per Args field, see `bobshat train --help`); this parser
    # only passes them through: with prefix "+" none of them looks like an option here.
    p = sub.add_parser("train", help="PPO with self-play (train/ppo/)", prefix_chars="+", add_help=False)
    p.add_argument("train_args", nargs="*", help="--config configs/NAME.yaml [--key value ...]")
    p.set_defaults(func=cmd_train)


def _exploit_parser(sub: Any) -> None:
    """The flags of ``bobshat exploit``: the game's, one per option of train.options.ExploitOptions, the outputs."""
    from train.options import ExploitOptions
    from train.runtime.kit import add_flags

    p = sub.add_parser("exploit", help="how exploitable is a bot: train a best response against it (train/exploit.py)")
    _add_game_options(p)
    p.set_defaults(game=None, players=None)  # else the preset's (--config), else bobs_hat with 4 players
    flags = add_flags(p, ExploitOptions, KIT_TYPES)
    flags["target"].help = f"{flags['target'].help}. Agents: {_AGENT_LIST}"
    p.add_argument("--json", default=None, help="write the report as JSON to this file ('-' for stdout)")
    p.add_argument("--quiet", action="store_true", help="no progress bar on stderr")
    p.set_defaults(func=cmd_exploit)


def _imitate_parser(sub: Any) -> None:
    """``bobshat imitate``: its flags (the game's, the records, the output, the training's)."""
    from train.options import ImitateOptions
    from train.runtime.kit import add_flags  # the standard library and paths only: --help stays quick

    p = sub.add_parser("imitate", help="fit a policy to the decisions in records files (train/imitate.py)")
    _add_game_options(p)
    add_flags(p, ImitateOptions, KIT_TYPES)
    p.add_argument("--json", default=None, help="write the report as JSON to this file ('-': stdout)")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.set_defaults(func=cmd_imitate)


def _infer_parser(sub: Any) -> None:
    """``bobshat infer``: inference quality of the search's world samplers, or ``--train`` the learned one."""
    p = sub.add_parser("infer", help="how close inferred worlds come to the hidden hands; --train: the card network")
    _add_game_options(p)
    p.add_argument("--policy", default=None, metavar="CKPT", help="the policy (default the table's shipped one)")
    p.add_argument("--play", default=None, metavar="SPEC", help="the agent at every seat (default ppo:POLICY)")
    p.add_argument("--methods", default=None, help="inference methods to score: none,policy,learned (none,policy)")
    p.add_argument("--cards", default=None, metavar="PATH", help="card-location network (default POLICY.cards)")
    p.add_argument("--games", type=int_range(1, 100_000), default=None, help="games played (8; --train: 1024)")
    p.add_argument("--seed", type=SEED, default=0, help="seed of the deals, the worlds, the fit (0)")
    p.add_argument("--worlds", type=int_range(1, 1024), default=32, help="worlds drawn per decision (32)")
    p.add_argument("--oversample", type=int_range(1, 64), default=4, help="worlds weighed per world kept (4)")
    p.add_argument("--temper", type=float_range(0.01, 1.0), default=1.0, help="power of the worlds' weights (1)")
    p.add_argument("--seats", default=None, help="seats whose decisions are scored: all, or e.g. 0,2 (all)")
    p.add_argument("--max-hands", type=int_range(1, 1000), default=None, help="stop each game after N hands")
    p.add_argument("--train", action="store_true", help="train the card-location network instead (writes --out)")
    p.add_argument("--out", default=None, metavar="PATH", help="--train: the network's file (default POLICY.cards)")
    p.add_argument("--epochs", type=int_range(1, 1000), default=4, help="--train: passes over the examples (4)")
    p.add_argument("--hidden", type=int_list(1, 4096), default=[128, 128], help="--train: layer sizes (128,128)")
    p.add_argument("--holdout", type=float_range(0.0, 0.9), default=0.1, help="--train: share of games held out")
    p.add_argument("--keep", type=float_range(0.01, 1.0), default=0.25, help="--train: share of decisions kept")
    p.add_argument("--json", default=None, help="write the report as JSON to this file ('-': stdout)")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.set_defaults(func=cmd_infer)


def _expert_parser(sub: Any) -> None:
    """``bobshat expert``: its flags (the game's, a preset, one per option of train.options.ExpertOptions)."""
    from train.options import ExpertOptions
    from train.runtime.kit import add_flags

    p = sub.add_parser("expert", help="expert iteration: distil search on the policy into it (train/expert.py)")
    _add_game_options(p)
    p.set_defaults(game=None, players=None)  # else the preset's (--config), else bobs_hat with 4 players
    p.add_argument("--config", default=None, help="a preset of these options (configs/expert/oh_hell_4p.yaml)")
    add_flags(p, ExpertOptions, KIT_TYPES, preset=True)
    p.add_argument("--json", default=None, help="write the report as JSON to this file ('-': stdout)")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.set_defaults(func=cmd_expert)


def _average_parser(sub: Any) -> None:
    """``bobshat average``: the checkpoints, the output, the weights."""
    p = sub.add_parser("average", help="one policy from the mean of several policies' weights (train/average.py)")
    p.add_argument("checkpoints", nargs="+", metavar="CKPT", help="policy checkpoints of one table and network")
    p.add_argument("--out", required=True, metavar="PATH", help="the policy checkpoint to write (ppo:PATH plays it)")
    p.add_argument("--weights", default=None, metavar="W,W,...", help="one positive weight per checkpoint (equal)")
    p.set_defaults(func=cmd_average)


def _exact_parser(sub: Any) -> None:
    """``bobshat exact``: the game's flags, the agents to measure, CFR+'s budget, the output."""
    p = sub.add_parser("exact", help="exact exploitability of bots and CFR+ on a small variant (train/exact.py)")
    _add_game_options(p)
    p.add_argument("--option", action="append", metavar="KEY=VALUE", help="another game option (repeatable)")
    p.add_argument("--hand", type=int_range(1), default=None, help="play this hand of the game alone (default all)")
    p.add_argument(
        "--agents", default="random,simple,strong", help=f"agent specs to measure, each at every seat. {_AGENT_LIST}"
    )
    p.add_argument("--cfr-iterations", type=int_range(0, 10**9), default=100, help="CFR+ iterations (100; 0: none)")
    p.add_argument(
        "--time-limit", type=float_range(0.0, 1e9), default=0.0, help="seconds of CFR+ iterations at most (0: none)"
    )
    p.add_argument(
        "--max-histories",
        type=int_range(1),
        default=200_000,
        help="refuse a game with more terminal histories than this, from a bound on its tree (200000)",
    )
    p.add_argument("--seed", type=SEED, default=0, help="seed of the agents; a sampling agent's per state (0)")
    p.add_argument("--json", default=None, help="write the report as JSON to this file ('-': stdout)")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.set_defaults(func=cmd_exact)


# each adds one subcommand's parser to the subparsers it is given, in the order of `bobshat --help`
SUBCOMMANDS: tuple[Callable[[Any], None], ...] = (
    _simulate_parser,
    _replay_parser,
    _eval_parser,
    _bids_parser,
    _play_parser,
    _serve_parser,
    _bench_parser,
    _train_parser,
    _exploit_parser,
    _imitate_parser,
    _expert_parser,
    _average_parser,
    _infer_parser,
    _exact_parser,
)


def build_parser() -> argparse.ArgumentParser:
    """The ``bobshat`` parser: one subparser per command, each built by its own function (``SUBCOMMANDS``)."""
    parser = argparse.ArgumentParser(prog="bobshat", description=__doc__.split("\n\n")[0].replace("``", ""))
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser = functools.partial(sub.add_parser, formatter_class=_HelpFormatter)  # type: ignore[method-assign]
    for add in SUBCOMMANDS:
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``bobshat`` console script; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    from train.runtime.pool import caused_by_interrupt, sigint_after_compiles  # stdlib only: --help stays fast

    try:
        with sigint_after_compiles():  # a Ctrl-C inside a numba compile printed a traceback (train/runtime/pool.py)
            return int(args.func(args))
    except Exception as err:
        if caused_by_interrupt(err):  # a Ctrl-C that a library turned into its own error
            print(f"\nbobshat {args.command}: interrupted", file=sys.stderr)
            return 130
        if not isinstance(err, (ConfigError, ValueError, FileNotFoundError)):
            raise
        # a write that failed part-way (a full disk) names its flag: "--records: cannot write x: No space ..."
        flag = _output_flag(args, err.path) if isinstance(getattr(err, "path", None), str) else None
        head = f"{flag}: " if flag and not str(err).startswith(flag) else ""
        print(f"bobshat {args.command}: error: {head}{err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C: a message and the shell's status for SIGINT, not a traceback
        print(f"\nbobshat {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
