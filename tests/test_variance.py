"""The variance-reduced estimator of train/evaluate/variance.py: zero-mean control variates, unbiased reduced means.

The pure functions are checked exactly by enumeration on constructed cases
and on a toy game whose value is known; the engine-level pieces (fresh
deals, successor values) with a cheap stand-in value function, so no
checkpoint or torch is needed except in the one end-to-end run.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from train.evaluate.variance import (
    MIN_FIT,
    ControlVariates,
    chance_terms,
    crossfit_reduce,
    decision_terms,
    fresh_deal_values,
    hand_margins,
    reduced_stats,
    successor_values,
)


# --------------------------------------------------------------------------
# Exact: the expectation of each term given the policies is zero
def test_decision_term_has_zero_expectation_by_enumeration():
    gen = np.random.default_rng(0)
    n, A, P = 7, 6, 4
    q = gen.normal(size=(n, A, P)) * 10
    legal = gen.random((n, A)) < 0.7
    legal[:, 0] = True
    probs = gen.random((n, A)) * legal
    probs /= probs.sum(axis=1, keepdims=True)
    q[~legal] = 1e6  # an illegal action's value must not count
    expectation = sum(probs[:, a, None] * decision_terms(q, probs, np.full(n, a)) for a in range(A))
    # actions with probability 0 contribute 0 (their term is weighted by 0), the rest must cancel exactly
    assert np.allclose(expectation, 0.0, atol=1e-9)
    # the same in the (n, A) form
    e2 = sum(probs[:, a] * decision_terms(q[..., 1], probs, np.full(n, a)) for a in range(A))
    assert np.allclose(e2, 0.0, atol=1e-9)


def test_decision_term_with_wrong_probabilities_is_biased():
    """Break: the agent draws from ``probs`` but the term is built with uniform ones: the mean is not zero."""
    gen = np.random.default_rng(1)
    n, A = 5, 4
    q = gen.normal(size=(n, A)) * 10
    probs = np.tile([0.7, 0.1, 0.1, 0.1], (n, 1))
    wrong = np.full((n, A), 0.25)
    expectation = sum(probs[:, a] * decision_terms(q, wrong, np.full(n, a)) for a in range(A))
    assert np.abs(expectation).max() > 0.1


def test_chance_term_has_zero_expectation_by_enumeration():
    """Actual outcome c and K independent fresh outcomes, all enumerated: the expectation is exactly 0."""
    p = np.array([0.5, 0.2, 0.2, 0.1])
    V = np.array([3.0, -7.0, 1.5, 20.0])
    K = 2
    total = 0.0
    for c, *fresh in itertools.product(range(4), repeat=K + 1):
        w = p[c] * np.prod(p[list(fresh)])
        total += w * chance_terms(V[[c]], V[list(fresh)][None, :])[0]
    assert abs(total) < 1e-12


def test_chance_term_whose_fresh_sample_is_not_independent_is_biased():
    """Break: a 'fresh' sample that is the actual outcome moved by one (depends on it) is no longer zero-mean."""
    p = np.array([0.5, 0.2, 0.2, 0.1])
    V = np.array([3.0, -7.0, 1.5, 20.0])
    total = sum(p[c] * chance_terms(V[[c]], V[[(c + 1) % 4]][None, :])[0] for c in range(4))
    assert abs(total) > 1.0


# --------------------------------------------------------------------------
# A toy game with a known value: the reduced mean is unbiased and narrower
def _toy(gen: np.random.Generator, D: int, probs_for_cv: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """D deals of a one-decision game: chance c ~ U{0..3}, then an agent draws a ~ pi = (0.4, 0.6).

    Outcome ``y = 5 c + 8 a + noise`` (noise sd 1), true mean 5 * 1.5 + 8 * 0.6 = 12.3.
    The value functions are approximate (``V(c) = 4 c``, ``Q(c, a) = 5 c + 7 a``), as real ones are.
    """
    pi = np.array([0.4, 0.6])
    c = gen.integers(0, 4, size=D)
    a = (gen.random(D) < pi[1]).astype(np.int64)
    y = 5.0 * c + 8.0 * a + gen.normal(size=D)
    fresh = gen.integers(0, 4, size=(D, 4))
    t_chance = chance_terms(4.0 * c, 4.0 * fresh)
    q = 5.0 * c[:, None] + 7.0 * np.arange(2)[None, :]
    used = np.tile(pi if probs_for_cv is None else probs_for_cv, (D, 1))
    t_dec = decision_terms(q, used, a)
    return y, np.stack([t_chance, t_dec], axis=1)


TRUE_TOY = 12.3


@pytest.mark.parametrize("D", [20, 400])  # below MIN_FIT per fold (beta = 1) and above (cross-fitted beta)
def test_reduced_mean_is_unbiased_on_a_toy_game(D):
    gen = np.random.default_rng(2)
    reps = 3000 if D == 20 else 600
    plain, reduced = [], []
    for _ in range(reps):
        y, c = _toy(gen, D)
        plain.append(y.mean())
        reduced.append(crossfit_reduce(y, c)[0].mean())
    reduced = np.array(reduced)
    se = reduced.std(ddof=1) / np.sqrt(reps)
    assert abs(reduced.mean() - TRUE_TOY) < 4 * se + 1e-3
    assert np.var(plain) / np.var(reduced) > 5  # the chance and the agent's dice explain most of the spread


def test_toy_game_with_wrong_probabilities_is_biased():
    """Break: the decision term assumes pi = (0.5, 0.5) while the agent plays (0.4, 0.6): the estimate drifts."""
    gen = np.random.default_rng(3)
    est = [crossfit_reduce(*_toy(gen, 20, probs_for_cv=np.array([0.5, 0.5])))[0].mean() for _ in range(3000)]
    se = np.std(est, ddof=1) / np.sqrt(len(est))
    assert abs(np.mean(est) - TRUE_TOY) > 8 * se


def test_a_term_that_depends_on_the_outcome_is_caught():
    """Break: a 'control variate' built from the outcome itself (mean E|y| != 0) biases the estimate."""
    gen = np.random.default_rng(4)
    est = []
    for _ in range(400):
        y = gen.normal(size=200) + 3.0
        leak = (y - 3.0) + np.abs(y)  # depends on the outcome: mean E|y| != 0
        est.append(crossfit_reduce(y, leak[:, None])[0].mean())
    assert abs(np.mean(est) - 3.0) > 0.2


def test_crossfit_beta_uses_only_the_other_fold():
    """Changing the deals of fold 0 changes fold 1's beta (fitted on fold 0), never fold 0's own."""
    gen = np.random.default_rng(5)
    D = 4 * MIN_FIT
    y, c = gen.normal(size=D), gen.normal(size=(D, 2))
    _, b1 = crossfit_reduce(y, c)
    y2 = y.copy()
    y2[0::2] += gen.normal(size=D // 2) * 5  # fold 0 changes
    _, b2 = crossfit_reduce(y2, c)
    assert np.allclose(b1[0], b2[0])  # fold 0's beta comes from fold 1 only
    assert not np.allclose(b1[1], b2[1])


def test_reduced_stats_reports_the_factor():
    gen = np.random.default_rng(6)
    y, c = _toy(gen, 400)
    r = reduced_stats(y, c)
    assert r["variance_factor"] > 5
    assert abs(r["mean"] - TRUE_TOY) < 3 * r["ci95"]
    assert len(r["beta"]) == 2


def test_the_reduced_ci_is_the_plain_one_narrowed_by_the_variance_factor():
    """What a user reads next to the plain estimate: the reduced CI is the plain CI over the square root of the
    variance factor (both Student t over the same deals), so a factor of 9 means a CI three times narrower."""
    from train.evaluate.statistics import mean_ci

    y, c = _toy(np.random.default_rng(6), 400)
    r = reduced_stats(y, c)
    _, plain_ci = mean_ci(y)
    assert r["ci95"] == pytest.approx(plain_ci / np.sqrt(r["variance_factor"]), rel=1e-9)
    assert r["ci95"] < plain_ci / 2


def test_the_fitted_coefficients_ignore_a_constant_shift_of_a_term():
    """beta is a regression slope with an intercept: a term whose sample mean is off zero by a constant (as
    any finite sample's is) must not change how much of it is used; a fit through the origin would."""
    y, c = _toy(np.random.default_rng(8), 400)
    _, betas = crossfit_reduce(y, c)
    _, shifted = crossfit_reduce(y, c + np.array([3.0, -2.0]))
    assert np.allclose(betas, shifted)
    assert np.all(betas > 0.5)  # both terms track the outcome (chance 5/4, the agent's dice 8/7)


def test_chance_terms_subtract_each_seats_mean_over_the_fresh_deals():
    """(n, P) actual values less the mean over the K fresh deals of the same seat's, with K != P."""
    gen = np.random.default_rng(9)
    actual, fresh = gen.normal(size=(2, 4)), gen.normal(size=(2, 3, 4))
    want = [[actual[i, p] - np.mean([fresh[i, k, p] for k in range(3)]) for p in range(4)] for i in range(2)]
    assert np.allclose(chance_terms(actual, fresh), want)


def test_hand_margins():
    m = hand_margins(np.array([[10, 0, -5, 3]]))
    assert np.allclose(m, [[10 - (-2 / 3), 0 - 8 / 3, -5 - 13 / 3, 3 - 5 / 3]])


# --------------------------------------------------------------------------
# Engine level, with a cheap stand-in value function
class _TrumpCount:
    """V_p = cards of the trump suit (Bob's Hat; 0 with no trump) in seat p's hand plus its score/100."""

    def __init__(self, game):
        self.game = game

    def seat_values(self, state):
        deck = self.game.deck
        suit = np.asarray(deck.suit_of)
        trump = state.trump.astype(np.int64)
        of_trump = (suit[None, :] == trump[:, None]) & (trump[:, None] < 3)
        return (state.hands & of_trump[:, None, :]).sum(axis=2).astype(np.float64) + state.scores / 100.0


@pytest.fixture(scope="module")
def bh():
    from bobshat_env.games import make_game

    return make_game("bobs_hat", players=4)


def test_fresh_deals_keep_the_context_and_are_distributed_like_the_actual_one(bh):
    from bobshat_env.core import rng

    n = 3000
    state = bh.init(rng.game_keys(11, np.arange(n)))
    value = _TrumpCount(bh)
    fresh = fresh_deal_values(bh, value, state, 4)
    assert fresh.shape == (n, 4, 4)
    terms = chance_terms(value.seat_values(state), fresh)  # (n, P)
    se = terms.std(axis=0, ddof=1) / np.sqrt(n)
    assert np.all(np.abs(terms.mean(axis=0)) < 4 * se)  # zero-mean: E[trump cards] alike
    assert terms.std() > 0.5  # and it does vary with the deal


def test_fresh_deals_from_the_wrong_hand_are_caught(bh, monkeypatch):
    """Break: fresh deals of the next hand (one card more each) make the term's mean clearly negative."""
    from bobshat_env.core import rng

    n = 3000
    state = bh.init(rng.game_keys(12, np.arange(n)))
    value = _TrumpCount(bh)
    wrong = state.copy()
    wrong.hand_no[:] += 1
    terms = chance_terms(value.seat_values(state), fresh_deal_values(bh, value, wrong, 4))
    se = terms.std(axis=0, ddof=1) / np.sqrt(n)
    assert np.all(terms.mean(axis=0) < -4 * se)


def test_successor_values_step_each_legal_action(bh):
    from bobshat_env.core import rng

    state = bh.init(rng.game_keys(13, np.arange(5)))
    value = _TrumpCount(bh)
    mask = bh.legal_action_mask(state)
    q = successor_values(bh, value, state, mask, every_seat=True)
    assert np.all(q[~mask] == 0)
    for g in range(5):
        for a in np.nonzero(mask[g])[0]:
            s = state.take(np.array([g]))
            bh.step(s, np.array([a]))
            assert np.allclose(q[g, a], value.seat_values(s)[0])


def _play_with_cv(game, agents, seating, value, seed=3, decisions="all"):
    from agents.arena import play_games

    made = []

    def factory(g, state, ids):
        made.append(ControlVariates(g, state, agents, seating[ids], value, 2, decisions))
        return made[-1]

    n = seating.shape[0]
    res = play_games(game, agents, n, seed=seed, recorder_factory=factory, seating=seating, batch_size=n)
    return res, made[0].terms


def test_collector_gives_zero_decision_terms_to_deterministic_agents_and_terms_to_random(bh):
    from agents import make_agent

    value = _TrumpCount(bh)
    n = 48
    agents = [make_agent(s, bh, seed=i) for i, s in enumerate(["simple", "random"])]
    res, terms = _play_with_cv(bh, agents, np.tile([0, 1, 0, 1], (n, 1)), value)
    assert res.totals.shape == (n, 4) and terms.shape == (n, 3, 4)
    assert np.abs(terms[:, 0]).sum() > 0  # chance terms at every deal
    assert np.abs(terms[:, 1]).sum() > 0 and np.abs(terms[:, 2]).sum() > 0  # random's bids and card plays
    # with decisions="bids" the card plays get none
    _, bids_only = _play_with_cv(bh, agents, np.tile([0, 1, 0, 1], (8, 1)), value, decisions="bids")
    assert np.all(bids_only[:, 2] == 0) and np.abs(bids_only[:, 1]).sum() > 0
    # deterministic agents' decisions add nothing: a table of 'simple' only has no decision terms
    _, terms = _play_with_cv(bh, [make_agent("simple", bh, seed=0)], np.zeros((8, 4), dtype=np.int64), value)
    assert np.all(terms[:, 1:] == 0) and np.abs(terms[:, 0]).sum() > 0


def test_actor_only_successor_values_spread_the_margin(bh):
    """The cheap form: the actor's value v, every other seat -v/(P-1); every_seat gives each its own."""
    from bobshat_env.core import rng

    state = bh.init(rng.game_keys(14, np.arange(3)))
    value = _TrumpCount(bh)
    mask = bh.legal_action_mask(state)
    cheap = successor_values(bh, value, state, mask)
    full = successor_values(bh, value, state, mask, every_seat=True)
    actor = state.cur.astype(np.int64)
    for g in range(3):
        legal = mask[g]
        assert np.allclose(cheap[g, legal, actor[g]], full[g, legal, actor[g]])
        others = np.delete(cheap[g][legal], actor[g], axis=1)
        assert np.allclose(others, -cheap[g, legal, actor[g]][:, None] / 3)


def _at_the_last_card_of_the_first_hand(game, n: int, seed: int):
    """n Bob's Hat games played by ``strong`` up to the last card of their first hand."""
    from agents import make_agent
    from bobshat_env.core import rng

    state = game.init(rng.game_keys(seed, np.arange(n)))
    agent = make_agent("strong", game, seed=0)
    while not np.all((state.hands.sum(axis=(1, 2)) == 1) & (state.phase == game.module.PLAY)):
        mask = game.legal_action_mask(state)
        game.step(state, agent.act(game.observe(state), mask, state.cur.astype(np.int64)))
    return state


def test_the_last_card_of_a_hand_is_valued_by_the_hands_margins(bh):
    """A card that ends the hand is worth the hand's realized margins (each seat's score change less the
    others' mean, the value function's unit): they sum to zero over the seats, as raw score changes do not."""
    state = _at_the_last_card_of_the_first_hand(bh, 40, 31)
    mask = bh.legal_action_mask(state)
    for every_seat in (False, True):
        q = successor_values(bh, _TrumpCount(bh), state, mask, every_seat=every_seat)
        for g in range(40):
            (a,) = np.nonzero(mask[g])[0]  # one card left
            after = state.take(np.array([g]))
            res = bh.step(after, np.array([a]), auto_deal=False)
            assert res.hand_done[0]
            assert np.allclose(q[g, a], hand_margins(np.asarray(res.rewards))[0]) and abs(q[g, a].sum()) < 1e-9


def test_the_shipped_value_function_is_in_points_seat_by_seat(bh):
    """PolicyValue turns the value head (trained on margins x reward_scale) into points: at the last card of a
    hand, where the hand's result is nearly known, its values predict the realized margins with a slope near 1
    (not 100 or 0.01), seat by seat; and the per-seat values are the one-seat values of each seat."""
    from train.evaluate.variance import PolicyValue

    n = 200
    state = _at_the_last_card_of_the_first_hand(bh, n, 31)
    value = PolicyValue(bh, "checkpoints/bobs_hat_4p.pt")
    v = value.seat_values(state)  # (n, P)
    for p in range(4):
        assert np.allclose(v[:, p], value.values_of(state, np.full(n, p)))
    after = state.copy()
    res = bh.step(after, bh.legal_action_mask(state).argmax(axis=1), auto_deal=False)
    margin = hand_margins(np.asarray(res.rewards))
    x, y = v.ravel(), margin.ravel()
    slope = np.cov(x, y)[0, 1] / np.var(x, ddof=1)
    assert 0.7 < slope < 1.4 and np.corrcoef(x, y)[0, 1] > 0.6, (slope, np.corrcoef(x, y)[0, 1])


# --------------------------------------------------------------------------
# End to end: bobshat eval's summary and report
def test_evaluate_reports_reduced_estimates_next_to_unchanged_plain_ones(bh):
    from train.evaluate import evaluate, format_report

    specs = ["simple", "random", "simple", "random"]
    plain = evaluate(bh, specs, 2, seed=5)
    ev = evaluate(bh, specs, 2, seed=5, variance_reduction=True, vr_fresh=2, vr_decisions="all")
    assert np.array_equal(plain.totals, ev.totals)  # the estimate only watches: same games, same scores
    assert ev.cv.shape == (ev.totals.shape[0], 3, 4) and np.abs(ev.cv).sum() > 0
    s = ev.summary()
    vr = s["variance_reduction"]
    assert vr["enabled"] and vr["fresh_deals"] == 2 and vr["decisions"] == "all" and vr["seconds"] > 0
    assert vr["value"].endswith("bobs_hat_4p.pt")
    assert [a["name"] for a in vr["agents"]] == ["simple", "random"]
    for r in vr["agents"] + vr["pairwise"]:
        assert set(r) >= {"mean", "ci95", "variance_factor", "beta"}
    # with 2 deals beta is 1: the reduced mean is the plain one minus the mean of the terms per hand
    H = bh.config.hands
    x = ev.per_deal(ev.totals / H)
    c = sum(ev.per_deal(ev.cv[:, t] / H) for t in range(3))
    assert np.isclose(vr["agents"][0]["mean"], float((x[:, 0] - c[:, 0]).mean()))
    text = format_report(s)
    assert "variance-reduced estimates" in text and "reduced per hand" in text
    assert plain.summary()["variance_reduction"] == {"enabled": False, "reason": "off"}
    assert "variance-reduced" not in format_report(plain.summary())


def test_evaluate_without_a_value_function_says_why(bh, monkeypatch):
    import train.evaluate.variance
    from train.evaluate import evaluate, format_report

    monkeypatch.setattr(train.evaluate.variance, "shipped_value_path", lambda game: None)
    ev = evaluate(bh, ["simple", "random", "simple", "random"], 1, seed=5, variance_reduction=True)
    vr = ev.summary()["variance_reduction"]
    assert not vr["enabled"] and "no shipped policy" in vr["reason"]
    assert "variance reduction: off (no shipped policy" in format_report(ev.summary())


def test_cli_variance_reduction_flags(tmp_path, capsys):
    import json

    from bobshat.cli import main

    out = tmp_path / "e.json"
    assert main(["eval", "--agents", "simple,random", "--layout", "2v2", "--deals", "1", "--quiet"]
                + ["--variance-reduction", "--vr-fresh", "2", "--json", str(out)]) == 0  # fmt: skip
    assert "variance-reduced estimates" in capsys.readouterr().out
    vr = json.loads(out.read_text())["variance_reduction"]
    assert vr["enabled"] and vr["fresh_deals"] == 2 and vr["decisions"] == "bids"
    bad = ["eval", "--agents", "simple,random", "--layout", "2v2", "--deals", "1", "--quiet", "--variance-reduction"]
    assert main([*bad, "--vr-value", str(tmp_path / "none.pt")]) == 2
    err = capsys.readouterr().err
    assert "--vr-value: no checkpoint at" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "none.pt").exists()


