"""PUCT over determinized worlds (agents/puct.py): the selection formula, the leaf rewards, the budget,
legal, seeded, honest, clear errors."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch
from test_ismcts import _positions, _swap_hidden

from agents import make_agent
from agents.arena import play_games
from agents.puct import VIRTUAL_LOSS, PUCTAgent, Tree, puct_scores, world_of
from bobshat_env.games import make_game

ROOT = Path(__file__).resolve().parents[1]
CHECKPOINTS = {"bobs_hat": ROOT / "checkpoints" / "bobs_hat_4p.pt", "oh_hell": ROOT / "checkpoints" / "oh_hell_4p.pt"}


def _spec(name: str, extra: str = "") -> str:
    return f"puct:policy={CHECKPOINTS[name]},worlds=4,parallel=4" + (f",{extra}" if extra else "")


# -- the selection formula
def test_puct_picks_what_the_formula_says():
    """Q + c P sqrt(1 + sum N) / (1 + N) on a hand-built node: the prior decides where the values do not."""
    # node 1: the child by action 0, 4 visits, mean 0.5; node 2: by action 1, 1 visit, mean 0.4; action 2: no child
    total = np.array([0.0, 2.0, 0.4])
    visits = np.array([5.0, 4.0, 1.0])
    children = np.array([[1, 2, -1, -1]])
    prior = np.array([[0.1, 0.2, 0.7, 0.0]])
    legal = np.array([[True, True, True, False]])
    got = puct_scores(total, visits, children, legal, prior, 1.0)
    s = math.sqrt(1 + 5)
    np.testing.assert_allclose(got[0, :3], [0.5 + 0.1 * s / 5, 0.4 + 0.2 * s / 2, 0.7 * s])
    assert got[0, 3] == -np.inf
    assert np.argmax(got[0]) == 2  # the untried action with the big prior
    # action 2 not legal in this world: the prior still lifts action 1 (mean 0.4) over action 0 (mean 0.5)
    legal2 = np.array([[True, True, False, False]])
    got2 = puct_scores(total, visits, children, legal2, prior, 1.0)
    np.testing.assert_allclose(got2[0, :2], [0.5 + 0.1 * math.sqrt(6) / 5, 0.4 + 0.2 * math.sqrt(6) / 2])
    assert np.argmax(got2[0]) == 1
    # with no exploration the better mean wins
    assert np.argmax(puct_scores(total, visits, children, legal2, prior, 0.0)[0]) == 0


def test_virtual_loss_is_taken_back_and_each_chooser_keeps_its_reward():
    """Two simulations in flight in one tree: the second avoids the first's path (virtual loss); after the
    backup each node holds the rewards of the seat that chose it, and nothing of the virtual loss."""
    tree = Tree(1, 4, 3, c_puct=0.01)
    legal = np.ones((1, 3), dtype=bool)
    prior = np.array([[0.5, 0.3, 0.2]])
    a1, n1, made1 = tree.descend(np.array([0]), tree.root.copy(), legal, np.array([2]), prior)
    assert a1[0] == 0 and made1[0] and tree.who[n1[0]] == 2
    assert tree.total[n1[0]] == -VIRTUAL_LOSS and tree.visits[n1[0]] == 1
    a2, n2, made2 = tree.descend(np.array([0]), tree.root.copy(), legal, np.array([2]), prior)
    assert a2[0] == 1 and made2[0]  # the first child's virtual loss sent the second elsewhere
    rewards = np.array([[0.1, 0.2, 0.3, 0.4], [-0.1, -0.2, -0.3, -0.4]])
    tree.backprop(np.array([[n1[0], -1], [n2[0], -1]]), rewards)
    np.testing.assert_allclose(tree.total[[n1[0], n2[0]]], [0.3, -0.3])
    np.testing.assert_allclose(tree.root_visits()[0], [1, 1, 0])
    np.testing.assert_allclose(tree.root_values()[0, :2], [0.3, -0.3])
    # the same node twice in one backup (two simulations of a tree through it): both rewards count
    a3, n3, made3 = tree.descend(np.array([0]), tree.root.copy(), legal, np.array([2]), prior)
    assert a3[0] == 0 and not made3[0]
    tree.visits[n3[0]] += 1  # a second simulation through it
    tree.total[n3[0]] -= VIRTUAL_LOSS
    tree.backprop(np.array([[n3[0]], [n3[0]]]), np.array([[0, 0, 0.5, 0], [0, 0, 0.25, 0]]))
    np.testing.assert_allclose(tree.total[n3[0]], 0.3 + 0.75)
    assert tree.visits[n3[0]] == 3


def test_the_worlds_take_turns():
    """Simulation s of every tree searches world s mod W: a wave of 4 after 4 done, 6 worlds, 2 trees."""
    np.testing.assert_array_equal(world_of(4, 4, 2, 6), [4, 5, 0, 1, 4, 5, 0, 1])
    np.testing.assert_array_equal(world_of(0, 3, 1, 16), [0, 1, 2])


def test_a_single_simulation_plays_the_policy():
    """With one simulation the root's only visited child is the prior's most probable legal action."""
    game = make_game("oh_hell", players=4)
    state, public = _positions(game, 8, 9, 3)
    obs, mask, seat = game.observe(state), game.legal_action_mask(state), state.cur.astype(np.int64)
    agent = make_agent(_spec("oh_hell", "sims=1,parallel=1"), game, seed=1)
    visits, _ = agent.search(obs, mask, seat, public)
    logits, _ = agent._policy(obs, mask)
    np.testing.assert_array_equal(np.argmax(visits, axis=1), torch.argmax(logits, dim=-1).numpy())
    assert visits.sum(axis=1).tolist() == [1.0] * 8


def test_the_bids_are_the_policys_unless_searched():
    """bids=false (the default): a hat choice or a bid is the policy's action, with no simulation."""
    game = make_game("bobs_hat", players=4)
    state, public = _positions(game, 6, 1, 3)
    obs, mask, seat = game.observe(state), game.legal_action_mask(state), state.cur.astype(np.int64)
    assert not mask[:, : game.module.N_CARDS].any() and (mask.sum(axis=1) > 1).all()
    agent = make_agent(_spec("bobs_hat", "sims=4"), game, seed=1)
    actions = agent.act(obs, mask, seat, public)
    np.testing.assert_array_equal(actions, torch.argmax(agent._policy(obs, mask)[0], dim=-1).numpy())
    assert agent.stats["searched"] == 0 and agent.stats["sims"] == 0


