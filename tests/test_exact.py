"""``bobshat exact`` (train/exact.py): agents as OpenSpiel policies, exact values, CFR+, the command."""

from __future__ import annotations

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from open_spiel.python import policy as policy_lib  # noqa: E402
from open_spiel.python.algorithms import exploitability  # noqa: E402

import bobshat_env.openspiel  # noqa: E402,F401  (registers our games)
from train.exact import AgentPolicy, info_seed, policy_values, run_cfr, tree_bound  # noqa: E402


# --------------------------------------------------------------------------
# Exact values on OpenSpiel's own small games
def test_uniform_random_nash_conv_is_openspiels_published_value():
    # OpenSpiel's exploitability tests: uniform random has exploitability 11/24 in Kuhn poker and
    # 2.3736111 in Leduc poker (two players, zero-sum: NashConv is twice the exploitability)
    kuhn = pyspiel.load_game("kuhn_poker")
    assert policy_values(kuhn, policy_lib.UniformRandomPolicy(kuhn))["nash_conv"] == pytest.approx(11 / 12)
    leduc = pyspiel.load_game("leduc_poker")
    assert policy_values(leduc, policy_lib.UniformRandomPolicy(leduc))["nash_conv"] == pytest.approx(2 * 2.373611111)


def test_always_pass_in_kuhn_poker_is_worth_what_a_hand_count_says():
    # Both players always pass (check, or fold to a bet): every game is a showdown for the antes, worth 0
    # to each by symmetry. A best response bets at once (or after a check): the passer folds, +1 every time.
    game = pyspiel.load_game("kuhn_poker")
    passive = policy_lib.TabularPolicy(game)
    passive.action_probability_array[:] = [1.0, 0.0]  # action 0: pass
    v = policy_values(game, passive)
    assert v["own"] == pytest.approx([0.0, 0.0])
    assert v["best_response"] == pytest.approx([1.0, 1.0])
    assert v["gain"] == pytest.approx([1.0, 1.0]) and v["nash_conv"] == pytest.approx(2.0)


def test_three_player_gains_are_openspiels_player_improvements():
    game = pyspiel.load_game("kuhn_poker(players=3)")
    uniform = policy_lib.UniformRandomPolicy(game)
    v = policy_values(game, uniform)
    theirs = exploitability.nash_conv(game, uniform, return_only_nash_conv=False)
    assert v["gain"] == pytest.approx(list(theirs.player_improvements))
    assert v["nash_conv"] == pytest.approx(theirs.nash_conv) and v["nash_conv"] > 1
    assert sum(v["own"]) == pytest.approx(0.0)  # zero-sum: the antes change hands


@pytest.mark.parametrize("name", ["kuhn_poker", "kuhn_poker(players=3)"])
def test_cfr_plus_nash_conv_decreases_and_is_the_solvers_own(name):
    game = pyspiel.load_game(name)
    lines: list[str] = []
    result = run_cfr(game, 64, log=lines.append)
    curve = [pt["nash_conv"] for pt in result["curve"]]
    assert [pt["iteration"] for pt in result["curve"]] == [1, 2, 4, 8, 16, 32, 64]
    assert all(b < a for a, b in zip(curve, curve[1:])), curve
    assert curve[0] > 0.9 and curve[-1] < 0.01  # from uniform play to near an equilibrium
    assert result["final"]["nash_conv"] == curve[-1] and result["stopped_by"] == "iterations"
    assert len(lines) == 7 and lines[-1].startswith("cfr+ iteration 64/64: NashConv ")
    # OpenSpiel's C++ NashConv of the same number of iterations agrees
    solver = pyspiel.CFRPlusSolver(game)
    for _ in range(64):
        solver.evaluate_and_update_policy()
    assert curve[-1] == pytest.approx(pyspiel.nash_conv(game, solver.average_policy()), abs=1e-9)


def test_cfr_stops_at_its_time_limit_and_evaluates_where_it_stopped():
    game = pyspiel.load_game("kuhn_poker")
    result = run_cfr(game, 1000, time_limit_s=1e-9)
    assert result["iterations"] == 1 and result["stopped_by"] == "time limit"
    assert [pt["iteration"] for pt in result["curve"]] == [1]
    assert result["final"]["nash_conv"] == pytest.approx(11 / 12)  # one iteration: still uniform
    odd = run_cfr(game, 5, checkpoint=lambda i: False)
    assert [pt["iteration"] for pt in odd["curve"]] == [5]  # the last iteration is always evaluated