def test_a_shipped_policy_that_cannot_value_the_table_turns_the_reduction_off(monkeypatch):
    import train.evaluate.variance
    from agents.shipped import table_checkpoint
    from bobshat_env.core.config import ConfigError
    from bobshat_env.games import make_game
    from train.evaluate.tournament import _vr_setup

    oh = make_game("oh_hell", players=4)
    other = str(table_checkpoint("bobs_hat", 4))
    monkeypatch.setattr(train.evaluate.variance, "shipped_value_path", lambda game: other)
    vr, why = _vr_setup(oh, True, None, None, "bids")
    assert vr is None and "cannot value this table" in why
    with pytest.raises(ConfigError, match="--vr-value: .*cannot play oh_hell"):
        _vr_setup(oh, True, other, None, "bids")  # named by the user: an error, not a silent off


def test_known_probabilities_are_the_ones_the_agents_draw_from(bh):
    """random and ppo with sample=true act with exactly the distribution action_probs claims (greedy: None)."""
    from agents import make_agent
    from bobshat_env.core import rng

    state = bh.init(rng.game_keys(21, np.arange(1)))
    bh.step(state, np.array([60]))  # the dealer chooses the +10 hat: the next seat bids (15 legal bids)
    n = 20000
    rows = np.zeros(n, dtype=np.int64)
    obs, mask = bh.observe(state)[rows], bh.legal_action_mask(state)[rows]
    seat = state.cur[rows].astype(np.int64)
    path = "checkpoints/bobs_hat_4p.pt"
    assert make_agent(f"ppo:{path}", bh, seed=0).action_probs(obs[:1], mask[:1], seat[:1]) is None
    for spec in ("random", f"ppo:{path},sample=true"):
        agent = make_agent(spec, bh, seed=1)
        p = agent.action_probs(obs[:1], mask[:1], seat[:1])[0]
        assert np.isclose(p.sum(), 1.0) and np.all(p[~mask[0]] == 0)
        freq = np.bincount(agent.act(obs, mask, seat), minlength=p.size) / n
        sd = np.sqrt(p * (1 - p) / n)
        assert np.all(np.abs(freq - p) <= 5 * sd + 1e-9), spec


