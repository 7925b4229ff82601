"""Checkpoints refuse damage: a checksum over tensors and metadata, checked field types and ranges, shapes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from agents import make_agent
from agents.checkpoint import (
    CHECKSUM_KEY,
    META_KEY,
    CheckpointError,
    checkpoint_digest,
    load_checkpoint,
    save_checkpoint,
)
from agents.ppo_agent import PolicyNet, load_policy
from bobshat_env.games import make_game

ROOT = Path(__file__).resolve().parents[1]


def _policy_file(tmp_path: Path, name: str = "p.pt", **meta_changes) -> tuple[Path, dict]:
    game = make_game("bobs_hat", players=4)
    torch.manual_seed(0)
    net = PolicyNet(game.obs_size(), game.n_actions, (16,))
    meta = {"game": "bobs_hat", "players": 4, "obs_size": net.obs_size, "n_actions": net.n_actions, "hidden": [16]}
    meta.update(meta_changes)
    path = tmp_path / name
    tensors = {f"policy.{k}": v for k, v in net.state_dict().items()}
    save_checkpoint(path, tensors, meta)
    return path, tensors


def test_a_flipped_byte_in_a_weight_or_the_metadata_is_refused_naming_the_file(tmp_path):
    path, tensors = _policy_file(tmp_path)
    _, meta = load_checkpoint(path)
    assert len(meta[CHECKSUM_KEY]) == 64
    data = path.read_bytes()
    weight = tensors["policy.trunk.0.weight"].numpy().tobytes()  # torch.save stores tensor bytes as they are
    at = data.index(weight[:64]) + 1000
    flipped = bytearray(data)
    flipped[at] ^= 0x10
    path.write_bytes(bytes(flipped))
    assert torch.load(path, weights_only=True)  # torch itself reads it without complaint
    with pytest.raises(CheckpointError, match=rf"{path.name}.*is corrupt.*checksum"):
        load_checkpoint(path)
    with pytest.raises(CheckpointError, match="is corrupt"):
        make_agent(f"ppo:{path}", make_game("bobs_hat", players=4))

    path.write_bytes(data.replace(b'"hidden": [\n  16\n ]', b'"hidden": [\n  17\n ]'))  # metadata edited
    assert path.read_bytes() != data
    with pytest.raises(CheckpointError, match="is corrupt"):
        load_checkpoint(path)


def test_checkpoints_without_a_checksum_still_load(tmp_path):
    path, tensors = _policy_file(tmp_path)
    blob = torch.load(path, weights_only=True)
    meta = json.loads(bytes(blob.pop(META_KEY).numpy()).decode())
    del meta[CHECKSUM_KEY]
    text = json.dumps(meta).encode()
    blob[META_KEY] = torch.frombuffer(bytearray(text), dtype=torch.uint8)
    old = tmp_path / "old.pt"
    torch.save(blob, old)
    net, meta = load_policy(old, make_game("bobs_hat", players=4))
    assert CHECKSUM_KEY not in meta and torch.equal(net.trunk[0].weight, tensors["policy.trunk.0.weight"])


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "checkpoints").glob("*.pt")))
def test_shipped_checkpoints_carry_a_checksum_that_matches(name):
    path = ROOT / "checkpoints" / name
    tensors, meta = load_checkpoint(path)  # verifies the checksum
    assert meta[CHECKSUM_KEY] == checkpoint_digest(tensors, meta)
    sidecar = json.loads(path.with_name(name + ".json").read_text())
    assert sidecar == meta  # the readable copy says what the file holds


@pytest.mark.parametrize(
    "field, value",
    [
        ("obs_size", -5),
        ("obs_size", 10**12),
        ("obs_size", "442"),
        ("n_actions", 0),
        ("hidden", [16, -1]),
        ("hidden", "big"),
        ("players", True),
        ("global_step", -1),
        ("elapsed_s", "soon"),
    ],
)
def test_tampered_metadata_is_an_error_naming_the_file_and_field(tmp_path, field, value):
    # written with a valid checksum (as by someone editing the file and fixing it up): the field checks catch it
    path, _ = _policy_file(tmp_path, **{field: value})
    with pytest.raises(CheckpointError, match=rf"{path.name}.*{field} must be"):
        load_policy(path, make_game("bobs_hat", players=4))


def test_metadata_that_does_not_fit_the_tensors_is_refused_before_building_the_network(tmp_path):
    # a size in range but not the file's: refused by shape, not by allocating a 1,000,000 x 16 layer first
    path, _ = _policy_file(tmp_path, obs_size=1_000_000)
    with pytest.raises(CheckpointError, match=r"p\.pt.*trunk\.0\.weight of shape \(16, 1000000\)"):
        load_policy(path)
    path, _ = _policy_file(tmp_path, hidden=[32])
    with pytest.raises(CheckpointError, match=r"hidden \[32\].*shape \(32, 442\), the file has \(16, 442\)"):
        load_policy(path)


@pytest.mark.parametrize(
    "change, part",
    [
        ({"rng_numpy": {"bit_generator": "PCG64", "state": "lost"}}, "numpy RNG state"),
        ({"optim_param_groups": [{"lr": 0.1}]}, "optimizer state"),
        ({"pool": {"members": [{"kind": "snapshot"}]}}, "opponent pool"),
        ({"iteration": -3}, "iteration must be"),
    ],
)
def test_resuming_from_a_tampered_training_state_names_the_file_and_part(tmp_path, capsys, change, part):
    from bobshat.cli import main

    smoke = str(ROOT / "configs" / "smoke.yaml")
    argv = ["train", "--config", smoke, "--runs-dir", str(tmp_path), "--total-decisions", "256"]
    assert main(argv) == 0
    capsys.readouterr()
    ckpt = next(tmp_path.glob("*/ckpt.pt"))
    tensors, meta = load_checkpoint(ckpt)
    save_checkpoint(ckpt, tensors, {**meta, **change})  # a valid checksum: only the field checks can catch it
    assert main([*argv[:-1], "512", "--resume"]) == 2
    err = capsys.readouterr().err
    assert "ckpt.pt" in err and part in err and "Traceback" not in err, err
