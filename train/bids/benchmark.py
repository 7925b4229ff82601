"""The bidding benchmark's run: each bidder's games in chunks, played through the one worker-pool driver,
its decisions valued by the oracles, and the table of the report; the versioned suites.

:func:`measure` measures bidders on one table, :func:`run_suite` a versioned
benchmark; the method is in :mod:`train.bids`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from agents.arena import play_games
from bobshat_env.core import rng
from bobshat_env.games import Game, make_game
from train.evaluate.statistics import clean
from train.runtime.pool import run_chunks
from train.runtime.progress import ProgressBar

from .bidders import display, is_sampling, make_role, resolve_bidder, role_seed, shipped_play, spec_sha256
from .oracle import SAMPLING_PLAYOUTS, BidsResult, Decisions, concat_states, game_pieces, oracle_values, outcome
from .report import bidder_report, deal_ci, reduced

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


@dataclass
class _Chunk:
    """One unit of work: one bidder's games [d0, d1), played and then valued by the oracles."""

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
    variance_reduction: bool = True


@dataclass
class _ChunkResult:
    """What one chunk measured: the bidder's decisions with their values, and what the oracles cost."""

    index: int
    bidder: str
    dec: Decisions
    playouts: int
    playout_decisions: int
    oracle_seconds: float


class _BidWatcher:
    """The arena's per-step observer (its recorder interface) that keeps what the oracles need.

    After every step the state is the one the next step acts on, so it copies
    the games whose next decision is the bidder's hat choice or bid (and
    learns the choice at the next step), and the games whose next card ends
    the hand: that last step is replayed on the copy without dealing the next
    hand, so the hand's final state (cards or tricks taken, bids, scores)
    is read from the engine itself.
    """

    def __init__(self, game: Game, state: Any, tested: np.ndarray, bidder: Any = None) -> None:
        self.game, self.tested, self.bidder = game, tested, bidder
        self.snaps: list[Any] = []
        self.rec: dict[str, list[np.ndarray]] = {k: [] for k in ("row", "hand", "chosen", "legal", "probs")}
        self.outcomes: dict[str, np.ndarray] = {}
        self._look(state)

    def _look(self, state: Any) -> None:
        """Copy the games whose next step is the bidder's bidding decision or a hand's last card."""
        mod, P = self.game.module, self.game.players
        live = state.phase < mod.DEAL
        mask = self.game.legal_action_mask(state)
        bidding = live & ~mask[:, : mod.N_CARDS].any(axis=1) & (state.cur == self.tested)
        self.dec_rows = np.nonzero(bidding)[0]
        self.dec_state = state.take(self.dec_rows)
        self.dec_legal = mask[self.dec_rows, mod.N_CARDS :]
        self.dec_probs = self._probs(self.dec_state, mask[self.dec_rows])
        size = np.asarray(state.hand_size)
        ending = live & (state.phase == mod.PLAY) & (state.n_in_trick == P - 1) & (state.tricks_done == size - 1)
        self.end_rows = np.nonzero(ending)[0]
        self.end_state = state.take(self.end_rows)

    def observe_step(self, before: Any, actions: np.ndarray, active: Any, res: Any, state: Any) -> None:
        """Keep the decisions just made and the facts of the hands just finished."""
        if self.dec_rows.size:
            self.snaps.append(self.dec_state)
            self.rec["row"].append(self.dec_rows)
            self.rec["hand"].append(self.dec_state.hand_no.astype(np.int64))
            self.rec["chosen"].append(np.asarray(actions)[self.dec_rows])
            self.rec["legal"].append(self.dec_legal)
            self.rec["probs"].append(self.dec_probs)
        done = np.nonzero(np.asarray(res.hand_done))[0]
        if done.size:
            if not np.isin(done, self.end_rows).all():
                raise RuntimeError("a hand ended where its last card was not expected; please report this")
            pick = np.isin(self.end_rows, done)
            end = self.end_state.take(pick)
            rows, hand = self.end_rows[pick], end.hand_no.astype(np.int64)
            self.game.step(end, np.asarray(actions)[rows], auto_deal=False)  # the hand's last card, no new deal
            for k, v in outcome(self.game, end, np.arange(rows.size), self.tested[rows]).items():
                if k not in self.outcomes:
                    self.outcomes[k] = np.zeros((self.tested.size, self.game.config.hands) + v.shape[1:], v.dtype)
                self.outcomes[k][rows, hand] = v
        self._look(state)

    def _probs(self, state: Any, mask: np.ndarray) -> np.ndarray:
        """(n, A) the bidder's probabilities of the bid/hat actions at these decisions, NaN where unknown.

        Asked of the bidder's ``action_probs`` (train/evaluate/variance.py: ``random``,
        sampled ``ppo``), which never moves its random stream; they give
        the score's and regrets' control variates (:mod:`train.bids.report`).
        """
        from train.evaluate.variance import known_probs

        n, off = state.batch_size, self.game.module.N_CARDS
        probs = None
        if n and self.bidder is not None:
            obs = self.game.observe(state)
            probs = known_probs(self.bidder, obs, mask, state.cur.astype(np.int64))
        if probs is None:
            return np.full((n, mask.shape[1] - off), np.nan)
        return np.asarray(probs, dtype=np.float64)[:, off:]

    def records(self) -> list[dict]:
        """No records of its own (the arena's recorder interface asks every observer)."""
        return []


