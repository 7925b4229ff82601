"""Training speed: the default preset's table decisions per second, and where one iteration's time goes.

Run it as ``bobshat bench --train [--repo OLD_CHECKOUT] [--reps 3] [--decisions N] [--json FILE]``, or
``python benchmarks/train_speed.py ...`` with the same flags. Each measurement is one run of the trainer
(:func:`train.ppo.run.train`) on ``configs/bobs_hat_4p.yaml`` for ``decisions`` table decisions, without
evaluation (``--eval-every -1``; ``0`` would still evaluate at the first and last iterations), in a fresh
Python process whose ``PYTHONPATH`` is the checkout measured:
this one, and each ``--repo`` (an older commit, e.g. ``git worktree add /tmp/speed-old c7bbf2c``), so old
and new code are measured in the same session, interleaved (the order alternates from one repetition to the
next), ``reps`` times; medians are reported, and the first checkout's speed-up over each other one.

Rates count the iterations only (:meth:`TrainingRun.run`, not the set-up: imports, compiling or loading the
game kernels, the first deal), by wall time and by process CPU time (all threads). The machine may be
shared: CPU time is the steadier figure, wall time what a user waits for.

The time split is measured by wrapping public methods of the trainer, the envs and the agents (``TIMED``,
each by its name on its class, so the same wrapping works on older checkouts; a test checks every one exists
here, so a rename cannot silently empty a part) with timers that count *exclusive* time (a wrapped call
inside another is taken out of the outer one):

==================  =====================================================================================
part                what it wraps
==================  =====================================================================================
engine              ``VectorEnv.step`` (the game's step and same-step reset), less the observation
observation         ``Game.legal_action_mask`` and ``Game.observe`` (the bound game's mask and observation),
                    every caller
features            ``PolicyNet.prepare`` (trump relabelling and trick features), every caller
learner network     ``RolloutCollector.learner_acts`` less features: the learner's forward pass,
                    sampling, and storing its decisions
opponents' nets     ``PPOAgent.act`` less features: the pool's snapshots
heuristics          ``SeatDispatch.act_rows`` less the above: heuristic bots (and the dispatch)
rollout other       the rest of ``collect_rollout`` (``run_rollout``): rewards, reseating, GAE, the bootstrap values
update              ``Learner.update`` (the PPO epochs)
evaluation/logging  ``TrainingRun.log`` (scalars, TensorBoard; evaluation when due, its games included)
checkpoint          ``TrainingRun.save``
pool                ``TrainingRun.grow_pool`` (snapshots)
other               the rest of the iterations
==================  =====================================================================================

With ``overlap_rollout`` (every table preset) the next rollout runs on its own thread during the update:
each thread's calls are timed apart, the rollout's parts overlap the update's wall time (which includes
waiting for the rollout to end), so the parts add up to more than the wall time, and each part's CPU
seconds are the process's (both threads) while it ran.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

PRESET = "configs/bobs_hat_4p.yaml"
WARMUP_DECISIONS = 400_000  # one iteration of the preset (1,024 games x 430 steps)
PARTS = (
    "engine",
    "observation",
    "features",
    "learner network",
    "opponents' nets",
    "heuristics",
    "rollout other",
    "update",
    "evaluation/logging",
    "checkpoint",
    "pool",
    "other",
)


class Split:
    """Exclusive wall and CPU seconds per part: nested timed calls are taken out of the enclosing one."""

    def __init__(self) -> None:
        self.wall = dict.fromkeys(PARTS, 0.0)
        self.cpu = dict.fromkeys(PARTS, 0.0)
        self._local = threading.local()  # per thread (overlap_rollout's rollout runs beside the update)

    @property
    def stack(self) -> list[list[float]]:
        """This thread's open calls: [child wall, child cpu] each."""
        if not hasattr(self._local, "stack"):
            self._local.stack, self._local.absorbing = [], 0
        return self._local.stack

    @property
    def absorbing(self) -> int:
        """Inside a part that keeps all its time (the evaluation's games are evaluation), in this thread."""
        self.stack  # noqa: B018  # makes this thread's counters
        return self._local.absorbing

    @absorbing.setter
    def absorbing(self, value: int) -> None:
        self._local.absorbing = value

    def wrap(self, owner: Any, name: str, part: str, absorb: bool = False) -> None:
        """Replace ``owner.name`` (a function on a class) by a timed one counted to ``part``; with ``absorb``,
        the wrapped calls inside it count to ``part`` too."""
        fn = getattr(owner, name)

        def timed(*a: Any, **k: Any) -> Any:
            if self.absorbing:
                return fn(*a, **k)
            t, c = time.perf_counter(), time.process_time()
            self.stack.append([0.0, 0.0])
            self.absorbing += absorb
            try:
                return fn(*a, **k)
            finally:
                self.absorbing -= absorb
                child_w, child_c = self.stack.pop()
                dw, dc = time.perf_counter() - t, time.process_time() - c
                self.wall[part] += dw - child_w
                self.cpu[part] += dc - child_c
                if self.stack:
                    self.stack[-1][0] += dw
                    self.stack[-1][1] += dc

        setattr(owner, name, timed)


