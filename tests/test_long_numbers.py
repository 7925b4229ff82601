"""A JSON integer of more than 4,300 digits in a records file (issue 24.5): Python refuses to convert it
("Exceeds the limit (4300 digits) for integer string conversion", a ValueError that is not a
JSONDecodeError), and ``bobshat replay`` stopped with that traceback. Such a line is reported as corrupt and
the records after it are still read."""

from __future__ import annotations

import io

from bobshat_env.records import read_records, replay_main, write_jsonl

HUGE = b'{"game":"bobs_hat","seed":' + b"7" * 5000 + b"}\n"


def test_a_huge_integer_is_one_corrupt_line_and_reading_goes_on(tmp_path):
    path = tmp_path / "g.jsonl"
    write_jsonl(path, [{"a": 1}])
    path.write_bytes(path.read_bytes() + HUGE + b'{"b":2}\n')
    got = list(read_records(path))
    assert [(n, r) for n, r, _ in got] == [(1, {"a": 1}), (2, None), (3, {"b": 2})]
    assert "line 2 holds a number too long to read (over 4,300 digits)" == got[1][2]
    assert list(read_records(path.read_bytes()))[1][2] == got[1][2]  # an upload's bytes read the same


def test_replay_reports_the_line_and_goes_on(tmp_path):
    path = tmp_path / "g.jsonl"
    path.write_bytes(HUGE + b'{"b":2}\n')
    out = io.StringIO()
    assert replay_main(str(path), out) == 1
    text = out.getvalue()
    assert "line 1 holds a number too long to read" in text and "(line 2)" in text and "Traceback" not in text