def test_every_node_belongs_to_the_seat_that_chose_it(monkeypatch):
    """The root's children are the searching seat's; deeper nodes are the other seats' (each maximizes its
    own reward), as the seat to act in the simulation's world says."""
    import agents.puct as puct

    trees = []

    class Kept(puct.Tree):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            trees.append(self)

    monkeypatch.setattr(puct, "Tree", Kept)
    game = make_game("oh_hell", players=4)
    state, public = _positions(game, 3, 9, 3)
    seat = state.cur.astype(np.int64)
    make_agent(_spec("oh_hell", "sims=40"), game, seed=1).search(
        game.observe(state), game.legal_action_mask(state), seat, public
    )
    (tree,) = trees
    nodes = 41
    for b in range(3):
        root = b * nodes
        kids = tree.child[root][tree.child[root] >= 0]
        assert kids.size and (tree.who[kids] == seat[b]).all()
        grand = tree.child[kids].ravel()
        grand = grand[grand >= 0]
        assert grand.size and (tree.who[grand] != seat[b]).all()  # mid-trick: the next seat plays


# -- the leaf rewards
@pytest.mark.parametrize("name, steps", [("bobs_hat", 12), ("oh_hell", 10)])
def test_leaf_rewards_are_margins_plus_each_seats_own_value(name, steps):
    """Inside the hand: every seat's margin since the decision plus value_scale times the value head on its
    own observation; at the hand's end the margins alone (they sum to zero over the table)."""
    game = make_game(name, players=4)
    state, _ = _positions(game, 6, steps, 5)
    agent = make_agent(_spec(name, "value_scale=7"), game, seed=1)
    start = state.scores.astype(np.float64) - np.arange(24).reshape(6, 4)  # as if scores had moved since the root
    got = agent._leaf_rewards(state, start)
    P = game.players
    pts = np.arange(24).reshape(6, 4).astype(np.float64)
    for j in range(P):
        _, v = agent._policy(game.observe(state, seat=np.full(6, j)), np.ones((6, game.n_actions), dtype=bool))
        pts[:, j] += 7 * v.numpy()
    want = pts - (pts.sum(axis=1, keepdims=True) - pts) / (P - 1)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert np.all(np.abs(want[:, 0] - want[:, 1]) > 1e-6)  # the seats' values do differ
    # at the end of a hand: no value, the margins alone
    ended = state.copy()
    ended.phase[:] = game.module.DEAL
    margins = agent._leaf_rewards(ended, start)
    raw = np.arange(24).reshape(6, 4).astype(np.float64)
    np.testing.assert_allclose(margins, raw - (raw.sum(axis=1, keepdims=True) - raw) / (P - 1))
    np.testing.assert_allclose(margins.sum(axis=1), 0, atol=1e-9)


