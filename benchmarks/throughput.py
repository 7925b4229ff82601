"""Throughput with random legal play: bobshat's vector and AEC envs, and peers.

Run it as ``bobshat bench [--json FILE] [--quick]``. Every system plays
**whole games** with uniformly random legal actions, and the timed region
holds everything a training loop would pay for per decision: the step, the
acting seat's observation and legal actions, and the harness drawing an
action uniformly among the legal ones.

=========================  ====================================================
system / interface         what one decision costs in the timed loop
=========================  ====================================================
bobshat ``vector``         :class:`~bobshat_env.vector.VectorEnv` with B games
                           (B >= 512 on all of numba's threads, see
                           :mod:`bobshat_env.core.compiled`)
                           (private view, ``copy_obs=False``: the observation
                           is written every step into the env's buffer, which
                           a rollout buffer then copies), the (B, A) mask, and
                           :func:`agents.base.sample_masked`; one step is B
                           decisions. Same-step autoreset keeps slots full.
bobshat ``engine``         the same loop without the observation: the game's
                           step, same-step autoreset, the (B, A) mask and
                           :func:`agents.base.sample_masked`, at the largest
                           B, on all of numba's threads and on one (the
                           ``threads`` column; per thread = decisions/s /
                           threads).
bobshat ``aec`` (B = 1)    ``<game>_v0.env()`` of every game in
                           PettingZoo's loop: ``agent_iter``,
                           ``last()`` (observation vector + int8 mask),
                           a ``random.Random`` choice among the mask's
                           nonzeros, ``step``.
open_spiel ``oh_hell``     ``pyspiel.load_game("oh_hell", {"players": 4})``
(``aec``: one game, turn   from Python: chance nodes sampled from
by turn)                   ``chance_outcomes()``; at each decision
                           ``information_state_tensor(player)`` as a float32
                           array (oh_hell has no observation tensor; it is
                           4,644 floats), ``legal_actions()``, a uniform
                           choice, ``apply_action``. An OpenSpiel oh_hell game
                           is one hand with a random number of tricks, so
                           compare decisions/s, not games/s.
pettingzoo ``leduc``       ``pettingzoo.classic.leduc_holdem_v4.env()`` (needs
(``aec``)                  ``rlcard``) in the same loop as bobshat's AEC env.
=========================  ====================================================

decisions/s counts agent decisions, not chance events nor the AEC loop's
``step(None)`` calls for finished agents. games/s counts whole games. A
repetition plays whole *cycles* (vector: until every slot has finished a
game, which with equal-length games is exactly one game per slot; sequential:
one game) until it has run at least ``min_seconds``; each figure is the median
over repetitions, after a warm-up. bytes_per_game is the summed ``nbytes`` of
the core state's arrays divided by B (bobshat only). Times are wall-clock
(``time.perf_counter``) unless ``clock="cpu"`` (process CPU time, steadier on
a shared machine).
"""

from __future__ import annotations

import contextlib
import json
import random
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Protocol

import numpy as np

FULL_BATCHES = (1, 64, 1024, 4096, 16384)
QUICK_BATCHES = (1, 64, 1024)
PLAYERS = 4
SYSTEM = "bobshat"
OPEN_SPIEL = "open_spiel"
PETTINGZOO = "pettingzoo"


@dataclass(frozen=True)
class Settings:
    """How long and how often each measurement runs.

    reps: repetitions per measurement; the median is reported. After
    ``min_reps`` repetitions a measurement stops early once it has spent
    ``budget_seconds`` (a cycle at B = 16384 takes seconds). min_seconds: the
    least a repetition runs (it is made of whole cycles). warmup_seconds: play
    before timing (the vector env is then reset so that cycles start at a game
    start). clock: ``"wall"`` or ``"cpu"``.
    """

    reps: int = 5
    min_reps: int = 3
    min_seconds: float = 1.0
    budget_seconds: float = 30.0
    warmup_seconds: float = 0.3
    clock: str = "wall"

    def __post_init__(self) -> None:
        if self.reps < 1 or self.min_reps < 1:
            raise ValueError(f"reps and min_reps must be at least 1, got {self.reps} and {self.min_reps}")
        if min(self.min_seconds, self.budget_seconds, self.warmup_seconds) < 0:
            raise ValueError("min_seconds, budget_seconds and warmup_seconds must be >= 0")
        if self.clock not in ("wall", "cpu"):
            raise ValueError(f"clock must be 'wall' or 'cpu', got {self.clock!r}")

    def timer(self) -> Callable[[], float]:
        return time.perf_counter if self.clock == "wall" else time.process_time


