"""Our Oh Hell agents against OpenSpiel's information-set MCTS, duplicate, on single hands of one size.

Why: every other strength figure of the kit is measured against its own bots.
OpenSpiel's ``ISMCTSBot`` (Cowling et al. 2012, with its random-rollout
evaluator) is the generic search an RL researcher reaches for first, and it
plays OpenSpiel's ``oh_hell``, whose rules and scores are ours (positive
scoring; tests/test_oh_hell_openspiel.py), so it is an external yardstick.

Each *deal* is one hand of ``--hand-size`` cards (default 10): the hand of
that size that comes first in the game's schedule (its hand number is in our
agents' observations; the running scores are 0), with seat ``deal % P``
dealing. Every deal is played under every seating of the layout (2v2: our
agent in two seats, ISMCTS in the other two, 6 seatings), so each side holds
every seat's cards. The two engines run in lockstep: OpenSpiel's state gets
the same size, dealer, cards and trump card, and every action of both sides;
at each decision the seat to act and the legal actions must agree, and at the
end OpenSpiel's returns must equal our hand scores, so every game is also a
differential check of the rules. The measure, per deal: the mean over the
seatings of (our seats' mean hand score - ISMCTS's seats' mean), with its
95% CI over deals (Student t), as ``bobshat eval --layout`` reports a
head-to-head.

ISMCTS's worlds (``--resampler``): OpenSpiel's ``oh_hell`` draws a world
for its ISMCTS (``ResampleFromInfostate``) by reshuffling among the other
seats the cards the real deal gave them, so every world leaves out exactly
the cards really left out of the deal: at 4 players and 10 cards, the bot
knows which 11 of the 41 cards it cannot see are out of play. By default
(``honest``) its worlds are drawn as our searches draw theirs, from what the
seat knows (its hand, the cards played, the hand sizes, the voids shown),
and played by OpenSpiel's Python port of the same bot (several times slower
than the C++ one); ``openspiel`` is the C++ bot with the game's own worlds,
as every result measured before December 2026 was.

ISMCTS gets one bot per game, seeded from (``--seed``, deal, seating); a
decision with one legal action is taken without searching. OpenSpiel's
ISMCTS does not repeat itself from its seed, though (two fresh bots with
the same seed on the same state list their policy's children in different
orders, and with few simulations pick different moves), so only our side
repeats: a deal is a pure function of (``--seed``, deal id), whichever
other deals run with it, and our agent acts batched over all games, as in
``bobshat eval``. ``--json FILE`` is rewritten after every chunk
of ``--chunk`` deals (atomically), so an interrupted run keeps what it
finished, and ``--first-deal`` lets processes split a range of deals;
``--merge`` joins their JSON files into one result (the same settings, no deal
twice), as one run over all their deals would report it.

    python -m benchmarks.vs_ismcts --agent ppo:checkpoints/oh_hell_4p.pt --sims 1000 --deals 200
    python -m benchmarks.vs_ismcts --agent ismcts:sims=1000 --sims 1000 --deals 300   # ours against theirs
    python -m benchmarks.vs_ismcts --merge part0.json part1.json --json all.json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from bobshat_env.games import Game

MAX_COUNT = 1_000_000


def openspiel_state(os_game: Any, size: int, dealer: int, hands: np.ndarray, trump_card: int) -> Any:
    """An OpenSpiel ``oh_hell`` state at the start of bidding with the given deal.

    OpenSpiel's chance nodes: the number of tricks, the dealer, then one card
    per deal action, card ``k`` to seat ``k % P`` (seat 0 first whatever the
    dealer), and last the trump card. ``hands``: (P, 52) bool. Every outcome
    is checked against the node's own list, so a change in OpenSpiel's chance
    order stops here, naming the step, instead of dealing other hands (the
    rules differential in tests/test_oh_hell_openspiel.py builds its states here too).
    """
    s = os_game.new_initial_state()
    _chance(s, size, "the number of tricks")
    _chance(s, dealer, "the dealer")
    for k, card in enumerate(deal_order(hands, size).tolist()):
        _chance(s, card, f"deal card {k}")
    _chance(s, trump_card, "the trump card")
    if s.is_chance_node():
        raise RuntimeError("OpenSpiel's oh_hell still waits for chance after the deal: its chance order changed")
    return s


def deal_order(hands: np.ndarray, size: int) -> np.ndarray:
    """(..., P * size) the cards of ``hands`` (..., P, 52 bool, ``size`` cards a seat) in OpenSpiel's deal
    order: card ``k`` to seat ``k % P``, each seat's cards in increasing order."""
    hands = np.asarray(hands, dtype=bool)
    if (hands.sum(axis=-1) != size).any():
        raise ValueError(f"every seat must hold {size} cards to be dealt")
    cards = np.argsort(~hands, axis=-1, kind="stable")[..., :size]  # (..., P, size): the held cards, in order
    return np.swapaxes(cards, -1, -2).reshape(hands.shape[:-2] + (-1,))


