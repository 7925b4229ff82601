"""PUCT over determinized worlds: an information-set tree search guided by a trained policy and its value head.

``make_agent("puct:policy=checkpoints/oh_hell_4p.pt,sims=64", game)``. A
deeper search next to the flat one (:mod:`agents.search`), in the spirit of
AlphaZero's PUCT and of Student of Games' search over sampled worlds, on the
tree mechanics of :mod:`agents.ismcts` (single-observer ISMCTS). At every
card-play decision with two or more legal actions (and with ``bids=true`` at
the hat choice and the bids too) the agent

1. **determinizes**: draws ``worlds`` deals of the hidden cards consistent
   with what the seat has seen, by the same inference options as the flat
   search (:class:`agents.inference.WorldSampler`: ``none`` uniform,
   ``policy``, ``learned``, ``auto``); simulation ``s`` searches world
   ``s mod worlds``;
2. **selects** down a tree keyed by the actions taken since the decision
   (every action of these games is face up, so the sequence is what the
   searching seat would know there: one node per information set of its
   view, as in SO-ISMCTS). At each node the seat to act in the simulation's
   world chooses, among the actions legal in that world, the one that
   maximizes::

       Q(a) + c_puct * P(a) * sqrt(1 + sum_b N(b)) / (1 + N(a))

   where ``P`` is the policy network's prior for that seat on *its own*
   private observation of the world (computed at every visit: an opponent's
   prior depends on its hand, which differs between worlds), ``N`` counts
   the simulations through each child, the sum runs over the children legal
   in this world (the availability of ISMCTS), and ``Q`` is the mean
   backed-up reward of the seat that chose the action, 0 for a child not yet
   visited. Every seat maximizes its own reward at its own nodes;
3. **expands** one node per simulation: the first chosen action without a
   child makes one, and the simulation stops there (its leaf);
4. **evaluates** the leaf with the value head (``leaf=value``, default), or
   with a playout of the policy at every seat to the end of the hand
   (``leaf=playout``). A seat's reward is its margin over the table (its
   score change since the decision minus the mean of the other seats',
   what the shipped policies were trained for and what duplicate evaluation
   measures) plus, at a leaf inside the hand, ``value_scale`` times the
   value head on *that seat's* private observation of the leaf (every seat
   is evaluated, one network call for all: each seat's node needs its own
   reward, and a value is comparable only for the seat it was computed
   for). Rewards are divided by the hand's score range (the game's
   ``score_bounds``), so ``c_puct`` is on the scale of a range of 1. The
   value head estimates the rest of the *game* (the presets train with one
   episode per game and no discount), so a leaf inside the hand also counts
   the later hands' expected margin, which the end of a hand does not:
   ``leaf=playout`` avoids that mixture at the cost of a playout per
   simulation;
5. **backs up**: every node on the path adds one visit and the reward of the
   seat that chose its action.

The move played is the root's most visited child (ties: the lowest action
id). Decisions not searched (one legal action; the hat and the bids unless
``bids=true``) take the policy's most probable action.

Batching: the decisions of a batch (``act`` gets one per game) are searched
together, one tree each, and each tree runs ``parallel`` simulations at a
time in different worlds, so every step down the trees is one network call
and one engine step for all of them. A simulation in flight holds a
*virtual loss* (:data:`VIRTUAL_LOSS` of the range, taken back when its real
reward arrives) on its path, so the simulations of one tree spread out.

Budget: ``sims`` simulations per decision, and with ``ms=T`` the search of a
batch also stops after the wave of simulations in which it passed T
milliseconds per decision (at least one wave). A clock budget plays
differently on a loaded machine; without ``ms`` the same seed gives the same
games. ``agent.stats`` counts decisions, searched decisions, simulations,
network rows, wall seconds and process CPU seconds.

Honesty: the agent never sees another seat's cards. It rebuilds the public
state from the acting seat's private observation (``game.public_state``,
every other hand empty) and the public record (``needs_public``), and fills
the hidden hands only by sampling. Each decision draws its worlds from its
own stream, seeded by the agent's seed and a hash of what the seat knows
(its observation, its seat, the void record), so a decision is a pure
function of (seed, what the seat knows). With secret bidding the tree is
keyed by the bids as taken in the search (the SO-ISMCTS limit noted in
:mod:`agents.ismcts`).

Options (spec ``puct:policy=PATH,sims=64,c_puct=1``):

- ``policy``: a checkpoint written by ``bobshat train`` (required);
- ``sims`` (default 64): simulations per decision;
- ``c_puct`` (default 1.0): the weight of the prior's exploration term;
- ``worlds`` (default 16): sampled deals per decision;
- ``parallel`` (default 8): simulations of one tree in flight together;
- ``ms`` (default 0: none): a wall-clock budget per decision, milliseconds;
- ``leaf``: ``value`` (default) or ``playout`` (see above);
- ``bids`` (default false): search the hat choice and the bids too;
- ``inference``, ``cards``, ``oversample``, ``temper``: how the worlds are
  drawn, as for ``search`` (:mod:`agents.inference`);
- ``value_scale`` (default 10): points per unit of value (the presets'
  ``reward_scale`` is 0.1);
- ``batch`` (default 64): decisions searched together, a memory bound.
"""