# --------------------------------------------------------------------------
# Agents as policies: a function of the information state only
def _play_to_decisions(game, gen, stops: int):
    """States of one random game of ``game`` at ``stops`` decisions spread over it (bids and cards)."""
    state = game.new_initial_state()
    states = []
    while not state.is_terminal():
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes())
            state.apply_action(int(gen.choice(actions, p=probs)))
            continue
        states.append(state.clone())
        state.apply_action(int(gen.choice(state.legal_actions())))
    picks = np.linspace(0, len(states) - 1, stops).round().astype(int)
    return [states[i] for i in picks]


@pytest.mark.parametrize(
    "name, params",
    [
        ("python_oh_hell", {"players": 3, "single_hand": 8}),
        ("python_bobs_hat", {"players": 3, "single_hand": 1, "secret_bidding": True}),
    ],
)
@pytest.mark.parametrize("spec", ["random", "simple", "strong", "pimc:worlds=2"])
def test_an_agent_policy_is_the_same_on_histories_it_cannot_tell_apart(name, params, spec):
    game = pyspiel.load_game(name, params)
    gen = np.random.default_rng(3)
    pol = AgentPolicy(game, spec, seed=5)
    sampler = lambda: float(gen.random())  # noqa: E731
    differ = 0
    for state in _play_to_decisions(game, gen, 6):
        player = state.current_player()
        other = state.resample_from_infostate(player, sampler)
        key = state.information_state_string(player)
        assert other.information_state_string(player) == key
        differ += other.history() != state.history()
        ours, theirs = state.agent_inputs(), other.agent_inputs()
        for a, b in zip(ours[:3], theirs[:3]):
            np.testing.assert_array_equal(a, b)
        assert ours[3].keys() == theirs[3].keys()
        for k in ours[3]:
            np.testing.assert_array_equal(ours[3][k], theirs[3][k], err_msg=k)
        probs = pol.action_probabilities(state)
        pol.cache.clear()  # ask the agent again, on the other history
        assert pol.action_probabilities(other) == probs
        assert sum(probs.values()) == pytest.approx(1.0) and set(probs) <= set(state.legal_actions())
    assert differ >= 4  # the other histories are other deals (or other secret bids)


def test_random_is_uniform_and_a_heuristic_is_certain():
    game = pyspiel.load_game("python_oh_hell", {"players": 3, "single_hand": 8})
    state = _play_to_decisions(game, np.random.default_rng(0), 3)[1]
    legal = state.legal_actions()
    assert len(legal) > 1
    assert AgentPolicy(game, "random").action_probabilities(state) == {a: 1 / len(legal) for a in legal}
    strong = AgentPolicy(game, "strong").action_probabilities(state)
    assert sorted(strong.values()) == [0.0] * (len(legal) - 1) + [1.0]


def test_a_sampling_agent_is_seeded_by_the_information_state():
    assert info_seed("p0 / hand 1", 0) == info_seed("p0 / hand 1", 0)
    assert info_seed("p0 / hand 1", 0) != info_seed("p0 / hand 2", 0) != info_seed("p0 / hand 1", 1)
    assert 0 <= info_seed("x", 2**62) < 2**63


# --------------------------------------------------------------------------
# The tree-size bound
def test_the_bound_of_a_one_card_oh_hell_hand_counts_deals_trumps_and_bids():
    game = pyspiel.load_game("python_oh_hell", {"players": 3, "single_hand": 10})  # 1 card each
    assert game.rules.sizes == (1,)
    # ordered deals of 3 cards, the turned card, bids 0 or 1 for each seat; the cards play themselves
    assert tree_bound(game) == 52 * 51 * 50 * 49 * 2**3
    two = pyspiel.load_game("python_oh_hell", {"players": 3, "single_hand": 9})
    assert two.rules.sizes == (2,)
    assert tree_bound(two) == 52 * 51 * 50 * 49 * 48 * 47 * 46 * 3**3 * 2**3


