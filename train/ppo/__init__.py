"""PPO with invalid-action masking and self-play for the batched bobshat env.

Run it as ``bobshat train --config configs/bobs_hat_4p.yaml [--key value ...]``
(every field of :class:`Args` is a flag: ``--total-decisions 2000000``,
``--resume``), ``python -m train.ppo --config ...``, or ``train(Args(...))``
from Python. One job per module, read in this order:

- :mod:`train.ppo.config`: :class:`Args`, YAML presets and flags, their checks;
- :mod:`train.ppo.rollout`: :class:`~train.ppo.rollout.Rollout`, the batch a rollout hands to the update;
- :mod:`train.ppo.collector`: rollouts (the
  :class:`~train.ppo.collector.Collector` protocol, the in-process
  :class:`~train.ppo.collector.RolloutCollector`; Ray's in
  :mod:`train.ppo.workers`);
- :mod:`train.ppo.update`: GAE over interleaved seats, the clipped PPO update;
- :mod:`train.ppo.learner`: set-up and the one learner loop (anneal, collect,
  update) that every learning run drives;
- :mod:`train.ppo.exploiters`: exploiters of the policy trained into its pool;
- :mod:`train.ppo.rundir`: the run folder (made, locked, resumed by its own run);
- :mod:`train.ppo.run`: :func:`train` and ``bobshat train``;
- :mod:`train.ppo.plots`: :func:`plot_run`, training curves as a PNG.

The checkpoint's file format and layout are :mod:`agents.checkpoint`'s.

One policy for all seats
    Observations are seat-relative, so one network plays every seat. Illegal
    actions get a logit 80 below the best legal one
    (:func:`agents.ppo_agent.masked_logits`): probability below 1e-34, never
    sampled, no gradient.

Who plays (:mod:`train.ppo.selfplay`)
    Game ``i`` of the batch seats the learner in one seat (``learner_seats``
    of them) and one opponent from the pool (heuristic bots, frozen past
    snapshots and exploiters of the policy, drawn by PFSP) in the others;
    with probability ``self_play_prob`` the current policy plays every seat
    instead. Seat and opponent are drawn again when the game ends. Only the
    learner's decisions are trained on.

Counting
    ``global_step`` counts *table decisions* (every seat's, as the env steps
    them); the learner trains on its own share of them (``learner
    decisions``). ``charts/SPS`` is table decisions per second over the run,
    rollout and learning included.

Logs and checkpoints
    TensorBoard under ``runs/<run_name>/`` (tags ``charts/``, ``losses/``).
    ``ckpt.pt`` (everything needed to resume) and ``policy.pt`` (the network
    only, for ``ppo:PATH``) are written atomically every
    ``checkpoint_every`` iterations and at the end; ``--resume`` continues
    from ``ckpt.pt`` with the optimizer, step counters, pool and RNG states,
    if it is this run's (:func:`train.ppo.rundir.check_same_run`). The run
    folder is locked while a run uses it (:func:`train.ppo.rundir.run_lock`).

This package re-exports what the README and the notebooks import from it:
:class:`Args`, :func:`train` and :func:`plot_run`.
"""

from train.ppo.config import Args
from train.ppo.plots import plot_run
from train.ppo.run import train

__all__ = ["Args", "plot_run", "train"]
