"""``bobshat train``: the training entry. Each iteration the :class:`~train.ppo.learner.Learner` anneals,
collects and updates; then the run logs, grows its opponent pool and saves.

1. :meth:`Learner.collect <train.ppo.learner.Learner.collect>`: ``num_steps`` env steps of the learner and
   its pool opponents, with GAE, as a :class:`~train.ppo.collector.Rollout`;
2. :meth:`Learner.update <train.ppo.learner.Learner.update>`: clipped PPO epochs over that batch;
3. :func:`evaluate_and_log`: the ``charts/`` and ``losses/`` scalars, and a duplicate evaluation when one
   is due;
4. a frozen snapshot of the policy joins the pool, every ``snapshot_every``; an exploiter of it
   (:func:`train.ppo.exploiters.add_exploiter`), every ``exploiters_every``;
5. :func:`checkpoint`: ``ckpt.pt`` and ``policy.pt`` (layout: :mod:`agents.checkpoint`).

Interrupts
    Ctrl-C or SIGTERM saves a checkpoint on the way out (:meth:`TrainingRun.run`), so ``--resume``
    continues from the last update made rather than from the last periodic checkpoint. The update is
    never cut short (the signals are held while it runs, :func:`train.runtime.pool.signals_held`): an interrupt
    during a rollout drops that rollout, and the checkpoint holds the network, optimizer and counters as
    the last finished update left them. Nothing is saved when no update was made since the last checkpoint.
    The status stays the signal's (130, 143).

Budgets
    ``total_decisions`` and ``time_limit_min``, whichever ends first. The time limit is this command's
    wall time (a resumed run gets it again), and :class:`IterationClock` predicts each next iteration so
    that the run ends within one iteration of the limit, never knowingly past it.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from agents import available
from agents.checkpoint import CKPT_FILE, load_checkpoint, remove_stale_temporaries, save_training_state
from agents.ppo_agent import PolicyNet, PPOAgent
from bobshat_env.games import make_game
from train.evaluate.duplicate import duplicate_evals
from train.ppo.collector import RolloutCollector, env_seed
from train.ppo.config import Args, build_arg_parser, check_args, default_run_name, parse_args
from train.ppo.exploiters import add_exploiter
from train.ppo.learner import Counters, Learner, initial_weights, make_collector, set_up
from train.ppo.rollout import Rollout
from train.ppo.rundir import check_run_dir, check_run_inputs, check_same_run, run_lock
from train.ppo.selfplay import OpponentPool
from train.runtime.board import Board
from train.runtime.pool import signals_held, sigterm_as_exit
from train.runtime.progress import ProgressBar
from train.runtime.threads import set_torch_threads

if TYPE_CHECKING:
    from bobshat_env.games import Game


def evaluate_and_log(
    writer: Board,
    args: Args,
    game: Game,
    net: PolicyNet,
    pool: OpponentPool,
    batch: Rollout,
    losses: dict[str, float],
    counters: Counters,
    timing: dict[str, float],
    evaluate: bool,
) -> dict[str, Any]:
    """The iteration's ``charts/`` and ``losses/`` scalars to TensorBoard, then (if ``evaluate``) a duplicate
    evaluation of the greedy policy against ``eval_opponents``; returns every scalar logged.

    ``timing``: ``seconds`` of the run so far, ``steps`` stepped in them, ``update`` seconds of this update.
    """
    P, env_steps, step = game.players, batch.env_steps, counters.global_step
    busy = batch.seconds + timing["update"]
    stats: dict[str, Any] = {
        "charts/learning_rate": timing["lr"],
        "charts/SPS": timing["steps"] / timing["seconds"],
        "charts/iteration_SPS": env_steps / busy,
        "charts/rollout_SPS": env_steps / batch.seconds,
        "charts/learner_SPS": batch.n / busy,
        "charts/learner_decisions": counters.learner_decisions,
        "charts/games": counters.games,
        **losses,
    }
    if batch.episode_returns.size:
        stats[f"charts/episodic_return_per_{args.train_for}"] = float(batch.episode_returns.mean())
    if batch.final_scores.size:
        stats["charts/game_score_vs_pool"] = float(batch.final_scores.mean())
        stats["charts/win_share_vs_pool"] = float(batch.win_shares.mean())
    probs = pool.probs()
    stats["charts/pool_size"] = len(pool.members)
    stats["charts/pool_self_play_share"] = batch.self_play_games / max(batch.games, 1)
    for kind in ("heuristic", "snapshot", "exploiter"):
        stats[f"charts/pool_{kind}_prob"] = float(sum(p for p, m in zip(probs, pool.members) if m.kind == kind))
    for m, pr in zip(pool.members, probs):
        if m.kind == "heuristic":
            stats[f"charts/pool_prob_{m.name}"] = float(pr)
            stats[f"charts/pool_win_share_vs_{m.name}"] = m.win_rate(P)
    for key, value in stats.items():
        writer.add_scalar(key, value, step)
    if evaluate:
        greedy = PPOAgent(net, sample=False, name="learner")
        names = [name for name in args.eval_opponents if name in available()]
        results = duplicate_evals(game, greedy, names, deals=args.eval_deals, seed=args.seed + 10_000)
        for name, res in results.items():
            for key, value in (("margin_per_hand", res["margin_per_hand"]), ("win_share", res["win_share"])):
                stats[f"charts/eval_{key}_vs_{name}"] = value
                writer.add_scalar(f"charts/eval_{key}_vs_{name}", value, step)
    return stats


def checkpoint(
    path: Path,
    args: Args,
    game: Game,
    net: PolicyNet,
    optimizer: torch.optim.Optimizer,
    pool: OpponentPool,
    counters: Counters,
    gen: np.random.Generator,
    run_name: str,
) -> None:
    """ckpt.pt (everything to resume: network, optimizer, pool, counters, RNG states) and policy.pt beside it."""
    meta = {**asdict(counters), "rng_numpy": gen.bit_generator.state, "run_name": run_name, "args": asdict(args)}
    save_training_state(path, game, net, optimizer, pool, meta)


def train(
    args: Args,
    opponents: Callable[[Any], OpponentPool] | None = None,
    evaluate: Callable[[PolicyNet, Counters], dict[str, float]] | None = None,
) -> dict[str, Any]:
    """Run PPO with self-play as configured; returns a summary of the run (the last iteration's scalars).

    Each iteration (:meth:`TrainingRun.iteration`): the learner anneals, collects and updates, then
    :func:`evaluate_and_log`, a snapshot into the pool, an exploiter into the pool (``exploiters_every``),
    :func:`checkpoint`. Two hooks let other runs use the same loop (:mod:`train.exploit`):
    ``opponents(game)`` builds the pool instead of the one ``args`` describe (a resumed run loads its
    saved state into it), and ``evaluate(net, counters)`` returns more scalars to log whenever an
    evaluation is due.

    Everything that can be refused is refused before the run folder is touched; the folder is then
    locked (:func:`~train.ppo.rundir.run_lock`) for the rest of the run, so a second run with the same
    name is refused.

    Budgets: the run stops at ``total_decisions`` or before ``time_limit_min`` minutes of *this
    invocation* (a resumed run gets the whole limit again), whichever comes first. Before each
    iteration the next one's time is predicted (its rollout at the steady rate of the last one's later
    steps, the update, and an evaluation and a checkpoint as the last iteration makes them), and no
    iteration is started that would end past the limit; the first always runs, so that there is a
    checkpoint. The learning rate anneals linearly to 0 over whichever budget runs out first, from
    where the decision schedule had it when this invocation started.
    """
    t_start = time.perf_counter()
    check_args(args, pool=opponents is None)
    check_run_inputs(args)  # init_from is not one of the files the run replaces
    run_dir = Path(args.runs_dir) / default_run_name(args)
    game = make_game(args.game, players=args.players, **args.game_options)
    if args.rollout_workers:  # Ray installed, its address answering, enough CPUs: before anything is written
        from train.runtime.distributed import preflight  # imports Ray, only for rollout workers

        preflight(args.ray_address or "local", args.rollout_workers, f"{args.rollout_workers} rollout worker(s)")
    init = initial_weights(args, game)  # init_from: read and checked before the run folder exists
    if args.resume:  # another run's checkpoint: refused before the folder is locked or written to
        _, meta = load_checkpoint(run_dir / CKPT_FILE)
        if "optim_param_groups" in meta:  # a policy only: load_training_state says so
            check_same_run(run_dir / CKPT_FILE, meta, args, game)
    check_run_dir(run_dir, create=not args.resume)
    with run_lock(run_dir):
        return TrainingRun(args, game, init, t_start, opponents, evaluate).run()


class TrainingRun:
    """One invocation of :func:`train` once its arguments are checked and its run folder is locked: the
    learner, its logs (TensorBoard, the progress bar), its budgets (:class:`IterationClock`) and the pool's
    growth, iteration by iteration."""

    def __init__(
        self,
        args: Args,
        game: Game,
        init: dict[str, torch.Tensor] | None,
        t_start: float,
        opponents: Callable[[Any], OpponentPool] | None,
        evaluate: Callable[[PolicyNet, Counters], dict[str, float]] | None,
    ) -> None:
        self.args, self.game, self.t_start, self.evaluate = args, game, t_start, evaluate
        self.run_name = default_run_name(args)
        self.run_dir = Path(args.runs_dir) / self.run_name
        self.ckpt_path = self.run_dir / CKPT_FILE
        if args.torch_threads > 0:
            set_torch_threads(args.torch_threads)  # numba's threads started first: they would reset it
        torch.set_flush_denormal(True)  # tiny probabilities' gradients would otherwise hit the slow denormal path
        remove_stale_temporaries(self.run_dir)  # checkpoint writes of a run killed part-way
        limit_s = 60.0 * args.time_limit_min
        self.progress = progress = ProgressBar(
            args.total_decisions, "decisions", enabled=args.progress, time_limit_s=limit_s, t0=t_start
        )
        progress.status("setting up: the network, its optimizer, the opponents" + (", the checkpoint" * args.resume))
        self.gen, net, optimizer, self.pool, self.counters = set_up(args, game, self.ckpt_path, opponents, init)
        counters = self.counters
        progress.restart_at(counters.global_step)
        progress.status("preparing the game kernels (compiled on their first use: up to a minute)")
        collector = make_collector(args, game, net, self.pool, self.gen, seed=env_seed(args.seed, counters.iteration))
        self.step_at_start, self.elapsed_before, self.step_it = (
            counters.global_step,
            counters.elapsed_s,
            counters.iteration,
        )
        self.clock = IterationClock(limit_s, t_start)
        # an interrupt saves the counters as the last finished update left them (run()): those of the start of
        # the iteration under way until its update is done; the step of the last checkpoint written
        self.committed = dataclasses.replace(counters)
        self.saved_step = counters.global_step
        # the decision schedule's learning rate where this invocation starts, annealed to 0 over what is left
        self.dec_left = args.total_decisions - self.step_at_start
        lr_begin = args.learning_rate * (self.dec_left / args.total_decisions if args.total_decisions else 0.0)
        self.learner = Learner(args, net, optimizer, collector, lr_begin=lr_begin)
        self.per_step = False  # in-process: progress and timing at every step
        first = f"{args.num_envs:,} games"
        if isinstance(collector, RolloutCollector):
            self.per_step = True
            collector.on_step = self.clock.step_hook(progress, args.num_envs)
            first = f"{args.num_envs * collector.T:,} decisions"
        # resumed: hide what the killed run logged after its checkpoint (TensorBoard would show those steps twice);
        # a failed write (a full disk) is one line naming the run folder (train.runtime.board),
        # closed in run()'s finally
        purge = counters.global_step + 1 if args.resume else None
        self.writer = Board(str(self.run_dir), self.board_error, purge_step=purge)
        if not args.resume:
            table = "\n".join(f"|{k}|{v}|" for k, v in asdict(args).items())
            try:
                self.writer.add_text("hyperparameters", f"|param|value|\n|-|-|\n{table}")
            except BaseException:
                self.writer.close(False)
                raise
        if counters.global_step < args.total_decisions:
            progress.status(f"collecting the first rollout ({first})")

    def run(self) -> dict[str, Any]:
        """Iterate until a budget ends; returns the summary :func:`train` returns."""
        args, counters = self.args, self.counters
        stats: dict[str, Any] = {}
        finished = False
        try:
            last = counters.global_step >= args.total_decisions
            while not last:
                last, stats = self.iteration()
            finished = True
        except (KeyboardInterrupt, SystemExit):  # Ctrl-C, SIGTERM (sigterm_as_exit): keep the work done
            self.save_on_the_way_out()
            raise
        finally:
            self.learner.close()  # the actors, and a Ray this run started
            self.writer.close(finished)  # its error is the run's only if nothing else ended it
        self.progress.close()
        summary = {"run_dir": str(self.run_dir), "global_step": counters.global_step, "iteration": counters.iteration}
        summary.update(learner_decisions=counters.learner_decisions, seconds=time.perf_counter() - self.t_start)
        summary["decisions_this_run"] = counters.global_step - self.step_at_start
        return summary | stats

    def iteration(self) -> tuple[bool, dict[str, Any]]:
        """One iteration: anneal, collect, update, log (and evaluate when due), grow the pool, save when due.
        Returns whether it was the last (a budget is spent, or the next would pass the time limit) and its
        scalars."""
        args, counters, clock, learner = self.args, self.counters, self.clock, self.learner
        self.committed = dataclasses.replace(counters)
        counters.iteration += 1
        it = counters.iteration
        if args.anneal_lr:
            done = (counters.global_step - self.step_at_start) / self.dec_left if self.dec_left > 0 else 1.0
            learner.anneal(max(done, clock.time_used()))
        clock.start_iteration()

        ahead = learner.has_ahead  # overlap_rollout: collected during the last update, waited for there
        batch = learner.collect()
        counters.global_step += batch.env_steps
        counters.learner_decisions += batch.n
        counters.games += batch.games
        clock.rollout_done(0.0 if ahead else batch.seconds)
        # with overlap_rollout the next rollout is played during this update, unless the decisions are spent
        # (a run stopped by its time limit drops the one played during its last update)
        more = counters.global_step < args.total_decisions
        clock.ahead = args.overlap_rollout and more
        try:
            with signals_held():  # an interrupt waits for the update: the network is never saved half-updated
                losses = learner.update(batch, collect_ahead=clock.ahead)
                self.committed = counters  # from here an interrupt saves this iteration's counters, as they go on
        finally:
            clock.ahead = False

        seconds = time.perf_counter() - self.t_start
        timing = {"lr": learner.lr, "update": learner.update_s}
        timing.update(seconds=seconds, steps=counters.global_step - self.step_at_start)
        eval_now = args.eval_every > 0 and it % args.eval_every == 0
        save_now = it % args.checkpoint_every == 0
        # with a time limit, the first iteration evaluates too: the last one's evaluation is then predicted
        first = clock.limit_s > 0 and args.eval_every >= 0 and it == self.step_it + 1
        clock.predict_next(learner.has_ahead)
        rest = clock.eval_s * (eval_now or first) + clock.ckpt_s * save_now
        last = counters.global_step >= args.total_decisions or clock.passes_limit(rest)
        due = args.eval_every >= 0 and (last or first or eval_now)
        stats = self.log(batch, losses, timing, due)
        if first and not last:  # the evaluation's time is known now: if the next would not fit, stop here
            last = clock.passes_limit(clock.ckpt_s * save_now)
        ret = stats.get(f"charts/episodic_return_per_{args.train_for}", 0)
        # a rollout played ahead was not counted as it was played (step_hook): it is, now that it is consumed
        self.progress.update(0 if self.per_step and not ahead else batch.env_steps, f"it {it} ret {ret:+.2f}")
        self.grow_pool(it)
        if last or save_now:
            self.save()
        return last, stats

    def log(self, batch: Rollout, losses: dict[str, float], timing: dict[str, float], due: bool) -> dict[str, Any]:
        """The iteration's scalars (:func:`evaluate_and_log`, the collector's own, the ``evaluate`` hook's when
        an evaluation is ``due``); the evaluation's time goes to the clock."""
        args, counters, writer, learner = self.args, self.counters, self.writer, self.learner
        t_eval = time.perf_counter()
        stats = evaluate_and_log(writer, args, self.game, learner.net, self.pool, batch, losses, counters, timing, due)
        learner.collector.log(writer, counters.global_step, learner.update_s)  # Ray workers: throughput, bytes
        for key, value in (self.evaluate(learner.net, counters) if due and self.evaluate is not None else {}).items():
            stats[key] = value
            writer.add_scalar(key, value, counters.global_step)
        if due:
            self.clock.evaluated(time.perf_counter() - t_eval)
        return stats

    def board_error(self, run_dir: str, err: OSError) -> ValueError:
        """A failed TensorBoard write (:class:`~train.runtime.board.Board`): one line naming the run folder; the
        progress line ends first. The checkpoint written last stays as it was."""
        self.progress.close()
        return ValueError(f"run folder: cannot write the TensorBoard log in {run_dir}: {err.strerror or err}")

    def grow_pool(self, it: int) -> None:
        """A frozen snapshot every ``snapshot_every`` iterations, an exploiter every ``exploiters_every``."""
        args, step, learner = self.args, self.counters.global_step, self.learner
        if args.snapshot_every and it % args.snapshot_every == 0:
            learner.replace_evicted(self.pool.add_snapshot(learner.net, step))
        if args.exploiters_every and it % args.exploiters_every == 0:
            evicted, found = add_exploiter(self.pool, learner.net, args, self.game, step, self.gen)
            for key, value in found.items():
                self.writer.add_scalar(key, value, step)
            learner.replace_evicted(evicted)

    def save_on_the_way_out(self) -> None:
        """On an interrupt: a checkpoint of the last finished update, if there is one since the last checkpoint,
        and a line saying so (the interrupt's own line and status follow)."""
        if self.committed is not self.counters:  # the iteration under way did not finish its update
            for f in dataclasses.fields(self.counters):
                setattr(self.counters, f.name, getattr(self.committed, f.name))
        step = self.counters.global_step
        self.progress.close()
        if step <= self.saved_step:
            return
        self.save()
        print(
            f"bobshat train: saved {self.ckpt_path} at {step:,} table decisions on the way out (--resume continues)",
            file=sys.stderr,
            flush=True,
        )

    def save(self) -> None:
        """:func:`checkpoint`; a failed write is one clear line, and the last checkpoint written stays as it was."""
        counters, learner = self.counters, self.learner
        t_ckpt = time.perf_counter()
        counters.elapsed_s = self.elapsed_before + time.perf_counter() - self.t_start
        try:
            checkpoint(
                self.ckpt_path,
                self.args,
                self.game,
                learner.net,
                learner.optimizer,
                self.pool,
                counters,
                self.gen,
                self.run_name,
            )
        except OSError as err:
            self.progress.close()
            self.writer.close(False)
            raise ValueError(f"cannot save the checkpoint {self.ckpt_path}: {err.strerror or err}") from None
        self.saved_step = counters.global_step
        self.clock.checkpointed(time.perf_counter() - t_ckpt)


