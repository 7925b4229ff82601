"""Search with the policy (agents/search.py): honest (never reads hidden cards), legal, clear errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agents import make_agent
from agents.arena import play_games
from agents.search import PolicySearchAgent
from bobshat_env.core.resample import void_tracker
from bobshat_env.games import make_game

ROOT = Path(__file__).resolve().parents[1]
CHECKPOINTS = {"bobs_hat": ROOT / "checkpoints" / "bobs_hat_4p.pt", "oh_hell": ROOT / "checkpoints" / "oh_hell_4p.pt"}
SPEC = "search:policy={},worlds=4,top_k=3,z=0"  # z=0: the best mean wins, so every searched value counts


def _game(name: str, **options):
    return make_game(name, players=4, **options)


def _play_to(game, keys: np.ndarray, steps: int):
    """Play the shipped policy (greedy) for ``steps`` decisions, keeping the public record; return state and record."""
    agent = make_agent(f"ppo:{CHECKPOINTS[game.name]}", game)
    state = game.init(keys)
    tracker = void_tracker(game, keys.shape[0])
    for _ in range(steps):
        mask = game.legal_action_mask(state)
        actions = agent.act(game.observe(state), mask, state.cur.astype(np.int64))
        tracker.before_step(state, actions)
        res = game.step(state, actions, legal=mask)
        tracker.after_step(res)
    return state, tracker


def _swap_hidden(game, state, me: np.ndarray, gen: np.random.Generator):
    """A copy of ``state`` where, in each game, two seats other than ``me[g]`` exchange unplayed cards of one suit.

    Same suit, so every void shown stays true; same counts; the cards played
    and everything face up unchanged: the two states agree on everything seat
    to act has seen, and differ in the hidden hands.
    """
    other = state.copy()
    suit_of = game.deck.suit_of
    P = game.players
    for g in range(state.batch_size):
        for _ in range(20):
            a, b = gen.choice([p for p in range(P) if p != me[g]], size=2, replace=False)
            s = gen.integers(game.deck.n_suits)
            ca = np.flatnonzero(other.hands[g, a] & (suit_of == s))
            cb = np.flatnonzero(other.hands[g, b] & (suit_of == s))
            if ca.size and cb.size:
                x, y = gen.choice(ca), gen.choice(cb)
                other.hands[g, a, x], other.hands[g, b, x] = False, True
                other.hands[g, b, y], other.hands[g, a, y] = False, True
    return other


@pytest.mark.parametrize("name, steps", [("bobs_hat", 3), ("bobs_hat", 14), ("oh_hell", 2), ("oh_hell", 9)])
@pytest.mark.parametrize("playout", ["greedy", "sample"])
def test_decisions_do_not_change_when_the_hidden_hands_are_swapped(name, steps, playout):
    """The search sees the acting seat's observation and the public record only: other hands, swapped
    consistently with everything public, give the same decisions and the same action values (fixed seed)."""
    game = _game(name)
    state, tracker = _play_to(game, np.arange(1, 9, dtype=np.uint64) * 7919, steps)
    me = state.cur.astype(np.int64)
    B = state.batch_size
    swapped = _swap_hidden(game, state, me, np.random.default_rng(steps))
    assert np.array_equal(swapped.hands[np.arange(B), me], state.hands[np.arange(B), me])
    assert np.any(swapped.hands != state.hands)  # the hidden cards did change
    obs = game.observe(state)
    assert np.array_equal(game.observe(swapped), obs)  # and nothing the seat sees did
    mask = game.legal_action_mask(state)
    assert np.array_equal(game.legal_action_mask(swapped), mask)
    public = tracker.rows(np.arange(state.batch_size))
    spec = SPEC.format(CHECKPOINTS[name]) + f",playout={playout}"

    def decide(st):
        agent = make_agent(spec, game, seed=5)
        actions = agent.act(game.observe(st), game.legal_action_mask(st), st.cur.astype(np.int64), public=public)
        values = make_agent(spec, game, seed=5).action_values(
            game.observe(st), game.legal_action_mask(st), st.cur.astype(np.int64), public=public
        )
        return actions, values

    actions, values = decide(state)
    actions2, values2 = decide(swapped)
    np.testing.assert_array_equal(actions, actions2)
    np.testing.assert_array_equal(values, values2)
    assert np.all(mask[np.arange(mask.shape[0]), actions])
    assert np.isfinite(values[mask]).all() and np.isnan(values[~mask]).all()
    # The check can fail: the values come from the sampled worlds (another seed, other values) and move with
    # what the seat sees (in the bidding, its own hand exchanged with the next seat's leaves the mask as it is).
    other_seed = make_agent(spec, game, seed=6).action_values(obs, mask, me, public=public)
    assert not np.array_equal(other_seed[mask], values[mask])
    own = state.copy()
    rows, nxt = np.arange(B), (me + 1) % game.players
    own.hands[rows, me], own.hands[rows, nxt] = state.hands[rows, nxt], state.hands[rows, me]
    same = np.all(game.legal_action_mask(own) == mask, axis=1)
    if game.module.PLAY not in state.phase:
        assert same.all()
    if same.any():
        _, values3 = decide(own)
        assert not np.array_equal(values3[same][mask[same]], values[same][mask[same]])


@pytest.mark.parametrize("name, options", [("bobs_hat", {"hands": 2}), ("oh_hell", {"deal_style": "short_low"})])
def test_search_plays_legal_games_against_the_policy(name, options):
    game = _game(name, **options)
    search = make_agent(f"search:policy={CHECKPOINTS[name]},worlds=2,top_k=2", game, seed=1)
    ppo = make_agent(f"ppo:{CHECKPOINTS[name]}", game)
    res = play_games(game, [search, ppo, search, ppo], 2, seed=3)  # the engine refuses any illegal action
    assert res.totals.shape == (2, 4)
    assert search.stats["decisions"] > 0 and search.stats["searched"] > 0
    assert search.stats["cpu_seconds"] > 0


def test_bad_specs_are_clear_errors(tmp_path):
    game = _game("bobs_hat")
    ck = CHECKPOINTS["bobs_hat"]
    for spec, msg in (
        ("search", "needs a trained policy"),
        (f"search:policy={tmp_path / 'none.pt'}", "no checkpoint"),
        (f"search:policy={CHECKPOINTS['oh_hell']}", "cannot play"),
        (f"search:policy={ck},worlds=0", "worlds must be an integer >= 1"),
        (f"search:policy={ck},worlds=2.5", "worlds must be an integer >= 1"),
        (f"search:policy={ck},top_k=0", "top_k must be an integer >= 1"),
        (f"search:policy={ck},horizon=-1", "horizon must be an integer >= 0"),
        (f"search:policy={ck},certain=0", "certain must be a probability"),
        (f"search:policy={ck},z=-1", "z must be a number >= 0"),
        (f"search:policy={ck},playout=fast", "unknown search playout 'fast'"),
        (f"search:policy={ck},belief=oracle", "unknown search belief 'oracle'"),
        (f"search:policy={ck},wrlds=8", "unknown search option"),
    ):
        with pytest.raises(Exception, match=msg):
            make_agent(spec, game)
    with pytest.raises(ValueError, match="needs a game"):
        PolicySearchAgent(None, policy=str(ck))
