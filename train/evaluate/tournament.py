"""The tournament: deals split into chunks, played through the one worker-pool driver, the results joined.

:func:`evaluate` runs ``bobshat eval``: it checks its arguments, splits the
deals into chunks (:class:`_Chunk`), plays them serially, over worker
processes (:func:`train.runtime.pool.map_chunks`) or on Ray, streams the records in
chunk order and returns an :class:`~train.evaluate.report.Evaluation`.
:class:`HandStats` counts the bidding statistics during play, by the game's
own statistics class. Duplicate play, the statistics and the reproducibility
guarantee are described in :mod:`train.evaluate`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from agents import make_agent
from bobshat_env.core import rng
from bobshat_env.games import Game, make_game
from train.runtime.pool import run_chunks, sigterm_as_exit
from train.runtime.progress import ProgressBar

from .duplicate import agent_names, make_seatings, play_duplicate
from .report import Evaluation
from .statistics import agent_counts, game_statistics


def _agent_seed(seed: int, chunk: int, agent: int) -> int:
    """The seed of agent ``agent`` in chunk ``chunk``: chunks build their agents afresh, so workers never matter."""
    ss = np.random.SeedSequence([rng.seed_to_base(seed), chunk, agent])
    return int(ss.generate_state(1, np.uint32)[0])


@dataclass
class _Chunk:
    """One unit of work: deals [d0, d1) with all their seatings, played in one batch."""

    index: int
    d0: int
    d1: int
    game_name: str
    config: Any
    names: list[str]
    seatings: np.ndarray  # (R, P)
    seed: int
    duplicate: bool
    record: bool
    vr: tuple[str, int, str] | None = None  # variance reduction: (value checkpoint, fresh deals, decisions)
    proxy: tuple[list[str], int] | None = None  # multi-fidelity control variate: (cheap specs, fresh deals per deal)


@dataclass
class _ChunkResult:
    """What one chunk measured: its games' totals, the bidding counters, records and control variates."""

    index: int
    totals: np.ndarray  # (G, P) int64
    counters: dict[str, np.ndarray]
    records: list[dict]
    decisions: int
    cv: np.ndarray | None = None  # (G, 3, P) control-variate sums (train/evaluate/variance.py), with chunk.vr
    cv_seconds: float = 0.0
    proxy: tuple[np.ndarray, np.ndarray] | None = None  # cheap agents' per-deal means: actual (n, E), fresh (n, K, E)
    proxy_seconds: float = 0.0


def new_counters(game_name: str, n_agents: int) -> dict[str, np.ndarray]:
    """Zeroed integer counters of the bidding report, per agent."""
    return game_statistics(game_name).counters(n_agents)


class HandStats:
    """A per-batch observer (the arena's recorder interface) that counts bids, successes and hat outcomes.

    It keeps a copy of the few per-hand arrays after every step: when a step
    ends a hand the engine has already dealt the next one, so the final bids
    are the copy's; the cards or tricks taken and the hat holder are the
    step's closing facts (the StepResult's ``hand_taken``, ``role_holder``).
    Each hand is checked against the engine's own hand scores, so the report
    cannot drift from the rules.
    """

    def __init__(self, game: Game, state: Any, seating: np.ndarray, counters: dict[str, np.ndarray]) -> None:
        self.game = game
        self.cfg = game.config
        self.seating = np.asarray(seating, dtype=np.int64)  # (B, P) agent index per seat
        self.counters = counters
        self.n_agents = counters["score_sum"].shape[0]
        self.kind = game_statistics(game.name)
        self._snapshot(state)

    def _snapshot(self, state: Any) -> None:
        """Copy the per-hand arrays the next step's finished hands are read from."""
        self.bids = state.bids.astype(np.int64)
        self.dealer = state.dealer.astype(np.int64)
        self.size = np.asarray(state.hand_size).astype(np.int64)
        for name in self.kind.state_fields:  # what else the game's hand statistics read (Bob's Hat: the hat)
            setattr(self, name, getattr(state, name).astype(np.int64))

    def observe_step(
        self, before: tuple[np.ndarray, np.ndarray], actions: Any, active: Any, res: Any, state: Any
    ) -> None:
        """Count the hands this step finished and the reneges it caught, then copy the state for the next step."""
        h = np.nonzero(np.asarray(res.hand_done))[0]
        if h.size:
            self.kind.hands(self, h, res)
        if np.any(res.renege):
            g = np.nonzero(res.renege)[0]
            who = self.seating[g, np.asarray(before[1])[g].astype(np.int64)]
            self.counters["renege_n"] += agent_counts(who, self.n_agents)
        self._snapshot(state)

    def records(self) -> list[dict]:
        """No records of its own (the arena's recorder interface asks every observer)."""
        return []

    def check(self, pts: np.ndarray, res: Any, h: np.ndarray) -> None:
        """Raise if the hand scores the game's statistics recomputed differ from the engine's (``res.rewards``)."""
        if not np.array_equal(pts, np.asarray(res.rewards)[h]):
            raise RuntimeError("hand statistics disagree with the engine's hand scores; please report this")


