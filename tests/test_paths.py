"""Output files (bobshat_env/paths.py, records.write_jsonl): checked up front, appended and replaced atomically."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import stat
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from mounts import is_root, read_only_file, remount_read_only, skip_or_fail, tmpfs

from agents import register
from bobshat_env.games import make_game
from bobshat_env.paths import (
    PLOT_FORMATS,
    AtomicFile,
    OutputPathError,
    append_lines,
    check_writable,
    replace_bytes,
)
from bobshat_env.records import JsonlWriter, read_jsonl, write_jsonl

WRITERS, CALLS, BATCH = 4, 60, 3


def _record(w: int, i: int) -> dict:
    """A record big enough (5-24 KB) that an unlocked buffered append is written in several pieces."""
    pad = "x" * (5000 + 997 * ((w * 31 + i) % 20))
    return {"writer": w, "n": i, "len": len(pad), "pad": pad}


def _append_many(path: str, w: int, barrier) -> None:
    barrier.wait()  # every writer starts at the same moment
    for c in range(CALLS):  # one call appends a batch of records (a tournament chunk, a session's games)
        write_jsonl(path, [_record(w, c * BATCH + k) for k in range(BATCH)], append=True)


def _replace_many(path: str, w: int, barrier) -> None:
    barrier.wait()
    for i in range(20):
        write_jsonl(path, [_record(w, k) for k in range(i % 5 + 1)])


def _run_writers(target, path) -> None:
    ctx = mp.get_context("fork")  # the children share the imported modules: no second numba load
    barrier = ctx.Barrier(WRITERS)
    procs = [ctx.Process(target=target, args=(str(path), w, barrier)) for w in range(WRITERS)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0] * WRITERS


@pytest.mark.skipif(sys.platform == "win32", reason="fork")
def test_concurrent_appends_keep_every_record_whole_and_each_call_together(tmp_path):
    """Issue 13.1 / 25: 4 processes x 60 appends of 3 records to one new file; every record present once,
    whole, and the records of one call next to each other. A single write() of one line is not cut by the
    kernel even without a lock, so the lock shows in the batches: without it (or with a plain buffered
    append) other writers' lines land between a call's lines. Measured: without the lock 3 runs of 3 failed,
    with a plain buffered append 2 of 3 (the next test catches both every time)."""
    path = tmp_path / "games.jsonl"
    _run_writers(_append_many, path)
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b""  # ends with a newline, nothing after it
    seen = []
    for n, line in enumerate(lines[:-1], start=1):
        rec = json.loads(line)  # a cut or interleaved line fails here
        assert rec["pad"] == "x" * rec["len"], f"line {n} is not whole"
        assert rec == _record(rec["writer"], rec["n"])
        seen.append((rec["writer"], rec["n"]))
    assert sorted(seen) == [(w, i) for w in range(WRITERS) for i in range(CALLS * BATCH)]
    for k in range(0, len(seen), BATCH):  # each call's batch is contiguous, in order
        w, i = seen[k]
        assert i % BATCH == 0 and seen[k : k + BATCH] == [(w, i + j) for j in range(BATCH)], f"line {k + 1}"


def _hold_the_lock_mid_line(path: str, holding, go_on) -> None:
    """Another writer: takes the lock, writes half a line, waits, writes the rest."""
    import fcntl

    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.write(fd, b'{"first":"' + b"a" * 1000)
    holding.set()
    go_on.wait(60)
    os.write(fd, b"a" * 1000 + b'"}\n')
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)


@pytest.mark.skipif(sys.platform == "win32", reason="fork, flock")
def test_an_append_waits_for_the_writer_that_holds_the_lock(tmp_path):
    """Fails without the flock in append_lines (or with a plain ``open(path, "ab")`` append): the new line
    goes into the middle of the other writer's line. The second's wait is not timed: it is given a second to
    get in where it must not, and the file's contents decide."""
    path = tmp_path / "games.jsonl"
    ctx = mp.get_context("fork")
    holding, go_on = ctx.Event(), ctx.Event()
    other = ctx.Process(target=_hold_the_lock_mid_line, args=(str(path), holding, go_on))
    other.start()
    try:
        assert holding.wait(60)
        t = threading.Thread(target=append_lines, args=(path, [b'{"second":1}\n']))
        t.start()
        t.join(1.0)  # a lock-free append would have written its line by now
    finally:
        go_on.set()
        other.join(60)
    t.join(60)
    assert [json.loads(line) for line in path.read_bytes().splitlines()] == [{"first": "a" * 2000}, {"second": 1}]


