"""The size of a small variant's whole game tree in OpenSpiel, walked node by node.

Counts what exact methods (CFR+, exploitability, best responses) walk each
iteration: histories (chance, decision and terminal nodes), terminal
histories, decision nodes and each player's information states, with
:func:`bobshat_env.openspiel.tree_size`, and the time the walk took (the
Python adapter's cost per node is most of it). docs/rules.md ("Small
variants") lists the named variants' sizes.

    python benchmarks/tree_size.py --game oh_hell --variant tiny
    python benchmarks/tree_size.py --game bobs_hat --param suits=1 --param ranks=5 --param hand_size_base=0 \\
        --param hands=1 --param players=3
"""

from __future__ import annotations

import argparse
import json
import sys
import time


def _param(text: str) -> tuple[str, int | str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key, int(value) if value.lstrip("-").isdigit() else value


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--game", choices=("bobs_hat", "oh_hell"), default="oh_hell")
    p.add_argument("--variant", default="", help="a named small variant (tiny, small)")
    p.add_argument("--param", type=_param, action="append", default=[], help="another OpenSpiel parameter")
    p.add_argument("--max-histories", type=int, default=50_000_000, help="stop past this many histories")
    args = p.parse_args(argv)

    import pyspiel

    from bobshat_env.core.config import ConfigError
    from bobshat_env.openspiel import tree_size

    params = {"variant": args.variant, **dict(args.param)}
    try:
        game = pyspiel.load_game("python_" + args.game, params)
    except ConfigError as err:
        print(f"tree_size: {err}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    try:
        size = tree_size(game, max_histories=args.max_histories)
    except ValueError as err:
        print(f"tree_size: {err}", file=sys.stderr)
        return 1
    out = {
        "game": args.game,
        "params": params,
        "config": game.rules.game.config.to_dict(),
        "histories": size.histories,
        "terminal": size.terminal,
        "decisions": size.decisions,
        "info_states": list(size.info_states),
        "seconds": round(time.perf_counter() - start, 1),
    }
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