def _chance(s: Any, outcome: int, what: str) -> None:
    """Apply one chance outcome to OpenSpiel's state, refusing one its chance node does not offer."""
    if not s.is_chance_node() or outcome not in dict(s.chance_outcomes()):
        raise RuntimeError(f"OpenSpiel's oh_hell does not offer {outcome} as {what}: its chance order changed")
    s.apply_action(outcome)


def _bot_seed(seed: int, deal: int, seating: int) -> int:
    """A 31-bit seed for one game's ISMCTS bot, a pure function of (seed, deal, seating)."""
    return int(np.random.SeedSequence([seed, deal, seating]).generate_state(1)[0] >> 1)


def _deal(game: Game, seed: int, ids: np.ndarray, hand_no: int) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray]:
    """Our games at hand ``hand_no``, deal ``ids[g]`` in game ``g`` (seat ``id % P`` deals), ready to bid.

    Returns the state, and each game's dealer, trump card and (P, 52) hands.
    """
    from bobshat_env.core import oh_hell as oh
    from bobshat_env.core import rng

    P, n = game.players, ids.size
    keys = rng.game_keys(seed, ids, 0)
    state = game.init(keys, auto_deal=False)
    dealer = (ids % P).astype(np.int8)
    state.hand_no[:] = hand_no
    state.dealer[:] = dealer
    state.first_dealer[:] = (dealer - hand_no) % P
    trump_card, hands = oh.random_deal(game.config, keys, state.hand_no)
    oh.deal(game.config, state, np.arange(n), trump_card, hands)
    return state, dealer, trump_card, hands


class _Bots:
    """One ISMCTS bot per game, made at its first decision, seeded from (seed, deal, seating).

    ``resampler="openspiel"``: OpenSpiel's C++ ``ISMCTSBot``, which draws its
    worlds with the game's own ``ResampleFromInfostate``. ``"honest"``: the
    same algorithm in OpenSpiel's Python port (``open_spiel.python.algorithms.
    ismcts``, random rollouts in Python too, so several times slower), its
    worlds drawn by :class:`_HonestWorlds`.
    """

    def __init__(
        self,
        seed: int,
        ids: np.ndarray,
        R: int,
        sims: int,
        uct_c: float,
        rollouts: int,
        world_samples: int,
        resampler: str = "openspiel",
    ) -> None:
        self.seed, self.ids, self.R = seed, ids, R
        self.settings = (sims, uct_c, rollouts, world_samples)
        self.resampler = resampler
        self.bots: dict[int, Any] = {}
        self.keep: list[Any] = []  # the evaluators, alive as long as their bots

    def __call__(self, g: int, os_game: Any = None) -> Any:
        import pyspiel

        if g not in self.bots:
            sims, uct_c, rollouts, world_samples = self.settings
            s = _bot_seed(self.seed, int(self.ids[g]), g % self.R)
            if self.resampler == "honest":
                from open_spiel.python.algorithms import ismcts

                ev = _RandomRollouts(rollouts, s)
                final = ismcts.ISMCTSFinalPolicyType.MAX_VISIT_COUNT
                self.bots[g] = ismcts.ISMCTSBot(
                    os_game, ev, uct_c, sims, world_samples, np.random.RandomState(s), final
                )
            else:
                ev = pyspiel.RandomRolloutEvaluator(rollouts, s)
                self.keep.append(ev)
                final = pyspiel.ISMCTSFinalPolicyType.MAX_VISIT_COUNT
                self.bots[g] = pyspiel.ISMCTSBot(s, ev, uct_c, sims, world_samples, final, False, False)
        return self.bots[g]