# --------------------------------------------------------------------------
# The multi-fidelity (proxy) term: a cheaper simulation of the same deal
def _mf_toy(gen: np.random.Generator, D: int, fresh_like: str = "fresh") -> tuple[np.ndarray, np.ndarray]:
    """D deals: deal luck g ~ N(0, 1) (each deal's own), the agents' dice e ~ N(0, 0.3).

    The outcome is ``y = 0.3 + g * (1 + 0.2 g) + e``; the proxy, a cheaper
    simulation of the same deal, ``g + 0.5 e + noise`` (the agents' first
    dice shared), and the same proxy on K = 4 fresh deals. ``fresh_like``
    breaks it: ``actual`` re-simulates the actual deal instead of fresh ones,
    ``shifted`` draws the fresh deals from another distribution.
    """
    g = gen.normal(size=D)
    e = 0.3 * gen.normal(size=D)
    y = 0.3 + g * (1 + 0.2 * g) + e
    cheap = g + 0.5 * e + 0.2 * gen.normal(size=D)
    g2 = {"fresh": gen.normal(size=(D, 4)), "actual": np.repeat(g[:, None], 4, axis=1)}.get(fresh_like)
    if g2 is None:  # "shifted"
        g2 = gen.normal(size=(D, 4)) + 0.3
    fresh = g2 + 0.5 * 0.3 * gen.normal(size=(D, 4)) + 0.2 * gen.normal(size=(D, 4))
    return y, chance_terms(cheap, fresh)[:, None]