def test_playout_leaves_play_the_hand_out():
    """leaf=playout: the rewards are the margins at the end of the hand, every seat playing the policy."""
    game = make_game("oh_hell", players=4)
    state, _ = _positions(game, 4, 10, 5)
    agent = make_agent(_spec("oh_hell", "leaf=playout"), game, seed=1)
    got = agent._leaf_rewards(state, state.scores.astype(np.float64))
    st = state.copy()
    while np.any(st.phase < game.module.DEAL):
        m = game.legal_action_mask(st)
        live = st.phase < game.module.DEAL
        m[~live, 0] = True
        a = torch.argmax(agent._policy(game.observe(st), m)[0], dim=-1).numpy()
        game.step(st, a.astype(np.int64), active=live, auto_deal=False)
    pts = st.scores.astype(np.float64) - state.scores
    np.testing.assert_allclose(got, pts - (pts.sum(axis=1, keepdims=True) - pts) / 3)
    assert np.any(got != 0)


# -- the budget
def test_the_budget_in_simulations_is_kept():
    game = make_game("bobs_hat", players=4)
    state, public = _positions(game, 5, 14, 2)
    obs, mask, seat = game.observe(state), game.legal_action_mask(state), state.cur.astype(np.int64)
    agent = make_agent(_spec("bobs_hat", "sims=10,bids=true"), game, seed=1)  # 10 = 4 + 4 + 2 in flight
    visits, _ = agent.search(obs, mask, seat, public)
    np.testing.assert_array_equal(visits.sum(axis=1), np.full(5, 10.0))
    assert agent.stats["sims"] == 50
    agent.act(obs, mask, seat, public)
    searched = agent.stats["searched"]
    assert searched == int((mask.sum(axis=1) > 1).sum()) and searched > 0
    assert agent.stats["sims"] == 50 + 10 * searched
    # a clock budget too small for any search: one wave of `parallel` simulations, then it stops
    quick = make_agent(_spec("bobs_hat", "sims=40,ms=0.000001"), game, seed=1)
    np.testing.assert_array_equal(quick.search(obs, mask, seat, public)[0].sum(axis=1), np.full(5, 4.0))


# -- legal, seeded, honest
@pytest.mark.parametrize(
    "name, options", [("bobs_hat", {"hands": 2}), ("oh_hell", {"deal_style": "short_high", "hands": 4})]
)
def test_legal_actions_in_whole_games(name, options):
    """Whole games against the policy (the engine refuses an illegal action), the bids searched too."""
    game = make_game(name, players=4, **options)
    agent = make_agent(_spec(name, "sims=6,bids=true"), game, seed=2)
    ppo = make_agent(f"ppo:{CHECKPOINTS[name]}", game)
    res = play_games(game, [agent, ppo, agent, ppo], 2, seed=5)
    assert res.totals.shape == (2, 4)
    assert agent.stats["searched"] > 0 and agent.stats["sims"] == 6 * agent.stats["searched"]


@pytest.mark.parametrize("name", ["bobs_hat", "oh_hell"])
def test_legal_actions_at_random_positions(name):
    game = make_game(name, players=4)
    for steps, seed in ((1, 1), (5, 2), (13, 3), (27, 4)):
        state, public = _positions(game, 8, steps, seed)
        mask = game.legal_action_mask(state)
        agent = make_agent(_spec(name, "sims=8,bids=true,leaf=playout" if seed % 2 else "sims=8,bids=true"), game)
        actions = agent.act(game.observe(state), mask, state.cur.astype(np.int64), public=public)
        assert mask[np.arange(8), actions].all()


@pytest.mark.parametrize("name, steps", [("bobs_hat", 3), ("oh_hell", 9)])
def test_the_same_seed_gives_the_same_search_whatever_the_batch(name, steps):
    game = make_game(name, players=4)
    state, public = _positions(game, 6, steps, 7)
    obs, mask, seat = game.observe(state), game.legal_action_mask(state), state.cur.astype(np.int64)
    spec = _spec(name, "sims=12,bids=true")

    def search(seed, rows=None, extra=""):
        rows = np.arange(6) if rows is None else rows
        sub = {k: v[rows] for k, v in public.items()}
        return make_agent(spec + extra, game, seed=seed).search(obs[rows], mask[rows], seat[rows], sub)[1]

    first = search(3)
    np.testing.assert_array_equal(first, search(3))
    np.testing.assert_array_equal(first[[4, 1]], search(3, np.array([4, 1])))  # alone, other order
    np.testing.assert_array_equal(first, search(3, extra=",batch=2"))
    assert not np.array_equal(first, search(4), equal_nan=True)  # the seed does matter


