"""Loading a checkpoint runs no code (README: "read with torch.load(weights_only=True), so loading runs no code").

A checkpoint is a pickle, and a pickle can name any callable to rebuild an
object. The files here carry a payload that creates a file when unpickled
(``builtins.open(path, "w")``); every way bobshat reads a checkpoint must
refuse them with a clear error, and the file must never appear.
"""

from __future__ import annotations

import builtins
import pickle
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from agents import make_agent  # noqa: E402
from agents.checkpoint import (  # noqa: E402
    CheckpointError,
    load_checkpoint,
    load_training_state,
)
from bobshat.cli import main  # noqa: E402
from bobshat_env.games import make_game  # noqa: E402


class WritesAFile:
    """Unpickles as ``open(target, "w")``: creating ``target`` is the proof that code ran."""

    def __init__(self, target: Path) -> None:
        self.target = str(target)

    def __reduce__(self):
        return (builtins.open, (self.target, "w"))


def _torch_file(path: Path, target: Path) -> Path:
    """A torch.save zip file: a checkpoint-shaped dict with the payload among real tensors."""
    torch.save({"policy.trunk.0.weight": torch.zeros(2, 2), "__meta__": WritesAFile(target)}, path)
    return path


def _pickle_file(path: Path, target: Path) -> Path:
    """A bare (pre-zip, legacy) pickle stream."""
    with open(path, "wb") as f:
        pickle.dump({"__meta__": WritesAFile(target)}, f, protocol=2)
    return path


MAKERS = [_torch_file, _pickle_file]


@pytest.mark.parametrize("make", MAKERS, ids=["torch_zip", "bare_pickle"])
def test_the_payload_is_live(make, tmp_path):
    """Unpickled without weights_only, these files do write: so the tests below can fail. (torch
    unpickles a bare stream's first object before it checks the format, and only then fails.)"""
    target = tmp_path / "pwned"
    path = make(tmp_path / "evil.pt", target)
    try:
        torch.load(path, weights_only=False)
    except RuntimeError as err:
        assert "magic number" in str(err)
    assert target.exists()


@pytest.mark.parametrize("make", MAKERS, ids=["torch_zip", "bare_pickle"])
def test_a_checkpoint_that_would_run_code_is_refused(make, tmp_path, capsys):
    target = tmp_path / "pwned"
    path = make(tmp_path / "evil.pt", target)
    game = make_game("bobs_hat", players=4)
    errors = []
    for read in (
        lambda: load_checkpoint(path),
        lambda: make_agent(f"ppo:{path}", game),
        lambda: load_training_state(path, None, None, None, lambda meta: None),  # what --resume reads
    ):
        with pytest.raises(CheckpointError) as err:
            read()
        errors.append(str(err.value))
    code = main(["eval", "--agents", f"ppo:{path},random,random,random", "--deals", "1", "--quiet"])
    assert not target.exists(), "loading the checkpoint ran its code"
    assert code == 2
    errors.append(capsys.readouterr().err)
    for text in errors:
        assert f"{str(path)!r} is not a readable bobshat checkpoint" in text, text
