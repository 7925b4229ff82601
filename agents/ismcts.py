"""Information Set Monte Carlo Tree Search (SO-ISMCTS) on the batched core, for both games.

``make_agent("ismcts:sims=1000", game)``. The single-observer ISMCTS of
Cowling, Powley & Whitehouse (2012), "Information Set Monte Carlo Tree
Search", IEEE Transactions on Computational Intelligence and AI in Games
4(2) (their Algorithm 2), at every decision with two or more legal actions:
the hat choice, the bids and the cards alike. Each of ``sims`` iterations

1. **determinizes**: draws one deal of the hidden cards consistent with what
   the searching seat knows (:func:`bobshat_env.core.resample.sample_hands`:
   its own hand, the cards seen, the hand sizes, the public void record),
   uniformly;
2. **selects** down a tree of information sets from the searcher's view. A
   node is the sequence of actions since the decision (every action of these
   games is face up, so the sequence is what the searcher would know there);
   only the children whose action is legal in this determinization are
   candidates, and the one chosen maximizes UCB1 with *availability counts*
   (the subset-armed bandit of the paper)::

       mean reward of c  +  uct_c * sqrt(ln(n'(c)) / n(c))

   where ``n(c)`` counts the iterations that chose ``c`` and ``n'(c)`` those
   in which ``c`` was available (legal) when its parent was left, not the
   parent's visits: an opponent's card that the determinizations seldom
   deal is not pushed down by the iterations in which it could not be played;
3. **expands** one node as soon as a legal action of the determinization has
   no child yet (one uniformly at random among them);
4. **rolls out** uniformly random legal actions of every seat to the end of
   the hand;
5. **backpropagates**: every node on the path adds the reward of the seat
   that chose its action (each seat maximizes its own reward at its own
   nodes) and one visit; the compatible siblings of each node on the path
   (including itself) add one availability.

The move played is the root's most visited child (ties: the lowest action id).

Reward and ``uct_c``: the reward of a seat is its score in the hand
(``objective=score``, default, as in the paper and OpenSpiel's ISMCTS), or
its score minus the mean of the other seats' (``objective=diff``: what
duplicate evaluation measures, and what makes Bob's Hat's -10 hat or breaking
an opponent's bid worth something). It is *normalized by the hand's score
bounds* (the game's ``score_bounds`` for the hand size): ``(score - low) /
(high - low)`` in [0, 1], the margin ``/ (high - low)``. So ``uct_c`` is on
the scale of a reward range of 1, as in the paper (which used 0.7 for
win/loss rewards), and one value suits both games and every hand size. The
bounds are loose (Bob's Hat's assume one seat takes every card), so the
rewards seen spread over less than the whole range, which calls for a smaller
constant than the paper's: the default 0.3 and the measurements behind it are
in docs/results/ismcts.md. OpenSpiel's bot adds raw scores: its ``uct_c`` of
2 on Oh Hell's 10-card hands (scores 0 to 20) is 0.1 here.

Honesty: the agent never sees another seat's cards. It rebuilds the public
state from the acting seat's private observation (``game.public_state``, in
which every other hand is empty) and the public void record (``needs_public``),
and fills the hidden hands only by sampling. With secret bidding (a Bob's Hat
option) the tree is keyed by the actions as they were taken in the search,
so the searcher's nodes after a hidden bid are told that bid, a known limit
of SO-ISMCTS with partially observable moves (the paper's MO-ISMCTS lifts it).

Batching: the decisions of a batch (``act`` gets one per game) are searched
together, one tree each: every iteration steps all of them through selection,
expansion and rollout on the batched engine, one engine step per action, so
the Python cost of a step is shared by the batch. The trees live in flat
arrays (:class:`Forest`). Each decision draws its determinizations and
random numbers from its own stream, seeded by the agent's ``seed`` and a
hash of what the seat knows (its observation, its seat, the void record), so
a decision is a pure function of (seed, what the seat knows): the same with
any other decisions in the batch, in any order, and the same when anything
hidden changes.

Options (spec ``ismcts:sims=1000,uct_c=0.3``):

- ``sims`` (default 1000): iterations per decision;
- ``uct_c`` (default 0.3): the exploration constant on normalized rewards;
- ``objective``: ``score`` (default) or ``diff`` (see above);
- ``depth`` (default 0: no limit): the most tree levels below the root an
  iteration goes down before its rollout. ``depth=1`` is flat UCB1 over the
  searcher's own actions, each followed by random play: what OpenSpiel's bot
  nearly amounts to (see docs/results/ismcts.md), kept to measure what the
  tree's depth is worth;
- ``batch`` (default 128): decisions searched together, a memory bound (a
  decision holds its ``sims`` determinizations, random numbers and a tree of
  up to ``sims + 1`` nodes: about 1 MB at 1,000 simulations).

``agent.stats`` counts decisions, searched decisions, nodes made, wall
seconds and process CPU seconds.
"""

