"""Both games as OpenSpiel Python games (bobshat_env/openspiel.py): OpenSpiel's own checks, the engine's
scores on the same deals, OpenSpiel's ``oh_hell`` on the same deals, and OpenSpiel's algorithms run unchanged.

What the algorithm tests can and cannot show: CFR, exploitability and best
responses walk the whole game tree, and no configuration of the full-size
games is small enough (a one-card Oh Hell hand for three already has
52 x 51 x 50 x 49 deals); exact solving needs the small variants (a smaller
deck). Here the sampling solvers (outcome and external sampling MCCFR) run a
few iterations, NFSP a few episodes, the Python ISMCTS bot plays whole hands,
and OpenSpiel's best response (what exploitability is made of) runs from a
dealt hand, where it must equal a plain expectimax.
"""

from __future__ import annotations

import ast
import pickle
import re
from pathlib import Path

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

import bobshat_env.openspiel as osp  # noqa: E402  (registers the games; needs pyspiel)
from bobshat_env.core.config import OH_DEAL_STYLES, OH_SCORINGS, ConfigError  # noqa: E402
from bobshat_env.core.tricks import rotate_dealer  # noqa: E402
from bobshat_env.games import make_game  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

# small games for OpenSpiel's simulation test with serialization (it replays the history at every step)
SIM_CASES = [
    ("python_oh_hell", {"players": 3, "single_hand": 10}),
    ("python_oh_hell", {"players": 5, "deal_style": "short_high", "single_hand": 3, "scoring": "neutral"}),
    ("python_oh_hell", {"players": 7, "single_hand": 5, "first_dealer": -1, "scoring": "negative"}),
    ("python_bobs_hat", {"players": 3, "hands": 1, "secret_bidding": True, "no_bid": True}),
    ("python_bobs_hat", {"players": 4, "single_hand": 2, "double_fewest": True, "negative_scoring": True}),
    ("python_bobs_hat", {"players": 5, "hands": 1, "first_dealer": -1}),
]
# whole games of several hands
GAME_CASES = [
    ("python_oh_hell", {"players": 4, "deal_style": "short_high"}),
    ("python_bobs_hat", {"players": 3, "hands": 3, "secret_bidding": True, "no_bid": True, "first_dealer": -1}),
    ("python_bobs_hat", {"players": 5, "hands": 2, "double_fewest": True}),
]


def _random_action(state, r: np.random.Generator) -> int:
    if state.is_chance_node():
        outcomes, probs = zip(*state.chance_outcomes())
        return int(r.choice(outcomes, p=probs))
    return int(r.choice(state.legal_actions()))


def _play(state, r: np.random.Generator, stop=lambda s: False):
    while not state.is_terminal() and not stop(state):
        state.apply_action(_random_action(state, r))
    return state


# --------------------------------------------------------------------------
# Loading
def test_every_player_count_and_option_loads():
    for name, players in (("python_bobs_hat", (3, 4, 5)), ("python_oh_hell", (3, 4, 5, 6, 7))):
        for p in players:
            game = pyspiel.load_game(name, {"players": p})
            assert game.num_players() == p
            assert game.get_parameters()["players"] == p
    bh = {"double_fewest": True, "no_bid": True, "secret_bidding": True, "negative_scoring": True}
    for option, value in [*bh.items(), ("hands", 16), ("first_dealer", -1), ("first_dealer", 2), ("single_hand", 12)]:
        game = pyspiel.load_game("python_bobs_hat", {"players": 3, option: value})
        assert game.get_parameters()[option] == value
        assert getattr(game.rules.game.config, option, game.rules.single_hand) == value
    for option, values in (("deal_style", OH_DEAL_STYLES), ("scoring", OH_SCORINGS)):
        for value in values:
            game = pyspiel.load_game("python_oh_hell", {"players": 6, option: value})
            assert getattr(game.rules.game.config, option) == value
    assert pyspiel.load_game("python_bobs_hat", {"players": 4}).rules.game.config.hands == 10  # hands=0: the default
    # the single hand's utility range is that hand's, the whole game's is the sum over its hands
    one = pyspiel.load_game("python_oh_hell", {"players": 3, "single_hand": 10})
    assert (one.min_utility(), one.max_utility()) == (0, 1 + 10)
    neg = pyspiel.load_game("python_oh_hell", {"players": 3, "scoring": "negative", "deal_style": "short_high"})
    assert (neg.min_utility(), neg.max_utility()) == (-10 * sum(range(1, 11)), 10 * 10)