from __future__ import annotations

import hashlib
import math
import time
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import torch

from .inference import CHOICES, WorldSampler, check_inference, resolve_inference
from .ismcts import Trees
from .ppo_agent import PolicyNet, load_policy, masked_logits

if TYPE_CHECKING:
    from bobshat_env.games import Game

LEAVES = ("value", "playout")
INFERENCES = CHOICES
VIRTUAL_LOSS = 0.1  # the reward (a fraction of the hand's score range) a simulation in flight lends its path
__all__ = ["LEAVES", "VIRTUAL_LOSS", "PUCTAgent", "Tree", "make_puct_agent", "puct_scores", "world_of"]


def puct_scores(
    total: np.ndarray, visits: np.ndarray, children: np.ndarray, legal: np.ndarray, prior: np.ndarray, c_puct: float
) -> np.ndarray:
    """(k, A) the PUCT score of each legal action of k nodes, -inf where illegal.

    ``children`` (k, A): node ids (-1 none yet) by action; ``legal`` (k, A):
    the actions legal in the simulation's world; ``prior`` (k, A): the policy's
    probabilities there. ``total`` and ``visits``: per node, the reward summed
    for the seat that chose its action and the simulations through it. A
    child not made or not visited has Q = 0 and N = 0; the parent's count is
    the sum over the legal children (availability, as in ISMCTS).
    """
    have = (children >= 0) & legal
    ids = np.where(have, children, 0)
    n = np.where(have, visits[ids], 0.0)
    q = np.where(n > 0, total[ids] / np.maximum(n, 1e-12), 0.0)
    parent = n.sum(axis=1, keepdims=True)
    u = c_puct * prior * np.sqrt(1.0 + parent) / (1.0 + n)
    return np.where(legal, q + u, -np.inf)


def world_of(done: int, K: int, n: int, W: int) -> np.ndarray:
    """(n * K,) the world of each row of a wave: simulation ``done + k`` of every tree searches world
    ``(done + k) mod W``, so the worlds take turns and every one is searched as often as the budget allows."""
    return np.tile((done + np.arange(K)) % W, n)