@pytest.mark.parametrize("name, steps", [("bobs_hat", 2), ("bobs_hat", 14), ("oh_hell", 2), ("oh_hell", 11)])
def test_hidden_cards_do_not_change_the_search(name, steps):
    """Two true deals that differ only in cards hidden from the seat: the same search (fixed seed); the
    seat's own cards exchanged: another search (so the check can fail)."""
    game = make_game(name, players=4)
    state, public = _positions(game, 6, steps, 11)
    me, B = state.cur.astype(np.int64), state.batch_size
    swapped = _swap_hidden(game, state, me, np.random.default_rng(steps))
    assert np.any(swapped.hands != state.hands)
    obs, mask = game.observe(state), game.legal_action_mask(state)
    assert np.array_equal(game.observe(swapped), obs) and np.array_equal(game.legal_action_mask(swapped), mask)

    def decide(st):
        agent = make_agent(_spec(name, "sims=16,bids=true"), game, seed=5)
        args = (game.observe(st), game.legal_action_mask(st), st.cur.astype(np.int64), public)
        return agent.act(*args), agent.search(*args)[1]

    actions, values = decide(state)
    actions2, values2 = decide(swapped)
    np.testing.assert_array_equal(actions, actions2)
    np.testing.assert_array_equal(values, values2)
    own = state.copy()
    rows, nxt = np.arange(B), (me + 1) % game.players
    own.hands[rows, me], own.hands[rows, nxt] = state.hands[rows, nxt], state.hands[rows, me]
    same = np.all(game.legal_action_mask(own) == mask, axis=1)
    if game.module.PLAY not in state.phase:
        assert same.all()
    if same.any():
        assert not np.array_equal(decide(own)[1][same], values[same], equal_nan=True)


# -- options
@pytest.mark.parametrize(
    "extra, message",
    [
        ("sims=0", "puct option sims must be an integer >= 1, got 0"),
        ("sims=2.5", "puct option sims must be an integer >= 1, got 2.5"),
        ("worlds=0", "puct option worlds must be an integer >= 1, got 0"),
        ("parallel=-1", "puct option parallel must be an integer >= 1, got -1"),
        ("batch=0", "puct option batch must be an integer >= 1, got 0"),
        ("c_puct=-1", "puct option c_puct must be a finite number >= 0, got -1"),
        ("c_puct=nan", "puct option c_puct must be a finite number >= 0, got nan"),
        ("ms=-5", "puct option ms must be a finite number >= 0, got -5"),
        ("value_scale=inf", "puct option value_scale must be a finite number, got inf"),
        ("bids=yes", "puct option bids must be true or false, got 'yes'"),
        ("leaf=rollout", "unknown puct leaf 'rollout'; choose one of value, playout"),
        ("inference=oracle", "unknown puct inference 'oracle'; choose one of auto, none, policy, learned"),
        ("cards=x.cards", "puct option cards names the network of inference=learned; add inference=learned"),
        ("simz=3", "unknown puct option(s) simz; known: policy, sims, c_puct"),
    ],
)
def test_bad_options_are_one_clear_line(extra, message):
    with pytest.raises(ValueError) as err:
        make_agent(f"puct:policy=nowhere.pt,{extra}", make_game("oh_hell", players=4))  # refused before the file
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_missing_policy_and_game_are_clear(tmp_path):
    game = make_game("bobs_hat", players=4)
    with pytest.raises(ValueError, match="needs a trained policy: puct:policy=PATH"):
        make_agent("puct", game)
    with pytest.raises(Exception, match="no checkpoint"):
        make_agent(f"puct:policy={tmp_path / 'none.pt'}", game)
    with pytest.raises(Exception, match="cannot play"):
        make_agent(f"puct:policy={CHECKPOINTS['oh_hell']}", game)
    with pytest.raises(ValueError, match="the 'puct' agent needs a game"):
        PUCTAgent(None, policy=str(CHECKPOINTS["bobs_hat"]))
