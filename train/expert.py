"""Expert iteration: the policy distilled toward what search on it chooses, round after round.

``bobshat expert --init-from checkpoints/oh_hell_4p.pt --out better.pt [--config configs/expert/oh_hell_4p.yaml]``.
Each round:

1. **Play.** ``games`` self-play games of the current policy (greedy, every
   seat), dealt from ``seed`` and the round (never the evaluation's deals).
2. **Label.** At each decision of those games, a share of the decisions gets
   a label, the move an expert makes there with the current policy:

   - card plays (a share ``card_share`` of them, drawn at random): the move
     of the search agent (:class:`agents.search.PolicySearchAgent`, its
     ``worlds``, ``top_k`` and ``z``) on the current policy, given the
     acting seat's private observation and the public record of the hand,
     as at the table;
   - bids (and Bob's Hat's hat choice), all of them, by ``bids``:
     ``oracle``: the bid with the best information-set value
     (:func:`train.bids.oracle.decision_values`, ``oracle_worlds`` deals of
     the hidden cards consistent with what the bidder saw, every
     alternative played out by the current policy, valued by the bidder's
     margin over the table); ``search``: the search agent's move with
     ``bids=true``; ``policy``: bids are not labelled.

   The target of a labelled decision is ``mix`` on the label plus ``1 -
   mix`` on the policy's own distribution there (1: the label alone); with
   ``bid_temperature`` > 0 an oracle bid's label is the softmax of its
   alternatives' values (points) at that temperature rather than the best
   one; with ``bid_gap`` > 0 the policy's own bid stays the label unless the
   best is worth more than that many points more (the oracle's estimates
   are noisy, and near-equal bids are a coin toss). The value head's target
   is its own prediction before the round (it is held where it was: the
   search's playouts do not use it, a later ``bobshat train --init-from``
   does).
3. **Distil.** The policy is fitted to the labels of the round's games
   (a share ``holdout`` of the games held out) by the masked cross-entropy
   of ``bobshat imitate`` (:func:`train.imitate.fit`: one implementation).
4. **Measure.** The agreement of the policy with the labels before and
   after the fit (training and held-out games), then ``eval_deals``
   duplicate deals, two seats each (``--layout 2v2`` of ``bobshat eval``),
   of the new policy against ``strong`` and against the starting policy,
   with 95% CIs over deals; to the console and to TensorBoard
   (``log_dir``). The next round searches on the new policy.

The checkpoint ``out`` is written (atomically) after every round: an
ordinary policy that ``ppo:PATH`` plays and ``bobshat train --init-from``
continues (PPO after distillation is the mix of the two losses, in turn).
Every option is checked before anything is read or written; a bad one is a
one-line error naming it. So are the outputs (:func:`check_outputs`: ``out``
and its sidecar regular files, ``--json`` neither of them, ``log_dir`` a
folder that can be made, not in the checkpoint's place, and without another
run's TensorBoard events: there is no resume, and a rerun into it would draw
its rounds over the first run's). Two runs writing
the same ``out`` take turns at each write (``bobshat imitate``'s writer: a
lock, and a write that fails part-way leaves the previous round's pair);
SIGTERM exits 143 and Ctrl-C 130, leaving the last finished round's
checkpoint; a full disk at ``out`` or ``log_dir`` is a one-line error.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from agents.checkpoint import POLICY_PREFIX, net_meta, write_checkpoint
from agents.ppo_agent import PolicyNet, PPOAgent, load_policy
from agents.search import PolicySearchAgent
from bobshat_env.core import rng
from bobshat_env.seating import SeatDispatch
from train.imitate import ImitateOptions, fit, holdout_games
from train.options import ExpertError, ExpertOptions
from train.runtime.board import Board
from train.runtime.kit import agreement, check_checkpoint_out, policy_outputs, write_report
from train.runtime.kit import options_from as kit_options_from

if TYPE_CHECKING:
    from bobshat_env.games import Game

GAME_SALT = 0xE7  # the self-play deals' stream: game_keys(seed, game, GAME_SALT + round), not an evaluation deal


def check_options(opts: ExpertOptions) -> None:
    """Refuse (:class:`ExpertError`, naming the option) what cannot run, beyond each option's own range and
    type (checked when the options are made); nothing is read or written."""
    if opts.eval_deals == 1:  # one deal has no spread: its confidence interval would be NaN (not JSON)
        raise ExpertError("--eval-deals must be 0 (no evaluation) or at least 2 (a 95% CI needs two), got 1")
    if opts.card_share == 0 and opts.bids == "policy":
        raise ExpertError("--card-share 0 with --bids policy labels nothing: label card plays or bids")
    if opts.games - int(holdout_games(opts.games, opts.holdout, 0).sum()) < 1:  # how many: the same for any seed
        raise ExpertError(
            f"--holdout {opts.holdout:g} of --games {opts.games} holds out every game: no game is left to fit on "
            "(lower --holdout, or play 2 games or more)"
        )
    if not opts.init_from:
        raise ExpertError("--init-from is required: the policy checkpoint to improve")
    if not opts.out:
        raise ExpertError("--out is required: the checkpoint to write")
    if "," in opts.out or "=" in opts.out:
        raise ExpertError(f"--out {opts.out!r}: a path with ',' or '=' cannot be named in an agent spec")


def board_dir(opts: ExpertOptions) -> str:
    """The TensorBoard folder of a run: ``log_dir``, else ``runs/<out's stem>_expert``."""
    return opts.log_dir or str(Path("runs") / f"{Path(opts.out).stem}_expert")


