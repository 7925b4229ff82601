"""The trainer's faster paths give the same numbers bit for bit (issue 28).

- The rollout samples from a bfloat16 copy of the network (:func:`train.ppo.update.inference_copy`) instead
  of casting every weight under autocast at every step: same actions, log-probabilities and values, in every
  rollout (the copy follows the weights), and the copy draws nothing from torch's RNG, which samples actions.
- Float16 rows are gathered as int16 (:func:`~train.ppo.update.half_rows`) and converted to bfloat16 through
  float32 (:func:`~train.ppo.update.from_half`): the same bits as ``index_select`` and a direct conversion.

The bfloat16 paths run here on any CPU: ``native_bf16`` is patched to True (emulated bfloat16 is slow, not
different).
"""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path

import numpy as np
import pytest
import torch

from agents.ppo_agent import PolicyNet
from bobshat_env.games import make_game
from bobshat_env.vector import VectorEnv
from train.ppo import collector as collector_module
from train.ppo import update
from train.ppo.collector import RolloutCollector, env_seed
from train.ppo.config import parse_args
from train.ppo.learner import set_up
from train.ppo.rollout import Rollout

ROOT = Path(__file__).resolve().parents[1]


def _two_rollouts(tmp_path: Path) -> tuple[list[Rollout], RolloutCollector]:
    """Two whole-game rollouts of 12 smoke-preset games with bf16 on, the weights changed in between (as an
    update would) without drawing from any RNG."""
    args = parse_args(["--config", str(ROOT / "configs" / "smoke.yaml"), "--runs-dir", str(tmp_path)])
    args = dataclasses.replace(args, num_envs=12, num_steps=0, bf16=True, heuristics=["random", "strong"])
    game = make_game(args.game, players=args.players, **args.game_options)
    gen, net, _opt, pool, _c = set_up(args, game, tmp_path / "none.pt")
    torch.manual_seed(3)
    env = VectorEnv(game, num_envs=args.num_envs, copy_obs=False)
    col = RolloutCollector(env, net, pool, gen, args, env_seed(3, 0))
    first = copy.deepcopy(col.collect_rollout())  # its arrays are views of the collector's buffers
    with torch.no_grad():
        for i, p in enumerate(net.parameters()):
            p.add_(0.05 * torch.cos(torch.arange(p.numel(), dtype=p.dtype).reshape(p.shape) + i))
    return [first, copy.deepcopy(col.collect_rollout())], col


def test_rollouts_from_the_bf16_copy_equal_autocast_ones(tmp_path, monkeypatch):
    monkeypatch.setattr(update, "native_bf16", lambda device_type: True)
    fast, col = _two_rollouts(tmp_path / "fast")
    assert col.infer is not None and col.infer is not col.net  # the copy was used ...
    assert {p.dtype for p in col.infer.parameters()} == {torch.bfloat16}
    assert {p.dtype for p in col.net.parameters()} == {torch.float32}  # ... and the learner's weights kept
    for copied, learner in zip(col.infer.parameters(), col.net.parameters()):  # the changed weights, rounded
        assert torch.equal(copied, learner.detach().to(torch.bfloat16))
    monkeypatch.setattr(collector_module, "inference_copy", lambda net, bf16, cache=None: net)  # autocast
    plain, col = _two_rollouts(tmp_path / "plain")
    assert col.infer is col.net
    for i, (a, b) in enumerate(zip(fast, plain)):
        assert a.n == b.n > 0
        for key in ("obs", "mask", "actions", "logprobs", "values", "advantages"):
            np.testing.assert_array_equal(getattr(a, key), getattr(b, key), err_msg=f"rollout {i}: {key}")


def test_inference_copy_is_the_net_itself_without_native_bf16(monkeypatch):
    net = PolicyNet(4, 3, (8,))
    monkeypatch.setattr(update, "native_bf16", lambda device_type: False)
    assert update.inference_copy(net, True) is net
    monkeypatch.setattr(update, "native_bf16", lambda device_type: True)
    assert update.inference_copy(net, False) is net


def test_from_half_gives_a_direct_conversions_bits_for_every_float16():
    x = torch.arange(-(2**15), 2**15, dtype=torch.int32).to(torch.int16).view(torch.float16)  # all 65,536
    nan = torch.isnan(x)
    for dtype in (torch.bfloat16, torch.float32):
        got, want = update.from_half(x, dtype), x.to(dtype)
        assert got.dtype == dtype
        assert torch.isnan(got).eq(nan).all()
        assert torch.equal(got[~nan], want[~nan]) and torch.equal(
            got[~nan].view(torch.int16 if dtype == torch.bfloat16 else torch.int32),
            want[~nan].view(torch.int16 if dtype == torch.bfloat16 else torch.int32),
        )


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_rows_equals_index_select(dtype):
    gen = torch.Generator().manual_seed(5)
    x = torch.randn(300, 37, generator=gen).to(dtype)
    rows = torch.randint(0, 300, (128,), generator=gen)  # repeats included
    got = update.half_rows(x, rows)
    assert got.dtype == dtype and torch.equal(got.view(torch.int16), x.index_select(0, rows).view(torch.int16))
