"""``bobshat average`` (train/average.py): the weighted mean of policies' weights, and what it refuses."""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path

import numpy as np
import pytest
import torch

from agents import make_agent
from agents.arena import play_games
from agents.checkpoint import POLICY_PREFIX, load_checkpoint, net_meta, save_checkpoint
from agents.features import TrickFeatures
from agents.ppo_agent import PolicyNet, load_policy
from bobshat.cli import main
from bobshat_env.core.symmetry import trump_canonical
from bobshat_env.games import make_game
from train.average import AverageError, average_checkpoints, parse_weights

GAME = make_game("bobs_hat", players=4, hands=2)


def _policy(
    path: Path, seed: int, game=GAME, hidden=(16,), symmetry: bool = True, features: bool = True, **meta_changes
) -> Path:
    """A policy checkpoint as training writes it (symmetry and feature tables with the weights)."""
    torch.manual_seed(seed)
    sym = trump_canonical(game.name, game.config) if symmetry else None
    feats = TrickFeatures.for_game(game.name, game.config) if features else None
    net = PolicyNet(game.obs_size(), game.n_actions, hidden, sym, feats)
    meta = {**net_meta(game, net), "run_name": f"run{seed}", "global_step": 1000 * seed, **meta_changes}
    save_checkpoint(path, {POLICY_PREFIX + k: v for k, v in net.state_dict().items()}, meta)
    return path


def _params(path: Path) -> dict[str, torch.Tensor]:
    net, _ = load_policy(path)
    return {k: v.detach().clone() for k, v in net.named_parameters()}


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_the_output_is_the_weighted_mean_of_the_parameters_and_keeps_the_tables(tmp_path, capsys):
    a, b = _policy(tmp_path / "a.pt", 1), _policy(tmp_path / "b.pt", 2)
    out = tmp_path / "avg.pt"
    code, text, err = run(["average", str(a), str(b), "--weights", "1,3", "--out", str(out)], capsys)
    assert code == 0, err
    pa, pb, po = _params(a), _params(b), _params(out)
    assert sorted(po) == sorted(pa) and len(po) >= 4  # every layer's weight and bias
    for k in po:
        torch.testing.assert_close(po[k], 0.25 * pa[k] + 0.75 * pb[k], rtol=0, atol=1e-6)
        if not torch.equal(pa[k], pb[k]):  # (biases start at zero in both)
            assert not torch.equal(po[k], pa[k]) and not torch.equal(po[k], pb[k])
    ta, _ = load_checkpoint(a)
    to, meta = load_checkpoint(out)
    tables = [k for k in ta if "sym_" in k or "features." in k]
    assert tables and all(torch.equal(to[k], ta[k]) for k in tables)  # copied, not averaged
    assert meta["game"] == "bobs_hat" and meta["hidden"] == [16] and meta["config"] == GAME.config.to_dict()
    sources = meta["averaged_from"]
    assert [s["file"] for s in sources] == ["a.pt", "b.pt"]  # the name, not the folder of this machine
    assert [s["weight"] for s in sources] == [0.25, 0.75]
    assert [s["global_step"] for s in sources] == [1000, 2000] and all(len(s["sha256"]) == 64 for s in sources)
    assert json.loads((tmp_path / "avg.pt.json").read_text())["sha256"] == meta["sha256"]
    assert "0.2500  a.pt (run1, 1,000 table decisions)" in text and f"ppo:{out}" in text


def test_the_average_plays_as_an_ordinary_policy_and_a_policy_averaged_with_itself_plays_as_it(tmp_path, capsys):
    a = _policy(tmp_path / "a.pt", 1)
    self_avg, mixed = tmp_path / "self.pt", tmp_path / "mixed.pt"
    assert run(["average", str(a), str(a), str(a), "--out", str(self_avg)], capsys)[0] == 0
    assert run(["average", str(a), str(_policy(tmp_path / "b.pt", 2)), "--out", str(mixed)], capsys)[0] == 0
    for k, v in _params(self_avg).items():
        torch.testing.assert_close(v, _params(a)[k], rtol=0, atol=1e-7)

    def totals(path):
        agents = [make_agent(f"ppo:{path}", GAME, seed=0)] + [make_agent("random", GAME, seed=i) for i in (1, 2, 3)]
        return play_games(GAME, agents, n_games=8, seed=3).totals  # every action checked legal by the core

    assert np.array_equal(totals(self_avg), totals(a))
    assert not np.array_equal(totals(mixed), totals(a))  # the mean of two others is a third policy


