"""Decisions per second of our ISMCTS (agents/ismcts.py) at a number of simulations, by batch size.

The agent searches the decisions of a batch together (one engine step per
action of an iteration for all of them), so its cost per decision falls with
the batch: B = 1 is a table with people, B = 100 or more the games of an
evaluation stepped together. Each measurement plays ``--steps`` random
actions into ``B`` fresh games (the same deals for every B) and times one
``act`` on the B decisions there: wall-clock and this process's CPU time
(on a shared machine the wall clock also counts other jobs' time; set
``NUMBA_NUM_THREADS=1`` so that idle numba threads do not count as CPU). A
warm-up call on two decisions comes first, untimed (the kernels load). One
JSON line per (game, steps, B).

    NUMBA_NUM_THREADS=1 python -m benchmarks.ismcts_speed --game oh_hell --sims 1000 --batch 1,16,128 --steps 0,20
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import numpy as np

from agents.registry import make_agent
from bobshat_env.core.resample import void_tracker
from bobshat_env.games import Game, make_game


def positions(game: Game, n: int, steps: int, seed: int) -> tuple[Any, dict]:
    """``n`` games after ``steps`` random actions, and their public record."""
    state = game.init(np.arange(n, dtype=np.uint64) + seed * 1_000_003 + 1)
    tracker = void_tracker(game, n)
    rnd = make_agent("random", game, seed=seed)
    for _ in range(steps):
        mask = game.legal_action_mask(state)
        actions = rnd.act(None, mask, None)
        tracker.before_step(state, actions)
        tracker.after_step(game.step(state, actions, legal=mask))
    return state, tracker.rows(np.arange(n))


def measure(game: Game, spec: str, batch: int, steps: int, seed: int = 0) -> dict[str, Any]:
    """Time one ``act`` of ``spec`` on ``batch`` decisions after ``steps`` random actions."""
    state, public = positions(game, batch, steps, seed)
    obs, mask, seat = game.observe(state), game.legal_action_mask(state), state.cur.astype(np.int64)
    agent = make_agent(spec, game, seed=seed)
    agent.act(obs[:2], mask[:2], seat[:2], {k: v[:2] for k, v in public.items()})  # warm-up
    t0, c0 = time.perf_counter(), time.process_time()
    agent.act(obs, mask, seat, public)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    searched = int((mask.sum(axis=1) > 1).sum())
    return {
        "game": game.name,
        "agent": spec,
        "steps": steps,
        "batch": batch,
        "searched": searched,
        "wall_ms_per_decision": round(1000 * wall / batch, 2),
        "cpu_ms_per_decision": round(1000 * cpu / batch, 2),
        "decisions_per_cpu_second": round(batch / cpu, 2),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.ismcts_speed", description=__doc__.split("\n\n")[0])
    p.add_argument("--game", default="oh_hell", choices=("oh_hell", "bobs_hat"))
    p.add_argument("--players", type=int, default=4)
    p.add_argument("--sims", type=int, default=1000)
    p.add_argument("--batch", default="1,16,128", help="comma-separated batch sizes")
    p.add_argument("--steps", default="0", help="comma-separated random actions before the decision")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    try:
        batches = [int(x) for x in a.batch.split(",")]
        steps = [int(x) for x in a.steps.split(",")]
    except ValueError:
        p.error(f"--batch and --steps want comma-separated whole numbers, got {a.batch!r} and {a.steps!r}")
    if min(batches) < 1 or min(steps) < 0 or a.sims < 1:
        p.error("--batch and --sims want numbers >= 1, --steps >= 0")
    game = make_game(a.game, players=a.players)
    for s in steps:
        for b in batches:
            print(json.dumps(measure(game, f"ismcts:sims={a.sims}", b, s, a.seed)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