from __future__ import annotations

import hashlib
import math
import time
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from bobshat_env.core.resample import sample_hands
from bobshat_env.core.tricks import trick_voids

from .base import pick_ranked

if TYPE_CHECKING:
    from bobshat_env.games import Game

OBJECTIVES = ("score", "diff")


def ucb_scores(
    total: np.ndarray, visits: np.ndarray, avail: np.ndarray, children: np.ndarray, have: np.ndarray, uct_c: float
) -> np.ndarray:
    """(k, A) UCB1 with availability counts of each candidate child, -inf where ``have`` is False.

    ``children`` (k, A): node ids (-1 none) of the children of k nodes by
    action; ``have``: the candidates (children whose action is legal in the
    iteration's determinization). ``total``, ``visits``, ``avail``: per node,
    the reward summed for the seat that chose its action, the iterations
    through it, and the iterations in which it was available. Every candidate
    has been visited (a child is made by the iteration that visits it).
    """
    ids = np.where(have, children, 0)
    n = np.where(have, visits[ids], 1.0)
    seen = np.where(have, avail[ids], 1.0)
    value = total[ids] / n + uct_c * np.sqrt(np.log(seen) / n)
    return np.where(have, value, -np.inf)


def hand_rewards(points: np.ndarray, low: np.ndarray, span: np.ndarray, objective: str = "score") -> np.ndarray:
    """(n, P) every seat's reward for its hand's ``points`` (n, P), on the scale of a range of 1.

    ``score``: ``(points - low) / span``, in [0, 1] when ``low`` and ``low +
    span`` (n,) are the hand's score bounds; ``diff``: a seat's points minus
    the mean of the other seats', over ``span`` (in [-1, 1]).
    """
    pts = np.asarray(points, dtype=np.float64)
    if objective == "diff":
        P = pts.shape[1]
        return (pts - (pts.sum(axis=1, keepdims=True) - pts) / (P - 1)) / span[:, None]
    return (pts - low[:, None]) / span[:, None]


class Trees:
    """The search trees of a batch of decisions, one per decision, in flat arrays: what ISMCTS's
    :class:`Forest` and PUCT's :class:`agents.puct.Tree` share.

    Node ids are global: tree ``b`` holds ids ``b * nodes`` to ``(b + 1) *
    nodes - 1``, its root first. ``child[v, a]`` is the child of node ``v``
    by action ``a`` (-1: none yet); ``who[v]`` the seat that chose the action
    leading to ``v``; ``visits`` and ``total`` (its rewards for ``who``) the
    node's statistics as an arm of its parent's bandit.
    """

    kind = "search"  # names the search in the tree-full error

    def __init__(self, trees: int, nodes: int, n_actions: int):
        T = trees * nodes
        self.child = np.full((T, n_actions), -1, dtype=np.int32)
        self.who = np.full(T, -1, dtype=np.int8)
        self.visits = np.zeros(T)
        self.total = np.zeros(T)
        self.root = np.arange(trees, dtype=np.int64) * nodes
        self.free = self.root + 1  # next node id of each tree
        self.end = self.root + nodes

    def grow(self, trees: np.ndarray, node: np.ndarray, act: np.ndarray, seat: np.ndarray) -> np.ndarray:
        """The new children of nodes ``node`` (of trees ``trees``, one row per tree) by ``act``, chosen
        by ``seat``; returns their ids. A tree has one node per simulation and its root, so running
        out of nodes is a bug."""
        new = self.free[trees]
        if np.any(new >= self.end[trees]):
            raise RuntimeError(f"{self.kind} tree full: more nodes than simulations (a bug)")
        self.free[trees] += 1
        self.child[node, act] = new
        self.who[new] = seat
        return new

    def root_visits(self) -> np.ndarray:
        """(trees, A) visits of each root child (0 where none)."""
        ch = self.child[self.root]
        return np.where(ch >= 0, self.visits[np.maximum(ch, 0)], 0.0)

    def root_values(self) -> np.ndarray:
        """(trees, A) the mean reward of each root child for the searching seat (NaN where none)."""
        ch = self.child[self.root]
        ids = np.maximum(ch, 0)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where((ch >= 0) & (self.visits[ids] > 0), self.total[ids] / self.visits[ids], np.nan)