FULL = Settings()
QUICK = Settings(reps=3, min_seconds=0.2, budget_seconds=4.0, warmup_seconds=0.1)
TINY = Settings(reps=1, min_reps=1, min_seconds=0.0, budget_seconds=0.0, warmup_seconds=0.0)


@dataclass
class Row:
    """One measurement; ``asdict`` of it is one row of ``--json``."""

    system: str  # "bobshat", or the peer's name
    game: str
    interface: str  # "vector", "engine" (the vector env without observations) or "aec" (one game, turn by turn)
    batch: int
    decisions_per_s: float
    games_per_s: float
    bytes_per_game: float | None  # summed nbytes of the state arrays / B; None for peers
    threads: int = 1  # threads the measurement ran on (numba's, for bobshat's large batches)
    vs: dict[str, float] = field(default_factory=dict)  # our decisions/s divided by each peer's (bobshat rows)

    @property
    def per_thread(self) -> float:
        """decisions/s per thread (per core when each thread has a core of its own)."""
        return self.decisions_per_s / self.threads


class Runner(Protocol):
    """A system under test: plays whole cycles of games with random legal actions."""

    bytes_per_game: float | None

    def warm(self, seconds: float) -> None:
        """Play untimed for about ``seconds``; leave the runner at a game start."""
        ...

    def cycle(self) -> tuple[int, int]:
        """Play until every game in flight has finished once: (decisions, games finished)."""
        ...


def state_bytes(state: Any) -> int:
    """Summed ``nbytes`` of a core state's arrays (a dataclass of arrays)."""
    return sum(int(getattr(state, f.name).nbytes) for f in fields(state))


class VectorRunner:
    """bobshat's :class:`VectorEnv` with B games and :func:`sample_masked`."""

    def __init__(self, game: str, batch: int, seed: int = 0, **options: Any):
        from agents.base import sample_masked
        from bobshat_env.vector import VectorEnv

        self._sample = sample_masked
        self.env = VectorEnv(game, num_envs=batch, copy_obs=False, players=PLAYERS, **options)
        self.seed = seed
        self.gen = np.random.default_rng(seed)
        self.ts = self.env.reset(seed=seed)
        self.bytes_per_game = state_bytes(self.env.state) / batch

    def warm(self, seconds: float) -> None:
        t0, n = time.perf_counter(), 0
        while n < 2 or time.perf_counter() - t0 < seconds:
            self.ts = self.env.step(self._sample(self.ts.action_mask, self.gen))
            n += 1
        self.ts = self.env.reset(seed=self.seed + 1)

    def cycle(self) -> tuple[int, int]:
        env, gen, sample, ts = self.env, self.gen, self._sample, self.ts
        finished = np.zeros(env.num_envs, dtype=bool)
        steps = games = 0
        while not finished.all():
            ts = env.step(sample(ts.action_mask, gen))
            steps += 1
            if ts.done.any():
                finished |= ts.done
                games += int(np.count_nonzero(ts.done))
        self.ts = ts
        return steps * env.num_envs, games


class EngineRunner:
    """The engine without observations: what :class:`VectorEnv` does per step (the game's step, same-step
    autoreset, the acting seats' legal mask) but no observation, with :func:`sample_masked`."""

    def __init__(self, game: str, batch: int, seed: int = 0, **options: Any):
        from agents.base import sample_masked
        from bobshat_env.core import rng
        from bobshat_env.games import make_game

        self._sample, self._rng = sample_masked, rng
        self.game = make_game(game, players=PLAYERS, **options)
        self.batch, self.seed = batch, seed
        self.gen = np.random.default_rng(seed)
        self.mask = np.empty((batch, self.game.n_actions), dtype=bool)
        self._start(seed)
        self.bytes_per_game = state_bytes(self.state) / batch

    def _start(self, seed: int) -> None:
        self.base = self._rng.seed_to_base(seed)
        self.played = np.zeros(self.batch, dtype=np.int64)
        self.state = self.game.init(self._rng.game_keys(self.base, np.arange(self.batch), 0))
        self.game.legal_action_mask(self.state, out=self.mask)

    def _step(self) -> np.ndarray:
        """One decision in every game; the games that ended (their slots restarted)."""
        game, state = self.game, self.state
        done = game.step(state, self._sample(self.mask, self.gen), legal=self.mask).game_done
        idx = np.flatnonzero(done)
        if idx.size:
            self.played[idx] += 1
            state.put(idx, game.init(self._rng.game_keys(self.base, idx, self.played[idx])))
        game.legal_action_mask(state, out=self.mask)
        return done

    def warm(self, seconds: float) -> None:
        t0, n = time.perf_counter(), 0
        while n < 2 or time.perf_counter() - t0 < seconds:
            self._step()
            n += 1
        self._start(self.seed + 1)

    def cycle(self) -> tuple[int, int]:
        finished = np.zeros(self.batch, dtype=bool)
        steps = games = 0
        while not finished.all():
            done = self._step()
            steps += 1
            if done.any():
                finished |= done
                games += int(np.count_nonzero(done))
        return steps * self.batch, games


