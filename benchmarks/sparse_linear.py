"""The first layer's product, dense against sparse (agents/sparse_linear.py), on real prepared inputs.

``python -m benchmarks.sparse_linear [--game bobs_hat] [--players 4] [--rows 4096] [--minibatches 16]
[--threads 1] [--reps 30] [--json FILE]``

The rows are what the trainer stores: observations of random games, relabelled and with trick facts
(:meth:`PolicyNet.prepare`, the presets' input stages), kept in float16, ``minibatches`` x ``rows`` of them.
For one minibatch of the preset's first layer (inputs x 128) it times what the update did (gather the rows,
float16 to float32, the dense product and its weight gradient) against what it does now (take the rows' lists,
the sparse product and its weight gradient), best of ``reps`` each, plus the listing of the whole store,
counted per minibatch of an update of 2 epochs. What it measured: docs/results/engineering.md, "The sparse
first layer".
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
    args = Args(game=game, players=players, hidden=[128], trump_symmetry=True, trick_features=True)
    net = make_net(args, env.game)  # the presets' input stages
    ts, rng, out, n = env.reset(seed), np.random.default_rng(seed), [], 0
    while n < rows:
        with torch.no_grad():
            x = net.prepare(torch.from_numpy(ts.obs))[0]
        out.append(x)
        n += len(x)
        ts = env.step(np.array([rng.choice(np.flatnonzero(m)) for m in ts.action_mask]))
    return torch.cat(out)[:rows].contiguous()


def _positive(text: str) -> int:
    """An argparse type: a whole number from 1 to 1,000,000 (a count of rows, threads or repetitions)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"want a whole number, got {text!r}") from None
    if not 1 <= value <= 1_000_000:
        raise argparse.ArgumentTypeError(f"want 1 to 1,000,000, got {value}")
    return value


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
    p.add_argument("--players", type=_positive, default=4)
    p.add_argument("--rows", type=_positive, default=4096, help="rows per product (the preset's minibatch: 4096)")
    p.add_argument("--hidden", type=_positive, default=128, help="the first layer's width")
    p.add_argument("--minibatches", type=_positive, default=16, help="minibatches of rows stored")
    p.add_argument("--threads", type=_positive, default=1, help="torch's and numba's threads")
    p.add_argument("--reps", type=_positive, default=30)
    p.add_argument("--json", default=None)
    a = p.parse_args(argv)
    import numba

    from agents.sparse_linear import SparseRows, sparse_linear

    torch.set_num_threads(a.threads)
    numba.set_num_threads(min(a.threads, numba.config.NUMBA_NUM_THREADS))
    try:  # the rollout, as the collector keeps it
        store = prepared_rows(a.game, a.players, a.rows * a.minibatches).half()
    except ValueError as err:  # the game's own checks (a game or a player count it does not have)
        p.error(str(err))
    gen = torch.Generator().manual_seed(0)
    w = torch.randn(a.hidden, store.shape[1], generator=gen).requires_grad_(True)
    b = torch.zeros(a.hidden).requires_grad_(True)
    g = torch.randn(a.rows, a.hidden, generator=gen)
    idx = torch.randperm(len(store), generator=gen)[: a.rows]
    lists = SparseRows.from_dense(store.numpy())

    def dense() -> None:  # what the update did: gather, float16 -> float32, the product and its weight gradient
        torch.nn.functional.linear(store.index_select(0, idx).float(), w, b).backward(g)
        w.grad = b.grad = None

    def sparse() -> None:  # what it does now: the rows' lists, the product and its weight gradient over them
        sparse_linear(lists.take(idx), w, b).backward(g)
        w.grad = b.grad = None

    d, sp = best_ms(dense, a.reps), best_ms(sparse, a.reps)
    scan = best_ms(lambda: SparseRows.from_dense(store.numpy()), max(3, a.reps // 10))
    scan_share = tuple(v / (2 * a.minibatches) for v in scan)  # listed once per update of 2 epochs
    rows = {
        "dense_ms": d[0],
        "sparse_ms": sp[0],
        "scan_per_minibatch_ms": scan_share[0],
        "dense_cpu_ms": d[1],
        "sparse_cpu_ms": sp[1],
        "scan_per_minibatch_cpu_ms": scan_share[1],
    }
    total = sp[0] + scan_share[0]
    print(
        f"one {a.rows}-row minibatch's first layer (gather, forward, weight gradient): dense {d[0]:.2f} ms, "
        f"sparse {sp[0]:.2f} ms + the scan's share {scan_share[0]:.2f} ms = {total:.2f} ms: {d[0] / total:.2f}x"
    )
    out = {
        "game": a.game,
        "players": a.players,
        "rows": a.rows,
        "inputs": int(store.shape[1]),
        "non_zeros_per_row": float(lists.ptr[-1] / lists.rows),
        "threads": a.threads,
        "minibatches": a.minibatches,
        "results": rows,
    }
    print(f"{out['inputs']} inputs, {out['non_zeros_per_row']:.1f} non-zeros per row, {a.threads} thread(s)")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(out, fh, indent=1)
    return out


if __name__ == "__main__":
    main()