@pytest.mark.parametrize(
    "name, params, words",
    [
        ("python_bobs_hat", {"players": 3, "hands": 17}, "hands must be 1 to 16"),
        ("python_bobs_hat", {"renege_mode": True}, "renege_mode is not offered"),
        ("python_bobs_hat", {"single_hand": 11}, "single_hand must be 0 (the whole game) or a hand 1-10"),
        ("python_oh_hell", {"players": 8}, "players must be 3 to 7"),
        ("python_oh_hell", {"scoring": "odd"}, "unknown scoring 'odd'"),
    ],
)
def test_a_bad_parameter_is_one_clear_line(name, params, words):
    with pytest.raises(ConfigError) as err:
        pyspiel.load_game(name, params)
    assert words in str(err.value) and "\n" not in str(err.value)


def test_an_outcome_or_action_not_offered_is_refused_changing_nothing():
    game = pyspiel.load_game("python_oh_hell", {"players": 3, "single_hand": 9})
    state = game.new_initial_state()
    state.apply_action(5)
    before = (str(state), state.history())
    with pytest.raises(ValueError, match="5 is not an outcome of this chance node"):
        state.apply_action(5)  # already dealt
    assert (str(state), state.history()) == before
    state = _play(state, np.random.default_rng(0), stop=lambda s: not s.is_chance_node())
    before = (str(state), state.history())
    with pytest.raises(ValueError, match="illegal"):
        state.apply_action(52 + 3)  # a bid of 3 tricks in a 2-card hand
    assert (str(state), state.history()) == before and state.legal_actions() == [52, 53, 54]


# --------------------------------------------------------------------------
# OpenSpiel's checks
@pytest.mark.parametrize("name, params", SIM_CASES, ids=lambda x: x if isinstance(x, str) else repr(x))
def test_openspiel_random_simulation_with_serialization(name, params):
    game = pyspiel.load_game(name, params)
    pyspiel.random_sim_test(game, num_sims=1, serialize=True, verbose=False)


@pytest.mark.parametrize("name, params", GAME_CASES, ids=lambda x: x if isinstance(x, str) else repr(x))
def test_openspiel_random_simulation_of_whole_games(name, params):
    game = pyspiel.load_game(name, params)
    pyspiel.random_sim_test(game, num_sims=1, serialize=False, verbose=False)


def _check_state(test_state, game):
    """What OpenSpiel's Python games test (games_sim_test.py) at one state: clone, pickle, serialization."""
    clone = test_state.clone()
    assert str(clone) == str(test_state) and clone.history() == test_state.history()
    again = pickle.loads(pickle.dumps(test_state))
    assert str(again) == str(test_state)
    _, back = pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(game, test_state))
    assert str(back) == str(test_state)


@pytest.mark.parametrize("name, params", SIM_CASES[:1] + SIM_CASES[3:4] + GAME_CASES[1:2], ids=str)
def test_clone_pickle_and_returns_as_openspiel_checks_them(name, params):
    game = pyspiel.load_game(name, params)
    assert str(pickle.loads(pickle.dumps(game))) == str(game)
    assert pickle.loads(pickle.dumps(game.get_type())) == game.get_type()
    r = np.random.default_rng(1)
    state, steps, next_check, total = game.new_initial_state(), 0, 1, np.zeros(game.num_players())
    while not state.is_terminal():
        steps += 1
        if steps >= next_check:
            _check_state(state, game)
            next_check *= 2
        if not state.is_chance_node():
            total += state.rewards()  # OpenSpiel's accounting: rewards summed at decisions and at the end
        action = _random_action(state, r)
        clone = state.clone()
        state.apply_action(action)
        clone.apply_action(action)
        assert str(clone) == str(state)
    total += state.rewards()
    assert state.legal_actions() == [] and all(state.legal_actions(p) == [] for p in range(game.num_players()))
    assert state.returns() == total.tolist() == [state.player_return(p) for p in range(game.num_players())]
    assert all(game.min_utility() <= u <= game.max_utility() for u in state.returns())
    assert steps <= game.max_game_length() + game.max_chance_nodes_in_history()