class _RandomRollouts:
    """OpenSpiel's Python ``RandomRolloutEvaluator`` (uniform legal actions to the end, the mean returns over
    ``n`` rollouts; uniform priors), with Python's own generator instead of a NumPy call per action: the
    Python bot spent half its time there."""

    def __init__(self, n: int, seed: int) -> None:
        import random

        self.n, self.rng = n, random.Random(seed)

    def evaluate(self, state: Any) -> np.ndarray:
        total = np.zeros(state.num_players())
        rand = self.rng.random  # a third of a rollout's time went to randrange, for the same uniform choice
        for _ in range(self.n):
            w = state.clone()
            legal = w.legal_actions()
            while legal:  # a hand's bids and plays (no chance node after the deal); none at the end
                w.apply_action(legal[int(rand() * len(legal))])
                legal = w.legal_actions()
            total += w.returns()
        return total / self.n

    def prior(self, state: Any) -> list[tuple[int, float]]:
        legal = state.legal_actions()
        return [(a, 1.0 / len(legal)) for a in legal]


class _HonestWorlds:
    """Worlds for OpenSpiel's ISMCTS drawn only from what its seat knows, as our own searches draw them.

    Why: OpenSpiel's ``oh_hell`` ``ResampleFromInfostate`` deals the other
    seats a shuffle of the cards the real deal gave them, so every world it
    draws leaves out exactly the cards that were really left out of the deal
    (11 of the 41 a seat cannot see, at 4 players and 10 cards): the bot
    knows which cards are in play, which no player does. Here a world is one
    of ``agents.ismcts``'s determinizations for the seat (its own hand, the
    cards played, the hand sizes, the public void record, uniform otherwise),
    turned into an OpenSpiel state: that deal, then the hand's bids and plays
    so far. OpenSpiel's bot itself checks that the seat's information state
    is the same in every world it is given.
    """

    needs_public = True  # SeatDispatch keeps the public void record for it

    def __init__(self, game: Game, os_game: Any, seed: int, worlds: int, hand_size: int) -> None:
        from agents.ismcts import ISMCTSAgent

        sub_seed = int(np.random.SeedSequence([seed, 1]).generate_state(1)[0])  # not our agent's stream
        self.sampler = ISMCTSAgent(game, seed=sub_seed, sims=worlds)
        self.os_game, self.size, self.P = os_game, hand_size, game.players

    def resampler(self, s: Any, obs: np.ndarray, seat: int, public: dict | None) -> Callable[[Any, int], Any]:
        """The callback for the bot's decision at OpenSpiel state ``s`` (our observation ``obs`` of ``seat``):
        each call returns the next of the decision's worlds (in turn, round again if it asks for more)."""
        _, hands, _ = self.sampler.determinize(obs[None], np.array([seat]), public)
        history = s.full_history()
        start = 2 + self.P * self.size + 1  # the number of tricks, the dealer, the deal, the trump card
        dealer, trump_card = int(history[1].action), int(history[start - 1].action)
        played = np.zeros((self.P, hands.shape[3]), dtype=bool)
        for step in history[start:]:
            if step.action < played.shape[1]:  # a card (bids come after the 52 cards)
                played[step.player, step.action] = True
        dealt = hands[0] | played  # (worlds, P, 52): what each seat held before the first trick
        tail = [int(step.action) for step in history[start:]]
        # each world's actions from the start: the size, the dealer, the deal, the trump card, the hand so far
        deal = deal_order(dealt, self.size)  # (worlds, P * size)
        head, new_state = [self.size, dealer], self.os_game.new_initial_state
        turn = iter(range(1 << 62))

        def resample(state: Any, player: int) -> Any:
            world = new_state()
            for action in head + deal[next(turn) % deal.shape[0]].tolist() + [trump_card] + tail:
                world.apply_action(action)
            return world

        if resample(s, seat).information_state_string(seat) != s.information_state_string(seat):
            raise RuntimeError(f"the engines disagree: seat {seat}'s view in OpenSpiel is not our observation's")
        return resample


