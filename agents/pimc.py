"""PIMC: Perfect Information Monte Carlo search on the batched core (both games).

At each decision the bot samples ``worlds`` deals of the hidden cards that are
consistent with what its seat has seen (:mod:`bobshat_env.core.resample`),
and for every world and every legal action plays the hand out to its end with
a fast playout policy, all worlds x actions x decisions as one batch of the
NumPy core. It picks the action with the best mean outcome for its seat.

Honesty: the bot never sees another seat's cards. It rebuilds the public
state from its own private observation (hand, trump, hat, bids, the current
trick, played and taken cards) with its game's ``public_state``, in which
every other hand is empty, and learns voids from the current trick and, when
the arena provides it (``needs_public``), from the public void record of the
hand: which seat failed to follow which suit, which every player at a real
table sees. The hidden hands come only from sampling.

Outcome: ``objective="diff"`` (default) scores a world by the hand's score of
the bot minus the mean of the other seats' (a game is won on the difference;
it is also what makes the dealer's hat choice and breaking opponents' bids
matter); ``objective="score"`` by the bot's own hand score.

Options (spec ``pimc:worlds=32,playout=strong``): ``worlds`` (default 16),
``playout`` (``simple`` default, ``strong``, ``random``), ``objective``,
``search`` (``all`` decisions, or ``play`` to search card play only and use
the playout policy's hat and bid), ``max_rows`` (rows per rollout batch, a
memory bound). ``agent.stats`` holds decisions searched and seconds spent.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from bobshat_env.core.resample import relative_voids, sample_hands
from bobshat_env.core.tricks import trick_voids
from bobshat_env.games import GAMES, Game, load

from .base import sample_masked

PLAYOUTS = ("simple", "strong", "random")


class _GameSpec:
    """What the search needs of one game, asked of the game: its core, deck, public-state builder and heuristics."""

    def __init__(self, game: Game):
        self.core, self.deck, self.public_state = game.module, game.deck, game.module.public_state
        self.heur = game.load("heuristics")  # simple_state_policy / strong_state_policy playouts
        self.strong = load(game.agent_class("strong"))(game)  # the strong bot, for decisions not searched

    def strong_from_obs(self, cfg: Any, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray, public: Any) -> np.ndarray:
        return self.strong.act(obs, mask, seat, public)


class PIMCAgent:
    """Determinized search for Where's Bob's Hat? and Oh Hell (see the module docstring)."""

    needs_public = True

    def __init__(
        self,
        game: Game | None = None,
        seed: int | None = None,
        worlds: int = 16,
        playout: str = "simple",
        objective: str = "diff",
        search: str = "all",
        max_rows: int = 40000,
    ):
        if game is None or getattr(game, "description", None) is None:
            raise ValueError(f"the 'pimc' agent needs a game ({', '.join(GAMES)})")
        if playout not in PLAYOUTS:
            raise ValueError(f"unknown playout {playout!r}; choose one of {', '.join(PLAYOUTS)}")
        if objective not in ("diff", "score"):
            raise ValueError(f"unknown objective {objective!r}; choose 'diff' or 'score'")
        if search not in ("all", "play"):
            raise ValueError(f"unknown search {search!r}; choose 'all' or 'play'")
        for key, value in (("worlds", worlds), ("max_rows", max_rows)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"pimc option {key} must be a positive integer, got {value!r}")
        self.name = f"pimc:worlds={worlds},playout={playout}"
        self.cfg = game.config
        self.spec = _GameSpec(game)
        self.worlds = worlds
        self.playout = playout
        self.objective = objective
        self.search = search
        self.max_rows = int(max_rows)
        self.gen = np.random.default_rng(seed)
        self.stats = {"decisions": 0, "searched": 0, "seconds": 0.0}

    # -- playout policy on full states
    def _policy(self, state: Any, mask: np.ndarray) -> np.ndarray:
        if self.playout == "random":
            return sample_masked(mask, self.gen)
        if self.playout == "strong":
            return self.spec.heur.strong_state_policy(self.cfg, state, mask)
        return self.spec.heur.simple_state_policy(self.cfg, state, mask)

    def act(self, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray, public: dict | None = None) -> np.ndarray:
        t0 = time.perf_counter()
        mask = np.asarray(mask, dtype=bool)
        seat = np.asarray(seat, dtype=np.int64)
        B = mask.shape[0]
        out = np.argmax(mask, axis=1)  # forced moves: the only legal action
        n_legal = mask.sum(axis=1)
        core = self.spec.core
        state, counts, unseen = self.spec.public_state(self.cfg, obs, seat)
        todo = n_legal > 1
        if self.search == "play":
            todo &= state.phase == core.PLAY
            heur = ~todo & (n_legal > 1)
            if heur.any():
                rows = np.nonzero(heur)[0]
                out[rows] = self.spec.strong_from_obs(self.cfg, obs[rows], mask[rows], seat[rows], _rows(public, rows))
        rows = np.nonzero(todo)[0]
        if rows.size:
            void = trick_voids(state.trick, state.led_suit, self.spec.deck)
            if public is not None and "void" in public:
                void |= np.asarray(public["void"], dtype=bool)
            per_row = self.worlds * int(n_legal[rows].max())
            chunk = max(1, self.max_rows // per_row)
            for i in range(0, rows.size, chunk):
                r = rows[i : i + chunk]
                out[r] = self._search(state.take(r), counts[r], unseen[r], void[r], seat[r], mask[r])
        self.stats["decisions"] += B
        self.stats["searched"] += int(rows.size)
        self.stats["seconds"] += time.perf_counter() - t0
        return out

    def action_values(
        self, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray, public: dict | None = None
    ) -> np.ndarray:
        """(B, A) mean outcome of every legal action (NaN where illegal), for analysis and tests."""
        mask = np.asarray(mask, dtype=bool)
        seat = np.asarray(seat, dtype=np.int64)
        state, counts, unseen = self.spec.public_state(self.cfg, obs, seat)
        void = trick_voids(state.trick, state.led_suit, self.spec.deck)
        if public is not None and "void" in public:
            void |= np.asarray(public["void"], dtype=bool)
        return self._search(state, counts, unseen, void, seat, mask, values=True)

    def _search(
        self,
        public: Any,
        counts: np.ndarray,
        unseen: np.ndarray,
        void: np.ndarray,
        seat: np.ndarray,
        mask: np.ndarray,
        values: bool = False,
    ) -> np.ndarray:
        cfg, W, core = self.cfg, self.worlds, self.spec.core
        n, P = counts.shape
        b = np.arange(n)
        hands = sample_hands(public.hands[b, seat], seat, unseen, counts, void, self.spec.deck, W, self.gen)
        # candidate actions per row, padded with the row's first legal action
        A = int(mask.sum(axis=1).max())
        order = np.argsort(~mask, axis=1, kind="stable")[:, :A]  # legal actions first
        valid = np.take_along_axis(mask, order, axis=1)
        cand = np.where(valid, order, order[:, :1])  # (n, A)
        # worlds x actions: row (i, w, a)
        idx = np.repeat(b, W * A)
        st = public.take(idx)
        st.hands = np.repeat(hands.reshape(n * W, P, -1), A, axis=0)
        acts = np.broadcast_to(cand[:, None, :], (n, W, A)).reshape(-1)
        core.step(cfg, st, acts, auto_deal=False)
        live = st.phase < core.DEAL
        while live.any():
            m = core.legal_action_mask(cfg, st)
            m[~live, 0] = True  # finished rows ride along (their action is ignored)
            a = self._policy(st, m)
            core.step(cfg, st, a, active=live, auto_deal=False, legal=m)
            live = st.phase < core.DEAL
        pts = st.last_scores.astype(np.float64)  # (n*W*A, P) this hand's scores
        me = np.repeat(seat, W * A)
        mine = pts[np.arange(pts.shape[0]), me]
        if self.objective == "diff":
            mine = mine - (pts.sum(axis=1) - mine) / (P - 1)
        q = mine.reshape(n, W, A).mean(axis=1)  # (n, A)
        if values:
            full = np.full(mask.shape, np.nan)
            r, k = np.nonzero(valid)  # the padding repeats a row's first candidate: write the real entries only
            full[r, cand[r, k]] = q[r, k]
            return full
        best = np.argmax(np.where(valid, q, -np.inf), axis=1)
        return cand[b, best]


def _rows(public: dict | None, rows: np.ndarray) -> dict | None:
    return None if public is None else {k: v[rows] for k, v in public.items()}


def decision_seconds(agent: Any) -> float | None:
    """Mean seconds per decision an agent with ``stats`` has spent, or None."""
    stats = getattr(agent, "stats", None)
    if not stats or not stats.get("decisions"):
        return None
    return stats["seconds"] / stats["decisions"]


__all__ = ["PIMCAgent", "PLAYOUTS", "decision_seconds", "relative_voids"]
