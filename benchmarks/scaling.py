"""Scaling benchmark: training throughput with 0, 1, 2 ... Ray rollout workers, and a model of larger clusters.

    python benchmarks/scaling.py --config configs/bobs_hat_4p.yaml --workers 0,1,2 --iterations 2 --json scaling.json

Measured (on this machine): for each worker count the preset's iterations
run as ``bobshat train`` runs them (the trainer's :class:`~train.ppo.learner.Learner`:
:meth:`~train.ppo.learner.Learner.collect` from the in-process collector or
:class:`~train.ppo.workers.RolloutWorkers`, then
:meth:`~train.ppo.learner.Learner.update`), after one warm-up iteration, from a fresh
pool (heuristics and self-play; no snapshots yet, no evaluations or
checkpoints). Per worker count: table decisions per second of the whole
iteration (rollout + update), the rollout alone and the update alone; each
worker's own rate (its rollout's table decisions per second: env and
inference on one CPU); the learner's update rate (learner decisions trained
per second, ``update_epochs`` passes); and the bytes one iteration moves
(rollouts to the learner, the weights to the workers).

Modeled (:func:`model`): the decisions per second of ``nodes`` machines of
``cores`` CPUs running ``workers_per_node`` rollout workers each, with one
learner, from the measured per-worker rate, the bytes per table decision and
the learner's update rate, under this implementation's synchronous design:
every iteration is rollout, then the transfer to the learner, then the
update, one after the other, so

    decisions/s = D / (D_w / r_w + D * bytes / bandwidth + D * f / L)

with ``D = workers * D_w`` table decisions per iteration, ``D_w`` a worker's
share (its slots times the game length), ``r_w`` its measured rate, ``f``
the learner's share of the decisions and ``L`` the learner's update rate.
As workers grow the first term stays and the other two grow with ``D``, so
the rate tends to ``1 / (bytes / bandwidth + f / L)``: one learner's
ceiling. The learner rate on a GPU and the network bandwidth are inputs
(``--gpu-learner-rate``, ``--bandwidth-gbit``); the README says which
figures were measured and which assumed.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

from bobshat_env.games import make_game
from bobshat_env.paths import OutputPathError, check_writable, replace_bytes
from train.ppo.collector import env_seed
from train.ppo.config import Args, parse_args
from train.ppo.learner import Learner, make_collector, set_up


def measure(args: Args, workers: int, iterations: int, log: Any = None) -> dict[str, Any]:
    """Time ``iterations`` PPO iterations (after one warm-up) with ``workers`` rollout workers (0: in-process)."""
    args = dataclasses.replace(
        args, rollout_workers=workers, ray_address=(args.ray_address or "local") if workers else "", resume=False
    )
    if args.torch_threads > 0:
        torch.set_num_threads(args.torch_threads)
    torch.set_flush_denormal(True)
    game = make_game(args.game, players=args.players, **args.game_options)
    with tempfile.TemporaryDirectory() as tmp:
        gen, net, optimizer, pool, _counters = set_up(args, game, Path(tmp) / "ckpt.pt")
    t0 = time.perf_counter()
    collector = make_collector(args, game, net, pool, gen, seed=env_seed(args.seed, 0))
    learner = Learner(args, net, optimizer, collector)
    start_s = time.perf_counter() - t0
    rows = []
    try:
        for i in range(iterations + 1):
            t0 = time.perf_counter()
            batch = learner.collect()
            t1 = time.perf_counter()
            learner.update(batch)
            t2 = time.perf_counter()
            row = {"rollout_s": t1 - t0, "update_s": t2 - t1, "env_steps": batch.env_steps, "learner": batch.n}
            stats = collector.rollout_stats(batch)
            row.update({k: stats[k] for k in ("worker_sps", "rollout_bytes", "weights_bytes")})
            if log:
                log(f"workers={workers} iteration {i}{' (warm-up)' if i == 0 else ''}: {row}")
            if i:
                rows.append(row)
    finally:
        learner.close()

    def med(key: str) -> float:
        return statistics.median(r[key] for r in rows)

    steps, n = rows[0]["env_steps"], rows[0]["learner"]
    per_worker = [statistics.median(r["worker_sps"][w] for r in rows) for w in range(max(workers, 1))]
    return {
        "workers": workers,
        "iterations": len(rows),
        "start_s": round(start_s, 2),
        "env_steps_per_iteration": steps,
        "learner_decisions_per_iteration": n,
        "decisions_per_s": steps / (med("rollout_s") + med("update_s")),
        "rollout_decisions_per_s": steps / med("rollout_s"),
        "rollout_s": med("rollout_s"),
        "update_s": med("update_s"),
        "learner_update_rate": n / med("update_s"),  # learner decisions trained per second (all epochs)
        "worker_decisions_per_s": per_worker,
        "rollout_MB": med("rollout_bytes") / 1e6,
        "weights_MB": med("weights_bytes") / 1e6,
        "bytes_per_decision": med("rollout_bytes") / steps if workers else None,
    }


def model(
    worker_rate: float,
    bytes_per_decision: float,
    learner_share: float,
    learner_rate: float,
    decisions_per_worker: float,
    nodes: int,
    workers_per_node: int,
    bandwidth_gbit: float,
) -> dict[str, float]:
    """Modeled decisions/s of ``nodes`` x ``workers_per_node`` workers and one learner (module docstring)."""
    W = nodes * workers_per_node
    D = W * decisions_per_worker
    t_roll = decisions_per_worker / worker_rate
    t_net = D * bytes_per_decision / (bandwidth_gbit * 1e9 / 8)
    t_upd = D * learner_share / learner_rate
    return {
        "nodes": nodes,
        "workers": W,
        "decisions_per_iteration": D,
        "rollout_s": t_roll,
        "transfer_s": t_net,
        "update_s": t_upd,
        "decisions_per_s": D / (t_roll + t_net + t_upd),
        "rollout_capacity_per_s": W * worker_rate,
        "ceiling_per_s": 1.0 / (bytes_per_decision / (bandwidth_gbit * 1e9 / 8) + learner_share / learner_rate),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Measure each worker count, model the clusters, print both; returns (and with ``--json`` writes) them."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", default="configs/bobs_hat_4p.yaml")
    p.add_argument("--workers", default="0,1,2", help="worker counts to measure")
    p.add_argument("--iterations", type=int, default=2, help="measured iterations per worker count (after a warm-up)")
    p.add_argument("--ray-address", default="local")
    p.add_argument("--device", default="cpu", help="the learner's device for the update (cpu, cuda)")
    p.add_argument("--nodes", default="8,64", help="cluster sizes to model")
    p.add_argument("--cores", type=int, default=16, help="CPUs per modeled node")
    p.add_argument("--gpu-learner-rate", type=float, default=None, help="learner decisions/s of a GPU update (input)")
    p.add_argument("--bandwidth-gbit", type=float, default=10.0, help="the learner's network bandwidth (input)")
    p.add_argument("--engine-threads", type=int, default=0, help="numba threads here (0: numba default; workers use 1)")
    p.add_argument("--json", default=None)
    ns = p.parse_args(argv)
    if ns.json:
        try:
            check_writable(ns.json, "--json")  # before minutes of measuring, not after
        except OutputPathError as err:
            p.error(str(err))
    import numba

    if ns.engine_threads:
        numba.set_num_threads(ns.engine_threads)
    args = parse_args(["--config", ns.config, "--progress", "false", "--device", ns.device])
    args = dataclasses.replace(args, ray_address=ns.ray_address)
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    measured = [measure(args, int(w), ns.iterations, log) for w in ns.workers.split(",")]
    print(f"measured on this machine (engine threads in this process: {numba.get_num_threads()}):")
    print(
        f"{'workers':>7} {'decisions/s':>12} {'rollout/s':>11} {'update s':>9} {'per worker/s':>22} "
        f"{'learner dec/s':>13} {'rollout MB':>10} {'weights MB':>10}"
    )
    for m in measured:
        pw = ", ".join(f"{x:,.0f}" for x in m["worker_decisions_per_s"])
        print(
            f"{m['workers']:>7} {m['decisions_per_s']:>12,.0f} {m['rollout_decisions_per_s']:>11,.0f} "
            f"{m['update_s']:>9.2f} {pw:>22} {m['learner_update_rate']:>13,.0f} {m['rollout_MB']:>10.1f} "
            f"{m['weights_MB']:>10.3f}"
        )
    one = next((m for m in measured if m["workers"] == 1), None)
    out: dict[str, Any] = {"measured": measured, "engine_threads": numba.get_num_threads(), "modeled": []}
    if one is not None:
        base = measured[0]
        share = base["learner_decisions_per_iteration"] / base["env_steps_per_iteration"]
        learner_rate = ns.gpu_learner_rate or max(m["learner_update_rate"] for m in measured)
        source = "input (--gpu-learner-rate)" if ns.gpu_learner_rate else f"measured here ({ns.device})"
        print(
            f"\nmodeled ({ns.cores}-core nodes, {ns.cores - 1} workers each, one learner at {learner_rate:,.0f} "
            f"learner decisions/s [{source}], {ns.bandwidth_gbit:g} Gbit/s to it [input]; "
            f"per worker {one['worker_decisions_per_s'][0]:,.0f} decisions/s and "
            f"{one['bytes_per_decision']:.0f} bytes per decision [measured]):"
        )
        for nodes in (int(x) for x in ns.nodes.split(",")):
            m = model(
                one["worker_decisions_per_s"][0],
                one["bytes_per_decision"],
                share,
                learner_rate,
                one["env_steps_per_iteration"],
                nodes,
                ns.cores - 1,
                ns.bandwidth_gbit,
            )
            out["modeled"].append(m)
            print(
                f"  {nodes:>3} nodes, {m['workers']:>4} workers: {m['decisions_per_s']:>12,.0f} decisions/s "
                f"(iteration: rollout {m['rollout_s']:.1f} s, transfer {m['transfer_s']:.1f} s, update "
                f"{m['update_s']:.1f} s; rollout capacity {m['rollout_capacity_per_s']:,.0f}/s; "
                f"one-learner ceiling {m['ceiling_per_s']:,.0f}/s)"
            )
        out["model_inputs"] = {
            "learner_rate": learner_rate,
            "learner_rate_source": source,
            "bandwidth_gbit": ns.bandwidth_gbit,
            "cores": ns.cores,
            "learner_share": share,
        }
    if ns.json:
        replace_bytes(ns.json, (json.dumps(out, indent=2) + "\n").encode("utf-8"))  # never half a file
    return out


if __name__ == "__main__":
    main()
    sys.exit(0)
