"""Golden fixtures: the bots' decisions and the observations, recorded once, checked every run.

``tests/golden/decisions.npz`` holds, for each case of :data:`DECISION_CASES`,
every action its table of bots took in a few full games. The test replays
those games action by action (teacher forcing: the recorded action is what is
stepped) and asks each seat's bot what it would do at each of its decisions,
so one changed decision is counted once and never shifts the positions after
it. ``tests/golden/observations.npz`` holds observation vectors of fixed
states (every view, several configurations) that the encoders must rebuild
bit for bit.

Regenerate only when a change is meant to alter decisions or observations,
and say so (with the number of decisions that changed) in the commit:
``PYTHONPATH=. python tests/golden.py write`` writes both files;
``PYTHONPATH=. python tests/golden.py diff`` counts the decisions of each case
that differ from the fixture, without writing.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from agents import make_agent
from bobshat_env.core import rng
from bobshat_env.core.resample import void_tracker
from bobshat_env.games import make_game

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden"
DECISIONS = GOLDEN / "decisions.npz"
OBSERVATIONS = GOLDEN / "observations.npz"
BH_PPO = "ppo:" + str(ROOT / "checkpoints" / "bobs_hat_4p.pt")
OH_PPO = "ppo:" + str(ROOT / "checkpoints" / "oh_hell_4p.pt")

# name: (game, options, one agent spec per seat, games, seed)
DECISION_CASES: dict[str, tuple[str, dict, list[str], int, int]] = {
    "bh4_heuristics": ("bobs_hat", {"players": 4}, ["strong", "simple", "strong", "simple"], 8, 11),
    "bh3_strong": ("bobs_hat", {"players": 3, "hands": 6}, ["strong", "strong", "simple"], 6, 12),
    "bh5_options": (
        "bobs_hat",
        {"players": 5, "hands": 4, "double_fewest": True, "no_bid": True, "secret_bidding": True},
        ["strong", "simple", "strong", "strong", "simple"],
        6,
        13,
    ),
    "oh4_heuristics": ("oh_hell", {"players": 4}, ["strong", "simple", "strong", "simple"], 4, 14),
    "oh6_strong": ("oh_hell", {"players": 6, "deal_style": "short_high_low"}, ["strong"] * 5 + ["simple"], 3, 15),
    "bh4_pimc": (
        "bobs_hat",
        {"players": 4, "hands": 3},
        ["pimc:worlds=4", "strong", "pimc:worlds=3,playout=strong", "simple"],
        4,
        16,
    ),
    "oh4_pimc": (
        "oh_hell",
        {"players": 4, "deal_style": "short_high"},
        ["pimc:worlds=4", "simple", "pimc:worlds=3,playout=strong", "strong"],
        2,
        17,
    ),
    "bh4_ppo": ("bobs_hat", {"players": 4}, [BH_PPO, "strong", BH_PPO, "simple"], 4, 18),
    "oh4_ppo": ("oh_hell", {"players": 4}, [OH_PPO, "strong", OH_PPO, "simple"], 3, 19),
}


def play_case(name: str, recorded: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """Play case ``name``: returns (every action taken, in order, and the number of decisions that differ from
    ``recorded``). With ``recorded`` the recorded actions are stepped, whatever the bots choose."""
    game_name, options, specs, n_games, seed = DECISION_CASES[name]
    game = make_game(game_name, **options)
    agents = [make_agent(spec, game, seed=seed * 10 + p) for p, spec in enumerate(specs)]
    state = game.init(rng.game_keys(seed, np.arange(n_games), 0))
    tracker = void_tracker(game, n_games)
    active = ~game.done(state)
    taken: list[np.ndarray] = []
    differ, at = 0, 0
    while active.any():
        mask = game.legal_action_mask(state)
        obs = game.observe(state)
        seat = state.cur.astype(np.int64)
        actions = np.zeros(n_games, dtype=np.int64)
        for p, agent in enumerate(agents):
            rows = np.nonzero(active & (seat == p))[0]
            if rows.size:
                extra = {"public": tracker.rows(rows)} if getattr(agent, "needs_public", False) else {}
                actions[rows] = agent.act(obs[rows], mask[rows], seat[rows], **extra)
        rows = np.nonzero(active)[0]
        if recorded is not None:
            want = recorded[at : at + rows.size].astype(np.int64)
            if want.shape[0] != rows.size:
                raise ValueError(f"case {name}: the fixture ends before the games do")
            differ += int(np.sum(actions[rows] != want))
            actions[rows] = want
        at += rows.size
        taken.append(actions[rows].copy())
        tracker.before_step(state, actions, active)
        res = game.step(state, actions, active=active, legal=mask)
        tracker.after_step(res)
        active &= ~game.done(state)
    if recorded is not None and at != recorded.shape[0]:
        raise ValueError(f"case {name}: the games ended before the fixture's {recorded.shape[0]} actions")
    return np.concatenate(taken).astype(np.int16), differ


# name: (game, options, games, seed, steps between snapshots)
OBSERVATION_CASES: dict[str, tuple[str, dict, int, int, int]] = {
    "bh4": ("bobs_hat", {"players": 4}, 2, 21, 19),
    "bh3_secret": ("bobs_hat", {"players": 3, "hands": 3, "secret_bidding": True, "no_bid": True}, 2, 22, 5),
    "bh5_double": ("bobs_hat", {"players": 5, "hands": 3, "double_fewest": True, "no_bid": True}, 2, 23, 7),
    "oh4": ("oh_hell", {"players": 4}, 2, 24, 31),
    "oh7_short": ("oh_hell", {"players": 7, "deal_style": "short_high_low"}, 2, 25, 23),
}
VIEWS = ("private", "public", "full")


def observe_case(name: str) -> dict[str, np.ndarray]:
    """Observations of case ``name``'s random games, every ``every`` steps: for each view, the seat to act's,
    seat 1's and another seat's per game, stacked (snapshots, 3 * games, D)."""
    game_name, options, n_games, seed, every = OBSERVATION_CASES[name]
    game = make_game(game_name, **options)
    gen = np.random.default_rng(seed)
    state = game.init(rng.game_keys(seed, np.arange(n_games), 0))
    out: dict[str, list[np.ndarray]] = {v: [] for v in VIEWS}
    step = 0
    while True:
        done = game.done(state)
        if step % every == 0 or done.all():
            for v in VIEWS:
                rows = [game.observe(state, view=v), game.observe(state, seat=1, view=v)]
                rows.append(game.observe(state, seat=(state.cur + 1 + np.arange(n_games)) % game.players, view=v))
                out[v].append(np.concatenate(rows))
        if done.all():
            break
        mask = game.legal_action_mask(state)
        u = np.where(mask, gen.random(mask.shape), -1.0)
        game.step(state, np.argmax(u, axis=1), active=~done)
        step += 1
    return {f"{name}/{v}": np.stack(out[v]) for v in VIEWS}


def write() -> None:
    GOLDEN.mkdir(exist_ok=True)
    np.savez_compressed(DECISIONS, **{name: play_case(name)[0] for name in DECISION_CASES})
    obs: dict[str, np.ndarray] = {}
    for name in OBSERVATION_CASES:
        obs.update(observe_case(name))
    np.savez_compressed(OBSERVATIONS, **obs)


def diff() -> None:
    fixture = np.load(DECISIONS)
    for name in DECISION_CASES:
        actions, differ = play_case(name, fixture[name])
        print(f"{name}: {differ} of {actions.shape[0]} decisions differ from the fixture")


if __name__ == "__main__":
    {"write": write, "diff": diff}[sys.argv[1]]()
