"""Time per decision of a bot playing one game at a time (B = 1), as at a table with people.

Plays ``--games`` whole games, one at a time, with the bot under test in two
seats and ``--field`` in the others (seats 0 and 2: the search against the
raw policy, say), and times every call of the bot's ``act``: wall-clock time
(``time.perf_counter``) and this process's CPU time (``time.process_time``).
On a shared machine the wall clock also counts the time other jobs held the
cores; the CPU time is what the bot itself spent, which is what it takes on
an idle machine when the process runs on one thread (set ``NUMBA_NUM_THREADS=1``
and ``--torch-threads 1``, the defaults here: extra threads would only spin,
and their spinning counts as CPU time). Reported: mean, median, 95th
percentile and maximum ms per decision, over all of the bot's decisions and
over the card plays and the bids separately, one JSON line per bot. A
warm-up game comes first, untimed (``--warmup``): the first decisions load
kernels and warm torch up, seconds that no later decision pays.

    NUMBA_NUM_THREADS=1 python benchmarks/search_latency.py --game bobs_hat \\
        --bots "search:policy=checkpoints/bobs_hat_4p.pt,worlds=32" --field ppo:checkpoints/bobs_hat_4p.pt
"""

from __future__ import annotations

import argparse
import json
import time
from typing import TYPE_CHECKING

import numpy as np

from agents.registry import make_agent, split_specs
from bobshat_env.games import make_game
from bobshat_env.seating import SeatDispatch

if TYPE_CHECKING:
    from bobshat_env.games import Game


def _summary(ms: np.ndarray) -> dict[str, float]:
    if ms.size == 0:
        return {}
    return {
        "mean": round(float(ms.mean()), 3),
        "p50": round(float(np.median(ms)), 3),
        "p95": round(float(np.percentile(ms, 95)), 3),
        "max": round(float(ms.max()), 3),
    }


def time_bot(game: Game, spec: str, field: str, games: int, seed: int = 0, warmup: int = 1) -> dict:
    """Play ``games`` games at B = 1 (``spec`` in seats 0 and 2, ``field`` elsewhere) and time ``spec``'s calls.

    The first ``warmup`` games are played untimed (kernels load, torch warms up)."""
    bot = make_agent(spec, game, seed=seed + 1)
    other = make_agent(field, game, seed=seed + 2)
    P = game.players
    who = np.array([0 if p in (0, 2) else 1 for p in range(P)])
    agents = [bot, other]
    wall, cpu, is_card = [], [], []
    n_cards = int(game.module.N_CARDS)
    for g in range(-warmup, games):
        state = game.init(np.array([seed * 100_003 + g + 1 + warmup], dtype=np.uint64))
        seats = SeatDispatch(game, 1, agents)
        while not game.done(state)[0]:
            mask = game.legal_action_mask(state)
            obs = game.observe(state)
            seat = state.cur.astype(np.int64)
            a = who[seat[0]]
            t0, c0 = time.perf_counter(), time.process_time()
            action = seats.act_rows(agents[a], obs, mask, seat, np.array([0]))
            t1, c1 = time.perf_counter(), time.process_time()
            if a == 0 and g >= 0:
                wall.append(1000 * (t1 - t0))
                cpu.append(1000 * (c1 - c0))
                is_card.append(bool(mask[0, :n_cards].any()))
            seats.before_step(state, action)
            res = game.step(state, action, legal=mask)
            seats.after_step(res.new_hand)
    wall_ms, cpu_ms, card = np.array(wall), np.array(cpu), np.array(is_card, dtype=bool)
    return {
        "game": game.name,
        "players": P,
        "bot": spec,
        "field": field,
        "games": games,
        "decisions": int(wall_ms.size),
        "wall_ms": _summary(wall_ms),
        "cpu_ms": _summary(cpu_ms),
        "cpu_ms_card_play": _summary(cpu_ms[card]),
        "cpu_ms_bids": _summary(cpu_ms[~card]),
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--game", default="bobs_hat")
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--game-options", default="{}", help='JSON game options, e.g. \'{"deal_style": "long"}\'')
    ap.add_argument("--bots", required=True, help="agent specs to time, comma-separated")
    ap.add_argument("--field", default="random", help="the agent in the other seats")
    ap.add_argument("--games", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--warmup", type=int, default=1, help="untimed games first (default 1)")
    ap.add_argument("--torch-threads", type=int, default=1, help="torch.set_num_threads (0: torch's default)")
    args = ap.parse_args(argv)
    if args.torch_threads:
        import torch  # only the neural bots need it

        torch.set_num_threads(args.torch_threads)
    game = make_game(args.game, players=args.players, **json.loads(args.game_options))
    for spec in split_specs(args.bots):
        print(json.dumps(time_bot(game, spec, args.field, args.games, args.seed, args.warmup)), flush=True)


if __name__ == "__main__":
    main()
