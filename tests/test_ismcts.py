"""Our information set MCTS (agents/ismcts.py): the selection formula, certain wins, legal, seeded, honest."""

from __future__ import annotations

import math

import numpy as np
import pytest
from bh_script import Game as BHGame
from bh_script import bid_action

from agents import make_agent
from agents.arena import play_games
from agents.ismcts import Forest, hand_rewards, ucb_scores
from bobshat_env.core import bobs_hat as bh
from bobshat_env.core import oh_hell as oh
from bobshat_env.core.resample import void_tracker
from bobshat_env.games import make_game


# -- the selection formula and the availability counts
def test_ucb_uses_the_availability_count_not_the_parent_visits():
    """mean + c sqrt(ln n' / n): an arm tried often whenever it was available beats one seldom available."""
    # node ids: 1 is a child chosen 4 times in the 4 iterations it was available (mean 0.5); 2 was available
    # once and chosen then (mean 0.4). The parent was visited 10 times.
    total = np.array([0.0, 2.0, 0.4])
    visits = np.array([10.0, 4.0, 1.0])
    avail = np.array([0.0, 4.0, 1.0])
    children = np.array([[1, 2, -1]])
    have = np.array([[True, True, False]])
    got = ucb_scores(total, visits, avail, children, have, 1.0)
    np.testing.assert_allclose(got[0, :2], [0.5 + math.sqrt(math.log(4) / 4), 0.4 + 0.0])
    assert got[0, 2] == -np.inf
    assert np.argmax(got[0]) == 0
    # with the parent's 10 visits (plain UCT) the seldom-available arm would win: the counts decide here
    assert 0.4 + math.sqrt(math.log(10)) > 0.5 + math.sqrt(math.log(10) / 4)
    # and a child that is not legal in this determinization is never a candidate, however good
    have2 = np.array([[False, True, False]])
    assert np.argmax(ucb_scores(total, visits, avail, children, have2, 1.0)[0]) == 1


def _iterate(forest: Forest, legal: list[int], reward: float, u: float = 0.0) -> tuple[int, bool]:
    """One scripted iteration of a depth-1 tree: descend from the root with ``legal``, back up ``reward``."""
    mask = np.zeros((1, 4), dtype=bool)
    mask[0, legal] = True
    act, node, expanded = forest.descend(np.array([0]), forest.root.copy(), mask, np.array([0]), np.array([u]))
    forest.backprop(node[:, None], np.array([[reward, 0.0]]))
    return int(act[0]), bool(expanded[0])


def test_availability_counts_on_a_scripted_tree():
    """n'(c) counts the iterations in which c was legal at its parent; n(c) those that chose it."""
    f = Forest(1, 8, 4, uct_c=1.0)
    assert _iterate(f, [0, 1], 0.5) == (0, True)  # untried 0 and 1: rank 0 of them is 0
    assert _iterate(f, [0, 1], 1.0) == (1, True)  # 0 tried: 1 expands (0 was available)
    assert _iterate(f, [1, 2], 0.0, u=0.99) == (2, True)  # 2 expands; 0 not available
    assert _iterate(f, [0, 1], 0.2) == (1, False)  # UCB: 1.0 + sqrt(ln 2) beats 0.5 + sqrt(ln 2)
    # 0: 0.5 + sqrt(ln 3 / 1) = 1.55 against 2: 0.0 + sqrt(ln 1 / 1) = 0
    assert _iterate(f, [0, 2], 0.3) == (0, False)
    ids = f.child[0, :3]
    assert (ids > 0).all() and f.child[0, 3] == -1
    np.testing.assert_array_equal(f.avail[ids], [4, 3, 2])
    np.testing.assert_array_equal(f.visits[ids], [2, 2, 1])
    np.testing.assert_allclose(f.total[ids], [0.8, 1.2, 0.0])
    np.testing.assert_array_equal(f.root_visits()[0], [2, 2, 1, 0])