@pytest.mark.skipif(sys.platform == "win32", reason="fork")
def test_concurrent_replacements_leave_one_writers_whole_file(tmp_path):
    path = tmp_path / "games.jsonl"
    _run_writers(_replace_many, path)
    records = [r for _, r in read_jsonl(path)]
    writer = records[0]["writer"]
    assert records == [_record(writer, k) for k in range(len(records))]  # one writer's last file, unmixed
    assert sorted(p.name for p in tmp_path.iterdir()) == ["games.jsonl"]  # no temporary file left


def test_append_adds_the_missing_newline_and_creates_the_file(tmp_path):
    path = tmp_path / "r.jsonl"
    append_lines(path, [b'{"a":1}\n'])
    path.write_bytes(path.read_bytes() + b'{"b":2}')  # a user's edit without a final newline
    append_lines(path, [b'{"c":3}\n'], sync=True)
    assert path.read_bytes() == b'{"a":1}\n{"b":2}\n{"c":3}\n'


def test_atomic_file_keeps_the_old_file_on_failure(tmp_path):
    path = tmp_path / "out.txt"
    replace_bytes(path, b"old")
    path.chmod(0o640)
    with pytest.raises(RuntimeError):
        with AtomicFile(path) as f:
            f.write(b"new, half")
            raise RuntimeError("disk full")
    assert path.read_bytes() == b"old"
    replace_bytes(path, b"new")
    assert path.read_bytes() == b"new" and path.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_jsonl_writer_streams_then_commits_or_aborts(tmp_path):
    path = tmp_path / "r.jsonl"
    write_jsonl(path, [{"old": 1}])
    w = JsonlWriter(path)
    w.write([{"n": np.int64(1)}, {"n": 2}])
    assert [r for _, r in read_jsonl(path)] == [{"old": 1}]  # nothing visible before the commit
    w.abort()
    assert [r for _, r in read_jsonl(path)] == [{"old": 1}]
    with JsonlWriter(path) as w:
        w.write([{"n": 1}])
        w.write([{"n": 2}])
    assert [r for _, r in read_jsonl(path)] == [{"n": 1}, {"n": 2}] and w.count == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.jsonl"]


class _Breaks:
    """A bot that fails on its 300th call in this process (mid-tournament: a fresh bot plays each chunk)."""

    calls = 0

    def __init__(self, game: object = None, seed: int | None = None) -> None:
        self.name = "test_breaks"

    def act(self, obs, mask, seat):
        _Breaks.calls += 1
        if _Breaks.calls == 300:
            raise RuntimeError("bot crashed")
        return np.argmax(mask, axis=1)


register("test_breaks", _Breaks)


def test_interrupted_eval_keeps_the_old_records_file(tmp_path):
    from train.evaluate import evaluate

    path = tmp_path / "games.jsonl"
    write_jsonl(path, [{"old": 1}])
    game = make_game("bobs_hat", players=3, hands=1)
    _Breaks.calls = 0
    with pytest.raises(RuntimeError, match="bot crashed"):
        evaluate(game, ["test_breaks", "random", "random"], 40, batch_size=6, records_path=path)
    assert [r for _, r in read_jsonl(path)] == [{"old": 1}]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["games.jsonl"]


# --------------------------------------------------------------------------
# check_writable
def test_check_writable_names_the_flag_and_the_reason(tmp_path):
    (tmp_path / "afile").write_text("x")
    cases = [
        (tmp_path, "it is a folder"),
        (tmp_path / "no" / "such.jsonl", "does not exist"),
        (tmp_path / "afile" / "x.jsonl", "is not a folder"),
        (tmp_path / ("x" * 300 + ".jsonl"), "too long"),
    ]
    for path, why in cases:
        with pytest.raises(OutputPathError, match=f"^--records: cannot write .*{why}"):
            check_writable(path, "--records")
    assert check_writable(tmp_path / "new.jsonl", "--records") == tmp_path / "new.jsonl"
    assert check_writable(tmp_path / "afile", append=True) == tmp_path / "afile"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]  # the probes leave nothing behind


