"""RLlib's PPO (its current API stack) on the PettingZoo env with action masking, then a duplicate evaluation.

    pip install -e ".[rllib]"
    python examples/rllib_ppo.py --iterations 5

For users who already run RLlib pipelines: our AEC env
(:mod:`bobshat_env.bobs_hat_v0`) goes through RLlib's ``PettingZooEnv``
wrapper, every seat maps to one shared module (parameter-sharing self-play),
and :class:`MaskedPPOModule` applies the legal-action mask the way RLlib's
action-masking RLModule example does: the observation is a ``Dict`` of
``observation`` and ``action_mask``, the network reads the observation and
illegal actions' logits are pushed to the float minimum, so they are never
sampled and get no gradient. After ``--iterations`` PPO iterations the
trained module plays a duplicate tournament (``train.evaluate``, the code of
``bobshat eval``) against ``random`` through :class:`RLlibAgent`, a small
adapter to the batched agent interface (observations and masks in, actions
out).

``bobshat train`` is the fast path (batched engine, one process); this is
the compatible one. The script prints its env steps per second so the two
can be compared (README, "Scaling out").
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

import numpy as np

try:
    import gymnasium as gym
    import torch
    from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
    from ray.rllib.core.columns import Columns
    from ray.rllib.utils.torch_utils import FLOAT_MIN
except ImportError as err:  # pragma: no cover - the message is the point
    raise SystemExit(f'this example needs RLlib ({err}); install it with: pip install -e ".[rllib]"') from None

OBS, MASK = "observation", "action_mask"  # the keys of the PettingZoo env's observation dict


class MaskedPPOModule(DefaultPPOTorchRLModule):
    """RLlib's default PPO torch module, reading ``observation`` and masking logits with ``action_mask``.

    RLlib builds the network for the ``observation`` part of the space; the
    mask is applied after every forward pass (inference, exploration,
    training), so the sampling distribution, the log-probabilities and the
    entropy all see only legal actions.
    """

    def __init__(self, *, observation_space: gym.Space | None = None, **kwargs: Any) -> None:
        if not isinstance(observation_space, gym.spaces.Dict) or set(observation_space) != {OBS, MASK}:
            raise ValueError(f"MaskedPPOModule needs a Dict observation space of {OBS!r} and {MASK!r}")
        self.space_with_mask = observation_space
        super().__init__(observation_space=observation_space[OBS], **kwargs)

    def setup(self) -> None:
        super().setup()  # the networks are built for the observation alone
        self.observation_space = self.space_with_mask  # what RLlib's connectors see

    @staticmethod
    def _split(batch: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        obs = batch[Columns.OBS]
        if not isinstance(obs, dict):
            raise ValueError(f"MaskedPPOModule got observations without {MASK!r}")
        return obs[MASK], {**batch, Columns.OBS: obs[OBS].float()}

    @staticmethod
    def _mask(out: dict[str, Any], mask: Any) -> dict[str, Any]:
        out[Columns.ACTION_DIST_INPUTS] = out[Columns.ACTION_DIST_INPUTS] + torch.clamp(
            torch.log(mask.float()), min=FLOAT_MIN
        )
        return out

    def _forward_inference(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask, batch = self._split(batch)
        return self._mask(super()._forward_inference(batch, **kwargs), mask)

    def _forward_exploration(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask, batch = self._split(batch)
        return self._mask(super()._forward_exploration(batch, **kwargs), mask)

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask, batch = self._split(batch)
        return self._mask(super()._forward_train(batch, **kwargs), mask)

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:
        if isinstance(batch[Columns.OBS], dict):
            _mask, batch = self._split(batch)
        return super().compute_values(batch, embeddings)


class RLlibAgent:
    """A trained RLlib module behind bobshat's batched agent interface: greedy over the legal actions."""

    def __init__(self, module: Any, name: str = "rllib_ppo") -> None:
        self.module, self.name = module, name

    def act(self, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray) -> np.ndarray:
        batch = {Columns.OBS: {OBS: torch.from_numpy(np.asarray(obs, np.float32)), MASK: torch.from_numpy(mask)}}
        with torch.no_grad():
            logits = self.module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
        return logits.argmax(dim=-1).numpy().astype(np.int64)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--players", type=int, default=4)
    p.add_argument("--hands", type=int, default=2, help="Bob's Hat hands per game (short games learn faster)")
    p.add_argument("--iterations", type=int, default=5, help="PPO iterations")
    p.add_argument("--batch", type=int, default=4000, help="env steps (all seats' decisions) per iteration")
    p.add_argument("--env-runners", type=int, default=0, help="RLlib EnvRunner actors (0: sample in this process)")
    p.add_argument("--eval-deals", type=int, default=200, help="duplicate deals against random")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", default=None, help="write the numbers printed at the end to this file")
    return p.parse_args(argv)