# The timed points: (module, class, method, part, absorbs the wrapped calls inside it). Public methods only.
TIMED: tuple[tuple[str, str, str, str, bool], ...] = (
    ("bobshat_env.vector", "VectorEnv", "step", "engine", False),
    ("bobshat_env.games", "Game", "legal_action_mask", "observation", False),
    ("bobshat_env.games", "Game", "observe", "observation", False),
    ("agents.ppo_agent", "PolicyNet", "prepare", "features", False),
    ("train.ppo.collector", "RolloutCollector", "learner_acts", "learner network", False),
    ("agents.ppo_agent", "PPOAgent", "act", "opponents' nets", False),
    ("bobshat_env.seating", "SeatDispatch", "act_rows", "heuristics", False),
    ("train.ppo.collector", "RolloutCollector", "collect_rollout", "rollout other", False),
    ("train.ppo.collector", "RolloutCollector", "run_rollout", "rollout other", False),  # overlap's thread: alone
    ("train.ppo.learner", "Learner", "update", "update", False),
    ("train.ppo.run", "TrainingRun", "log", "evaluation/logging", True),
    ("train.ppo.run", "TrainingRun", "save", "checkpoint", True),
    ("train.ppo.run", "TrainingRun", "grow_pool", "pool", False),
    ("train.ppo.run", "TrainingRun", "run", "other", False),
)


def timed_points() -> list[tuple[Any, str, str, bool]]:
    """(class, method, part, absorb) of each ``TIMED`` point the checkout on ``sys.path`` has (an older one may
    lack some: its part then reads 0)."""
    import importlib

    found = []
    for module, cls, name, part, absorb in TIMED:
        try:
            owner = getattr(importlib.import_module(module), cls)
        except (ImportError, AttributeError):
            continue
        if hasattr(owner, name):
            found.append((owner, name, part, absorb))
    return found


def instrument(split: Split) -> None:
    """Wrap the checkout's ``TIMED`` points (see the module's table) with ``split``'s timers."""
    for owner, name, part, absorb in timed_points():
        split.wrap(owner, name, part, absorb)


def measure(decisions: int, extra: list[str], split: bool = True) -> dict[str, Any]:
    """One training run of the preset in this process (the checkout on ``sys.path``): its rates and split."""
    from train.ppo.config import parse_args
    from train.ppo.run import TrainingRun, train

    timer = Split()
    if split:
        instrument(timer)
    outer = TrainingRun.run  # the iterations' own clock, whether or not the parts are wrapped
    clock: dict[str, float] = {}

    def run(self: Any) -> Any:
        t, c = time.perf_counter(), time.process_time()
        try:
            return outer(self)
        finally:
            clock["wall"], clock["cpu"] = time.perf_counter() - t, time.process_time() - c

    TrainingRun.run = run
    with tempfile.TemporaryDirectory() as runs:
        argv = ["--config", PRESET, "--total-decisions", str(decisions), "--eval-every", "-1", "--progress", "false"]
        summary = train(parse_args([*argv, "--runs-dir", runs, *extra]))
    table, learner = summary["decisions_this_run"], summary["learner_decisions"]
    return {
        "table_decisions": table,
        "learner_decisions": learner,
        "iterations": summary["iteration"],
        "wall_s": clock["wall"],
        "cpu_s": clock["cpu"],
        "table_per_s_wall": table / clock["wall"],
        "table_per_s_cpu": table / clock["cpu"],
        "learner_per_s_wall": learner / clock["wall"],
        "split_wall_s": timer.wall if split else {},
        "split_cpu_s": timer.cpu if split else {},
    }


def run_checkout(repo: Path, decisions: int, extra: list[str], split: bool) -> dict[str, Any]:
    """:func:`measure` in a fresh process that imports ``repo``'s code (its trainer, engine and preset)."""
    env = dict(os.environ, PYTHONPATH=str(repo))
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", "--decisions", str(decisions)]
    cmd += ["--no-split"] * (not split) + [f"--extra={e}" for e in extra]
    out = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True, check=False)
    if out.returncode:
        raise RuntimeError(f"{repo}: the training run failed:\n{out.stderr[-2000:]}")
    row = json.loads(out.stdout.strip().splitlines()[-1])
    row["repo"] = str(repo)
    row["load_avg_1m"] = os.getloadavg()[0]
    return row