def _search(bots: _Bots, worlds: _HonestWorlds | None, seats: Any, g: int, s: Any, obs: np.ndarray, seat: int) -> int:
    """ISMCTS's move in game ``g`` at OpenSpiel state ``s`` (our observation ``obs`` of ``seat``), its worlds
    honest when ``worlds`` is given (from the public void record ``seats`` keeps)."""
    bot = bots(g, s.get_game())
    if worlds is not None:
        public = None if seats.tracker is None else seats.tracker.rows(np.array([g]))
        bot.set_resampler(worlds.resampler(s, obs, seat, public))
    return int(bot.step(s))


def play(
    agent_spec: str,
    deals: np.ndarray,
    seed: int = 7,
    sims: int = 1000,
    layout: str = "2v2",
    hand_size: int = 10,
    uct_c: float = 2.0,
    rollouts: int = 1,
    world_samples: int = -1,
    resampler: str = "honest",
) -> dict[str, Any]:
    """Play ``deals`` (deal ids) under every seating; per-deal differences and per-game scores.

    ``resampler``: how ISMCTS draws its worlds, ``honest`` (:class:`_HonestWorlds`)
    or ``openspiel`` (the game's own, which knows the cards left out of the deal).

    Returns ``diff`` (per deal: our mean hand score minus ISMCTS's, averaged
    over the seatings), ``scores`` (games x P hand scores, game ``d * R + r``
    is deal ``d`` under seating ``r``), ``seating`` (R, P; 0 = our agent,
    1 = ISMCTS), and decision counts and seconds of each side. Raises
    RuntimeError if the two engines ever disagree.
    """
    import pyspiel

    from agents.registry import make_agent
    from bobshat_env.games import make_game
    from bobshat_env.seating import SeatDispatch
    from train.evaluate.command import layout_specs
    from train.evaluate.duplicate import agent_names, make_seatings

    n_ours, _, n_theirs = layout.lower().partition("v")
    P = int(n_ours) + int(n_theirs) if n_ours.isdigit() and n_theirs.isdigit() else 0
    game = make_game("oh_hell", players=P if P else 4)
    _, base = agent_names(layout_specs(["ours", "ismcts"], layout, game.players))
    P, cfg = game.players, game.config
    if hand_size not in cfg.hand_sizes:
        raise ValueError(f"--hand-size {hand_size}: Oh Hell with {P} players deals 1 to {cfg.start_size} cards")
    hand_no = cfg.hand_sizes.index(hand_size)
    seatings = make_seatings(base)
    deals = np.asarray(deals, dtype=np.int64).reshape(-1)
    R, D = seatings.shape[0], deals.size
    n = R * D
    ids, seating = np.repeat(deals, R), np.tile(seatings, (D, 1))
    state, dealer, trump_card, hands = _deal(game, seed, ids, hand_no)
    agent = make_agent(agent_spec, game, seed=seed)
    os_game = pyspiel.load_game("oh_hell", {"players": P})
    os_states = [openspiel_state(os_game, hand_size, int(dealer[g]), hands[g], int(trump_card[g])) for g in range(n)]
    if resampler not in RESAMPLERS:
        raise ValueError(f"unknown resampler {resampler!r}; choose one of {', '.join(RESAMPLERS)}")
    bots = _Bots(seed, ids, R, sims, uct_c, rollouts, world_samples, resampler)
    worlds = _HonestWorlds(game, os_game, seed, sims, hand_size) if resampler == "honest" else None
    seats = SeatDispatch(game, n, [agent] if worlds is None else [agent, worlds])
    scores = np.zeros((n, P), dtype=np.int64)
    secs = {"ours": 0.0, "ismcts": 0.0}
    decisions = {"ours": 0, "ismcts": 0}
    active = np.ones(n, dtype=bool)
    while active.any():
        mask = game.legal_action_mask(state)
        obs = game.observe(state)
        seat = state.cur.astype(np.int64)
        who = seating[np.arange(n), seat]
        actions = np.zeros(n, dtype=np.int64)
        mine = np.nonzero(active & (who == 0))[0]
        if mine.size:
            t0 = time.perf_counter()
            actions[mine] = seats.act_rows(agent, obs, mask, seat, mine)
            secs["ours"] += time.perf_counter() - t0
            decisions["ours"] += int(mine.size)
        for g in np.nonzero(active)[0]:
            s = os_states[g]
            legal = np.flatnonzero(mask[g]).tolist()
            if s.current_player() != seat[g] or s.legal_actions() != legal:
                raise RuntimeError(
                    f"deal {ids[g]}, seating {g % R}: the engines disagree (seat {seat[g]} vs "
                    f"{s.current_player()}, legal {legal} vs {s.legal_actions()})"
                )
            if who[g] == 1:
                t0 = time.perf_counter()
                actions[g] = legal[0] if len(legal) == 1 else _search(bots, worlds, seats, g, s, obs[g], int(seat[g]))
                secs["ismcts"] += time.perf_counter() - t0
                decisions["ismcts"] += 1
            s.apply_action(int(actions[g]))
        seats.before_step(state, actions, active)
        res = game.step(state, actions, active=active, auto_deal=False, legal=mask)
        seats.after_step(res.new_hand)
        for g in np.nonzero(res.hand_done)[0]:
            if not os_states[g].is_terminal() or os_states[g].returns() != res.rewards[g].tolist():
                raise RuntimeError(
                    f"deal {ids[g]}, seating {g % R}: OpenSpiel's returns {os_states[g].returns()} "
                    f"are not our hand scores {res.rewards[g].tolist()}"
                )
            scores[g] = res.rewards[g]
        active &= ~res.hand_done
    ours = np.where(seating == 0, scores, 0).sum(1) / (seating == 0).sum(1)
    theirs = np.where(seating == 1, scores, 0).sum(1) / (seating == 1).sum(1)
    diff = (ours - theirs).reshape(D, R).mean(axis=1)
    return {"diff": diff, "scores": scores, "seating": seatings, "seconds": secs, "decisions": decisions}


