"""``bobshat average``: one policy whose weights are the (weighted) mean of several policies' weights.

Why: the ends of successive training legs of one lineage (each leg
``--init-from`` the one before, the learning rate started again and annealed
to zero) can lie in one basin, where the mean of their weights plays better
than any of them, as stochastic weight averaging (Izmailov et al., 2018) and
"model soups" (Wortsman et al., 2022) found for supervised networks.
The shipped Bob's Hat 4p policy is such a mean, and beat each leg's end; on
Oh Hell 4p the means were level with the last end, so it does not always pay
(docs/guides/imitate.md and docs/results/policies.md give the numbers).
Policies trained apart (other seeds from scratch) need not share a basin
(for supervised networks their mean is known to fail; not measured here),
so measure the result (``bobshat eval``) before using it.

What it checks before anything is written: every input is a bobshat
checkpoint (``load_checkpoint``: checksum, finite weights) of the same table
and network (game, players, options, observation, actions, hidden sizes,
symmetry, features), and the tensors that are not trained (the symmetry and
feature tables) are identical. Only the network's parameters are averaged.
A training checkpoint (``ckpt.pt``) gives its policy; its optimizer and pool
are left out. The output is an ordinary policy checkpoint (``ppo:OUT`` plays
it, ``bobshat train --init-from OUT`` trains on from it) whose metadata lists
its sources (file name, SHA-256, weight, run name and progress), written
atomically with its sidecar and never over one of its inputs.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from agents.checkpoint import POLICY_PREFIX, load_checkpoint, write_checkpoint

# the metadata that says which table and which network: equal in every input, copied to the output
NET_FIELDS = ("game", "players", "config", "view", "obs_size", "n_actions", "hidden", "symmetry", "features")
# what each source's entry in ``averaged_from`` keeps of its metadata (what it was, how long it trained)
SOURCE_FIELDS = ("run_name", "global_step", "learner_decisions", "games", "elapsed_s", "sha256")
MAX_INPUTS = 64


class AverageError(ValueError):
    """An input or option of ``bobshat average`` that cannot be used; the message names it."""


def parse_weights(text: str | None, n: int) -> list[float]:
    """The inputs' weights, normalized to sum to 1: ``None`` for equal weights, else ``n`` comma-separated
    positive finite numbers (``"1,1,2"``)."""
    if text is None:
        return [1.0 / n] * n
    parts = [p.strip() for p in text.split(",")]
    try:
        values = [float(p) for p in parts]
    except ValueError:
        raise AverageError(f"--weights: {text!r} is not a list of numbers (e.g. 1,1,2)") from None
    if len(values) != n:
        raise AverageError(f"--weights: {len(values)} weight(s) for {n} checkpoints; give one per checkpoint")
    bad = [p for p, v in zip(parts, values) if not (math.isfinite(v) and v > 0)]
    if bad:
        raise AverageError(f"--weights: every weight must be a positive finite number, got {', '.join(bad)}")
    return normalized(values)


def normalized(values: Sequence[float]) -> list[float]:
    """Positive finite ``values`` scaled to sum to 1; scaled by their largest first, so that weights near
    the float limit (``1e308,1e308``) give halves, not an overflowed sum and zeros."""
    top = max(values)
    scaled = [v / top for v in values]
    total = math.fsum(scaled)
    return [v / total for v in scaled]


def _policy(path: str | os.PathLike) -> tuple[dict[str, torch.Tensor], dict[str, Any], set[str]]:
    """A checkpoint's network tensors (without the ``policy.`` prefix), its metadata and the names of its
    trained parameters (the network is built from it, which checks that its tensors fit)."""
    from agents.ppo_agent import policy_from_tensors

    tensors, meta = load_checkpoint(path)
    if not any(k.startswith(POLICY_PREFIX) for k in tensors):
        raise AverageError(f"{str(path)!r} holds no policy network ({POLICY_PREFIX}* tensors)")
    net = policy_from_tensors(tensors, meta, path=path)
    state = {k[len(POLICY_PREFIX) :]: v for k, v in tensors.items() if k.startswith(POLICY_PREFIX)}
    return state, meta, {name for name, _ in net.named_parameters()}


def average_checkpoints(
    paths: Sequence[str | os.PathLike], weights: Sequence[float] | None = None
) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """(tensors, meta) of the policy whose parameters are ``sum_i weights[i] * params_i`` (equal weights by
    default; they must be positive and are normalized); :class:`AverageError` naming the file and what
    differs when the inputs are not the same table and network."""
    if not 2 <= len(paths) <= MAX_INPUTS:
        raise AverageError(f"give 2 to {MAX_INPUTS} checkpoints to average, got {len(paths)}")
    w = [1.0 / len(paths)] * len(paths) if weights is None else [float(x) for x in weights]
    if len(w) != len(paths) or not all(math.isfinite(x) and x > 0 for x in w):
        raise AverageError(f"weights must be {len(paths)} positive finite numbers, got {list(weights or [])}")
    w = normalized(w)
    first_state, first_meta, params = _policy(paths[0])
    first = str(paths[0])
    sums = {k: v.double() * w[0] if k in params else v for k, v in first_state.items()}
    sources = [_source(paths[0], first_meta, w[0])]
    for path, weight in zip(paths[1:], w[1:]):
        state, meta, _ = _policy(path)
        for field in NET_FIELDS:
            if meta.get(field) != first_meta.get(field):
                raise AverageError(
                    f"{str(path)!r} is another network than {first!r}: {field} is {meta.get(field)!r}, "
                    f"not {first_meta.get(field)!r}; only policies of one table and one network shape average"
                )
        # equal NET_FIELDS and a network built from each file (a strict load) give the same tensors and shapes
        for key, value in state.items():
            if key in params:
                sums[key] = sums[key] + value.double() * weight
            elif not torch.equal(value, first_state[key]):  # a table, not a weight: averaging it means nothing
                raise AverageError(
                    f"{str(path)!r}: its {key} table differs from {first!r}'s; the policies were built for "
                    "different symmetry or feature tables and cannot be averaged"
                )
        sources.append(_source(path, meta, weight))
    tensors = {POLICY_PREFIX + k: (v.to(first_state[k].dtype) if k in params else v.clone()) for k, v in sums.items()}
    meta = {field: first_meta[field] for field in NET_FIELDS if field in first_meta}
    meta["run_name"] = f"average of {len(paths)}"
    meta["averaged_from"] = sources
    return tensors, meta


def _source(path: str | os.PathLike, meta: dict[str, Any], weight: float) -> dict[str, Any]:
    """One input as the output's metadata lists it: its file name (not its folder: a path of the machine
    that made it means nothing elsewhere), its weight and what its own metadata says it is."""
    return {"file": Path(path).name, "weight": weight, **{k: meta[k] for k in SOURCE_FIELDS if k in meta}}


def format_report(out: str, meta: dict[str, Any]) -> str:
    """What ``bobshat average`` prints: each source with its weight, then the file written."""
    lines = [f"averaged {len(meta['averaged_from'])} policies of {meta['game']}, {meta['players']} players:"]
    for s in meta["averaged_from"]:
        step = f", {s['global_step']:,} table decisions" if "global_step" in s else ""
        lines.append(f"  {s['weight']:.4f}  {s['file']} ({s.get('run_name', 'no run name')}{step})")
    lines.append(f"wrote {out} (play it as ppo:{out})")
    return "\n".join(lines)


def cli_average(args: Any) -> int:
    """``bobshat average --out OUT [--weights W] CKPT CKPT...``."""
    from train.runtime.kit import check_checkpoint_out
    from train.runtime.pool import sigterm_as_exit

    check_checkpoint_out(args.out)
    weights = parse_weights(args.weights, len(args.checkpoints))
    tensors, meta = average_checkpoints(args.checkpoints, weights)  # a bad input: its CheckpointError
    with sigterm_as_exit():  # SIGTERM: exit 143 through write_checkpoint's cleanup (the sidecar put back)
        write_checkpoint(args.out, tensors, meta)
    print(format_report(str(args.out), meta), file=sys.stdout)
    return 0


__all__ = ["AverageError", "average_checkpoints", "cli_average", "format_report", "normalized", "parse_weights"]