# --------------------------------------------------------------------------
# What a player knows: strings and tensors
def _decision_states(game, seed: int, every: int = 1):
    """Decision states of a random game, every ``every``-th one (clones)."""
    r = np.random.default_rng(seed)
    state, out, n = game.new_initial_state(), [], 0
    while not state.is_terminal():
        if not state.is_chance_node():
            if n % every == 0:
                out.append(state.clone())
            n += 1
        state.apply_action(_random_action(state, r))
    return out


def _hidden_hands(state, player: int) -> np.ndarray:
    """The other seats' cards in the current hand's deal (what ``player`` cannot see)."""
    dealt = state._table.hands[-1].dealt.copy()
    dealt[player] = False
    return dealt


@pytest.mark.parametrize("name, params", [SIM_CASES[1], SIM_CASES[3], GAME_CASES[1]], ids=str)
def test_what_a_player_cannot_tell_apart_gives_the_same_strings_tensors_and_legal_actions(name, params):
    """A world resampled from the player's information state (the deal of the unseen cards, an unseen
    secret bid) must give the player the same information-state string and tensor, the same observation,
    and the same legal actions: legal actions are a function of what the player knows. The worlds do
    differ in what the player cannot see (else the check would be empty)."""
    game = pyspiel.load_game(name, params)
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    differ = 0
    for state in _decision_states(game, seed=3, every=3):
        p = state.current_player()
        for _ in range(2):
            world = state.resample_from_infostate(p, sampler)
            assert world.information_state_string(p) == state.information_state_string(p)
            assert world.information_state_tensor(p) == state.information_state_tensor(p)
            assert world.observation_string(p) == state.observation_string(p)
            assert world.observation_tensor(p) == state.observation_tensor(p)
            assert world.legal_actions() == state.legal_actions()
            differ += not np.array_equal(_hidden_hands(world, p), _hidden_hands(state, p))
    assert differ > 10


