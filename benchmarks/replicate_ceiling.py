"""How much of a head-to-head's per-deal spread the deal explains: the ceiling of any deal-level control variate.

``python -m benchmarks.replicate_ceiling --game bobs_hat --agents ppo:checkpoints/bobs_hat_4p.pt,pimc --deals 80``
plays the same deals twice (duplicate, every seating of the layout), the
second time with the two agents listed the other way round: the deals are
the seed's, but each agent's seed comes from its place in the list, so the
agents' own dice are drawn anew. The correlation ``r`` of the two
replicates' per-deal differences is the deal's share of the per-deal
variance (an intraclass correlation). A control variate built on the deal
alone (chance terms, a proxy match, a regression on deal features x
seating) can at best remove that share, so it cannot cut the variance by
more than ``1 / (1 - r)`` (docs/variance_reduction.md, "What bounds any
term built on the deal"). Deterministic agents replay exactly (``r = 1``,
no ceiling); a match decided by an agent's dice has ``r`` near 0.

It reports (the means, ``r`` with a 95% bootstrap interval over deals, the
ceiling, the seconds of each replicate; ``--json PATH`` keeps the per-deal
differences); it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from agents.registry import split_specs
from bobshat_env.games import make_game
from bobshat_env.paths import OutputPathError, check_writable, replace_bytes
from train.evaluate.command import layout_specs
from train.evaluate.tournament import evaluate


def replicates(
    game_name: str, agents: str, deals: int, seed: int, layout: str = "2v2", workers: int = 1, batch_size: int = 36
) -> dict:
    """Per-deal differences (first agent minus second, per hand) of the two replicates, and their seconds."""
    specs = split_specs(agents)
    if len(specs) != 2:
        raise ValueError(f"--agents: a head-to-head of two entrants, got {len(specs)}: {agents!r}")
    a, b = specs
    game = make_game(game_name)
    out: dict = {"game": game_name, "agents": [a, b], "layout": layout, "deals": deals, "seed": seed}
    for key, order, sign in (("first", [a, b], 1.0), ("second", [b, a], -1.0)):
        t0 = time.perf_counter()
        ev = evaluate(
            game, layout_specs(order, layout, game.players), deals, seed=seed, workers=workers, batch_size=batch_size
        )
        x = ev.per_deal(ev.totals / ev.hands)  # (deals, 2): each agent's mean per hand over the deal's games
        out[key] = (sign * (x[:, 0] - x[:, 1])).tolist()
        out[f"{key}_seconds"] = time.perf_counter() - t0
    return out


def ceiling(first: np.ndarray, second: np.ndarray, boot: int = 4000) -> dict:
    """``r`` (the deal's share of the per-deal variance), its 95% bootstrap interval and the ceiling 1 / (1 - r).

    Where both replicates are identical (deterministic agents) ``r`` is 1 and the ceiling infinite.
    """
    first, second = np.asarray(first, float), np.asarray(second, float)
    if np.allclose(first, second, rtol=0, atol=1e-9):  # (the two orders sum a deal's games differently)
        return {"r": 1.0, "r_ci95": [1.0, 1.0], "ceiling": float("inf"), "ceiling_ci95": [float("inf")] * 2}
    r = float(np.corrcoef(first, second)[0, 1])
    rng = np.random.default_rng(0)
    resamples = (rng.integers(0, first.size, first.size) for _ in range(boot))
    with np.errstate(invalid="ignore", divide="ignore"):  # a resample of one repeated deal has no correlation (NaN)
        draws = [np.corrcoef(first[i], second[i])[0, 1] for i in resamples]
    lo, hi = (float(v) for v in np.nanpercentile(draws, [2.5, 97.5]))

    def bound(v: float) -> float:
        return float("inf") if v >= 1 else 1 / (1 - max(v, 0.0))

    return {"r": r, "r_ci95": [lo, hi], "ceiling": bound(r), "ceiling_ci95": [bound(lo), bound(hi)]}


def main(argv: list[str] | None = None) -> None:
    """Command line: see the module docstring."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--game", default="bobs_hat")
    ap.add_argument("--agents", required=True, help="the two entrants, comma-separated specs")
    ap.add_argument("--layout", default="2v2")
    ap.add_argument("--deals", type=int, default=80)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", default="", help="write the per-deal differences and the ceiling here")
    args = ap.parse_args(argv)
    if args.deals < 3:
        ap.error(f"--deals: at least 3 for a correlation over deals, got {args.deals}")
    if args.json:
        try:
            check_writable(args.json, "--json")  # before minutes of play, not after
        except OutputPathError as err:
            ap.error(str(err))
    rep = replicates(args.game, args.agents, args.deals, args.seed, args.layout, args.workers)
    first, second = np.array(rep["first"]), np.array(rep["second"])
    rep.update(ceiling(first, second))
    print(f"{args.game} {args.layout}: {rep['agents'][0]} - {rep['agents'][1]}, {args.deals} deals, seed {args.seed}")
    for key, x in (("first", first), ("second", second)):
        sd, sec = x.std(ddof=1), rep[key + "_seconds"]
        print(f"  {key} replicate: {x.mean():+.3f} per hand (sd over deals {sd:.3f}), {sec:.0f} s")
    lo, hi = rep["r_ci95"]
    clo, chi = rep["ceiling_ci95"]
    print(
        f"  r = {rep['r']:.3f} [{lo:.3f}, {hi:.3f}]; ceiling of a deal-level term 1/(1-r) = {rep['ceiling']:.2f}"
        f" [{clo:.2f}, {chi:.2f}]"
    )
    if args.json:  # in one step: a full disk never leaves half a file
        replace_bytes(args.json, (json.dumps(rep, indent=1) + "\n").encode("utf-8"))


if __name__ == "__main__":
    main()
