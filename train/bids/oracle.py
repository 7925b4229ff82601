"""The oracles: the value of every legal alternative of a bidding decision, in hindsight and on average
over the worlds consistent with what the bidder saw, by playing each hand out with the play policy.

The method and its caveats are in :mod:`train.bids`; :func:`decision_values`
is the public entry for any batch of bidding decisions. What differs between
the games is the class each game's description names (``bid_oracle``:
:class:`train.bids.bobs_hat.BobsHatOracle`, :class:`train.bids.oh_hell.OhHellOracle`);
everything else asks the Game.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from bobshat_env.core.resample import sample_hands
from bobshat_env.games import Game, describe, load
from bobshat_env.seating import SeatDispatch

from .bidders import is_sampling, make_role

OBJECTIVES = ("score", "margin")
SAMPLING_PLAYOUTS = 8  # playouts per world and alternative with a sampling play policy


def game_pieces(game_name: str) -> Any:
    """The bidding benchmark's pieces of a game: the class its description names (``bid_oracle``)."""
    return load(describe(game_name).bid_oracle)


def concat_states(states: list[Any]) -> Any:
    """One batch of game states from several (the decisions kept at different steps)."""
    return type(states[0])(**{f.name: np.concatenate([getattr(s, f.name) for s in states]) for f in fields(states[0])})


@dataclass
@dataclass
class Decisions:
    """Every bidding decision of one bidder in a chunk, with both oracles' values (arrays of one length n)."""

    deal: np.ndarray  # (n,) deal index
    hand: np.ndarray  # (n,) 0-based hand number
    size: np.ndarray  # (n,) cards per player
    from_dealer: np.ndarray  # (n,) (seat - dealer) % P
    is_hat: np.ndarray  # (n,) bool: the dealer's hat choice (else a bid)
    chosen: np.ndarray  # (n,) action id
    score: np.ndarray  # (n,) the hand's actual score for the bidder
    margin: np.ndarray  # (n,) its score minus the other seats' mean
    q_hind: np.ndarray  # (n, A) hindsight value (score) of each bid/hat action (NaN: illegal)
    q_info: np.ndarray  # (n, A) information-set value (score)
    m_hind: np.ndarray  # (n, A) hindsight value (margin)
    m_info: np.ndarray  # (n, A) information-set value (margin)
    extra: dict[str, np.ndarray]  # game-specific: made flags, tricks (see _outcome)
    probs: np.ndarray | None = None  # (n, A) the bidder's probabilities of each bid/hat action (NaN: unknown)

    @staticmethod
    def concat(parts: list[Decisions]) -> Decisions:
        """One record of the decisions of several chunks, in the order given."""
        kw = {
            f.name: np.concatenate([getattr(p, f.name) for p in parts])
            for f in fields(Decisions)
            if f.name not in ("extra", "probs")
        }
        if all(p.probs is not None for p in parts):
            kw["probs"] = np.concatenate([p.probs for p in parts])
        extra = {k: np.concatenate([p.extra[k] for p in parts]) for k in parts[0].extra}
        return Decisions(**kw, extra=extra)


def outcome(game: Game, state: Any, g: np.ndarray, seat: np.ndarray) -> dict[str, np.ndarray]:
    """What a finished hand says about seat ``seat`` of games ``g``: its score, bid and bid outcomes."""
    pts = state.last_scores[g].astype(np.float64)
    out = {"score": pts[np.arange(g.size), seat], "margin": margin_of(pts, seat)}
    out.update(game_pieces(game.name).hand_facts(game, state, g, seat))
    return out


def margin_of(points: np.ndarray, seat: np.ndarray) -> np.ndarray:
    """(n,) seat ``seat``'s points minus the mean of the other seats' (points: (n, P))."""
    own = points[np.arange(points.shape[0]), seat]
    return own - (points.sum(axis=1) - own) / (points.shape[1] - 1)


def rollout(game: Game, play: Any, st: Any, forced: np.ndarray) -> int:
    """Play rows of ``st`` (changed in place) to the end of their hand: ``forced[:, k]`` in turn
    (-1: none), then the play policy for every seat and decision. Returns the decisions played."""
    mod = game.module
    R = st.batch_size
    steps = 0
    seats = SeatDispatch(game, R, [play])  # no card has been played yet: an empty void record
    for k in range(forced.shape[1]):
        act = forced[:, k]
        active = (act >= 0) & (st.phase < mod.DEAL)
        if active.any():
            game.step(st, np.where(active, act, 0), active=active, auto_deal=False)
            steps += int(active.sum())
    live = st.phase < mod.DEAL
    while live.any():
        mask = game.legal_action_mask(st)
        obs = game.observe(st)
        seat = st.cur.astype(np.int64)
        rows = np.nonzero(live)[0]
        actions = np.zeros(R, dtype=np.int64)
        actions[rows] = seats.act_rows(play, obs, mask, seat, rows)
        seats.before_step(st, actions, live)
        res = game.step(st, actions, active=live, auto_deal=False, legal=mask)
        seats.after_step(res.new_hand)
        steps += rows.size
        live = st.phase < mod.DEAL
    return steps