def read_only_folder(path):
    """Make ``path`` a read-only folder with chmod; skips where this user writes there anyway (root).

    Kept for tests/test_play.py and tests/test_train.py; a test that must run as root too uses a read-only
    tmpfs (tests/mounts.py), as :func:`test_check_writable_read_only_folder` does."""
    path.mkdir(exist_ok=True)
    path.chmod(0o500)
    try:
        (path / ".probe").write_text("")
    except PermissionError:
        return path
    (path / ".probe").unlink()
    path.chmod(0o700)
    pytest.skip("this user can write into read-only folders (root with CAP_DAC_OVERRIDE)")


def test_check_writable_read_only_folder(tmp_path):
    """Chmod for a user, a read-only tmpfs for root (who writes into a chmod 500 folder anyway): both refuse."""
    folder = tmp_path / "ro"
    if is_root():
        with tmpfs(folder, 64):
            (folder / "old.jsonl").write_text("")
            remount_read_only(folder)
            _refused_in(folder, "Read-only file system")
        return
    folder.mkdir()
    (folder / "old.jsonl").write_text("")
    folder.chmod(0o500)
    try:
        _refused_in(folder, "Permission denied")
    finally:
        folder.chmod(0o700)


def _refused_in(folder: Path, why: str) -> None:
    with pytest.raises(OutputPathError, match=f"^--save: cannot write .*{why}"):
        check_writable(folder / "new.jsonl", "--save", append=True)
    with pytest.raises(OutputPathError, match=f"^--json: cannot write .*{why}"):
        check_writable(folder / "old.jsonl", "--json")  # replacing needs the folder


def test_check_writable_opens_an_existing_file_to_append(tmp_path):
    """Issue 25: a check that only probes the folder passes a file that cannot be appended to. The file is
    read-only in a writable folder: chmod 444 for a user, a read-only bind mount for root."""
    path = tmp_path / "old.jsonl"
    path.write_text('{"a":1}\n')
    with read_only_file(path):
        with pytest.raises(OutputPathError, match="^--save: cannot write .*(Read-only file system|Permission denied)"):
            check_writable(path, "--save", append=True)
    assert check_writable(path, "--save", append=True) == path


# --------------------------------------------------------------------------
# links and files that are not regular files
def _records(path) -> list:
    return [r for _, r in read_jsonl(path)]


def test_a_link_is_written_through_and_stays_a_link(tmp_path):
    """Issue 24.2: ``--records link.jsonl`` became a regular file and its target was left stale."""
    real = tmp_path / "real"
    real.mkdir()
    target = real / "games.jsonl"
    write_jsonl(target, [{"old": 1}])
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    assert check_writable(link, "--records") == link
    write_jsonl(link, [{"new": 1}])
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert _records(target) == [{"new": 1}]
    write_jsonl(link, [{"more": 1}], append=True)
    assert link.is_symlink() and _records(target) == [{"new": 1}, {"more": 1}]
    dangling = tmp_path / "later.jsonl"  # a link to a file not yet there: the file is made where it points
    dangling.symlink_to(real / "later.jsonl")
    replace_bytes(dangling, b'{"x":1}\n')
    assert dangling.is_symlink() and _records(real / "later.jsonl") == [{"x": 1}]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["later.jsonl", "link.jsonl", "real"]
    assert sorted(p.name for p in real.iterdir()) == ["games.jsonl", "later.jsonl"]