def build_config(args: argparse.Namespace) -> Any:
    """The PPOConfig: our AEC env through RLlib's PettingZoo wrapper, every seat on one masked module."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
    from ray.tune.registry import register_env

    from bobshat_env import bobs_hat_v0

    register_env("bobshat_bobs_hat", lambda cfg: PettingZooEnv(bobs_hat_v0.env(**cfg)))
    return (
        PPOConfig()
        # RLlib's env check steps unmasked random actions, which our env refuses (an illegal action is an error)
        .environment(
            "bobshat_bobs_hat", env_config={"players": args.players, "hands": args.hands}, disable_env_checking=True
        )
        .env_runners(num_env_runners=args.env_runners, num_envs_per_env_runner=1)
        .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent_id, episode, **kw: "shared")
        .rl_module(
            rl_module_spec=MultiRLModuleSpec(
                rl_module_specs={
                    "shared": RLModuleSpec(
                        module_class=MaskedPPOModule,
                        model_config={"fcnet_hiddens": [128, 128], "fcnet_activation": "relu", "vf_share_layers": True},
                    )
                }
            )
        )
        .training(
            train_batch_size_per_learner=args.batch,
            minibatch_size=min(1024, args.batch),
            num_epochs=2,
            lr=3e-4,
            gamma=1.0,
            vf_loss_coeff=0.5,
            entropy_coeff=0.01,
        )
        .debugging(seed=args.seed)
    )


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    import ray

    # One thread per process, as `bobshat train` runs (torch_threads: 1): on a busy 2-core machine torch's default
    # pool made each batch-1 forward pass of the sampling loop take ~7 ms instead of ~0.1 ms.
    torch.set_num_threads(1)

    from agents import register
    from bobshat_env.games import make_game
    from train.evaluate import evaluate

    if args.env_runners and __name__ != "__main__":  # EnvRunner actors need this module's classes by value
        import cloudpickle

        cloudpickle.register_pickle_by_value(sys.modules[__name__])
    owned = not ray.is_initialized()
    if owned:
        ray.init(num_cpus=max(1, args.env_runners + 1), include_dashboard=False, log_to_driver=False)
    try:
        algo = build_config(args).build_algo()
        t0 = time.perf_counter()
        steps = 0
        for it in range(1, args.iterations + 1):
            result = algo.train()
            steps = int(result["env_runners"]["num_env_steps_sampled_lifetime"])
            ret = result["env_runners"].get("agent_episode_returns_mean", {})
            mean_ret = float(np.mean(list(ret.values()))) if ret else float("nan")
            print(f"iteration {it}: {steps:,} env steps, mean return per seat {mean_ret:+.2f}", flush=True)
        seconds = time.perf_counter() - t0
        module = algo.get_module("shared")
        module.eval()
        game = make_game("bobs_hat", players=args.players, hands=args.hands)
        register("rllib_ppo", lambda game=None, seed=None: RLlibAgent(module))
        specs = ["rllib_ppo"] + ["random"] * (args.players - 1)
        summary = evaluate(game, specs, args.eval_deals, seed=args.seed + 1).summary()
        algo.stop()
    finally:
        if owned:
            ray.shutdown()
    me, rnd = summary["agents"]
    diff = summary["pairwise"][0]
    out = {
        "iterations": args.iterations,
        "env_steps": steps,
        "train_seconds": round(seconds, 2),
        "env_steps_per_s": round(steps / seconds, 1),
        "deals": args.eval_deals,
        "games": summary["games"],
        "policy_per_hand": me["mean_per_hand"],
        "random_per_hand": rnd["mean_per_hand"],
        "diff_per_hand": diff["diff_per_hand"],
        "diff_ci95": diff["ci95"],
    }
    print(
        f"trained {steps:,} env steps in {seconds:.1f} s ({out['env_steps_per_s']:,.0f} env steps/s); "
        f"duplicate vs random over {args.eval_deals} deals x {len(summary['seatings'])} seatings: "
        f"{me['mean_per_hand']:+.3f} vs {rnd['mean_per_hand']:+.3f} per hand, "
        f"difference {diff['diff_per_hand']:+.3f} ±{diff['ci95']:.3f}"
    )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=2)
    return out


if __name__ == "__main__":
    main()