class _Observers:
    """Forwards the arena's per-step hook to the hand statistics, an optional Recorder and control variates."""

    def __init__(self, stats: HandStats, recorder: Any = None, cv: Any = None) -> None:
        self.stats = stats
        self.recorder = recorder
        self.cv = cv

    def observe_step(self, before: Any, actions: Any, active: Any, res: Any, state: Any) -> None:
        """Hand the step to each observer in turn."""
        self.stats.observe_step(before, actions, active, res, state)
        if self.recorder is not None:
            self.recorder.observe_step(before, actions, active, res, state)
        if self.cv is not None:
            self.cv.observe_step(before, actions, active, res, state)

    def records(self) -> list[dict]:
        """The recorder's finished records (none without one)."""
        return self.recorder.records() if self.recorder is not None else []


def _play_chunk(chunk: _Chunk, progress: Callable[[int], None] | None = None) -> _ChunkResult:
    """Play one chunk of deals (module level so worker processes can run it)."""
    game = make_game(chunk.game_name, config=chunk.config)
    deals = np.arange(chunk.d0, chunk.d1)
    seating = np.tile(chunk.seatings, (deals.size, 1))  # game j: deal j // R, seating j % R
    agents = [make_agent(s, game, seed=_agent_seed(chunk.seed, chunk.index, a)) for a, s in enumerate(chunk.names)]
    counters = new_counters(game.name, len(chunk.names))
    collectors: list[tuple[np.ndarray, Any]] = []
    value = None
    if chunk.vr is not None:
        from train.evaluate.variance import PolicyValue  # torch, only with variance reduction

        value = PolicyValue(game, chunk.vr[0])

    def factory(g: Game, state: Any, ids: np.ndarray) -> _Observers:
        recorder = cv = None
        if chunk.record:
            from bobshat_env.records import Recorder  # only when recording

            recorder = Recorder(g, state)
            recorder.start(agents=[[chunk.names[a] for a in seating[i]] for i in ids.tolist()])
        if value is not None:
            from train.evaluate.variance import ControlVariates

            cv = ControlVariates(g, state, agents, seating[ids], value, chunk.vr[1], chunk.vr[2])
            collectors.append((ids, cv))
        return _Observers(HandStats(g, state, seating[ids], counters), recorder, cv)

    res = play_duplicate(
        game,
        agents,
        chunk.seatings,
        deals,
        chunk.seed,
        duplicate=chunk.duplicate,
        recorder_factory=factory,
        progress=progress,
    )
    cv = None
    if value is not None:
        cv = np.zeros((res.totals.shape[0], 3, game.players))
        for ids, c in collectors:
            cv[ids] = c.terms
    seconds = sum(c.seconds for _, c in collectors)
    out = _ChunkResult(chunk.index, res.totals, counters, res.records, res.decisions, cv, seconds)
    if chunk.proxy is not None:
        from train.evaluate.variance import proxy_values

        t0 = time.perf_counter()
        specs = chunk.proxy[0]  # each proxy seeded as its agent: its random stream starts where the agent's does
        cheap = [make_agent(s, game, seed=_agent_seed(chunk.seed, chunk.index, a)) for a, s in enumerate(specs)]
        out.proxy = proxy_values(game, cheap, chunk.seatings, deals, chunk.seed, chunk.proxy[1], chunk.duplicate)
        out.proxy_seconds = time.perf_counter() - t0
    return out


