"""Issue 52, part 3: bounded input. Every reader of records files (``replay``, ``imitate``, ``serve``'s
listing) reads a line through one bounded reader (:func:`bobshat_env.records.io.bounded_lines`): a file
with no line break (``/dev/zero``) fails with one line naming the file and the line, under a memory
limit, instead of taking all memory."""

from __future__ import annotations

import io
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from bobshat.cli import main
from bobshat_env.records import MAX_RECORD_LINE, RecordLineTooLong, bounded_lines

ROOT = Path(__file__).resolve().parent.parent
GIB = 1 << 30


def _one_gib() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (GIB, GIB))


def _bobshat_in_1gib(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """``bobshat ARGS`` with 1 GiB of address space; the timeout only stops a hang (it is no speed check)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "bobshat.cli", *args]
    return subprocess.run(
        argv, cwd=cwd, env=env, preexec_fn=_one_gib, capture_output=True, text=True, timeout=300, check=False
    )


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero here")
@pytest.mark.parametrize(
    "args, code, stream",
    [
        (["replay", "/dev/zero"], 2, "stdout"),
        (["imitate", "--records", "/dev/zero", "--out", "OUT"], 2, "stderr"),
    ],
    ids=["replay", "imitate"],
)
def test_dev_zero_fails_in_one_line_naming_the_file_and_line_under_1_gib(tmp_path, args, code, stream):
    args = [str(tmp_path / "p.pt") if a == "OUT" else a for a in args]
    done = _bobshat_in_1gib(args, tmp_path)
    said = getattr(done, stream).strip()
    assert done.returncode == code, (done.returncode, done.stdout[-2000:], done.stderr[-2000:])
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr
    assert len(said.splitlines()) == 1, said
    assert "/dev/zero" in said and f"line 1 is longer than {MAX_RECORD_LINE:,} bytes" in said, said
    assert list(tmp_path.iterdir()) == []  # imitate wrote no checkpoint


def test_a_binary_file_given_to_imitate_is_named_as_such_not_as_a_holdout_problem(tmp_path, capsys):
    blob = tmp_path / "model.bin"
    blob.write_bytes(bytes(b for b in range(256) if b != 10) * 40)  # no line break: one "line"
    assert main(["imitate", "--records", str(blob), "--out", str(tmp_path / "p.pt"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert f"--records: {blob}: line 1 is not UTF-8 text" in err and "holdout" not in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.bin"]


def test_the_bound_has_a_wide_margin_over_the_longest_legal_record(tmp_path, capsys):
    # the longest game: Where's Bob's Hat? with the most cards dealt over a game, 3 players and 16 hands
    out = tmp_path / "long.jsonl"
    assert main(["simulate", "--players", "3", "--hands", "16", "--games", "4", "--records", str(out)]) == 0
    longest = max(len(line) for line in out.read_bytes().splitlines())
    assert 15_000 < longest and 100 * longest < MAX_RECORD_LINE, longest
    assert main(["replay", str(out)]) == 0  # and it reads back through the bounded reader


def test_bounded_lines_takes_a_line_of_the_limit_and_refuses_one_byte_more():
    limit = 10
    ok = b"a" * limit + b"\n" + b"b" * limit  # a full line, and a last one without its line break
    assert list(bounded_lines(io.BytesIO(ok), limit)) == [(1, b"a" * limit + b"\n"), (2, b"b" * limit)]
    with pytest.raises(RecordLineTooLong, match="line 2 is longer than 10 bytes") as err:
        list(bounded_lines(io.BytesIO(b"x\n" + b"c" * (limit + 1) + b"\n"), limit))
    assert err.value.line == 2


def test_replay_stops_at_an_overlong_line_with_one_line(tmp_path, capsys, monkeypatch):
    import bobshat_env.records.io as records_io

    path = tmp_path / "games.jsonl"
    assert main(["simulate", "--games", "1", "--records", str(path)]) == 0
    record = path.read_bytes()
    monkeypatch.setattr(records_io, "MAX_RECORD_LINE", len(record) + 10)
    path.write_bytes(record + b"{" * (len(record) + 20) + b"\n" + record)
    capsys.readouterr()
    assert main(["replay", str(path)]) == 2
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("record 1 (line 1)") and lines[0].endswith(": ok")
    assert lines[1:] == [f"cannot read {path}: line 2 is longer than {len(record) + 10:,} bytes, far more than "
                         "any game's record: not a records file?"]  # fmt: skip


def test_serve_lists_a_file_with_an_overlong_line_and_says_where_it_stopped(tmp_path, monkeypatch):
    pytest.importorskip("starlette", reason="the web extra is not installed: pip install -e '.[web]'")
    pytest.importorskip("httpx", reason="httpx is not installed (the dev extra has it)")
    from starlette.testclient import TestClient

    import bobshat_env.records.io as records_io
    from bobshat.web.app import create_app

    path = tmp_path / "games.jsonl"
    assert main(["simulate", "--games", "1", "--records", str(path)]) == 0
    record = path.read_bytes()
    monkeypatch.setattr(records_io, "MAX_RECORD_LINE", len(record) + 10)
    path.write_bytes(record + b"0" * (len(record) + 20) + b"\n")
    with TestClient(create_app(tmp_path), base_url="http://127.0.0.1") as client:
        r = client.get("/api/records")
        assert r.status_code == 200, r.text
        (listed,) = r.json()["files"]
        first, second = listed["records"]
        assert first["ok"] and not second["ok"] and second["line"] == 2
        assert "line 2 is longer than" in second["faults"][0]
        r = client.get("/api/replay", params={"file": "games.jsonl", "record": 1})
        assert r.status_code == 422 and "line 2 is longer than" in r.json()["error"], r.text
        assert json.loads(client.get("/api/replay", params={"file": "games.jsonl", "record": 0}).text)