def test_each_node_keeps_the_reward_of_the_seat_that_chose_it():
    """Two levels: seat 0 chooses at the root, seat 1 below; each node adds its chooser's reward."""
    f = Forest(1, 8, 4, uct_c=1.0)
    legal = np.ones((1, 4), dtype=bool)
    a1, n1, _ = f.descend(np.array([0]), f.root.copy(), legal, np.array([0]), np.array([0.0]))
    a2, n2, _ = f.descend(np.array([0]), n1, legal, np.array([1]), np.array([0.5]))
    assert (a1[0], a2[0]) == (0, 2)
    f.backprop(np.stack([n1, n2], axis=1), np.array([[0.25, 0.75]]))
    assert f.total[n1[0]] == 0.25 and f.total[n2[0]] == 0.75
    assert f.who[n1[0]] == 0 and f.who[n2[0]] == 1


def test_hand_rewards_are_normalized_by_the_score_bounds():
    pts = np.array([[12, 2, 0, 1]])
    low, span = np.array([0.0]), np.array([20.0])
    np.testing.assert_allclose(hand_rewards(pts, low, span), [[0.6, 0.1, 0.0, 0.05]])
    np.testing.assert_allclose(hand_rewards(pts - 5, low - 5, span), [[0.6, 0.1, 0.0, 0.05]])
    margin = [12 - 1, 2 - 13 / 3, 0 - 5, 1 - 14 / 3]
    np.testing.assert_allclose(hand_rewards(pts, low, span, "diff"), [np.array(margin) / 20])


# -- positions with one sure best action
def _oh_hell_position(hands: list[list[str]], trump_card: str, hand_no: int, dealer: int):
    game = make_game("oh_hell", players=4)
    state = game.init(np.array([11], dtype=np.uint64), auto_deal=False)
    state.hand_no[:] = hand_no
    state.dealer[:] = dealer
    state.first_dealer[:] = (dealer - hand_no) % 4
    rows = np.zeros((1, 4, oh.N_CARDS), dtype=bool)
    for p, cards in enumerate(hands):
        rows[0, p, [game.parse_card(c) for c in cards]] = True
    oh.deal(game.config, state, np.array([0]), np.array([game.parse_card(trump_card)]), rows)
    return game, state


def _decide(game, state, spec: str, seed: int = 1):
    agent = make_agent(spec, game, seed=seed)
    obs, mask, seat = game.observe(state), game.legal_action_mask(state), state.cur.astype(np.int64)
    return agent.act(obs, mask, seat), agent.root_visits(obs, mask, seat), mask


@pytest.mark.parametrize("objective", ["score", "diff"])
def test_oh_hell_the_sure_bid_is_found(objective):
    """Holding the three top trumps of a 3-card hand, bidding 3 scores 13 in every world; any other bid 3.
    The game's scores so far (not 0: a later hand) do not count in the hand's reward."""
    size = 3
    hand_no = make_game("oh_hell", players=4).config.hand_sizes.index(size)
    hands = [["5H", "9C", "3D"], ["AS", "KS", "QS"], ["7H", "8C", "2D"], ["JH", "TC", "4D"]]
    game, state = _oh_hell_position(hands, "2S", hand_no, dealer=0)
    state.scores[0] = [31, 57, 12, 40]
    assert int(state.cur[0]) == 1  # the searcher bids first
    action, visits, mask = _decide(game, state, f"ismcts:sims=100,objective={objective}")
    assert action[0] == oh.BID_BASE + 3
    assert visits[0].sum() == 100 and (visits[0][~mask[0]] == 0).all()
    assert visits[0, oh.BID_BASE + 3] > 50
    values = make_agent(f"ismcts:sims=100,objective={objective}", game, seed=1).action_values(
        game.observe(state), mask, state.cur.astype(np.int64)
    )
    assert np.isnan(values[0][~mask[0]]).all()
    if objective == "score":  # the hand's bounds are 0 and 13: the sure bid scores 13, 1 in reward; the others 3
        np.testing.assert_allclose(values[0, oh.BID_BASE + np.arange(4)], [3 / 13, 3 / 13, 3 / 13, 1.0])


