"""Self-play: the pool of opponents the PPO learner trains against.

Each game of the training batch seats the learner in one seat (drawn at
random) and one opponent from the pool in all the other seats; with
probability ``self_play_prob`` a game is pure self-play instead (the current
policy in every seat, all of whose decisions are learned from). The pool
holds

- the heuristic bots (``simple``, ``strong``; ``random`` while none is
  registered). They are never evicted and always keep at least
  ``heuristic_floor`` of the probability each, so the learner cannot forget
  how to beat them;
- frozen snapshots of the learner, one added every ``snapshot_every``
  iterations, the oldest evicted beyond ``max_snapshots``;
- exploiters of the learner (:func:`train.ppo.exploiters.add_exploiter`): short
  best responses trained against a frozen copy of it, one added every
  ``exploiters_every`` iterations, the oldest evicted beyond
  ``max_exploiters``.

A pool may also hold one fixed opponent only (:meth:`OpponentPool.fixed`):
the target of an exploit run, any agent spec.

Opponents are drawn by prioritized fictitious self-play (PFSP, as in
AlphaStar): opponent ``j`` has weight ``(1 - w_j) ** pfsp_power`` where
``w_j`` is the learner's recent win share against it (a shared first place
counts ``1 / ties``; an even table gives ``1 / P``), so the opponents the
learner beats least are played most. ``w_j`` is a decayed average that
starts at ``1 / P``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from agents import Agent, available, make_agent
from agents.checkpoint import pool_prefix
from agents.ppo_agent import PolicyNet, PPOAgent, policy_from_tensors
from bobshat_env.games import Game

SELF = -1  # opponent index of a pure self-play game
POLICY_KINDS = ("snapshot", "exploiter")  # members that are networks of the learner's shape, saved as weights


@dataclass
class Member:
    """One opponent of the pool: its agent and the learner's record against it."""

    name: str
    kind: str  # "heuristic" (a bot rebuilt from its spec ``name``), "snapshot" or "exploiter"
    agent: Any
    wins: float = 0.0  # decayed sum of the learner's win shares
    games: float = 0.0  # decayed number of games
    step: int = 0  # global step at which a snapshot was taken
    net: PolicyNet | None = field(default=None, repr=False)

    def win_rate(self, players: int, prior_games: float = 4.0) -> float:
        """The learner's win share against this opponent, shrunk toward ``1 / players``."""
        return (self.wins + prior_games / players) / (self.games + prior_games)