class Forest(Trees):
    """ISMCTS's trees (:class:`Trees`), with ``avail``: how often each node was legal when its
    parent chose, the availability count of UCB1 in ISMCTS."""

    kind = "ISMCTS"

    def __init__(self, trees: int, nodes: int, n_actions: int, uct_c: float):
        super().__init__(trees, nodes, n_actions)
        self.avail = np.zeros(self.visits.shape[0])
        self.uct_c = float(uct_c)

    def descend(
        self, trees: np.ndarray, node: np.ndarray, legal: np.ndarray, seat: np.ndarray, u: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One step down trees ``trees`` from nodes ``node``: (actions, the nodes reached, which expanded).

        ``legal`` (k, A): the legal actions of each tree's determinization
        here; ``seat`` (k,): the seat to act; ``u`` (k,): a uniform number
        each, which picks the action to expand. A node with a legal action
        that has no child yet expands one (uniformly among them); otherwise
        UCB1 with availability counts chooses among the children that are
        legal. Every legal child counts one more availability (the new
        child its first).
        """
        ch = self.child[node]
        have = (ch >= 0) & legal
        untried = legal & (ch < 0)
        expand = untried.any(axis=1)
        act = np.empty(node.shape[0], dtype=np.int64)
        sel = ~expand
        if sel.any():
            act[sel] = np.argmax(ucb_scores(self.total, self.visits, self.avail, ch[sel], have[sel], self.uct_c), 1)
        self.avail[ch[have]] += 1  # after the choice: n' counts the iterations before this one
        if expand.any():
            e = np.nonzero(expand)[0]
            act[e] = pick_ranked(untried[e], u[e])
            self.avail[self.grow(trees[e], node[e], act[e], seat[e])] = 1
        return act, self.child[node, act].astype(np.int64), expand

    def backprop(self, path: np.ndarray, rewards: np.ndarray) -> None:
        """Add one visit and the reward of each node's chooser along ``path`` (k, D) (-1 padded); ``rewards`` (k, P).

        Row ``r`` of ``path`` belongs to one tree, so a column holds each node once.
        """
        for d in range(path.shape[1]):
            col = path[:, d]
            ok = np.nonzero(col >= 0)[0]
            if not ok.size:
                break
            ids = col[ok]
            self.visits[ids] += 1
            self.total[ids] += rewards[ok, self.who[ids].astype(np.int64)]


class ISMCTSAgent:
    """Single-observer information set MCTS for both games (see the module docstring)."""

    needs_public = True

    def __init__(
        self,
        game: Game | None = None,
        seed: int | None = None,
        sims: int = 1000,
        uct_c: float = 0.3,
        objective: str = "score",
        batch: int = 128,
        depth: int = 0,
    ):
        if game is None or getattr(game, "module", None) is None:
            raise ValueError("the 'ismcts' agent needs a game (bobs_hat or oh_hell)")
        for key, value in (("sims", sims), ("batch", batch)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"ismcts option {key} must be a positive integer, got {value!r}")
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 0:
            raise ValueError(f"ismcts option depth must be an integer >= 0 (0: no limit), got {depth!r}")
        if isinstance(uct_c, bool) or not isinstance(uct_c, (int, float)) or not (math.isfinite(uct_c) and uct_c >= 0):
            raise ValueError(f"ismcts option uct_c must be a finite number >= 0, got {uct_c!r}")
        if objective not in OBJECTIVES:
            raise ValueError(f"unknown ismcts objective {objective!r}; choose one of {', '.join(OBJECTIVES)}")
        self.game = game
        self.cfg = game.config
        self.sims, self.uct_c, self.objective, self.batch, self.depth = sims, float(uct_c), objective, batch, depth
        self.name = (
            f"ismcts:sims={sims},uct_c={uct_c:g}"
            + ("" if objective == "score" else f",objective={objective}")
            + (f",depth={depth}" if depth else "")
        )
        # an int seed or None (fresh entropy, still one per agent) gives an int
        self.entropy = int(cast(int, np.random.SeedSequence(seed).entropy))
        self.stats = {"decisions": 0, "searched": 0, "nodes": 0, "seconds": 0.0, "cpu_seconds": 0.0}

    def act(self, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray, public: dict | None = None) -> np.ndarray:
        """(B,) legal actions: the most visited root child, or the only legal action."""
        t0, c0 = time.perf_counter(), time.process_time()
        mask = np.asarray(mask, dtype=bool)
        out = np.argmax(mask, axis=1)
        rows = np.nonzero(mask.sum(axis=1) > 1)[0]
        if rows.size:
            visits = self.root_visits(obs[rows], mask[rows], np.asarray(seat)[rows], _rows(public, rows))
            out[rows] = np.argmax(visits, axis=1)
        self.stats["decisions"] += mask.shape[0]
        self.stats["searched"] += int(rows.size)
        self.stats["seconds"] += time.perf_counter() - t0
        self.stats["cpu_seconds"] += time.process_time() - c0
        return out

    def root_visits(
        self, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray, public: dict | None = None
    ) -> np.ndarray:
        """(B, A) how many of the ``sims`` iterations chose each action at the root (searched in batches)."""
        return self.search(obs, mask, seat, public)[0]

    def action_values(
        self, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray, public: dict | None = None
    ) -> np.ndarray:
        """(B, A) each root action's mean reward for the seat (normalized, see ``objective``), NaN where not tried."""
        return self.search(obs, mask, seat, public)[1]

    def search(
        self, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray, public: dict | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(B, A) root visits and (B, A) root mean rewards of every decision, searched ``batch`` at a time."""
        mask = np.asarray(mask, dtype=bool)
        seat = np.asarray(seat, dtype=np.int64)
        visits, values = np.zeros(mask.shape), np.full(mask.shape, np.nan)
        for i in range(0, mask.shape[0], self.batch):
            r = np.arange(i, min(i + self.batch, mask.shape[0]))
            visits[r], values[r] = self._search(np.asarray(obs)[r], mask[r], seat[r], _rows(public, r))
        return visits, values

    # -- one batch of searches
    def determinize(
        self, obs: np.ndarray, seat: np.ndarray, public: dict | None = None
    ) -> tuple[Any, np.ndarray, np.ndarray]:
        """What the search of each decision starts from: its public state, ``sims`` worlds and random numbers.

        Returns the public state (other hands empty), the worlds' hands (n,
        sims, P, N) (the seat's own hand, the hidden cards dealt consistently
        with the counts and voids it has seen) and (n, sims, L) uniform numbers
        (one per action of an iteration: expansions and rollouts), all drawn
        from the decision's own stream.
        """
        game, S = self.game, self.sims
        seat = np.asarray(seat, dtype=np.int64)
        n, P = seat.shape[0], game.players
        state, counts, unseen = game.public_state(obs, seat)
        void = trick_voids(state.trick, state.led_suit, game.deck)
        if public is not None and "void" in public:
            void |= np.asarray(public["void"], dtype=bool)
        gens = self._streams(obs, seat, void)
        L = int(counts.sum(axis=1).max()) + P + 2  # actions left in the hand at most: cards, bids, the hat
        hands = np.empty((n, S) + state.hands.shape[1:], dtype=bool)
        uniforms = np.empty((n, S, L), dtype=np.float32)
        for b in range(n):
            one = slice(b, b + 1)
            own = state.hands[one, seat[b]]
            hands[b] = sample_hands(own, seat[one], unseen[one], counts[one], void[one], game.deck, S, gens[b])[0]
            uniforms[b] = gens[b].random((S, L), dtype=np.float32)
        return state, hands, uniforms

    def _search(
        self, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray, public: dict | None
    ) -> tuple[np.ndarray, np.ndarray]:
        game, core, S = self.game, self.game.module, self.sims
        state, hands, uniforms = self.determinize(obs, seat, public)
        n, L = seat.shape[0], uniforms.shape[2]
        low, span = self._bounds(state.hand_no)
        forest = Forest(n, S + 1, game.n_actions, self.uct_c)
        trees = np.arange(n)
        result, m = game.new_result(n), np.empty((n, game.n_actions), dtype=bool)  # reused by every step
        for i in range(S):
            st = state.copy()
            st.hands = hands[:, i].copy()
            start = st.scores.copy()
            node = forest.root.copy()
            path = np.full((n, L), -1, dtype=np.int64)  # the nodes below the root each tree went through
            depth = np.zeros(n, dtype=np.int64)
            in_tree = np.ones(n, dtype=bool)
            live = st.phase < core.DEAL
            t = 0
            while live.any():
                game.legal_action_mask(st, out=m)
                m[~live, 0] = True  # finished rows ride along (their action is ignored)
                a = pick_ranked(m, uniforms[:, i, t])  # the rollout's random action (in-tree rows: replaced)
                sel = np.nonzero(live & in_tree)[0]
                if sel.size:
                    a[sel], node[sel], expanded = forest.descend(
                        trees[sel], node[sel], m[sel], st.cur[sel], uniforms[sel, i, t]
                    )
                    path[sel, depth[sel]] = node[sel]
                    depth[sel] += 1
                    in_tree[sel[expanded]] = False
                    if self.depth:
                        in_tree[sel[depth[sel] >= self.depth]] = False  # the rest of this iteration is rollout
                game.step(st, a, active=live, auto_deal=False, legal=m, result=result)
                t += 1
                live = st.phase < core.DEAL
            forest.backprop(path, hand_rewards(st.scores - start, low, span, self.objective))
        self.stats["nodes"] += int((forest.free - forest.root).sum())
        return forest.root_visits(), forest.root_values()

    def _bounds(self, hand_no: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(low, high - low) of one seat's score in each row's hand (the game's ``score_bounds``)."""
        sizes = np.asarray(self.cfg.hand_sizes)[np.asarray(hand_no, dtype=np.int64)]
        bounds = {int(s): self.game.module.score_bounds(self.cfg, int(s)) for s in np.unique(sizes)}
        low = np.array([bounds[int(s)][0] for s in sizes], dtype=np.float64)
        high = np.array([bounds[int(s)][1] for s in sizes], dtype=np.float64)
        return low, high - low

    def _streams(self, obs: np.ndarray, seat: np.ndarray, void: np.ndarray) -> list[np.random.Generator]:
        """One generator per decision, seeded by the agent's seed and a hash of what the seat knows."""
        out = []
        for b in range(seat.shape[0]):
            h = hashlib.blake2b(digest_size=16)
            h.update(np.ascontiguousarray(obs[b], dtype=np.float32).tobytes())
            h.update(np.int64(seat[b]).tobytes())
            h.update(np.ascontiguousarray(void[b], dtype=bool).tobytes())
            digest = h.digest()
            words = [int.from_bytes(digest[k : k + 8], "little") for k in (0, 8)]
            out.append(np.random.default_rng(np.random.SeedSequence([self.entropy, *words])))
        return out


def _rows(public: dict | None, rows: Any) -> dict | None:
    return None if public is None else {k: np.asarray(v)[rows] for k, v in public.items()}


def make_ismcts_agent(game: Game | None = None, seed: int | None = None, **options: Any) -> ISMCTSAgent:
    """Factory behind the ``ismcts:sims=N,uct_c=C,objective=O,batch=B,depth=D`` agent spec."""
    known = ("sims", "uct_c", "objective", "batch", "depth")
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ValueError(f"unknown ismcts option(s) {', '.join(unknown)}; known: {', '.join(known)}")
    return ISMCTSAgent(game, seed=seed, **options)
