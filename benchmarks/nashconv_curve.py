"""Self-play PPO against ground truth: the exact NashConv of the kit's trainer over training, beside CFR+'s.

Issue 49's figure. On a small variant (one hand, a tree OpenSpiel walks
whole) the script

1. trains PPO as ``bobshat train`` does (:func:`train.ppo.run.train`, self-play
   with the pool) for a time budget, saving the policy every ``--every``
   iterations through the trainer's ``evaluate`` hook (the time the hook
   takes is left out of the training seconds);
2. computes the exact NashConv (:func:`train.exact.policy_values`) of every
   saved policy, played greedily (``ppo:PATH``) and sampled from its
   probabilities (``ppo:PATH,sample=true``), and logs them to the run's
   TensorBoard folder (tags ``exact/nashconv`` and ``exact/nashconv_sampled``,
   at the run's global step);
3. runs CFR+ (:func:`train.exact.run_cfr`) for the same seconds as PPO
   trained (its iterations only, the NashConv evaluations left out);
4. writes a JSON of ``(seconds, nash_conv)`` points for both and a PNG.

    python benchmarks/nashconv_curve.py --game oh_hell --minutes 5 --out docs/nashconv_oh_hell

NashConv is a sum over seats of what one seat gains by deviating alone; with
three players neither method is guaranteed to reach 0, and a greedy policy is
a pure strategy, which a mixed equilibrium cannot be.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# The trainer's settings for the tiny variants (a hand has a few decisions a seat): small batches, many updates.
TINY_TRAINING = {
    "players": 3,
    "num_envs": 64,
    "num_steps": 0,
    "hidden": [64, 64],
    "minibatch_size": 128,
    "update_epochs": 2,
    "eval_every": 0,
    "eval_opponents": [],
    "checkpoint_every": 10**6,
    "torch_threads": 1,
    "progress": False,
}


def train_ppo(
    game: str,
    variant: str,
    minutes: float,
    every: int,
    runs_dir: Path,
    seed: int = 0,
    total_decisions: int = 10**9,
    **overrides: Any,
) -> list[dict[str, Any]]:
    """Train PPO on ``game``'s ``variant`` for ``minutes`` (or ``total_decisions``), saving the policy every
    ``every`` iterations; returns ``{"iteration", "seconds", "global_step", "path"}`` per saved policy."""
    from agents.checkpoint import POLICY_PREFIX, net_meta, save_checkpoint
    from train.ppo.config import parse_args
    from train.ppo.run import train

    args = parse_args(["--game", game, "--runs-dir", str(runs_dir), "--seed", str(seed)])
    settings = {**TINY_TRAINING, **overrides}
    args = dataclasses.replace(
        args,
        game_options={"variant": variant},
        total_decisions=total_decisions,
        time_limit_min=minutes,
        run_name=f"nashconv_{game}_{variant}",
        **settings,
    )
    saved: list[dict[str, Any]] = []
    state = {"it": 0, "hook_s": 0.0, "t0": time.perf_counter()}
    policies = runs_dir / "policies"
    policies.mkdir(parents=True, exist_ok=True)
    from bobshat_env.games import make_game

    table = make_game(game, players=args.players, variant=variant)

    def hook(net: Any, counters: Any) -> dict[str, float]:
        t_hook = time.perf_counter()
        state["it"] += 1
        it = state["it"]
        if it % every == 0 or it == 1:
            path = policies / f"policy_{it:05d}.pt"
            tensors = {POLICY_PREFIX + k: v.detach().clone() for k, v in net.state_dict().items()}
            save_checkpoint(path, tensors, {**net_meta(table, net), "global_step": counters.global_step})
            seconds = t_hook - state["t0"] - state["hook_s"]
            saved.append({"iteration": it, "seconds": seconds, "global_step": counters.global_step, "path": path})
        state["hook_s"] += time.perf_counter() - t_hook
        return {}

    # eval_every 0 calls the hook once, at the end; 1 calls it each iteration (the duplicate evaluation is off:
    # no eval_opponents)
    args = dataclasses.replace(args, eval_every=1)
    state["t0"] = time.perf_counter()
    train(args, evaluate=hook)
    return saved


def nashconv_curve(
    game: str,
    variant: str = "tiny",
    minutes: float = 1.0,
    every: int = 5,
    runs_dir: Path | None = None,
    seed: int = 0,
    total_decisions: int = 10**9,
    log: Any = None,
    **overrides: Any,
) -> dict[str, Any]:
    """PPO's and CFR+'s NashConv curves on ``game``'s ``variant`` at equal training seconds (module docstring)."""
    from train.exact import AgentPolicy, TreeCopy, load_game, policy_values, run_cfr

    say = log or (lambda _msg: None)
    keep = runs_dir is not None
    runs = Path(runs_dir) if keep else Path(tempfile.mkdtemp(prefix="nashconv_"))
    try:
        saved = train_ppo(game, variant, minutes, every, runs, seed, total_decisions, **overrides)
        ppo_seconds = saved[-1]["seconds"]
        say(f"ppo: {len(saved)} policies saved in {ppo_seconds:.1f} s of training")
        spiel = load_game(game, {"variant": variant})
        tree = TreeCopy(spiel)
        ppo = []
        for point in saved:
            values = {}
            for mode, spec in (("greedy", f"ppo:{point['path']}"), ("sampled", f"ppo:{point['path']},sample=true")):
                values[mode] = policy_values(tree.game, tree.policy(AgentPolicy(spiel, spec, seed=seed)))["nash_conv"]
            ppo.append({k: point[k] for k in ("iteration", "seconds", "global_step")} | {
                "nash_conv": values["greedy"],
                "nash_conv_sampled": values["sampled"],
            })
            say(f"ppo iteration {point['iteration']} ({point['seconds']:.1f} s): NashConv greedy {values['greedy']:.4g}"
                f", sampled {values['sampled']:.4g}")
        run_dir = runs / f"nashconv_{game}_{variant}"
        _log_board(run_dir, ppo)
        cfr = run_cfr(tree.game, 10**9, time_limit_s=max(ppo_seconds, 1e-3), log=say)
        return {
            "game": game,
            "variant": variant,
            "players": spiel.num_players(),
            "score_range": [spiel.min_utility(), spiel.max_utility()],
            "seed": seed,
            "ppo": {"seconds": ppo_seconds, "curve": ppo, "settings": {**TINY_TRAINING, **overrides}},
            "cfr": {"seconds": cfr["curve"][-1]["seconds"], "iterations": cfr["iterations"], "curve": cfr["curve"]},
        }
    finally:
        if not keep:
            shutil.rmtree(runs, ignore_errors=True)