def _whole(lo: int, hi: int, words: str) -> Callable[[str], int]:
    """An argparse type: a whole number from ``lo`` to ``hi`` (``words`` says the range in the message)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"want a whole number, got {text!r}") from None
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"want {words}, got {value}")
        return value

    return parse


_count = _whole(1, MAX_COUNT, "1 to 1,000,000")
_index = _whole(0, 2**62, "0 to 2**62")  # a deal id or a seed


def _uct(text: str) -> float:
    """An argparse type: ISMCTS's exploration constant, a finite number above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"want a number, got {text!r}") from None
    if not 0 < value < 1e6:
        raise argparse.ArgumentTypeError(f"want a number above 0 and below 1e6, got {text}")
    return value


def summary(args: argparse.Namespace, diffs: list[float], totals: dict[str, Any]) -> dict[str, Any]:
    """The JSON of a run so far: settings, per-deal differences, mean and CI, time per decision."""
    from train.evaluate.statistics import clean, mean_ci

    mean, ci = mean_ci(np.asarray(diffs))
    ms = {k: 1000 * totals["seconds"][k] / max(totals["decisions"][k], 1) for k in ("ours", "ismcts")}
    return clean(
        {
            "agent": args.agent,
            "opponent": f"open_spiel ISMCTSBot, {args.sims} simulations, uct_c {args.uct_c}, "
            f"{args.rollouts} random rollout(s), world samples {args.world_samples}"
            + (", honest worlds (Python port)" if args.resampler == "honest" else ""),
            "layout": args.layout,
            "hand_size": args.hand_size,
            "seed": args.seed,
            "first_deal": args.first_deal,
            "deals": len(diffs),
            "diff_per_hand": mean,
            "ci95": ci,
            "per_deal": diffs,
            "ms_per_decision": ms,
            "decisions": totals["decisions"],
            "seconds": totals["wall"],
        }
    )


