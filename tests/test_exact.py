"""``bobshat exact`` (train/exact.py): agents as OpenSpiel policies, exact values, CFR+, the command."""

from __future__ import annotations

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from open_spiel.python import policy as policy_lib  # noqa: E402
from open_spiel.python.algorithms import exploitability  # noqa: E402

import bobshat_env.openspiel  # noqa: E402,F401  (registers our games)
from bobshat_env.openspiel import tree_bound  # noqa: E402
from train.exact import AgentPolicy, info_seed, policy_values, run_cfr  # noqa: E402


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
    from bobshat.cli import main

    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


ONE_CARD = ["exact", "--game", "oh_hell", "--players", "3", "--hand", "10"]  # 52 cards, hours to walk


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


# --------------------------------------------------------------------------
# The tree copy, and exact values on the tiny variants
def test_the_tree_copy_has_the_originals_values_and_cfr():
    from train.exact import TreeCopy

    for name in ["kuhn_poker", "kuhn_poker(players=3)"]:
        game = pyspiel.load_game(name)
        tree = TreeCopy(game)
        assert (tree.histories, tree.terminal) == ((58, 30) if name == "kuhn_poker" else (617, 312))
        uniform = policy_lib.UniformRandomPolicy(game)
        ours, theirs = policy_values(tree.game, tree.policy(uniform)), policy_values(game, uniform)
        for k in ("own", "best_response"):
            assert ours[k] == pytest.approx(theirs[k])
        on_copy = [p["nash_conv"] for p in run_cfr(tree.game, 8)["curve"]]
        assert on_copy == pytest.approx([p["nash_conv"] for p in run_cfr(game, 8)["curve"]], rel=1e-9)
    with pytest.raises(ValueError, match="more than 100 histories"):
        TreeCopy(pyspiel.load_game("kuhn_poker(players=3)"), max_histories=100)


@pytest.fixture(scope="module")
def tiny_oh_hell():
    from train.exact import TreeCopy, load_game

    game = load_game("oh_hell", {"variant": "tiny"})
    return game, TreeCopy(game)


def _engine_best_response(spec: str, br_seat: int) -> tuple[float, float]:
    """(best-response value, own value) of ``br_seat`` against ``spec`` at the other seats in tiny Oh Hell,
    from the batched engine and the arena's seat dispatch, without OpenSpiel: every deal (3 cards and the
    turned card, 360 equally likely) with each bid of the responder; one card each, so the play is forced."""
    from itertools import permutations

    from agents.registry import make_agent
    from bobshat_env.games import make_game
    from bobshat_env.seating import SeatDispatch

    game = make_game("oh_hell", variant="tiny")
    m, cfg = game.module, game.config
    deals = list(permutations(np.flatnonzero(cfg.deck_mask).tolist(), 4))  # seat 0, 1, 2's card, turned card
    assert len(deals) == 360 and cfg.hand_sizes == (1,)
    rows = [(d, b) for d in deals for b in (0, 1, None)]  # None: the responder plays the agent too
    B = len(rows)
    state = game.init(np.zeros(B, dtype=np.uint64), auto_deal=False)
    hands = np.zeros((B, 3, m.N_CARDS), dtype=bool)
    for i, (d, _) in enumerate(rows):
        hands[i, [0, 1, 2], d[:3]] = True
    m.deal(cfg, state, np.arange(B), np.array([d[3] for d, _ in rows]), hands)
    agent = make_agent(spec, game, seed=0)
    seats = SeatDispatch(game, B, [agent])
    before = [[] for _ in range(B)]  # the bids the responder saw before its own
    legal = np.ones(B, dtype=bool)
    responded = np.zeros(B, dtype=bool)
    while not game.done(state).all():
        active = ~game.done(state)
        mask, obs, seat = game.legal_action_mask(state), game.observe(state), state.cur.astype(np.int64)
        actions = np.zeros(B, dtype=np.int64)
        idx = np.flatnonzero(active)
        actions[idx] = seats.act_rows(agent, obs, mask, seat, idx)
        for i in idx:
            if state.phase[i] != m.BID:
                continue
            if seat[i] == br_seat and rows[i][1] is not None:
                want = m.BID_BASE + rows[i][1]
                legal[i] &= bool(mask[i, want])
                actions[i] = want if mask[i, want] else actions[i]
            if seat[i] == br_seat:
                responded[i] = True
            elif not responded[i]:
                before[i].append(int(actions[i]))
        seats.before_step(state, actions, active)
        res = game.step(state, actions, active=active, legal=mask)
        seats.after_step(res.new_hand)
    score = state.scores[:, br_seat].astype(float)
    best: dict[tuple, dict[int, float]] = {}
    own = 0.0
    for i, (d, b) in enumerate(rows):
        if b is None:
            own += score[i] / 360
        elif legal[i]:
            key = (d[br_seat], d[3], tuple(before[i]))
            best.setdefault(key, {}).setdefault(b, 0.0)
            best[key][b] += score[i] / 360
    return sum(max(v.values()) for v in best.values()), own