def bench(
    repos: list[Path],
    decisions: int = 1_500_000,
    reps: int = 3,
    extra: list[str] | None = None,
    split: bool = True,
    log: Callable[[str], None] | None = None,
    warmup: int = 1,
) -> tuple[list[dict[str, Any]], str]:
    """Every checkout in ``repos`` ``reps`` times, interleaved; the rows and a text summary (:func:`summary`).

    First ``warmup`` unmeasured runs per checkout (of at most ``WARMUP_DECISIONS``): a kernel whose source
    changed compiles at its first call, inside the iterations, and numba caches it on disk, so only a
    checkout's first run after a change pays for it (docs/results/engineering.md)."""
    for _ in range(warmup):
        for repo in repos:
            run_checkout(repo, min(decisions, WARMUP_DECISIONS), list(extra or []), False)
            if log:
                log(f"warm-up {repo}: done (not measured)")
    rows: list[dict[str, Any]] = []
    for rep in range(reps):
        order = list(enumerate(repos)) if rep % 2 == 0 else list(reversed(list(enumerate(repos))))
        for i, repo in order:
            row = run_checkout(repo, decisions, list(extra or []), split) | {"rep": rep, "checkout": i}
            rows.append(row)
            if log:
                log(
                    f"rep {rep} {repo}: {row['table_per_s_wall']:,.0f}/s wall, {row['table_per_s_cpu']:,.0f}/s cpu, "
                    f"load {row['load_avg_1m']:.1f}"
                )
    return rows, summary(rows, repos)


def summary(rows: list[dict[str, Any]], repos: list[Path]) -> str:
    """Medians per checkout, the speed-up of the first over each other one (the median of the ratios of
    runs of the same repetition), the time split of each checkout's median run."""
    lines = [f"table decisions/s, median of {max(r['rep'] for r in rows) + 1} runs (iterations only):"]
    by = {i: [r for r in rows if r["checkout"] == i] for i in range(len(repos))}
    for i, repo in enumerate(repos):
        rs = by[i]
        wall = statistics.median(r["table_per_s_wall"] for r in rs)
        cpu = statistics.median(r["table_per_s_cpu"] for r in rs)
        lw = statistics.median(r["learner_per_s_wall"] for r in rs)
        lines.append(f"  [{i}] {repo}: {wall:,.0f}/s wall, {cpu:,.0f}/s cpu; learner {lw:,.0f}/s wall")
        if i:
            for key in ("table_per_s_wall", "table_per_s_cpu"):
                pairs = [b[key] / a[key] for a, b in zip(rs, by[0], strict=True)]
                each = " ".join(f"{x:.2f}" for x in pairs)
                med = statistics.median(pairs)
                lines.append(
                    f"      speed-up of [0] over [{i}] ({key[-4:]}): median {med:.2f} of {len(pairs)} pairs: {each}"
                )
    for i in range(len(repos)):
        rs = sorted(by[i], key=lambda r: r["table_per_s_cpu"])
        mid = rs[len(rs) // 2]
        if not mid["split_cpu_s"]:
            continue
        total = sum(mid["split_cpu_s"].values()) or 1.0
        lines.append(f"  [{i}] split of the median run (cpu s, share; wall s), {mid['cpu_s']:.1f} s cpu in all:")
        for part in PARTS:
            c, w = mid["split_cpu_s"].get(part, 0.0), mid["split_wall_s"].get(part, 0.0)
            lines.append(f"      {part:<20} {c:7.2f} {100 * c / total:5.1f}%  {w:7.2f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """``python benchmarks/train_speed.py`` (``--worker``: one measurement as a JSON line, for :func:`bench`)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repo", action="append", default=[], help="another checkout to measure (repeatable)")
    p.add_argument("--decisions", type=int, default=1_500_000, help="table decisions per run")
    p.add_argument("--reps", type=int, default=3, help="runs per checkout (median)")
    p.add_argument("--json", default=None, help="write the rows as JSON to this file")
    p.add_argument("--extra", action="append", default=[], help="an extra train flag, e.g. --extra=--bf16=false")
    p.add_argument("--no-split", action="store_true", help="no timers inside the trainer")
    p.add_argument("--warmup", type=int, default=1, help="unmeasured runs per checkout first (kernels compile)")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.worker:
        print(json.dumps(measure(a.decisions, a.extra, split=not a.no_split)))
        return 0
    here = Path(__file__).resolve().parent.parent
    repos = [here, *(Path(r).resolve() for r in a.repo)]
    for repo in repos:
        if not (repo / "train" / "ppo" / "run.py").is_file() or not (repo / PRESET).is_file():
            print(
                f"bobshat bench: error: --repo {repo}: not a bobshat checkout with train/ppo/ and {PRESET}",
                file=sys.stderr,
            )
            return 2
    if a.json and a.json != "-":  # refused before minutes of measuring, not after (the rows would be lost)
        from bobshat_env.paths import check_writable

        try:
            check_writable(a.json, "--json")
        except ValueError as e:
            print(f"bobshat bench: error: {e}", file=sys.stderr)
            return 2
    from train.runtime.pool import sigterm_as_exit

    # SIGTERM raises SystemExit here, and subprocess.run then kills the measuring run instead of orphaning it
    with sigterm_as_exit():
        log = lambda m: print(m, file=sys.stderr)  # noqa: E731
        rows, text = bench(repos, a.decisions, a.reps, a.extra, not a.no_split, log=log, warmup=a.warmup)
    print(text)
    if a.json == "-":  # stdout, as for the throughput bench: after the summary, the rows
        print(json.dumps(rows, indent=1))
    elif a.json:
        from bobshat_env.paths import replace_bytes  # the one atomic writer

        replace_bytes(a.json, (json.dumps(rows, indent=1) + "\n").encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