TRUE_MF = 0.3 + 0.2  # E[g (1 + 0.2 g)] = 0.2


def _mf_estimates(fresh_like: str, reps: int = 1500, D: int = 80) -> tuple[np.ndarray, np.ndarray]:
    gen = np.random.default_rng(21)
    plain, reduced = [], []
    for _ in range(reps):
        y, c = _mf_toy(gen, D, fresh_like)
        plain.append(y.mean())
        reduced.append(crossfit_reduce(y, c)[0].mean())
    return np.array(plain), np.array(reduced)


def test_proxy_term_is_unbiased_and_narrows_on_a_toy():
    plain, reduced = _mf_estimates("fresh")
    se = reduced.std(ddof=1) / np.sqrt(reduced.size)
    assert abs(reduced.mean() - TRUE_MF) < 4 * se
    assert np.var(plain) / np.var(reduced) > 2  # the proxy follows the deal's luck: over 2x fewer deals


def test_proxy_term_whose_fresh_mean_is_the_actual_deal_removes_nothing():
    """Break: the 'fresh' simulations replay the actual deal: the term loses the deal's luck and narrows nothing."""
    plain, reduced = _mf_estimates("actual", reps=600)
    assert np.var(plain) / np.var(reduced) < 1.5


def test_proxy_term_with_fresh_deals_of_another_distribution_is_biased():
    """Break: fresh deals drawn unlike the evaluated ones: the estimate drifts by beta times the shift."""
    _, reduced = _mf_estimates("shifted", reps=600)
    se = reduced.std(ddof=1) / np.sqrt(reduced.size)
    assert abs(reduced.mean() - TRUE_MF) > 8 * se