@pytest.mark.parametrize("spec", ["strong", "simple"])
def test_best_responses_on_tiny_oh_hell_are_the_engines_own_count(tiny_oh_hell, spec):
    game, tree = tiny_oh_hell
    values = policy_values(tree.game, tree.policy(AgentPolicy(game, spec)))
    for seat in range(3):
        br, own = _engine_best_response(spec, seat)
        assert values["best_response"][seat] == pytest.approx(br, abs=1e-9)
        assert values["own"][seat] == pytest.approx(own, abs=1e-9)
    assert values["nash_conv"] > 1  # a heuristic is far from an equilibrium here


@pytest.mark.parametrize("game_name, terminal", [("oh_hell", 1800), ("bobs_hat", 2592)])
def test_the_command_on_the_tiny_variant(tmp_path, capsys, game_name, terminal):
    import json

    out = tmp_path / "r.json"
    argv = ["exact", "--game", game_name, "--variant", "tiny", "--agents", "random", "--cfr-iterations", "8"]
    code, text, err = _run([*argv, "--json", str(out)], capsys)
    assert code == 0, err
    report = json.loads(out.read_text())
    assert report["tree"]["terminal"] == terminal and report["players"] == 3
    assert report["config"]["players"] == 3 and report["single_hand"] == 0
    (rand,) = report["agents"]
    assert rand["agent"] == "random" and rand["nash_conv"] == pytest.approx(sum(rand["gain"]))
    assert all(g >= -1e-9 for g in rand["gain"]) and rand["nash_conv"] > 1
    curve = [p["nash_conv"] for p in report["cfr"]["curve"]]
    assert [p["iteration"] for p in report["cfr"]["curve"]] == [1, 2, 4, 8]
    assert curve[0] == pytest.approx(rand["nash_conv"])  # CFR+'s first average policy is uniform
    assert all(b < a for a, b in zip(curve, curve[1:])) and curve[-1] < curve[0] / 4
    assert text.splitlines()[0].startswith(f"python_{game_name} (players=3")
    assert "random" in text and "CFR+ NashConv by iteration (iterations): 1: " in text
    assert f"{terminal:,} terminal" in err and "cfr+ iteration 8/8: NashConv" in err


def test_the_bound_of_a_whole_game_is_the_product_of_its_hands_bounds():
    # the probe never spends Bob's Hat's once-a-game empty bid, so a later hand keeps every choice
    base = {"players": 3, "suits": 2, "ranks": 3, "hand_size_base": 0, "hands": 2, "no_bid": True}
    whole = tree_bound(pyspiel.load_game("python_bobs_hat", base))
    hands = [tree_bound(pyspiel.load_game("python_bobs_hat", {**base, "single_hand": k})) for k in (1, 2)]
    assert whole == hands[0] * hands[1] and hands[0] > 1