@contextlib.contextmanager
def numba_threads(n: int | None) -> Iterator[int]:
    """Run the block on ``n`` of numba's threads (None: all of them); yields the count in use."""
    import numba

    before = numba.get_num_threads()
    numba.set_num_threads(before if n is None else min(n, numba.config.NUMBA_NUM_THREADS))
    try:
        yield numba.get_num_threads()
    finally:
        numba.set_num_threads(before)


def kernel_threads(batch: int) -> int:
    """The threads bobshat's batch kernels run ``batch`` games on (:mod:`bobshat_env.core.compiled`)."""
    import numba

    from bobshat_env.core.compiled import PARALLEL_MIN_BATCH

    return numba.get_num_threads() if batch >= PARALLEL_MIN_BATCH else 1


class AECRunner:
    """A PettingZoo AEC env (ours or a peer's) in the standard ``agent_iter`` loop."""

    def __init__(self, env: Any, seed: int = 0, ours: bool = True):
        self.env = env
        self.rnd = random.Random(seed)
        env.reset(seed=seed)
        self.bytes_per_game = float(state_bytes(env.unwrapped.state)) if ours else None
        self._fresh = True

    def warm(self, seconds: float) -> None:
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            self.cycle()

    def cycle(self) -> tuple[int, int]:
        env, rnd = self.env, self.rnd
        if not self._fresh:
            env.reset()
        self._fresh = False
        decisions = 0
        for _agent in env.agent_iter():
            obs, _reward, term, trunc, _info = env.last()
            if term or trunc:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rnd.randrange(legal.size)]))
            decisions += 1
        return decisions, 1


class OpenSpielRunner:
    """OpenSpiel's ``oh_hell`` from Python, one game at a time (see the module docstring)."""

    def __init__(self, seed: int = 0, players: int = PLAYERS):
        import pyspiel

        self.game = pyspiel.load_game("oh_hell", {"players": players})
        self.rnd = random.Random(seed)
        self.bytes_per_game = None

    def warm(self, seconds: float) -> None:
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            self.cycle()

    def cycle(self) -> tuple[int, int]:
        rnd = self.rnd
        state = self.game.new_initial_state()
        decisions = 0
        while not state.is_terminal():
            if state.is_chance_node():
                actions, probs = zip(*state.chance_outcomes())
                state.apply_action(rnd.choices(actions, probs)[0])
                continue
            player = state.current_player()
            np.asarray(state.information_state_tensor(player), dtype=np.float32)
            legal = state.legal_actions()
            state.apply_action(legal[rnd.randrange(len(legal))])
            decisions += 1
        return decisions, 1


def measure(
    system: str, game: str, interface: str, batch: int, runner: Runner, settings: Settings, threads: int = 1
) -> Row:
    """Warm up, then the median decisions/s and games/s over repetitions of whole cycles."""
    clock = settings.timer()
    runner.warm(settings.warmup_seconds)
    dps: list[float] = []
    gps: list[float] = []
    start = clock()
    for rep in range(settings.reps):
        if rep >= settings.min_reps and clock() - start > settings.budget_seconds:
            break
        decisions = games = 0
        t0 = clock()
        while True:
            d, g = runner.cycle()
            decisions, games = decisions + d, games + g
            elapsed = clock() - t0
            if elapsed >= settings.min_seconds:
                break
        elapsed = max(elapsed, 1e-9)
        dps.append(decisions / elapsed)
        gps.append(games / elapsed)
    median = statistics.median
    return Row(system, game, interface, batch, median(dps), median(gps), runner.bytes_per_game, threads)