def _play_chunk(ch: _Chunk) -> _ChunkResult:
    """Play the chunk's games with the bidder in one seat, then value all its decisions (module level: workers)."""
    from agents.composite import CompositeAgent

    game = make_game(ch.game_name, config=ch.config)
    kind, mod, P = game_pieces(game.name), game.module, game.players
    bidder = make_role(ch.spec, game, role_seed(ch.seed, ch.index, ch.bidder, 0), "bidder")
    play = make_role(ch.play, game, role_seed(ch.seed, ch.index, ch.bidder, 1), "--play")
    deals = np.arange(ch.d0, ch.d1)
    n = deals.size
    tested = deals % P
    # The arena's loop: the bidder's seat is a bid=bidder+play=play agent, every other seat the play policy.
    seating = np.ones((n, P), dtype=np.int64)
    seating[np.arange(n), tested] = 0
    watcher: list[_BidWatcher] = []

    def factory(g: Game, state: Any, ids: np.ndarray) -> _BidWatcher:
        watcher.append(_BidWatcher(g, state, tested[ids], bidder if ch.variance_reduction else None))
        return watcher[-1]

    agents = [CompositeAgent(game, bidder, play, name=ch.bidder), play]
    keys = rng.game_keys(ch.seed, deals, 0)  # deal d of a tournament (train.evaluate.play_duplicate)
    play_games(game, agents, n, batch_size=max(n, 1), recorder_factory=factory, keys=keys, seating=seating)
    (w,) = watcher
    snaps, rec, outcomes = w.snaps, w.rec, w.outcomes
    base = concat_states(snaps)
    row, hand = np.concatenate(rec["row"]), np.concatenate(rec["hand"])
    chosen, legal = np.concatenate(rec["chosen"]), np.concatenate(rec["legal"])
    probs = np.concatenate(rec["probs"]) if rec["probs"] else np.zeros(legal.shape)
    is_hat = np.isin(chosen, kind.hat_actions)
    # A hat choice is valued with the dealer's own bid as it was made: its next decision in the same hand.
    follow = np.full(chosen.shape[0], -1, dtype=np.int64)
    if is_hat.any():
        bid_of = {(r, h): a for r, h, a in zip(row[~is_hat].tolist(), hand[~is_hat].tolist(), chosen[~is_hat].tolist())}
        follow[is_hat] = [bid_of[(r, h)] for r, h in zip(row[is_hat].tolist(), hand[is_hat].tolist())]
    gen = np.random.default_rng(role_seed(ch.seed, ch.index, ch.bidder, 2))
    t0 = time.perf_counter()
    sampling = is_sampling(play)
    n_play = (ch.playouts or SAMPLING_PLAYOUTS) if sampling else 1
    oracle = oracle_values(game, play, base, legal, follow, tested[row], ch.worlds, n_play, gen, ch.max_rows)
    seconds = time.perf_counter() - t0
    size = np.asarray(base.hand_size).astype(np.int64)
    extra = {k: v[row, hand] for k, v in outcomes.items() if k not in ("score", "margin")}
    extra.update(kind.from_oracle(oracle["facts"], legal, chosen - mod.N_CARDS))
    dec = Decisions(
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
        probs=probs,
    )
    return _ChunkResult(ch.index, ch.bidder, dec, oracle["playouts"], oracle["steps"], seconds)


