"""``bobshat bids``: the command line's bidding benchmark, from parsed arguments to the report, JSON and plot."""

from __future__ import annotations

from typing import Any

from agents.registry import split_specs
from bobshat_env.core.config import ConfigError
from bobshat_env.games import make_game
from train.runtime.kit import write_report

from .benchmark import measure, run_suite
from .plots import plot
from .report import format_report, report_json

SUITE_FIXED = ("game", "deals", "seed", "worlds", "playouts", "batch_size")


def cli_bids(args: Any, options: dict[str, Any] | None) -> int:
    """Run ``bobshat bids`` from parsed arguments (``options``: the game options, None with ``--suite``)."""
    bidders = split_specs(args.bidders or "")
    if not bidders:
        raise ConfigError("--bidders names no bidder (comma-separated agent specs, e.g. random,simple,strong)")
    vr = getattr(args, "variance_reduction", True)
    if args.suite:
        fixed = [f for f in SUITE_FIXED if getattr(args, f) is not None]
        if fixed:
            flag = "--" + fixed[0].replace("_", "-")
            raise ConfigError(f"--suite {args.suite} fixes {flag} (and every game option); drop it")
        results = run_suite(
            args.suite, bidders, workers=args.workers, progress=not args.quiet, play=args.play, variance_reduction=vr
        )
    else:
        game = make_game(args.game or "bobs_hat", **(options or {}))
        results = [
            measure(
                game, bidders, 100 if args.deals is None else args.deals, 0 if args.seed is None else args.seed,
                worlds=8 if args.worlds is None else args.worlds, play=args.play, playouts=args.playouts,
                workers=args.workers, batch_size=16 if args.batch_size is None else args.batch_size,
                progress=not args.quiet, variance_reduction=vr,
            )
        ]  # fmt: skip
    doc = report_json(results, args.suite)
    print(format_report(doc))
    if args.suite:
        for r in results:
            if not r.table["play"].startswith("ppo:checkpoints/"):
                print(f"note: {r.game.name} was played with {r.table['play']}, not the shipped checkpoint: "
                      "its numbers do not compare with the README's")  # fmt: skip
    write_report(doc, args.json or None, indent=2, wrote=True)
    if args.plot:
        plot(doc, args.plot)
        print(f"wrote {args.plot}")
    return 0
