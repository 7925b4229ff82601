"""Devices (agents/ppo_agent.py): resolving cpu/cuda/auto, checkpoints across devices, device-safe inference.

This machine has no GPU, so what runs here is the CPU path and the
cross-device logic: a checkpoint whose tensors were saved from a CUDA device
loads on a CPU-only torch, asking for CUDA where there is none is a clear
error, and the CPU path's decisions are those of a plain CPU network.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents import make_agent
from agents.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from agents.features import TrickFeatures
from agents.ppo_agent import PolicyNet, PPOAgent, load_policy, resolve_device, sample_actions
from bobshat_env.core.symmetry import trump_canonical
from bobshat_env.games import make_game
from bobshat_env.vector import VectorEnv


def _net(game) -> PolicyNet:
    torch.manual_seed(0)
    sym = trump_canonical(game.name, game.config)
    return PolicyNet(game.obs_size(), game.n_actions, (32, 32), sym, TrickFeatures.for_game(game.name, game.config))


def _meta(game, net) -> dict:
    return {
        "game": game.name,
        "players": game.players,
        "config": game.config.to_dict(),
        "view": "private",
        "obs_size": net.obs_size,
        "n_actions": net.n_actions,
        "hidden": list(net.hidden),
    }


def test_resolve_device() -> None:
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device(torch.device("cpu")) == torch.device("cpu")
    want = "cuda" if torch.cuda.is_available() else "cpu"
    assert resolve_device("auto").type == want
    with pytest.raises(ValueError, match="device must be one of auto, cpu, cuda"):
        resolve_device("gpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match=r"device 'cuda' asked for, but CUDA is not available"):
            resolve_device("cuda")
        with pytest.raises(ValueError, match="CUDA is not available"):
            resolve_device("cuda:1")


def test_checkpoint_saved_on_cuda_loads_on_cpu(tmp_path, monkeypatch) -> None:
    """A file whose tensors are tagged ``cuda:0`` (as a CUDA learner's torch.save writes them) loads here.

    The tag is what torch.load maps: without ``map_location`` a CPU-only
    torch refuses such a file, which is the failure this guards against.
    """
    game = make_game("bobs_hat", players=4)
    net = _net(game)
    path = tmp_path / "gpu.pt"
    monkeypatch.setattr(torch.serialization, "location_tag", lambda storage: "cuda:0")
    save_checkpoint(path, {f"policy.{k}": v for k, v in net.state_dict().items()}, _meta(game, net))
    monkeypatch.undo()
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="CUDA"):
            torch.load(path, weights_only=True)  # what a loader without map_location would do
    tensors, _meta_read = load_checkpoint(path)
    assert all(t.device.type == "cpu" for t in tensors.values())
    loaded, _ = load_policy(path, game)
    assert loaded.device.type == "cpu"
    for k, v in net.state_dict().items():
        assert torch.equal(loaded.state_dict()[k], v), k


def test_ppo_spec_device_option(tmp_path) -> None:
    game = make_game("bobs_hat", players=4)
    net = _net(game)
    path = tmp_path / "p.pt"
    save_checkpoint(path, {f"policy.{k}": v for k, v in net.state_dict().items()}, _meta(game, net))
    agent = make_agent(f"ppo:{path},device=cpu", game)
    assert agent.net.device.type == "cpu"
    assert make_agent(f"ppo:{path},device=auto", game).net.device.type == resolve_device("auto").type
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available"):
            make_agent(f"ppo:{path},device=cuda", game)
    with pytest.raises(ValueError, match="known: sample, device"):
        make_agent(f"ppo:{path},colour=red", game)
    with pytest.raises((CheckpointError, FileNotFoundError)):
        make_agent(f"ppo:{tmp_path / 'missing.pt'},device=cpu", game)


def test_device_safe_inference_matches_the_plain_cpu_computation() -> None:
    """The device-safe agent path (inputs moved to the net, actions back) decides as the bare network does."""
    game = make_game("bobs_hat", players=4)
    net = _net(game).eval()
    venv = VectorEnv(game, num_envs=64)
    ts = venv.reset(seed=2)
    agent = PPOAgent(net, sample=False)
    for _ in range(30):
        got = agent.act(ts.obs, ts.action_mask, ts.seat)
        with torch.no_grad():
            logits = net(torch.from_numpy(ts.obs))[0]
        logits = torch.where(torch.from_numpy(ts.action_mask), logits, torch.tensor(-1e9))
        np.testing.assert_array_equal(got, logits.argmax(dim=1).numpy())
        ts = venv.step(got)


def test_sampling_noise_is_drawn_on_the_cpu() -> None:
    """The Gumbel noise comes from the CPU generator, so a seeded draw is the same whatever the logits' device."""
    logits = torch.zeros(5, 7)
    a = sample_actions(logits, torch.Generator().manual_seed(3))
    u = torch.rand((5, 7), generator=torch.Generator().manual_seed(3)).clamp_(1e-10, 1.0 - 1e-7)
    assert torch.equal(a, torch.argmax(-torch.log(-torch.log(u)), dim=-1))
