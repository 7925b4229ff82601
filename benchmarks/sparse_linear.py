"""The first layer's product, dense against sparse (agents/sparse_linear.py), on real prepared inputs.

``python -m benchmarks.sparse_linear [--game bobs_hat] [--players 4] [--rows 4096] [--threads 1] [--reps 30]``

Inputs are what the trainer stores: observations of random games, relabelled and with trick facts
(:meth:`PolicyNet.prepare`). For the preset's first layer (inputs x 128), it times a forward plus the weight
gradient (what one minibatch of the update does with the layer) and the forward alone (the collector's
inference), both ways in the same process, interleaved, best of ``reps``; prints the ratios, and JSON with
``--json``.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable

import numpy as np
import torch


def prepared_rows(game: str, players: int, rows: int, seed: int = 0) -> torch.Tensor:
    """``rows`` prepared inputs (float32) of games played at random."""
    from bobshat_env.vector import VectorEnv
    from train.ppo.config import Args, make_net

    env = VectorEnv(game, num_envs=256, players=players)
    net = make_net(Args(game=game, players=players, hidden=[128]), env.game)  # the presets' input stages
    ts, rng, out, n = env.reset(seed), np.random.default_rng(seed), [], 0
    while n < rows:
        with torch.no_grad():
            x = net.prepare(torch.from_numpy(ts.obs))[0]
        out.append(x)
        n += len(x)
        ts = env.step(np.array([rng.choice(np.flatnonzero(m)) for m in ts.action_mask]))
    return torch.cat(out)[:rows].contiguous()


def best_ms(fn: Callable[[], object], reps: int) -> tuple[float, float]:
    """(wall, CPU) milliseconds of the fastest of ``reps`` calls, after one warm-up call."""
    fn()
    wall = cpu = float("inf")
    for _ in range(reps):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall, cpu = min(wall, time.perf_counter() - w0), min(cpu, time.process_time() - c0)
    return wall * 1e3, cpu * 1e3


def main(argv: list[str] | None = None) -> dict:
    """Measure and print; returns the JSON's dict."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--game", default="bobs_hat")
    p.add_argument("--players", type=int, default=4)
    p.add_argument("--rows", type=int, default=4096, help="rows per product (the preset's minibatch: 4096)")
    p.add_argument("--hidden", type=int, default=128, help="the first layer's width")
    p.add_argument("--threads", type=int, default=1, help="torch's and numba's threads")
    p.add_argument("--reps", type=int, default=30)
    p.add_argument("--json", default=None)
    a = p.parse_args(argv)
    import numba

    from agents.sparse_linear import sparse_linear

    torch.set_num_threads(a.threads)
    numba.set_num_threads(min(a.threads, numba.config.NUMBA_NUM_THREADS))
    x = prepared_rows(a.game, a.players, a.rows)
    gen = torch.Generator().manual_seed(0)
    w = torch.randn(a.hidden, x.shape[1], generator=gen).requires_grad_(True)
    b = torch.zeros(a.hidden).requires_grad_(True)
    g = torch.randn(a.rows, a.hidden, generator=gen)

    def train_step(f: Callable) -> Callable[[], None]:
        def run() -> None:
            f(x, w, b).backward(g)
            w.grad = b.grad = None

        return run

    def infer(f: Callable) -> Callable[[], None]:
        def run() -> None:
            with torch.inference_mode():
                f(x, w, b)

        return run

    rows = {}
    for name, make in (("forward + weight gradient", train_step), ("forward (inference)", infer)):
        dense = best_ms(make(torch.nn.functional.linear), a.reps)
        sparse = best_ms(make(sparse_linear), a.reps)
        rows[name] = {"dense_ms": dense[0], "sparse_ms": sparse[0]}
        rows[name].update(dense_cpu_ms=dense[1], sparse_cpu_ms=sparse[1])
        print(
            f"{name:26s} dense {dense[0]:6.2f} ms, sparse {sparse[0]:6.2f} ms wall: {dense[0] / sparse[0]:4.2f}x "
            f"(CPU {dense[1]:6.2f} / {sparse[1]:6.2f} ms: {dense[1] / sparse[1]:4.2f}x)"
        )
    out = {
        "game": a.game,
        "players": a.players,
        "rows": a.rows,
        "inputs": int(x.shape[1]),
        "non_zeros_per_row": float((x != 0).sum(1).float().mean()),
        "threads": a.threads,
        "results": rows,
    }
    print(f"{out['inputs']} inputs, {out['non_zeros_per_row']:.1f} non-zeros per row, {a.threads} thread(s)")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(out, fh, indent=1)
    return out


if __name__ == "__main__":
    main()