def check_outputs(opts: ExpertOptions) -> None:
    """Refuse (one line naming the flag) an output that cannot be written, before anything is read or written.

    ``--out`` and its sidecar ``OUT.json`` must be regular files or not exist
    yet (a FIFO would block the run at its first checkpoint, and ``ppo:PATH``
    reads the checkpoint back); ``--log-dir`` is a folder or can be made one
    (:func:`bobshat_env.paths.check_folder`) and holds no TensorBoard events
    yet (a rerun into it would draw its rounds over the first run's). That no
    output is an input or another output (``--json`` is not ``--out``,
    ``--out`` is not ``--init-from``), and that ``--json`` can be written,
    ``bobshat expert`` checks first (:func:`bobshat.cli.check_outputs`).
    """
    from bobshat_env.paths import check_folder, sidecar

    check_checkpoint_out(opts.out)
    folder = Path(board_dir(opts))
    board = os.path.realpath(folder)
    for path in (opts.out, sidecar(opts.out)):  # the log dir's folders would take the checkpoint's place
        if board == os.path.realpath(path) or board.startswith(os.path.join(os.path.realpath(path), "")):
            raise ExpertError(f"--log-dir {folder}: it would make a folder of --out's {path}; name another folder")
    events = sorted(folder.glob("events.out.tfevents.*")) if folder.is_dir() else []
    if events:  # a second run's steps would be drawn over the first's (duplicate points): no resume here
        raise ExpertError(
            f"--log-dir {folder} already holds a run's TensorBoard events ({events[0].name}): a new run there would "
            "plot its rounds over them; name another folder, or remove that one"
        )
    check_folder(folder, "--log-dir")


def options_from(preset: dict[str, Any], flags: dict[str, Any]) -> ExpertOptions:
    """The options of a preset (a YAML mapping) with the flags given (not None) over it; unknown keys refused
    (:func:`train.runtime.kit.options_from`). The preset's table (``game``, ``players``, ``game_options``) is kept in
    ``extra`` for the command line."""
    extra = {k: preset[k] for k in ("game", "players", "game_options") if k in preset}
    if not isinstance(extra.get("game_options") or {}, dict):
        raise ExpertError(f"--config: game_options must be a mapping of game options, got {extra['game_options']!r}")
    opts = kit_options_from(ExpertOptions, {k: v for k, v in preset.items() if k not in extra}, flags)
    opts.extra = extra
    return opts  # type: ignore[return-value]


