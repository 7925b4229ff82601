"""The settings of ``bobshat imitate``, ``expert`` and ``exploit``: each one dataclass, its fields the flags.

Each field is a :func:`train.runtime.kit.option`: its default, the help of its flag,
its range or choices, written once. The command line builds the flags from
these classes (:func:`train.runtime.kit.add_flags`), a preset's keys are their
fields, and making one checks every field (:class:`train.runtime.kit.Options`). They
live apart from the commands, which import torch, so that ``bobshat --help``
builds the flags without loading it.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from train.runtime.kit import Options, option

MAX_SEED = 2**63 - 1  # game keys are 64-bit
BID_LABELS = ("oracle", "search", "policy")
DEFAULT_HIDDEN = (128, 128)  # the presets' network (configs/*.yaml), so train --init-from accepts the result


class ImitationError(ValueError):
    """Records or options that cannot be imitated; the message names the file and line, or the option."""


class ExpertError(ValueError):
    """An option that cannot run; the message names it."""


MAX_DEALS = 100_000  # evaluation deals: the command line's bound on every deal count


@dataclass
class ImitateOptions(Options):
    """The settings of one imitation run (``bobshat imitate``'s flags)."""

    error = ImitationError
    records: list[str] = option(help="JSON Lines records files", nargs="+", required=True, metavar="FILE")
    out: str = option(help="the policy checkpoint to write (ppo:PATH plays it)", required=True, metavar="PATH")
    holdout: float = option(0.1, "share of games held out", lo=0.0, hi=1.0, ends="[)")
    epochs: int = option(4, "passes over the training games", lo=1, hi=1000)
    seed: int = option(0, "seed of the split, the initial weights, the batches", lo=0, hi=MAX_SEED)
    init_from: str | None = option(None, "start from this policy checkpoint's weights", metavar="CKPT")
    hidden: tuple[int, ...] | None = option(
        None, f"hidden layer sizes (default {','.join(map(str, DEFAULT_HIDDEN))}, or --init-from's)", lo=1, hi=16_384
    )
    trump_symmetry: bool = option(True, flag=False)
    trick_features: bool = option(True, flag=False)
    learning_rate: float = option(2e-3, "Adam's, decayed to 0", lo=1e-6, hi=1.0)
    minibatch_size: int = option(512, "decisions per step", lo=1, hi=65_536)
    value_coef: float = option(0.5, "value loss weight; 0: skip", lo=0.0, hi=100.0)
    threads: int = option(1, flag=False)  # torch's (a small network: more only contend)


@dataclass
class ExpertOptions(Options):
    """The settings of an expert-iteration run (preset keys and ``bobshat expert`` flags)."""

    error = ExpertError
    init_from: str = option("", "the policy checkpoint to start from (required)")
    out: str = option("", "the checkpoint written after every round (required)")
    log_dir: str = option("", "TensorBoard folder (default runs/OUTSTEM_expert)")
    rounds: int = option(1, "rounds of play, label, distil, measure", lo=1, hi=1000)
    # memory: the decisions kept for labelling (then copied once into one batch), measured as the process's growth
    # from 50 to 400 Bob's Hat games, 4 players: 1.2 MB a game with every card play kept (card_share 1: 430
    # decisions a game), 0.27 MB at card_share 0.1. 10,000 games: 2.7 GB / 12 GB before the copy; the old
    # bound, 100,000: 27 GB / 120 GB
    games: int = option(32, "self-play games labelled per round", lo=1, hi=10_000)
    card_share: float = option(0.1, "share of card plays labelled by the search", lo=0.0, hi=1.0)
    bids: str = option(
        "oracle", "bid labels: oracle (best information-set value), search, policy (none)", choices=BID_LABELS
    )
    worlds: int = option(32, "the search's sampled deals per decision", lo=1, hi=1024)
    top_k: int = option(3, "the search's candidates", lo=1, hi=64)
    z: float = option(2.0, "standard errors by which the search must beat the policy's move", lo=0.0, hi=100.0)
    oracle_worlds: int = option(8, "the bid oracle's sampled deals per decision", lo=1, hi=1024)
    bid_temperature: float = option(
        0.0, "oracle bids: softmax of the values at this temperature, 0: the best", lo=0.0, hi=1000.0
    )
    bid_gap: float = option(
        0.0, "oracle bids: the policy's bid stays unless the best is worth this many points more", lo=0.0, hi=1000.0
    )
    mix: float = option(1.0, "target = mix x label + (1 - mix) x the policy's distribution", lo=0.0, hi=1.0, ends="(]")
    holdout: float = option(0.1, "share of each round's games held out of the fit", lo=0.0, hi=1.0, ends="[)")
    epochs: int = option(2, "passes over each round's labels", lo=1, hi=1000)
    learning_rate: float = option(3e-4, "Adam's, decayed to 0 in each round", lo=1e-6, hi=1.0)
    minibatch_size: int = option(256, "labels per step", lo=1, hi=65_536)
    value_coef: float = option(0.5, "weight of the value head held to its predictions; 0: skip", lo=0.0, hi=100.0)
    eval_deals: int = option(
        64, "duplicate deals per round against strong and the start, 2v2; 0: none", lo=0, hi=100_000
    )
    eval_seed: int = option(1000, "seed of the evaluation deals", lo=0, hi=MAX_SEED)
    seed: int = option(0, "seed of the self-play deals, the labels' draws, the fit", lo=0, hi=MAX_SEED)
    extra: dict = option({}, flag=False, repr=False)  # the preset's game, players and game options (the CLI's)


@dataclass
class ExploitOptions(Options):
    """The settings of one exploit run (``bobshat exploit``'s flags; the game's are the command line's own).

    ``None`` for the budget and ``config`` means the preset's (``configs/GAME_Pp.yaml``, else
    ``GAME_4p.yaml``); :func:`train.exploit.exploit_args` turns them into the trainer's settings."""

    target: str = option(help="the agent spec to exploit", required=True, metavar="SPEC")
    seats: int = option(1, "seats the exploiter holds; the target holds the others", lo=1, hi=7)
    config: str | None = option(None, "PPO preset to start from (default configs/GAME_Pp.yaml, else GAME_4p.yaml)")
    total_decisions: int | None = option(None, "table decisions to train for (default: preset)", lo=1, hi=1e12)
    time_limit_min: float | None = option(
        None, "minutes of training in this command, --resume too (default: the preset's; 0: no limit)", lo=0.0, hi=1e6
    )
    init: str = option("", "start the exploiter from this policy checkpoint's weights (default: fresh)", metavar="PATH")
    seed: int = option(1, "seed of the run and of its evaluation deals", lo=0, hi=MAX_SEED)
    eval_every: int = option(5, "iterations between evaluations, and at the end; 0: only at the end", lo=0, hi=1e9)
    eval_deals: int = option(64, "deals per evaluation point", lo=2, hi=MAX_DEALS)
    final_deals: int = option(256, "deals of the final evaluation, 0: none", lo=0, hi=MAX_DEALS)
    run_name: str = option("", "run folder under --runs-dir (default GAME_Pp_exploit_TARGET_sSEED)")
    runs_dir: str = option("runs", "where run folders go")
    resume: bool = option(False, "continue the run from its ckpt.pt", action="store_true")
    variance_reduction: bool = option(
        False,
        "also report variance-reduced margins (docs/variance_reduction.md)",
        action=argparse.BooleanOptionalAction,
    )


__all__ = [
    "BID_LABELS",
    "DEFAULT_HIDDEN",
    "MAX_DEALS",
    "ExpertError",
    "ExpertOptions",
    "ExploitOptions",
    "ImitateOptions",
    "ImitationError",
]
