"""The vector env: batch-size independence, same-step autoreset, errors."""

from __future__ import annotations

import numpy as np
import pytest

from bobshat_env.core import rng
from bobshat_env.vector import VectorEnv


def _policy(ts, slots, t):
    """A deterministic policy that depends only on (slot, step, mask)."""
    h = rng.combine(np.asarray(slots, dtype=np.uint64), t)
    counts = ts.action_mask.sum(axis=1)
    pick = rng.uniform_ints(h, counts)
    return np.argmax(np.cumsum(ts.action_mask, axis=1) > pick[:, None], axis=1)


@pytest.mark.parametrize(
    "game, options, steps",
    [
        ("bobs_hat", {"hands": 3}, 250),
        ("bobs_hat", {"hands": 3, "players": 5, "no_bid": True, "double_fewest": True}, 250),
        ("oh_hell", {"players": 6, "deal_style": "short_low", "first_dealer": -1}, 600),  # 264 steps a game
    ],
)
def test_b1_and_b1000_play_identical_games(game, options, steps):
    small = VectorEnv(game, num_envs=1, **options)
    big = VectorEnv(game, num_envs=1000, **options)
    ts1, tsb = small.reset(seed=42), big.reset(seed=42)
    slots = np.arange(1000)
    for t in range(steps):  # more than one full game: autoreset is covered too
        for name in ("obs", "action_mask", "seat", "rewards", "done", "final_scores"):
            np.testing.assert_array_equal(getattr(ts1, name)[0], getattr(tsb, name)[0], err_msg=f"{name} at step {t}")
        ts1, tsb = small.step(_policy(ts1, slots[:1], t)), big.step(_policy(tsb, slots, t))
    assert small.games_played[0] >= 2 and big.games_played[0] == small.games_played[0]


def _trace(env: VectorEnv, slots: list[int], steps: int, seed: int) -> dict[str, np.ndarray]:
    """Play ``steps`` steps of every slot with :func:`_policy`; keep only the timesteps of ``slots``."""
    fields = ("obs", "action_mask", "seat", "rewards", "done", "final_scores")
    out: dict[str, list] = {name: [] for name in fields}
    ts, every = env.reset(seed=seed), np.arange(env.num_envs)
    for t in range(steps):
        for name in fields:
            out[name].append(getattr(ts, name)[slots].copy())
        ts = env.step(_policy(ts, every, t))
    return {name: np.stack(v, axis=1) for name, v in out.items()}  # (len(slots), steps, ...)


@pytest.mark.parametrize(
    "game, options, steps",
    [
        ("bobs_hat", {"hands": 2}, 70),  # 54 steps a game: the autoreset too
        ("oh_hell", {"players": 4, "deal_style": "short_high"}, 60),
    ],
)
def test_a_slot_of_b16384_plays_the_games_of_b1(game, options, steps):
    """The README's largest batch (16,384 slots, split over numba's threads) plays the same games:
    slot 0 as B = 1, and the slots around the thread split (8191, 8192) and the last one as
    B = 8,193 (split elsewhere) and B = 16,384 agree."""
    big = _trace(VectorEnv(game, num_envs=16_384, **options), [0, 1, 8191, 8192, 16_383], steps, seed=42)
    one = _trace(VectorEnv(game, num_envs=1, **options), [0], steps, seed=42)
    mid = _trace(VectorEnv(game, num_envs=8193, **options), [0, 1, 8191, 8192], steps, seed=42)
    for name in big:
        np.testing.assert_array_equal(one[name][0], big[name][0], err_msg=f"{name}: B = 1 vs slot 0 of 16,384")
        np.testing.assert_array_equal(mid[name], big[name][:4], err_msg=f"{name}: B = 8,193 vs 16,384")
    assert not np.array_equal(big["obs"][2], big["obs"][3])  # different slots, different games
    if game == "bobs_hat":
        assert big["done"][0].any()  # a game ended and the next began


