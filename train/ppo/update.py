"""The learner's update: clipped PPO epochs over a rollout.

:func:`ppo_update` is CleanRL's clipped PPO with invalid-action masking, over a
:class:`~train.ppo.rollout.Rollout`'s rows, whose advantages the rollout's side
computed (:func:`train.ppo.rollout.interleaved_gae`). bf16 autocast is shared with the collector's inference
(:func:`autocast`, :func:`net_input`), so both feed the network alike.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from copy import deepcopy

import numpy as np
import torch
from torch import nn

from agents.ppo_agent import PolicyNet, masked_logits
from agents.sparse_linear import SparseRows
from train.ppo.config import Args
from train.ppo.rollout import Rollout


@functools.cache
def native_bf16(device_type: str) -> bool:
    """Whether ``device_type`` multiplies bfloat16 matrices in hardware: CUDA GPUs that support it, CPUs whose
    oneDNN has a bfloat16 path (AVX-512 or AMX). On others (AVX2 only) bfloat16 is emulated and several times
    slower than float32 (docs/results/engineering.md, "The trainer's tensors"), so ``bf16`` is not used there."""
    if device_type == "cuda":
        return bool(torch.cuda.is_available() and torch.cuda.is_bf16_supported())
    if device_type == "cpu":
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    return False


def autocast(bf16: bool, device_type: str = "cpu") -> torch.autocast:
    """bfloat16 matrix products on ``device_type`` where ``bf16`` and the device has them in hardware
    (:func:`native_bf16`: CPUs with AVX-512/AMX, CUDA GPUs from Ampere on), else a no-op (float32)."""
    return torch.autocast(device_type, dtype=torch.bfloat16, enabled=bf16 and native_bf16(device_type))


def net_input(bf16: bool, device_type: str = "cpu") -> torch.dtype:
    """The type stored float16 observations go to the network in: the one its first product casts them to
    anyway (float16 -> bfloat16 rounds exactly as float16 -> float32 -> bfloat16 does, one conversion, not two)."""
    return torch.bfloat16 if bf16 and native_bf16(device_type) else torch.float32


def inference_copy(net: PolicyNet, bf16: bool, cache: PolicyNet | None = None) -> PolicyNet:
    """The network a rollout samples from, made once per rollout: ``net`` itself, or, where ``bf16`` is on and
    the device has it (:func:`native_bf16`), a bfloat16 copy of its current weights (``cache``, the last
    rollout's copy, reused when it is one). Under autocast every call casts every weight to bfloat16 again
    (some twenty copies a rollout step); the copy's products are the same ones on the same rounded values, so
    its outputs equal autocast's bit for bit, and with :func:`from_half` a step's network call is faster
    (docs/results/engineering.md)."""
    if not (bf16 and native_bf16(net.device.type)):
        return net
    # deepcopy, not clone_frozen: a new PolicyNet's initialization would draw from torch's global RNG, which
    # samples the actions
    frozen = cache if cache is not None and cache is not net else deepcopy(net).to(torch.bfloat16)
    frozen.load_state_dict(net.state_dict())  # copy_ rounds to bfloat16 as autocast's cast does
    return frozen


def half_rows(x: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """``x[rows]`` of a 2-byte tensor (float16, bfloat16), gathered as int16: the same bytes, but
    ``index_select`` has a vectorized CPU path for int16 and not for the half types (docs/results/engineering.md)."""
    return x.view(torch.int16).index_select(0, rows).view(x.dtype)


def from_half(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Float16 ``x`` as ``dtype``; to bfloat16 through float32. The values are the same (float16 to float32 is
    exact, then the one rounding to bfloat16), but PyTorch converts float16 to bfloat16 directly element by
    element on the CPU, about twice as slow. Converting the whole rollout once per update instead was no
    faster and held a second copy (docs/results/engineering.md, "The trainer's tensors")."""
    if dtype == torch.bfloat16 and x.dtype == torch.float16:
        return x.float().to(dtype)
    return x.to(dtype)


def _pool(workers: int) -> ThreadPoolExecutor:
    """The update's helper threads: one pool per size and process, kept (a thread costs ~0.1 ms to start, a
    minibatch's shard a few ms to compute). Keyed by the process too: a forked child inherits the cache but not
    the threads, and its work would wait for them forever. The threads take the floating-point mode of the
    thread that starts them (POSIX threads inherit it): the trainer sets flush-denormal before its first update,
    so the shards' threads flush too (checked: 1e-30 x 1e-10 gives 0 on a thread started after it)."""
    return _pool_of(workers, os.getpid())


@functools.cache
def _pool_of(workers: int, pid: int) -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ppo-update")


def _evaluate(
    net: PolicyNet, x: torch.Tensor | SparseRows, legal: torch.Tensor, act: torch.Tensor, bf16: bool, dev_type: str
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The network on stored rows (their observations, masks and actions are canonical): every action's
    log-probability, the stored action's, and the value (float32)."""
    with autocast(bf16, dev_type):
        logits, value = net.head(x)
    logp_all = torch.log_softmax(masked_logits(logits.float(), legal), dim=-1)
    return logp_all, logp_all.gather(1, act[:, None]).squeeze(1), value.float()


def _shard_terms(
    net: PolicyNet,
    x: torch.Tensor | SparseRows,
    legal: torch.Tensor,
    act: torch.Tensor,
    mb_rows: torch.Tensor,
    weight: float,
    args: Args,
    dev_type: str,
) -> dict[str, torch.Tensor]:
    """One shard's share of a minibatch's PPO loss: every term is the shard's mean times ``weight`` (its share of
    the minibatch's rows), so the shards' terms sum to the minibatch's means; with one shard ``weight`` is 1.0,
    an exact product, and the terms are the plain means. ``mb_rows``: logprob, normalized advantage, return and
    value of the shard's rows, and with a lagged rollout a fifth row, the decoupled objective's weights."""
    logp_all, newlogp, newvalue = _evaluate(net, x, legal, act, args.bf16, dev_type)
    entropy = -(logp_all.exp() * logp_all).sum(-1)
    mb_logp, mb_adv, mb_ret, mb_val = mb_rows[:4]
    logratio = newlogp - mb_logp
    ratio = logratio.exp()
    terms = {}
    with torch.no_grad():
        terms["old_approx_kl"] = (-logratio).mean() * weight
        terms["approx_kl"] = ((ratio - 1) - logratio).mean() * weight
        terms["clipfrac"] = ((ratio - 1.0).abs() > args.clip_coef).float().mean() * weight
    neg_adv = -mb_adv
    pg_rows = torch.max(neg_adv * ratio, neg_adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef))
    pg = (pg_rows * mb_rows[4]).mean() if len(mb_rows) > 4 else pg_rows.mean()
    if args.clip_vloss:
        v_clipped = mb_val + (newvalue - mb_val).clamp(-args.clip_coef, args.clip_coef)
        v = 0.5 * torch.max((newvalue - mb_ret) ** 2, (v_clipped - mb_ret) ** 2).mean()
    else:
        v = 0.5 * ((newvalue - mb_ret) ** 2).mean()
    terms["pg"], terms["v"], terms["entropy"] = pg * weight, v * weight, entropy.mean() * weight
    terms["loss"] = terms["pg"] - args.ent_coef * terms["entropy"] + args.vf_coef * terms["v"]
    return terms


def _shard_grads(params: list[nn.Parameter], *shard: object) -> tuple[dict[str, torch.Tensor], tuple]:
    """:func:`_shard_terms` and the gradient of its loss, in the calling thread (autocast and grad mode are
    per thread, so both are set here)."""
    with torch.enable_grad():
        terms = _shard_terms(*shard)  # type: ignore[arg-type]
        return terms, torch.autograd.grad(terms["loss"], params)


def _proximal(
    net: PolicyNet,
    x_of: Callable[[torch.Tensor], torch.Tensor | SparseRows],
    b_legal: torch.Tensor,
    b_act: torch.Tensor,
    n: int,
    args: Args,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Log-probabilities of the stored actions and values of every row under the weights as they are now (the
    proximal policy of the decoupled objective), by minibatches as the update reads them; ``x_of(rows)`` is a
    minibatch's input."""
    dev = net.device
    logp, val = torch.empty(n, device=dev), torch.empty(n, device=dev)
    with torch.no_grad():
        for start in range(0, n, args.minibatch_size):
            end = min(start + args.minibatch_size, n)
            x = x_of(torch.arange(start, end, device=dev))
            _, logp[start:end], val[start:end] = _evaluate(
                net, x, b_legal[start:end], b_act[start:end], args.bf16, dev.type
            )
    return logp, val


def ppo_update(
    net: PolicyNet, optimizer: torch.optim.Optimizer, batch: Rollout, args: Args, lagged: bool = False
) -> dict[str, float]:
    """``update_epochs`` passes of clipped PPO over ``batch`` in minibatches; returns the ``losses/`` scalars
    (those of the last minibatch, as CleanRL logs them). The batch moves to the network's device once; the
    minibatch permutation is drawn on the CPU, so it is the same draw on every device.

    With ``update_threads`` k > 1 each minibatch is split in k shards of consecutive rows, each shard's
    gradient is computed on its own thread, and the gradients are summed in shard order: the same loss and the
    same step, rounded differently (so a run's numbers depend on k, not on the machine or the threads' timing).
    The advantages are normalized over the whole minibatch first, as with one shard. Why: one core's products
    are most of the update, and torch's own threads split each product too finely to gain (see README,
    "Training speed").

    ``lagged``: the rollout was played by the weights before the last update (``overlap_rollout``). The
    clipped ratio is then taken against the weights as they are when this update starts (the *proximal*
    policy), and each row's term is weighted by proximal / behaviour probability, truncated at 1 (the
    decoupled objective of Hilton et al., "Batch size-invariance for policy optimization", 2022, with
    V-trace's truncation); the value clip is centred on the proximal values. Against the behaviour policy
    the ratio starts one update away from 1, and the clip discards much of the signal: measured on the
    default preset, a run with the plain objective on lagged rollouts ended far behind one without lag."""
    n, dev = batch.n, net.device
    in_dtype = net_input(args.bf16, dev.type)
    # the first layer over the inputs' non-zeros (agents/sparse_linear.py): the float16 rollout is listed once,
    # each minibatch takes its rows' lists; where the product is not float32 on the CPU, the dense minibatch
    sparse = args.sparse_input and dev.type == "cpu" and in_dtype == torch.float32
    rows = SparseRows.from_dense(batch.obs) if sparse else None
    b_obs = torch.from_numpy(batch.obs).to(dev) if rows is None else None
    b_legal = torch.from_numpy(batch.mask).view(torch.uint8).to(dev)  # masked_logits reads 0/1: no bool pass
    b_act = torch.from_numpy(batch.actions).to(dev)
    # the per-row floats as the rows of one (4, n) array: one gather per minibatch instead of four
    b_rows = torch.from_numpy(np.stack([batch.logprobs, batch.advantages, batch.returns, batch.values])).to(dev)

    def x_of(rows_s: torch.Tensor) -> torch.Tensor | SparseRows:
        if rows is not None:
            return rows.take(rows_s)
        assert b_obs is not None  # made above whenever rows is None
        return from_half(half_rows(b_obs, rows_s), in_dtype)

    if lagged and n:
        logp_prox, val_prox = _proximal(net, x_of, b_legal, b_act, n, args)
        weight = torch.exp(logp_prox - b_rows[0]).clamp(max=1.0)
        b_rows = torch.stack([logp_prox, b_rows[1], b_rows[2], val_prox, weight])
    params = list(net.parameters())
    clipfracs, terms = [], {}
    for _epoch in range(args.update_epochs):
        perm = torch.randperm(n)
        for start in range(0, n, args.minibatch_size):
            mb = perm[start : start + args.minibatch_size].to(dev)
            mb_rows = b_rows.index_select(1, mb)  # contiguous rows, as the reductions need
            if args.norm_adv and mb.numel() > 1:
                adv = mb_rows[1]
                mb_rows[1] = (adv - adv.mean()) / (adv.std() + 1e-8)
            k = min(args.update_threads, mb.numel())
            shards = []
            for part in torch.tensor_split(torch.arange(mb.numel(), device=dev), k):
                rows_s, cols = (mb, mb_rows) if k == 1 else (mb.index_select(0, part), mb_rows.index_select(1, part))
                x = x_of(rows_s)
                legal, act = b_legal.index_select(0, rows_s), b_act.index_select(0, rows_s)
                shards.append((net, x, legal, act, cols, len(part) / mb.numel(), args, dev.type))
            optimizer.zero_grad()
            if len(shards) == 1:
                terms = _shard_terms(*shards[0])
                terms["loss"].backward()
            else:
                futures = [_pool(len(shards) - 1).submit(_shard_grads, params, *s) for s in shards[1:]]
                done = [_shard_grads(params, *shards[0])] + [f.result() for f in futures]
                terms = {k: functools.reduce(torch.add, [t[k].detach() for t, _ in done]) for k in done[0][0]}
                for i, p in enumerate(params):
                    p.grad = functools.reduce(torch.add, [g[i] for _, g in done])  # in shard order: deterministic
            clipfracs.append(terms["clipfrac"])
            nn.utils.clip_grad_norm_(net.parameters(), args.max_grad_norm)
            optimizer.step()
        if args.target_kl > 0 and terms and terms["approx_kl"].item() > args.target_kl:
            break
    var_y = np.var(batch.returns) if n else 0.0
    explained_var = float("nan") if var_y == 0 else float(1 - np.var(batch.returns - batch.values) / var_y)
    zero = torch.zeros(())
    return {
        "losses/value_loss": terms.get("v", zero).item(),
        "losses/policy_loss": terms.get("pg", zero).item(),
        "losses/entropy": terms.get("entropy", zero).item(),
        "losses/old_approx_kl": terms.get("old_approx_kl", zero).item(),
        "losses/approx_kl": terms.get("approx_kl", zero).item(),
        "losses/clipfrac": float(np.mean([c.item() for c in clipfracs])) if clipfracs else 0.0,
        "losses/explained_variance": explained_var,
    }
