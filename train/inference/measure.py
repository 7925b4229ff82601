"""Inference quality as a measurement: how close each method's worlds come to the true hidden hands.

Games of one agent at every seat (the shipped policy by default) are played
with a seed; at every decision of the chosen seats, each inference method of
:mod:`agents.inference` draws ``worlds`` worlds from that seat's view exactly
as the search would, and is scored against the truth on every card the seat
has not seen (the cards of the other hands and those out of play):

- **log-likelihood**: the method's marginal for a card is the share of its
  worlds that give the card to each holder (nobody, or one of the other
  seats); the score is the log of the true holder's share, floored at
  ``FLOOR / worlds`` (half a world: a holder no world chose would give log 0,
  minus infinity). A method that knows the truth scores 0; uniform worlds
  score about ``-log(#possible holders)``;
- **accuracy**: the share of unseen cards whose most likely holder (the
  first of the largest shares) is the true one.

Each game's scores are the means over all its (decision, card) pairs; the
report's means and 95% confidence intervals are over games (the games are
independent; the decisions within one are not), in all and per phase: the
bidding (hat choice and bids) and each trick number. Differences from the
uniform method are paired over games (the same decisions are scored).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agents.inference import METHODS, CardNet, WorldSampler, holders
from bobshat_env.core import rng
from bobshat_env.core.resample import void_tracker
from bobshat_env.games import Game
from train.evaluate.statistics import mean_ci

FLOOR = 0.5  # worlds: a holder that no world chose is scored as if half a world had chosen it
BID = 0  # the phase bucket of the hat choice and the bids; trick t (1-based) is bucket t


def marginals(hands: np.ndarray, seat: np.ndarray) -> np.ndarray:
    """(n, N, P) share of the worlds ``hands`` (n, W, P, N) that give each card to each holder class."""
    cls = holders(hands, seat)  # (n, W, N)
    P = hands.shape[2]
    return (cls[..., None] == np.arange(P)).mean(axis=1)


def score(marginal: np.ndarray, truth: np.ndarray, unseen: np.ndarray, floor: float) -> tuple[np.ndarray, ...]:
    """Per decision: (sum of log p(true holder), cards scored, cards placed right) over its unseen cards.

    ``marginal`` (n, N, P) holder probabilities, ``truth`` (n, N) true holder
    classes, ``unseen`` (n, N) the cards to score; ``floor`` is the least
    probability a true holder is given (so that log 0 cannot happen).
    """
    unseen = np.asarray(unseen, dtype=bool)
    p = np.take_along_axis(marginal, np.asarray(truth)[..., None], axis=2)[..., 0]
    logp = np.where(unseen, np.log(np.maximum(p, floor)), 0.0)
    right = unseen & (np.argmax(marginal, axis=2) == truth)
    return logp.sum(axis=1), unseen.sum(axis=1), right.sum(axis=1)


@dataclass
class Tally:
    """Sums per (game, phase bucket) of one method: log-likelihood, cards, cards placed right."""

    games: int
    buckets: int
    loglik: np.ndarray = field(init=False)
    cards: np.ndarray = field(init=False)
    right: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        shape = (self.games, self.buckets)
        self.loglik, self.cards, self.right = np.zeros(shape), np.zeros(shape), np.zeros(shape)

    def add(self, game: np.ndarray, bucket: np.ndarray, parts: tuple[np.ndarray, ...]) -> None:
        loglik, cards, right = parts
        np.add.at(self.loglik, (game, bucket), loglik)
        np.add.at(self.cards, (game, bucket), cards)
        np.add.at(self.right, (game, bucket), right)

    def per_game(self, buckets: slice | int = slice(None)) -> tuple[np.ndarray, np.ndarray]:
        """(mean log-likelihood per card, accuracy) of each game over ``buckets``; NaN where a game has no card."""
        ll, n, r = (x[:, buckets] for x in (self.loglik, self.cards, self.right))
        if ll.ndim == 2:
            ll, n, r = ll.sum(axis=1), n.sum(axis=1), r.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(n > 0, ll / np.maximum(n, 1), np.nan), np.where(n > 0, r / np.maximum(n, 1), np.nan)


def _ci(x: np.ndarray) -> dict[str, Any]:
    x = x[np.isfinite(x)]
    mean, half = mean_ci(x)
    return {"mean": _num(mean), "ci95": _num(half), "games": int(x.size)}


def _num(v: float) -> float | None:
    return None if not np.isfinite(v) else round(float(v), 6)


def bucket_name(b: int) -> str:
    return "bids" if b == BID else f"trick {b}"


def measure(
    game: Game,
    samplers: dict[str, WorldSampler],
    player: Any,
    games: int = 8,
    seed: int = 0,
    seats: tuple[int, ...] | None = None,
    max_hands: int | None = None,
    progress: Any = None,
) -> dict[str, Any]:
    """Play ``games`` games of ``player`` at every seat and score each sampler at the decisions of ``seats``.

    ``samplers``: method name -> :class:`agents.inference.WorldSampler` (all
    with the same number of worlds, for a fair table). ``max_hands`` stops
    each game after that many hands. Returns the report (see :func:`format_report`).
    """
    core = game.module
    P, N = game.players, game.deck.n_cards
    max_tricks = N // P
    seats = tuple(range(P)) if seats is None else tuple(seats)
    worlds = {m: s.worlds for m, s in samplers.items()}
    tallies = {m: Tally(games, max_tricks + 1) for m in samplers}
    state = game.init(rng.game_keys(seed, np.arange(games), 0))
    tracker = void_tracker(game, games)
    active = ~game.done(state)
    decisions, t0 = 0, time.perf_counter()
    seconds = dict.fromkeys(samplers, 0.0)
    while active.any():
        mask = game.legal_action_mask(state)
        obs = game.observe(state)
        seat = state.cur.astype(np.int64)
        rows = np.nonzero(active & np.isin(seat, seats))[0]
        if rows.size:
            public = tracker.rows(rows)
            truth = holders(state.hands[rows], seat[rows])
            _, _, unseen = game.public_state(obs[rows], seat[rows])
            unseen &= ~state.hands[rows, seat[rows]]
            bucket = np.where(state.phase[rows] < core.PLAY, BID, state.tricks_done[rows].astype(np.int64) + 1)
            for m, sampler in samplers.items():
                t = time.perf_counter()
                _, hands = sampler.sample(obs[rows], seat[rows], public)
                parts = score(marginals(hands, seat[rows]), truth, unseen, FLOOR / worlds[m])
                tallies[m].add(rows, bucket, parts)
                seconds[m] += time.perf_counter() - t
            decisions += int(rows.size)
        newly = play_step(game, player, state, tracker, obs, mask, seat, active, max_hands)
        if progress is not None and newly.any():
            progress(int(newly.sum()))
        active &= ~newly
    return report(game, tallies, worlds, seconds, games, seed, seats, decisions, time.perf_counter() - t0)



def play_step(
    game: Game, player: Any, state: Any, tracker: Any, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray,
    active: np.ndarray, max_hands: int | None, public: dict | None = None,
) -> np.ndarray:  # fmt: skip
    """One step of the ``active`` games, every seat played by ``player`` (with the hand's public record
    if it asks: ``public`` of the live games when the caller has it, else read from ``tracker``), the
    void record following; returns the games that ended (or reached ``max_hands``) at this step."""
    live = np.nonzero(active)[0]
    actions = np.zeros(active.shape[0], dtype=np.int64)
    args: tuple = (obs[live], mask[live], seat[live])
    if getattr(player, "needs_public", False):
        args += (tracker.rows(live) if public is None else public,)
    actions[live] = player.act(*args)
    tracker.before_step(state, actions, active)
    tracker.after_step(game.step(state, actions, active=active, legal=mask))
    ended = game.done(state)
    if max_hands is not None:
        ended |= state.hand_no >= max_hands
    return active & ended


def report(
    game: Game,
    tallies: dict[str, Tally],
    worlds: dict[str, int],
    seconds: dict[str, float],
    games: int,
    seed: int,
    seats: tuple[int, ...],
    decisions: int,
    wall: float,
) -> dict[str, Any]:
    """The measurement as JSON-ready data: per method, in all and per phase, with paired differences from none."""
    methods: dict[str, Any] = {}
    base = tallies.get("none")
    for m, tally in tallies.items():
        ll, acc = tally.per_game()
        entry: dict[str, Any] = {
            "worlds": worlds[m],
            "seconds": round(seconds[m], 3),
            "log_likelihood": _ci(ll),
            "accuracy": _ci(acc),
            "phases": {},
        }
        if base is not None and m != "none":
            bll, bacc = base.per_game()
            entry["log_likelihood_minus_none"] = _ci(ll - bll)
            entry["accuracy_minus_none"] = _ci(acc - bacc)
        for b in range(tally.buckets):
            pll, pacc = tally.per_game(b)
            if np.isfinite(pll).any():
                entry["phases"][bucket_name(b)] = {"log_likelihood": _ci(pll), "accuracy": _ci(pacc)}
        methods[m] = entry
    return {
        "game": game.name,
        "players": game.players,
        "games": games,
        "seed": seed,
        "seats": list(seats),
        "decisions": decisions,
        "cards_scored": int(next(iter(tallies.values())).cards.sum()) if tallies else 0,
        "floor_worlds": FLOOR,
        "wall_seconds": round(wall, 3),
        "methods": methods,
    }


def format_report(doc: dict[str, Any]) -> str:
    """The report as a text table: per method, in all and per phase, mean ± 95% CI over games."""

    def cell(d: dict[str, Any], signed: bool = True, ci: bool = True) -> str:
        if d["mean"] is None:
            return "-"
        text = f"{d['mean']:+.3f}" if signed else f"{d['mean']:.3f}"
        return text + (f" ±{d['ci95']:.3f}" if ci and d["ci95"] is not None else "")

    methods = doc["methods"]
    lines = [
        f"{doc['game']}, {doc['players']} players: {doc['games']} games, seed {doc['seed']}, "
        f"seats {','.join(map(str, doc['seats']))}; {doc['decisions']} decisions, "
        f"{doc['cards_scored']} unseen cards scored per method",
        "",
        "log-likelihood of the true holder per unseen card (0: certain) and accuracy, ±95% CI over games",
        f"{'method':<8} {'worlds':>6}  {'log-likelihood':>16}  {'accuracy':>14}  {'ll - none':>16}  {'seconds':>8}",
    ]
    for m, e in methods.items():
        diff = cell(e["log_likelihood_minus_none"]) if "log_likelihood_minus_none" in e else ""
        lines.append(
            f"{m:<8} {e['worlds']:>6}  {cell(e['log_likelihood']):>16}  {cell(e['accuracy'], False):>14}  "
            f"{diff:>16}  {e['seconds']:>8.1f}"
        )
    phases = list(dict.fromkeys(p for e in methods.values() for p in e["phases"]))
    if phases:
        lines += ["", "per phase: log-likelihood / accuracy (means over games)"]
        lines.append(f"{'phase':<9}" + "".join(f"  {m:>17}" for m in methods))
        for p in phases:
            row = f"{p:<9}"
            for e in methods.values():
                ph = e["phases"].get(p)
                text = (
                    "-"
                    if ph is None
                    else f"{cell(ph['log_likelihood'], ci=False)} / {cell(ph['accuracy'], False, False)}"
                )
                row += f"  {text:>17}"
            lines.append(row)
    return "\n".join(lines)


__all__ = ["BID", "FLOOR", "METHODS", "CardNet", "Tally", "format_report", "marginals", "measure", "report", "score"]
