"""A full disk, a killed writer: nothing a user wrote is lost and nothing half-written is left.

The disk is a tmpfs of a few KB (tests/mounts.py: root mounts it; CI runs
as root) or ``/dev/full``. An append that fails must leave the file ending
where it began; a replacement that fails must leave the old file and no
temporary; the commands must answer with one line naming the flag and the
reason, exit status 2. A writer killed part-way (SIGKILL, or SIGXFSZ in the
middle of ``torch.save``) leaves the old file loadable, and its temporary is
removed by the next write of that file.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from mounts import fill, tmpfs

from bobshat.cli import main
from bobshat_env.paths import AtomicFile, OutputWriteError, append_lines, replace_bytes
from bobshat_env.records import JsonlWriter, read_jsonl, write_jsonl

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="tmpfs, /dev/full and fork are Linux's")

ROOT = Path(__file__).resolve().parents[1]
# records-shaped: eval --records goes only over records (tests/test_same_file_outputs.py)
OLD = [{"game": "bobs_hat", "hands": [], "n": i, "pad": "o" * 300} for i in range(3)]


@pytest.fixture
def disk(tmp_path):
    """A 64 KB tmpfs holding an old records file, then filled but for 4 KB."""
    with tmpfs(tmp_path / "disk", 64) as folder:
        write_jsonl(folder / "old.jsonl", OLD)
        fill(folder, leave=4096)
        yield folder


def _names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


# --------------------------------------------------------------------------
# the writer itself
def test_a_failed_append_leaves_the_file_where_it_began(disk):
    """Issue 24.2: ``play --save`` and the web game save append a record; a full disk must not leave a cut line.
    Fails if append_lines does not cut the file back (the first 4-8 KB of the 20 KB line stay)."""
    path = disk / "old.jsonl"
    before = path.read_bytes()
    with pytest.raises(OutputWriteError, match="No space left on device") as err:
        write_jsonl(path, [{"game": "new", "pad": "n" * 20_000}], append=True)
    assert err.value.errno == errno.ENOSPC and isinstance(err.value, OSError)
    assert path.read_bytes() == before
    assert [r for _, r in read_jsonl(path)] == OLD
    write_jsonl(path, [{"game": "small"}], append=True)  # the disk still takes what fits
    assert [r["game"] for _, r in read_jsonl(path)] == ["bobs_hat"] * 3 + ["small"]


def test_a_failed_append_without_a_final_newline_leaves_the_file_as_it_was(disk):
    """The newline added before the new line goes too: the user's file is byte for byte what it was."""
    path = disk / "edited.jsonl"
    path.write_bytes(b'{"a":1}')
    with pytest.raises(OutputWriteError):
        append_lines(path, [b'{"b":"' + b"x" * 20_000 + b'"}\n'])
    assert path.read_bytes() == b'{"a":1}'


@pytest.mark.parametrize("size", [6_000, 40_000], ids=["fails-at-commit", "fails-in-write"])
def test_a_failed_replacement_keeps_the_old_file_and_no_temporary(disk, size):
    """6 KB stays in the write buffer and fails when it is flushed at the commit (the temporary stayed behind
    when closing the file raised again before the unlink); 40 KB fails in write()."""
    path = disk / "old.jsonl"
    before = path.read_bytes()
    with pytest.raises(OutputWriteError, match="No space left on device"):
        write_jsonl(path, [{"game": "new", "pad": "n" * size}])
    assert path.read_bytes() == before
    assert _names(disk) == ["filler", "old.jsonl"]
    w = JsonlWriter(disk / "new.jsonl")  # streamed as eval --records does: the write fails mid-tournament
    with pytest.raises(OutputWriteError):
        for _ in range(20):
            w.write([{"pad": "n" * 3000}])
        w.commit()
    w.abort()
    assert _names(disk) == ["filler", "old.jsonl"]