@pytest.mark.parametrize(
    "case, message",
    [
        ("hidden", r"hidden is \[8\], not \[16\]"),
        ("players", "players is 3, not 4"),
        ("options", "config is"),
        ("table", "features.hat table differs"),
        ("symmetry", "symmetry is None, not 'trump'"),  # without the check: averaged, tables dropped
        ("symmetry-first", "symmetry is 'trump', not None"),  # without the check: a KeyError traceback
        ("features", "features is None, not 'trick'"),
    ],
)
def test_policies_of_another_table_or_network_are_refused_and_nothing_is_written(tmp_path, capsys, case, message):
    a = _policy(tmp_path / "a.pt", 1, symmetry=case != "symmetry-first")
    if case == "hidden":
        b = _policy(tmp_path / "b.pt", 2, hidden=(8,))
    elif case == "players":
        b = _policy(tmp_path / "b.pt", 2, game=make_game("bobs_hat", players=3, hands=2))
    elif case == "options":
        b = _policy(tmp_path / "b.pt", 2, game=make_game("bobs_hat", players=4, hands=2, negative_scoring=True))
    elif case in ("symmetry", "features"):
        b = _policy(tmp_path / "b.pt", 2, **{case: False})
    elif case == "symmetry-first":
        b = _policy(tmp_path / "b.pt", 2)
    else:  # the same shapes, another feature table: a file from another build of the features
        tensors, meta = load_checkpoint(_policy(tmp_path / "b.pt", 2))
        tensors[POLICY_PREFIX + "features.hat"] = ~tensors[POLICY_PREFIX + "features.hat"]
        meta = {k: v for k, v in meta.items() if k not in ("sha256", "format", "version")}
        save_checkpoint(tmp_path / "b.pt", tensors, meta)
        b = tmp_path / "b.pt"
    out = tmp_path / "avg.pt"
    code, _, err = run(["average", str(a), str(b), "--out", str(out)], capsys)
    assert code == 2 and "Traceback" not in err
    assert err.startswith("bobshat average: error: ") and str(b) in err, err
    assert re.search(message, err), err
    assert not out.exists() and not (tmp_path / "avg.pt.json").exists()


@pytest.mark.parametrize(
    "weights, message",
    [
        ("1", "1 weight(s) for 2 checkpoints"),
        ("1,-1", "positive finite number, got -1"),
        ("1,nan", "got nan"),
        ("1,inf", "got inf"),
        ("1,0", "got 0"),
        ("one,two", "not a list of numbers"),
    ],
)
def test_bad_weights_are_refused_before_anything_is_read(tmp_path, capsys, weights, message):
    a, b = _policy(tmp_path / "a.pt", 1), _policy(tmp_path / "b.pt", 2)
    code, _, err = run(["average", str(a), str(b), "--weights", weights, "--out", str(tmp_path / "o.pt")], capsys)
    assert code == 2 and "--weights: " in err and message in err, err
    assert not (tmp_path / "o.pt").exists()


def test_parse_weights_normalizes():
    assert parse_weights(None, 4) == [0.25] * 4
    assert parse_weights("1, 1, 2", 3) == [0.25, 0.25, 0.5]
    assert parse_weights("1e308,1e308", 2) == [0.5, 0.5]  # not inf / inf: a sum that overflowed gave zeros
    assert parse_weights("1e-300,3e-300", 2) == [0.25, 0.75]
    with pytest.raises(AverageError, match="give 2 to 64 checkpoints"):
        average_checkpoints(["only.pt"])


def test_the_output_is_never_one_of_the_inputs(tmp_path, capsys):
    """``--out`` naming an input (or, through a link, its file) is refused: nothing a user trained is lost."""
    a, b = _policy(tmp_path / "a.pt", 1), _policy(tmp_path / "b.pt", 2)
    before = a.read_bytes()
    os.symlink(a, tmp_path / "link.pt")
    for out in (a, tmp_path / "link.pt"):
        code, _, err = run(["average", str(a), str(b), "--out", str(out)], capsys)
        assert code == 2 and "--out is the same file as CKPT (" in err, err
    assert a.read_bytes() == before