def test_depth_one_is_flat_ucb_over_the_root():
    """``depth=1`` stops every iteration's tree at the root's children: the only nodes made are the root
    actions tried (here the four legal bids) and the root, and the sure bid is still found; the full tree makes more."""
    hand_no = make_game("oh_hell", players=4).config.hand_sizes.index(3)
    hands = [["5H", "9C", "3D"], ["AS", "KS", "QS"], ["7H", "8C", "2D"], ["JH", "TC", "4D"]]
    game, state = _oh_hell_position(hands, "2S", hand_no, dealer=0)
    obs, mask, seat = game.observe(state), game.legal_action_mask(state), state.cur.astype(np.int64)
    flat, deep = make_agent("ismcts:sims=100,depth=1", game, seed=1), make_agent("ismcts:sims=100", game, seed=1)
    assert flat.act(obs, mask, seat)[0] == oh.BID_BASE + 3
    deep.act(obs, mask, seat)
    assert flat.stats["nodes"] == 1 + int(mask[0].sum()) == 5  # the root and its four children
    assert deep.stats["nodes"] > 50
    assert flat.name == "ismcts:sims=100,uct_c=0.3,depth=1"


def test_bobs_hat_the_sure_bid_is_found():
    """The five top trumps of a 5-card hand take every trick: all three most bids are made in every world
    (the cards of every suit dealt come to the searcher), and fewest is missed."""
    g = BHGame(make_game("bobs_hat", players=4).config)
    g.deal("blue", ["red3 red4 black5 black6 blue1", "blue20 blue19 blue18 blue17 blue16",
                    "red8 red9 black9 black10 blue2", "red11 red12 black1 black2 blue3"])  # fmt: skip
    g.act(bh.HAT_PLUS)
    g.act(bid_action("red"))  # the dealer bids first
    game = make_game("bobs_hat", players=4)
    assert g.cur == 1
    action, visits, _ = _decide(game, g.state, "ismcts:sims=200")
    assert action[0] == bid_action("blue+red+black")
    assert visits[0, bid_action("blue+red+black")] > 200 / 3  # of 15 bids


def test_bobs_hat_the_dealer_keeps_the_hat_it_will_take():
    """The dealer with the five top trumps takes every trick, so the hat if any hat card is dealt: +10 is
    never worse than -10 and better in most worlds (a decision of two actions is searched too)."""
    game = make_game("bobs_hat", players=4)
    for objective in ("score", "diff"):
        g = BHGame(game.config)
        g.deal("blue", ["blue20 blue19 blue18 blue17 blue16", "red3 red4 black5 black6 blue1",
                        "red8 red9 black9 black10 blue2", "red11 red12 black1 black2 blue3"])  # fmt: skip
        action, visits, mask = _decide(game, g.state, f"ismcts:sims=60,objective={objective}")
        assert mask[0].sum() == 2 and action[0] == bh.HAT_PLUS
        assert visits[0, bh.HAT_PLUS] > visits[0, bh.HAT_MINUS]


# -- legal, seeded, independent of the batch, honest
def _positions(game, n: int, steps: int, seed: int):
    """``n`` games after ``steps`` random actions each, and their public record."""
    state = game.init(np.arange(n, dtype=np.uint64) * 7919 + seed)
    tracker = void_tracker(game, n)
    rnd = make_agent("random", game, seed=seed)
    for _ in range(steps):
        mask = game.legal_action_mask(state)
        actions = rnd.act(None, mask, None)
        tracker.before_step(state, actions)
        tracker.after_step(game.step(state, actions, legal=mask))
    return state, tracker.rows(np.arange(n))


@pytest.mark.parametrize("name, options", [("bobs_hat", {"hands": 2}), ("oh_hell", {"deal_style": "short_low"})])
def test_legal_actions_in_whole_games(name, options):
    """Whole games against random play (the engine refuses an illegal action), every phase searched."""
    game = make_game(name, players=4, **options)
    agent = make_agent("ismcts:sims=6", game, seed=2)
    rnd = make_agent("random", game, seed=3)
    res = play_games(game, [agent, rnd, agent, rnd], 2, seed=5)
    assert res.totals.shape == (2, 4)
    assert agent.stats["searched"] > 0 and agent.stats["nodes"] > 0


