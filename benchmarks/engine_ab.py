"""Two checkouts' engines in one process, paired: ``python -m benchmarks.engine_ab --repo OLD``.

Separate processes on a shared machine run 10-30% apart in speed from one to the next
(docs/results/engineering.md, "Comparing two checkouts' speed on this machine"), more than most
changes one wants to see. Here the other checkout's engine package is imported beside this one's,
under another name (``bobshat_env`` imports itself only relatively, so a second copy loads whole), and
the two play the same random games in short alternating slices of process CPU time on one numba
thread. Each pair of slices gives a ratio (the other checkout's decisions/s over this one's); the
median of the pairs is the comparison, and its quartiles say how steady it was.

What one decision costs here is what ``bobshat bench``'s engine rows time: the game's ``step`` with
the legal mask given, a new game when the batch's games end (games of one table all last the same
number of decisions, so the whole batch restarts together), the next legal mask, and
:func:`agents.base.sample_masked` (this checkout's, for both). It reaches the engine only through
the game module functions every version has had: ``init``, ``step``, ``legal_action_mask``, and the
game's description (``bobshat_env.games.describe``) for its config.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parents[1]
GAMES = ("bobs_hat", "oh_hell")
PLAYERS = 4


def load_engine(repo: str | Path, name: str) -> ModuleType:
    """The ``bobshat_env`` package of checkout ``repo``, imported as ``name`` (``bobshat_env`` itself for this
    checkout under its own name; this checkout under another name is a second copy, as a test compares)."""
    root = Path(repo).resolve()
    if root == HERE and name == "bobshat_env":
        return importlib.import_module("bobshat_env")
    init = root / "bobshat_env" / "__init__.py"
    if not init.is_file():
        raise ValueError(f"{repo} is not a bobshat checkout (no bobshat_env/__init__.py)")
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=[str(init.parent)])
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # before it runs: its submodules import it by this name
    spec.loader.exec_module(module)
    return module


class Loop:
    """One checkout's engine playing random games of one table at batch ``batch``, a slice at a time."""

    def __init__(self, package: ModuleType, game: str, batch: int, seed: int = 0):
        from agents.base import sample_masked

        self.core = importlib.import_module(f"{package.__name__}.core.{game}")
        games = importlib.import_module(f"{package.__name__}.games")  # that checkout's own descriptions
        self.cfg = games.describe(game).config_cls(players=PLAYERS)
        self.batch, self.seed, self.played = batch, seed, 0
        self.sample = sample_masked
        self.gen = np.random.default_rng(seed)
        self._new_games()

    def _new_games(self) -> None:
        keys = np.arange(self.batch, dtype=np.uint64) + np.uint64(self.seed + 100_003 * self.played)
        self.state = self.core.init(self.cfg, keys)
        self.mask = self.core.legal_action_mask(self.cfg, self.state)

    def run(self, seconds: float) -> float:
        """Play for at least ``seconds`` of process CPU time; decisions per CPU second."""
        core, cfg, steps = self.core, self.cfg, 0
        t0 = time.process_time()
        while True:
            result = core.step(cfg, self.state, self.sample(self.mask, self.gen), legal=self.mask)
            steps += 1
            if result.game_done.any():
                self.played += 1
                self._new_games()
            else:
                core.legal_action_mask(cfg, self.state, out=self.mask)
            spent = time.process_time() - t0
            if spent >= seconds:
                return steps * self.batch / spent


def compare(
    repo: str | Path, games: Sequence[str], batches: Sequence[int], pairs: int, seconds: float
) -> dict[str, dict[str, float]]:
    """Per case (``"<game> B=<batch>"``): the median of the paired ratios (``repo``'s decisions/s over this
    checkout's), their quartiles, and this checkout's median decisions/s."""
    import numba

    numba.set_num_threads(1)
    ours, theirs = load_engine(HERE, "bobshat_env"), load_engine(repo, "bobshat_env_ab")
    out = {}
    for game in games:
        for b in batches:
            loops = Loop(ours, game, b), Loop(theirs, game, b)
            for loop in loops:
                loop.run(max(seconds, 0.2))  # compiled and warm before anything counts
            ratios, rates = [], []
            for i in range(pairs):
                first = i % 2  # each side goes first half of the time
                got = [0.0, 0.0]
                for side in (first, 1 - first):
                    got[side] = loops[side].run(seconds)
                ratios.append(got[1] / got[0])
                rates.append(got[0])
            q = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [ratios[0]] * 3
            out[f"{game} B={b}"] = {"ratio": statistics.median(ratios), "q1": q[0], "q3": q[2],
                                    "decisions_per_s": statistics.median(rates)}  # fmt: skip
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="two checkouts' engines in one process, paired slices")
    ap.add_argument("--repo", required=True, help="the other checkout (a folder; for a commit: git worktree add)")
    ap.add_argument("--game", action="append", choices=GAMES, help="game (repeatable; default both)")
    ap.add_argument("--batch", type=int, action="append", help="batch size (repeatable; default 1 and 1024)")
    ap.add_argument("--pairs", type=int, default=40, help="pairs of slices per case (default 40)")
    ap.add_argument("--seconds", type=float, default=0.1, help="CPU seconds per slice (default 0.1)")
    a = ap.parse_args(argv)
    if a.pairs < 1 or not 0 < a.seconds <= 60 or any(b < 1 for b in a.batch or ()):
        ap.error("--pairs and --batch must be at least 1 and --seconds in (0, 60]")
    if not (Path(a.repo) / "bobshat_env" / "__init__.py").is_file():
        ap.error(f"--repo {a.repo!r} is not a bobshat checkout (no bobshat_env/__init__.py)")
    res: dict[str, Any] = compare(a.repo, a.game or GAMES, a.batch or [1, 1024], a.pairs, a.seconds)
    print(f"{'case':<16} {'other / this':>12}  {'quartiles':>13}  {'this, decisions/s':>18}")
    for case, r in res.items():
        print(f"{case:<16} {r['ratio']:>12.3f}  {r['q1']:.3f}-{r['q3']:.3f}  {r['decisions_per_s']:>18,.0f}")
    print(f"other: {Path(a.repo).resolve()}; above 1: the other checkout is faster")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