class OpponentPool:
    """Heuristic bots and frozen snapshots, drawn with PFSP weights (module docstring)."""

    def __init__(
        self,
        game: Game,
        heuristics: list[str],
        max_snapshots: int = 8,
        pfsp_power: float = 2.0,
        heuristic_floor: float = 0.1,
        self_play_prob: float = 0.0,
        decay: float = 0.999,
        seed: int = 0,
        snapshot_sample: bool = True,
    ):
        self.game = game
        self.players = game.players
        self.max_snapshots = max_snapshots
        self.pfsp_power = pfsp_power
        self.self_play_prob = self_play_prob
        self.decay = decay
        self.snapshot_sample = snapshot_sample
        self.seed = seed
        self.members: list[Member] = []
        names = [h for h in heuristics if h in available()]
        missing = [h for h in heuristics if h not in available()]
        if missing:
            warnings.warn(f"heuristic bot(s) {', '.join(missing)} not registered; not in the pool", stacklevel=2)
        if not names:
            names = ["random"]
        for i, name in enumerate(names):
            self.members.append(Member(name, "heuristic", make_agent(name, game, seed=self._seed(i))))
        self.heuristic_floor = min(heuristic_floor, 1.0 / len(names))
        self.total_snapshots = 0

    def _seed(self, i: int) -> int:
        return int(np.random.SeedSequence([self.seed, i, len(self.members)]).generate_state(1)[0])

    @classmethod
    def fixed(cls, game: Game, spec: str, agent: Any, seed: int = 0) -> OpponentPool:
        """A pool of one opponent, ``agent`` (built from the agent spec ``spec``), in every game: no self-play,
        no snapshots. A checkpoint saves it by its spec; resuming rebuilds it with ``make_agent(spec)``."""
        pool = cls(game, ["random"], max_snapshots=0, heuristic_floor=1.0, self_play_prob=0.0, seed=seed)
        pool.members = [Member(spec, "heuristic", agent)]
        return pool

    # ----------------------------------------------------------------------
    @property
    def names(self) -> list[str]:
        """The members' names, in pool order."""
        return [m.name for m in self.members]

    def probs(self) -> np.ndarray:
        """Probability of each member as the opponent of a non-self-play game."""
        rates = np.array([m.win_rate(self.players) for m in self.members])
        w = np.maximum(1.0 - rates, 1e-3) ** self.pfsp_power
        p = w / w.sum()
        heur = np.array([m.kind == "heuristic" for m in self.members])
        floor = self.heuristic_floor * heur
        return floor + (1.0 - floor.sum()) * p

    def sample(self, n: int, gen: np.random.Generator) -> np.ndarray:
        """(n,) member indices, ``SELF`` for pure self-play games."""
        idx = gen.choice(len(self.members), size=n, p=self.probs())
        if self.self_play_prob > 0:
            idx[gen.random(n) < self.self_play_prob] = SELF
        return idx

    def record(self, idx: np.ndarray, win_share: np.ndarray) -> None:
        """Update the learner's record against members ``idx`` (``SELF`` games ignored)."""
        ok = idx != SELF
        if not ok.any():
            return
        n = np.bincount(idx[ok], minlength=len(self.members))
        s = np.bincount(idx[ok], weights=win_share[ok], minlength=len(self.members))
        for j, m in enumerate(self.members):
            if n[j]:
                d = self.decay ** n[j]
                m.wins = d * m.wins + s[j]
                m.games = d * m.games + n[j]

    def add_snapshot(self, net: PolicyNet, step: int) -> int | None:
        """Freeze a copy of ``net`` as a new opponent; evict the oldest beyond the limit.

        Returns the index the evicted member had (members after it move down
        by one), or None.
        """
        self.total_snapshots += 1
        seed = self._seed(self.total_snapshots)
        return self._add_policy("snapshot", net, step, self.snapshot_sample, seed, self.max_snapshots)

    def add_exploiter(self, net: PolicyNet, step: int, max_exploiters: int) -> int | None:
        """Add a frozen copy of the exploiter ``net`` (trained against the policy at ``step``), playing greedily:
        its greedy play is what was measured to beat the policy. Evicts the oldest beyond ``max_exploiters``;
        returns the index the evicted member had, or None."""
        seed = self._seed(10_000 + step)
        return self._add_policy("exploiter", net, step, False, seed, max_exploiters)

    def _add_policy(self, kind: str, net: PolicyNet, step: int, sample: bool, seed: int, limit: int) -> int | None:
        frozen = net.clone_frozen()
        frozen.eval().requires_grad_(False)
        name = f"{kind}@{step}"
        agent = PPOAgent(frozen, sample=sample, seed=seed, name=name)
        self.members.append(Member(name, kind, agent, step=step, net=frozen))
        same = [i for i, m in enumerate(self.members) if m.kind == kind]
        if len(same) > limit:
            del self.members[same[0]]
            return same[0]
        return None

    # ----------------------------------------------------------------------
    # Checkpointing: snapshot weights as tensors, the rest as JSON
    def state(self) -> tuple[dict[int, dict[str, torch.Tensor]], dict[str, Any]]:
        """The members' networks by index and the pool's metadata, for :func:`agents.checkpoint.save_training_state`
        (which lays the networks out as ``pool.<i>.*`` tensors)."""
        nets: dict[int, dict[str, torch.Tensor]] = {}
        meta = []
        for i, m in enumerate(self.members):
            meta.append({"name": m.name, "kind": m.kind, "wins": m.wins, "games": m.games, "step": m.step})
            if m.net is not None:
                nets[i] = m.net.state_dict()
        return nets, {"members": meta, "total_snapshots": self.total_snapshots}

    def load_state(self, tensors: dict[str, torch.Tensor], meta: dict[str, Any], net_meta: dict[str, Any]) -> None:
        """Restore members saved by :meth:`state`: networks from their weights; a heuristic this pool already
        holds under the same name (spec) is kept as it is (an exploit run's target: the very agent it was
        given), another is rebuilt with ``make_agent(name)``."""
        kept = {m.name: m.agent for m in self.members if m.kind == "heuristic"}
        self.members = []
        self.total_snapshots = int(meta["total_snapshots"])
        for i, d in enumerate(meta["members"]):
            if d["kind"] in POLICY_KINDS:
                net = policy_from_tensors(tensors, net_meta, prefix=pool_prefix(i))
                net.eval().requires_grad_(False)
                sample = self.snapshot_sample and d["kind"] == "snapshot"
                agent: Agent = PPOAgent(net, sample=sample, seed=self._seed(1000 + i), name=d["name"])
            elif d["name"] in kept:
                net, agent = None, kept[d["name"]]
            else:
                net, agent = None, make_agent(d["name"], self.game, seed=self._seed(i))
            self.members.append(Member(d["name"], d["kind"], agent, d["wins"], d["games"], d["step"], net))
        heur = sum(m.kind == "heuristic" for m in self.members)
        self.heuristic_floor = min(self.heuristic_floor, 1.0 / max(heur, 1))