def test_proxy_values_replay_the_deals_and_draw_fresh_ones(bh):
    from agents import make_agent
    from train.evaluate.duplicate import make_seatings, play_duplicate
    from train.evaluate.variance import PROXY_DEAL_BASE, deal_agent_means, proxy_values

    agents = [make_agent("strong", bh, seed=0), make_agent("simple", bh, seed=0)]
    seatings = make_seatings([0, 0, 1, 1])
    deals, K, H = np.array([3, 7]), 2, bh.config.hands
    actual, fresh = proxy_values(bh, agents, seatings, deals, 9, K)
    assert actual.shape == (2, 2) and fresh.shape == (2, K, 2)
    own = deal_agent_means(play_duplicate(bh, agents, seatings, deals, 9).totals, seatings, 2, 2) / H
    assert np.allclose(actual, own)  # deterministic agents: the evaluated deals exactly
    ids = PROXY_DEAL_BASE + np.array([6, 7, 14, 15])  # deal d's fresh deals: BASE + d * K + k
    other = deal_agent_means(play_duplicate(bh, agents, seatings, ids, 9).totals, seatings, 4, 2) / H
    assert np.allclose(fresh.reshape(4, 2), other)
    assert not np.allclose(fresh[:, 0], actual)  # fresh deals are other deals


