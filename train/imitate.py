"""Imitation from game records: fit a policy network to the decisions in records files.

``bobshat imitate --records FILE... --game G --players P --out PATH`` reads
records (docs/records.md: games written by ``bobshat simulate --records``,
the terminal or the browser), replays every one with the rules
(:func:`bobshat_env.records.validate.replay_report`: nothing in a record is
trusted; a corrupt record, or a record of another game or other options, is
an error naming the file and line, and nothing is written), and turns each
decision into a training row: the observation and legal mask the seat to act
had (computed by the game's own ``observe`` and ``legal_action_mask`` on the
replayed state, exactly what :class:`agents.ppo_agent.PPOAgent` sees in play)
and, as the target, the action the record says it chose. A renege (renege
mode: a held card that breaks follow suit) is the one decision left out, as
no mask of the policy holds it; the rest of its game is kept.

The replay checks each record alone, keeping only each hand's deal and the
actions; the hands of ``REPLAY_BATCH`` records are then stepped again together
through the batched core with the recorded actions forced
(:func:`batch_decisions`), which gives the same rows, bit for bit, as
replaying each record while keeping every state (:func:`game_decisions`, the
reference) at under half the CPU (docs/results/engineering.md, "Imitation's
batched replay").

The held-out split is by game, not by decision: a game's decisions are
alike (same deal, same players), so a split by decision would measure
memory, not play. A fraction ``holdout`` of the games, drawn with ``seed``,
is never trained on; the report gives the agreement with the records on
them (overall, bids and card plays, and the decisions with a real choice).

Training: masked cross-entropy (illegal actions sit ``MASK_GAP`` below the
best legal logit through :func:`agents.ppo_agent.masked_logits`, the same
masking the agent plays with, so "the network's argmax" here is the agent's
greedy move), Adam, shuffled minibatches, the learning rate decayed linearly
to 0. The value head is fitted too (``value_coef``, 0 to skip), to what the
shipped presets' value head predicts: the seat's return from the decision to
the end of the hand, as the presets reward it (``train_for: hand``,
``opponent_weight: 1``, ``reward_scale: 0.1``: the seat's score change less
the mean of the others', times 0.1). With that target ``bobshat train
--init-from`` starts PPO from a critic on its own scale rather than from one
that must first unlearn another target.

The result is an ordinary policy checkpoint (the network of PPO, its
metadata, written by :func:`agents.checkpoint.write_checkpoint` through the
package's atomic writer): ``ppo:PATH`` plays it, ``bobshat train --init-from
PATH`` starts from it (the default network is the presets': 128x128, trump
symmetry, trick features).

Memory: a row is kept compact (the observation's 0/1 cells as bits, its
few other values sparse, the mask as bits: about 100 bytes for a Bob's Hat
decision instead of 2 KB of float32), and minibatches are decoded as they
are drawn.
"""

from __future__ import annotations

import dataclasses
import math
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
import torch.nn.functional as F

from agents.checkpoint import POLICY_PREFIX, net_meta, write_checkpoint
from agents.features import TrickFeatures
from agents.ppo_agent import PolicyNet, load_policy, masked_logits
from bobshat_env.core.config import ConfigError
from bobshat_env.core.symmetry import trump_canonical
from bobshat_env.records import RecordFormatError, read_records, replay_report, replay_steps
from bobshat_env.records.steps import watching
from train.options import DEFAULT_HIDDEN, ImitateOptions, ImitationError
from train.runtime.kit import agreement, check_checkpoint_out, options_from, write_report
from train.runtime.threads import set_torch_threads

if TYPE_CHECKING:
    from bobshat_env.games import Game

REWARD_SCALE = 0.1  # the presets' reward_scale: score points -> value-head units
REPLAY_BATCH = 500  # records whose hands are stepped again together (batch_decisions)