def evaluate(
    game: Game,
    specs: list[str],
    deals: int,
    seed: int = 0,
    *,
    duplicate: bool = True,
    seatings: str = "auto",
    workers: int = 1,
    batch_size: int = 1024,
    records_path: str | os.PathLike | None = None,
    progress: bool = False,
    mp_context: str = "spawn",
    ray_address: str | None = None,
    variance_reduction: bool = False,
    vr_value: str | None = None,
    vr_fresh: int | None = None,
    vr_decisions: str = "bids",
    vr_proxy: str | None = None,
    vr_proxy_fresh: int | None = None,
) -> Evaluation:
    """Play a tournament of ``deals`` deals between the agents ``specs`` (one per seat).

    See the module docstring for duplicate play, the statistics and the
    reproducibility guarantee. ``records_path``: write every game (docs/records.md)
    there, in game order. ``progress``: a progress bar on stderr.
    ``variance_reduction``: also compute the control variates of
    :mod:`train.evaluate.variance` with the value head of ``vr_value`` (default: the
    table's shipped checkpoint; off, with the reason in the report, when
    there is none), ``vr_fresh`` fresh deals per chance event, and terms at
    the decisions ``vr_decisions`` (bids, all, none) of agents whose action
    probabilities are known; ``vr_proxy`` (``auto``: :func:`train.evaluate.variance.proxy_spec`
    of each agent, used when one of them is cheaper than its agent; ``none``;
    or one spec per distinct agent): the multi-fidelity control variate, every
    deal played again by the cheap proxies and ``vr_proxy_fresh`` fresh deals
    per deal too.
    ``mp_context``: how worker processes start; ``spawn`` (default) is safe
    with agents that use torch; ``fork`` also sees agents registered at run
    time (tests).
    """
    P = game.players
    if len(specs) != P:
        raise ValueError(f"{game.name} with {P} players needs {P} agent specs, one per seat, got {len(specs)}")
    if deals < 1:
        raise ValueError(f"deals must be at least 1, got {deals}")
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    if ray_address is not None and workers != 1:
        raise ValueError("--workers and --ray-address exclude each other: Ray spreads the deals over its cluster")
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    names, base = agent_names(specs)
    for s in names:  # fail fast on a bad spec, before any process starts
        make_agent(s, game, seed=0)
    table = make_seatings(base, seatings)
    R = table.shape[0]
    per_chunk = max(1, min(batch_size // R, -(-deals // 4)))  # at least 4 chunks when deals allow
    record = records_path is not None
    vr, vr_off = _vr_setup(game, variance_reduction, vr_value, vr_fresh, vr_decisions)
    proxy = _proxy_setup(game, names, variance_reduction, vr_proxy, vr_proxy_fresh)
    chunks = [
        _Chunk(i, d0, min(deals, d0 + per_chunk), game.name, game.config, names, table, seed, duplicate, record, vr)
        for i, d0 in enumerate(range(0, deals, per_chunk))
    ]
    for ch in chunks:
        ch.proxy = proxy
    t0 = time.perf_counter()
    results, workers = _run_chunks(chunks, deals * R, workers, ray_address, mp_context, records_path, progress)
    ordered = [results[i] for i in range(len(chunks))]
    counters = new_counters(game.name, len(names))
    for r in ordered:
        for k in counters:
            counters[k] += r.counters[k]
    return Evaluation(
        game=game,
        names=names,
        seatings=table,
        seed=seed,
        duplicate=duplicate,
        deals=deals,
        batch_size=batch_size,
        totals=np.concatenate([r.totals for r in ordered], axis=0),
        counters=counters,
        decisions=sum(r.decisions for r in ordered),
        seconds=time.perf_counter() - t0,
        workers=workers,
        ray_address=ray_address,
        cv=None if vr is None else np.concatenate([r.cv for r in ordered], axis=0),
        cv_seconds=sum(r.cv_seconds for r in ordered),
        vr_value=None if vr is None else vr[0],
        vr_fresh=0 if vr is None else vr[1],
        vr_decisions="" if vr is None else vr[2],
        vr_off=vr_off,
        proxy_specs=None if proxy is None else proxy[0],
        proxy_actual=None if proxy is None else np.concatenate([r.proxy[0] for r in ordered], axis=0),
        proxy_fresh=None if proxy is None else np.concatenate([r.proxy[1] for r in ordered], axis=0),
        proxy_seconds=sum(r.proxy_seconds for r in ordered),
    )


def _run_chunks(
    chunks: list[_Chunk],
    games: int,
    workers: int,
    ray_address: str | None,
    mp_context: str,
    records_path: str | os.PathLike | None,
    progress: bool,
) -> tuple[dict[int, _ChunkResult], int]:
    """Play the chunks here, over ``workers`` processes (:func:`train.runtime.pool.run_chunks`) or on Ray.

    Returns the results by chunk index and the number of workers that ran
    them (Ray's: the cluster's CPUs). The records stream to ``records_path``
    in chunk order and replace it only when every chunk is in.
    """
    bar = ProgressBar(games, "games", enabled=progress)
    writer = _RecordWriter(records_path, len(chunks)) if records_path is not None else None
    results: dict[int, _ChunkResult] = {}

    def landed(r: _ChunkResult, counted: bool = False) -> None:
        results[r.index] = r
        if not counted:
            bar.update(r.totals.shape[0])
        if writer:
            writer.add(r)

    try:
        with sigterm_as_exit():  # SIGTERM: the workers and the records' temporary go too (train/runtime/pool.py)
            if ray_address is not None:
                from train.runtime.distributed import run_chunks as on_ray  # imports Ray, only when asked

                workers = on_ray(_play_chunk, chunks, ray_address, landed)
            else:  # here, the bar moves with every batch of games; over workers, with every chunk
                here = partial(_play_chunk, progress=bar.update)
                run_chunks(
                    _play_chunk,
                    chunks,
                    workers,
                    lambda ch, r: landed(r, workers == 1),
                    mp_context=mp_context,
                    here=here,
                )
    finally:
        bar.close()
        if writer:
            writer.close()  # in place only when complete
    return results, workers


def _vr_setup(
    game: Game, on: bool, value: str | None, fresh: int | None, decisions: str
) -> tuple[tuple[str, int, str] | None, str | None]:
    """((value checkpoint, fresh deals, decisions), None) when variance reduction runs, else (None, why not)."""
    if not on:
        return None, "off"
    from train.evaluate.variance import DECISIONS, DEFAULT_FRESH, shipped_value_path

    fresh = DEFAULT_FRESH if fresh is None else int(fresh)
    if fresh < 1:
        raise ValueError(f"vr_fresh must be at least 1, got {fresh}")
    if decisions not in DECISIONS:
        raise ValueError(f"vr_decisions must be one of {', '.join(DECISIONS)}, got {decisions!r}")
    path = value or shipped_value_path(game)
    if path is None:
        return None, f"no shipped policy for {game.name} with {game.players} players to take values from (--vr-value)"
    from agents.ppo_agent import load_policy  # check it loads for this game before any play
    from bobshat_env.core.config import ConfigError

    try:
        load_policy(path, game)
    except (OSError, ValueError) as err:  # missing, unreadable, or for another game (CheckpointError)
        if value:
            raise ConfigError(f"--vr-value: {err}") from err
        return None, f"the shipped policy cannot value this table ({str(err).splitlines()[0]}); try --vr-value"
    return (str(path), fresh, decisions), None


def _proxy_setup(
    game: Game, names: list[str], on: bool, proxy: str | None, fresh: int | None
) -> tuple[list[str], int] | None:
    """(cheap spec per agent, fresh deals per deal) of the multi-fidelity control variate, or None.

    ``auto`` (the default with variance reduction) uses it only when some
    agent has a cheaper proxy than itself (``pimc``, ``search``): for cheap
    agents the proxy would be the agent, and its fresh deals would cost as
    much as playing more deals.
    """
    from train.evaluate.variance import PROXY_FRESH, proxy_spec

    mode = (proxy or "auto").strip()
    if not on or mode == "none":
        return None
    fresh = PROXY_FRESH if fresh is None else int(fresh)
    if fresh < 1:
        raise ValueError(f"vr_proxy_fresh must be at least 1, got {fresh}")
    if mode == "auto":
        specs = [proxy_spec(s) for s in names]
        return (specs, fresh) if specs != names else None
    from agents.registry import split_specs

    specs = split_specs(mode)
    if len(specs) != len(names):
        raise ValueError(f"--vr-proxy needs one spec per distinct agent ({len(names)}), got {len(specs)}")
    for s in specs:  # fail fast on a bad spec, naming the flag
        try:
            make_agent(s, game, seed=0)
        except (ValueError, OSError) as err:
            raise ValueError(f"--vr-proxy {s[:80]!r}: {err}") from None
    return specs, fresh


# ==========================================================================
# Records of a tournament run over chunks
class _RecordWriter:
    """Writes chunks' records to one JSON Lines file in chunk order, whatever order they finish in.

    The records stream to a temporary file beside ``path`` that replaces it
    only once every chunk is in (:class:`~bobshat_env.records.JsonlWriter`):
    an interrupted tournament leaves the old file as it was, and two
    tournaments writing one path leave one whole file, never a mix.
    """

    def __init__(self, path: str | os.PathLike, chunks: int) -> None:
        from bobshat_env.records import JsonlWriter

        self.out = JsonlWriter(path)
        self.chunks = chunks
        self.next, self.waiting, self.count = 0, {}, 0

    def add(self, r: _ChunkResult) -> None:
        """Take a chunk's records; write every chunk that is now next in order."""
        self.waiting[r.index] = r.records
        while self.next in self.waiting:
            self.count += self.out.write(self.waiting.pop(self.next))
            self.next += 1

    def close(self) -> None:
        """Put the file in place if every chunk was written, else drop it."""
        if self.next == self.chunks:
            self.out.commit()
        else:
            self.out.abort()
