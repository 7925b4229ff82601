"""The read-only checks of tests/test_play.py and tests/test_train.py, in a form root honours.

Those tests make a folder read-only with chmod and skip as root (root writes there anyway), so CI, which
runs as root, never ran them. Here the folder is a tmpfs remounted read-only (tests/mounts.py), which
refuses root too; as another user the chmod tests run and these skip (or fail under BOBSHAT_CI=1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mounts import is_root, remount_read_only, skip_or_fail, tmpfs

from bobshat.cli import main
from bobshat.terminal import TerminalGame
from bobshat_env.games import make_game

ROOT = Path(__file__).resolve().parents[1]
SMOKE = str(ROOT / "configs" / "smoke.yaml")


@pytest.fixture
def read_only_tmpfs(tmp_path):
    """A tmpfs to fill, then ``make_read_only()`` to remount it read-only."""
    if not is_root():
        skip_or_fail("the chmod variant in test_play/test_train runs for this user; this one needs root")
    with tmpfs(tmp_path / "fs", 16 * 1024) as folder:
        yield folder


def test_play_save_on_a_read_only_file_system_is_refused_before_the_first_deal(read_only_tmpfs):
    (read_only_tmpfs / "old.jsonl").write_text("")
    remount_read_only(read_only_tmpfs)
    game = make_game("bobs_hat", players=3, hands=1)
    for name in ("g.jsonl", "old.jsonl"):  # a new file and an old one (its own check: test_paths, a ro bind mount)
        with pytest.raises(ValueError, match="--save: cannot write .*Read-only file system"):
            TerminalGame(game, 0, ["random"], save=str(read_only_tmpfs / name))


def test_resume_into_a_read_only_run_folder(read_only_tmpfs, capsys):
    rc = main(["train", "--config", SMOKE, "--runs-dir", str(read_only_tmpfs), "--total-decisions", "256"])
    out = capsys.readouterr()
    assert rc == 0, out.err
    run = Path(json.loads(out.out.strip().splitlines()[-1])["run_dir"])
    before = (run / "ckpt.pt").read_bytes()
    remount_read_only(read_only_tmpfs)
    rc = main(["train", "--config", SMOKE, "--runs-dir", str(read_only_tmpfs), "--total-decisions", "512", "--resume"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert f"run folder: cannot write {run / 'ckpt.pt'}: Read-only file system" in err
    assert (run / "ckpt.pt").read_bytes() == before
