"""Search with a trained policy: determinized playouts where every seat plays the policy.

``make_agent("search:policy=checkpoints/bobs_hat_4p.pt", game)``. At each
card-play decision (and with ``bids=true`` at the hat choice and the bids
too; both games) the agent

1. asks the policy for its prior over the legal actions (one network call
   for every decision of the batch);
2. keeps the ``top_k`` most probable legal actions as candidates (a decision
   with one candidate, or whose best prior is at least ``certain``, takes the
   policy's action without a search);
3. samples ``worlds`` deals of the hidden cards consistent with what the seat
   has seen (:func:`bobshat_env.core.resample.sample_hands`: own hand, cards
   seen, hand sizes, the public void record), uniformly, or with ``belief``
   weighted by how likely each deal makes the other seats' public actions
   under the policy (``oversample`` times more deals drawn, then resampled);
4. plays every candidate in every world, then lets *every seat* play the
   policy on its own private observation of that world (no seat of a playout
   sees another's cards, so the playout does not reward plans that need
   hidden information), until the hand ends or, with ``horizon=N``, until the
   searching seat's N-th next decision, where the value head estimates the
   rest of the hand;
5. scores each row by the searching seat's margin over the table: its score
   change in the hand minus the mean of the other seats' (what the shipped
   policies were trained for, and what winning and duplicate evaluation
   measure). The same worlds serve every candidate (common random numbers),
   so the comparison is paired: another candidate replaces the policy's
   choice only if its mean advantage is more than ``z`` standard errors
   above zero, and the best such candidate is played.

All rows of all searched decisions (decisions x worlds x candidates) are
stepped together on the batched core, with one network call per playout step.

Why these defaults (the measurements: docs/results/search.md, "Why the
search's defaults"): picking the best mean outright (``z=0``) lets the
worlds' noise decide and gained nothing measurable, where ``z=2`` leaves the
policy on few card plays and gains; searching bids lost or was level, so bids
are the policy's unless ``bids=true``; ``belief`` weighting and the value head
at a cut-off (``horizon=1``) did not beat uniform worlds by more than the
noise, so they stay off; learned inference did, in both games, once its
card-location networks were fitted on 8,192 games (docs/results/inference.md),
so ``inference=auto`` (learned where the policy ships a network) is the
default.

Honesty: the agent never sees another seat's cards. It gets the acting seat's
private observation and the public record of the hand (``needs_public``:
voids, who played which card, the hand's actions in order; see
:class:`bobshat_env.core.resample.VoidTracker`), rebuilds the public state
from them (``game.public_state``), in which every other hand is empty, and
fills the hidden hands only by sampling.

Options (spec ``search:policy=PATH,worlds=32,top_k=3``):

- ``policy``: a checkpoint written by ``bobshat train`` (required);
- ``worlds`` (default 32): sampled deals per decision;
- ``top_k`` (default 3): candidates, the most probable legal actions;
- ``z`` (default 2): standard errors by which a candidate must beat the
  policy's choice to replace it (0: the best mean wins);
- ``bids`` (default false): search the hat choice and the bids too;
- ``horizon`` (default 0): 0 plays every playout to the end of the hand;
  N >= 1 stops at the searching seat's N-th next decision and adds the value
  head's estimate there (``value_scale`` points per unit of value: the
  presets' ``reward_scale`` is 0.1, so 10);
- ``certain`` (default 1.0): skip the search when the policy's best legal
  action has at least this probability (1.0: search every decision with two
  or more candidates);
- ``inference`` (default ``auto``): how the worlds are drawn
  (:mod:`agents.inference`): ``none`` uniformly among the deals consistent
  with the hard facts, ``policy`` weighted by the policy's likelihood of
  every other seat's public action of the hand, ``learned`` dealt from a
  card-location network's marginals (``cards=PATH``, default the policy's
  file with ``.cards`` for ``.pt``: ``bobshat infer --train`` writes it; the
  4-player policies ship one); ``auto`` is ``learned`` where that network
  is there and fits the table, else ``none`` (so the 4-player tables
  search learned worlds, the others uniform ones);
  ``oversample`` (default 4) worlds drawn per world kept; ``temper``
  (default 1) the power the weights are raised to;
- ``belief`` (default ``none``): the older spelling of policy inference:
  ``all`` is ``inference=policy``, ``bids`` weights by the hat choice and
  the bids only;
- ``playout``: ``greedy`` (default; the most probable legal action) or
  ``sample`` (drawn from the policy);
- ``max_rows`` (default 20000): rows per batch of playouts, a memory bound.

There is no wall-clock budget option on purpose: a search that stopped on
the clock would play differently on a loaded machine, and the same seed must
give the same games; ``worlds`` and ``top_k`` set the cost. ``agent.stats``
counts decisions, searched decisions, wall seconds and process CPU seconds.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from .inference import CHOICES, METHODS, MIN_PROB, WorldSampler, check_inference, resolve_inference
from .ppo_agent import PolicyNet, load_policy, masked_logits, sample_actions

if TYPE_CHECKING:
    from bobshat_env.games import Game

PLAYOUTS = ("greedy", "sample")
BELIEFS = ("none", "bids", "all")  # the older spelling of policy inference: belief=all is inference=policy
INFERENCES = CHOICES  # auto: learned where the policy has a card-location network, else none
__all__ = ["BELIEFS", "INFERENCES", "METHODS", "MIN_PROB", "PLAYOUTS", "PolicySearchAgent", "make_search_agent"]


class PolicySearchAgent:
    """Determinized search whose playouts are the trained policy (see the module docstring)."""

    needs_public = True

    def __init__(
        self,
        game: Game | None = None,
        seed: int | None = None,
        policy: str = "",
        worlds: int = 32,
        top_k: int = 3,
        horizon: int = 0,
        certain: float = 1.0,
        z: float = 2.0,
        bids: bool = False,
        playout: str = "greedy",
        belief: str = "none",
        inference: str | None = None,
        cards: str = "",
        oversample: int = 4,
        temper: float = 1.0,
        value_scale: float = 10.0,
        max_rows: int = 20000,
        net: PolicyNet | None = None,
    ):
        if game is None or getattr(game, "module", None) is None:
            raise ValueError("the 'search' agent needs a game (bobs_hat or oh_hell)")
        checks = (("worlds", worlds, 1), ("top_k", top_k, 1), ("horizon", horizon, 0), ("oversample", oversample, 1))
        for key, value, low in checks:
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"search option {key} must be an integer >= {low}, got {value!r}")
        if isinstance(max_rows, bool) or not isinstance(max_rows, int) or max_rows < 1:
            raise ValueError(f"search option max_rows must be a positive integer, got {max_rows!r}")
        if isinstance(certain, bool) or not isinstance(certain, (int, float)) or not 0.0 < certain <= 1.0:
            raise ValueError(f"search option certain must be a probability in (0, 1], got {certain!r}")
        if not isinstance(bids, bool):
            raise ValueError(f"search option bids must be true or false, got {bids!r}")
        if isinstance(z, bool) or not isinstance(z, (int, float)) or not (math.isfinite(z) and z >= 0):
            raise ValueError(f"search option z must be a number >= 0 and finite, got {z!r}")
        if isinstance(value_scale, bool) or not isinstance(value_scale, (int, float)) or not math.isfinite(value_scale):
            raise ValueError(f"search option value_scale must be a finite number, got {value_scale!r}")
        if playout not in PLAYOUTS:
            raise ValueError(f"unknown search playout {playout!r}; choose one of {', '.join(PLAYOUTS)}")
        if belief not in BELIEFS:
            raise ValueError(f"unknown search belief {belief!r}; choose one of {', '.join(BELIEFS)}")
        if inference is None:  # not given: auto, unless belief= names the method (policy inference)
            inference = "auto" if belief == "none" else "none"
        check_inference("search", inference, "")  # the method first, then what goes with it
        if belief != "none" and inference not in ("none", "policy"):
            raise ValueError(
                f"search option belief={belief} is policy inference; it cannot go with inference={inference}"
            )
        check_inference("search", inference, cards)
        method = "policy" if belief != "none" else inference
        if net is None:  # (after the options are checked: a bad option costs no file read)
            if not policy:
                raise ValueError("the 'search' agent needs a trained policy: search:policy=PATH")
            net, _ = load_policy(str(policy), game)
        method, card_net = resolve_inference("search", method, cards, policy, game)
        self.game = game
        self.cfg = game.config
        self.net = net
        self.worlds, self.top_k, self.horizon = worlds, top_k, horizon
        self.z, self.bids = float(z), bids
        self.certain, self.playout, self.value_scale = float(certain), playout, float(value_scale)
        self.max_rows = max_rows
        self.belief, self.oversample = belief, oversample
        self.inference = method
        self.name = f"search:policy={policy},worlds={worlds},top_k={top_k},z={z}"
        if method != "none":
            self.name += f",inference={method}"
        ss = np.random.SeedSequence(seed)
        self.gen = np.random.default_rng(ss.spawn(1)[0])
        self.sampler = WorldSampler(
            game, method, worlds, oversample, self.gen, policy=lambda o, m: self._policy(o, m)[0],
            scope="bids" if belief == "bids" else "all", cards=card_net, temper=temper,
        )  # fmt: skip
        self.torch_gen = torch.Generator()
        self.torch_gen.manual_seed(int(ss.generate_state(1)[0]))
        self.stats = {"decisions": 0, "searched": 0, "seconds": 0.0, "cpu_seconds": 0.0}

    # -- the network
    def _policy(self, obs: np.ndarray, mask: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
        """(masked logits (B, A), value (B,)) of the policy."""
        with torch.inference_mode():
            x = torch.from_numpy(np.ascontiguousarray(obs, dtype=np.float32))
            m = torch.from_numpy(np.ascontiguousarray(mask, dtype=bool))
            logits, value = self.net(x)
            return masked_logits(logits, m), value

    def act(self, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray, public: dict | None = None) -> np.ndarray:
        """(B,) legal actions: the searched best candidate, or the policy's where no search is needed."""
        t0, c0 = time.perf_counter(), time.process_time()
        mask = np.asarray(mask, dtype=bool)
        seat = np.asarray(seat, dtype=np.int64)
        logits, _ = self._policy(obs, mask)
        prior = torch.softmax(logits, dim=-1).numpy()
        prior = np.where(mask, prior, -1.0)
        out = np.argmax(prior, axis=1)
        n_cand = np.minimum(mask.sum(axis=1), self.top_k)
        todo = (n_cand > 1) & (prior.max(axis=1) < self.certain)
        if not self.bids:  # the hat and the bids are the policy's: only card play is searched
            todo &= mask[:, : self.game.module.N_CARDS].any(axis=1)
        rows = np.nonzero(todo)[0]
        if rows.size:
            K = int(n_cand[rows].max())
            order = np.argsort(-prior[rows], axis=1, kind="stable")[:, :K]  # candidates, most probable first
            valid = np.arange(K)[None, :] < n_cand[rows][:, None]
            cand = np.where(valid, order, order[:, :1])
            chunk = max(1, self.max_rows // (self.worlds * max(K, self.oversample)))
            for i in range(0, rows.size, chunk):
                r = slice(i, i + chunk)
                out[rows[r]] = self._search(obs[rows[r]], seat[rows[r]], cand[r], valid[r], _rows(public, rows[r]))
        self.stats["decisions"] += mask.shape[0]
        self.stats["searched"] += int(rows.size)
        self.stats["seconds"] += time.perf_counter() - t0
        self.stats["cpu_seconds"] += time.process_time() - c0
        return out

    def action_values(
        self, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray, public: dict | None = None
    ) -> np.ndarray:
        """(B, A) the searched mean margin of every legal action (NaN where illegal), for analysis and tests."""
        mask = np.asarray(mask, dtype=bool)
        A = int(mask.sum(axis=1).max())
        order = np.argsort(~mask, axis=1, kind="stable")[:, :A]
        valid = np.take_along_axis(mask, order, axis=1)
        cand = np.where(valid, order, order[:, :1])
        q = self._search(obs, np.asarray(seat, dtype=np.int64), cand, valid, public, values=True)
        full = np.full(mask.shape, np.nan)
        r, k = np.nonzero(valid)  # the padding repeats a candidate: write the real entries only
        full[r, cand[r, k]] = q[r, k]
        return full

    # -- the search
    def _search(
        self,
        obs: np.ndarray,
        seat: np.ndarray,
        cand: np.ndarray,
        valid: np.ndarray,
        public: dict | None,
        values: bool = False,
    ) -> np.ndarray:
        """The best candidate per row (or the (n, K) mean margins with ``values``)."""
        state, hands = self._worlds(obs, seat, public)
        qw = self._playouts(state, hands, seat, cand)
        if values:
            return qw.mean(axis=1)
        return cand[np.arange(cand.shape[0]), self._choose(qw, valid)]

    def _worlds(self, obs: np.ndarray, seat: np.ndarray, public: dict | None) -> tuple[Any, np.ndarray]:
        """The public state of each decision and ``worlds`` sampled deals of the hidden cards (n, W, P, N),
        drawn by the agent's inference method (:class:`agents.inference.WorldSampler`)."""
        return self.sampler.sample(obs, seat, public)

    def _playouts(self, state: Any, hands: np.ndarray, seat: np.ndarray, cand: np.ndarray) -> np.ndarray:
        """(n, W, K) the searching seat's margin after candidate k in world w, every seat then playing the policy."""
        game = self.game
        core = game.module
        n, W, P, N = hands.shape
        K = cand.shape[1]
        # rows (i, w, k): decision i, world w, candidate k
        R = n * W * K
        idx = np.repeat(np.arange(n), W * K)
        st = state.take(idx)
        st.hands = np.repeat(hands.reshape(n * W, P, N), K, axis=0)
        me = seat[idx]
        start = st.scores.astype(np.float64)
        game.step(st, np.broadcast_to(cand[:, None, :], (n, W, K)).reshape(-1), auto_deal=False)
        value = np.zeros(R)  # the value head's estimate where a row was cut off
        turns = np.zeros(R, dtype=np.int64)  # the searching seat's decisions since the root
        end_scores = st.scores.copy()  # each row's scores when it ends (hand over, or cut off)
        rows = np.nonzero(st.phase < core.DEAL)[0]  # rows of `sub` -> rows of `st`
        sub = st.take(rows) if rows.size < R else st
        alive = np.ones(rows.size, dtype=bool)
        while alive.any():
            if alive.sum() < 0.75 * rows.size:  # drop the finished rows from the batch
                keep = np.nonzero(alive)[0]
                sub, rows, alive = sub.take(keep), rows[keep], alive[keep]
            m = game.legal_action_mask(sub)
            m[~alive, 0] = True  # finished rows ride along (their action is ignored)
            logits, v = self._policy(game.observe(sub), m)
            if self.horizon:
                mine = alive & (sub.cur.astype(np.int64) == me[rows])
                turns[rows[mine]] += 1
                cut = mine & (turns[rows] >= self.horizon)
                value[rows[cut]] = v.numpy()[cut] * self.value_scale
                end_scores[rows[cut]] = sub.scores[cut]
                alive &= ~cut
            if self.playout == "sample":
                a = sample_actions(logits, self.torch_gen).numpy()
            else:
                a = torch.argmax(logits, dim=-1).numpy()
            game.step(sub, a.astype(np.int64), active=alive, auto_deal=False, legal=m)
            ended = alive & (sub.phase >= core.DEAL)
            end_scores[rows[ended]] = sub.scores[ended]
            alive &= ~ended
        pts = end_scores.astype(np.float64) - start  # (R, P) score change in the hand (so far, where cut)
        mine_pts = pts[np.arange(R), me]
        margin = mine_pts - (pts.sum(axis=1) - mine_pts) / (P - 1) + value
        return margin.reshape(n, W, K)

    def _choose(self, qw: np.ndarray, valid: np.ndarray) -> np.ndarray:
        """(n,) index of the chosen candidate: the policy's (0) unless another is better by z standard errors.

        The advantage of candidate k is paired over the worlds (the same
        worlds serve every candidate); only a candidate whose mean advantage
        over the policy's choice is more than ``z`` standard errors above
        zero can replace it, and the best of those does.
        """
        W = qw.shape[1]
        diff = qw - qw[:, :, :1]
        se = diff.std(axis=1) / np.sqrt(W)
        ok = valid & (diff.mean(axis=1) > self.z * se)
        ok[:, 0] = True
        return np.argmax(np.where(ok, qw.mean(axis=1), -np.inf), axis=1)


def _rows(public: dict | None, rows: Any) -> dict | None:
    return None if public is None else {k: np.asarray(v)[rows] for k, v in public.items()}


def make_search_agent(game: Game | None = None, seed: int | None = None, **options: Any) -> PolicySearchAgent:
    """Factory behind the ``search:policy=PATH,...`` agent spec."""
    known: tuple[str, ...] = ("policy", "worlds", "top_k", "horizon", "certain", "z", "bids", "playout", "belief")
    known += ("inference", "cards", "oversample", "temper")
    known += ("value_scale", "max_rows")
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ValueError(f"unknown search option(s) {', '.join(unknown)}; known: {', '.join(known)}")
    return PolicySearchAgent(game, seed=seed, **options)