def oracle_values(
    game: Game,
    play: Any,
    base: Any,
    legal: np.ndarray,
    follow: np.ndarray,
    seat: np.ndarray,
    K: int,
    n_play: int,
    gen: np.random.Generator,
    max_rows: int,
) -> dict[str, Any]:
    """Both oracles' values of every legal alternative of the decisions ``base`` (one state per decision).

    legal: (n, A) the legal bid/hat actions (offset ``N_CARDS``);
    follow: (n,) the bidder's own next action to force after the alternative (a hat choice's bid), -1
    none; seat: (n,) the bidder's seat.
    World 0 is the actual deal; worlds 1..K are drawn from what the bidder saw. Returns the values
    (``q_*``: score, ``m_*``: margin) and ``facts``: the information-set mean of each of the game's
    playout facts (``playout_facts``), (n, A, ...).
    """
    mod = game.module
    n, A = legal.shape
    P = game.players
    # The worlds: hidden hands drawn from the bidder's own observation (no card has been played yet).
    pub, counts, unseen = game.public_state(game.observe(base), seat)
    void = np.zeros((n, P, game.deck.n_suits), dtype=bool)
    own = base.hands[np.arange(n), seat]
    worlds = sample_hands(own, seat, unseen, counts, void, game.deck, K, gen)  # (n, K, P, N)
    # Rows: (decision, world 0..K, alternative, playout), flat; sorted by hand size so batches end together.
    dec_i, alt = np.nonzero(legal)
    W = K + 1
    dec_i = np.repeat(dec_i, W * n_play)
    alt = np.repeat(alt, W * n_play)
    world = np.tile(np.repeat(np.arange(W), n_play), legal.sum())
    order = np.argsort(np.asarray(base.hand_size)[dec_i], kind="stable")
    dec_i, alt, world = dec_i[order], alt[order], world[order]
    total = dec_i.size
    score = np.zeros(total)
    margin = np.zeros(total)
    facts: dict[str, np.ndarray] = {}
    kind = game_pieces(game.name)
    steps = 0
    for lo in range(0, total, max_rows):
        sl = slice(lo, min(total, lo + max_rows))
        d, w = dec_i[sl], world[sl]
        st = base.take(d)
        hidden = w > 0
        st.hands[hidden] = worlds[d[hidden], w[hidden] - 1]
        forced = np.stack([alt[sl] + mod.N_CARDS, follow[d]], axis=1)
        steps += rollout(game, play, st, forced)
        r = np.arange(d.size)
        pts = st.last_scores.astype(np.float64)
        score[sl] = pts[r, seat[d]]
        margin[sl] = margin_of(pts, seat[d])
        for k, v in kind.playout_facts(game, st, seat[d]).items():
            v = v.reshape(d.size, -1).astype(np.float64)
            facts.setdefault(k, np.zeros((total, v.shape[1])))[sl] = v
    # Means per (decision, alternative, world) over playouts, then per oracle.
    key = (dec_i * A + alt) * W + world
    cnt = np.bincount(key, minlength=n * A * W).reshape(n, A, W)

    def mean_of(values: np.ndarray) -> np.ndarray:
        s = np.bincount(key, weights=values, minlength=n * A * W).reshape(n, A, W)
        with np.errstate(invalid="ignore"):
            return s / cnt

    q, m = mean_of(score), mean_of(margin)
    out: dict[str, Any] = {"q_hind": q[..., 0], "q_info": q[..., 1:].mean(axis=2), "playouts": total, "steps": steps}
    out["m_hind"], out["m_info"] = m[..., 0], m[..., 1:].mean(axis=2)

    def info_mean(v: np.ndarray) -> np.ndarray:  # (total, m) -> (n, A, m): mean over the K worlds
        return np.stack([mean_of(v[:, j])[..., 1:].mean(axis=2) for j in range(v.shape[1])], axis=-1)

    out["facts"] = {k: info_mean(v) for k, v in facts.items()}
    return out


def decision_values(
    game: Game,
    state: Any,
    play: str | Any,
    worlds: int = 8,
    seed: int = 0,
    playouts: int | None = None,
    follow: np.ndarray | None = None,
    max_rows: int = 16384,
    objective: str = "score",
) -> tuple[np.ndarray, np.ndarray]:
    """Both oracles' values of every action of the bidding decisions in ``state`` (not changed).

    ``state``: B games, each at a hat choice or bid of its seat to act.
    ``play``: the play policy (a spec or an agent). ``follow``: (B,) the
    acting seat's own next action to force after the alternative (how a hat
    choice is valued with the dealer's bid as made), -1 none. Returns
    (hindsight, information set) values, (B, n_actions) each, NaN where the
    action is illegal: the seat's score for the hand after that action, or
    with ``objective="margin"`` its score minus the other seats' mean.
    """
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {', '.join(OBJECTIVES)}, got {objective!r}")
    if isinstance(worlds, bool) or not isinstance(worlds, (int, np.integer)) or worlds < 1:
        raise ValueError(f"worlds must be an integer >= 1, got {worlds!r}")
    mod = game.module
    mask = game.legal_action_mask(state)
    if mask[:, : mod.N_CARDS].any():
        raise ValueError("decision_values() needs bidding decisions (a hat choice or a bid) in every game")
    agent = make_role(play, game, seed, "--play") if isinstance(play, str) else play
    n_play = (playouts or SAMPLING_PLAYOUTS) if is_sampling(agent) else 1
    B = state.batch_size
    follow = np.full(B, -1, dtype=np.int64) if follow is None else np.asarray(follow, dtype=np.int64).reshape(B)
    gen = np.random.default_rng(seed)
    out = oracle_values(
        game, agent, state.copy(), mask[:, mod.N_CARDS :], follow, state.cur.astype(np.int64), worlds, n_play, gen,
        max_rows,
    )  # fmt: skip
    pad = np.full((B, mod.N_CARDS), np.nan)
    hind, info = (out["q_hind"], out["q_info"]) if objective == "score" else (out["m_hind"], out["m_info"])
    return np.concatenate([pad, hind], axis=1), np.concatenate([pad, info], axis=1)


@dataclass
class BidsResult:
    """One table's measurement: the JSON table (:attr:`table`) and every decision behind it."""

    game: Game
    table: dict
    decisions: dict[str, Decisions]
