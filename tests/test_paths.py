"""Output files (bobshat_env/paths.py, records.write_jsonl): checked up front, appended and replaced atomically."""

from __future__ import annotations

import json
import multiprocessing as mp
import sys

import numpy as np
import pytest

from agents import register
from bobshat_env.games import make_game
from bobshat_env.paths import AtomicFile, OutputPathError, append_lines, check_writable, replace_bytes
from bobshat_env.records import JsonlWriter, read_jsonl, write_jsonl

WRITERS, PER_WRITER = 4, 200


def _record(w: int, i: int) -> dict:
    """A record big enough (5-24 KB) that an unlocked buffered append is written in several pieces."""
    pad = "x" * (5000 + 997 * ((w * 31 + i) % 20))
    return {"writer": w, "n": i, "len": len(pad), "pad": pad}


def _append_many(path: str, w: int, barrier) -> None:
    barrier.wait()  # every writer starts at the same moment
    for i in range(PER_WRITER):
        write_jsonl(path, [_record(w, i)], append=True)


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
def test_concurrent_appends_keep_every_record_whole(tmp_path):
    """Issue 13.1: 4 processes x 200 appends to one new file; every record present once, valid and whole."""
    path = tmp_path / "games.jsonl"
    _run_writers(_append_many, path)
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b""  # ends with a newline, nothing after it
    seen = set()
    for n, line in enumerate(lines[:-1], start=1):
        rec = json.loads(line)  # a cut or interleaved line fails here
        assert rec["pad"] == "x" * rec["len"], f"line {n} is not whole"
        assert rec == _record(rec["writer"], rec["n"])
        seen.add((rec["writer"], rec["n"]))
    assert len(lines) - 1 == len(seen) == WRITERS * PER_WRITER


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
    """Make ``path`` a read-only folder; skips the test where this user writes there anyway (root)."""
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
    folder = tmp_path / "ro"
    folder.mkdir()
    (folder / "old.jsonl").write_text("")
    read_only_folder(folder)
    try:
        with pytest.raises(OutputPathError, match="Permission denied"):
            check_writable(folder / "new.jsonl", "--save", append=True)
        with pytest.raises(OutputPathError, match="Permission denied"):
            check_writable(folder / "old.jsonl", "--json")  # replacing needs the folder
    finally:
        folder.chmod(0o700)