@pytest.mark.parametrize("name, params", [SIM_CASES[0], SIM_CASES[4], GAME_CASES[1]], ids=str)
def test_strings_and_tensors_show_the_players_cards_and_the_plays(name, params):
    """Each player's information state holds its own cards and no one else's, its legal cards are in its
    hand, no decision node of a game repeats an information state (perfect recall never comes back to one),
    and the tensor's trick record is every card played this hand, in order."""
    game = pyspiel.load_game(name, params)
    core = game.rules.game
    layout = core.layout("private")
    seen: set[tuple[int, str]] = set()
    states = _decision_states(game, seed=5)
    for state in states:
        t, p = state._table, state.current_player()
        text = state.information_state_string(p)
        mine = np.flatnonzero(t.hands[-1].dealt[p])
        head = text.splitlines()[-1].split(" | ")[0]
        assert head.endswith(f"p{p}:" + ",".join(core.card_str(int(c)) for c in mine))
        assert all(f"p{q}:" not in head for q in range(game.num_players()) if q != p)
        assert (p, text) not in seen
        seen.add((p, text))
        obs = np.asarray(state.information_state_tensor(p), dtype=np.float32)
        observer = osp.CardGameObserver(game.rules, pyspiel.IIGObservationType(perfect_recall=True))
        observer.set_from(state, p)
        assert np.array_equal(observer.tensor, obs)
        hand = observer.dict["observation"][layout.slices["hand"]]
        cards = [a for a in state.legal_actions() if a < core.module.N_CARDS]
        held = np.flatnonzero(t.eng.hands[0, p]).tolist()
        assert np.flatnonzero(hand).tolist() == held and set(cards) <= set(held)
        assert np.array_equal(observer.dict["dealt"], t.hands[-1].dealt[p])
        plays = [(seat, a) for seat, a, phase in t.hands[-1].actions if phase == core.module.PLAY]
        tricks = observer.dict["tricks"]
        assert int(tricks.sum()) == len(plays)
        for i, (seat, card) in enumerate(plays):
            assert tricks[i // game.num_players(), (seat - p) % game.num_players(), card] == 1
    assert len(seen) == len(states) >= 6


def test_secret_bids_stay_hidden_until_everybody_has_bid():
    game = pyspiel.load_game("python_bobs_hat", {"players": 3, "hands": 1, "secret_bidding": True})
    r = np.random.default_rng(0)
    bid = game.rules.game.module.BID
    state = _play(game.new_initial_state(), r, stop=lambda s: s._table.eng is not None and s._table.eng.phase[0] == bid)
    state.apply_action(state.legal_actions()[3])  # the dealer (seat 0) bids
    assert "p0:bid:" not in state.information_state_string(1) and "p0:bid" in state.information_state_string(1)
    assert "p0:bid:" in state.information_state_string(0)
    state.apply_action(state.legal_actions()[0])
    state.apply_action(state.legal_actions()[0])  # everybody has bid: the bids are shown
    assert "p0:bid:" in state.information_state_string(1) and "p2:bid:" in state.information_state_string(1)


# --------------------------------------------------------------------------
# The engine's scores on the same deals
def _deal_outcomes(module, trump: int, hands: np.ndarray) -> list[int]:
    """The adapter's chance outcomes of a deal: Bob's Hat's trump first, card k to seat k % P, Oh Hell's
    turned card last."""
    P = hands.shape[0]
    per_seat = [np.flatnonzero(hands[s]).tolist() for s in range(P)]
    cards = [per_seat[k % P][k // P] for k in range(sum(map(len, per_seat)))]
    return cards + [trump] if module.TRUMP_TURNED else [trump, *cards]


@pytest.mark.parametrize(
    "name, options, single_hand",
    [
        ("bobs_hat", {"players": 3, "hands": 3, "no_bid": True, "negative_scoring": True}, 0),
        ("bobs_hat", {"players": 4, "hands": 2, "double_fewest": True, "secret_bidding": True, "first_dealer": 2}, 0),
        ("bobs_hat", {"players": 5}, 4),
        ("oh_hell", {"players": 3, "deal_style": "short_high", "scoring": "negative"}, 0),
        ("oh_hell", {"players": 6, "deal_style": "short_low", "scoring": "neutral", "first_dealer": 4}, 0),
        ("oh_hell", {"players": 4}, 12),
    ],
)
def test_returns_are_the_engines_hand_scores_on_the_same_deals(name, options, single_hand):
    """The engine (core init / deal / step / legal_action_mask, the deals from its own random_deal) and
    the OpenSpiel game driven with the same deals and the same actions: the same seat to act, the same
    legal actions, the same rewards when each hand ends, the same totals, terminal together."""
    core = make_game(name, **options)
    m, cfg, P = core.module, core.config, core.players
    params = {**options, "single_hand": single_hand}
    r = np.random.default_rng(7)
    for game_no in range(2):
        key = np.array([game_no + 11], dtype=np.uint64)
        eng = m.init(cfg, key, auto_deal=False)
        if single_hand:
            eng.hand_no[0] = single_hand - 1
            eng.dealer[0] = rotate_dealer(eng.first_dealer, single_hand - 1, P)[0]
        state = pyspiel.load_game("python_" + name, params).new_initial_state()
        hands_played = 0
        while True:  # one hand
            trump, hands = m.random_deal(cfg, key, eng.hand_no, m.deal_attempt(eng))
            m.deal(cfg, eng, np.zeros(1, dtype=np.int64), trump, hands)
            for outcome in _deal_outcomes(m, int(trump[0]), hands[0]):
                assert state.is_chance_node()
                state.apply_action(outcome)
            while True:
                legal = np.flatnonzero(m.legal_action_mask(cfg, eng)[0]).tolist()
                assert state.current_player() == eng.cur[0]
                assert state.legal_actions() == legal
                action = int(r.choice(legal))
                res = m.step(cfg, eng, np.array([action]), auto_deal=False)
                state.apply_action(action)
                assert state.rewards() == res.rewards[0].tolist()
                if res.hand_done[0]:
                    break
                assert not state.is_terminal()
            hands_played += 1
            if res.game_done[0] or single_hand:
                break
        assert state.is_terminal()
        assert state.returns() == (res.rewards[0] if single_hand else eng.scores[0]).astype(float).tolist()
        assert hands_played == (1 if single_hand else len(cfg.hand_sizes))


# --------------------------------------------------------------------------
# OpenSpiel's own oh_hell on the same deals
@pytest.mark.parametrize("players", [3, 4, 5, 6, 7])
def test_python_oh_hell_agrees_with_openspiel_oh_hell(players):
    """One full-size hand of every size, every dealer in turn: OpenSpiel's ``oh_hell`` gets the hand size
    and dealer at its first two chance nodes, then both get the same card outcomes (card k to seat
    k % P, then the trump card); both then play the same random actions, and the seat to act, the
    legal actions, the end and the returns must agree."""
    P = players
    cfg = make_game("oh_hell", players=P).config
    theirs = pyspiel.load_game("oh_hell", {"players": P})
    r = np.random.default_rng(20 + P)
    for hand_no, size in enumerate(cfg.hand_sizes[: cfg.start_size]):  # S, S-1, ..., 1: every size once
        dealer = hand_no % P
        first_dealer = (dealer - hand_no) % P  # who deals the first hand, so that hand hand_no + 1 is dealer's
        ours = pyspiel.load_game(
            "python_oh_hell", {"players": P, "single_hand": hand_no + 1, "first_dealer": first_dealer}
        ).new_initial_state()
        other = theirs.new_initial_state()
        other.apply_action(size)
        other.apply_action(dealer)
        while ours.is_chance_node():
            outcome = _random_action(ours, r)
            assert outcome in dict(other.chance_outcomes())
            ours.apply_action(outcome)
            other.apply_action(outcome)
        assert not other.is_chance_node()
        while not ours.is_terminal():
            assert not other.is_terminal()
            assert ours.current_player() == other.current_player()
            assert ours.legal_actions() == other.legal_actions()
            action = int(r.choice(ours.legal_actions()))
            ours.apply_action(action)
            other.apply_action(action)
        assert other.is_terminal()
        assert ours.returns() == other.returns()


# --------------------------------------------------------------------------
# OpenSpiel's algorithms, unchanged
def test_ismcts_bot_plays_whole_hands():
    """OpenSpiel's Python ISMCTS bot (it asks the state to resample from its information state, and checks
    each sample's information state against the real one) plays one seat of a hand of each game."""
    from open_spiel.python.algorithms import ismcts, mcts

    for name, params in (("python_oh_hell", {"players": 3, "single_hand": 8}), ("python_bobs_hat", {"hands": 1})):
        game = pyspiel.load_game(name, params)
        bot = ismcts.ISMCTSBot(
            game, mcts.RandomRolloutEvaluator(1, np.random.RandomState(0)), 2.0, 8,
            random_state=np.random.RandomState(1),
        )  # fmt: skip
        r = np.random.default_rng(2)
        state, by_bot = game.new_initial_state(), 0
        while not state.is_terminal():
            if state.current_player() == 0:
                action = bot.step(state)
                assert action in state.legal_actions()
                by_bot += 1
            else:
                action = _random_action(state, r)
            state.apply_action(int(action))
        assert by_bot >= 3


def test_sampling_cfr_runs_and_gives_a_policy():
    """Outcome sampling MCCFR on both games, external sampling on a one-card Oh Hell hand: a few
    iterations each; the average policy at a decision is a distribution over its legal actions."""
    from open_spiel.python.algorithms import external_sampling_mccfr, outcome_sampling_mccfr

    cases = [
        ("python_bobs_hat", {"players": 3, "hands": 1}, outcome_sampling_mccfr.OutcomeSamplingSolver),
        ("python_oh_hell", {"players": 3, "single_hand": 10}, outcome_sampling_mccfr.OutcomeSamplingSolver),
        ("python_oh_hell", {"players": 3, "single_hand": 10}, external_sampling_mccfr.ExternalSamplingSolver),
    ]
    for name, params, solver_cls in cases:
        game = pyspiel.load_game(name, params)
        solver = solver_cls(game)
        for _ in range(10):
            solver.iteration()
        assert len(solver._infostates) > 10
        policy = solver.average_policy()
        state = _decision_states(game, seed=0)[0]
        probs = policy.action_probabilities(state)
        assert set(probs) == set(state.legal_actions()) and abs(sum(probs.values()) - 1) < 1e-9


def _expectimax(state, player: int) -> float:
    """``player``'s best value against uniform random others, by brute force (no hidden chance left)."""
    if state.is_terminal():
        return state.returns()[player]
    values = []
    for a in state.legal_actions():
        child = state.clone()
        child.apply_action(a)
        values.append(_expectimax(child, player))
    return max(values) if state.current_player() == player else float(np.mean(values))


def test_best_response_from_a_dealt_hand_is_the_expectimax():
    """OpenSpiel's best response (what exploitability and NashConv compute for every player from the
    root, out of reach here: see the module docstring) from a dealt one-card Oh Hell hand: every seat's
    value against uniform random play equals the brute-force expectimax."""
    from open_spiel.python import policy as policy_lib
    from open_spiel.python.algorithms import best_response

    game = pyspiel.load_game("python_oh_hell", {"players": 3, "single_hand": 10})
    uniform = policy_lib.UniformRandomPolicy(game)
    r = np.random.default_rng(4)
    for _ in range(3):
        root = _play(game.new_initial_state(), r, stop=lambda s: not s.is_chance_node())
        for p in range(3):
            br = best_response.BestResponsePolicy(game, p, uniform, root_state=root)
            assert br.value(root) == pytest.approx(_expectimax(root, p))


def test_nfsp_runs_on_both_games():
    """OpenSpiel's NFSP (PyTorch) through its RL environment, which reads the information-state tensors."""
    pytest.importorskip("tree")  # dm-tree: OpenSpiel's NFSP needs it
    import torch
    from open_spiel.python import rl_environment
    from open_spiel.python.pytorch import nfsp

    torch.manual_seed(0)
    for name, params in (("python_oh_hell", {"players": 3, "single_hand": 9}), ("python_bobs_hat", {"hands": 1})):
        game = pyspiel.load_game(name, params)
        env = rl_environment.Environment(game, seed=0)
        size, n_actions = env.observation_spec()["info_state"][0], env.action_spec()["num_actions"]
        assert size == game.information_state_tensor_size()
        agents = [
            nfsp.NFSP(
                p,
                size,
                n_actions,
                [16],
                reservoir_buffer_capacity=50,
                anticipatory_param=0.1,
                batch_size=4,
                min_buffer_size_to_learn=4,
                learn_every=4,
            )  # fmt: skip
            for p in range(game.num_players())
        ]
        for _ in range(3):
            step = env.reset()
            while not step.last():
                step = env.step([agents[step.observations["current_player"]].step(step).action])
            for agent in agents:
                agent.step(step)
        assert len(step.rewards) == game.num_players()


# --------------------------------------------------------------------------
# Only the adapter imports OpenSpiel at module level
def _top_level_imports(source: str) -> set[str]:
    out = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):  # a relative one (from . import openspiel) by its own parts
            base = node.module or ""
            out |= {base} | {f"{base}.{a.name}".lstrip(".") for a in node.names}
    return out


def test_nothing_else_imports_openspiel_at_module_level():
    """``import bobshat_env`` (and every other module) must work without OpenSpiel: pyspiel is a dev extra."""
    assert "pyspiel" in _top_level_imports((ROOT / "bobshat_env" / "openspiel.py").read_text())
    assert "bobshat_env.openspiel" in _top_level_imports("from bobshat_env import openspiel\n")
    assert "openspiel" in _top_level_imports("from . import openspiel\n")
    bad = []
    for pkg in ("bobshat_env", "agents", "train", "benchmarks", "examples", "scripts"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            if path == ROOT / "bobshat_env" / "openspiel.py":
                continue
            found = _top_level_imports(path.read_text(encoding="utf-8"))
            if any(m.split(".")[0] in ("pyspiel", "open_spiel") or "openspiel" in m.split(".") for m in found):
                bad.append(str(path.relative_to(ROOT)))
    assert bad == []


# --------------------------------------------------------------------------
# The documentation's examples run
DOC = ROOT / "docs" / "openspiel.md"


def test_the_docs_page_examples_run():
    text = DOC.read_text(encoding="utf-8")
    blocks = re.findall(r"^```python[ \t]*\n(.*?)^```[ \t]*$", text, flags=re.S | re.M)
    assert blocks
    for code in blocks:
        exec(compile(code, str(DOC.name), "exec"), {"__name__": "__doc_example__"})
    assert "docs/openspiel.md" in (ROOT / "README.md").read_text(encoding="utf-8")