class Tree(Trees):
    """PUCT's trees (:class:`agents.ismcts.Trees`, shared with ISMCTS's forest): ``visits`` count the
    simulations through a node, in flight ones included (each lends a virtual loss until its
    backprop)."""

    kind = "PUCT"

    def __init__(self, trees: int, nodes: int, n_actions: int, c_puct: float):
        super().__init__(trees, nodes, n_actions)
        self.c_puct = float(c_puct)

    def descend(
        self, trees: np.ndarray, node: np.ndarray, legal: np.ndarray, seat: np.ndarray, prior: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One step down: (actions, the nodes reached, which were made now), with a virtual loss on each.

        Rows must belong to different trees (a tree's simulations in flight
        take their steps one after the other, so each sees the others'
        virtual losses and new nodes).
        """
        ch = self.child[node]
        act = np.argmax(puct_scores(self.total, self.visits, ch, legal, prior, self.c_puct), axis=1)
        nxt = ch[np.arange(node.shape[0]), act].astype(np.int64)
        made = nxt < 0
        if made.any():
            e = np.nonzero(made)[0]
            nxt[e] = self.grow(trees[e], node[e], act[e], seat[e])
        self.visits[nxt] += 1
        self.total[nxt] -= VIRTUAL_LOSS
        return act, nxt, made

    def backprop(self, path: np.ndarray, rewards: np.ndarray) -> None:
        """Replace the virtual loss on ``path`` (k, D) (-1 padded) by each chooser's reward (``rewards`` (k, P))."""
        for d in range(path.shape[1]):
            col = path[:, d]
            ok = np.nonzero(col >= 0)[0]
            if not ok.size:
                break
            ids = col[ok]  # (a node can appear in several rows: np.add.at adds each)
            np.add.at(self.total, ids, VIRTUAL_LOSS + rewards[ok, self.who[ids].astype(np.int64)])


class PUCTAgent:
    """PUCT over determinized worlds with the policy's prior and value head (see the module docstring)."""

    needs_public = True

    def __init__(
        self,
        game: Game | None = None,
        seed: int | None = None,
        policy: str = "",
        sims: int = 64,
        c_puct: float = 1.0,
        worlds: int = 16,
        parallel: int = 8,
        ms: float = 0,
        leaf: str = "value",
        bids: bool = False,
        inference: str = "none",
        cards: str = "",
        oversample: int = 4,
        temper: float = 1.0,
        value_scale: float = 10.0,
        batch: int = 64,
        net: PolicyNet | None = None,
    ):
        if game is None or getattr(game, "module", None) is None:
            raise ValueError("the 'puct' agent needs a game (bobs_hat or oh_hell)")
        for key, value in (("sims", sims), ("worlds", worlds), ("parallel", parallel), ("oversample", oversample)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"puct option {key} must be an integer >= 1, got {value!r}")
        if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
            raise ValueError(f"puct option batch must be an integer >= 1, got {batch!r}")
        for key, num in (("c_puct", c_puct), ("ms", ms)):
            if isinstance(num, bool) or not isinstance(num, (int, float)) or not (math.isfinite(num) and num >= 0):
                raise ValueError(f"puct option {key} must be a finite number >= 0, got {num!r}")
        if isinstance(value_scale, bool) or not isinstance(value_scale, (int, float)) or not math.isfinite(value_scale):
            raise ValueError(f"puct option value_scale must be a finite number, got {value_scale!r}")
        if not isinstance(bids, bool):
            raise ValueError(f"puct option bids must be true or false, got {bids!r}")
        if leaf not in LEAVES:
            raise ValueError(f"unknown puct leaf {leaf!r}; choose one of {', '.join(LEAVES)}")
        check_inference("puct", inference, cards)
        if net is None:  # (after the options are checked: a bad option costs no file read)
            if not policy:
                raise ValueError("the 'puct' agent needs a trained policy: puct:policy=PATH")
            net, _ = load_policy(str(policy), game)
        method, card_net = resolve_inference("puct", inference, cards, policy, game)
        self.game, self.cfg, self.net = game, game.config, net
        self.sims, self.c_puct, self.worlds, self.parallel = sims, float(c_puct), worlds, parallel
        self.ms, self.leaf, self.bids, self.batch = float(ms), leaf, bids, batch
        self.value_scale, self.inference = float(value_scale), method
        self.name = f"puct:policy={policy},sims={sims},c_puct={c_puct:g},worlds={worlds}"
        if leaf != "value":
            self.name += f",leaf={leaf}"
        if method != "none":
            self.name += f",inference={method}"
        self.entropy = int(cast(int, np.random.SeedSequence(seed).entropy))
        self.sampler = WorldSampler(
            game, method, worlds, oversample, np.random.default_rng(0), policy=lambda o, m: self._policy(o, m)[0],
            cards=card_net, temper=temper,
        )  # fmt: skip
        self.stats = {"decisions": 0, "searched": 0, "sims": 0, "net_rows": 0, "seconds": 0.0, "cpu_seconds": 0.0}

    # -- the network
    def _policy(self, obs: np.ndarray, mask: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
        """(masked logits (B, A), value (B,)) of the policy."""
        self.stats["net_rows"] += int(obs.shape[0])
        with torch.inference_mode():
            x = torch.from_numpy(np.ascontiguousarray(obs, dtype=np.float32))
            m = torch.from_numpy(np.ascontiguousarray(mask, dtype=bool))
            logits, value = self.net(x)
            return masked_logits(logits, m), value

    def act(self, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray, public: dict | None = None) -> np.ndarray:
        """(B,) legal actions: the root's most visited child, or the policy's action where there is no search."""
        t0, c0 = time.perf_counter(), time.process_time()
        mask = np.asarray(mask, dtype=bool)
        seat = np.asarray(seat, dtype=np.int64)
        logits, _ = self._policy(obs, mask)
        out = torch.argmax(logits, dim=-1).numpy().astype(np.int64)
        todo = mask.sum(axis=1) > 1
        if not self.bids:  # the hat and the bids are the policy's: only card play is searched
            todo &= mask[:, : self.game.module.N_CARDS].any(axis=1)
        rows = np.nonzero(todo)[0]
        if rows.size:
            visits = self.search(np.asarray(obs)[rows], mask[rows], seat[rows], _rows(public, rows))[0]
            out[rows] = np.argmax(visits, axis=1)
        self.stats["decisions"] += mask.shape[0]
        self.stats["searched"] += int(rows.size)
        self.stats["seconds"] += time.perf_counter() - t0
        self.stats["cpu_seconds"] += time.process_time() - c0
        return out

    def search(
        self, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray, public: dict | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(B, A) root visits and (B, A) root mean rewards (a fraction of the hand's range), ``batch`` at a time."""
        mask = np.asarray(mask, dtype=bool)
        seat = np.asarray(seat, dtype=np.int64)
        visits, values = np.zeros(mask.shape), np.full(mask.shape, np.nan)
        for i in range(0, mask.shape[0], self.batch):
            r = np.arange(i, min(i + self.batch, mask.shape[0]))
            visits[r], values[r] = self._search(np.asarray(obs)[r], seat[r], _rows(public, r))
        return visits, values

    def determinize(self, obs: np.ndarray, seat: np.ndarray, public: dict | None = None) -> tuple[Any, np.ndarray]:
        """The public state of each decision and its ``worlds`` deals (n, W, P, N), each from its own stream."""
        state, _, _, void = self.sampler.facts(obs, seat, public)
        n, W = seat.shape[0], self.worlds
        hands = np.empty((n, W) + state.hands.shape[1:], dtype=bool)
        for b in range(n):
            self.sampler.gen = self._stream(obs[b], seat[b], void[b])
            hands[b] = self.sampler.sample(obs[b : b + 1], seat[b : b + 1], _rows(public, [b]))[1][0]
        return state, hands

    def _stream(self, obs: np.ndarray, seat: Any, void: np.ndarray) -> np.random.Generator:
        """A generator seeded by the agent's seed and a hash of what the seat knows."""
        h = hashlib.blake2b(digest_size=16)
        h.update(np.ascontiguousarray(obs, dtype=np.float32).tobytes())
        h.update(np.int64(seat).tobytes())
        h.update(np.ascontiguousarray(void, dtype=bool).tobytes())
        digest = h.digest()
        words = [int.from_bytes(digest[k : k + 8], "little") for k in (0, 8)]
        return np.random.default_rng(np.random.SeedSequence([self.entropy, *words]))

    def _search(self, obs: np.ndarray, seat: np.ndarray, public: dict | None) -> tuple[np.ndarray, np.ndarray]:
        game, core = self.game, self.game.module
        t0 = time.perf_counter()
        state, hands = self.determinize(obs, seat, public)
        n, W, P = seat.shape[0], self.worlds, game.players
        span = self._span(state.hand_no)
        tree = Tree(n, self.sims + 1, game.n_actions, self.c_puct)
        L = int(state.hands.shape[2]) * P + P + 2  # actions left in a hand at most: cards, bids, the hat
        done = 0
        while done < self.sims:
            K = min(self.parallel, self.sims - done)
            tr = np.repeat(np.arange(n), K)  # row r = (tree r // K, simulation done + r % K)
            kk = np.tile(np.arange(K), n)
            st = state.take(tr)
            st.hands = hands[tr, world_of(done, K, n, W)]
            start = st.scores.astype(np.float64)
            node = tree.root[tr].copy()
            path = np.full((n * K, L), -1, dtype=np.int64)
            depth = np.zeros(n * K, dtype=np.int64)
            live = st.phase < core.DEAL
            while live.any():
                m = game.legal_action_mask(st)
                m[~live, 0] = True
                lv = np.nonzero(live)[0]
                prior = np.zeros(m.shape)
                logits, _ = self._policy(game.observe(st.take(lv)), m[lv])
                prior[lv] = torch.softmax(logits, dim=-1).numpy()
                a = np.zeros(n * K, dtype=np.int64)
                made = np.zeros(n * K, dtype=bool)
                for k in range(K):  # one tree's simulations step in turn: each sees the others' virtual losses
                    sel = lv[kk[lv] == k]
                    if sel.size:
                        a[sel], node[sel], made[sel] = tree.descend(tr[sel], node[sel], m[sel], st.cur[sel], prior[sel])
                        path[sel, depth[sel]] = node[sel]
                        depth[sel] += 1
                game.step(st, a, active=live, auto_deal=False, legal=m)
                live &= ~made & (st.phase < core.DEAL)
            tree.backprop(path, self._leaf_rewards(st, start) / span[tr, None])
            done += K
            if self.ms and (time.perf_counter() - t0) * 1000.0 >= self.ms * n:
                break
        self.stats["sims"] += done * n
        return tree.root_visits(), tree.root_values()

    def _leaf_rewards(self, st: Any, start: np.ndarray) -> np.ndarray:
        """(R, P) every seat's margin over the table since the decision plus the rest of the hand's estimate."""
        game, core, P = self.game, self.game.module, self.game.players
        inside = np.nonzero(st.phase < core.DEAL)[0]
        extra = np.zeros((st.scores.shape[0], P))
        if inside.size and self.leaf == "value":
            sub = st.take(inside)
            seats = np.repeat(np.arange(P), inside.size)  # every seat on its own observation of the leaf
            obs = game.observe(sub.take(np.tile(np.arange(inside.size), P)), seat=seats)
            _, v = self._policy(obs, np.ones((obs.shape[0], game.n_actions), dtype=bool))
            extra[inside] = v.numpy().reshape(P, inside.size).T * self.value_scale
        elif inside.size:  # leaf=playout: every seat plays the policy (greedy) to the end of the hand
            sub = st.take(inside)
            alive = np.ones(inside.size, dtype=bool)
            while alive.any():
                m = game.legal_action_mask(sub)
                m[~alive, 0] = True
                logits, _ = self._policy(game.observe(sub), m)
                game.step(sub, torch.argmax(logits, dim=-1).numpy().astype(np.int64), active=alive, auto_deal=False)
                alive &= sub.phase < core.DEAL
            extra[inside] = sub.scores - st.scores[inside]
        pts = st.scores.astype(np.float64) - start + extra
        return pts - (pts.sum(axis=1, keepdims=True) - pts) / (P - 1)

    def _span(self, hand_no: np.ndarray) -> np.ndarray:
        """(n,) the range of one seat's score in each row's hand (the game's ``score_bounds``)."""
        sizes = np.asarray(self.cfg.hand_sizes)[np.asarray(hand_no, dtype=np.int64)]
        bounds = {int(s): self.game.module.score_bounds(self.cfg, int(s)) for s in np.unique(sizes)}
        return np.array([bounds[int(s)][1] - bounds[int(s)][0] for s in sizes], dtype=np.float64)


def _rows(public: dict | None, rows: Any) -> dict | None:
    return None if public is None else {k: np.asarray(v)[rows] for k, v in public.items()}


def make_puct_agent(game: Game | None = None, seed: int | None = None, **options: Any) -> PUCTAgent:
    """Factory behind the ``puct:policy=PATH,sims=N,c_puct=C,...`` agent spec."""
    known: tuple[str, ...] = ("policy", "sims", "c_puct", "worlds", "parallel", "ms", "leaf", "bids", "inference")
    known += ("cards", "oversample", "temper", "value_scale", "batch")
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ValueError(f"unknown puct option(s) {', '.join(unknown)}; known: {', '.join(known)}")
    return PUCTAgent(game, seed=seed, **options)
