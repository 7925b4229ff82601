"""Learned inference: train the card-location network (:class:`agents.inference.CardNet`) on self-play games.

Games of one agent at every seat (the shipped policy by default) are played
with a seed; every decision of every seat gives one example: the seat's view
(:func:`agents.inference.card_features`: its observation and the hand's
public record) and, for every card it has not seen, the true holder (nobody
or a seat after it). The network is fitted by cross-entropy over the unseen
cards; its output is a correction to the hard facts' prior (the same
:func:`agents.inference.holder_prior` the sampler applies: holders in
proportion to the cards they hold, impossible ones excluded), fitted on the
examples of all games but a held-out share, whose mean log-likelihood and
accuracy per unseen card are reported beside those of the prior alone (a
baseline that needs no training).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from agents.inference import CardNet, card_features, holder_prior, holders
from bobshat_env.core import rng
from bobshat_env.core.resample import trick_voids, void_tracker
from bobshat_env.games import Game
from train.inference.measure import play_step


@dataclass
class Examples:
    """Card-location examples: inputs (n, F), true holders (n, N), cards to score (n, N), the hard facts'
    log prior of the holders (n, N, P; -inf where impossible) and the game each came from (n,)."""

    x: np.ndarray
    truth: np.ndarray
    unseen: np.ndarray
    prior: np.ndarray
    game: np.ndarray

    def take(self, rows: np.ndarray) -> Examples:
        return Examples(self.x[rows], self.truth[rows], self.unseen[rows], self.prior[rows], self.game[rows])


def collect(
    game: Game, player: Any, games: int, seed: int, max_hands: int | None = None, keep: float = 1.0
) -> Examples:
    """Examples from ``games`` games of ``player`` at every seat: each decision of every seat is kept with
    probability ``keep`` (the decisions of one game share its deals: more games and fewer decisions of each
    fit better for the same memory)."""
    parts: list[tuple[np.ndarray, ...]] = []
    pick = np.random.default_rng([seed, 1])
    state = game.init(rng.game_keys(seed, np.arange(games), 0))
    tracker = void_tracker(game, games)
    active = ~game.done(state)
    while active.any():
        mask = game.legal_action_mask(state)
        obs = game.observe(state)
        seat = state.cur.astype(np.int64)
        live = np.nonzero(active)[0]
        public = tracker.rows(live)
        take = np.nonzero(pick.random(live.size) < keep)[0]
        if take.size:
            rows, pub = live[take], {k: v[take] for k, v in public.items()}
            pstate, counts, unseen = game.public_state(obs[rows], seat[rows])
            void = trick_voids(pstate.trick, pstate.led_suit, game.deck) | pub["void"]
            x = card_features(game, obs[rows], seat[rows], pub)
            prior = holder_prior(unseen, counts, void, seat[rows], game.deck).astype(np.float32)
            truth = holders(state.hands[rows], seat[rows])
            parts.append((x.astype(np.float16), truth.astype(np.int8), unseen, prior, rows))
        active &= ~play_step(game, player, state, tracker, obs, mask, seat, active, max_hands, public)
    x, truth, unseen, prior, g = (np.concatenate(c) for c in zip(*parts))
    return Examples(x, truth, unseen, prior, g)


def _loss(net: CardNet, ex: Examples) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(mean negative log-likelihood per unseen card, right placements, unseen cards) of a batch."""
    prior = torch.from_numpy(ex.prior)
    logits = net(torch.from_numpy(ex.x.astype(np.float32))) + prior.clamp(min=-1e9)
    logp = torch.log_softmax(logits, dim=2)
    truth = torch.from_numpy(ex.truth.astype(np.int64))
    lp = logp.gather(2, truth[..., None])[..., 0]
    u = torch.from_numpy(ex.unseen)
    n = u.sum().clamp(min=1)
    right = ((logp.argmax(dim=2) == truth) & u).sum()
    return -(lp * u).sum() / n, right, u.sum()


