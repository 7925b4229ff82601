"""Exact instruments on small games: the exploitability of a bot, and CFR+ (``bobshat exact``).

``bobshat exploit`` trains a best response, so the margin it finds is only a
lower bound on how exploitable a bot is. On a game small enough to walk
whole (the small variants, one hand), OpenSpiel computes it exactly:

- :class:`AgentPolicy` turns any bobshat agent spec into an OpenSpiel policy:
  at a decision, the agent acts on the adapter's batch-of-one core state (the
  acting seat's observation, the legal mask, the seat, the public record of
  the hand; :meth:`bobshat_env.openspiel.CardGameState.agent_inputs`), once
  per information state (cached). ``random`` gives the uniform over the legal
  actions, a sampling PPO policy (``sample=true``) its probabilities, a
  deterministic agent (``simple``, ``strong``, a greedy PPO policy) probability 1
  to its action. An agent that samples inside its own decision (``search``,
  ``pimc``) has its random generators seeded from the information state
  before it acts: it becomes one pure strategy, a deterministic function of
  what the seat knows, drawn from its mixed behaviour (not the mixture itself).
- :func:`policy_values` gives, for a policy played at every seat, each seat's
  own expected return, its best-response value (OpenSpiel's Python
  ``best_response.BestResponsePolicy``: exact for any number of players and
  general-sum returns, which its C++ exploitability code and
  ``exploitability.exploitability`` are not written for), the gain a seat
  gets by deviating alone (best response - own, never negative) and
  NashConv, the sum of the gains (0 exactly at a Nash equilibrium).
- :func:`run_cfr` runs OpenSpiel's C++ ``CFRPlusSolver`` for an iteration
  budget and a time limit, with the NashConv of its average policy at
  iterations 1, 2, 4, 8, ... and at the end. With two players in a zero-sum
  game NashConv goes to 0; with more players (or general-sum returns) CFR+
  has no such guarantee, and the report says what it reaches.

Walking the tree costs the same per node whatever the method, and at full
size a single hand's deal alone is out of reach: :func:`bobshat_env.openspiel.tree_bound` gives an
upper bound on the number of terminal histories from the rules (the ordered
deals, the first bidder's number of bids, every order of each hand's cards),
and the command refuses a game above ``--max-histories`` before it starts.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

Log = Callable[[str], None]

MAX_HISTORIES = 200_000  # default refusal bound on terminal histories (the command's --max-histories)
SEED_BITS = 63  # the per-information-state seed of a sampling agent: fits numpy's and torch's generators


# --------------------------------------------------------------------------
# An OpenSpiel policy from a bobshat agent
def info_seed(key: str, seed: int = 0) -> int:
    """A seed that is a pure function of an information-state string (and ``seed``), the same in every run."""
    digest = hashlib.sha256(f"{seed}\n{key}".encode()).digest()
    return int.from_bytes(digest[:8], "little") >> (64 - SEED_BITS)


def reseed(agent: Any, seed: int) -> None:
    """Reset every random generator ``agent`` holds (numpy's and torch's, a composite's parts' too) to ``seed``."""
    for name, value in list(vars(agent).items()):
        if isinstance(value, np.random.Generator):
            setattr(agent, name, np.random.default_rng(seed))
        elif callable(getattr(value, "manual_seed", None)) and type(value).__name__ == "Generator":
            value.manual_seed(seed)  # a torch.Generator (torch imported only by agents that hold one)
        elif value is not agent and callable(getattr(value, "act", None)):
            reseed(value, seed)


def agent_probs(agent: Any, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray, public: dict, seed: int) -> np.ndarray:
    """(A,) the probabilities with which ``agent`` takes each action at one decision (module docstring)."""
    from agents.composite import CompositeAgent

    if isinstance(agent, CompositeAgent):  # bidding by one agent, card play by another: ask the one that acts
        part = agent.play if mask[0, : agent.n_cards].any() else agent.bid
        return agent_probs(part, obs, mask, seat, public, seed)
    probs = getattr(agent, "action_probs", None)
    if probs is not None:
        p = probs(obs, mask, seat)
        if p is not None:
            p = np.where(mask[0], np.asarray(p, dtype=np.float64)[0], 0.0)
            return p / p.sum()
    reseed(agent, seed)
    if getattr(agent, "needs_public", False):
        action = int(agent.act(obs, mask, seat, public=public)[0])
    else:
        action = int(agent.act(obs, mask, seat)[0])
    if not mask[0, action]:
        raise ValueError(f"agent {getattr(agent, 'name', agent)!r} chose illegal action {action}")
    out = np.zeros(mask.shape[1])
    out[action] = 1.0
    return out


def _policy_base() -> type:
    from open_spiel.python import policy

    return policy.Policy


class AgentPolicy(_policy_base()):  # type: ignore[misc]
    """An OpenSpiel policy that plays a bobshat agent at every seat (module docstring), cached per information state.

    ``game``: one of our OpenSpiel games (:mod:`bobshat_env.openspiel`);
    ``spec``: an agent spec (``random``, ``strong``, ``ppo:PATH``, ...);
    ``seed``: the seed the agent is made with, and the base of the
    per-information-state seeds of a sampling agent.
    """

    def __init__(self, game: Any, spec: str, seed: int = 0):
        from agents.registry import make_agent
        from bobshat_env.seating import needs_public

        super().__init__(game, list(range(game.num_players())))
        self.spec, self.seed = spec, seed
        self.agent = make_agent(spec, game.rules.game, seed=seed)
        self.needs_public = needs_public(self.agent)  # (a composite asks for the record if a part does)
        self.cache: dict[str, dict[int, float]] = {}

    def action_probabilities(self, state: Any, player_id: int | None = None) -> dict[int, float]:
        """``{action: probability}`` of the legal actions at ``state`` for the seat to act."""
        player = state.current_player() if player_id is None else player_id
        key = state.information_state_string(player)
        probs = self.cache.get(key)
        if probs is None:
            obs, mask, seat, public = state.agent_inputs(public=self.needs_public)
            p = agent_probs(self.agent, obs, mask, seat, public, info_seed(key, self.seed))
            probs = {int(a): float(p[a]) for a in np.flatnonzero(mask[0])}
            self.cache[key] = probs
        return probs


class CachedPolicy(_policy_base()):  # type: ignore[misc]
    """An OpenSpiel policy (C++ or Python) asked once per information state: the walks of
    :func:`policy_values` meet each information state many times."""

    def __init__(self, game: Any, policy: Any):
        super().__init__(game, list(range(game.num_players())))
        self.policy = policy
        self.cache: dict[str, dict[int, float]] = {}

    def action_probabilities(self, state: Any, player_id: int | None = None) -> dict[int, float]:
        """``{action: probability}`` of the wrapped policy at ``state``."""
        player = state.current_player() if player_id is None else player_id
        key = state.information_state_string(player)
        if key not in self.cache:
            self.cache[key] = {int(a): float(p) for a, p in self.policy.action_probabilities(state).items()}
        return self.cache[key]


# --------------------------------------------------------------------------
# The tree, walked once
class TreeCopy:
    """A copy of a whole OpenSpiel game tree as an OpenSpiel game in C++ (Gambit's EFG format,
    ``pyspiel.load_efg_game``), made by walking the original once.

    Our games step a batch-of-one engine in Python at every node; the exact
    methods walk the tree many times (a best response per seat, every CFR+
    iteration). On the copy every walk runs at C++ speed, and each policy of
    the original is asked once per information state (:meth:`policy`).
    Actions keep their names (the original's action ids) and each
    information state keeps one original state, so a policy of the original
    plays the copy as it is. ``histories`` and ``terminal`` count the tree.
    Raises ValueError past ``max_histories`` histories.
    """

    def __init__(self, game: Any, max_histories: int = 10_000_000):
        import pyspiel

        self.original = game
        self.histories = self.terminal = 0
        self.states: dict[str, tuple[Any, list[int]]] = {}  # infoset name -> (an original state, its legal actions)
        self._ids: list[dict[str, int]] = [{} for _ in range(game.num_players())]  # per player: info string -> id
        self._max = max_histories
        self._chance = 0
        lines = [f'EFG 2 R "{game.get_type().short_name}" {{ ' + " ".join(f'"p{p}"' for p in range(game.num_players()))]
        lines[0] += " }"
        lines.append('""')
        self._walk(game.new_initial_state(), lines)
        self.efg_text = "\n".join(lines) + "\n"
        self.game = pyspiel.load_efg_game(self.efg_text)

    def _walk(self, state: Any, lines: list[str]) -> None:
        self.histories += 1
        if self.histories > self._max:
            raise ValueError(f"the tree has more than {self._max:,} histories")
        if state.is_terminal():
            self.terminal += 1
            payoffs = ", ".join(repr(float(r)) for r in state.returns())
            lines.append(f't "" {self.terminal} "" {{ {payoffs} }}')
            return
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            self._chance += 1
            branches = " ".join(f'"{a}" {p!r}' for a, p in outcomes)
            lines.append(f'c "" {self._chance} "" {{ {branches} }} 0')
            actions = [a for a, _ in outcomes]
        else:
            player = state.current_player()
            key = state.information_state_string(player)
            ids = self._ids[player]
            if key not in ids:
                ids[key] = len(ids) + 1
                actions = state.legal_actions()
                self.states[f"p{player}i{ids[key]}"] = (state.clone(), actions)
            name = f"p{player}i{ids[key]}"
            actions = self.states[name][1]
            branches = " ".join(f'"{a}"' for a in actions)
            lines.append(f'p "" {player + 1} {ids[key]} "{name}" {{ {branches} }} 0')
        for a in actions:
            self._walk(state.child(a), lines)

    def info_states(self) -> list[int]:
        """The number of information states of each player."""
        return [len(ids) for ids in self._ids]

    def policy(self, policy: Any) -> Any:
        """A policy of the copy that plays ``policy`` (a policy of the original game)."""
        return _CopiedPolicy(self, policy)


class _CopiedPolicy(_policy_base()):  # type: ignore[misc]
    """A policy of the original game, played on a :class:`TreeCopy` (asked once per information state)."""

    def __init__(self, tree: TreeCopy, policy: Any):
        super().__init__(tree.game, list(range(tree.game.num_players())))
        self.tree, self.policy = tree, policy
        self.cache: dict[str, dict[int, float]] = {}

    def action_probabilities(self, state: Any, player_id: int | None = None) -> dict[int, float]:
        """``{action index of the copy: probability}`` at ``state`` of the copy."""
        player = state.current_player() if player_id is None else player_id
        key = state.information_state_string(player)
        if key not in self.cache:
            original, _ = self.tree.states[key.rsplit("-", 1)[1]]
            probs = self.policy.action_probabilities(original)
            named = {a: int(state.action_to_string(player, a)) for a in state.legal_actions()}  # names: original ids
            self.cache[key] = {a: float(probs.get(ours, 0.0)) for a, ours in named.items()}
        return self.cache[key]


# --------------------------------------------------------------------------
# Exact values of a policy
def policy_values(game: Any, policy: Any) -> dict[str, Any]:
    """Exact values of ``policy`` played at every seat of ``game`` (any OpenSpiel game, any players).

    ``own``: each seat's expected return; ``best_response``: each seat's
    value when it alone plays a best response; ``gain``: best response -
    own; ``nash_conv``: the sum of the gains; ``seconds``: the time taken.
    """
    from open_spiel.python.algorithms import best_response, expected_game_score

    t0 = time.perf_counter()
    root = game.new_initial_state()
    own = [float(v) for v in expected_game_score.policy_value(root, [policy] * game.num_players())]
    br = [float(best_response.BestResponsePolicy(game, p, policy).value(root)) for p in range(game.num_players())]
    gain = [b - o for b, o in zip(br, own)]
    return {
        "own": own,
        "best_response": br,
        "gain": gain,
        "nash_conv": float(sum(gain)),
        "seconds": time.perf_counter() - t0,
    }


# --------------------------------------------------------------------------
# CFR+
def _doubling(i: int) -> bool:
    """Whether iteration ``i`` (1-based) is a power of two: the points of the NashConv curve."""
    return i & (i - 1) == 0


def run_cfr(
    game: Any,
    iterations: int,
    time_limit_s: float = 0.0,
    log: Log | None = None,
    checkpoint: Callable[[int], bool] = _doubling,
) -> dict[str, Any]:
    """OpenSpiel's CFR+ on ``game`` for ``iterations`` (and at most ``time_limit_s`` seconds of iterations, 0: no
    limit), the NashConv of its average policy at the iterations ``checkpoint`` picks and at the last one.

    Returns ``iterations`` (done), ``stopped_by`` (``iterations`` or ``time limit``), ``curve`` (a list of
    ``{"iteration", "seconds", "nash_conv"}``, seconds of iterations only) and ``final`` (:func:`policy_values`
    of the last average policy).
    """
    import pyspiel

    solver = pyspiel.CFRPlusSolver(game)
    curve: list[dict[str, Any]] = []
    spent, done, stopped_by = 0.0, 0, "iterations"
    final: dict[str, Any] = {}
    while done < iterations:
        t0 = time.perf_counter()
        solver.evaluate_and_update_policy()
        spent += time.perf_counter() - t0
        done += 1
        out_of_time = bool(time_limit_s) and spent >= time_limit_s and done < iterations
        if out_of_time:
            stopped_by = "time limit"
        last = done == iterations or out_of_time
        if checkpoint(done) or last:
            values = policy_values(game, CachedPolicy(game, solver.average_policy()))
            curve.append({"iteration": done, "seconds": spent, "nash_conv": values["nash_conv"]})
            if log:
                log(f"cfr+ iteration {done}/{iterations}: NashConv {values['nash_conv']:.6g} ({spent:.1f} s)")
            if last:
                final = values
        if out_of_time:
            break
    return {"iterations": done, "stopped_by": stopped_by, "curve": curve, "final": final}


# --------------------------------------------------------------------------
# How big the tree is, before walking it
# --------------------------------------------------------------------------
# The command
def parse_options(pairs: list[str]) -> dict[str, Any]:
    """``["suits=2", "no_bid=true"]`` -> ``{"suits": 2, "no_bid": True}`` (ints and booleans read as such);
    ValueError naming a piece that is not ``key=value``."""
    from agents.registry import parse_value

    out: dict[str, Any] = {}
    for pair in pairs:
        key, eq, value = pair.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"--option {pair!r}: expected key=value (a game option, e.g. suits=2)")
        out[key.strip().replace("-", "_")] = parse_value(value.strip())
    return out


def load_game(name: str, params: dict[str, Any]) -> Any:
    """Our OpenSpiel game ``python_NAME`` with ``params``; ConfigError naming a bad option."""
    from bobshat_env.openspiel import GAME_CLASSES, PREFIX

    return GAME_CLASSES[PREFIX + name](params)


def exact_report(
    game: Any,
    specs: list[str],
    cfr_iterations: int,
    time_limit_s: float = 0.0,
    seed: int = 0,
    log: Log | None = None,
) -> dict[str, Any]:
    """The exact values of every agent in ``specs`` (each at every seat) and a CFR+ run on ``game``, both on
    its :class:`TreeCopy`.

    Every agent is made before anything is walked, so a bad spec or a
    missing checkpoint stops the run at once.
    """
    t0 = time.perf_counter()
    policies = [AgentPolicy(game, spec, seed=seed) for spec in specs]
    tree = TreeCopy(game)
    copied = time.perf_counter() - t0
    if log:
        log(
            f"tree: {tree.histories:,} histories, {tree.terminal:,} terminal, information states {tree.info_states()}"
            f" ({copied:.1f} s)"
        )
    agents = []
    for pol in policies:
        values = policy_values(tree.game, tree.policy(pol))
        agents.append({"agent": pol.spec, **values, "info_states": len(pol.cache)})
        if log:
            log(f"{pol.spec}: NashConv {values['nash_conv']:.6g} ({values['seconds']:.1f} s)")
    cfr = None
    if cfr_iterations:
        cfr = {"time_limit_s": time_limit_s, **run_cfr(tree.game, cfr_iterations, time_limit_s, log=log)}
    return {
        "game": game.get_type().short_name,
        "config": game.rules.game.config.to_dict(),
        "single_hand": game.rules.single_hand,
        "players": game.num_players(),
        "score_range": [game.min_utility(), game.max_utility()],
        "seed": seed,
        "tree": {
            "histories": tree.histories,
            "terminal": tree.terminal,
            "info_states": tree.info_states(),
            "seconds": copied,
        },
        "agents": agents,
        "cfr": cfr,
        "seconds": time.perf_counter() - t0,
    }


def format_report(report: dict[str, Any]) -> str:
    """The report as a short text table: per agent each seat's own and best-response values, NashConv; CFR+."""
    lo, hi = report["score_range"]
    P = report["players"]
    params = ", ".join(f"{k}={v}" for k, v in report["config"].items())
    if report["single_hand"]:
        params += f", hand {report['single_hand']} alone"
    lines = [f"{report['game']} ({params}); returns per seat from {lo:g} to {hi:g}"]
    rows = [(a["agent"], a) for a in report["agents"]]
    if report["cfr"]:
        rows.append((f"CFR+ average, {report['cfr']['iterations']} iterations", report["cfr"]["final"]))
    if rows:
        seats = "  ".join(f"{'seat ' + str(p) + ' own / BR':>22}" for p in range(P))
        lines.append(f"{'policy':<32} {seats}  {'NashConv':>10}")
        for name, v in rows:
            cells = "  ".join(f"{v['own'][p]:>10.4f} / {v['best_response'][p]:<9.4f}" for p in range(P))
            lines.append(f"{name:<32} {cells}  {v['nash_conv']:>10.4f}")
    if report["cfr"]:
        c = report["cfr"]
        curve = ", ".join(f"{pt['iteration']}: {pt['nash_conv']:.4g}" for pt in c["curve"])
        lines.append(f"CFR+ NashConv by iteration ({c['stopped_by']}): {curve}")
    return "\n".join(lines)


def cli_exact(ns: argparse.Namespace, options: dict[str, Any]) -> int:
    """``bobshat exact``: ``ns`` the command's flags, ``options`` the game options from the game flags."""
    from agents.registry import split_specs
    from train.runtime.kit import write_report

    log = None if ns.quiet else (lambda msg: print(msg, file=sys.stderr, flush=True))
    params = {k: v for k, v in options.items() if v is not None}
    params.update(parse_options(ns.option or []))
    if ns.hand:
        params["single_hand"] = ns.hand
    game = load_game(ns.game, params)
    from bobshat_env.openspiel import tree_bound

    bound = tree_bound(game)
    if bound > ns.max_histories:
        raise ValueError(
            f"this game has up to {bound:.3g} histories to walk, more than --max-histories {ns.max_histories:,}: "
            "choose a smaller variant (--variant, --option) or one hand (--hand)"
        )
    if log:
        log(f"{game.get_type().short_name}: at most {bound:,} terminal histories")
    specs = split_specs(ns.agents or "")
    report = exact_report(game, specs, ns.cfr_iterations, ns.time_limit, seed=ns.seed, log=log)
    report["histories_bound"] = bound
    write_report(report, ns.json or None, format_report(report), wrote=True)
    return 0