def test_missing_corrupt_or_unwritable_files_are_one_line_errors(tmp_path, capsys):
    a = _policy(tmp_path / "a.pt", 1)
    damaged = tmp_path / "damaged.pt"
    data = bytearray(a.read_bytes())
    data[len(data) // 2] ^= 0xFF
    damaged.write_bytes(bytes(data))
    os.mkfifo(tmp_path / "fifo.pt")
    cases = [
        ([str(a), str(tmp_path / "missing.pt")], tmp_path / "o.pt", "missing.pt"),
        ([str(a), str(damaged)], tmp_path / "o.pt", "damaged.pt"),
        ([str(a), str(a)], tmp_path / "fifo.pt", "not a regular file"),
        ([str(a), str(a)], tmp_path / "no" / "folder.pt", "--out"),
    ]
    fifo = tmp_path / "fifo.pt"  # a reader drains it, so that a run writing into it fails here instead of hanging
    reader = threading.Thread(target=fifo.read_bytes, daemon=True)
    reader.start()
    try:
        for inputs, out, message in cases:
            code, _, err = run(["average", *inputs, "--out", str(out)], capsys)
            lines = err.strip().splitlines()
            assert code == 2 and len(lines) == 1 and message in lines[0], err
    finally:
        if reader.is_alive():
            os.close(os.open(fifo, os.O_WRONLY))  # let the reader's open return
        reader.join(timeout=10)
    assert not (tmp_path / "o.pt").exists()


def test_a_training_checkpoint_gives_its_policy(tmp_path, capsys):
    """``ckpt.pt`` holds the optimizer and the pool beside the policy: only the policy is averaged and written."""
    a = _policy(tmp_path / "a.pt", 1)
    tensors, meta = load_checkpoint(_policy(tmp_path / "b.pt", 2))
    tensors["optim.0.exp_avg"] = torch.ones(3)
    tensors["pool.0.trunk.0.bias"] = torch.zeros(16)
    meta = {k: v for k, v in meta.items() if k not in ("sha256", "format", "version")}
    save_checkpoint(tmp_path / "ckpt.pt", tensors, meta)
    out = tmp_path / "avg.pt"
    assert run(["average", str(a), str(tmp_path / "ckpt.pt"), "--out", str(out)], capsys)[0] == 0
    written, _ = load_checkpoint(out)
    assert written and all(k.startswith(POLICY_PREFIX) for k in written)


def test_a_full_disk_is_a_one_line_error_naming_out_and_keeps_what_was_there(tmp_path, capsys):
    """The mean does not fit a 64 KB disk: one line naming --out, exit status 2; a checkpoint already at --out
    and its sidecar stay as they were (the write is all or nothing), and no temporary is left."""
    from tests.mounts import tmpfs

    a, b = _policy(tmp_path / "a.pt", 1, hidden=(64, 64)), _policy(tmp_path / "b.pt", 2, hidden=(64, 64))
    with tmpfs(tmp_path / "full", size_kb=64) as full:
        old = _policy(full / "avg.pt", 3, hidden=(4,))  # a small older checkpoint the full disk holds
        before = {p.name: p.read_bytes() for p in full.iterdir()}
        code, _, err = run(["average", str(a), str(b), "--out", str(old)], capsys)
        after = {p.name: p.read_bytes() for p in full.iterdir()}
    lines = err.strip().splitlines()
    assert code == 2 and "Traceback" not in err, err
    assert len(lines) == 1 and lines[0].startswith("bobshat average: error: --out: ") and "No space" in lines[0]
    assert after == before and sorted(before) == ["avg.pt", "avg.pt.json"]


def test_the_library_normalizes_the_weights_and_refuses_a_wrong_count(tmp_path):
    """``average_checkpoints`` called directly (not through ``--weights``) with weights that do not sum to 1:
    the result is still a weighted mean (1,3 is 1/4 and 3/4), not a sum 4 times too large; a list of the
    wrong length is refused, not cut to the shorter of the two."""
    a, b = _policy(tmp_path / "a.pt", 1), _policy(tmp_path / "b.pt", 2)
    tensors, meta = average_checkpoints([a, b], [1, 3])
    pa, pb = _params(a), _params(b)
    for k in pa:
        torch.testing.assert_close(tensors[POLICY_PREFIX + k], 0.25 * pa[k] + 0.75 * pb[k], rtol=0, atol=1e-6)
    assert [s["weight"] for s in meta["averaged_from"]] == [0.25, 0.75]
    for weights in ([1.0], [1.0, 1.0, 1.0]):
        with pytest.raises(AverageError, match="weights must be 2 positive finite numbers"):
            average_checkpoints([a, b], weights)


def test_the_output_keeps_the_inputs_dtypes(tmp_path, capsys):
    """The mean is taken in float64 but written in the inputs' dtype (float32): a float64 file would be twice
    the size, and a network loaded from it another than the one trained on."""
    a, b = _policy(tmp_path / "a.pt", 1), _policy(tmp_path / "b.pt", 2)
    out = tmp_path / "avg.pt"
    assert run(["average", str(a), str(b), "--out", str(out)], capsys)[0] == 0
    ta, _ = load_checkpoint(a)
    to, _ = load_checkpoint(out)
    assert {k: v.dtype for k, v in to.items()} == {k: v.dtype for k, v in ta.items()}
    assert any(v.dtype == torch.float32 for v in to.values())


_SIGTERM_WHILE_WRITING = """
import os, signal, sys, torch
def killed_part_way(obj, f, *args, **kwargs):
    f.write(b"PK\\x03\\x04 half a checkpoint")
    os.kill(os.getpid(), signal.SIGTERM)  # a real SIGTERM, as from `kill` or a job scheduler
    raise AssertionError("still running after SIGTERM")
torch.save = killed_part_way
from bobshat.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_sigterm_while_the_output_is_written_exits_143_and_leaves_the_old_pair(tmp_path):
    """A real SIGTERM to ``bobshat average`` while its checkpoint goes to disk (the sidecar already written):
    exit status 143 through the cleanup, the checkpoint already at --out and its sidecar as they were, and no
    temporary. Without the handler, Python's default ends the process on the spot (-15): the new sidecar
    beside the old checkpoint, and the temporary left."""
    import subprocess
    import sys

    a, b = _policy(tmp_path / "a.pt", 1), _policy(tmp_path / "b.pt", 2)
    folder = tmp_path / "out"
    folder.mkdir()
    out = _policy(folder / "avg.pt", 3)
    old = {p.name: p.read_bytes() for p in folder.iterdir()}
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    argv = [sys.executable, "-c", _SIGTERM_WHILE_WRITING, "average", str(a), str(b), "--out", str(out)]
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 143, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == old