# --------------------------------------------------------------------------
# Labels
@dataclass
class Labels:
    """The labelled decisions of a round: observations, masks, targets (distributions), labels and where."""

    obs: np.ndarray  # (n, D) float32
    mask: np.ndarray  # (n, A) bool
    target: np.ndarray  # (n, A) float32: the distribution the policy is fitted to
    label: np.ndarray  # (n,) the expert's move
    greedy: np.ndarray  # (n,) the policy's move at labelling time
    value: np.ndarray  # (n,) float32: the value head's prediction at labelling time
    game: np.ndarray  # (n,) the self-play game of the decision
    is_card: np.ndarray  # (n,) bool

    @property
    def n(self) -> int:
        """Decisions held."""
        return int(self.label.shape[0])

    @property
    def games(self) -> int:
        """Self-play games the decisions come from."""
        return int(np.unique(self.game).size)

    def take(self, rows: np.ndarray) -> Labels:
        """The labels of ``rows`` only."""
        return Labels(**{f.name: getattr(self, f.name)[rows] for f in dataclasses.fields(self)})

    def batch(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(obs, mask, target distribution, value) of rows ``idx``: what :func:`train.imitate.fit` draws."""
        return self.obs[idx], self.mask[idx], self.target[idx], self.value[idx]


def oracle_bid_labels(
    game: Game, net: PolicyNet, state: Any, opts: ExpertOptions, seed: int, greedy: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(labels (n,), label distributions (n, A)) of the bidding decisions ``state``: the best information-set
    margin (or its softmax at ``bid_temperature``), every alternative played out by the policy ``net``; the
    policy's own bid ``greedy`` stays the label unless the best is worth more than ``bid_gap`` points more."""
    from train.bids.oracle import decision_values  # the bids package: only for oracle labels

    _, info = decision_values(game, state, PPOAgent(net), worlds=opts.oracle_worlds, seed=seed, objective="margin")
    legal = ~np.isnan(info)
    values = np.where(legal, info, -np.inf)
    label = values.argmax(axis=1)
    rows = np.arange(label.size)
    label = np.where(values[rows, label] - values[rows, greedy] > opts.bid_gap, label, greedy)
    if opts.bid_temperature > 0:
        z = (values - values.max(axis=1, keepdims=True)) / opts.bid_temperature
        dist = np.where(legal, np.exp(z), 0.0)
        dist /= dist.sum(axis=1, keepdims=True)
    else:
        dist = np.zeros(info.shape)
        dist[np.arange(label.size), label] = 1.0
    return label, dist


def label_round(
    game: Game, net: PolicyNet, opts: ExpertOptions, round_no: int, log: Callable[[str], None] | None = None
) -> Labels:
    """Play ``opts.games`` self-play games of ``net`` (greedy) and label a share of their decisions (module doc).

    The games are played first, keeping the picked decisions (the state, the observation, the public
    record); then all of them are labelled together: the search and the oracle step every decision's
    playouts in one batch (per ``max_rows``), far fewer calls than one per table step.
    """
    core = game.module
    search = PolicySearchAgent(
        game, seed=opts.seed + 7919 * round_no, net=net, worlds=opts.worlds, top_k=opts.top_k, z=opts.z,
        bids=opts.bids == "search",
    )  # fmt: skip
    gen = np.random.default_rng([opts.seed, round_no, 0x1AB])
    state = game.init(rng.game_keys(opts.seed, np.arange(opts.games), GAME_SALT + round_no))
    seats = SeatDispatch(game, state.batch_size, [search])  # keeps the public record the search reads
    parts: list[dict[str, Any]] = []
    active = ~game.done(state)
    while active.any():
        mask = game.legal_action_mask(state)
        obs = game.observe(state)
        seat = state.cur.astype(np.int64)
        rows = np.nonzero(active)[0]
        _, probs, value = policy_outputs(net, obs[rows], mask[rows])
        greedy = probs.argmax(axis=1)
        is_card = mask[rows, : core.N_CARDS].any(axis=1)
        pick = is_card & (gen.random(rows.size) < opts.card_share)
        if opts.bids != "policy":
            pick |= ~is_card
        if pick.any():
            p = np.nonzero(pick)[0]
            r = rows[p]
            parts.append(
                {
                    "obs": obs[r].astype(np.float32), "mask": mask[r], "probs": probs[p], "greedy": greedy[p],
                    "value": value[p].astype(np.float32), "game": r, "is_card": is_card[p], "seat": seat[r],
                    "public": seats.tracker.rows(r), "state": state.take(r),
                }
            )  # fmt: skip
        actions = np.zeros(state.batch_size, dtype=np.int64)
        actions[rows] = greedy  # the games go on with the policy's own moves
        seats.before_step(state, actions, active)
        res = game.step(state, actions, active=active, legal=mask)
        seats.after_step(res.new_hand)
        active &= ~game.done(state)
    if not parts:
        raise ExpertError("no decision was labelled this round: raise --games or --card-share")
    if log is not None:
        kept = sum(len(p["game"]) for p in parts)
        cards = sum(int(p["is_card"].sum()) for p in parts)
        log(f"round {round_no + 1}: {opts.games} games played; labelling {cards:,} card plays, {kept - cards:,} bids")
    return _label(game, net, opts, round_no, search, parts)


def _label(
    game: Game, net: PolicyNet, opts: ExpertOptions, round_no: int, search: PolicySearchAgent, parts: list[dict]
) -> Labels:
    """The labels of the decisions kept by :func:`label_round`, every kind labelled in one batch."""
    from train.bids.oracle import concat_states

    cat = {k: np.concatenate([p[k] for p in parts]) for k in ("obs", "mask", "probs", "greedy", "value", "game")}
    cat |= {k: np.concatenate([p[k] for p in parts]) for k in ("is_card", "seat")}
    public = {k: np.concatenate([p["public"][k] for p in parts]) for k in parts[0]["public"]}
    label = cat["greedy"].copy()
    dist = np.zeros_like(cat["probs"])
    searched = cat["is_card"] | (opts.bids == "search")
    if searched.any():
        r = np.nonzero(searched)[0]
        label[r] = search.act(
            cat["obs"][r], cat["mask"][r], cat["seat"][r], public={k: v[r] for k, v in public.items()}
        )
    dist[np.arange(label.size), label] = 1.0
    oracle = ~searched
    if oracle.any():
        r = np.nonzero(oracle)[0]
        state = concat_states([p["state"] for p in parts]).take(r)
        label[r], dist[r] = oracle_bid_labels(game, net, state, opts, opts.seed + 104729 * round_no, label[r])
    target = opts.mix * dist + (1.0 - opts.mix) * cat["probs"]
    return Labels(
        obs=cat["obs"], mask=cat["mask"], target=target.astype(np.float32), label=label, greedy=cat["greedy"],
        value=cat["value"], game=cat["game"], is_card=cat["is_card"],
    )  # fmt: skip


# --------------------------------------------------------------------------
# Measures
def duplicate_2v2(game: Game, a: PolicyNet, b: Any, deals: int, seed: int) -> tuple[float, float]:
    """(mean, 95% CI) per hand of ``a`` minus ``b`` over ``deals`` duplicate deals, every seating of two seats
    each (or the nearest split), as ``bobshat eval --layout 2v2 --seed SEED`` plays them (same deals)."""
    from agents import make_agent
    from train.evaluate.duplicate import make_seatings, play_duplicate
    from train.evaluate.statistics import mean_ci

    P = game.players
    n_a = P // 2
    table = make_seatings([0] * n_a + [1] * (P - n_a))
    other = make_agent(b, game, seed=0) if isinstance(b, str) else PPOAgent(b)
    res = play_duplicate(game, [PPOAgent(a), other], table, np.arange(deals), seed)
    tot = res.totals.reshape(deals, table.shape[0], P).astype(np.float64) / game.config.hands
    seat_a = table == 0
    diff = (tot * seat_a).sum(axis=(1, 2)) / seat_a.sum() - (tot * ~seat_a).sum(axis=(1, 2)) / (~seat_a).sum()
    return mean_ci(diff)


# --------------------------------------------------------------------------
# The run
def fit_options(opts: ExpertOptions, round_no: int) -> ImitateOptions:
    """The settings of :func:`train.imitate.fit` for a round."""
    return ImitateOptions(
        records=[], out=opts.out, epochs=opts.epochs, seed=opts.seed + round_no, learning_rate=opts.learning_rate,
        minibatch_size=opts.minibatch_size, value_coef=opts.value_coef,
    )  # fmt: skip


def expert(game: Game, opts: ExpertOptions, log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Run ``opts.rounds`` rounds (module docstring); returns the report (one entry per round)."""

    check_options(opts)
    say = log or (lambda msg: None)
    net, _ = load_policy(opts.init_from, game)
    start, _ = load_policy(opts.init_from, game)
    torch.manual_seed(opts.seed)
    board = Board(board_dir(opts), _board_error)
    rounds: list[dict[str, Any]] = []
    finished = False
    try:
        for r in range(opts.rounds):
            t0 = time.perf_counter()
            net.eval()
            labels = label_round(game, net, opts, r, log)
            label_s = time.perf_counter() - t0
            held_games = holdout_games(opts.games, opts.holdout, opts.seed + r)
            held = held_games[labels.game]
            train_set, held_set = labels.take(np.nonzero(~held)[0]), labels.take(np.nonzero(held)[0])
            if train_set.n == 0:  # nothing to fit: the round would write the policy unchanged as if it had learned
                raise ExpertError(f"round {r + 1}: the training games hold no labelled decision; nothing to fit on")
            before = agreement(net, held_set if held_set.n else train_set)  # the held-out games, as after the fit
            changed = float((labels.label != labels.greedy).mean())
            t1 = time.perf_counter()
            history = fit(net, train_set, fit_options(opts, r))
            fit_s = time.perf_counter() - t1
            row: dict[str, Any] = {
                "round": r + 1,
                "labelled": {"all": labels.n, "bids": int((~labels.is_card).sum()), "cards": int(labels.is_card.sum())},
                "labels_not_the_policy": changed,
                "agreement_before": before,
                "agreement_after_train": agreement(net, train_set),
                "agreement_after_held_out": agreement(net, held_set) if held_set.n else None,
                "policy_loss": history[-1]["policy_loss"],
                "seconds": {"label": round(label_s, 1), "fit": round(fit_s, 1)},
            }
            save_round(game, net, opts, r)
            if opts.eval_deals:
                t2 = time.perf_counter()
                row["vs_strong"] = duplicate_2v2(game, net, "strong", opts.eval_deals, opts.eval_seed)
                row["vs_start"] = duplicate_2v2(game, net, start, opts.eval_deals, opts.eval_seed)
                row["seconds"]["eval"] = round(time.perf_counter() - t2, 1)
            rounds.append(row)
            _board_round(board, row)
            _say_round(row, say)
        finished = True
    finally:
        board.close(finished, keep=bool(rounds))  # a run stopped before its first round leaves no events
    return {"game": game.name, "players": game.players, "options": _plain(opts), "rounds": rounds, "out": opts.out}


def save_round(game: Game, net: PolicyNet, opts: ExpertOptions, round_no: int) -> None:
    """The policy after round ``round_no`` to ``opts.out``, with its sidecar, as ``bobshat imitate`` writes one.

    :func:`agents.checkpoint.write_checkpoint`: runs writing the same ``out``
    take turns (a ``flock`` on its folder), so the sidecar and the checkpoint
    are one run's; a write that fails part-way (a full disk, a SIGTERM)
    leaves the old pair. A failed write is a one-line error naming ``--out``.
    """
    from bobshat_env.paths import OutputWriteError

    tensors = {POLICY_PREFIX + k: v for k, v in net.state_dict().items()}
    try:
        write_checkpoint(opts.out, tensors, _meta(game, net, opts, round_no))
    except OutputWriteError as err:  # the sidecar's path is not --out's: name the flag here
        raise ExpertError(f"--out: {err}") from None


def _board_error(log_dir: str, err: OSError) -> ExpertError:
    return ExpertError(f"--log-dir: cannot write {log_dir}: {err.strerror or err}")


def _plain(opts: ExpertOptions) -> dict[str, Any]:
    return {k: v for k, v in dataclasses.asdict(opts).items() if k != "extra"}


def _meta(game: Game, net: PolicyNet, opts: ExpertOptions, round_no: int) -> dict[str, Any]:
    """The checkpoint's metadata: the network's, and what expert iteration made it from."""
    return {
        **net_meta(game, net),
        "run_name": f"expert:{Path(opts.out).name}",
        "expert": {**_plain(opts), "round": round_no + 1},
    }


def _board_round(writer: Board, row: dict[str, Any]) -> None:
    """A round's numbers to TensorBoard (tags ``expert/``, ``eval/``); a failed write: :func:`_board_error`."""
    step = row["round"]
    for key in ("agreement_before", "agreement_after_train", "agreement_after_held_out"):
        part = row[key] or {}
        for kind, v in (("all", part), ("bids", part.get("bids")), ("cards", part.get("cards"))):
            if v and v["agreement"] is not None:
                writer.add_scalar(f"expert/{key}_{kind}", v["agreement"], step)
    writer.add_scalar("expert/labels_not_the_policy", row["labels_not_the_policy"], step)
    writer.add_scalar("expert/policy_loss", row["policy_loss"], step)
    for name in ("vs_strong", "vs_start"):
        if name in row:
            writer.add_scalar(f"eval/{name}_per_hand", row[name][0], step)
    writer.flush()


def _say_round(row: dict[str, Any], say: Callable[[str], None]) -> None:
    """A round's console line."""
    step = row["round"]

    def pct(part: dict[str, Any] | None) -> str:
        return "-" if part is None or part["agreement"] is None else f"{part['agreement']:.1%}"

    text = (
        f"round {step}: {row['labelled']['all']:,} labels ({row['labelled']['bids']:,} bids), "
        f"{row['labels_not_the_policy']:.1%} not the policy's move; agreement on held-out games "
        f"{pct(row['agreement_before'])} before the fit, {pct(row['agreement_after_held_out'])} after "
        f"({pct(row['agreement_after_train'])} on the training games)"
    )
    for name in ("vs_strong", "vs_start"):
        if name in row:
            text += f"; {name.replace('_', ' ')} {row[name][0]:+.3f} ±{row[name][1]:.3f}/hand"
    say(text + f" [{row['seconds']}]")


def cli_expert(args: Any, options: dict[str, Any], opts: ExpertOptions) -> int:
    """``bobshat expert``: the game from ``options`` (make_game's), the run from ``opts`` (checked)."""
    from bobshat_env.games import make_game
    from train.runtime.pool import sigterm_as_exit

    check_options(opts)
    game = make_game(args.game, **options)
    check_outputs(opts)
    load_policy(opts.init_from, game)  # a missing or another game's checkpoint: an error before anything is written
    log = None if args.quiet else (lambda msg: print(msg, file=sys.stderr, flush=True))
    with sigterm_as_exit():  # SIGTERM: exit 143 through the cleanup (a checkpoint write taken back, the log closed)
        report = expert(game, opts, log)
    write_report(report, args.json, f"wrote {opts.out} (play it as ppo:{opts.out})")
    return 0


__all__ = [
    "ExpertError",
    "ExpertOptions",
    "Labels",
    "agreement",
    "board_dir",
    "check_options",
    "check_outputs",
    "cli_expert",
    "duplicate_2v2",
    "expert",
    "label_round",
    "options_from",
    "save_round",
]