def test_dev_full_is_written_directly_and_fails_with_the_reason():
    """/dev/full: a device that is always full. Written in place (never renamed over), and the error says why."""
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this machine")
    with pytest.raises(OutputWriteError, match="cannot write /dev/full: No space left on device"):
        replace_bytes("/dev/full", b"x" * 100_000)
    with pytest.raises(OutputWriteError, match="No space left on device"):
        append_lines("/dev/full", [b"x\n"])
    assert Path("/dev/full").is_char_device()


# --------------------------------------------------------------------------
# the commands: one line, the flag, the reason, exit 2, the old file as it was
CASES = {
    "simulate --records": (["simulate", "--games", "30"], "--records", "g.jsonl"),
    "eval --records": (["eval", "--deals", "3", "--quiet"], "--records", "g.jsonl"),
    "eval --json": (["eval", "--deals", "2", "--quiet"], "--json", "r.json"),
    "eval --plot": (["eval", "--deals", "2", "--quiet"], "--plot", "p.png"),
    "bench --json": (
        ["bench", "--batches", "1", "--reps", "1", "--seconds", "0", "--no-peers", "--quiet"], "--json", "b.json"
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", list(CASES))
def test_commands_on_a_full_disk_answer_one_line_and_keep_the_old_file(tmp_path, capsys, case):
    argv, flag, name = CASES[case]
    with tmpfs(tmp_path / "disk", 64) as folder:
        target = folder / name
        old = b'{"game":"bobs_hat","hands":[],"old":1}\n' if flag == "--records" else b"the user's old file\n"
        target.write_bytes(old)  # records go only over records (tests/test_same_file_outputs.py)
        fill(folder)
        code = main([*argv, flag, str(target)])
        err = capsys.readouterr().err
        assert code == 2, err
        assert err.count("\n") == 1 and "Traceback" not in err, err
        assert f"error: {flag}: cannot write {target}: No space left on device" in err, err
        assert target.read_bytes() == old
        assert _names(folder) == sorted(["filler", name])


def test_simulate_to_dev_full_names_the_flag(capsys):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this machine")
    assert main(["simulate", "--games", "20", "--records", "/dev/full"]) == 2
    err = capsys.readouterr().err
    assert err == "bobshat simulate: error: --records: cannot write /dev/full: No space left on device\n"


# --------------------------------------------------------------------------
# killed writers
def _fork(child) -> int:
    """Run ``child()`` in a forked process; its wait status."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            child()
        finally:
            os._exit(0)
    return os.waitpid(pid, 0)[1]


def test_a_killed_records_writer_leaves_a_temporary_that_the_next_run_removes(tmp_path, capsys):
    """Issue 24.3: SIGKILL in the middle of ``eval --records`` leaves a hidden temporary (349 MB in the report);
    the next write of that file removes it, not a temporary whose writer still runs. Fails if the temporary's
    name does not carry its writer's pid or AtomicFile does not clean stale ones."""
    path = tmp_path / "games.jsonl"
    write_jsonl(path, OLD)

    def killed_mid_write() -> None:
        w = JsonlWriter(path)
        w.write([{"pad": "k" * 50_000}])  # past the write buffer: on disk
        os.kill(os.getpid(), signal.SIGKILL)

    status = _fork(killed_mid_write)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    stale = [p for p in tmp_path.iterdir() if p.name != "games.jsonl"]
    assert len(stale) == 1 and stale[0].name.startswith(".games.jsonl.") and stale[0].stat().st_size >= 50_000
    assert [r for _, r in read_jsonl(path)] == OLD  # the user's file as it was
    live = tmp_path / f".games.jsonl.abcdefgh.tmp{os.getppid()}"  # a writer that is still running
    other = tmp_path / f".other.jsonl.abcdefgh.tmp{stale[0].name.rpartition('.tmp')[2]}"  # another file's
    live.write_bytes(b"x")
    other.write_bytes(b"x")
    assert main(["eval", "--deals", "2", "--quiet", "--records", str(path)]) == 0
    capsys.readouterr()
    assert _names(tmp_path) == sorted(["games.jsonl", live.name, other.name])
    assert len(list(read_jsonl(path))) == 2  # 2 deals, one seating (the agents are alike)


_SAVE = """
import resource, signal, sys, torch
from agents.checkpoint import save_checkpoint
from agents.ppo_agent import PolicyNet
step, limit = int(sys.argv[2]), int(sys.argv[3])
torch.manual_seed(step)
net = PolicyNet(64, 8, (256, 256))
meta = {"game": "bobs_hat", "players": 4, "obs_size": 64, "n_actions": 8, "hidden": [256, 256], "global_step": step}
if limit:
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)  # Python ignores it; by default it kills the process
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))  # no file may grow past this: killed part-way
save_checkpoint(sys.argv[1], {f"policy.{k}": v for k, v in net.state_dict().items()}, meta)
"""


def _tensors(step: int) -> tuple[dict, dict]:
    """What the script above saves, built here."""
    import torch

    from agents.ppo_agent import PolicyNet

    torch.manual_seed(step)
    net = PolicyNet(64, 8, (256, 256))
    meta = {"game": "bobs_hat", "players": 4, "obs_size": 64, "n_actions": 8, "hidden": [256, 256], "global_step": step}
    return {f"policy.{k}": v for k, v in net.state_dict().items()}, meta


def _save_in_a_process(path: Path, step: int, limit: int = 0) -> int:
    """Save a checkpoint (a fresh process: torch after fork can deadlock); its exit status."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    cmd = [sys.executable, "-c", _SAVE, str(path), str(step), str(limit)]
    return subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, timeout=300).returncode


def test_a_kill_in_the_middle_of_a_checkpoint_save_leaves_the_old_one_loadable(tmp_path):
    """Issue 25: a process writing a checkpoint is killed (SIGXFSZ, by a file size limit) once it has written
    half of it. The old checkpoint must load, whole and checked; the next save removes the dead temporary.
    Fails with ``torch.save(blob, path)`` to the real path (the old test made torch.save raise before writing)."""
    from agents.checkpoint import load_checkpoint, save_checkpoint

    path = tmp_path / "ckpt.pt"
    save_checkpoint(path, *_tensors(1))
    size = path.stat().st_size
    assert size > 200_000
    assert _save_in_a_process(path, 2, limit=size // 2) == -signal.SIGXFSZ  # killed part-way
    tensors, meta = load_checkpoint(path)  # the checksum is checked on load
    assert meta["global_step"] == 1 and path.stat().st_size == size
    assert json.loads(path.with_name("ckpt.pt.json").read_text())["global_step"] >= 1
    assert any(p.name.startswith(".ckpt.pt.") for p in tmp_path.iterdir())  # the killed write's temporary
    save_checkpoint(path, *_tensors(3))
    assert load_checkpoint(path)[1]["global_step"] == 3
    assert _names(tmp_path) == ["ckpt.pt", "ckpt.pt.json"]


def test_atomic_file_removes_only_dead_writers_temporaries_of_its_own_target(tmp_path):
    pid = os.fork()  # a process that has ended: its pid is free
    if pid == 0:  # pragma: no cover
        os._exit(0)
    os.waitpid(pid, 0)
    mine = [tmp_path / f".out.txt.abcd1234.tmp{pid}", tmp_path / f".out.txt.tmp{pid}"]
    keep = [
        tmp_path / f".out.txt.abcd1234.tmp{os.getppid()}",  # its writer runs
        tmp_path / f".out.txt.x.abcd1234.tmp{pid}",  # another file's (out.txt.x)
        tmp_path / f"out.txt.abcd1234.tmp{pid}",  # not hidden: not ours
    ]
    for p in (*mine, *keep):
        p.write_bytes(b"x")
    with AtomicFile(tmp_path / "out.txt") as f:
        f.write(b"new")
    assert _names(tmp_path) == sorted(["out.txt", *(p.name for p in keep)])