def run(
    batches: Sequence[int] = FULL_BATCHES,
    settings: Settings = FULL,
    peers: bool = True,
    games: Sequence[str] | None = None,
    seed: int = 0,
    log: Callable[[str], None] | None = None,
) -> tuple[list[Row], list[str]]:
    """Measure every system; returns the rows and notes on what was skipped and why.

    Per game (default: every game bobshat has): the vector env at each batch
    size, the engine without observations at the largest batch on all of
    numba's threads and on one, and the AEC env; then the peers. Each of our
    rows gets its ratios to the peers' decisions/s (:attr:`Row.vs`).
    """
    from bobshat_env.games import GAMES

    batches = [int(b) for b in batches]
    if not batches or min(batches) < 1:
        raise ValueError(f"batch sizes must be positive integers, got {batches}")
    rows: list[Row] = []
    notes: list[str] = []
    say = log or (lambda _msg: None)

    def add(row: Row) -> None:
        rows.append(row)
        say(f"  {row.system:<10} {row.game:<12} {row.interface:<6} B={row.batch:<6} t={row.threads} "
            f"{row.decisions_per_s:>12,.0f}/s")  # fmt: skip

    for game in GAMES if games is None else games:
        for b in batches:
            add(measure(SYSTEM, game, "vector", b, VectorRunner(game, b, seed=seed), settings, kernel_threads(b)))
        b = max(batches)
        for threads in (None, 1) if kernel_threads(b) > 1 else (1,):
            with numba_threads(threads):
                runner = EngineRunner(game, b, seed=seed)
                add(measure(SYSTEM, game, "engine", b, runner, settings, kernel_threads(b)))
        aec = _our_aec(game)
        if aec is None:
            notes.append(f"bobshat {game} AEC skipped: bobshat_env.{game}_v0 is not available")
            say(notes[-1])
        else:
            add(measure(SYSTEM, game, "aec", 1, AECRunner(aec, seed=seed), settings))
    if peers:
        _measure_peers(settings, seed, add, notes, say)
    rates = peer_rates(rows)
    for row in rows:
        if row.system == SYSTEM:
            row.vs = {peer: row.decisions_per_s / rate for peer, rate in rates.items()}
    return rows, notes


def _measure_peers(
    settings: Settings, seed: int, add: Callable[[Row], None], notes: list[str], say: Callable[[str], None]
) -> None:
    """OpenSpiel's oh_hell and PettingZoo's leduc_holdem, each where it is installed."""
    try:
        runner: Runner = OpenSpielRunner(seed=seed)
    except ImportError as err:
        notes.append(f"open_spiel skipped: {err}")
        say(notes[-1])
    else:
        add(measure(OPEN_SPIEL, "oh_hell", "aec", 1, runner, settings))
    try:
        leduc = _leduc_env()
    except Exception as err:  # ImportError, or pettingzoo's FailedToImport when rlcard is missing
        notes.append(f"pettingzoo leduc_holdem_v4 skipped ({type(err).__name__}: {err}); pip install rlcard pygame")
        say(notes[-1])
    else:
        add(measure(PETTINGZOO, "leduc_holdem", "aec", 1, AECRunner(leduc, seed=seed, ours=False), settings))


def _our_aec(game: str) -> Any:
    """``bobshat_env.<game>_v0.env(players=4)``, or None if that module does not exist yet."""
    import importlib

    try:
        module = importlib.import_module(f"bobshat_env.{game}_v0")
    except ModuleNotFoundError:
        return None
    return module.env(players=PLAYERS)


def _leduc_env() -> Any:
    """PettingZoo's ``leduc_holdem_v4`` AEC env, through the registry where it exists (1.27+)."""
    import pettingzoo

    make = getattr(pettingzoo, "make", None)
    if make is not None:
        return make("aec", "classic/leduc_holdem-v4")
    from pettingzoo.classic import leduc_holdem_v4

    return leduc_holdem_v4.env()


def peer_rates(rows: Sequence[Row]) -> dict[str, float]:
    """decisions/s of each peer measured in ``rows``."""
    return {r.system: r.decisions_per_s for r in rows if r.system != SYSTEM}