# How ISMCTS draws its worlds (see _HonestWorlds); the first is the default.
RESAMPLERS = ("honest", "openspiel")

# The settings two parts must share to be one measurement.
SAME_SETTINGS = ("agent", "opponent", "layout", "hand_size", "seed")


def merge(parts: list[dict[str, Any]], names: list[str]) -> dict[str, Any]:
    """One result from the JSON of runs over disjoint deal ranges with the same settings (``--first-deal``).

    The per-deal differences are joined in deal order and the mean and CI
    computed again over all of them; ``deal_ranges`` lists the ``[first,
    count]`` runs of deals held (a merged result merges again), decisions and
    wall seconds are summed, and the time per decision is each side's total
    time over its total decisions. A part with other settings, or a deal in
    two parts, is a ValueError naming the files.
    """
    from train.evaluate.statistics import clean, mean_ci

    by_deal: dict[int, tuple[float, str]] = {}
    for part, name in zip(parts, names):
        missing = [
            k for k in (*SAME_SETTINGS, "first_deal", "per_deal", "ms_per_decision", "decisions") if k not in part
        ]
        if missing or len(part["per_deal"]) != part.get("deals"):
            raise ValueError(f"{name}: not a whole vs_ismcts result (missing {', '.join(missing) or 'deals'})")
        for key in SAME_SETTINGS:
            if part[key] != parts[0][key]:
                raise ValueError(f"{name}: {key} {part[key]!r} differs from {names[0]}'s {parts[0][key]!r}")
        ranges = [(int(first), int(n)) for first, n in part.get("deal_ranges", [[part["first_deal"], part["deals"]]])]
        held = sum(n for _, n in ranges)
        if held != len(part["per_deal"]) or any(first < 0 or n < 1 for first, n in ranges):  # before listing them
            raise ValueError(f"{name}: its deal_ranges hold {held} deals, its per_deal {len(part['per_deal'])}")
        ids = [d for first, n in ranges for d in range(first, first + n)]
        for deal, diff in zip(ids, part["per_deal"]):
            if not math.isfinite(float(diff)):  # NaN or inf: no mean to report
                raise ValueError(f"{name}: deal {deal}'s difference is {diff}, not a number of points")
            if deal in by_deal:
                raise ValueError(f"{by_deal[deal][1]} and {name} both hold deal {deal}: merge disjoint ranges")
            by_deal[deal] = (float(diff), name)
    ids = sorted(by_deal)
    diffs = [by_deal[d][0] for d in ids]
    runs = [[d, 1] for d in ids[:1]]
    for prev, deal in zip(ids, ids[1:]):
        if deal == prev + 1:
            runs[-1][1] += 1
        else:
            runs.append([deal, 1])
    mean, ci = mean_ci(np.asarray(diffs))
    sides = ("ours", "ismcts")
    decisions = {k: sum(int(p["decisions"][k]) for p in parts) for k in sides}
    spent = {k: sum(p["ms_per_decision"][k] * p["decisions"][k] for p in parts) for k in sides}
    return clean(
        {
            **{k: parts[0][k] for k in SAME_SETTINGS},
            "first_deal": ids[0] if ids else 0,
            "deals": len(diffs),
            "deal_ranges": runs,
            "diff_per_hand": mean,
            "ci95": ci,
            "per_deal": diffs,
            "ms_per_decision": {k: spent[k] / max(decisions[k], 1) for k in sides},
            "decisions": decisions,
            "seconds": sum(float(p.get("seconds", 0.0)) for p in parts),
        }
    )