def evaluate(net: CardNet, ex: Examples, batch: int = 4096) -> dict[str, float]:
    """Mean log-likelihood and accuracy per unseen card of the network and of the hard facts' prior alone
    (:func:`agents.inference.holder_prior`), on ``ex``."""
    ll = right = cards = base_ll = base_right = 0.0
    net.eval()
    with torch.inference_mode():
        for i in range(0, ex.x.shape[0], batch):
            part = ex.take(np.arange(i, min(i + batch, ex.x.shape[0])))
            loss, r, n = _loss(net, part)
            ll -= float(loss) * float(n)
            right += float(r)
            cards += float(n)
            lp = np.take_along_axis(part.prior, part.truth[..., None].astype(np.int64), axis=2)[..., 0]
            base_ll += float(lp[part.unseen].sum())
            first = np.argmax(part.prior, axis=2)
            base_right += float(((first == part.truth) & part.unseen).sum())
    cards = max(cards, 1.0)
    return {
        "log_likelihood": ll / cards,
        "accuracy": right / cards,
        "prior_log_likelihood": base_ll / cards,
        "prior_accuracy": base_right / cards,
        "cards": int(cards),
    }


def train(
    game: Game,
    examples: Examples,
    hidden: tuple[int, ...] = (256, 256),
    epochs: int = 6,
    batch: int = 256,
    lr: float = 1e-3,
    holdout: float = 0.1,
    seed: int = 0,
    progress: Any = None,
    weight_decay: float = 1e-2,
) -> tuple[CardNet, dict[str, Any]]:
    """Fit a :class:`CardNet` on the examples of all games but a held-out share; returns it and its report.

    The weights kept are those of the epoch with the best held-out log-likelihood (the network overfits the
    deals it has seen within a few epochs), so the held-out figure chose the epoch: it is slightly optimistic.
    """
    torch.manual_seed(seed)
    gen = np.random.default_rng(seed)
    ids = np.unique(examples.game)
    held = gen.permutation(ids)[: max(1, int(round(holdout * ids.size)))] if holdout > 0 else np.array([], int)
    if held.size >= ids.size:
        raise ValueError(
            f"--holdout {holdout:g} holds out all {ids.size} game(s): none is left to fit (play more games)"
        )
    is_held = np.isin(examples.game, held)
    fit, test = examples.take(np.nonzero(~is_held)[0]), examples.take(np.nonzero(is_held)[0])
    net = CardNet(examples.x.shape[1], examples.truth.shape[1], examples.prior.shape[2], hidden)
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=weight_decay)
    best: tuple[float, dict[str, torch.Tensor]] | None = None  # (held-out log-likelihood, weights)
    steps = max(1, epochs * math.ceil(fit.x.shape[0] / batch))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: max(0.0, 1.0 - s / steps))
    t0 = time.perf_counter()
    history = []
    for epoch in range(epochs):
        net.train()
        order = gen.permutation(fit.x.shape[0])
        total = 0.0
        for i in range(0, order.size, batch):
            loss, _, _ = _loss(net, fit.take(order[i : i + batch]))
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach()) * min(batch, order.size - i)
        row = {"epoch": epoch + 1, "fit_loss": total / max(1, order.size)}
        if test.x.shape[0]:
            row["held_out"] = evaluate(net, test)
            if best is None or row["held_out"]["log_likelihood"] > best[0]:
                best = (row["held_out"]["log_likelihood"], {k: v.clone() for k, v in net.state_dict().items()})
        history.append(row)
        if progress is not None:
            progress(row)
    if best is not None:  # the epoch that predicted the held-out games best (they choose the epoch)
        net.load_state_dict(best[1])
    net.eval()
    report = {
        "examples": int(examples.x.shape[0]),
        "fit_examples": int(fit.x.shape[0]),
        "held_out_examples": int(test.x.shape[0]),
        "held_out_games": int(held.size),
        "epochs": epochs,
        "hidden": list(hidden),
        "seconds": round(time.perf_counter() - t0, 1),
        "history": history,
        "held_out": evaluate(net, test) if test.x.shape[0] else None,
    }
    return net, report