def test_proxy_spec_shrinks_only_search_agents():
    from train.evaluate.variance import proxy_spec

    assert proxy_spec("pimc") == "pimc:worlds=2"
    assert proxy_spec("pimc:worlds=32,playout=strong") == "pimc:playout=strong,worlds=4"
    assert proxy_spec("search:policy=p.pt") == "search:policy=p.pt,worlds=4"
    for s in ("strong", "random", "ppo:checkpoints/bobs_hat_4p.pt", "bid=pimc+play=strong"):
        assert proxy_spec(s) == s


def test_evaluate_with_a_proxy_term(bh):
    from train.evaluate import evaluate, format_report

    specs = ["simple", "simple", "random", "random"]
    plain = evaluate(bh, specs, 2, seed=5)
    ev = evaluate(bh, specs, 2, seed=5, variance_reduction=True, vr_fresh=1, vr_proxy="strong,random", vr_proxy_fresh=2)
    assert np.array_equal(plain.totals, ev.totals)  # the proxies play their own games: the evaluated ones are unchanged
    vr = ev.summary()["variance_reduction"]
    assert vr["terms"] == ["chance", "bid", "play", "proxy"]
    assert vr["proxy"]["agents"] == ["strong", "random"] and vr["proxy"]["fresh_deals"] == 2
    assert ev.proxy_actual.shape == (2, 2) and ev.proxy_fresh.shape == (2, 2, 2)
    for r in vr["agents"] + vr["pairwise"]:
        assert len(r["beta"]) == 4
    H = bh.config.hands  # 2 deals: beta is 1, the proxy's column subtracted as it is
    x = ev.per_deal(ev.totals / H)
    c = sum(ev.per_deal(ev.cv[:, t] / H) for t in range(3)) + chance_terms(ev.proxy_actual, ev.proxy_fresh)
    assert np.isclose(vr["agents"][0]["mean"], float((x[:, 0] - c[:, 0]).mean()))
    assert "proxy (multi-fidelity) term" in format_report(ev.summary())
    auto = evaluate(bh, specs, 1, seed=5, variance_reduction=True, vr_fresh=1)  # no agent with a cheaper proxy
    assert auto.proxy_actual is None and auto.summary()["variance_reduction"]["proxy"] is None
    with pytest.raises(ValueError, match="one spec per distinct agent"):
        evaluate(bh, specs, 1, seed=5, variance_reduction=True, vr_proxy="strong")
    with pytest.raises(ValueError, match="--vr-proxy 'nobody'"):
        evaluate(bh, specs, 1, seed=5, variance_reduction=True, vr_proxy="strong,nobody")