def format_table(rows: Sequence[Row], notes: Sequence[str] = (), settings: Settings | None = None) -> str:
    """A Markdown table of the rows, with our decisions/s as ratios to each peer's, and what the engine
    makes of its threads."""
    peers = peer_rates(rows)
    head = ["system", "game", "interface", "B", "threads", "decisions/s", "per thread", "games/s", "state bytes/game"]
    head += [f"vs {p}" for p in peers]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [
            r.system,
            r.game,
            r.interface,
            str(r.batch),
            str(r.threads),
            f"{r.decisions_per_s:,.0f}",
            f"{r.per_thread:,.0f}",
            f"{r.games_per_s:,.1f}" if r.games_per_s >= 10 else f"{r.games_per_s:.3g}",
            "" if r.bytes_per_game is None else f"{r.bytes_per_game:,.0f}",
        ]
        cells += [f"{r.vs[p]:.2f}x" if p in r.vs else "" for p in peers]
        lines.append("| " + " | ".join(cells) + " |")
    if settings is not None:
        lines.append("")
        lines.append(
            f"Median of {settings.reps} repetitions (at least {settings.min_reps}) of at least "
            f"{settings.min_seconds:g} s of whole games each, after {settings.warmup_seconds:g} s of warm-up; "
            f"{settings.clock} clock. 'vs X': our decisions/s divided by X's, in this run. 'engine': the "
            "vector env's step, autoreset and legal mask without the observation. 'per thread': decisions/s / "
            "threads (with the cpu clock, decisions/s is already per CPU second of all threads together)."
        )
        lines.append(_threads_line())
    lines += [f"- {line}" for line in summary(rows)]
    lines += [f"- {n}" for n in notes]
    return "\n".join(lines)


def summary(rows: Sequence[Row]) -> list[str]:
    """Per game, at the largest batch: the vector env with and without observations, and the engine per thread."""
    out = []
    for game in dict.fromkeys(r.game for r in rows if r.system == SYSTEM):
        ours = [r for r in rows if r.system == SYSTEM and r.game == game and r.interface in ("vector", "engine")]
        if not ours:
            continue
        b = max(r.batch for r in ours)
        vec = [r for r in ours if r.interface == "vector" and r.batch == b]
        eng = sorted((r for r in ours if r.interface == "engine" and r.batch == b), key=lambda r: r.threads)
        parts = [f"{game}, B={b}:"]
        for r in vec + eng:
            what = "vector env (observation + mask)" if r.interface == "vector" else "without observations"
            vs = ", ".join(f"{x:.1f}x {p}" for p, x in r.vs.items())
            parts.append(f"{what} on {r.threads} thread(s) {r.decisions_per_s:,.0f}/s" + (f" ({vs})" if vs else ""))
        if eng:
            parts.append("engine per thread: " + ", ".join(f"{r.per_thread:,.0f}/s on {r.threads}" for r in eng))
        out.append(" ".join(parts[:1]) + " " + "; ".join(parts[1:]))
    return out


def _threads_line() -> str:
    """How many cores bobshat's kernels used (peers run on one)."""
    import numba

    from bobshat_env.core.compiled import PARALLEL_MIN_BATCH

    n = numba.get_num_threads()
    if n == 1:
        return "bobshat ran on 1 thread (NUMBA_NUM_THREADS=1); the peers run on one."
    return (
        f"bobshat's vector env split batches of B >= {PARALLEL_MIN_BATCH} over {n} numba threads "
        "(NUMBA_NUM_THREADS=1 for one); smaller batches, the AEC env and the peers run on one."
    )


def rows_json(rows: Sequence[Row]) -> str:
    """The rows as a JSON list of objects, one line break at the end (the ``--json`` format)."""
    return json.dumps([asdict(r) for r in rows], indent=1) + "\n"


def write_json(rows: Sequence[Row], path: str) -> None:
    """Write the rows to ``path`` in the ``--json`` format, in one step: a full disk never leaves half a file
    (:func:`bobshat_env.paths.replace_bytes`)."""
    from bobshat_env.paths import replace_bytes

    replace_bytes(path, rows_json(rows).encode("utf-8"))