def _merge_files(paths: list[str], out_path: str | None, p: argparse.ArgumentParser) -> int:
    """``--merge``: read, join, print one line and write ``--json``; a bad file is one line, exit 2."""
    parts = []
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                parts.append(json.load(f))
        except (OSError, ValueError) as err:
            p.error(f"--merge: cannot read {path}: {err}")
        if not isinstance(parts[-1], dict):
            p.error(f"--merge: {path}: not a vs_ismcts result")
    try:
        out = merge(parts, paths)
    except (ValueError, TypeError, KeyError) as err:
        p.error(f"--merge: {err}")
    if out_path:
        from bobshat_env.paths import OutputPathError

        try:
            _write(out_path, out)
        except OutputPathError as err:
            p.error(str(err))
    print(f"{out['agent']} vs {out['opponent']}: {_result(out)} over {out['deals']} deals from {len(paths)} files")
    return 0


def _write(path: str, out: dict[str, Any]) -> None:
    """``out`` as indented JSON, replacing ``path`` in one step (the one atomic writer)."""
    from bobshat_env.paths import replace_bytes

    replace_bytes(path, (json.dumps(out, indent=1) + "\n").encode())


def _result(out: dict[str, Any]) -> str:
    """``+0.123 ±0.045 per hand`` (no interval from one deal)."""
    ci = "" if out["ci95"] is None else f" ±{out['ci95']:.3f}"
    return f"{out['diff_per_hand']:+.3f}{ci} per hand"


# the flags of a measurement (``--merge`` refuses them)
PLAY_FLAGS: tuple[str, ...] = ("agent", "sims", "deals", "first_deal", "seed", "layout", "hand_size", "uct_c")
PLAY_FLAGS += ("rollouts", "world_samples", "chunk", "resampler")