def _log_board(run_dir: Path, ppo: list[dict[str, Any]]) -> None:
    """PPO's exact NashConv into the run's TensorBoard folder, at the run's global steps."""
    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(str(run_dir))
    try:
        for point in ppo:
            writer.add_scalar("exact/nashconv", point["nash_conv"], point["global_step"])
            writer.add_scalar("exact/nashconv_sampled", point["nash_conv_sampled"], point["global_step"])
    finally:
        writer.close()


def plot(result: dict[str, Any], path: Path) -> None:
    """NashConv against training seconds, log scale: PPO greedy and sampled, CFR+ average policy."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    ppo, cfr = result["ppo"]["curve"], result["cfr"]["curve"]
    ax.plot([p["seconds"] for p in ppo], [p["nash_conv"] for p in ppo], "o-", ms=3, label="PPO self-play, greedy")
    ax.plot([p["seconds"] for p in ppo], [p["nash_conv_sampled"] for p in ppo], "s-", ms=3, label="PPO, sampled")
    ax.plot([p["seconds"] for p in cfr], [p["nash_conv"] for p in cfr], "^-", ms=3, label="CFR+ average policy")
    ax.set_yscale("log")
    ax.set_xlabel("training seconds (one core)")
    ax.set_ylabel("exact NashConv (points per hand)")
    ax.set_title(f"{result['game']} {result['variant']} variant, {result['players']} players")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def check_finite(result: dict[str, Any]) -> None:
    """ValueError naming the first NashConv that is negative or not finite (a broken evaluation)."""
    for who, key in (("ppo", "nash_conv"), ("ppo", "nash_conv_sampled"), ("cfr", "nash_conv")):
        for point in result[who]["curve"]:
            v = point[key]
            if not math.isfinite(v) or v < -1e-9:
                raise ValueError(f"{who} {key} at {point['seconds']:.1f} s is {v!r}: expected finite and >= 0")


def main(argv: list[str] | None = None) -> int:
    """Parse, run, write ``OUT.json`` and ``OUT.png``; 2 with one line on bad input."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--game", choices=("oh_hell", "bobs_hat"), default="oh_hell")
    ap.add_argument("--variant", default="tiny", help="a small variant (docs/rules.md); its tree must fit in memory")
    ap.add_argument("--minutes", type=float, default=1.0, help="PPO's training budget; CFR+ gets the same seconds")
    ap.add_argument("--every", type=int, default=5, help="iterations between saved policies")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--runs-dir", default="", help="keep the run (TensorBoard, policies) here; default: a temp dir")
    ap.add_argument("--out", default="nashconv_curve", help="writes OUT.json and OUT.png")
    ns = ap.parse_args(argv)
    if ns.minutes <= 0 or ns.every < 1:
        print("error: --minutes must be > 0 and --every >= 1", file=sys.stderr)
        return 2
    out = Path(ns.out)
    if not out.parent.is_dir():  # found before the minutes of training, not after
        print(f"error: --out {ns.out}: folder {out.parent} does not exist", file=sys.stderr)
        return 2
    try:
        result = nashconv_curve(
            ns.game, ns.variant, ns.minutes, ns.every, Path(ns.runs_dir) if ns.runs_dir else None, ns.seed,
            log=lambda m: print(m, file=sys.stderr, flush=True),
        )
        check_finite(result)
    except (ValueError, KeyError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    out.with_suffix(".json").write_text(json.dumps(result, indent=1) + "\n")
    plot(result, out.with_suffix(".png"))
    print(f"wrote {out.with_suffix('.json')} and {out.with_suffix('.png')}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
