"""Benchmarking bidding strategies: regret against hindsight and information-set oracles.

``bobshat bids --bidders random,simple,strong`` runs this module; ``--suite v1``
runs the versioned benchmark of the README's leaderboard.

What is measured
    Each *bidder* (any agent spec; only its bidding decisions are used: the
    bids, and the dealer's hat choice in Where's Bob's Hat?) plays ``deals``
    whole games. In game ``d`` it sits in seat ``d % P`` and every other
    seat, and every card of every seat, is played by one fixed agent, the
    *play policy* (``--play``; it also makes the other seats' bids). Deal
    ``d`` has the key ``rng.game_keys(seed, d)``, the key of deal ``d`` of
    ``bobshat eval`` and of game ``d`` of ``simulate``, so every bidder meets
    the same cards in the same seat (duplicate play), against the same field.
    The games run in the arena's loop (:func:`agents.arena.play_games`, as
    every tournament does), the bidder's seat held by a ``bid=BIDDER+play=PLAY``
    composite agent; a per-step observer keeps the bidder's decisions.

Oracles (one value per legal alternative of every bidding decision)
    *hindsight*: the actual deal (all hands known); *information set*: the
    mean over ``worlds`` (K) deals of the hidden cards drawn uniformly among
    those consistent with what the bidder saw (its hand, the trump, the hat,
    the bids before it: :func:`bobshat_env.core.resample.sample_hands`). The
    value of an alternative is the bidder's own score for the hand (objective
    ``score``; ``margin``: its score minus the other seats' mean, what a game
    is won on; both come from the same playouts) when it takes that
    alternative and the hand is then played out to its end by the play
    policy: every later bid of the other seats by the play policy (reacting
    to the alternative, as it would at the table; Oh Hell's hook stays
    legal), every card by the play policy. A hat choice is valued with the
    dealer's own bid as the bidder actually made it. All playouts of a chunk
    of decisions (alternatives x worlds x playouts) run as one batch on the
    batched core (``max_rows`` rows at most). A deterministic play policy
    (greedy ``ppo:``, ``strong``, ``simple``) gets one playout per world; a
    sampling one (``random``, ``ppo:...,sample=true``, ``pimc``) ``playouts``
    (default 8), averaged. With a deterministic play policy the hindsight
    value of the alternative chosen is exactly what the hand scored (a test
    checks it).

    A decision's *regret* is the value of the best alternative minus that of
    the one chosen (>= 0), for each oracle and objective. The objectives
    differ most on the hat: for the dealer's own score the +10 hat is nearly
    always the better one (a hat counts only for whoever holds it), while a
    -10 hat that ends with an opponent is worth 10 / (P - 1) of margin. A
    bidder's regret per hand is the sum over its decisions in the hand (the
    bid, and the hat choice when it deals) averaged over hands; 95%
    confidence intervals (Student t) are over deals, each deal's hands
    averaged first. Caveats: the information-set worlds are uniform over
    consistent deals, not weighted by how likely the earlier bids made them
    (the usual PIMC simplification), and with secret bidding the worlds keep
    the earlier seats' bids as made; with K worlds the estimated best value
    is biased up by noise, so information-set regrets are slightly high
    (less so as K grows). Hindsight regret with a deterministic play policy
    has no such noise.

Reproducibility
    Deals are split into chunks of ``batch_size`` games (at most a quarter of
    the deals); each (chunk, bidder) builds its agents and its world sampler
    from ``(seed, chunk, bidder spec)``, so a bidder's numbers do not depend
    on which other bidders are in the run or on ``workers``.

JSON schema (``--json``; :func:`report_json` builds it)::

    {
      "schema": "bobshat.bids/1",
      "suite": "v1" | null,
      "tables": [{                                   # one per game (the v1 suite has two)
        "game": "bobs_hat" | "oh_hell",
        "config": {...game options...},
        "play": str,                                 # the play policy's spec
        "play_sha256": str | null,                   # of a ppo: checkpoint file
        "seed": int, "deals": int, "worlds": int, "playouts": int,
        "hands_per_game": int, "batch_size": int,
        "bidders": [{
          "name": str,                               # the bidder's spec ("shipped": the table's checkpoint)
          "hands": int, "decisions": {"bid": int, "hat": int},
          "score_per_hand": float, "ci95": float,    # the bidder's own hand score
          "margin_per_hand": float, "margin_ci95": float,   # its score minus the other seats' mean
          "regret": {"score" | "margin": {"hindsight" | "info_set": {
              "per_hand": float, "ci95": float,      # points per hand, >= 0
              "bid": float, "bid_ci95": float,       # per bid decision
              "hat": float | null, "hat_ci95": float | null,   # per hat choice (Bob's Hat)
              "zero_share": float}}},                # share of decisions with regret 0 (a best choice)
          "made_rate": float,                        # Bob's Hat: bid cards made / bid cards;
                                                     # Oh Hell: hands with tricks == bid
          "bid_distribution": {"<bid>": float, ...}, # share of hands; Bob's Hat "most_blue+fewest",
                                                     # "none" (no-bid); Oh Hell "0".."10"
          "calibration": {...}                       # see below
        }, ...],
        "pairwise": [{"a": str, "b": str,            # a minus b, paired over deals
                      "score_diff": float, "ci95": float,    # score per hand
                      "hindsight_regret_diff": float, "hindsight_ci95": float,   # regret per hand (score)
                      "info_set_regret_diff": float, "info_set_ci95": float}, ...],
        "run": {"seconds": float, "bidding_decisions": int, "playouts": int,
                "playout_decisions": int, "seconds_per_decision": float, "workers": int}
      }, ...]
    }

``calibration`` for Where's Bob's Hat? (``p`` = the information-set oracle's
chance that a bid is made: the share of its worlds where it was)::

    {"types": {"most_blue" | "most_red" | "most_black" | "fewest" | "double_fewest":
                 {"rate": float,                     # share of hands with this bid card
                  "success": float | null,           # actual share made, when bid
                  "predicted": float | null,         # mean p of the bids made, when bid
                  "predicted_alone": float,          # mean p of bidding this card alone, every hand
                  "points": float | null}},          # mean points of the bid card, when bid
     "curve": {"edges": [0, ..., 1],                 # bins of p of the card bid alone (one per j / K
                                                     # with K <= 10 worlds, else ten)
               "n": [int], "p": [float|null],        # cards in the bin, their mean p
               "bid_share": [float|null],            # share of them bid
               "success": [float|null]},             # share of those bids made
     "hat": {"decisions": int, "chose_plus": float | null,
             "score" | "margin": {                   # oracle value of the hat chosen minus the other one
                 "hindsight": float | null, "hindsight_ci95": float | null,
                 "info_set": float | null, "info_set_ci95": float | null}}}

``calibration`` for Oh Hell (``seat_from_dealer``: 0 the dealer, who bids
last; 1 the dealer's left, who bids first)::

    {"exact_rate": float, "mean_bid": float, "mean_taken": float,
     "over_under": float,                            # mean tricks taken minus bid
     "by_hand_size": {"<size>": ROW, ...}, "by_seat_from_dealer": {"<k>": ROW, ...},
     "curve": {"bid": [0..10], "hands": [int], "mean_taken": [float|null],
               "info_set_taken": [float|null]}}      # tricks the oracle expected after that bid
    ROW = {"hands": int, "mean_bid": float, "mean_taken": float, "over_under": float,
           "exact_rate": float, "oracle_bid": float}  # oracle_bid: mean best bid of the info-set oracle
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
import zlib
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from agents import make_agent
from agents.arena import play_games
from agents.registry import split_specs
from bobshat_env.config import ConfigError
from bobshat_env.core import bobs_hat as bh
from bobshat_env.core import oh_hell as oh
from bobshat_env.core import rng
from bobshat_env.core.resample import sample_hands
from bobshat_env.games import Game, describe, load, make_game
from bobshat_env.paths import replace_bytes, save_figure
from bobshat_env.seating import SeatDispatch

from .evaluate import _clean, line_style, mean_ci
from .pool import map_chunks, sigterm_as_exit
from .progress import ProgressBar

SCHEMA = "bobshat.bids/1"
BH_TYPES = ("most_blue", "most_red", "most_black", "fewest", "double_fewest")
OBJECTIVES = ("score", "margin")
SAMPLING_PLAYOUTS = 8  # playouts per world and alternative with a sampling play policy
SHIPPED = "shipped"  # the bidder spec of a table's shipped checkpoint
ROOT = Path(__file__).resolve().parents[1]

# The versioned benchmarks. A suite fixes every setting but the bidders, so two people's numbers compare;
# the play policy is the shipped checkpoint of the table (recorded, with its SHA-256, in the JSON).
SUITES: dict[str, dict[str, Any]] = {
    "v1": {
        "tables": [
            {"game": "bobs_hat", "options": {"players": 4}},
            {"game": "oh_hell", "options": {"players": 4}},
        ],
        "deals": 40,
        "seed": 16,
        "worlds": 8,
        "playouts": 1,
        "batch_size": 10,
    }
}


# ==========================================================================
# What differs between the games: the class each game's description names (``bid_oracle``:
# :class:`BobsHatOracle`, :class:`OhHellOracle`, at the end of this module); everything else asks the Game.
def _kind(game_name: str) -> Any:
    return load(describe(game_name).bid_oracle)


def _bh_cards(
    cfg: Any, code: np.ndarray, taken: np.ndarray, size: np.ndarray, seat: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Each bid card of seat ``seat``'s bid ``code``, per card of ``BH_TYPES``: (n, 5) made flags
    (1 made, 0 missed, -1 not bid) and (n, 5) points.

    Each card is scored alone by the engine's own scoring (made = it scores
    more than 0), so the rule keeps one implementation.
    """
    n = code.shape[0]
    P = taken.shape[1]
    rows = np.arange(n)
    code = code.astype(np.int64)
    parts = [np.where((code >> i) & 1, 1 << i, 0) for i in range(3)]
    parts += [np.where(code // 8 == 1, 8, 0), np.where(code // 8 == 2, 16, 0)]
    made = np.full((n, len(BH_TYPES)), -1, dtype=np.int8)
    points = np.zeros((n, len(BH_TYPES)), dtype=np.int64)
    no_hat, centre = np.zeros(n, dtype=np.int64), np.full(n, -1, dtype=np.int64)
    for t, part in enumerate(parts):
        bids = np.zeros((n, P), dtype=np.int64)
        bids[rows, seat] = part
        points[:, t] = bh.score_hand(cfg, bids, taken, no_hat, centre, size)[rows, seat]
        made[:, t] = np.where(part > 0, (points[:, t] > 0).astype(np.int8), -1)
    return made, points


# ==========================================================================
# Agents
def shipped_play(game: Game) -> str:
    """The play policy a table gets by default: its shipped checkpoint if there is one, else ``strong``."""
    path = ROOT / "checkpoints" / f"{game.name}_{game.players}p.pt"
    return f"ppo:{path}" if path.is_file() else "strong"


def resolve_bidder(spec: str, game: Game) -> str:
    """A bidder spec as an agent spec: ``shipped`` names the table's shipped checkpoint (so one
    ``--bidders`` list fits both games of a suite); anything else is itself."""
    if spec != SHIPPED:
        return spec
    play = shipped_play(game)
    if not play.startswith("ppo:"):
        raise ValueError(f"bidder 'shipped': no shipped policy for {game.name} with {game.players} players")
    return play


def _display(spec: str) -> str:
    """A spec as reports write it: a path inside the project relative to its root."""
    name, sep, rest = spec.partition(":")
    if name == "ppo" and sep:
        path, comma, opts = rest.partition(",")
        try:
            path = Path(path).resolve().relative_to(ROOT).as_posix()
        except ValueError:
            pass
        return f"ppo:{path}{comma}{opts}"
    return spec


def _sha256(spec: str) -> str | None:
    name, sep, rest = spec.partition(":")
    if name != "ppo" or not sep:
        return None
    path = Path(rest.split(",")[0])
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def _is_sampling(agent: Any) -> bool:
    """Whether an agent's decisions are random draws (several playouts then average them out)."""
    from agents.base import RandomAgent  # noqa: PLC0415
    from agents.pimc import PIMCAgent  # noqa: PLC0415

    if hasattr(agent, "bid") and hasattr(agent, "play"):  # a composite agent
        return _is_sampling(agent.bid) or _is_sampling(agent.play)
    return isinstance(agent, (RandomAgent, PIMCAgent)) or bool(getattr(agent, "sample", False))


def _make(spec: str, game: Game, seed: int, role: str) -> Any:
    try:
        return make_agent(spec, game, seed=seed)
    except ValueError as err:
        raise ValueError(f"{role} {_display(spec)!r}: {err}") from err


def _seed(seed: int, chunk: int, spec: str, role: int) -> int:
    ss = np.random.SeedSequence([rng.seed_to_base(seed), chunk, zlib.crc32(spec.encode()), role])
    return int(ss.generate_state(1, np.uint32)[0])


def _concat(states: list[Any]) -> Any:
    return type(states[0])(**{f.name: np.concatenate([getattr(s, f.name) for s in states]) for f in fields(states[0])})


# ==========================================================================
# One chunk: the bidder's games, then the oracles of all its decisions
@dataclass
class _Chunk:
    index: int
    d0: int
    d1: int
    game_name: str
    config: Any
    bidder: str  # the name in the report (seeds derive from it)
    spec: str  # the agent spec it resolves to
    play: str
    seed: int
    worlds: int
    playouts: int | None
    max_rows: int


@dataclass
class _Decisions:
    """Every bidding decision of one bidder in a chunk, with both oracles' values (arrays of one length n)."""

    deal: np.ndarray  # (n,) deal index
    hand: np.ndarray  # (n,) 0-based hand number
    size: np.ndarray  # (n,) cards per player
    from_dealer: np.ndarray  # (n,) (seat - dealer) % P
    is_hat: np.ndarray  # (n,) bool: the dealer's hat choice (else a bid)
    chosen: np.ndarray  # (n,) action id
    score: np.ndarray  # (n,) the hand's actual score for the bidder
    margin: np.ndarray  # (n,) its score minus the other seats' mean
    q_hind: np.ndarray  # (n, A) hindsight value (score) of each bid/hat action (NaN: illegal)
    q_info: np.ndarray  # (n, A) information-set value (score)
    m_hind: np.ndarray  # (n, A) hindsight value (margin)
    m_info: np.ndarray  # (n, A) information-set value (margin)
    extra: dict[str, np.ndarray]  # game-specific: made flags, tricks (see _outcome)

    @staticmethod
    def concat(parts: list[_Decisions]) -> _Decisions:
        kw = {
            f.name: np.concatenate([getattr(p, f.name) for p in parts]) for f in fields(_Decisions) if f.name != "extra"
        }
        extra = {k: np.concatenate([p.extra[k] for p in parts]) for k in parts[0].extra}
        return _Decisions(**kw, extra=extra)


@dataclass
class _ChunkResult:
    index: int
    bidder: str
    dec: _Decisions
    playouts: int
    playout_decisions: int
    oracle_seconds: float
    sampling_play: bool


def _outcome(game: Game, state: Any, g: np.ndarray, seat: np.ndarray) -> dict[str, np.ndarray]:
    """What a finished hand says about seat ``seat`` of games ``g``: its score, bid and bid outcomes."""
    pts = state.last_scores[g].astype(np.float64)
    out = {"score": pts[np.arange(g.size), seat], "margin": _margin(pts, seat)}
    out.update(_kind(game.name).hand_facts(game, state, g, seat))
    return out


def _margin(points: np.ndarray, seat: np.ndarray) -> np.ndarray:
    """(n,) seat ``seat``'s points minus the mean of the other seats' (points: (n, P))."""
    own = points[np.arange(points.shape[0]), seat]
    return own - (points.sum(axis=1) - own) / (points.shape[1] - 1)


class _BidWatcher:
    """The arena's per-step observer (its recorder interface) that keeps what the oracles need.

    After every step the state is the one the next step acts on, so it copies
    the games whose next decision is the bidder's hat choice or bid (and
    learns the choice at the next step), and the games whose next card ends
    the hand: that last step is replayed on the copy without dealing the next
    hand, so the hand's final state (cards or tricks taken, bids, scores)
    is read from the engine itself.
    """

    def __init__(self, game: Game, state: Any, tested: np.ndarray) -> None:
        self.game, self.tested = game, tested
        self.snaps: list[Any] = []
        self.rec: dict[str, list[np.ndarray]] = {k: [] for k in ("row", "hand", "chosen", "legal")}
        self.outcomes: dict[str, np.ndarray] = {}
        self._look(state)

    def _look(self, state: Any) -> None:
        mod, P = self.game.module, self.game.players
        live = state.phase < mod.DEAL
        mask = self.game.legal_action_mask(state)
        bidding = live & ~mask[:, : mod.N_CARDS].any(axis=1) & (state.cur == self.tested)
        self.dec_rows = np.nonzero(bidding)[0]
        self.dec_state = state.take(self.dec_rows)
        self.dec_legal = mask[self.dec_rows, mod.N_CARDS :]
        size = np.asarray(state.hand_size)
        ending = live & (state.phase == mod.PLAY) & (state.n_in_trick == P - 1) & (state.tricks_done == size - 1)
        self.end_rows = np.nonzero(ending)[0]
        self.end_state = state.take(self.end_rows)

    def observe_step(self, before: Any, actions: np.ndarray, active: Any, res: Any, state: Any) -> None:
        if self.dec_rows.size:
            self.snaps.append(self.dec_state)
            self.rec["row"].append(self.dec_rows)
            self.rec["hand"].append(self.dec_state.hand_no.astype(np.int64))
            self.rec["chosen"].append(np.asarray(actions)[self.dec_rows])
            self.rec["legal"].append(self.dec_legal)
        done = np.nonzero(np.asarray(res.hand_done))[0]
        if done.size:
            if not np.isin(done, self.end_rows).all():
                raise RuntimeError("a hand ended where its last card was not expected; please report this")
            pick = np.isin(self.end_rows, done)
            end = self.end_state.take(pick)
            rows, hand = self.end_rows[pick], end.hand_no.astype(np.int64)
            self.game.step(end, np.asarray(actions)[rows], auto_deal=False)  # the hand's last card, no new deal
            for k, v in _outcome(self.game, end, np.arange(rows.size), self.tested[rows]).items():
                if k not in self.outcomes:
                    self.outcomes[k] = np.zeros((self.tested.size, self.game.config.hands) + v.shape[1:], v.dtype)
                self.outcomes[k][rows, hand] = v
        self._look(state)

    def records(self) -> list[dict]:
        return []


def _play_chunk(ch: _Chunk) -> _ChunkResult:
    """Play the chunk's games with the bidder in one seat, then value all its decisions (module level: workers)."""
    from agents.composite import CompositeAgent  # noqa: PLC0415

    game = make_game(ch.game_name, config=ch.config)
    kind, mod, P = _kind(game.name), game.module, game.players
    bidder = _make(ch.spec, game, _seed(ch.seed, ch.index, ch.bidder, 0), "bidder")
    play = _make(ch.play, game, _seed(ch.seed, ch.index, ch.bidder, 1), "--play")
    deals = np.arange(ch.d0, ch.d1)
    n = deals.size
    tested = deals % P
    # The arena's loop: the bidder's seat is a bid=bidder+play=play agent, every other seat the play policy.
    seating = np.ones((n, P), dtype=np.int64)
    seating[np.arange(n), tested] = 0
    watcher: list[_BidWatcher] = []

    def factory(g: Game, state: Any, ids: np.ndarray) -> _BidWatcher:
        watcher.append(_BidWatcher(g, state, tested[ids]))
        return watcher[-1]

    agents = [CompositeAgent(game, bidder, play, name=ch.bidder), play]
    keys = rng.game_keys(ch.seed, deals, 0)  # deal d of a tournament (train.evaluate.play_duplicate)
    play_games(game, agents, n, batch_size=max(n, 1), recorder_factory=factory, keys=keys, seating=seating)
    (w,) = watcher
    snaps, rec, outcomes = w.snaps, w.rec, w.outcomes
    base = _concat(snaps)
    row, hand = np.concatenate(rec["row"]), np.concatenate(rec["hand"])
    chosen, legal = np.concatenate(rec["chosen"]), np.concatenate(rec["legal"])
    is_hat = np.isin(chosen, kind.hat_actions)
    # A hat choice is valued with the dealer's own bid as it was made: its next decision in the same hand.
    follow = np.full(chosen.shape[0], -1, dtype=np.int64)
    if is_hat.any():
        bid_of = {(r, h): a for r, h, a in zip(row[~is_hat].tolist(), hand[~is_hat].tolist(), chosen[~is_hat].tolist())}
        follow[is_hat] = [bid_of[(r, h)] for r, h in zip(row[is_hat].tolist(), hand[is_hat].tolist())]
    gen = np.random.default_rng(_seed(ch.seed, ch.index, ch.bidder, 2))
    t0 = time.perf_counter()
    sampling = _is_sampling(play)
    n_play = (ch.playouts or SAMPLING_PLAYOUTS) if sampling else 1
    oracle = _oracle(game, play, base, legal, follow, tested[row], ch.worlds, n_play, gen, ch.max_rows)
    seconds = time.perf_counter() - t0
    size = np.asarray(base.hand_size).astype(np.int64)
    extra = {k: v[row, hand] for k, v in outcomes.items() if k not in ("score", "margin")}
    extra.update(kind.from_oracle(oracle["facts"], legal, chosen - mod.N_CARDS))
    dec = _Decisions(
        deal=deals[row],
        hand=hand,
        size=size,
        from_dealer=(tested[row] - base.dealer.astype(np.int64)) % P,
        is_hat=is_hat,
        chosen=chosen,
        score=outcomes["score"][row, hand],
        margin=outcomes["margin"][row, hand],
        q_hind=oracle["q_hind"],
        q_info=oracle["q_info"],
        m_hind=oracle["m_hind"],
        m_info=oracle["m_info"],
        extra=extra,
    )
    return _ChunkResult(ch.index, ch.bidder, dec, oracle["playouts"], oracle["steps"], seconds, sampling)


def _rollout(game: Game, play: Any, st: Any, forced: np.ndarray) -> int:
    """Play rows of ``st`` (changed in place) to the end of their hand: ``forced[:, k]`` in turn
    (-1: none), then the play policy for every seat and decision. Returns the decisions played."""
    mod = game.module
    R = st.batch_size
    steps = 0
    seats = SeatDispatch(game, R, [play])  # no card has been played yet: an empty void record
    for k in range(forced.shape[1]):
        act = forced[:, k]
        active = (act >= 0) & (st.phase < mod.DEAL)
        if active.any():
            game.step(st, np.where(active, act, 0), active=active, auto_deal=False)
            steps += int(active.sum())
    live = st.phase < mod.DEAL
    while live.any():
        mask = game.legal_action_mask(st)
        obs = game.observe(st)
        seat = st.cur.astype(np.int64)
        rows = np.nonzero(live)[0]
        actions = np.zeros(R, dtype=np.int64)
        actions[rows] = seats.act_rows(play, obs, mask, seat, rows)
        seats.before_step(st, actions, live)
        res = game.step(st, actions, active=live, auto_deal=False, legal=mask)
        seats.after_step(res.new_hand)
        steps += rows.size
        live = st.phase < mod.DEAL
    return steps


def _oracle(
    game: Game,
    play: Any,
    base: Any,
    legal: np.ndarray,
    follow: np.ndarray,
    seat: np.ndarray,
    K: int,
    n_play: int,
    gen: np.random.Generator,
    max_rows: int,
) -> dict[str, Any]:
    """Both oracles' values of every legal alternative of the decisions ``base`` (one state per decision).

    legal: (n, A) the legal bid/hat actions (offset ``N_CARDS``);
    follow: (n,) the bidder's own next action to force after the alternative (a hat choice's bid), -1
    none; seat: (n,) the bidder's seat.
    World 0 is the actual deal; worlds 1..K are drawn from what the bidder saw. Returns the values
    (``q_*``: score, ``m_*``: margin) and ``facts``: the information-set mean of each of the game's
    playout facts (``playout_facts``), (n, A, ...).
    """
    mod = game.module
    n, A = legal.shape
    P = game.players
    # The worlds: hidden hands drawn from the bidder's own observation (no card has been played yet).
    pub, counts, unseen = game.public_state(game.observe(base), seat)
    void = np.zeros((n, P, game.deck.n_suits), dtype=bool)
    own = base.hands[np.arange(n), seat]
    worlds = sample_hands(own, seat, unseen, counts, void, game.deck, K, gen)  # (n, K, P, N)
    # Rows: (decision, world 0..K, alternative, playout), flat; sorted by hand size so batches end together.
    dec_i, alt = np.nonzero(legal)
    W = K + 1
    dec_i = np.repeat(dec_i, W * n_play)
    alt = np.repeat(alt, W * n_play)
    world = np.tile(np.repeat(np.arange(W), n_play), legal.sum())
    order = np.argsort(np.asarray(base.hand_size)[dec_i], kind="stable")
    dec_i, alt, world = dec_i[order], alt[order], world[order]
    total = dec_i.size
    score = np.zeros(total)
    margin = np.zeros(total)
    facts: dict[str, np.ndarray] = {}
    kind = _kind(game.name)
    steps = 0
    for lo in range(0, total, max_rows):
        sl = slice(lo, min(total, lo + max_rows))
        d, w = dec_i[sl], world[sl]
        st = base.take(d)
        hidden = w > 0
        st.hands[hidden] = worlds[d[hidden], w[hidden] - 1]
        forced = np.stack([alt[sl] + mod.N_CARDS, follow[d]], axis=1)
        steps += _rollout(game, play, st, forced)
        r = np.arange(d.size)
        pts = st.last_scores.astype(np.float64)
        score[sl] = pts[r, seat[d]]
        margin[sl] = _margin(pts, seat[d])
        for k, v in kind.playout_facts(game, st, seat[d]).items():
            v = v.reshape(d.size, -1).astype(np.float64)
            facts.setdefault(k, np.zeros((total, v.shape[1])))[sl] = v
    # Means per (decision, alternative, world) over playouts, then per oracle.
    key = (dec_i * A + alt) * W + world
    cnt = np.bincount(key, minlength=n * A * W).reshape(n, A, W)

    def mean_of(values: np.ndarray) -> np.ndarray:
        s = np.bincount(key, weights=values, minlength=n * A * W).reshape(n, A, W)
        with np.errstate(invalid="ignore"):
            return s / cnt

    q, m = mean_of(score), mean_of(margin)
    out: dict[str, Any] = {"q_hind": q[..., 0], "q_info": q[..., 1:].mean(axis=2), "playouts": total, "steps": steps}
    out["m_hind"], out["m_info"] = m[..., 0], m[..., 1:].mean(axis=2)

    def info_mean(v: np.ndarray) -> np.ndarray:  # (total, m) -> (n, A, m): mean over the K worlds
        return np.stack([mean_of(v[:, j])[..., 1:].mean(axis=2) for j in range(v.shape[1])], axis=-1)

    out["facts"] = {k: info_mean(v) for k, v in facts.items()}
    return out


def decision_values(
    game: Game,
    state: Any,
    play: str | Any,
    worlds: int = 8,
    seed: int = 0,
    playouts: int | None = None,
    follow: np.ndarray | None = None,
    max_rows: int = 16384,
    objective: str = "score",
) -> tuple[np.ndarray, np.ndarray]:
    """Both oracles' values of every action of the bidding decisions in ``state`` (not changed).

    ``state``: B games, each at a hat choice or bid of its seat to act.
    ``play``: the play policy (a spec or an agent). ``follow``: (B,) the
    acting seat's own next action to force after the alternative (how a hat
    choice is valued with the dealer's bid as made), -1 none. Returns
    (hindsight, information set) values, (B, n_actions) each, NaN where the
    action is illegal: the seat's score for the hand after that action, or
    with ``objective="margin"`` its score minus the other seats' mean.
    """
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {', '.join(OBJECTIVES)}, got {objective!r}")
    if isinstance(worlds, bool) or not isinstance(worlds, (int, np.integer)) or worlds < 1:
        raise ValueError(f"worlds must be an integer >= 1, got {worlds!r}")
    mod = game.module
    mask = game.legal_action_mask(state)
    if mask[:, : mod.N_CARDS].any():
        raise ValueError("decision_values() needs bidding decisions (a hat choice or a bid) in every game")
    agent = _make(play, game, seed, "--play") if isinstance(play, str) else play
    n_play = (playouts or SAMPLING_PLAYOUTS) if _is_sampling(agent) else 1
    B = state.batch_size
    follow = np.full(B, -1, dtype=np.int64) if follow is None else np.asarray(follow, dtype=np.int64).reshape(B)
    gen = np.random.default_rng(seed)
    out = _oracle(
        game, agent, state.copy(), mask[:, mod.N_CARDS :], follow, state.cur.astype(np.int64), worlds, n_play, gen,
        max_rows,
    )  # fmt: skip
    pad = np.full((B, mod.N_CARDS), np.nan)
    hind, info = (out["q_hind"], out["q_info"]) if objective == "score" else (out["m_hind"], out["m_info"])
    return np.concatenate([pad, hind], axis=1), np.concatenate([pad, info], axis=1)


# ==========================================================================
# Reports
def _per_deal(values: np.ndarray, deal: np.ndarray, deals: int, weight: np.ndarray | None = None) -> np.ndarray:
    """(deals,) the weighted sum of ``values`` per deal over the weight's sum per deal (NaN where none)."""
    w = np.ones(values.shape[0]) if weight is None else np.asarray(weight, dtype=np.float64)
    s = np.bincount(deal, weights=values * w, minlength=deals)
    c = np.bincount(deal, weights=w, minlength=deals)
    with np.errstate(invalid="ignore", divide="ignore"):
        return s / c


def _ci(x: np.ndarray) -> tuple[float, float]:
    x = x[~np.isnan(x)]
    return mean_ci(x) if x.size else (math.nan, math.nan)


def _ratio(num: float, den: float) -> float | None:
    return float(num) / float(den) if den else None


def regrets(q: np.ndarray, chosen: np.ndarray, offset: int) -> np.ndarray:
    """(n,) value of the best legal alternative minus that of the one chosen (>= 0; q is NaN where illegal)."""
    return np.nanmax(q, axis=1) - q[np.arange(q.shape[0]), chosen - offset]


def _regret_report(dec: _Decisions, q: np.ndarray, offset: int, deals: int) -> tuple[dict, np.ndarray]:
    r = regrets(q, dec.chosen, offset)
    is_bid = ~dec.is_hat
    per_hand = np.bincount(dec.deal, weights=r, minlength=deals) / np.maximum(
        np.bincount(dec.deal, weights=is_bid.astype(np.float64), minlength=deals), 1
    )
    m, ci = _ci(per_hand)
    bm, bci = _ci(_per_deal(r, dec.deal, deals, is_bid))
    hm, hci = _ci(_per_deal(r, dec.deal, deals, dec.is_hat)) if dec.is_hat.any() else (None, None)
    report = {
        "per_hand": m, "ci95": ci, "bid": bm, "bid_ci95": bci, "hat": hm, "hat_ci95": hci,
        "zero_share": float(np.mean(r <= 1e-9)),
    }  # fmt: skip
    return report, per_hand


def curve_edges(worlds: int) -> np.ndarray:
    """Bins of the information-set chance of a bid: with K <= 10 worlds one bin around each of the
    K + 1 values it can take (j / K), else ten equal bins."""
    if worlds > 10:
        return np.linspace(0.0, 1.0, 11)
    return np.concatenate([[0.0], (np.arange(1, worlds + 1) - 0.5) / worlds, [1.0]])


def _bh_calibration(dec: _Decisions, deals: int, worlds: int) -> dict:
    b = ~dec.is_hat
    made, pred, alone = dec.extra["made"][b], dec.extra["pred"][b], dec.extra["p_alone"][b]
    points = dec.extra["points"][b]
    types = {}
    for t, name in enumerate(BH_TYPES):
        has = made[:, t] >= 0
        if name == "double_fewest" and np.all(np.isnan(alone[:, t])):
            continue  # the option is off
        types[name] = {
            "rate": float(has.mean()) if has.size else None,
            "success": _ratio((made[has, t] == 1).sum(), has.sum()),
            "predicted": float(pred[has, t].mean()) if has.any() else None,
            "predicted_alone": float(np.nanmean(alone[:, t])) if has.size else None,
            "points": float(points[has, t].mean()) if has.any() else None,
        }
    # The curve: for every hand and card, the chance of making the card bid alone against whether it was bid.
    p = alone[:, : len(types)].reshape(-1)
    bid = (made[:, : len(types)] >= 0).reshape(-1)
    ok = (made[:, : len(types)] == 1).reshape(-1)
    keep = ~np.isnan(p)
    p, bid, ok = p[keep], bid[keep], ok[keep]
    edges = curve_edges(worlds)
    n_bins = len(edges) - 1
    k = np.clip(np.digitize(p, edges[1:-1]), 0, n_bins - 1)
    nb = np.bincount(k, minlength=n_bins)
    nbid = np.bincount(k, weights=bid, minlength=n_bins)
    nok = np.bincount(k, weights=bid & ok, minlength=n_bins)
    psum = np.bincount(k, weights=p, minlength=n_bins)
    curve = {
        "edges": edges.round(4).tolist(),
        "n": nb.tolist(),
        "p": [_ratio(x, y) for x, y in zip(psum, nb)],
        "bid_share": [_ratio(x, y) for x, y in zip(nbid, nb)],
        "success": [_ratio(x, y) for x, y in zip(nok, nbid)],
    }
    hat: dict[str, Any] = {"decisions": int(dec.is_hat.sum()), "chose_plus": None}
    h = dec.is_hat
    rows = np.nonzero(h)[0]
    a = dec.chosen[h] - bh.N_CARDS
    other = np.where(dec.chosen[h] == bh.HAT_PLUS, bh.HAT_MINUS, bh.HAT_PLUS) - bh.N_CARDS
    for objective, pair in (("score", (dec.q_hind, dec.q_info)), ("margin", (dec.m_hind, dec.m_info))):
        hat[objective] = {}
        for oracle, q in zip(("hindsight", "info_set"), pair):
            m = ci = None
            if h.any():
                m, ci = _ci(_per_deal(q[rows, a] - q[rows, other], dec.deal[h], deals))
            hat[objective][oracle], hat[objective][f"{oracle}_ci95"] = m, ci
    if dec.is_hat.any():
        hat["chose_plus"] = float(np.mean(dec.chosen[dec.is_hat] == bh.HAT_PLUS))
    return {"types": types, "curve": curve, "hat": hat}


def _oh_rows(bid: np.ndarray, taken: np.ndarray, best: np.ndarray, groups: np.ndarray) -> dict[str, dict]:
    out = {}
    for k in np.unique(groups).tolist():
        s = groups == k
        out[str(k)] = {
            "hands": int(s.sum()),
            "mean_bid": float(bid[s].mean()),
            "mean_taken": float(taken[s].mean()),
            "over_under": float((taken[s] - bid[s]).mean()),
            "exact_rate": float((taken[s] == bid[s]).mean()),
            "oracle_bid": float(best[s].mean()),
        }
    return out


def _oh_calibration(dec: _Decisions) -> dict:
    bid = dec.chosen - oh.BID_BASE
    taken = dec.extra["taken"]
    best = np.nanargmax(dec.q_info, axis=1) - (oh.BID_BASE - oh.N_CARDS)
    info = dec.extra["info_taken"]
    bids = np.arange(oh.MAX_BID + 1)
    hands = np.bincount(bid, minlength=bids.size)
    return {
        "exact_rate": float((taken == bid).mean()),
        "mean_bid": float(bid.mean()),
        "mean_taken": float(taken.mean()),
        "over_under": float((taken - bid).mean()),
        "by_hand_size": _oh_rows(bid, taken, best, dec.size),
        "by_seat_from_dealer": _oh_rows(bid, taken, best, dec.from_dealer),
        "curve": {
            "bid": bids.tolist(),
            "hands": hands.tolist(),
            "mean_taken": [_ratio(x, y) for x, y in zip(np.bincount(bid, taken, bids.size), hands)],
            "info_set_taken": [_ratio(x, y) for x, y in zip(np.bincount(bid, info, bids.size), hands)],
        },
    }


def _bidder_report(
    game: Game, name: str, dec: _Decisions, deals: int, worlds: int
) -> tuple[dict, dict[str, np.ndarray]]:
    b = ~dec.is_hat
    score = _per_deal(dec.score.astype(np.float64), dec.deal, deals, b)
    m, ci = _ci(score)
    mm, mci = _ci(_per_deal(dec.margin, dec.deal, deals, b))
    offset = game.module.N_CARDS
    hind, hind_deal = _regret_report(dec, dec.q_hind, offset, deals)
    info, info_deal = _regret_report(dec, dec.q_info, offset, deals)
    m_hind, _ = _regret_report(dec, dec.m_hind, offset, deals)
    m_info, _ = _regret_report(dec, dec.m_info, offset, deals)
    kind = _kind(game.name)
    labels = [kind.label(int(a)) for a in dec.chosen[b]]
    dist: dict[str, float] = {}
    for lab in labels:
        dist[lab] = dist.get(lab, 0) + 1
    dist = {k: v / len(labels) for k, v in sorted(dist.items(), key=lambda kv: -kv[1])}
    made_rate, calibration = kind.made_rate(dec), kind.calibration(dec, deals, worlds)
    report = {
        "name": name,
        "hands": int(b.sum()),
        "decisions": {"bid": int(b.sum()), "hat": int(dec.is_hat.sum())},
        "score_per_hand": m,
        "ci95": ci,
        "margin_per_hand": mm,
        "margin_ci95": mci,
        "regret": {"score": {"hindsight": hind, "info_set": info}, "margin": {"hindsight": m_hind, "info_set": m_info}},
        "made_rate": made_rate,
        "bid_distribution": dist,
        "calibration": calibration,
    }
    return report, {"score": score, "hindsight": hind_deal, "info_set": info_deal}


# ==========================================================================
# The benchmark
@dataclass
class BidsResult:
    """One table's measurement: the JSON table (:attr:`table`) and every decision behind it."""

    game: Game
    table: dict
    decisions: dict[str, _Decisions]


def measure(
    game: Game,
    bidders: list[str],
    deals: int,
    seed: int = 0,
    *,
    worlds: int = 8,
    play: str | None = None,
    playouts: int | None = None,
    workers: int = 1,
    batch_size: int = 16,
    max_rows: int = 16384,
    progress: bool = False,
    mp_context: str = "spawn",
) -> BidsResult:
    """Measure ``bidders`` on ``deals`` games of ``game`` (see the module docstring).

    bidders: agent specs, or ``shipped`` (:func:`resolve_bidder`).
    play: the play policy's spec (default :func:`shipped_play`). playouts:
    per world and alternative with a sampling play policy (default 8; a
    deterministic one always gets 1). batch_size: games per chunk (the
    oracles of a chunk's decisions run together, ``max_rows`` playouts at a
    time). Bad specs, a play policy for another game and bad counts raise
    ValueError naming the fault before anything runs.
    """
    for name, value, low in (
        ("deals", deals, 1), ("worlds", worlds, 1), ("workers", workers, 1),
        ("batch_size", batch_size, 1), ("max_rows", max_rows, 1),
    ):  # fmt: skip
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    if playouts is not None and (not isinstance(playouts, (int, np.integer)) or playouts < 1):
        raise ValueError(f"playouts must be an integer >= 1, got {playouts!r}")
    if not bidders:
        raise ValueError("name at least one bidder")
    twice = sorted({b for b in bidders if bidders.count(b) > 1})
    if twice:
        raise ValueError(f"bidder {twice[0]!r} is named twice")
    play = play or shipped_play(game)
    play_agent = _make(play, game, 0, "--play")  # fail fast, before any worker starts
    specs = {b: resolve_bidder(b, game) for b in bidders}
    for b in bidders:
        _make(specs[b], game, 0, "bidder")
    sampling = _is_sampling(play_agent)
    per_chunk = max(1, min(batch_size, -(-deals // 4)))
    starts = list(range(0, deals, per_chunk))
    chunks = [
        _Chunk(
            i,
            d0,
            min(deals, d0 + per_chunk),
            game.name,
            game.config,
            b,
            specs[b],
            play,
            seed,
            worlds,
            playouts,
            max_rows,
        )
        for b in bidders
        for i, d0 in enumerate(starts)
    ]
    bar = ProgressBar(deals * len(bidders), "games", enabled=progress)
    results: list[_ChunkResult] = []
    t0 = time.perf_counter()

    def landed(ch: _Chunk, r: _ChunkResult) -> None:
        results.append(r)
        bar.update(ch.d1 - ch.d0)

    try:
        if workers == 1:
            with sigterm_as_exit():
                for ch in chunks:
                    landed(ch, _play_chunk(ch))
        else:  # Ctrl-C, SIGTERM and a killed parent end the workers too (train/pool.py)
            map_chunks(_play_chunk, chunks, workers, landed, mp_context=mp_context)
    finally:
        bar.close()
    seconds = time.perf_counter() - t0
    results.sort(key=lambda r: (bidders.index(r.bidder), r.index))
    decisions = {b: _Decisions.concat([r.dec for r in results if r.bidder == b]) for b in bidders}
    reports, per_deal = [], {}
    for b in bidders:
        rep, pd = _bidder_report(game, _display(b), decisions[b], deals, worlds)
        reports.append(rep)
        per_deal[b] = pd
    pairwise = []
    for i, a in enumerate(bidders):
        for b in bidders[i + 1 :]:
            sm, sci = _ci(per_deal[a]["score"] - per_deal[b]["score"])
            hm, hci = _ci(per_deal[a]["hindsight"] - per_deal[b]["hindsight"])
            im, ici = _ci(per_deal[a]["info_set"] - per_deal[b]["info_set"])
            pairwise.append(
                {"a": _display(a), "b": _display(b), "score_diff": sm, "ci95": sci,
                 "hindsight_regret_diff": hm, "hindsight_ci95": hci, "info_set_regret_diff": im, "info_set_ci95": ici}
            )  # fmt: skip
    n_dec = sum(int(d.chosen.size) for d in decisions.values())
    oracle_s = sum(r.oracle_seconds for r in results)
    table = _clean(
        {
            "game": game.name,
            "config": game.config.to_dict(),
            "play": _display(play),
            "play_sha256": _sha256(play),
            "seed": seed,
            "deals": deals,
            "worlds": worlds,
            "playouts": (playouts or SAMPLING_PLAYOUTS) if sampling else 1,
            "hands_per_game": int(game.config.hands),
            "batch_size": batch_size,
            "bidders": reports,
            "pairwise": pairwise,
            "run": {
                "seconds": round(seconds, 3),
                "bidding_decisions": n_dec,
                "playouts": sum(r.playouts for r in results),
                "playout_decisions": sum(r.playout_decisions for r in results),
                "seconds_per_decision": oracle_s / max(n_dec, 1),
                "workers": workers,
            },
        }
    )
    return BidsResult(game, table, decisions)


def run_suite(
    name: str, bidders: list[str], workers: int = 1, progress: bool = False, play: str | None = None
) -> list[BidsResult]:
    """The versioned benchmark ``name`` (``SUITES``) for ``bidders``: one :class:`BidsResult` per table."""
    if name not in SUITES:
        raise ValueError(f"unknown suite {name!r}; known: {', '.join(SUITES)}")
    s = SUITES[name]
    out = []
    for t in s["tables"]:
        game = make_game(t["game"], **dict(t["options"]))
        out.append(
            measure(
                game, bidders, s["deals"], s["seed"], worlds=s["worlds"], play=play, playouts=s["playouts"],
                workers=workers, batch_size=s["batch_size"], progress=progress,
            )
        )  # fmt: skip
    return out


def report_json(results: list[BidsResult], suite: str | None = None) -> dict:
    """The JSON document of one or more tables (schema in the module docstring)."""
    return {"schema": SCHEMA, "suite": suite, "tables": [r.table for r in results]}


# ==========================================================================
# Terminal report and plot
def _f(x: float | None, fmt: str = "+.3f") -> str:
    return "-" if x is None else f"{x:{fmt}}"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def format_report(doc: dict) -> str:
    """A readable terminal report of :func:`report_json`'s document."""
    lines: list[str] = []
    for t in doc["tables"]:
        cfg = t["config"]
        if lines:
            lines.append("")
        suite = f"suite {doc['suite']}: " if doc.get("suite") else ""
        lines.append(
            f"{suite}{t['game']}, {cfg['players']} players, {t['hands_per_game']} hands; {t['deals']} games "
            f"(the bidder in seat game % {cfg['players']}), play {t['play']}, {t['worlds']} worlds, "
            f"{t['playouts']} playout(s), seed {t['seed']}"
        )
        w = max(8, *(len(b["name"]) for b in t["bidders"])) + 2
        lines.append("")
        lines.append(
            f"{'':<{w}}{'':>16}{'regret per hand (score)':>34}{'margin regret':>17}{'hindsight per decision':>26}"
        )
        lines.append(
            f"{'bidder':<{w}}{'per hand':>9}{'±95%':>7}{'hindsight':>10}{'±95%':>7}{'info-set':>10}{'±95%':>7}"
            f"{'hindsight':>10}{'info-set':>9}{'bid':>8}{'hat':>8}{'best':>7}{'made':>8}"
        )
        for b in t["bidders"]:
            h, i = b["regret"]["score"]["hindsight"], b["regret"]["score"]["info_set"]
            mh, mi = b["regret"]["margin"]["hindsight"], b["regret"]["margin"]["info_set"]
            lines.append(
                f"{b['name']:<{w}}{_f(b['score_per_hand'], '+.3f'):>9}{_f(b['ci95'], '.3f'):>7}"
                f"{_f(h['per_hand'], '.3f'):>10}{_f(h['ci95'], '.3f'):>7}{_f(i['per_hand'], '.3f'):>10}"
                f"{_f(i['ci95'], '.3f'):>7}{_f(mh['per_hand'], '.3f'):>10}{_f(mi['per_hand'], '.3f'):>9}"
                f"{_f(h['bid'], '.3f'):>8}{_f(h['hat'], '.3f'):>8}{_pct(h['zero_share']):>7}{_pct(b['made_rate']):>8}"
            )
        lines.append(
            "(bid, hat: hindsight regret per bid and per hat choice; best: share of decisions whose choice was "
            f"a best one in hindsight, regret 0; made: {_kind(t['game']).made_words})"
        )
        if t["pairwise"]:
            lines.append("")
            lines.append(
                "pairwise, a minus b, paired over deals (±95%): score per hand; regret per hand, hindsight, info-set"
            )
            for d in t["pairwise"]:
                lines.append(
                    f"  {d['a']:<{w}} - {d['b']:<{w}} {_f(d['score_diff'])} ±{_f(d['ci95'], '.3f')}"
                    f"   {_f(d['hindsight_regret_diff'])} ±{_f(d['hindsight_ci95'], '.3f')}"
                    f"   {_f(d['info_set_regret_diff'])} ±{_f(d['info_set_ci95'], '.3f')}"
                )
        lines.append("")
        lines.extend(_kind(t["game"]).lines(t, w))
        r = t["run"]
        lines.append("")
        lines.append(
            f"{r['bidding_decisions']} bidding decisions valued with {r['playouts']} playouts "
            f"({r['playout_decisions']} decisions): {1000 * r['seconds_per_decision']:.1f} ms per bidding "
            f"decision; {r['seconds']:.1f} s in all with {r['workers']} worker(s)"
        )
    return "\n".join(lines)


def _bh_lines(t: dict, w: int) -> list[str]:
    types = list(t["bidders"][0]["calibration"]["types"])
    out = ["bid cards: share of hands / made when bid / oracle's chance when bid (info-set)"]
    out.append(f"{'bidder':<{w}}" + "".join(f"{k:>24}" for k in types))
    for b in t["bidders"]:
        c = b["calibration"]["types"]
        out.append(
            f"{b['name']:<{w}}"
            + "".join(f"{_pct(c[k]['rate']) + ' / ' + _pct(c[k]['success']) + ' / ' + _pct(c[k]['predicted']):>24}"
                      for k in types)
        )  # fmt: skip
    out.append("")
    out.append("hat choice (as dealer): share choosing +10; value of the choice over the other (±95%)")
    out.append(
        f"{'bidder':<{w}}{'+10':>7}{'score, hindsight':>20}{'info-set':>16}{'margin, hindsight':>20}{'info-set':>16}"
    )
    for b in t["bidders"]:
        h = b["calibration"]["hat"]
        cells = [
            f"{_f(h[obj][o])} ±{_f(h[obj][o + '_ci95'], '.2f')}"
            for obj in OBJECTIVES
            for o in ("hindsight", "info_set")
        ]
        out.append(
            f"{b['name']:<{w}}{_pct(h['chose_plus']):>7}{cells[0]:>20}{cells[1]:>16}{cells[2]:>20}{cells[3]:>16}"
            f"   ({h['decisions']} choices)"
        )
    return out


def _oh_lines(t: dict, w: int) -> list[str]:
    out = ["tricks taken minus bid (mean), by hand size; then the info-set oracle's best bid minus the bid"]
    sizes = sorted({int(k) for b in t["bidders"] for k in b["calibration"]["by_hand_size"]})
    out.append(f"{'bidder':<{w}}{'all':>7}" + "".join(f"{s:>7}" for s in sizes))
    for b in t["bidders"]:
        c = b["calibration"]
        by = c["by_hand_size"]
        out.append(
            f"{b['name']:<{w}}{c['over_under']:>+7.2f}"
            + "".join(f"{by[str(s)]['over_under']:>+7.2f}" if str(s) in by else f"{'-':>7}" for s in sizes)
        )
    out.append("")
    seats = sorted({int(k) for b in t["bidders"] for k in b["calibration"]["by_seat_from_dealer"]})
    out.append("by seat from the dealer (0 = dealer, bids last): taken minus bid, oracle bid minus bid, exact")
    out.append(f"{'bidder':<{w}}" + "".join(f"{f'seat {s}':>22}" for s in seats))
    for b in t["bidders"]:
        by = b["calibration"]["by_seat_from_dealer"]
        cells = []
        for s in seats:
            r = by.get(str(s))
            cells.append(
                "-"
                if r is None
                else f"{r['over_under']:+.2f} {r['oracle_bid'] - r['mean_bid']:+.2f} {_pct(r['exact_rate'])}"
            )
        out.append(f"{b['name']:<{w}}" + "".join(f"{c:>22}" for c in cells))
    return out


def plot(doc: dict, path: str | os.PathLike) -> None:
    """Write a PNG, one row per table: regrets, score, and the game's calibration plots."""
    import matplotlib  # noqa: PLC0415 - heavy, only for --plot

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    tables = doc["tables"]
    fig, axes = plt.subplots(len(tables), 4, figsize=(20, 4.4 * len(tables)), squeeze=False)
    for row, t in zip(axes, tables):
        names = [b["name"] for b in t["bidders"]]
        short = [n if len(n) <= 14 else n[:13] + "…" for n in names]
        x = np.arange(len(names))
        ax = row[0]
        bars = [(obj, o) for obj in OBJECTIVES for o in ("hindsight", "info_set")]
        for k, (obj, oracle) in enumerate(bars):
            m = [b["regret"][obj][oracle]["per_hand"] or 0 for b in t["bidders"]]
            ci = [b["regret"][obj][oracle]["ci95"] or 0 for b in t["bidders"]]
            label = f"{obj}, {oracle.replace('_', '-')}" + (f" (K={t['worlds']})" if oracle == "info_set" else "")
            ax.bar(x + (k - 1.5) * 0.2, m, 0.2, yerr=ci, capsize=2, label=label)
        ax.set_xticks(x, short, rotation=20, fontsize=8)
        ax.set_ylabel("regret, points per hand (±95%)")
        ax.set_title(f"{t['game']}: regret of the bids, play {t['play'].split('/')[-1]}")
        ax.legend(fontsize=8)
        ax = row[1]
        m = [b["score_per_hand"] for b in t["bidders"]]
        ax.bar(x, m, yerr=[b["ci95"] or 0 for b in t["bidders"]], capsize=3, color="tab:green")
        ax.axhline(0, color="grey", linewidth=0.8)
        ax.set_xticks(x, short, rotation=20, fontsize=8)
        ax.set_title("the bidder's score per hand (±95%)")
        _kind(t["game"]).panels(t, row[2], row[3])
    fig.tight_layout()
    try:
        save_figure(fig, path, dpi=80)  # in one step, in the format its extension names
    finally:
        plt.close(fig)


def _bh_panels(t: dict, ax1: Any, ax2: Any) -> None:
    """Bob's Hat's two calibration panels: when a card is bid against its chance, predicted vs made."""
    ax = ax1
    for i, b in enumerate(t["bidders"]):
        cv = b["calibration"]["curve"]
        ok = [v is not None for v in cv["p"]]
        mid = [v for v, o in zip(cv["p"], ok) if o]
        ax.plot(mid, [v for v, o in zip(cv["bid_share"], ok) if o], label=b["name"][:24], **line_style(i))
    ax.set_xlabel("info-set chance of making the card bid alone")
    ax.set_ylabel("share of hands bidding it")
    ax.set_title("when does it bid a card? (all bid cards)")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=7)
    ax = ax2
    from matplotlib.lines import Line2D  # noqa: PLC0415 - matplotlib is imported by plot() only

    types = list(t["bidders"][0]["calibration"]["types"])
    shapes = dict(zip(types, "osD^v"))
    for i, b in enumerate(t["bidders"]):
        c = b["calibration"]["types"]
        for k in types:
            if c[k]["success"] is not None:
                ax.scatter(c[k]["predicted"], c[k]["success"], color=f"C{i}", marker=shapes[k])
    ax.plot([0, 1], [0, 1], color="grey", linewidth=0.8)
    ax.set_xlabel("predicted success (info-set), when bid")
    ax.set_ylabel("actual success")
    ax.set_title("bid cards: predicted against actual success")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    # two keys, in words: the colour is the bidder, the shape the bid card
    bidders = [
        Line2D([], [], color=f"C{i}", marker="o", ls="", label=b["name"][:24]) for i, b in enumerate(t["bidders"])
    ]
    cards = [Line2D([], [], color="grey", marker=shapes[k], ls="", label=k.replace("_", " ")) for k in types]
    ax.add_artist(ax.legend(handles=bidders, title="bidder (colour)", fontsize=7, title_fontsize=7, loc="upper left"))
    ax.legend(handles=cards, title="bid card (shape)", fontsize=7, title_fontsize=7, loc="lower right")


def _oh_panels(t: dict, ax1: Any, ax2: Any) -> None:
    """Oh Hell's two calibration panels: tricks taken against bid, over/under by hand size."""
    ax = ax1
    top = 0
    for i, b in enumerate(t["bidders"]):
        cv = b["calibration"]["curve"]
        bids = np.array(cv["bid"])
        y = np.array([np.nan if v is None else v for v in cv["mean_taken"]])
        ok = np.array(cv["hands"]) > 0
        ax.plot(bids[ok], y[ok], label=b["name"][:24], **line_style(i))
        top = max(top, int(bids[ok].max()) if ok.any() else 0)
    ax.plot([0, top], [0, top], color="grey", linewidth=0.8)
    ax.set_xlabel("tricks bid")
    ax.set_ylabel("mean tricks taken")
    ax.set_title("calibration: tricks bid vs taken")
    ax.legend(fontsize=7)
    ax = ax2
    for i, b in enumerate(t["bidders"]):
        by = b["calibration"]["by_hand_size"]
        sizes = sorted(int(k) for k in by)
        ax.plot(sizes, [by[str(s)]["over_under"] for s in sizes], label=b["name"][:24], **line_style(i))
    ax.axhline(0, color="grey", linewidth=0.8)
    ax.set_xlabel("cards per player")
    ax.set_ylabel("tricks taken minus bid")
    ax.set_title("over (<0) and under (>0) bidding by hand size")
    ax.legend(fontsize=7)


# ==========================================================================
# The games' own pieces
def _bh_hand_facts(game: Game, state: Any, g: np.ndarray, seat: np.ndarray) -> dict[str, np.ndarray]:
    made, points = _bh_cards(
        game.config, state.bids[g, seat], state.taken[g].astype(np.int64), state.hand_size[g], seat
    )
    return {"made": made, "points": points}


def _bh_playout_facts(game: Game, st: Any, seat: np.ndarray) -> dict[str, np.ndarray]:
    return {"made": _bh_hand_facts(game, st, np.arange(st.batch_size), seat)["made"] == 1}


def _bh_from_oracle(facts: dict[str, np.ndarray], legal: np.ndarray, pick: np.ndarray) -> dict[str, np.ndarray]:
    info = facts["made"]  # (n, A, 5): the information-set chance that each card of an alternative is made
    rows = np.arange(legal.shape[0])
    alone = np.full((legal.shape[0], len(BH_TYPES)), np.nan)
    for t, code in enumerate((1, 2, 4, 8, 16)):
        a = bh.BID_BASE + code - bh.N_CARDS
        ok = legal[:, a]
        alone[ok, t] = info[rows[ok], a, t]
    return {"pred": info[rows, pick], "p_alone": alone}


def _bh_made_rate(dec: _Decisions) -> float | None:
    made = dec.extra["made"][~dec.is_hat]
    return _ratio((made == 1).sum(), (made >= 0).sum())


class BobsHatOracle:
    """What the bidding benchmark needs of Where's Bob's Hat? (the ``bid_oracle`` its description names).

    ``hat_actions``: the dealer's hat choices; ``label(action)`` names a bid;
    ``hand_facts(game, state, g, seat)`` and ``playout_facts(game, state,
    seat)``: a finished hand's facts for the report and for the oracle's mean;
    ``from_oracle(facts, legal, pick)`` the per-decision predictions;
    ``made_rate`` (and ``made_words``, what it counts), ``calibration``, ``lines`` (terminal) and
    ``panels`` (plot).
    """

    hat_actions = (bh.HAT_PLUS, bh.HAT_MINUS)
    label = staticmethod(lambda a: "+".join(bh.bid_cards(a - bh.BID_BASE)) or "none")
    hand_facts = staticmethod(_bh_hand_facts)
    playout_facts = staticmethod(_bh_playout_facts)
    from_oracle = staticmethod(_bh_from_oracle)
    made_rate = staticmethod(_bh_made_rate)
    made_words = "share of the bid cards bid that were made"  # what ``made_rate`` counts, for the report's legend
    calibration = staticmethod(_bh_calibration)
    lines = staticmethod(_bh_lines)
    panels = staticmethod(_bh_panels)


def _oh_hand_facts(game: Game, state: Any, g: np.ndarray, seat: np.ndarray) -> dict[str, np.ndarray]:
    return {"taken": state.taken[g, seat].astype(np.int64)}


def _oh_from_oracle(facts: dict[str, np.ndarray], legal: np.ndarray, pick: np.ndarray) -> dict[str, np.ndarray]:
    return {"info_taken": facts["taken"][np.arange(legal.shape[0]), pick, 0]}  # tricks expected after the bid


class OhHellOracle:
    """What the bidding benchmark needs of Oh Hell (see :class:`BobsHatOracle`)."""

    hat_actions = ()
    label = staticmethod(lambda a: str(a - oh.BID_BASE))
    hand_facts = staticmethod(_oh_hand_facts)
    playout_facts = staticmethod(lambda game, st, seat: _oh_hand_facts(game, st, np.arange(st.batch_size), seat))
    from_oracle = staticmethod(_oh_from_oracle)
    made_rate = staticmethod(lambda dec: float(np.mean(dec.extra["taken"] == dec.chosen - oh.BID_BASE)))
    made_words = "share of hands taking exactly the tricks bid"
    calibration = staticmethod(lambda dec, deals, worlds: _oh_calibration(dec))
    lines = staticmethod(_oh_lines)
    panels = staticmethod(_oh_panels)


# ==========================================================================
# Command line (called by ``bobshat bids``)
SUITE_FIXED = ("game", "deals", "seed", "worlds", "playouts", "batch_size")


def cli_bids(args: Any, options: dict[str, Any] | None) -> int:
    """Run ``bobshat bids`` from parsed arguments (``options``: the game options, None with ``--suite``)."""
    bidders = split_specs(args.bidders or "")
    if not bidders:
        raise ConfigError("--bidders names no bidder (comma-separated agent specs, e.g. random,simple,strong)")
    if args.suite:
        fixed = [f for f in SUITE_FIXED if getattr(args, f) is not None]
        if fixed:
            flag = "--" + fixed[0].replace("_", "-")
            raise ConfigError(f"--suite {args.suite} fixes {flag} (and every game option); drop it")
        results = run_suite(args.suite, bidders, workers=args.workers, progress=not args.quiet, play=args.play)
    else:
        game = make_game(args.game or "bobs_hat", **(options or {}))
        results = [
            measure(
                game, bidders, 100 if args.deals is None else args.deals, 0 if args.seed is None else args.seed,
                worlds=8 if args.worlds is None else args.worlds, play=args.play, playouts=args.playouts,
                workers=args.workers, batch_size=16 if args.batch_size is None else args.batch_size,
                progress=not args.quiet,
            )
        ]  # fmt: skip
    doc = report_json(results, args.suite)
    print(format_report(doc))
    if args.suite:
        for r in results:
            if not r.table["play"].startswith("ppo:checkpoints/"):
                print(f"note: {r.game.name} was played with {r.table['play']}, not the shipped checkpoint: "
                      "its numbers do not compare with the README's")  # fmt: skip
    if args.json:
        text = json.dumps(doc, indent=2)
        if args.json == "-":
            print(text)
        else:
            replace_bytes(args.json, (text + "\n").encode())  # in one step: never a half-written file
            print(f"wrote {args.json}")
    if args.plot:
        plot(doc, args.plot)
        print(f"wrote {args.plot}")
    return 0
