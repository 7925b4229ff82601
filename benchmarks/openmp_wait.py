"""The cost of OpenMP threads that spin between parallel loops, in a user's own loop.

A loop of :class:`~bobshat_env.vector.VectorEnv` steps (Bob's Hat, 4 players) with
a small torch MLP choosing every action, which is what a training loop does,
timed by process CPU time (all threads) and wall time, in a fresh interpreter per
measurement because the OpenMP runtime reads its settings once, when it loads.
Cases: bobshat imported before torch or after it, with ``OMP_WAIT_POLICY`` unset
or set in the shell. ``--repo`` adds an older checkout measured the same way,
interleaved with this one (the order alternates each repetition); medians of
``--reps``. bobshat_env/core/compiled.py ("OpenMP waits") explains the cause.

    python benchmarks/openmp_wait.py --repo /tmp/old-checkout --reps 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

LOOP = """
import sys, time
if {torch_first}:
    import torch
from bobshat_env.vector import VectorEnv
import numpy as np
import torch
B, steps = {batch}, {steps}
env = VectorEnv("bobs_hat", num_envs=B, players=4, copy_obs=False)
ts = env.reset(seed=0)
D, A = ts.obs.shape[1], ts.action_mask.shape[1]
net = torch.nn.Sequential(torch.nn.Linear(D, 64), torch.nn.ReLU(), torch.nn.Linear(64, A))
def one():
    global ts
    with torch.no_grad():
        logits = net(torch.from_numpy(ts.obs)).numpy()
    ts = env.step(np.where(ts.action_mask, logits, -1e9).argmax(1))
for _ in range(5):
    one()
c0, w0 = time.process_time(), time.perf_counter()
for _ in range(steps):
    one()
print(time.process_time() - c0, time.perf_counter() - w0)
"""

CASES = {
    "bobshat first": (False, None),
    "torch first": (True, None),
    "torch first, PASSIVE in shell": (True, "PASSIVE"),
}


def measure(repo: Path, torch_first: bool, policy: str | None, batch: int, steps: int) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of ``steps`` steps of the loop, run from ``repo``."""
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    env["PYTHONPATH"] = str(repo)
    if policy is not None:
        env["OMP_WAIT_POLICY"] = policy
    code = LOOP.format(torch_first=torch_first, batch=batch, steps=steps)
    # cwd too: ``python -c`` puts the working directory ahead of PYTHONPATH
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=repo, capture_output=True, text=True, check=True)
    cpu, wall = map(float, out.stdout.split())
    return cpu, wall


def main(argv: list[str] | None = None) -> None:
    """Measure every case for this checkout and each ``--repo``; print a table (and JSON with --json)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repo", action="append", default=[], help="another checkout to measure (repeatable)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument("--steps", type=int, default=120)
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    a = ap.parse_args(argv)
    repos = [Path(__file__).resolve().parents[1], *map(Path, a.repo)]
    got: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for rep in range(a.reps):
        for name, (torch_first, policy) in CASES.items():
            for repo in repos if rep % 2 == 0 else repos[::-1]:
                got.setdefault((str(repo), name), []).append(measure(repo, torch_first, policy, a.batch, a.steps))
    rows = [
        {
            "repo": repo,
            "case": name,
            "cpu_s": statistics.median(c for c, _ in runs),
            "wall_s": statistics.median(w for _, w in runs),
        }
        for (repo, name), runs in got.items()
    ]
    if a.json:
        print(json.dumps(rows, indent=1))
        return
    print(f"B={a.batch}, {a.steps} steps, median of {a.reps}")
    for r in rows:
        print(f"{r['repo']:<40} {r['case']:<32} cpu {r['cpu_s']:6.2f} s  wall {r['wall_s']:6.2f} s")


if __name__ == "__main__":
    main()