# --------------------------------------------------------------------------
# bobshat exploit's margins: the same terms (train/exploit.py reuses ControlVariates)
def test_exploit_margin_reports_reduced_margins_beside_unchanged_plain_ones(bh, monkeypatch):
    import train.evaluate.variance
    from agents import make_agent
    from train.exploit import exploit_margin

    def margin(value=None, vr=True):
        if value is not None:
            monkeypatch.setattr(train.evaluate.variance, "PolicyValue", lambda game, path: value)
        return exploit_margin(bh, make_agent("random", bh, seed=4), "simple", deals=3, seed=2, variance_reduction=vr)

    plain = margin(vr=False)
    zero = margin(_Zero(bh))  # a value function that says 0 everywhere: every term is 0
    assert {k: v for k, v in zero.items() if k != "variance_reduction"} == plain  # the plain numbers do not change
    vz = zero["variance_reduction"]
    assert vz["enabled"] and vz["seconds"] > 0
    assert np.isclose(vz["margin"]["mean"], plain["margin_per_hand"])
    assert np.isclose(vz["over_baseline"]["mean"], plain["over_baseline_per_hand"])
    real = margin(_BidValue(bh))["variance_reduction"]  # random's bids get terms: the estimate moves
    assert not np.isclose(real["margin"]["mean"], plain["margin_per_hand"])
    assert len(real["margin"]["beta"]) == 3
    # 3 deals: beta is 1, so the reduced margin is the plain one less the margin's terms, recomputed here
    from train.evaluate.duplicate import make_seatings, play_duplicate

    base = make_seatings([0, 1, 1, 1], "all")
    seatings = np.concatenate([base, np.where(base == 0, 2, base)])
    agents = [make_agent("random", bh, seed=4), make_agent("simple", bh, seed=3), make_agent("simple", bh, seed=4)]
    seating = np.tile(seatings, (3, 1))
    parts = []

    def factory(g, state, ids):
        parts.append((ids, ControlVariates(g, state, agents, seating[ids], _BidValue(bh), 8)))
        return parts[-1][1]

    play_duplicate(bh, agents, seatings, np.arange(3), 2, recorder_factory=factory)
    terms = np.zeros((seating.shape[0], 3, 4))
    for ids, cv in parts:
        terms[ids] = cv.terms
    t = terms.sum(axis=1)
    mine = seating != 1
    per_game = ((t * mine).sum(axis=1) - (t * ~mine).sum(axis=1) / 3) / bh.config.hands
    expect = plain["margin_per_hand"] - per_game.reshape(3, 2, 4)[:, 0].mean()
    assert np.isclose(real["margin"]["mean"], expect)
    monkeypatch.setattr(train.evaluate.variance, "shipped_value_path", lambda game: None)
    assert margin()["variance_reduction"] == {
        "enabled": False,
        "reason": "no shipped policy for bobs_hat to take values from",
    }