def test_same_step_autoreset_reports_final_scores_and_new_game():
    env = VectorEnv("bobs_hat", num_envs=4, hands=1)
    ts = env.reset(seed=0)
    totals = np.zeros((4, 4))
    steps = 0
    while not ts.done.all():
        ts = env.step(_policy(ts, np.arange(4), steps))
        totals += np.where(ts.done[:, None], 0, ts.rewards)
        steps += 1
        assert steps < 100
    # a one-hand game: 1 hat choice + 4 bids + 20 cards, the same count in every slot
    assert steps == 25
    np.testing.assert_array_equal(ts.final_scores, ts.rewards)  # the only scored hand is the last step's
    assert (env.state.hand_no == 0).all() and (env.state.phase == 0).all()  # already the next game's hat choice
    assert env.games_played.tolist() == [1, 1, 1, 1]
    assert ts.action_mask[:, 60:62].all()


def test_step_before_reset_and_bad_batch():
    env = VectorEnv("bobs_hat", num_envs=2)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.zeros(2, dtype=int))
    env.reset(seed=0)
    with pytest.raises(ValueError, match="expected 2 actions"):
        env.step(np.zeros(3, dtype=int))
    with pytest.raises(ValueError, match="num_envs"):
        VectorEnv("bobs_hat", num_envs=0)


def test_recorded_games_replay_cleanly():
    from bobshat_env.records import replay_record

    env = VectorEnv("bobs_hat", num_envs=3, hands=2, record=True, agent_names=["a", "b", "c", "d"])
    ts = env.reset(seed=4)
    for t in range(120):
        ts = env.step(_policy(ts, np.arange(3), t))
    records = env.pop_records()
    assert len(records) == int(env.games_played.sum()) >= 3
    for rec in records:
        assert rec["agents"] == ["a", "b", "c", "d"] and len(rec["hands"]) == 2
        assert replay_record(rec) == []
    assert env.pop_records() == []
    with pytest.raises(RuntimeError, match="record=True"):
        VectorEnv("bobs_hat", num_envs=1).pop_records()


def test_hand_number_and_any_seats_observation():
    env = VectorEnv("bobs_hat", num_envs=4, hands=3)
    ts = env.reset(seed=5)
    prev, seen = env.hand_number, set()
    assert prev.tolist() == [0, 0, 0, 0]
    for t in range(400):  # past the end of the first games: autoreset restarts the count
        np.testing.assert_array_equal(env.observe(ts.seat), ts.obs)  # the seat to act: the step's observation
        for p in range(4):
            obs = env.observe(p)
            np.testing.assert_array_equal(obs, env.observe(np.full(4, p)))
            for i in range(4):
                d = env.game.decode(obs[i])
                assert d["hand"] == np.flatnonzero(env.state.hands[i, p]).tolist()
                assert d["hand_number"] == env.hand_number[i] + 1  # the encoded count is 1-based
        ts = env.step(_policy(ts, np.arange(4), t))
        now = env.hand_number
        moved = (now != prev) & ~ts.done
        assert np.all(now[moved] == prev[moved] + 1) and np.all(now[ts.done] == 0)
        prev = now
        seen.update(now.tolist())
    assert seen == {0, 1, 2} and env.games_played.min() >= 1
    with pytest.raises(ValueError, match="seat must be 0-3"):
        env.observe(4)
    with pytest.raises(RuntimeError, match="reset"):
        VectorEnv("bobs_hat", num_envs=2).observe(0)


def test_first_slot_splits_one_batch_over_envs():
    """Envs of slots [0, 3) and [3, 5) play exactly the games of one env of 5 slots, past autoresets."""
    whole = VectorEnv("bobs_hat", num_envs=5, hands=1)
    parts = [VectorEnv("bobs_hat", num_envs=3, hands=1), VectorEnv("bobs_hat", num_envs=2, hands=1, first_slot=3)]
    ts = whole.reset(seed=8)
    tss = [e.reset(seed=8) for e in parts]
    ends = 0
    for t in range(80):  # one-hand games: several games per slot
        np.testing.assert_array_equal(np.concatenate([p.obs for p in tss]), ts.obs)
        np.testing.assert_array_equal(np.concatenate([p.action_mask for p in tss]), ts.action_mask)
        actions = _policy(ts, np.arange(5), t)
        ts = whole.step(actions)
        tss = [parts[0].step(actions[:3]), parts[1].step(actions[3:])]
        np.testing.assert_array_equal(np.concatenate([p.rewards for p in tss]), ts.rewards)
        ends += int(ts.done.sum())
    assert ends >= 10
    with pytest.raises(ValueError, match="first_slot must be a non-negative integer"):
        VectorEnv("bobs_hat", num_envs=2, first_slot=-1)