def main(argv: list[str] | None = None) -> int:
    """Measure, print a line per chunk and the result; returns the exit status."""
    p = argparse.ArgumentParser(
        prog="python -m benchmarks.vs_ismcts",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--agent", default="ppo:checkpoints/oh_hell_4p.pt", help="our agent's spec (as in bobshat eval)")
    p.add_argument("--sims", type=_count, default=1000, help="ISMCTS simulations per decision")
    p.add_argument("--deals", type=_count, default=100)
    p.add_argument("--first-deal", type=_index, default=0, help="play deals FIRST .. FIRST + DEALS - 1")
    p.add_argument("--seed", type=_index, default=7)
    p.add_argument("--layout", default="2v2", help="our seats v ISMCTS's, e.g. 2v2, 1v3, 2v1 (players = the sum)")
    p.add_argument("--hand-size", type=_count, default=10)
    p.add_argument("--uct-c", type=_uct, default=2.0, help="ISMCTS's exploration constant")
    p.add_argument("--rollouts", type=_count, default=1, help="random rollouts per ISMCTS leaf")
    p.add_argument("--world-samples", type=int, default=-1, help="ISMCTS's worlds per decision (-1: no limit)")
    p.add_argument(
        "--resampler",
        choices=RESAMPLERS,
        default=RESAMPLERS[0],
        help="ISMCTS's worlds: honest (drawn from what its seat knows; OpenSpiel's Python bot, slower) or "
        "openspiel (the game's own ResampleFromInfostate, which knows the cards left out of the deal; C++ bot)",
    )
    p.add_argument("--chunk", type=_count, default=10, help="deals per batch (the JSON is rewritten after each)")
    p.add_argument("--json", default=None, help="write the result here")
    p.add_argument("--merge", nargs="+", metavar="FILE", help="join these results of disjoint deal ranges; no play")
    a = p.parse_args(argv)
    if a.world_samples != -1 and not 1 <= a.world_samples <= MAX_COUNT:
        p.error(f"--world-samples: want -1 or 1 to 1,000,000, got {a.world_samples}")
    if a.json:
        from bobshat_env.paths import OutputPathError, check_writable

        try:  # before the minutes of play, not after
            check_writable(a.json, "--json", regular=True)  # replaced whole per chunk: a FIFO would block
        except OutputPathError as err:
            p.error(str(err))
    if a.merge:
        played = [f"--{k.replace('_', '-')}" for k in PLAY_FLAGS if getattr(a, k) != p.get_default(k)]
        if played:  # the settings come from the files: a flag that would change them is a mistake, not a no-op
            p.error(f"--merge joins finished results and plays nothing: drop {', '.join(played)}")
        return _merge_files(a.merge, a.json, p)
    try:
        import pyspiel  # noqa: F401
    except ImportError:
        p.error("needs OpenSpiel: pip install open-spiel")
    from bobshat_env.paths import OutputPathError
    from train.runtime.pool import caused_by_interrupt, sigint_after_compiles, sigterm_as_exit

    diffs: list[float] = []
    out: dict[str, Any] = {}
    try:
        with sigterm_as_exit(), sigint_after_compiles():
            out = _run(a, p, diffs)
    except OutputPathError as err:  # the disk filled or the folder went: the last JSON written stays whole
        print(f"python -m benchmarks.vs_ismcts: error: {err}", file=sys.stderr)
        return 2
    except (KeyboardInterrupt, RuntimeError, SystemError) as err:  # Ctrl-C, or one a C call turned into its own error
        if not isinstance(err, KeyboardInterrupt) and not caused_by_interrupt(err):
            raise
        kept = f"; the {len(diffs)} deals finished are in {a.json}" if a.json and diffs else ""
        print(f"\npython -m benchmarks.vs_ismcts: interrupted{kept}", file=sys.stderr)
        return 130
    ms = out["ms_per_decision"]
    print(
        f"{a.agent} vs ISMCTS ({a.sims} simulations), {a.layout}, {a.hand_size}-card hands: {_result(out)} over "
        f"{out['deals']} deals (seed {a.seed}); ms per decision: ours {ms['ours']:.2f}, ISMCTS {ms['ismcts']:.2f}"
    )
    return 0


def _run(a: argparse.Namespace, p: argparse.ArgumentParser, diffs: list[float]) -> dict[str, Any]:
    """Play the deals chunk by chunk, appending to ``diffs`` and rewriting the JSON after each; the summary."""
    totals: dict[str, Any] = {"seconds": {"ours": 0.0, "ismcts": 0.0}, "decisions": {"ours": 0, "ismcts": 0}}
    t0 = time.perf_counter()
    out: dict[str, Any] = {}
    for start in range(a.first_deal, a.first_deal + a.deals, a.chunk):
        ids = np.arange(start, min(a.first_deal + a.deals, start + a.chunk))
        try:
            res = play(
                a.agent, ids, a.seed, a.sims, a.layout, a.hand_size, a.uct_c, a.rollouts, a.world_samples, a.resampler
            )
        except (ValueError, FileNotFoundError) as err:  # a bad spec, layout, hand size or checkpoint: one line
            p.error(str(err))
        diffs.extend(res["diff"].tolist())
        for k in ("seconds", "decisions"):
            for side in ("ours", "ismcts"):
                totals[k][side] += res[k][side]
        totals["wall"] = time.perf_counter() - t0
        out = summary(a, diffs, totals)
        if a.json:
            _write(a.json, out)
        print(f"{len(diffs)} deals: {_result(out)}; {totals['wall']:.0f} s", file=sys.stderr, flush=True)
    return out


if __name__ == "__main__":
    sys.exit(main())