@pytest.mark.parametrize("name", ["bobs_hat", "oh_hell"])
def test_legal_actions_at_random_positions(name):
    game = make_game(name, players=4)
    for steps, seed in ((1, 1), (5, 2), (13, 3), (27, 4)):
        state, public = _positions(game, 12, steps, seed)
        mask = game.legal_action_mask(state)
        agent = make_agent("ismcts:sims=10", game, seed=seed)
        actions = agent.act(game.observe(state), mask, state.cur.astype(np.int64), public=public)
        assert mask[np.arange(12), actions].all()


@pytest.mark.parametrize("name, steps", [("bobs_hat", 3), ("oh_hell", 9)])
def test_the_same_seed_gives_the_same_search_whatever_the_batch(name, steps):
    game = make_game(name, players=4)
    state, public = _positions(game, 6, steps, 7)
    obs, mask, seat = game.observe(state), game.legal_action_mask(state), state.cur.astype(np.int64)

    def visits(seed, rows=None):
        rows = np.arange(6) if rows is None else rows
        sub = {k: v[rows] for k, v in public.items()}
        return make_agent("ismcts:sims=40", game, seed=seed).root_visits(obs[rows], mask[rows], seat[rows], sub)

    first = visits(3)
    np.testing.assert_array_equal(first, visits(3))
    np.testing.assert_array_equal(first[[4, 1]], visits(3, np.array([4, 1])))  # alone, other order
    np.testing.assert_array_equal(first[2:], make_agent("ismcts:sims=40,batch=2", game, seed=3).root_visits(
        obs[2:], mask[2:], seat[2:], {k: v[2:] for k, v in public.items()}))  # fmt: skip
    assert not np.array_equal(first, visits(4))  # the seed does matter


def _swap_hidden(game, state, me: np.ndarray, gen: np.random.Generator):
    """``state`` where, in each game, two seats other than ``me`` exchange held cards of one suit (every
    void shown stays true, every count the same: nothing the seat to act sees changes)."""
    other = state.copy()
    suit_of = game.deck.suit_of
    for g in range(state.batch_size):
        for _ in range(30):
            a, b = gen.choice([p for p in range(game.players) if p != me[g]], size=2, replace=False)
            s = gen.integers(game.deck.n_suits)
            ca = np.flatnonzero(other.hands[g, a] & (suit_of == s))
            cb = np.flatnonzero(other.hands[g, b] & (suit_of == s))
            if ca.size and cb.size:
                x, y = gen.choice(ca), gen.choice(cb)
                other.hands[g, a, [x, y]] = False, True
                other.hands[g, b, [x, y]] = True, False
                break
    return other


@pytest.mark.parametrize("name, steps", [("bobs_hat", 2), ("bobs_hat", 14), ("oh_hell", 2), ("oh_hell", 11)])
def test_hidden_cards_do_not_change_the_search(name, steps):
    """Other seats' cards exchanged consistently with all the searcher has seen: the same search (fixed
    seed); the searcher's own cards exchanged: another search (so the check can fail)."""
    game = make_game(name, players=4)
    state, public = _positions(game, 6, steps, 11)
    me, B = state.cur.astype(np.int64), state.batch_size
    swapped = _swap_hidden(game, state, me, np.random.default_rng(steps))
    assert np.any(swapped.hands != state.hands)
    obs, mask = game.observe(state), game.legal_action_mask(state)
    assert np.array_equal(game.observe(swapped), obs) and np.array_equal(game.legal_action_mask(swapped), mask)

    def visits(st):
        agent = make_agent("ismcts:sims=30", game, seed=5)
        return agent.root_visits(game.observe(st), game.legal_action_mask(st), st.cur.astype(np.int64), public)

    base = visits(state)
    np.testing.assert_array_equal(base, visits(swapped))
    own = state.copy()
    rows, nxt = np.arange(B), (me + 1) % game.players
    own.hands[rows, me], own.hands[rows, nxt] = state.hands[rows, nxt], state.hands[rows, me]
    same = np.all(game.legal_action_mask(own) == mask, axis=1)  # (in the play the mask moves with the hand)
    if game.module.PLAY not in state.phase:
        assert same.all()
    if same.any():
        assert not np.array_equal(visits(own)[same], base[same])