class IterationClock:
    """The time limit of one invocation of :func:`train`: how much is used, and whether the next iteration fits.

    The next iteration is predicted as the last one's rollout at its steady rate (the rollout's time
    after its first env step, scaled to all its steps: the first step of a run pays for compiling and
    warming up, and would otherwise make the estimate after the first iteration far too long), its
    update and bookkeeping as measured, plus the last evaluation's and checkpoint's times (the last
    iteration always makes both).
    """

    def __init__(self, limit_s: float, t_start: float) -> None:
        self.limit_s, self.t_start = limit_s, t_start
        self.eval_s = self.ckpt_s = 0.0  # the last evaluation's and checkpoint's seconds
        self._it_start = self._first_step_end = self._rollout_s = self._rollout_end = 0.0
        self._steps = 0
        self.ahead = False  # the rollout stepping now is played ahead, during the update (step_hook)
        self.iteration_s = 0.0  # the predicted time of the next iteration (without evaluation and checkpoint)

    def spent(self) -> float:
        """Seconds since this invocation started."""
        return time.perf_counter() - self.t_start

    def time_used(self) -> float:
        """Share of the time limit spent (0 without a limit)."""
        return min(self.spent() / self.limit_s, 1.0) if self.limit_s > 0 else 0.0

    def step_hook(self, progress: ProgressBar, num_envs: int) -> Callable[[int, int], None]:
        """The collector's per-step callback: advances ``progress`` and times the rollout's first step. While
        :attr:`ahead` is set (a rollout played during the update, ``overlap_rollout``) it does neither: that
        rollout's decisions are counted when an update consumes them, so the bar never runs ahead of the run's
        decision count, nor counts the rollout played ahead that a run stopped by its time limit drops."""

        def on_step(step: int, steps: int) -> None:
            if self.ahead:
                return
            if step == 1:
                self._first_step_end = time.perf_counter()
            self._steps = steps
            progress.update(num_envs)

        return on_step

    def start_iteration(self) -> None:
        """An iteration starts now (its rollout's first step is timed from here)."""
        self._it_start = time.perf_counter()
        self._first_step_end, self._steps = 0.0, 0

    def rollout_done(self, seconds: float) -> None:
        """The rollout took ``seconds``; its steady-rate estimate is kept for the prediction."""
        now = time.perf_counter()
        self._rollout_s = seconds
        if self._steps > 1 and self._first_step_end > self._it_start:
            later = now - self._first_step_end  # steps 2..T (and the GAE)
            self._rollout_s = min(seconds, later * self._steps / (self._steps - 1))
        self._rollout_end = now

    def evaluated(self, seconds: float) -> None:
        """The last evaluation took ``seconds`` (the next is predicted to take as long)."""
        self.eval_s = seconds

    def checkpointed(self, seconds: float) -> None:
        """The last checkpoint took ``seconds`` (the next is predicted to take as long)."""
        self.ckpt_s = seconds

    def predict_next(self, rollout_ready: bool = False) -> None:
        """Predict the next iteration (without evaluation and checkpoint); called after this one's update.
        ``rollout_ready``: the next rollout was played during this update (overlap_rollout), so the next
        iteration is its update alone, which this one's time since its rollout measured with the overlap."""
        since = time.perf_counter() - self._rollout_end  # the update (and the rollout beside it), logging
        self.iteration_s = since if rollout_ready else self._rollout_s + since

    def passes_limit(self, rest_of_this: float) -> bool:
        """Whether one more iteration would end past the limit, when this one still takes ``rest_of_this``
        seconds (its evaluation, its checkpoint): the next one, if it is the last, evaluates and saves."""
        if self.limit_s <= 0:
            return False
        return self.spent() + rest_of_this + self.iteration_s + self.eval_s + self.ckpt_s > self.limit_s


def main(argv: list[str] | None = None) -> int:
    """``bobshat train``: parse, train, print a summary; returns the exit code."""
    args = parse_args(argv)
    check_run_inputs(args, build_arg_parser().parse_args(argv).config)  # nor is the preset
    with sigterm_as_exit():  # SIGTERM: exit 143 through the cleanup, which saves a checkpoint (TrainingRun.run)
        out = train(args)
    done, secs = out["decisions_this_run"], out["seconds"]
    why = "the time limit" if done and out["global_step"] < args.total_decisions else "total_decisions"
    print(
        f"trained {done:,} table decisions in {secs:,.1f} s ({done / max(secs, 1e-9):,.0f}/s; "
        f"stopped by {why}), {out['global_step']:,} in all: {out['run_dir']}",
        file=sys.stderr,
    )
    keys = ("global_step", "learner_decisions", "seconds", "charts/SPS", "losses/value_loss", "losses/entropy")
    print(json.dumps({k: out[k] for k in keys if k in out} | {"run_dir": out["run_dir"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
