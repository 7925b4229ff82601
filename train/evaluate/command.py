"""``bobshat eval``: the command line's tournament, from parsed arguments to the report, JSON and plot."""

from __future__ import annotations

import sys
from typing import Any

from agents.registry import count_error, split_specs
from bobshat_env.games import make_game
from train.runtime.kit import write_report

from .plots import plot
from .report import format_report
from .tournament import evaluate

VR_FLAGS = ("vr_value", "vr_fresh", "vr_decisions", "vr_proxy", "vr_proxy_fresh")  # None unless given


def layout_specs(agents: list[str], layout: str, players: int) -> list[str]:
    """The seats of a head-to-head between two entrants: ``["A", "B"]`` and ``"2v2"`` -> ``["A", "A", "B", "B"]``.

    ``layout`` is ``NvM`` with ``N + M`` the number of players: the first
    agent sits in N seats, the second in M (every seating of them is played,
    so each holds every seat's cards). The pairwise entry of the report is
    then the paired difference of the two, with its 95% CI.
    """
    from bobshat_env.core.config import ConfigError

    n, v, m = layout.lower().partition("v")
    if not (v and n.isdigit() and m.isdigit()) or int(n) < 1 or int(m) < 1:
        raise ConfigError(f"--layout must look like 2v2 or 1v3 (seats of the first and second agent), got {layout!r}")
    if int(n) + int(m) != players:
        raise ConfigError(f"--layout {layout} seats {int(n) + int(m)} players but the game has {players}")
    if len(agents) != 2:
        raise ConfigError(f"--layout {layout} needs exactly two agents in --agents, got {len(agents)}")
    if agents[0] == agents[1]:
        raise ConfigError(f"--layout {layout} needs two different agents, got {agents[0]!r} twice")
    return [agents[0]] * int(n) + [agents[1]] * int(m)


def cli_eval(args: Any, options: dict[str, Any]) -> int:
    """Run ``bobshat eval`` from parsed arguments and the game options of ``cli.game_options``."""
    from bobshat_env.core.config import ConfigError

    if not getattr(args, "variance_reduction", False):  # each --vr-* option tunes the reduction: alone, a mistake
        for flag in VR_FLAGS:
            if getattr(args, flag, None) is not None:
                raise ConfigError(
                    f"--{flag.replace('_', '-')} tunes the variance reduction, which is off; add --variance-reduction"
                )
    game = make_game(args.game, **options)
    specs = split_specs(args.agents) if args.agents else ["random"] * game.players
    if getattr(args, "layout", None):
        specs = layout_specs(specs, args.layout, game.players)
    if len(specs) != game.players:
        raise ConfigError(count_error("--agents", len(specs), game.players))
    ev = evaluate(
        game,
        specs,
        args.deals,
        seed=args.seed,
        duplicate=not args.no_duplicate,
        seatings=args.seatings,
        workers=args.workers,
        batch_size=args.batch_size,
        records_path=args.records,
        progress=not args.quiet,
        ray_address=getattr(args, "ray_address", None),
        variance_reduction=getattr(args, "variance_reduction", False),
        vr_value=getattr(args, "vr_value", None),
        vr_fresh=getattr(args, "vr_fresh", None),
        vr_decisions=getattr(args, "vr_decisions", None) or "bids",
        vr_proxy=getattr(args, "vr_proxy", None),
        vr_proxy_fresh=getattr(args, "vr_proxy_fresh", None),
    )
    summary = ev.summary()
    # with --json -, stdout is the JSON alone (for pipes: `bobshat eval --json - | jq`); the rest goes to stderr
    say = sys.stderr if args.json == "-" else sys.stdout
    write_report(summary, args.json or None, format_report(summary), indent=2, wrote=True)
    if args.records:
        print(f"wrote {summary['games']} records to {args.records}", file=say)
    if args.plot:
        plot(ev, args.plot)
        print(f"wrote {args.plot}", file=say)
    return 0
