"""Self-play PPO against ground truth: the exact NashConv of the kit's trainer over training, beside CFR+'s.

Issue 49's figure. On a small variant (one hand, a tree OpenSpiel walks
whole) the script

1. trains PPO as ``bobshat train`` does (:func:`train.ppo.run.train`, self-play
   with the pool) for a time budget (after an untimed warm-up iteration
   that loads the numba kernels), saving the policy every ``--every``
   iterations through the trainer's ``evaluate`` hook (the time the hook
   takes is left out of the training seconds);
2. computes the exact NashConv (:func:`train.exact.policy_values`) of every
   saved policy, played greedily (``ppo:PATH``) and sampled from its
   probabilities (``ppo:PATH,sample=true``), and logs them to the run's
   TensorBoard folder (tags ``exact/nashconv`` and ``exact/nashconv_sampled``,
   at the run's global step);
3. runs CFR+ (:func:`train.exact.run_cfr`) for the same seconds as PPO
   trained (its iterations only, the NashConv evaluations left out);
4. trains OpenSpiel's NFSP (``open_spiel.python.pytorch.nfsp``, one agent a
   seat, through ``rl_environment.Environment``) on the same registered game
   (``python_<game>`` with the variant: the game the exact NashConv walks)
   for the same seconds, and takes the exact NashConv of its average policy
   after the first episode, at doubling episode counts (:func:`nfsp_points`)
   and at the end (the evaluations left out of its seconds too;
   ``--no-nfsp`` skips it); its settings are :data:`NFSP_SETTINGS`;
5. writes a JSON of ``(seconds, nash_conv)`` points for each method and a PNG.

    python benchmarks/nashconv_curve.py --game oh_hell --minutes 5 --out docs/nashconv_oh_hell

NashConv is a sum over seats of what one seat gains by deviating alone; with
three players neither method is guaranteed to reach 0, and a greedy policy is
a pure strategy, which a mixed equilibrium cannot be.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import math
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

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


# OpenSpiel's NFSP example for Leduc poker (open_spiel/python/examples/nfsp_leduc_pytorch.py) scaled down to a
# budget of minutes; the example's value after each changed one: a smaller network and buffers, learning that
# starts sooner, the target network renewed more often, exploration that decays within the run.
NFSP_SETTINGS = {
    "hidden_layers_sizes": [64],  # [128]
    "replay_buffer_capacity": 20_000,  # 200_000
    "reservoir_buffer_capacity": 50_000,  # 2_000_000
    "min_buffer_size_to_learn": 256,  # 1000
    "anticipatory_param": 0.1,
    "batch_size": 128,
    "learn_every": 64,
    "rl_learning_rate": 0.01,
    "sl_learning_rate": 0.01,
    "optimizer_str": "sgd",
    "loss_str": "mse",
    "update_target_network_every": 1000,  # 19_200
    "discount_factor": 1.0,
    "epsilon_decay_duration": 100_000,  # 20_000_000
    "epsilon_start": 0.06,
    "epsilon_end": 0.001,
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


def legal_distribution(probs: Any, legal: list[int]) -> dict[int, float]:
    """``{action: probability}`` over the ``legal`` actions from a network's probabilities over all actions,
    renormalized in float64 (the network's float32 softmax sums to 1 only roughly); ValueError if they hold no mass."""
    p = np.asarray([max(float(probs[a]), 0.0) for a in legal], dtype=np.float64)
    total = float(p.sum())
    if not math.isfinite(total) or total <= 0:
        raise ValueError(f"the NFSP average policy gives the legal actions {legal} no probability")
    return {int(a): float(v) for a, v in zip(legal, p / total)}


def nfsp_average_policy(game: Any, agents: list[Any]) -> Any:
    """The average policies of NFSP ``agents`` (one a seat of ``game``) as one OpenSpiel ``Policy`` over all
    players: each seat's average network, asked with the seat's information state tensor, as OpenSpiel's NFSP
    examples evaluate it, its probabilities put on the legal actions (:func:`legal_distribution`).

    Asking leaves the global NumPy random state as it was (NFSP's ``step`` draws an action from it), so the
    evaluations do not change the training they interrupt.
    """
    return _average_policy_class()(game, agents)


@functools.cache
def _average_policy_class() -> type:
    """The class of :func:`nfsp_average_policy`, made on first use (OpenSpiel is an optional dependency)."""
    from open_spiel.python import policy, rl_environment
    from open_spiel.python.pytorch.nfsp import MODE

    class NFSPAveragePolicy(policy.Policy):  # type: ignore[misc]
        def __init__(self, game: Any, agents: list[Any]):
            super().__init__(game, list(range(game.num_players())))
            self.agents = agents

        def action_probabilities(self, state: Any, player_id: int | None = None) -> dict[int, float]:
            player = state.current_player() if player_id is None else player_id
            legal = state.legal_actions(player)
            seats = self.game.num_players()
            obs: dict[str, Any] = {"info_state": [None] * seats, "legal_actions": [None] * seats}
            obs["current_player"] = player
            obs["info_state"][player] = state.information_state_tensor(player)
            obs["legal_actions"][player] = legal
            step = rl_environment.TimeStep(observations=obs, rewards=None, discounts=None, step_type=None)
            rng = np.random.get_state()
            try:
                with self.agents[player].temp_mode_as(MODE.AVERAGE_POLICY):
                    probs = self.agents[player].step(step, is_evaluation=True).probs
            finally:
                np.random.set_state(rng)
            return legal_distribution(probs, legal)

    return NFSPAveragePolicy


def nfsp_points(i: int) -> bool:
    """Whether NFSP's curve gets a point after episode ``i`` (1-based): the first episode, then the powers of two
    from 128 on (before, the average network has not begun to learn: each evaluation costs seconds and the same)."""
    return i == 1 or (i >= 128 and i & (i - 1) == 0)


def train_nfsp(
    spiel: Any,
    tree: Any,
    seconds: float,
    seed: int = 0,
    log: Any = None,
    checkpoint: Any = nfsp_points,
    **overrides: Any,
) -> dict[str, Any]:
    """OpenSpiel's NFSP on ``spiel`` (one of our registered games) for ``seconds`` of training, one agent a seat.

    The exact NashConv of the average policy (:func:`nfsp_average_policy`, walked on ``tree``, the game's
    :class:`train.exact.TreeCopy`) at the episodes ``checkpoint`` picks and at the last one; the time the
    evaluations take is left out of the seconds. Returns ``seconds``, ``episodes``, ``steps``, ``settings`` and
    ``curve`` (a list of ``{"episode", "steps", "seconds", "nash_conv"}``).
    """
    import torch
    from open_spiel.python import rl_environment
    from open_spiel.python.pytorch import nfsp

    from train.exact import policy_values

    torch.set_num_threads(1)  # one core, as PPO's torch_threads
    settings = {**NFSP_SETTINGS, **overrides}
    env = rl_environment.Environment(spiel, seed=seed)
    size = env.observation_spec()["info_state"][0]
    actions = env.action_spec()["num_actions"]
    agents = [nfsp.NFSP(p, size, actions, seed=seed + 10 * p, **settings) for p in range(spiel.num_players())]
    policy = nfsp_average_policy(spiel, agents)
    curve: list[dict[str, Any]] = []
    spent, episodes, steps = 0.0, 0, 0
    while True:
        t0 = time.perf_counter()
        time_step = env.reset()
        while not time_step.last():
            player = time_step.observations["current_player"]
            time_step = env.step([agents[player].step(time_step).action])
            steps += 1
        for agent in agents:
            agent.step(time_step)
        spent += time.perf_counter() - t0
        episodes += 1
        last = spent >= seconds
        if checkpoint(episodes) or last:
            nash_conv = policy_values(tree.game, tree.policy(policy))["nash_conv"]
            curve.append({"episode": episodes, "steps": steps, "seconds": spent, "nash_conv": nash_conv})
            if log:
                log(f"nfsp episode {episodes} ({spent:.1f} s): NashConv of the average policy {nash_conv:.4g}")
        if last:
            break
    return {"seconds": spent, "episodes": episodes, "steps": steps, "settings": settings, "curve": curve}


def nashconv_curve(
    game: str,
    variant: str = "tiny",
    minutes: float = 1.0,
    every: int = 5,
    runs_dir: Path | None = None,
    seed: int = 0,
    total_decisions: int = 10**9,
    log: Any = None,
    nfsp: bool = True,
    **overrides: Any,
) -> dict[str, Any]:
    """PPO's, CFR+'s and (``nfsp``) NFSP's NashConv curves on ``game``'s ``variant`` at equal training seconds
    (module docstring); ``overrides`` change PPO's settings."""
    from train.exact import AgentPolicy, TreeCopy, load_game, policy_values, run_cfr

    say = log or (lambda _msg: None)
    keep = runs_dir is not None
    runs = Path(runs_dir) if keep else Path(tempfile.mkdtemp(prefix="nashconv_"))
    try:
        # untimed: a process's first iteration loads (or compiles) the numba kernels, which is not training
        train_ppo(game, variant, minutes, every, runs / "warm_up", seed, total_decisions=1, **overrides)
        shutil.rmtree(runs / "warm_up", ignore_errors=True)
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
        result = {
            "game": game,
            "variant": variant,
            "players": spiel.num_players(),
            "score_range": [spiel.min_utility(), spiel.max_utility()],
            "seed": seed,
            "ppo": {"seconds": ppo_seconds, "curve": ppo, "settings": {**TINY_TRAINING, **overrides}},
            "cfr": {"seconds": cfr["curve"][-1]["seconds"], "iterations": cfr["iterations"], "curve": cfr["curve"]},
        }
        if nfsp:
            result["nfsp"] = train_nfsp(spiel, tree, max(ppo_seconds, 1e-3), seed, log=say)
        return result
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
    """NashConv against training seconds, log scale: PPO greedy and sampled, CFR+ and NFSP average policies."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    ppo, cfr = result["ppo"]["curve"], result["cfr"]["curve"]
    ax.plot([p["seconds"] for p in ppo], [p["nash_conv"] for p in ppo], "o-", ms=3, label="PPO self-play, greedy")
    ax.plot([p["seconds"] for p in ppo], [p["nash_conv_sampled"] for p in ppo], "s-", ms=3, label="PPO, sampled")
    ax.plot([p["seconds"] for p in cfr], [p["nash_conv"] for p in cfr], "^-", ms=3, label="CFR+ average policy")
    if "nfsp" in result:
        nfsp = result["nfsp"]["curve"]
        ax.plot([p["seconds"] for p in nfsp], [p["nash_conv"] for p in nfsp], "d-", ms=3,
                label="NFSP average policy (OpenSpiel)")
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
    for who, key in (("ppo", "nash_conv"), ("ppo", "nash_conv_sampled"), ("cfr", "nash_conv"), ("nfsp", "nash_conv")):
        for point in result.get(who, {"curve": []})["curve"]:
            v = point[key]
            if not math.isfinite(v) or v < -1e-9:
                raise ValueError(f"{who} {key} at {point['seconds']:.1f} s is {v!r}: expected finite and >= 0")


def main(argv: list[str] | None = None) -> int:
    """Parse, run, write ``OUT.json`` and ``OUT.png``; 2 with one line on bad input."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--game", choices=("oh_hell", "bobs_hat"), default="oh_hell")
    ap.add_argument("--variant", default="tiny", help="a small variant (docs/rules.md); its tree must fit in memory")
    ap.add_argument("--minutes", type=float, default=1.0, help="PPO's training budget; CFR+ and NFSP get its seconds")
    ap.add_argument("--every", type=int, default=5, help="iterations between saved policies")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--runs-dir", default="", help="keep the run (TensorBoard, policies) here; default: a temp dir")
    ap.add_argument("--out", default="nashconv_curve", help="writes OUT.json and OUT.png")
    ap.add_argument("--nfsp", action=argparse.BooleanOptionalAction, default=True,
                    help="also train OpenSpiel's NFSP for PPO's seconds (default: on)")
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
            log=lambda m: print(m, file=sys.stderr, flush=True), nfsp=ns.nfsp,
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