def test_a_fifo_is_written_directly_and_its_reader_gets_the_records(tmp_path):
    """Issue 24.2: a FIFO was replaced by a regular file. The check up front must not open the FIFO either:
    closing it hands the reader (``cat``) its end of file, and the real write then waits for ever."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)  # reads to EOF, as cat
    reader.start()
    check_writable(fifo, "--records")
    writer = threading.Thread(target=write_jsonl, args=(fifo, [{"a": 1}, {"b": 2}]), daemon=True)
    writer.start()
    writer.join(30)
    reader.join(30)
    if writer.is_alive():  # it waits for a reader that is gone: let it open and finish
        os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
    assert got == [b'{"a":1}\n{"b":2}\n']
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]


def test_a_device_is_written_directly_never_replaced(tmp_path):
    """Issue 24.2: ``simulate --records /dev/null`` as root replaced the device with a regular file. The test
    makes its own null device (mknod, root) rather than risk the machine's /dev/null."""
    dev = tmp_path / "null"
    try:
        os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except (PermissionError, OSError) as err:
        skip_or_fail(f"cannot make a device node here ({err}); root can")
    assert check_writable(dev, "--records") == dev
    write_jsonl(dev, [{"a": 1}])
    replace_bytes(dev, b"x" * 100_000)
    append_lines(dev, [b"y\n"], sync=True)
    with AtomicFile(dev) as f:
        assert f.direct
        f.write(b"z")
    assert stat.S_ISCHR(os.lstat(dev).st_mode) and os.lstat(dev).st_rdev == os.makedev(1, 3)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["null"]


# --------------------------------------------------------------------------
# durability: the temporary beside the target, fsynced before the rename, the folder after it
@pytest.fixture
def io_calls(monkeypatch):
    """Every os.fsync (as the path of the file synced) and os.replace, in order."""
    calls: list[tuple] = []
    fsync, replace = os.fsync, os.replace

    def synced(fd):
        calls.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
        return fsync(fd)

    def replaced(src, dst):
        calls.append(("replace", os.fspath(src), os.fspath(dst)))
        return replace(src, dst)

    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("needs /proc/self/fd to name a file descriptor's file")
    monkeypatch.setattr(os, "fsync", synced)
    monkeypatch.setattr(os, "replace", replaced)
    return calls


def _durable_replacements(calls: list[tuple]) -> list[str]:
    """The targets of each fsync(temporary), replace(temporary, target), fsync(target's folder) in ``calls``;
    fails on any other pattern (a missing fsync, a temporary in another folder)."""
    assert len(calls) % 3 == 0, calls
    targets = []
    for k in range(0, len(calls), 3):
        (s1, tmp), (r, src, dst), (s2, folder) = calls[k : k + 3]
        assert (s1, r, s2) == ("fsync", "replace", "fsync"), calls
        assert src == tmp and os.path.dirname(tmp) == os.path.dirname(dst) == folder, calls
        assert os.path.basename(tmp).startswith("." + os.path.basename(dst) + "."), calls
        targets.append(dst)
    return targets


def test_a_replacement_is_synced_renamed_beside_its_target_and_its_folder_synced(tmp_path, io_calls):
    """Issue 25: a missing fsync (of the file or the folder) and a temporary made in another folder or file
    system survived every test."""
    path = tmp_path / "out.json"
    replace_bytes(path, b"new")
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link.json").symlink_to(real / "target.json")
    write_jsonl(tmp_path / "link.json", [{"a": 1}])  # the temporary goes beside the target, not the link
    assert _durable_replacements(io_calls) == [str(path), str(real / "target.json")]
    io_calls.clear()
    append_lines(path, [b"x\n"], sync=True)
    assert io_calls == [("fsync", str(path))]


def test_a_checkpoint_is_written_durably(tmp_path, io_calls):
    """agents/ppo_agent.py had its own atomic writer, without fsync: it goes through the package's one."""
    from agents.checkpoint import save_checkpoint
    from agents.ppo_agent import PolicyNet

    net = PolicyNet(8, 3, (4,))
    meta = {"game": "bobs_hat", "players": 4, "obs_size": 8, "n_actions": 3, "hidden": [4], "global_step": 1}
    save_checkpoint(tmp_path / "ckpt.pt", {f"policy.{k}": v for k, v in net.state_dict().items()}, meta)
    assert _durable_replacements(io_calls) == [str(tmp_path / "ckpt.pt.json"), str(tmp_path / "ckpt.pt")]


def test_plot_formats_are_ones_matplotlib_writes():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    assert set(PLOT_FORMATS) <= set(Figure().canvas.get_supported_filetypes())