# --------------------------------------------------------------------------
# The data set: compact rows, decoded a minibatch at a time
class DecisionSet:
    """Decisions (observation, legal mask, recorded action, value target) in a compact form.

    Observations are stored as the bits ``obs != 0`` plus, sparse, the values
    of the cells that are neither 0 nor 1 (a few per row: cards taken,
    scores); masks as bits. :meth:`batch` rebuilds float32 observations
    exactly.
    """

    def __init__(self, obs_size: int, n_actions: int, n_cards: int):
        self.obs_size, self.n_actions, self.n_cards = obs_size, n_actions, n_cards
        self._parts: list[tuple[np.ndarray, ...]] = []
        self.games = 0
        self.n = 0

    def add_game(self, obs: np.ndarray, mask: np.ndarray, action: np.ndarray, value: np.ndarray) -> None:
        """Add one game's decisions (rows in play order)."""
        other = (obs != 0) & (obs != 1)
        counts = other.sum(axis=1).astype(np.int64)
        rows, cols = np.nonzero(other)
        del rows  # row-major order: the counts say which row each value belongs to
        self._parts.append(
            (
                np.packbits(obs != 0, axis=1),
                counts,
                cols.astype(np.int32),
                obs[other].astype(np.float32),
                np.packbits(mask, axis=1),
                action.astype(np.int64),
                value.astype(np.float32),
            )
        )
        self.games += 1
        self.n += obs.shape[0]

    def finish(self) -> DecisionSet:
        """Join the games' parts into one array each (call once, after the last :meth:`add_game`)."""
        if self._parts:
            cat = [np.concatenate(p) for p in zip(*self._parts)]
        else:
            w_obs, w_mask = (self.obs_size + 7) // 8, (self.n_actions + 7) // 8
            cat = [np.zeros((0, w_obs), np.uint8), np.zeros(0, np.int64), np.zeros(0, np.int32),
                   np.zeros(0, np.float32), np.zeros((0, w_mask), np.uint8), np.zeros(0, np.int64),
                   np.zeros(0, np.float32)]  # fmt: skip
        self.bits, counts, self.cols, self.vals, self.mask_bits, self.action, self.value = cat
        self.indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        self._parts = []
        return self

    @property
    def label(self) -> np.ndarray:
        """(n,) the recorded actions: the labels :func:`train.runtime.kit.agreement` measures the network against."""
        return self.action

    @property
    def is_card(self) -> np.ndarray:
        """(n,) bool: the decision is a card play (actions below the deck's size), else a bid or hat choice."""
        return self.action < self.n_cards

    def batch(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(obs float32 (b, D), mask bool (b, A), action int64 (b,), value float32 (b,)) of rows ``idx``."""
        obs = np.unpackbits(self.bits[idx], axis=1, count=self.obs_size).astype(np.float32)
        starts = self.indptr[idx]
        lens = self.indptr[idx + 1] - starts
        total = int(lens.sum())
        if total:
            rows = np.repeat(np.arange(len(idx)), lens)
            pos = np.arange(total) - np.repeat(np.cumsum(lens) - lens, lens) + np.repeat(starts, lens)
            obs[rows, self.cols[pos]] = self.vals[pos]
        mask = np.unpackbits(self.mask_bits[idx], axis=1, count=self.n_actions).astype(bool)
        return obs, mask, self.action[idx], self.value[idx]


def _stack(states: list[Any]) -> Any:
    """One batch state of the B = 1 states ``states`` (a replay's states, in order)."""
    first = states[0]
    return type(first)(
        **{f.name: np.concatenate([getattr(s, f.name) for s in states]) for f in dataclasses.fields(first)}
    )


def _refuse_faults(report: Any) -> None:
    """:class:`ImitationError` with a replay's first fault (and how many more), if it found any."""
    if not report.ok:
        more = f" (and {len(report.faults) - 1} more faults)" if len(report.faults) > 1 else ""
        raise ImitationError(f"{report.faults[0]}{more}")


def game_decisions(game: Game, record: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(obs, mask, action, value) of every decision of a valid ``record`` of ``game``, in play order.

    Replays it (:func:`bobshat_env.records.replay_steps`) and observes each
    state before an action from the seat to act. The replay deals each hand
    entry with the game totals at 0: the totals of the hands before are
    added back, so that the observation is the one the seat had in play.
    Raises :class:`ImitationError` (with the replay's first fault, without a
    file name) if the rules disagree with the record.
    """
    report, steps = replay_steps(record)
    _refuse_faults(report)
    P = game.players
    befores, actions, entry_of, carried_rows = [], [], [], []
    rewards: list[np.ndarray] = []
    carried = np.zeros(P, dtype=np.int64)
    previous = None
    entry = -1
    for step in steps:
        if step.action is None:  # a hand entry's deal: the one before it is over
            if previous is not None:
                carried = carried + previous.scores[0].astype(np.int64)
            entry += 1
            continue
        befores.append(step.before)
        actions.append(step.action)
        entry_of.append(entry)
        carried_rows.append(carried)
        rewards.append(step.result.rewards[0].astype(np.float64))
        previous = step.after
    if not befores:
        raise ImitationError("the record has no decisions")
    state = _stack(befores)
    state.scores[:] = state.scores + np.asarray(carried_rows, dtype=state.scores.dtype)
    action = np.asarray(actions, dtype=np.int64)
    seat = state.cur.astype(np.int64)
    mask = game.legal_action_mask(state)
    obs = game.observe(state, seat=seat)
    value = _value_targets(np.asarray(rewards), np.asarray(entry_of), seat)  # the reneges' penalties included
    keep = _learnable(game, mask, action, "")
    return obs[keep], mask[keep], action[keep], value[keep]


def _learnable(game: Game, mask: np.ndarray, action: np.ndarray, where: str) -> np.ndarray:
    """(n,) bool: the decisions to learn from, every one but a renege.

    The replay checked every action against the rules, so a recorded action
    outside the legal mask is a renege (renege mode: a held card that breaks
    follow suit, which ends the hand): a move the policy cannot make, its
    mask holding the legal cards only, so it is left out. Without renege
    mode such an action is a bug, and an error.
    """
    legal = mask[np.arange(len(action)), action]
    if not legal.all() and not game.renege_mode:
        raise ImitationError(f"{where}a recorded action is not legal in its replayed state (a bug: please report it)")
    return legal


def _hand_entries(record: dict) -> tuple[Any, Any, list[tuple[Any, list[int]]]]:
    """(core module, config, [(fresh deal state, the entry's actions)] per hand entry) of a valid ``record``.

    The record is replayed and checked as by :func:`game_decisions` (the same
    replay, :func:`bobshat_env.records.validate.replay_report`), keeping only
    each hand entry's deal and the actions (``watching(light=True)``), not the
    states around every action. Raises :class:`ImitationError` as
    :func:`game_decisions` does.
    """
    with watching(light=True) as steps:
        report = replay_report(record)
    _refuse_faults(report)
    entries: list[tuple[Any, list[int]]] = []
    for step in steps:
        if step.action is None:
            entries.append((step.after, []))
        else:
            entries[-1][1].append(step.action)
    entries = [e for e in entries if e[1]]
    if not entries:
        raise ImitationError("the record has no decisions")
    return steps.module, steps.cfg, entries


def batch_decisions(game: Game, records: list[dict]) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """:func:`game_decisions` of each of ``records``, the same arrays bit for bit, at a fraction of the cost.

    Each record is replayed and checked one by one (:func:`_hand_entries`);
    then the hand entries of all of them are stepped again together through
    the batched core, the recorded actions forced, one column of actions at a
    time: the entries of the same number (first hands, second hands, ...) and
    the same count of actions (and the same core config) form one batch. The
    observation before each action is taken with the totals of the game's
    earlier hands added to the scores, as in play. Raises
    :class:`ImitationError` naming the record's index in ``records``.
    """
    parsed = []
    for i, record in enumerate(records):
        try:
            parsed.append(_hand_entries(record))
        except ImitationError as err:
            raise ImitationError(f"record {i}: {err}") from None
    return _step_entries(game, parsed)


def _step_entries(game: Game, parsed: list[tuple[Any, Any, list]]) -> list[tuple[np.ndarray, ...]]:
    """:func:`batch_decisions`'s second half: the decisions of records already replayed by :func:`_hand_entries`."""
    rows: list[list[tuple[np.ndarray, ...]]] = [[] for _ in parsed]  # per record, per entry
    carried = [np.zeros(game.players, dtype=np.int64) for _ in parsed]  # totals of the hands before
    for e in range(max(len(p[2]) for p in parsed)):
        groups: dict[tuple[str, int], list[int]] = {}
        for i, (_, cfg, entries) in enumerate(parsed):
            if e < len(entries):
                groups.setdefault((repr(cfg), len(entries[e][1])), []).append(i)
        for members in groups.values():
            module, cfg = parsed[members[0]][0], parsed[members[0]][1]
            state = _stack([parsed[i][2][e][0] for i in members])
            actions = np.asarray([parsed[i][2][e][1] for i in members], dtype=np.int64)
            plus = np.asarray([carried[i] for i in members])
            for i, got in zip(members, _step_forced(game, module, cfg, state, actions, plus)):
                rows[i].append(got)
            for k, i in enumerate(members):
                carried[i] = carried[i] + state.scores[k].astype(np.int64)
    out = []
    for i, parts in enumerate(rows):
        obs, mask, action, rewards, seat = (np.concatenate(x) for x in zip(*parts))
        entry_of = np.concatenate([np.full(len(p[2]), k) for k, p in enumerate(parts)])
        value = _value_targets(rewards, entry_of, seat)
        keep = _learnable(game, mask, action, f"record {i}: ")
        out.append((obs[keep], mask[keep], action[keep], value[keep]))
    return out


def _step_forced(
    game: Game, module: Any, cfg: Any, state: Any, actions: np.ndarray, plus: np.ndarray
) -> list[tuple[np.ndarray, ...]]:
    """Step the batch ``state`` through ``actions`` (B, T), the recorded actions; per row of the batch,
    (obs, mask, action, rewards, seat) of its T decisions, observed with ``plus`` (B, P) added to the scores."""
    parts: list[tuple[np.ndarray, ...]] = []
    for t in range(actions.shape[1]):
        scores = state.scores.copy()
        state.scores[:] = scores + plus.astype(scores.dtype)
        seat = state.cur.astype(np.int64)
        parts.append((game.observe(state, seat=seat), game.legal_action_mask(state), seat))
        state.scores[:] = scores
        res = module.step(cfg, state, actions[:, t], auto_deal=False)
        parts[-1] += (res.rewards.astype(np.float64),)
    obs, mask, seat, rewards = (np.stack(x, axis=1) for x in zip(*parts))  # (B, T, ...)
    return [(obs[b], mask[b], actions[b], rewards[b], seat[b]) for b in range(actions.shape[0])]


def _value_targets(rewards: np.ndarray, entry: np.ndarray, seat: np.ndarray) -> np.ndarray:
    """(n,) each decision's return to the end of its hand entry, as the presets reward it.

    ``rewards`` (n, P): the score changes each action gave; the reward is a
    seat's change less the mean change of the other seats, times
    ``REWARD_SCALE``; the return sums it over this and later actions of the
    same hand entry.
    """
    P = rewards.shape[1]
    margin = (rewards - (rewards.sum(axis=1, keepdims=True) - rewards) / (P - 1)) * REWARD_SCALE
    out = np.zeros(len(seat), dtype=np.float64)
    for e in np.unique(entry):
        rows = np.nonzero(entry == e)[0]
        to_go = np.cumsum(margin[rows][::-1], axis=0)[::-1]  # (rows, P): from each action to the entry's end
        out[rows] = to_go[np.arange(len(rows)), seat[rows]]
    return out.astype(np.float32)


# --------------------------------------------------------------------------
# Reading records files
def _check_record_game(game: Game, record: dict) -> str | None:
    """Why ``record`` is not a game of ``game`` (name, players, options; the first dealer may differ), or None."""
    name = record.get("game")
    if name != game.name:
        return f"it is a {name!r} record; this run imitates {game.name}"
    config = record.get("config")
    if not isinstance(config, dict):
        return "its config is not a JSON object"
    try:
        theirs = type(game.config).from_dict(dict(config)).to_dict()
    except (ConfigError, TypeError, ValueError) as err:
        return f"its config is not valid: {err}"
    mine = game.config.to_dict()
    for key in sorted(set(mine) | set(theirs)):
        if key != "first_dealer" and mine.get(key) != theirs.get(key):
            return f"it was played with {key}={theirs.get(key)!r}; this run imitates {key}={mine.get(key)!r}"
    return None


def count_records(paths: Iterable[str]) -> list[int]:
    """The records of each file, every line read as :func:`read_records` will give it: a clear error naming
    the file and line at the first that is no record (a binary file, a line longer than any record), before
    the games are split, and if a file is missing."""
    counts = []
    for path in paths:
        try:
            n = 0
            for _line, record, why in read_records(path):
                if record is None:
                    raise ImitationError(f"--records: {path}: {why}")
                n += 1
            counts.append(n)
        except RecordFormatError as err:  # a line too long to read: the reading stops there
            raise ImitationError(f"--records: {path}: {err}") from None
        except FileNotFoundError:
            raise ImitationError(f"--records: no such file: {path}") from None
        except IsADirectoryError:
            raise ImitationError(f"--records: {path} is a folder, not a records file") from None
        except OSError as err:
            raise ImitationError(f"--records: cannot read {path}: {err.strerror or err}") from None
    return counts


def holdout_games(n_games: int, holdout: float, seed: int) -> np.ndarray:
    """(n_games,) bool: the games held out, ``round(holdout * n)`` of them drawn with ``seed`` (at least one
    each side when 0 < holdout and there are two games or more)."""
    n_held = int(round(holdout * n_games))
    if holdout > 0 and n_games >= 2:
        n_held = min(max(n_held, 1), n_games - 1)
    held = np.zeros(n_games, dtype=bool)
    held[np.random.default_rng([seed, 0x1A17]).permutation(n_games)[:n_held]] = True
    return held


def build_sets(
    game: Game, paths: list[str], holdout: float, seed: int, log: Callable[[str], None] | None = None
) -> tuple[DecisionSet, DecisionSet]:
    """(training set, held-out set) of every decision in the records of ``paths`` (see the module docstring)."""
    counts = count_records(paths)
    n_games = sum(counts)
    if n_games == 0:
        raise ImitationError(f"--records: no records in {', '.join(paths)} (the files are empty)")
    if holdout > 0 and n_games < 2:
        raise ImitationError(f"--holdout {holdout:g} needs at least 2 games to split by game; the records hold 1")
    held = holdout_games(n_games, holdout, seed)
    sets = tuple(DecisionSet(game.obs_size(), game.n_actions, game.deck.n_cards) for _ in range(2))
    i, t0 = 0, time.perf_counter()
    pending: list[tuple[Any, Any, list]] = []

    def flush() -> None:
        nonlocal pending
        for k, rows in enumerate(_step_entries(game, pending)):
            sets[int(held[i - len(pending) + k])].add_game(*rows)
        pending = []
        if log is not None:
            log(f"replayed {i:,}/{n_games:,} games ({time.perf_counter() - t0:.0f} s)")

    for path in paths:
        for line, record, why in read_records(path):  # count_records read them all: no line is too long
            if record is None:
                raise ImitationError(f"--records: {path}: {why}")
            wrong = _check_record_game(game, record)
            if wrong is not None:
                raise ImitationError(f"--records: {path}: line {line}: {wrong}")
            try:
                pending.append(_hand_entries(record))
            except ImitationError as err:
                raise ImitationError(f"--records: {path}: line {line}: {err}") from None
            i += 1
            if len(pending) == REPLAY_BATCH:
                flush()
    if pending:
        flush()
    return sets[0].finish(), sets[1].finish()


# --------------------------------------------------------------------------
# Training and measuring
def make_network(game: Game, opts: ImitateOptions) -> PolicyNet:
    """The network to train: ``init_from``'s (its shape and weights), else a fresh one of the presets' shape."""
    if opts.init_from:
        net, meta = load_policy(opts.init_from, game)
        if opts.hidden is not None and tuple(opts.hidden) != tuple(net.hidden):
            raise ImitationError(
                f"--hidden {','.join(map(str, opts.hidden))} differs from --init-from's network "
                f"(hidden {','.join(map(str, net.hidden))}); drop --hidden to keep its shape"
            )
        return net.train()
    symmetry = trump_canonical(game.name, game.config) if opts.trump_symmetry else None
    features = TrickFeatures.for_game(game.name, game.config) if opts.trick_features else None
    return PolicyNet(game.obs_size(), game.n_actions, tuple(opts.hidden or DEFAULT_HIDDEN), symmetry, features)


def fit(
    net: PolicyNet, data: DecisionSet | Any, opts: ImitateOptions, log: Callable[[str], None] | None = None
) -> list[dict[str, float]]:
    """Train ``net`` on ``data`` for ``opts.epochs`` passes; returns each epoch's mean losses and accuracy.

    ``data`` is a :class:`DecisionSet` (targets: the recorded actions) or anything with ``n`` and a
    ``batch(idx)`` that gives (obs, mask, target, value), the target a (b, A) distribution over the
    actions (:class:`train.expert.Labels`): the loss is then the cross-entropy to it."""
    gen = np.random.default_rng([opts.seed, 0xF17])
    optimizer = torch.optim.Adam(net.parameters(), lr=opts.learning_rate)
    steps_per_epoch = max(1, math.ceil(data.n / opts.minibatch_size))
    total, done = steps_per_epoch * opts.epochs, 0
    history = []
    net.train()
    for epoch in range(opts.epochs):
        order = gen.permutation(data.n)
        sums = np.zeros(3)
        for start in range(0, data.n, opts.minibatch_size):
            idx = order[start : start + opts.minibatch_size]
            obs, mask, action, value = data.batch(idx)
            logits, v = net(torch.from_numpy(obs))
            logits = masked_logits(logits, torch.from_numpy(mask))
            target = torch.from_numpy(action)  # (b,) actions, or (b, A) target distributions (train.expert)
            policy_loss = F.cross_entropy(logits, target)
            value_loss = F.mse_loss(v, torch.from_numpy(value))
            loss = policy_loss + opts.value_coef * value_loss
            for group in optimizer.param_groups:  # linear decay to 0 over the run
                group["lr"] = opts.learning_rate * (1.0 - done / total)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            done += 1
            best = target if target.dim() == 1 else target.argmax(dim=1)
            agree = (logits.detach().argmax(dim=1) == best).float().sum()
            sums += [float(policy_loss.detach()) * len(idx), float(value_loss.detach()) * len(idx), float(agree)]
        row = dict(zip(("policy_loss", "value_loss", "train_agreement"), (sums / max(data.n, 1)).tolist()))
        history.append({"epoch": epoch + 1, **row})
        if log is not None:
            log(
                f"epoch {epoch + 1}/{opts.epochs}: policy loss {row['policy_loss']:.4f}, value loss "
                f"{row['value_loss']:.4f}, agreement (training games) {row['train_agreement']:.2%}"
            )
    net.eval()
    return history


# --------------------------------------------------------------------------
# The run
def imitate(game: Game, opts: ImitateOptions, log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Build the data sets, train, measure, write the checkpoint ``opts.out``; returns the report.

    Every input is checked (records replayed, the network built and
    ``init_from`` loaded) before training starts, and the checkpoint is the
    only file written, at the end, atomically.
    """
    set_torch_threads(opts.threads)  # numba's threads started first: the replay's kernels would reset it
    torch.set_flush_denormal(True)  # as train.ppo: tiny gradients would otherwise take the slow denormal path
    torch.manual_seed(opts.seed)  # the fresh network's initial weights
    net = make_network(game, opts)
    t0 = time.perf_counter()
    train, held = build_sets(game, list(opts.records), opts.holdout, opts.seed, log)
    replay_s = time.perf_counter() - t0
    if train.n == 0:
        raise ImitationError("--records: the records hold no decisions to train on")
    t1 = time.perf_counter()
    history = fit(net, train, opts, log)
    train_s = time.perf_counter() - t1
    report = {
        "game": game.name,
        "players": game.players,
        "config": game.config.to_dict(),
        "records": [str(p) for p in opts.records],
        "seed": opts.seed,
        "holdout": opts.holdout,
        "epochs": opts.epochs,
        "training": agreement(net, train),
        "held_out": agreement(net, held) if held.n else None,
        "history": history,
        "seconds": {"replay": round(replay_s, 1), "train": round(train_s, 1)},
        "out": str(opts.out),
    }
    write_checkpoint(opts.out, {POLICY_PREFIX + k: v for k, v in net.state_dict().items()}, _meta(game, net, report))
    return report


def _meta(game: Game, net: PolicyNet, report: dict[str, Any]) -> dict[str, Any]:
    """The checkpoint's metadata: what PPO's policy checkpoints say of the game and network, and the imitation."""
    summary = {k: report[k] for k in ("records", "seed", "holdout", "epochs")}
    summary.update(training=report["training"], held_out=report["held_out"])
    return {
        **net_meta(game, net),
        "games": report["training"]["games"],
        "run_name": f"imitate:{Path(report['out']).name}",
        "imitation": summary,
    }


def format_report(report: dict[str, Any]) -> str:
    """The report as text: the agreement table (held-out and training games) and where the checkpoint went."""

    def pct(part: dict[str, Any]) -> str:
        return "-" if part["agreement"] is None else f"{part['agreement']:.2%} of {part['decisions']:,}"

    lines = [f"{report['game']}, {report['players']} players: imitation of {', '.join(report['records'])}"]
    lines.append(f"{'games':<16}{'overall':>24}{'bids':>24}{'card plays':>24}{'with a choice':>24}")
    for name, part in (("held out", report["held_out"]), ("training", report["training"])):
        if part is None:
            lines.append(f"{name:<16}(none: --holdout 0)")
            continue
        cells = [pct(part), pct(part["bids"]), pct(part["cards"]), pct(part["with_choice"])]
        lines.append(f"{name + ' (' + format(part['games'], ',') + ')':<16}" + "".join(f"{c:>24}" for c in cells))
    s = report["seconds"]
    lines.append(f"replay {s['replay']:.0f} s, training {s['train']:.0f} s ({report['epochs']} epochs)")
    lines.append(f"wrote {report['out']} (play it as ppo:{report['out']})")
    return "\n".join(lines)


def cli_imitate(args: Any, options: dict[str, Any]) -> int:
    """``bobshat imitate``: the game from ``options`` (make_game's), the run from ``args`` (its flags)."""
    from bobshat_env.games import make_game
    from train.runtime.pool import sigterm_as_exit

    opts = options_from(ImitateOptions, {}, vars(args))
    game = make_game(args.game, **options)
    check_checkpoint_out(opts.out)
    log = None if args.quiet else (lambda msg: print(msg, file=sys.stderr, flush=True))
    with sigterm_as_exit():  # SIGTERM: exit 143 through the cleanup (a checkpoint write taken back)
        report = imitate(game, opts, log)
    write_report(report, args.json, format_report(report))
    return 0


__all__ = [
    "DecisionSet",
    "ImitateOptions",
    "ImitationError",
    "agreement",
    "build_sets",
    "cli_imitate",
    "fit",
    "format_report",
    "game_decisions",
    "imitate",
]
