"""Recording batched play: :class:`Recorder` turns core steps into game records (docs/records.md).

Recording (any batch size, games finishing at different steps)::

    state = bobs_hat.init(cfg, keys)
    rec = Recorder(cfg, state, agents=["random"] * cfg.players)
    while not (state.phase == bobs_hat.DONE).all():
        res, finished = rec.step(state, actions)   # or call record() around core.step
        records.extend(finished)

A driver that steps the core itself snapshots ``phase`` and ``cur`` before the
step and calls :meth:`Recorder.record` after it; a vector env that resets
finished slots calls :meth:`Recorder.start` for them (optional: a slot whose
game finished is ready for the next one). The per-step work is a few array
operations over the batch; Python only runs per finished game, to build its
dict. The game's own parts of a record come from its adapter
(:class:`~bobshat_env.records.rules.RecordRules`).

Each record's ``seed`` is the game's 64-bit chance key: ``init(cfg,
np.array([seed], dtype=np.uint64))`` deals the same first hand again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .rules import FORMAT, Entries, is_int, rules_for

if TYPE_CHECKING:
    from ..core.config import GameConfig
    from ..games import Game

_ENTRY_ARRAYS = (
    "_hand_no",
    "_dealer",
    "_trump",
    "_owner",
    "_extra",
    "_bids",
    "_plays",
    "_n_plays",
    "_leaders",
    "_winners",
    "_scores",
    "_renege",
    "_taken",
    "_holder",
)


class Recorder:
    """Turns batched play into record dicts (docs/records.md), one per finished game.

    Args:
        game: a :class:`~bobshat_env.games.Game` or a ``BobsHatConfig`` /
            ``OhHellConfig``.
        state: the batch's state right after ``init`` (gives the batch size).
        ids: what the arena's ``recorder_factory(game, state, ids)``
            knows; accepted so that it can pass them, not needed: a record's
            ``seed`` is its game's own chance key, which redeals it whatever
            keys the driver chose (``rng.game_keys`` or explicit duplicates).
        seed: accepted for the same reason as ``ids``, not needed.
        agents: names of the agents by seat, written in every record
            (default ``"unknown"``); :meth:`start` can change them per slot.
        keep: keep finished records for :meth:`records` (else only returned
            by :meth:`record`).

    Record every step of a game from its first action: call :meth:`record`
    (or :meth:`observe_step`, or let :meth:`step` do both) after each core
    step. Per-hand data sits in arrays with a hand-entry axis that grows if
    reneges need more entries; nothing loops over the batch per step.
    """

    def __init__(
        self,
        game: Game | GameConfig,
        state: Any,
        ids: np.ndarray | None = None,
        *,
        seed: int | None = None,
        agents: list[str] | None = None,
        keep: bool = True,
    ) -> None:
        self.rules, self.cfg = rules_for(game)
        self.players = P = self.cfg.players
        self.batch_size = B = int(state.phase.shape[0])
        default = self._check_agents(agents) if agents is not None else ["unknown"] * P
        self._agents: list[list[str]] = [list(default) for _ in range(B)]
        self._seeds: list[int | None] = [None] * B
        self.keep = keep
        self._done: list[dict] = []
        T = self.rules.max_tricks(self.cfg)
        E = self.cfg.hands + 2
        self._n_entries = np.zeros(B, dtype=np.int64)  # hand entries closed so far = index of the open one
        self._open = np.zeros(B, dtype=bool)  # a hand entry is being recorded
        self._skip = np.zeros(B, dtype=bool)  # joined mid-game: ignored until the game ends
        self._key = np.zeros(B, dtype=np.uint64)
        # (B, E, ...) per hand entry
        self._hand_no = np.zeros((B, E), dtype=np.int16)
        self._dealer = np.zeros((B, E), dtype=np.int8)
        self._trump = np.zeros((B, E), dtype=np.int8)
        self._owner = np.full((B, E, self.rules.n_cards), -1, dtype=np.int8)  # seat dealt each card, -1 undealt
        self._extra = np.zeros((B, E), dtype=np.int8)  # Bob's Hat: the hat value
        self._bids = np.full((B, E, P), -1, dtype=np.int8)
        self._plays = np.full((B, E, T * P), -1, dtype=np.int8)  # cards in play order
        self._n_plays = np.zeros((B, E), dtype=np.int16)
        self._leaders = np.full((B, E, T), -1, dtype=np.int8)
        self._winners = np.full((B, E, T), -1, dtype=np.int8)
        self._scores = np.zeros((B, E, P), dtype=np.int32)
        self._renege = np.zeros((B, E), dtype=bool)
        # the closing facts of each ended hand, as the core's step reported them
        self._taken = np.zeros((B, E, P, *state.taken.shape[2:]), dtype=np.int8)  # the hand's state.taken
        self._holder = np.full((B, E), -1, dtype=np.int8)  # the role holder at the end (Bob's Hat: hat), -1 none

    # -- setup
    def _check_agents(self, agents: Any) -> list[str]:
        if not (isinstance(agents, (list, tuple)) and len(agents) == self.players):
            raise ValueError(f"agents must name one agent per seat ({self.players}), got {agents!r}")
        return [str(a) for a in agents]

    def start(
        self,
        slots: np.ndarray | list[int] | None = None,
        seeds: list[int | None] | None = None,
        agents: list[str] | list[list[str]] | None = None,
    ) -> None:
        """Record a fresh game in ``slots`` (default all), dropping anything in progress there.

        Call it when a slot is reset to a new game that is to be recorded with
        other names or seeds; a slot whose game finished is ready for the
        next game without it. seeds: one per slot (None = the game's key).
        agents: one list of names for all the slots, or one list per slot.
        """
        idx = np.arange(self.batch_size) if slots is None else np.asarray(slots, dtype=np.int64).reshape(-1)
        self._reset_slots(idx)
        if seeds is not None:
            if len(seeds) != idx.size:
                raise ValueError(f"seeds must give one seed per slot ({idx.size}), got {len(seeds)}")
            for i, s in zip(idx.tolist(), seeds):
                if s is not None and not is_int(s):
                    raise ValueError(f"a seed is an integer or None, got {s!r}")
                self._seeds[i] = None if s is None else int(s)
        else:
            for i in idx.tolist():
                self._seeds[i] = None
        if agents is not None:
            per_slot = bool(agents) and isinstance(agents[0], (list, tuple))
            if per_slot and len(agents) != idx.size:
                raise ValueError(f"agents must give one list per slot ({idx.size}), got {len(agents)}")
            for n, i in enumerate(idx.tolist()):
                self._agents[i] = self._check_agents(agents[n] if per_slot else agents)

    def _reset_slots(self, idx: np.ndarray) -> None:
        self._n_entries[idx] = 0
        self._open[idx] = False
        self._skip[idx] = False

    def _grow(self) -> None:
        """Double the hand-entry axis (reneges can make a game longer than its hands)."""
        for name in _ENTRY_ARRAYS:
            a = getattr(self, name)
            setattr(self, name, np.concatenate([a, np.zeros_like(a)], axis=1))

    def _open_entries(self, g: np.ndarray, state: Any) -> None:
        if self._n_entries[g].max() >= self._hand_no.shape[1]:
            self._grow()
        e = self._n_entries[g]
        self._hand_no[g, e] = state.hand_no[g]
        self._dealer[g, e] = state.dealer[g]
        self._trump[g, e] = self.rules.trump_of(state, g)
        hands = state.hands[g]  # (n, P, N): untouched until the first card
        self._owner[g, e] = np.where(hands.any(axis=1), hands.argmax(axis=1), -1)
        self._extra[g, e] = 0
        self._bids[g, e] = -1
        self._plays[g, e] = -1
        self._n_plays[g, e] = 0
        self._leaders[g, e] = -1
        self._winners[g, e] = -1
        self._scores[g, e] = 0
        self._renege[g, e] = False
        self._taken[g, e] = 0
        self._holder[g, e] = -1
        first = g[e == 0]
        self._key[first] = state.key[first]
        self._open[g] = True

    # -- what an adapter stores (PreludeStore)
    def set_extra(self, games: np.ndarray, values: np.ndarray) -> None:
        """The open hand entry's own number of the game (Bob's Hat: the hat) in ``games``."""
        self._extra[games, self._n_entries[games]] = values

    def set_bids(self, games: np.ndarray, seats: np.ndarray, bids: np.ndarray) -> None:
        """Seat ``seats[i]``'s bid code in the open hand entry of game ``games[i]``."""
        self._bids[games, self._n_entries[games], seats] = bids

    # -- per step
    def record(
        self,
        prev_phase: np.ndarray,
        prev_cur: np.ndarray,
        actions: np.ndarray,
        result: Any,
        state: Any,
        active: np.ndarray | None = None,
    ) -> list[dict]:
        """Take in one core step; returns the records of the games it finished.

        prev_phase, prev_cur: copies of ``state.phase`` and ``state.cur``
        taken before the step (the core changes the state in place).
        actions, result, active: what went into and came out of ``step``;
        state: the state after it.
        """
        P = self.players
        mod = self.rules.module
        phase = np.asarray(prev_phase).astype(np.int64)
        cur = np.asarray(prev_cur).astype(np.int64)
        actions = np.asarray(actions).astype(np.int64).reshape(-1)
        acting = (phase != mod.DEAL) & (phase != mod.DONE)  # every other phase is a seat's decision
        if active is not None:
            acting &= np.asarray(active, dtype=bool)
        acting &= ~self._skip

        g = np.nonzero(acting & ~self._open)[0]
        if g.size:
            fresh = self.rules.at_hand_start(phase, state, g)
            # A game's first entry must be hand 1's first deal; else it joined mid-game.
            first_deal = state.hand_no[g] == 0
            if self.cfg.renege_mode:  # a renege deals hand 1 again (attempt 1, 2, ...)
                first_deal &= state.attempt[g] == 0
            fresh &= (self._n_entries[g] > 0) | first_deal
            self._skip[g[~fresh]] = True
            acting[g[~fresh]] = False
            if fresh.any():
                self._open_entries(g[fresh], state)

        self.rules.record_prelude(self, np.where(acting, phase, -1), cur, actions)

        g = np.nonzero(acting & (phase == mod.PLAY))[0]
        if g.size:
            e = self._n_entries[g]
            k = self._n_plays[g, e].astype(np.int64)
            self._plays[g, e, k] = actions[g]
            lead = k % P == 0
            self._leaders[g[lead], e[lead], k[lead] // P] = cur[g[lead]]
            self._n_plays[g, e] += 1
            t = np.nonzero(np.asarray(result.trick_done)[g])[0]
            if t.size:
                gt = g[t]
                self._winners[gt, e[t], k[t] // P] = np.asarray(result.trick_winner)[gt]

        renege = np.asarray(result.renege, dtype=bool)
        h = np.nonzero(acting & (np.asarray(result.hand_done, dtype=bool) | renege))[0]
        if h.size:
            e = self._n_entries[h]
            self._scores[h, e] = np.asarray(result.rewards)[h]
            self._renege[h, e] = renege[h]
            self._taken[h, e] = result.hand_taken[h]
            self._holder[h, e] = result.role_holder[h]
            self._n_entries[h] += 1
            self._open[h] = False

        done = np.asarray(result.game_done, dtype=bool)
        out: list[dict] = []
        over = np.nonzero(done & (acting | self._skip))[0]
        if over.size:
            for s in over.tolist():
                if not self._skip[s]:
                    out.append(self._build(s))
            self._reset_slots(over)
            if self.keep:
                self._done.extend(out)
        return out

    def observe_step(
        self, before: tuple[np.ndarray, np.ndarray], actions: Any, active: Any, res: Any, state: Any
    ) -> None:
        """The arena's hook: ``before`` is ``(phase, cur)`` copied before the step."""
        self.record(before[0], before[1], actions, res, state, active=active)

    def step(
        self, state: Any, actions: np.ndarray, active: np.ndarray | None = None, auto_deal: bool = True
    ) -> tuple[Any, list[dict]]:
        """Step the core and record the step: returns its StepResult and the games it finished."""
        phase, cur = state.phase.copy(), state.cur.copy()
        res = self.rules.module.step(self.cfg, state, actions, active=active, auto_deal=auto_deal)
        return res, self.record(phase, cur, actions, res, state, active=active)

    def records(self) -> list[dict]:
        """The finished games' records kept so far (and forget them)."""
        out, self._done = self._done, []
        return out

    # -- building a record (per finished game)
    def _build(self, s: int) -> dict:
        P = self.players
        rules = self.rules
        names = rules.names
        n = int(self._n_entries[s])
        n_plays = self._n_plays[s, :n].tolist()
        cards = names[self._plays[s, :n]].tolist()  # (n, T * P) notation; id -1 names the last card, never read
        leaders = self._leaders[s, :n].tolist()
        winners = self._winners[s, :n].tolist()
        hand_no = self._hand_no[s, :n].tolist()
        dealer = self._dealer[s, :n].tolist()
        scores = self._scores[s, :n].tolist()
        # Each seat's cards in id order: sort by (seat, id), undealt cards last.
        owner = self._owner[s, :n].astype(np.int64)
        N = owner.shape[1]
        order = np.argsort(np.where(owner >= 0, owner * N, P * N) + np.arange(N), axis=1)
        dealt = names[order].tolist()
        common, tricks = [], []
        for e in range(n):
            m = n_plays[e]
            tricks.append(
                [
                    {
                        "leader": leaders[e][k],
                        "cards": cards[e][k * P : min(m, (k + 1) * P)],
                        "winner": winners[e][k] if winners[e][k] >= 0 else None,
                    }
                    for k in range((m + P - 1) // P)
                ]
            )
            size = rules.hand_size(self.cfg, hand_no[e])
            common.append(
                {
                    "number": hand_no[e] + 1,
                    "hand_size": size,
                    "dealer": dealer[e],
                    "deal": [dealt[e][p * size : (p + 1) * size] for p in range(P)],
                    "scores": scores[e],
                }
            )
        entries = Entries(
            P,
            self._trump[s, :n],
            self._extra[s, :n],
            self._bids[s, :n],
            self._plays[s, :n],
            self._winners[s, :n],
            self._taken[s, :n],
            self._holder[s, :n],
        )
        hands = rules.hand_records(entries, common, tricks)
        for e in np.nonzero(self._renege[s, :n])[0].tolist():
            last = tricks[e][-1]
            seat = (last["leader"] + len(last["cards"]) - 1) % P
            hands[e]["renege"] = {"seat": seat, "card": last["cards"][-1]}
        first_dealer = (dealer[0] - hand_no[0]) % P
        seed = self._seeds[s]
        return {
            "game": rules.name,
            "format": FORMAT,
            "config": rules.config_record(self.cfg, first_dealer),
            "seed": int(self._key[s]) if seed is None else seed,
            "agents": list(self._agents[s]),
            "hands": hands,
            "totals": self._scores[s, :n].sum(axis=0).tolist(),
        }
