"""How much the control variates of train/evaluate/variance.py narrow an evaluation's CIs, and what they cost.

``python -m benchmarks.variance_reduction --game bobs_hat --agents strong,simple,random,random --deals 200``
plays one tournament with variance reduction (every kind of term) and prints,
for each agent and each pairwise difference, the plain and the reduced mean
with 95% CIs, the variance factor with each subset of the terms (chance
only, chance + bids, all), and the seconds spent on the estimate against
the seconds of play, and the mean of the subtracted correction with its
CI (zero for an unbiased estimate). ``--proxy auto|SPECS`` adds the multi-fidelity
term (each deal replayed by cheap proxies, ``--proxy-fresh`` fresh deals per deal)
and its subsets ``proxy`` and ``all+proxy``. ``--json PATH`` keeps the numbers. It
reports; it asserts nothing.
"""

from __future__ import annotations

import argparse
import itertools
import json
import time

import numpy as np

from agents.registry import split_specs
from bobshat_env.games import make_game
from train.evaluate.command import layout_specs
from train.evaluate.statistics import mean_ci
from train.evaluate.tournament import evaluate
from train.evaluate.variance import TERMS, chance_terms, crossfit_reduce, reduced_stats

SUBSETS = {"chance": [0], "chance+bids": [0, 1], "all": [0, 1, 2]}


def run(
    game_name: str,
    agents: str,
    deals: int,
    seed: int,
    layout: str | None,
    duplicate: bool,
    proxy: str = "none",
    proxy_fresh: int = 4,
    **opts: int,
) -> dict:
    """One tournament with every term; the factors per subset of terms (see the module docstring).

    ``proxy``: the multi-fidelity term's cheap agents (``auto``, ``none``, or one spec per agent); with
    one, the subsets ``proxy`` (alone) and ``all+proxy`` are measured too.
    """
    game = make_game(game_name, **opts)
    specs = split_specs(agents)
    if layout:
        specs = layout_specs(specs, layout, game.players)
    t0 = time.perf_counter()
    ev = evaluate(
        game,
        specs,
        deals,
        seed=seed,
        duplicate=duplicate,
        variance_reduction=True,
        vr_decisions="all",
        vr_proxy=proxy,
        vr_proxy_fresh=proxy_fresh,
    )
    wall = time.perf_counter() - t0
    H = ev.hands
    x = ev.per_deal(ev.totals / H)
    c = np.stack([ev.per_deal(ev.cv[:, t] / H) for t in range(len(TERMS))], axis=2)
    subsets = dict(SUBSETS)
    if ev.proxy_actual is not None:
        c = np.concatenate([c, chance_terms(ev.proxy_actual, ev.proxy_fresh)[:, :, None]], axis=2)
        subsets |= {"proxy": [3], "all+proxy": [0, 1, 2, 3]}
    rows = []
    quantities = [(n, x[:, a], c[:, a]) for a, n in enumerate(ev.names)]
    quantities += [
        (f"{ev.names[a]} - {ev.names[b]}", x[:, a] - x[:, b], c[:, a] - c[:, b])
        for a, b in itertools.combinations(range(len(ev.names)), 2)
    ]
    for name, y, cc in quantities:
        m, ci = mean_ci(y)
        row = {"quantity": name, "plain": m, "plain_ci95": ci}
        for label, cols in subsets.items():
            r = reduced_stats(y, cc[:, cols])
            row[label] = {"mean": r["mean"], "ci95": r["ci95"], "variance_factor": r["variance_factor"]}
        # the unbiasedness check: the subtracted correction y - z (all terms) has mean zero within its own CI
        z, _ = crossfit_reduce(y, cc)
        row["correction"], row["correction_ci95"] = mean_ci(y - z)
        rows.append(row)
    return {
        "game": game_name,
        "agents": specs,
        "deals": deals,
        "seed": seed,
        "duplicate": duplicate,
        "games": int(ev.totals.shape[0]),
        "seconds": wall,
        "cv_seconds": ev.cv_seconds + ev.proxy_seconds,
        "proxy": ev.proxy_specs,
        "proxy_fresh": proxy_fresh if ev.proxy_specs else 0,
        "subsets": list(subsets),
        "rows": rows,
    }


def report(out: dict) -> str:
    lines = [
        f"{out['game']} {','.join(out['agents'])}: {out['deals']} deals, {out['games']} games, "
        f"{'duplicate' if out['duplicate'] else 'independent deals'}, seed {out['seed']}",
        f"{'quantity':<28}{'plain':>18}" + "".join(f"{k:>26}" for k in out["subsets"]),
    ]
    for r in out["rows"]:
        cells = "".join(
            f"{r[k]['mean']:>+9.3f} ±{r[k]['ci95']:.3f} x{r[k]['variance_factor']:<5.2f}" for k in out["subsets"]
        )
        corr = f"   correction {r['correction']:+.3f} ±{r['correction_ci95']:.3f}"
        lines.append(f"{r['quantity']:<28}{r['plain']:>+10.3f} ±{r['plain_ci95']:.3f}{cells}{corr}")
    play = out["seconds"] - out["cv_seconds"]
    lines.append(f"estimate {out['cv_seconds']:.1f} s, play {play:.1f} s (x{out['cv_seconds'] / max(play, 1e-9):.2f})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--game", default="bobs_hat")
    p.add_argument("--players", type=int, default=4)
    p.add_argument("--agents", default="strong,simple,random,random")
    p.add_argument("--layout", default=None)
    p.add_argument("--deals", type=int, default=200)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-duplicate", action="store_true")
    p.add_argument("--proxy", default="none", help="the multi-fidelity term's cheap agents: auto, none, or specs")
    p.add_argument("--proxy-fresh", type=int, default=4)
    p.add_argument("--json", default=None)
    a = p.parse_args(argv)
    out = run(
        a.game, a.agents, a.deals, a.seed, a.layout, not a.no_duplicate, a.proxy, a.proxy_fresh, players=a.players
    )
    print(report(out), flush=True)
    if a.json:
        from bobshat_env.paths import replace_bytes  # the one atomic writer

        replace_bytes(a.json, (json.dumps(out, indent=1) + "\n").encode("utf-8"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