def bench(
    json_path: str | None = None,
    quick: bool = False,
    batches: Sequence[int] | None = None,
    reps: int | None = None,
    seconds: float | None = None,
    peers: bool = True,
    clock: str = "wall",
    log: Callable[[str], None] | None = None,
) -> tuple[list[Row], str]:
    """What ``bobshat bench`` does: measure, format, optionally write JSON.

    ``reps``/``seconds`` override the preset's repetitions and least seconds
    per repetition (``seconds=0`` with ``reps=1`` is the tests' tiny mode:
    one cycle per measurement, no warm-up).
    """
    settings = QUICK if quick else FULL
    changes: dict[str, Any] = {"clock": clock}
    if reps is not None:
        changes.update(reps=reps, min_reps=min(reps, settings.min_reps))
    if seconds is not None:
        changes.update(min_seconds=seconds, warmup_seconds=min(seconds, settings.warmup_seconds))
    settings = Settings(**{**asdict(settings), **changes})
    if batches is None:
        batches = QUICK_BATCHES if quick else FULL_BATCHES
    rows, notes = run(batches, settings, peers=peers, log=log)
    if json_path:
        write_json(rows, json_path)
    return rows, format_table(rows, notes, settings)


# --------------------------------------------------------------------------
# Two checkouts, interleaved: ``python benchmarks/throughput.py --repo OLD`` measures the engine and the vector
# env of this checkout and of each ``--repo`` in a fresh interpreter per measurement (PYTHONPATH = that
# checkout), alternating the order each repetition so that a noisy machine's drift falls on both alike, and
# prints the medians and each checkout's ratio to this one. Process CPU time on one numba thread: steadier on a
# shared machine than wall time.
_CHILD = """
import json
from benchmarks.throughput import EngineRunner, Settings, VectorRunner, measure
s = Settings(reps=1, min_reps=1, min_seconds={seconds}, budget_seconds=0, warmup_seconds=0.3, clock="cpu")
out = {{}}
for game in {games!r}:
    for name, cls in (("engine", EngineRunner), ("vector", VectorRunner)):
        for b in {batches!r}:
            out[f"{{game}} {{name}} B={{b}}"] = measure("bobshat", game, name, b, cls(game, b), s).decisions_per_s
print(json.dumps(out))
"""


def measure_checkout(repo: str, games: Sequence[str], batches: Sequence[int], seconds: float) -> dict[str, float]:
    """decisions/s per case of checkout ``repo``, measured in a fresh interpreter that imports that checkout."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": repo, "NUMBA_NUM_THREADS": "1"}
    code = _CHILD.format(games=tuple(games), batches=tuple(batches), seconds=seconds)
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=repo, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"measuring {repo} failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: Sequence[str] | None = None) -> int:
    """Compare this checkout with ``--repo`` checkouts, interleaved (see the comment above ``_CHILD``)."""
    import argparse
    from pathlib import Path

    ap = argparse.ArgumentParser(description="engine and vector env decisions/s of checkouts, interleaved")
    ap.add_argument("--repo", action="append", default=[], help="another checkout to measure (repeatable)")
    ap.add_argument("--reps", type=int, default=3, help="repetitions per checkout (default 3)")
    ap.add_argument("--batch", type=int, action="append", help="batch size (repeatable; default 1 and 1024)")
    ap.add_argument("--game", action="append", help="game (repeatable; default bobs_hat and oh_hell)")
    ap.add_argument("--seconds", type=float, default=1.0, help="least CPU seconds per measurement (default 1)")
    a = ap.parse_args(argv)
    if a.reps < 1 or a.seconds <= 0 or any(b < 1 for b in a.batch or ()):
        ap.error("--reps and --batch must be at least 1 and --seconds positive")
    here = str(Path(__file__).resolve().parents[1])
    repos = [here, *(str(Path(r).resolve()) for r in a.repo)]
    for repo in a.repo:  # a commit id or a typo is refused before minutes of measuring, not after
        if not (Path(repo) / "benchmarks" / "throughput.py").is_file():
            ap.error(f"--repo {repo!r} is not a bobshat checkout (a folder with benchmarks/throughput.py); "
                     "for a commit, make one with `git worktree add --detach DIR COMMIT`")
    games, batches = a.game or ["bobs_hat", "oh_hell"], a.batch or [1, 1024]
    got: dict[str, list[dict[str, float]]] = {r: [] for r in repos}
    for rep in range(a.reps):
        for repo in repos if rep % 2 == 0 else repos[::-1]:
            got[repo].append(measure_checkout(repo, games, batches, a.seconds))
    med = {r: {case: statistics.median(run[case] for run in runs) for case in runs[0]} for r, runs in got.items()}
    for case in med[here]:
        cells = "  ".join(f"{med[r][case]:>12,.0f}/s ({med[r][case] / med[here][case]:.3f})" for r in repos)
        print(f"{case:<28} {cells}")
    print("columns: " + ", ".join(repos) + "; (ratio to this checkout)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
