"""Train sb3-contrib's MaskablePPO on one seat of Where's Bob's Hat? against bots.

    pip install -e ".[sb3]"
    python examples/maskable_ppo.py --timesteps 20000 --opponents random

The single-agent Gymnasium view (:mod:`bobshat.gym`) plays every other
seat with a bot and exposes ``action_masks()``, which MaskablePPO calls to keep
the policy on legal moves. After training, the script plays ``--eval-games``
games with the trained policy and, on the same deals, with the policy as it
was before training and with a uniformly random policy in the learner's seat,
and prints the three mean totals: what the training bought is the difference.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from bobshat.gym import CardGameGymEnv
from bobshat_env.games import GAMES, describe


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The example's flags: the game, the opponents, the budget, the evaluation."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--game", default=GAMES[0], choices=GAMES)
    p.add_argument("--players", type=int, default=4)
    p.add_argument("--hands", type=int, default=2, help="hands per game, where a game has them (fewer: faster)")
    p.add_argument("--opponents", default="random", help="agent spec(s) for the other seats")
    p.add_argument("--timesteps", type=int, default=4096, help="learner decisions to train on")
    p.add_argument("--eval-games", type=int, default=100)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--save", default=None, help="save the trained model to this .zip")
    return p.parse_args(argv)


def make_env(args: argparse.Namespace) -> CardGameGymEnv:
    """The learner's Gymnasium env; ``--hands`` goes to a game whose description lists it as an option."""
    options = {"players": args.players}
    if "hands" in describe(args.game).cli_options:
        options["hands"] = args.hands
    return CardGameGymEnv(args.game, opponents=args.opponents, **options)


def evaluate(env: CardGameGymEnv, policy, games: int, seed: int) -> float:
    """Mean final total of the learner's seat over ``games`` seeded games; ``policy(obs, mask) -> action``."""
    totals = []
    for i in range(games):
        obs, info = env.reset(seed=seed + i)
        done = False
        while not done:
            obs, _reward, terminated, truncated, info = env.step(policy(obs, env.action_masks()))
            done = terminated or truncated
        totals.append(info["final_scores"][env.seat])
    return float(np.mean(totals))


def main(argv: list[str] | None = None) -> dict[str, float]:
    """Train MaskablePPO against the opponents, then compare it with its untrained self and random play."""
    import torch
    from sb3_contrib import MaskablePPO  # optional extra [sb3]

    args = parse_args(argv)
    torch.set_num_threads(1)  # a small MLP: more threads only contend with the env for the cores
    env = make_env(args)
    model = MaskablePPO(
        "MlpPolicy",
        env,
        n_steps=512,
        batch_size=128,
        n_epochs=4,
        learning_rate=3e-4,
        gamma=1.0,  # episodes are short and the score is what counts
        seed=args.seed,
        verbose=0,
    )
    eval_env = make_env(args)

    def greedy(o, m):
        """The model's most probable legal action."""
        return int(model.predict(o, action_masks=m, deterministic=True)[0])

    # an untrained network's greedy play is not uniform, so it is its own baseline
    untrained = evaluate(eval_env, greedy, args.eval_games, 10_000)
    t0 = time.perf_counter()
    model.learn(total_timesteps=args.timesteps)
    seconds = time.perf_counter() - t0
    print(f"trained {args.timesteps} steps in {seconds:.1f} s ({args.timesteps / seconds:,.0f} steps/s)")
    if args.save:
        model.save(args.save)
        print(f"saved the model to {args.save}")

    gen = np.random.default_rng(args.seed)
    trained = evaluate(eval_env, greedy, args.eval_games, 10_000)
    random_ = evaluate(eval_env, lambda o, m: int(gen.choice(np.flatnonzero(m))), args.eval_games, 10_000)
    print(f"mean total over {args.eval_games} games vs {args.opponents}:")
    print(f"  MaskablePPO {trained:+.2f} (untrained {untrained:+.2f}), uniformly random {random_:+.2f}")
    return {"trained": trained, "untrained": untrained, "random": random_, "seconds": seconds}


if __name__ == "__main__":
    main()