class _Zero:
    def __init__(self, game):
        self.game = game

    def seat_values(self, state):
        return np.zeros((state.batch_size, self.game.players))


class _BidValue(_TrumpCount):
    """Trumps held plus the seat's bid: a value a bid changes (so a random bid's term is not 0)."""

    def seat_values(self, state):
        return super().seat_values(state) + np.asarray(state.bids, dtype=np.float64)


# --------------------------------------------------------------------------
# bobshat bids: decision terms at the bids of a bidder with known probabilities, Q from the oracles
def test_bids_reduce_a_random_bidders_score_with_the_oracles_values(bh):
    from train.bids.benchmark import measure
    from train.bids.report import per_deal

    deals = 6
    r = measure(bh, ["random", "simple"], deals, seed=3, worlds=1, play="strong")
    rnd, simple = r.table["bidders"]
    assert simple["variance_reduction"] is None  # deterministic: no term
    dec = r.decisions["random"]
    bids = ~dec.is_hat
    legal = ~np.isnan(dec.q_hind)
    assert np.allclose(dec.probs[bids], legal[bids] / legal[bids].sum(axis=1, keepdims=True))  # random: uniform
    # strong plays deterministically, so Q(s, a_taken) is the hand's score and, with beta = 1 (few deals),
    # the reduced score is the mean over the bidder's dice: sum_b pi(b) Q(s, b) at every bid (hat choices: none)
    expected = np.nansum(dec.probs * np.nan_to_num(dec.q_hind), axis=1)
    want = per_deal(expected, dec.deal, deals, bids)
    vr = rnd["variance_reduction"]
    assert np.isclose(vr["score"]["mean"], want.mean()) and vr["score"]["beta"] == [1.0]
    assert not np.isclose(vr["score"]["mean"], rnd["score_per_hand"])
    pair = r.table["pairwise"][0]["variance_reduction"]
    assert np.isclose(pair["score"]["mean"], vr["score"]["mean"] - simple["score_per_hand"])


def test_bids_cli_turns_the_reduction_off(tmp_path, capsys):
    import json

    from bobshat.cli import main

    out = tmp_path / "b.json"
    argv = ["bids", "--bidders", "random", "--deals", "2", "--worlds", "1", "--play", "strong", "--quiet"]
    assert main([*argv, "--no-variance-reduction", "--json", str(out)]) == 0
    assert "variance-reduced" not in capsys.readouterr().out
    assert json.loads(out.read_text())["tables"][0]["bidders"][0]["variance_reduction"] is None
    assert main([*argv, "--json", str(out)]) == 0  # on by default
    assert "variance-reduced (decision terms" in capsys.readouterr().out
    assert json.loads(out.read_text())["tables"][0]["bidders"][0]["variance_reduction"]["score"]["mean"] is not None


def test_exploit_report_shows_the_reduced_margin_beside_the_plain_one():
    from train.exploit import format_report

    final = {"deals": 3, "margin_per_hand": 1.5, "ci95": 0.9, "baseline_margin_per_hand": 0.0, "baseline_ci95": 0.0}
    final["variance_reduction"] = {
        "enabled": True,
        "seconds": 2.0,
        "margin": {"mean": 1.25, "ci95": 0.5, "variance_factor": 3.24, "beta": [1, 1, 1]},
        "over_baseline": {"mean": 1.2, "ci95": 0.6, "variance_factor": 2.25, "beta": [1, 1, 1]},
    }
    report = {"target": "random", "seats": 1, "game": "bobs_hat", "players": 4, "decisions": 10}
    report |= {"train_seconds": 1.0, "curve": [], "final": final, "run_dir": "runs/x"}
    text = format_report(report)
    assert "margin +1.250 ± 0.500 (variance factor 3.24), over the copy +1.200 ± 0.600 (factor 2.25)" in text
    assert "final (3 deals): margin +1.500 ± 0.900" in text  # the plain one stays
    final["variance_reduction"] = {"enabled": False, "reason": "no shipped policy for bobs_hat to take values from"}
    assert "variance reduction: off (no shipped policy" in format_report(report)