# ==========================================================================
# The benchmark
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
    variance_reduction: bool = True,
) -> BidsResult:
    """Measure ``bidders`` on ``deals`` games of ``game`` (see the module docstring).

    bidders: agent specs, or ``shipped`` (:func:`resolve_bidder`).
    play: the play policy's spec (default :func:`shipped_play`). playouts:
    per world and alternative with a sampling play policy (default 8; a
    deterministic one always gets 1). batch_size: games per chunk (the
    oracles of a chunk's decisions run together, ``max_rows`` playouts at a
    time). Bad specs, a play policy for another game and bad counts raise
    ValueError naming the fault before anything runs. variance_reduction: the
    control variates at the bids of bidders with known probabilities
    (:func:`train.bids.report.decision_cv`; off: ``variance_reduction`` null).
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
    play_agent = make_role(play, game, 0, "--play")  # fail fast, before any worker starts
    specs = {b: resolve_bidder(b, game) for b in bidders}
    for b in bidders:
        make_role(specs[b], game, 0, "bidder")
    sampling = is_sampling(play_agent)
    per_chunk = max(1, min(batch_size, -(-deals // 4)))
    starts = list(range(0, deals, per_chunk))
    chunks = [
        _Chunk(i, d0, min(deals, d0 + per_chunk), game.name, game.config, b, specs[b], play, seed, worlds, playouts,
               max_rows, variance_reduction)
        for b in bidders
        for i, d0 in enumerate(starts)
    ]  # fmt: skip
    t0 = time.perf_counter()
    # every bidder plays every deal: the bar counts games and says so (--deals 20 with 2 bidders is 40 games)
    label = f"games ({deals:,} deals x {len(bidders)} bidders)"
    results = _run_chunks(chunks, deals * len(bidders), label, workers, mp_context, progress)
    seconds = time.perf_counter() - t0
    results.sort(key=lambda r: (bidders.index(r.bidder), r.index))
    decisions = {b: Decisions.concat([r.dec for r in results if r.bidder == b]) for b in bidders}
    reports, per_deal = [], {}
    for b in bidders:
        rep, pd = bidder_report(game, display(b), decisions[b], deals, worlds)
        reports.append(rep)
        per_deal[b] = pd
    pairwise = _pairwise(bidders, per_deal)
    n_dec = sum(int(d.chosen.size) for d in decisions.values())
    oracle_s = sum(r.oracle_seconds for r in results)
    table = clean(
        {
            "game": game.name,
            "config": game.config.to_dict(),
            "play": display(play),
            "play_sha256": spec_sha256(play),
            "seed": seed,
            "deals": deals,
            "worlds": worlds,
            "playouts": (playouts or SAMPLING_PLAYOUTS) if sampling else 1,
            "hands_per_game": int(game.config.hands),
            "batch_size": batch_size,
            "variance_reduction": bool(variance_reduction),
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


def _run_chunks(
    chunks: list[_Chunk], games: int, label: str, workers: int, mp_context: str, progress: bool
) -> list[_ChunkResult]:
    """Play and value the chunks here or over ``workers`` processes (:func:`train.runtime.pool.run_chunks`), in
    any order."""
    bar = ProgressBar(games, label, enabled=progress)
    results: list[_ChunkResult] = []

    def landed(ch: _Chunk, r: _ChunkResult) -> None:
        results.append(r)
        bar.update(ch.d1 - ch.d0)

    try:  # Ctrl-C, SIGTERM and a killed parent end the workers too (train/runtime/pool.py)
        run_chunks(_play_chunk, chunks, workers, landed, mp_context=mp_context)
    finally:
        bar.close()
    return results


def _pairwise(bidders: list[str], per_deal: dict[str, dict[str, np.ndarray]]) -> list[dict]:
    """Each pair's differences (a minus b) of score and regrets per hand, paired over deals, with 95% CIs."""
    pairwise = []
    for i, a in enumerate(bidders):
        for b in bidders[i + 1 :]:
            sm, sci = deal_ci(per_deal[a]["score"] - per_deal[b]["score"])
            hm, hci = deal_ci(per_deal[a]["hindsight"] - per_deal[b]["hindsight"])
            im, ici = deal_ci(per_deal[a]["info_set"] - per_deal[b]["info_set"])
            pair = {
                "a": display(a), "b": display(b), "score_diff": sm, "ci95": sci, "hindsight_regret_diff": hm,
                "hindsight_ci95": hci, "info_set_regret_diff": im, "info_set_ci95": ici,
            }  # fmt: skip
            ta, tb = per_deal[a]["terms"], per_deal[b]["terms"]
            if ta is not None or tb is not None:  # the differences' control variates: a's terms less b's
                zero = {k: np.zeros_like(per_deal[a][k]) for k in ("score", "hindsight", "info_set")}
                ta, tb = ta or zero, tb or zero
                diff = {k: per_deal[a][k] - per_deal[b][k] for k in zero}
                pair["variance_reduction"] = reduced(diff, {k: ta[k] - tb[k] for k in zero})
            else:
                pair["variance_reduction"] = None
            pairwise.append(pair)
    return pairwise


def run_suite(
    name: str,
    bidders: list[str],
    workers: int = 1,
    progress: bool = False,
    play: str | None = None,
    variance_reduction: bool = True,
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
                workers=workers, batch_size=s["batch_size"], progress=progress, variance_reduction=variance_reduction,
            )
        )  # fmt: skip
    return out
