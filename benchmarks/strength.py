"""Strength benchmark: duplicate games between two bots, score difference per hand with a 95% CI.

Each *deal* is one hand's cards. The benchmark plays ``ceil(deals / hands)``
games (their chance keys fixed by ``--seed``: game ``i`` has the same trump
and cards in every hand whoever plays it) and plays every game ``P`` times,
bot A in seat ``r`` and bot B in the other seats, for ``r = 0 .. P-1``. The
measure is A's score minus the mean score of the B seats, per hand, averaged
over the ``P`` seatings of a game; the games are independent, so the mean and
its 95% confidence interval (normal, ``1.96 * sd / sqrt(games)``) are taken
over games. The games are played by :func:`train.evaluate.duplicate.play_duplicate`,
one seating at a time in batches of ``--batch-size``.
Decision time per move is measured around each bot's ``act`` (wall-clock
seconds for all its decisions divided by their number).

    python benchmarks/strength.py --game bobs_hat --players 4 --pairs strong/simple,pimc:worlds=8/strong --deals 2000
"""

from __future__ import annotations

import argparse
import json
import math
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from agents.registry import make_agent
from bobshat_env.games import make_game
from train.evaluate.duplicate import play_duplicate

if TYPE_CHECKING:
    from bobshat_env.games import Game


class Timed:
    """Wraps an agent and times its ``act`` calls (per decision)."""

    def __init__(self, agent: Any):
        self.agent = agent
        self.name = agent.name
        self.needs_public = bool(getattr(agent, "needs_public", False))
        self.seconds = 0.0
        self.decisions = 0

    def act(self, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray, public: dict | None = None) -> np.ndarray:
        t0 = time.perf_counter()
        if public is not None:
            out = self.agent.act(obs, mask, seat, public=public)
        else:
            out = self.agent.act(obs, mask, seat)
        self.seconds += time.perf_counter() - t0
        self.decisions += int(mask.shape[0])
        return out

    @property
    def ms_per_decision(self) -> float:
        return 1000 * self.seconds / max(self.decisions, 1)


def duel(game: Game, spec_a: str, spec_b: str, deals: int, seed: int = 0, batch_size: int = 256) -> dict:
    """Bot A against a field of bot B over duplicate games; see the module docstring."""
    P = game.players
    hands = game.config.hands
    n_games = math.ceil(deals / hands)
    a = Timed(make_agent(spec_a, game, seed=seed + 1))
    b = Timed(make_agent(spec_b, game, seed=seed + 2))
    diff = np.zeros((P, n_games))
    t0 = time.perf_counter()
    agents = [a] + [b] * P  # B is called seat by seat, so a bot that draws random numbers draws them as before
    for r in range(P):
        seating = np.where(np.arange(P) == r, 0, 1 + np.arange(P))[None]  # A in seat r, B in the others
        res = play_duplicate(game, agents, seating, np.arange(n_games), seed, batch_size=batch_size)
        tot = res.totals.astype(np.float64)
        diff[r] = tot[:, r] - np.delete(tot, r, axis=1).mean(axis=1)
    per_game = diff.mean(axis=0) / hands  # per hand, averaged over the seatings of each game
    mean = float(per_game.mean())
    ci = float(1.96 * per_game.std(ddof=1) / math.sqrt(n_games)) if n_games > 1 else float("nan")
    return {
        "game": game.name,
        "players": P,
        "a": spec_a,
        "b": spec_b,
        "deals": n_games * hands,
        "games": n_games,
        "seatings": P,
        "diff_per_hand": round(mean, 3),
        "ci95": round(ci, 3),
        "ms_per_decision": {spec_a: round(a.ms_per_decision, 3), spec_b: round(b.ms_per_decision, 3)},
        "seconds": round(time.perf_counter() - t0, 1),
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--game", default="bobs_hat")
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--pairs", default="simple/random,strong/simple", help="A/B pairs, comma-separated")
    ap.add_argument("--deals", type=int, default=2000, help="hands to play (rounded up to whole games)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--json", action="store_true", help="one JSON line per pair")
    args = ap.parse_args(argv)
    game = make_game(args.game, players=args.players)
    for pair in args.pairs.split(","):
        spec_a, _, spec_b = pair.partition("/")
        out = duel(game, spec_a.strip(), spec_b.strip(), args.deals, args.seed, args.batch_size)
        if args.json:
            print(json.dumps(out), flush=True)
        else:
            ms = out["ms_per_decision"]
            print(
                f"{out['game']} P={out['players']} {out['a']} vs {out['b']}: {out['diff_per_hand']:+.2f} "
                f"± {out['ci95']:.2f} per hand over {out['deals']} deals ({out['games']} games x {out['seatings']} "
                f"seatings); ms/move {out['a']}={ms[out['a']]}, {out['b']}={ms[out['b']]}; {out['seconds']} s",
                flush=True,
            )


if __name__ == "__main__":
    main()
