"""Inference of the hidden hands (agents/inference.py) and its measurement (train/inference/, ``bobshat infer``)."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from agents import make_agent
from agents.arena import play_games
from agents.inference import (
    MIN_PROB,
    NOBODY,
    CardNet,
    WorldSampler,
    card_feature_size,
    card_features,
    deal_from_marginals,
    holder_prior,
    holders,
    load_card_net,
    policy_log_likelihood,
    resample,
    save_card_net,
)
from agents.ppo_agent import masked_logits
from bobshat_env.core.resample import consistent, sample_hands, trick_voids, void_tracker
from bobshat_env.games import make_game
from train.inference.learn import collect, train
from train.inference.measure import Tally, marginals, measure, score

ROOT = Path(__file__).resolve().parents[1]
CHECKPOINTS = {"bobs_hat": ROOT / "checkpoints" / "bobs_hat_4p.pt", "oh_hell": ROOT / "checkpoints" / "oh_hell_4p.pt"}


def _stub_policy(game, seed: int = 0, scale: float = 0.05):
    """A fixed random linear policy (obs -> logits): every action has a probability the test can compute."""
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(game.obs_size(), game.n_actions, generator=g) * scale

    def policy(obs: np.ndarray, mask: np.ndarray) -> torch.Tensor:
        return masked_logits(torch.from_numpy(np.asarray(obs, dtype=np.float32)) @ w, torch.from_numpy(mask))

    return policy


def _play(game, keys: np.ndarray, steps: int, policy=None):
    """Play ``steps`` decisions of the shipped policy (greedy, or ``policy`` greedy), keeping the public
    record; return the state, the record and, per step, (state before it, actions)."""
    agent = make_agent(f"ppo:{CHECKPOINTS[game.name]}", game)
    state = game.init(keys)
    tracker = void_tracker(game, keys.shape[0])
    trail = []
    for _ in range(steps):
        mask = game.legal_action_mask(state)
        if policy is None:
            actions = agent.act(game.observe(state), mask, state.cur.astype(np.int64))
        else:
            actions = torch.argmax(policy(game.observe(state), mask), dim=1).numpy()
        trail.append((state.copy(), actions.copy()))
        tracker.before_step(state, actions)
        res = game.step(state, actions, legal=mask)
        tracker.after_step(res)
    return state, tracker, trail


@pytest.mark.parametrize("name, steps", [("oh_hell", 7), ("bobs_hat", 9)])
@pytest.mark.parametrize("scope", ["all", "bids"])
def test_policy_likelihood_of_the_true_world_is_the_product_of_the_others_action_probabilities(name, steps, scope):
    """Replayed in the true deal, a world's likelihood is the product, over every action of a seat other than
    the searcher's this hand (its hat choice and bids only, with scope bids), of the policy's probability of
    it, floored at MIN_PROB: computed here step by step on the states the games went through."""
    game = make_game(name, players=4)
    policy = _stub_policy(game, scale=3.0)  # the shipped policy plays; the stub judges (some actions unlikely)
    keys = np.array([11, 12, 13], dtype=np.uint64)
    state, tracker, trail = _play(game, keys, steps)
    assert np.all(state.hand_no == 0)  # one hand: every step of the trail belongs to it
    me = state.cur.astype(np.int64)
    by_hand, unfloored = np.zeros(keys.shape[0]), np.zeros(keys.shape[0])
    for before, actions in trail:
        lp = torch.log_softmax(policy(game.observe(before), game.legal_action_mask(before)), dim=1).numpy()
        lp = lp[np.arange(keys.shape[0]), actions]
        counted = before.cur.astype(np.int64) != me
        if scope == "bids":
            counted &= before.phase < game.module.PLAY
        by_hand += np.where(counted, np.maximum(lp, math.log(MIN_PROB)), 0.0)
        unfloored += np.where(counted, lp, 0.0)
    assert np.all(by_hand < 0)
    if scope == "all":
        assert np.any(unfloored < by_hand)  # the floor was used: an action the stub found very unlikely
    obs = game.observe(state)
    pstate, counts, unseen = game.public_state(obs, me)
    public = tracker.rows(np.arange(keys.shape[0]))
    worlds = state.hands[:, None].copy()  # (n, 1, P, N): the true world
    got = policy_log_likelihood(game, policy, pstate, worlds, me, public["played_by"], public["history"], scope)
    np.testing.assert_allclose(got[:, 0], by_hand, rtol=1e-5)
    if scope == "bids":
        return
    # the check can fail: other worlds have other likelihoods
    void = trick_voids(pstate.trick, pstate.led_suit, game.deck) | public["void"]
    own = state.hands[np.arange(3), me]
    others = sample_hands(own, me, unseen, counts, void, game.deck, 4, np.random.default_rng(0))
    lik = policy_log_likelihood(game, policy, pstate, others, me, public["played_by"], public["history"])
    assert not np.allclose(lik, by_hand[:, None])


def test_holders_are_numbered_from_the_seat_clockwise():
    hands = np.zeros((2, 4, 5), dtype=bool)
    hands[:, 0, 0] = hands[:, 1, 1] = hands[:, 2, 2] = hands[:, 3, 3] = True  # card 4: nobody
    np.testing.assert_array_equal(holders(hands, np.array([0, 1])), [[0, 1, 2, 3, NOBODY], [3, 0, 1, 2, NOBODY]])


def test_card_features_are_the_observation_and_the_public_record_by_relative_seat():
    game = make_game("oh_hell", players=4)
    P, S, N = 4, game.deck.n_suits, game.deck.n_cards
    obs = np.random.default_rng(0).random((2, game.obs_size())).astype(np.float32)
    void = np.zeros((2, P, S), dtype=bool)
    void[:, 2, 3] = True  # seat 2 shown void in suit 3
    played = np.zeros((2, P, N), dtype=bool)
    played[:, 3, 7] = True  # seat 3 played card 7
    x = card_features(game, obs, np.array([1, 3]), {"void": void, "played_by": played, "history": None})
    assert x.shape == (2, card_feature_size(game))
    np.testing.assert_array_equal(x[:, : obs.shape[1]], obs)
    v = x[:, obs.shape[1] : obs.shape[1] + P * S].reshape(2, P, S)
    assert v[0, 1, 3] == 1 and v[1, 3, 3] == 1 and v.sum() == 2  # seat 2 is 1 after seat 1, 3 after seat 3
    c = x[:, obs.shape[1] + P * S :].reshape(2, P, N)
    assert c[0, 2, 7] == 1 and c[1, 0, 7] == 1 and c.sum() == 2


@pytest.mark.parametrize("name, steps", [("oh_hell", 2), ("oh_hell", 30), ("bobs_hat", 26)])
def test_the_facts_prior_is_about_the_uniform_samplers_marginal(name, steps):
    """Holders in proportion to the cards they hold, void suits excluded: the marginal of uniform consistent
    worlds (exactly without voids, closely with them)."""
    game = make_game(name, players=4)
    state, tracker, _ = _play(game, np.arange(1, 4, dtype=np.uint64) * 13, steps)
    obs, me, public, pstate, counts, unseen, void = _facts(game, state, tracker)
    if steps == 30:
        assert void.any()
    prior = np.exp(holder_prior(unseen, counts, void, me, game.deck))
    own = pstate.hands[np.arange(3), me]
    hands = sample_hands(own, me, unseen, counts, void, game.deck, 3000, np.random.default_rng(1))
    empirical = marginals(hands, me)
    u = unseen[:, :, None].repeat(4, 2)
    assert np.all(prior[u & (empirical == 0)] < 1e-12) or not np.any(u & (empirical == 0))  # ruled out: 0
    gap = np.abs(prior - empirical)
    voided = void.any(axis=(1, 2))
    assert gap[~voided][u[~voided]].max(initial=0) < 0.04  # exact up to the sampling noise of 3000 worlds
    assert gap[voided][u[voided]].max(initial=0) < 0.12  # voids shift the other seats' shares a little
    # the learned sampler with no correction deals like the uniform sampler, within the sampling noise
    flat = np.zeros((3, game.deck.n_cards, 4))
    dealt = deal_from_marginals(flat, own, me, unseen, counts, void, game.deck, 3000, np.random.default_rng(2))
    assert consistent(dealt, own, me, unseen, counts, void, game.deck).all()
    assert np.abs(marginals(dealt, me) - empirical)[u].max() < 0.06


def _facts(game, state, tracker, rows=None):
    rows = np.arange(state.batch_size) if rows is None else rows
    obs = game.observe(state)[rows]
    me = state.cur.astype(np.int64)[rows]
    public = tracker.rows(rows)
    pstate, counts, unseen = game.public_state(obs, me)
    void = trick_voids(pstate.trick, pstate.led_suit, game.deck) | public["void"]
    return obs, me, public, pstate, counts, unseen, void


@pytest.mark.parametrize("name, steps", [("oh_hell", 12), ("bobs_hat", 20)])
def test_none_is_the_uniform_sampler_bit_for_bit(name, steps):
    game = make_game(name, players=4)
    state, tracker, _ = _play(game, np.arange(1, 5, dtype=np.uint64) * 101, steps)
    obs, me, public, pstate, counts, unseen, void = _facts(game, state, tracker)
    _, got = WorldSampler(game, "none", 16, 4, np.random.default_rng(7)).sample(obs, me, public)
    own = pstate.hands[np.arange(me.shape[0]), me]
    want = sample_hands(own, me, unseen, counts, void, game.deck, 16, np.random.default_rng(7))
    assert np.array_equal(got, want)
    # and the search with inference=none draws exactly these worlds (its generator is the sampler's)
    agent = make_agent(f"search:policy={CHECKPOINTS[name]},worlds=16,inference=none", game, seed=3)
    assert agent.sampler.method == "none"
    gen = np.random.default_rng(np.random.SeedSequence(3).spawn(1)[0])  # the agent's, from its seed
    assert np.array_equal(
        agent._worlds(obs, me, public)[1], sample_hands(own, me, unseen, counts, void, game.deck, 16, gen)
    )


def test_auto_is_learned_where_the_policy_has_a_network_of_its_table():
    for name in ("bobs_hat", "oh_hell"):
        game = make_game(name, players=4)
        assert make_agent(f"search:policy={CHECKPOINTS[name]}", game).sampler.method == "learned"  # the default
        assert make_agent(f"search:policy={CHECKPOINTS[name]},inference=none", game).sampler.method == "none"
        assert make_agent(f"search:policy={CHECKPOINTS[name]},belief=all", game).sampler.method == "policy"
        assert make_agent(f"search:policy={CHECKPOINTS[name]},inference=auto", game).sampler.method == "learned"
        short = make_game(name, players=4, **({"hands": 2} if name == "bobs_hat" else {"deal_style": "short_low"}))
        auto = make_agent(f"search:policy={CHECKPOINTS[name]},inference=auto", short)
        assert auto.sampler.method == "learned"  # the same view of the cards
    three = make_game("oh_hell", players=3)  # no network beside the 3-player policy: uniform worlds
    spec = f"search:policy={ROOT / 'checkpoints' / 'oh_hell_3p.pt'},inference=auto"
    assert make_agent(spec, three).sampler.method == "none"


def test_auto_skips_a_network_of_another_table_beside_the_policy(tmp_path):
    """A copied policy with another table's card network beside it: auto plays uniform worlds, no error
    (an explicit cards=PATH of another table is one, in test_search_inference_options_are_clear_errors)."""
    import shutil

    for suffix in (".pt", ".pt.json"):
        shutil.copy(ROOT / "checkpoints" / f"oh_hell_4p{suffix}", tmp_path / f"p{suffix}")
    for suffix in (".cards", ".cards.json"):
        shutil.copy(ROOT / "checkpoints" / f"bobs_hat_4p{suffix}", tmp_path / f"p{suffix}")
    agent = make_agent(f"search:policy={tmp_path / 'p.pt'},inference=auto", make_game("oh_hell", players=4))
    assert agent.sampler.method == "none"


@pytest.mark.parametrize("name", ["oh_hell", "bobs_hat"])
@pytest.mark.parametrize("method", ["policy", "learned"])
def test_inferred_worlds_always_satisfy_the_hard_facts(name, method):
    game = make_game(name, players=4)
    cards = CardNet(card_feature_size(game), game.deck.n_cards, 4, (16,)) if method == "learned" else None
    if cards is not None:  # large random weights: a confident network that is often wrong
        with torch.no_grad():
            for p in cards.parameters():
                p.mul_(20)
    policy = _stub_policy(game, scale=0.5)
    checked = 0
    for seed, steps in ((1, 3), (2, 10), (3, 17), (4, 26)):
        state, tracker, _ = _play(game, np.arange(seed, seed + 3, dtype=np.uint64) * 7, steps)
        obs, me, public, pstate, counts, unseen, void = _facts(game, state, tracker)
        sampler = WorldSampler(game, method, 8, 4, np.random.default_rng(seed), policy=policy, cards=cards)
        _, hands = sampler.sample(obs, me, public)
        own = pstate.hands[np.arange(me.shape[0]), me]
        assert consistent(hands, own, me, unseen, counts, void, game.deck).all()
        truth_voids = void  # the true hands respect the facts too (the facts are facts)
        assert consistent(state.hands[:, None], own, me, unseen, counts, truth_voids, game.deck).all()
        checked += hands.shape[0] * hands.shape[1]
    assert checked == 4 * 3 * 8


def test_weighted_methods_choose_among_the_worlds():
    """The weights matter: a card net sure that the next seat holds the clubs picks worlds that agree."""
    game = make_game("oh_hell", players=4)
    state, tracker, _ = _play(game, np.arange(1, 4, dtype=np.uint64) * 31, 6)
    obs, me, public, pstate, counts, unseen, void = _facts(game, state, tracker)
    net = CardNet(card_feature_size(game), game.deck.n_cards, 4, (4,))
    with torch.no_grad():
        for p in net.parameters():
            p.zero_()
        clubs = torch.from_numpy(game.deck.suit_of == 0)
        net.body[-1].bias.view(game.deck.n_cards, 4)[clubs, 1] = 5.0  # every club: the next seat
    draws = {}
    for method in ("none", "learned"):
        sampler = WorldSampler(game, method, 32, 8, np.random.default_rng(5), cards=net)
        _, hands = sampler.sample(obs, me, public)
        club = unseen & (game.deck.suit_of == 0)
        draws[method] = (holders(hands, me) == 1)[club[:, None, :].repeat(32, 1)].mean()
    assert draws["learned"] > draws["none"] + 0.2  # (measured: 0.67 against 0.26; a uniform deal: 0.29)


def test_resampling_follows_the_weights():
    logw = np.log(np.array([[1.0, 1.0, 98.0, 0.0], [0.0, 50.0, 0.0, 50.0]]) + 1e-300)
    idx = resample(logw, 100, np.random.default_rng(0))
    assert (idx[0] == 2).sum() >= 97 and set(idx[0]) <= {0, 1, 2}
    assert (idx[1] == 1).sum() == 50 and (idx[1] == 3).sum() == 50  # systematic: exact shares


def test_the_measurement_scores_truth_zero_and_uniform_minus_log_holders():
    """score(): the marginal that puts each card on its true holder scores 0 and accuracy 1; uniform marginals
    over the possible holders score -log(#holders) per card, summed per decision (a scripted position)."""
    game = make_game("oh_hell", players=4)
    state, tracker, _ = _play(game, np.array([5, 6], dtype=np.uint64), 9)
    obs, me, public, pstate, counts, unseen, void = _facts(game, state, tracker)
    truth = holders(state.hands, me)
    know = marginals(np.repeat(state.hands[:, None], 4, axis=1), me)  # every world is the truth
    ll, n, right = score(know, truth, unseen, 0.5 / 4)
    assert np.all(ll == 0) and np.array_equal(right, n) and np.array_equal(n, unseen.sum(axis=1))
    possible = np.isfinite(holder_prior(unseen, counts, void, me, game.deck))  # (n, N, P)
    uniform = possible / possible.sum(axis=2, keepdims=True)
    ll, n, right = score(uniform, truth, unseen, 1e-9)
    for i in range(2):
        want = -sum(math.log(possible[i, c].sum()) for c in np.nonzero(unseen[i])[0])
        assert ll[i] == pytest.approx(want)
        assert (possible[i].sum(axis=1)[unseen[i]] >= 2).any()  # the position has a choice to score
    # a holder no world chose: the floor, not log 0
    wrong = np.zeros_like(know)
    wrong[..., NOBODY] = 1.0
    ll, _, _ = score(wrong, np.where(unseen, 1, 0), unseen, 0.01)
    np.testing.assert_allclose(ll, unseen.sum(axis=1) * math.log(0.01))


def test_the_tally_averages_per_game_then_over_games():
    """Cards of one game weigh within it; games weigh equally; a phase a game did not reach is left out."""
    t = Tally(2, 3)
    t.add(
        np.array([0, 0, 1]),
        np.array([0, 1, 0]),
        (np.array([-3.0, -1.0, -4.0]), np.array([3, 1, 2]), np.array([1, 1, 0])),
    )
    ll, acc = t.per_game()
    np.testing.assert_allclose(ll, [-1.0, -2.0])  # (-3 - 1) / 4 and -4 / 2
    np.testing.assert_allclose(acc, [0.5, 0.0])
    ll1, _ = t.per_game(1)
    assert ll1[0] == -1.0 and np.isnan(ll1[1])


def test_measure_scores_a_sampler_that_knows_the_truth_zero(monkeypatch):
    """End to end: with worlds equal to the true deal, every decision's log-likelihood is 0 and accuracy 1."""
    game = make_game("bobs_hat", players=4, hands=1)
    live = {}
    init = type(game).init

    def spy(self, keys, auto_deal=True):
        live["state"] = init(self, keys, auto_deal)
        return live["state"]

    class Truth:
        worlds = 4

        def sample(self, obs, seat, public):
            assert obs.shape[0] == live["state"].batch_size  # every game is scored at every step here
            return None, np.repeat(live["state"].hands[:, None], 4, axis=1)

    monkeypatch.setattr(type(game), "init", spy)
    uniform = WorldSampler(game, "none", 4, 1, np.random.default_rng(0))
    doc = measure(game, {"truth": Truth(), "none": uniform}, make_agent("simple", game), games=3, seed=2)
    t = doc["methods"]["truth"]
    assert t["log_likelihood"]["mean"] == 0 and t["accuracy"]["mean"] == 1 and t["log_likelihood"]["games"] == 3
    assert doc["methods"]["none"]["log_likelihood"]["mean"] < -0.3
    assert set(t["phases"]) == {"bids"} | {f"trick {k}" for k in range(1, 6)}
    assert doc["decisions"] == 3 * (1 + 4 + 20)


def test_card_net_trains_saves_and_loads(tmp_path):
    game = make_game("bobs_hat", players=4, hands=1)
    examples = collect(game, make_agent("simple", game), 6, seed=1)
    assert examples.x.shape[1] == card_feature_size(game) and examples.x.shape[0] == 6 * 25
    net, report = train(game, examples, hidden=(16,), epochs=2, holdout=0.34, seed=0)
    assert report["held_out_games"] == 2 and report["held_out"]["cards"] > 0
    assert math.isfinite(report["held_out"]["log_likelihood"])
    path = tmp_path / "t.cards"
    save_card_net(path, game, net)
    back = load_card_net(path, game)
    x = torch.from_numpy(examples.x[:5].astype(np.float32))
    assert torch.equal(back(x), net(x))
    with pytest.raises(ValueError, match="is for bobs_hat with 4 players, not oh_hell with 4"):
        load_card_net(path, make_game("oh_hell", players=4))
    with pytest.raises(ValueError, match="not a card-location network"):
        load_card_net(CHECKPOINTS["bobs_hat"], game)
    # the search reads it and plays legal games with it
    ck = CHECKPOINTS["bobs_hat"]
    agent = make_agent(f"search:policy={ck},worlds=2,top_k=2,inference=learned,cards={path}", game, seed=1)
    assert agent.sampler.method == "learned"
    res = play_games(game, [agent, make_agent(f"ppo:{ck}", game)] * 2, 2, seed=3)
    assert res.totals.shape == (2, 4) and agent.stats["searched"] > 0


def test_search_inference_options_are_clear_errors(tmp_path):
    game = make_game("oh_hell", players=4)
    ck = CHECKPOINTS["oh_hell"]
    for spec, msg in (
        (f"search:policy={ck},inference=oracle", "unknown search inference 'oracle'"),
        (f"search:policy={ck},belief=all,cards=x.cards", "cards names the network of inference=learned"),
        (f"search:policy={ck},belief=all,inference=auto", "belief=all is policy inference"),
        (f"search:policy={ck},inference=auto,cards={CHECKPOINTS['bobs_hat'].with_suffix('.cards')}", "is for bobs_"),
        (f"search:policy={ck},inference=learned,belief=all", "belief=all is policy inference"),
        (f"search:policy={ck},inference=none,cards=x.cards", "add inference=learned"),
        (f"search:policy={ck},inference=auto,cards={tmp_path / 'x.cards'}", "no checkpoint at"),
        (f"search:policy={ck},inference=policy,temper=0", "temper must be a number in"),
        (f"search:policy={ck},inference=policy,temper=1.5", "temper must be a number in"),
        (f"search:policy={ck},inference=learned,cards={tmp_path / 'no.cards'}", "no card-location network"),
        (f"search:policy={ck},inference=learned", "no card-location network at .*oh_hell_4p.cards|"),
    ):
        if spec.endswith("inference=learned") and (ROOT / "checkpoints" / "oh_hell_4p.cards").is_file():
            continue  # the shipped network is there: nothing to refuse
        with pytest.raises(Exception, match=msg):
            make_agent(spec, game)
    agent = make_agent(f"search:policy={ck},belief=all", game)
    assert agent.sampler.method == "policy" and agent.sampler.scope == "all"
    assert make_agent(f"search:policy={ck},belief=bids", game).sampler.scope == "bids"


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bobshat", "infer", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=300)  # fmt: skip


def test_cli_bad_inputs_are_one_line_errors(tmp_path):
    out = tmp_path / "net.cards"
    for args, msg in (
        (["--methods", "none,oracle"], "--methods: unknown method 'oracle'"),
        (["--methods", ","], "--methods names no method"),
        (["--methods", "none,none"], "--methods names a method twice"),
        (["--seats", "4"], "--seats must be 'all' or seats 0-3"),
        (["--seats", "x"], "--seats must be 'all' or seats 0-3"),
        (["--methods", "learned", "--cards", str(tmp_path / "no.cards")], "no card-location network"),
        (["--train", "--methods", "none", "--out", str(out)], "--methods chooses what the measurement scores"),
        (["--train", "--out", str(out)], "--holdout 0.1 of 1 game(s) leaves none to fit"),
        (["--policy", str(tmp_path / "none.pt")], "no checkpoint"),
        (["--games", "0"], "argument --games: must be 1 to 100,000"),
        (["--worlds", "-2"], "argument --worlds: must be 1 to 1,024"),
        (["--json", str(tmp_path)], "--json"),
    ):
        res = _cli("--game", "oh_hell", "--max-hands", "1", "--games", "1", *args, cwd=ROOT)
        assert res.returncode == 2, (args, res.stderr)
        assert msg in res.stderr, (args, res.stderr)
        assert "Traceback" not in res.stderr
        lines = res.stderr.strip().splitlines()  # argparse's own errors come after its usage lines
        assert lines[-1].startswith("bobshat infer: error: ") and sum("error" in line for line in lines) == 1
    assert not out.exists()


def test_cli_measures_and_trains_a_tiny_run(tmp_path):
    res = _cli("--game", "oh_hell", "--deal-style", "short_low", "--games", "2", "--max-hands", "1", "--worlds", "4",
               "--methods", "none,policy", "--policy", str(CHECKPOINTS["oh_hell"]),
               "--json", str(tmp_path / "r.json"), "--quiet", cwd=ROOT)  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert "log-likelihood" in res.stdout and "policy" in res.stdout
    import json

    doc = json.loads((tmp_path / "r.json").read_text())
    assert set(doc["methods"]) == {"none", "policy"} and doc["games"] == 2
    assert doc["methods"]["none"]["log_likelihood"]["mean"] < 0


def test_max_hands_stops_every_game_after_that_many_hands():
    """Seen red with the max_hands stop dropped from the shared step (train/inference/measure.play_step)."""
    game = make_game("bobs_hat", players=4, hands=2)
    uniform = WorldSampler(game, "none", 4, 1, np.random.default_rng(0))
    doc = measure(game, {"none": uniform}, make_agent("simple", game), games=2, seed=2, max_hands=1)
    assert doc["decisions"] == 2 * (1 + 4 + 20)  # the first hand: the hat, four bids, five cards each