# --------------------------------------------------------------------------
# Trained policies and composites as policies
def _checkpoint(path, game, seed: int = 0):
    """A small untrained policy checkpoint of ``game``, as training writes one."""
    import torch

    from agents.checkpoint import POLICY_PREFIX, net_meta, save_checkpoint
    from agents.ppo_agent import PolicyNet

    torch.manual_seed(seed)
    net = PolicyNet(game.obs_size(), game.n_actions, (16,))
    save_checkpoint(path, {POLICY_PREFIX + k: v for k, v in net.state_dict().items()}, net_meta(game, net))
    return path


def test_a_ppo_policy_gives_its_probabilities_sampled_and_its_best_action_greedy(tmp_path):
    from agents.ppo_agent import PPOAgent

    game = pyspiel.load_game("python_oh_hell", {"players": 3, "single_hand": 8})
    ckpt = _checkpoint(tmp_path / "p.pt", game.rules.game)
    for state in _play_to_decisions(game, np.random.default_rng(1), 4):
        obs, mask, seat, _ = state.agent_inputs()
        agent = PPOAgent.from_checkpoint(ckpt, game.rules.game, sample=True)
        want = agent.action_probs(obs, mask, seat)[0]
        sampled = AgentPolicy(game, f"ppo:{ckpt},sample=true").action_probabilities(state)
        assert sampled == pytest.approx({a: want[a] for a in state.legal_actions()})
        assert len(state.legal_actions()) == 1 or 0 < min(sampled.values()) < max(sampled.values()) < 1
        greedy = AgentPolicy(game, f"ppo:{ckpt}").action_probabilities(state)
        best = max(sampled, key=sampled.get)
        assert greedy == {a: float(a == best) for a in state.legal_actions()}


def test_a_composite_asks_the_part_that_acts():
    game = pyspiel.load_game("python_oh_hell", {"players": 3, "single_hand": 8})
    pol = AgentPolicy(game, "bid=random+play=strong")
    strong = AgentPolicy(game, "strong")
    seen = set()
    for state in _play_to_decisions(game, np.random.default_rng(2), 8):
        legal = state.legal_actions()
        bidding = min(legal) >= 52
        seen.add(bidding)
        if bidding:
            assert pol.action_probabilities(state) == {a: 1 / len(legal) for a in legal}
        else:
            assert pol.action_probabilities(state) == strong.action_probabilities(state)
    assert seen == {True, False}


# --------------------------------------------------------------------------
# The command: what it refuses, and an interrupt
def _run(argv, capsys):
    from bobshat_env.app.cli import main

    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


ONE_CARD = ["exact", "--game", "oh_hell", "--players", "3", "--hand", "10"]  # 52 cards: hours to walk


def test_a_game_too_big_to_walk_is_refused_up_front(tmp_path, capsys):
    out = tmp_path / "r.json"
    code, text, err = _run([*ONE_CARD, "--json", str(out)], capsys)
    assert code == 2 and not out.exists() and text == ""
    assert err.strip().splitlines() == [
        "bobshat exact: error: this game has up to 5.2e+07 histories to walk, more than --max-histories 200,000: "
        "choose a smaller variant (--variant, --option) or one hand (--hand)"
    ]


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--agents", "random,nobody"], "unknown agent 'nobody'; available: "),
        (["--agents", "ppo:missing.pt"], "missing.pt"),
        (["--option", "suits"], "--option 'suits': expected key=value"),
        (["--option", "colour=2"], "unknown parameter(s) colour; known: "),
        (["--hand", "20"], "single_hand must be 0 (the whole game) or a hand 1-19, got 20"),
    ],
)
def test_bad_input_gets_one_line_before_anything_is_walked(tmp_path, capsys, extra, message):
    # the game would take hours: an error after the walk began would never come
    code, text, err = _run([*ONE_CARD, "--max-histories", str(10**12), "--quiet", *extra], capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and message in lines[0] and lines[0].startswith("bobshat exact: error: ")


def test_an_interrupt_leaves_the_json_as_it_was(tmp_path):
    import signal
    import time

    import procs

    out = tmp_path / "r.json"
    out.write_text("what the user had\n")
    proc = procs.start([*ONE_CARD, "--max-histories", str(10**12), "--json", str(out)], tmp_path)
    deadline = time.monotonic() + 600
    while "terminal histories" not in procs._stderr(proc) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(1.0)  # inside the walk
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=600) == 130
    assert procs._stderr(proc).strip().endswith("bobshat exact: interrupted")
    assert out.read_text() == "what the user had\n" and sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]