# -- options
@pytest.mark.parametrize(
    "spec, message",
    [
        ("ismcts:sims=0", "ismcts option sims must be a positive integer, got 0"),
        ("ismcts:sims=2.5", "ismcts option sims must be a positive integer, got 2.5"),
        ("ismcts:batch=0", "ismcts option batch must be a positive integer, got 0"),
        ("ismcts:uct_c=-1", "ismcts option uct_c must be a finite number >= 0, got -1"),
        ("ismcts:uct_c=inf", "ismcts option uct_c must be a finite number >= 0, got inf"),
        ("ismcts:objective=win", "unknown ismcts objective 'win'; choose one of score, diff"),
        ("ismcts:depth=-1", "ismcts option depth must be an integer >= 0 (0: no limit), got -1"),
        ("ismcts:worlds=3", "unknown ismcts option(s) worlds; known: sims, uct_c, objective, batch, depth"),
    ],
)
def test_bad_options_are_one_clear_line(spec, message):
    with pytest.raises(ValueError) as err:
        make_agent(spec, make_game("oh_hell", players=4))
    assert str(err.value) == message


def test_it_needs_a_game():
    with pytest.raises(ValueError, match="the 'ismcts' agent needs a game"):
        make_agent("ismcts")


@pytest.mark.parametrize("name, steps", [("bobs_hat", 20), ("oh_hell", 14), ("oh_hell", 25)])
def test_the_worlds_agree_with_all_the_seat_has_seen(name, steps):
    """Every world keeps the seat's own hand, gives each other seat as many cards as it holds, deals no card
    seen, and no card of a suit to a seat the public record shows void in it."""
    game = make_game(name, players=4)
    state, public = _positions(game, 8, steps, 13)
    me = state.cur.astype(np.int64)
    agent = make_agent("ismcts:sims=25", game, seed=1)
    _, hands, uniforms = agent.determinize(game.observe(state), me, public)
    B, S = hands.shape[:2]
    rows = np.arange(B)
    assert uniforms.shape[:2] == (B, S) and ((uniforms >= 0) & (uniforms < 1)).all()
    assert (hands[rows, :, me] == state.hands[rows, None, me]).all()
    np.testing.assert_array_equal(hands.sum(axis=3), np.broadcast_to(state.hands.sum(axis=2)[:, None], (B, S, 4)))
    assert not (hands & state.played[:, None, None]).any()
    suit = np.eye(game.deck.n_suits, dtype=bool)[game.deck.suit_of]  # (N, S)
    held = hands.astype(np.int64) @ suit.astype(np.int64)  # (B, S, P, suits)
    assert public["void"].any()  # the positions do show voids
    assert not (held[public["void"][:, None].repeat(S, axis=1)] > 0).any()
    assert (held.sum(axis=(1, 2)) > 0).all()  # (the check reads cards that are there)


def test_the_speed_benchmark_measures_a_batch(capsys):
    from benchmarks.ismcts_speed import main, measure

    row = measure(make_game("oh_hell", players=4), "ismcts:sims=3", batch=3, steps=5)
    assert (row["batch"], row["steps"], row["searched"]) == (3, 5, 3)
    assert row["cpu_ms_per_decision"] > 0 and row["decisions_per_cpu_second"] > 0
    with pytest.raises(SystemExit) as err:
        main(["--batch", "two"])
    assert err.value.code == 2
    assert "--batch and --steps want comma-separated whole numbers, got 'two'" in capsys.readouterr().err
