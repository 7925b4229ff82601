"""Records on disk: JSON Lines written through the one atomic writer (bobshat_env/paths.py), and read back.

Writing never leaves half a file or half a record (:func:`write_jsonl`,
:class:`JsonlWriter`), and goes only to a file that is new, empty or records
already (:func:`check_records_output`): records written over a checkpoint or
appended to its sidecar destroyed it; reading names the line of anything
that is not a record (:func:`read_jsonl` stops there, :func:`read_records`
and the replay go on past it).
"""

from __future__ import annotations

import io
import json
import os
import re
import stat
import sys
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from ..games import GAMES
from ..paths import AtomicFile, OutputPathError, append_lines, replace_bytes

# The longest line a records file may hold, in bytes. A record is a whole game on one line; the longest
# legal game is Where's Bob's Hat? with 3 players and 16 hands (5 to 20 cards each, notation such as
# "black20"): about 22 KB with short agent names (tests/test_bounded_input.py measures it). Agent specs that
# name checkpoint paths, and the hands dealt again after reneges (renege mode), add tens of KB at most in
# any real game. 4 MiB is some 190 times the longest game, so no real record comes near it, while a file
# that is no records file (a binary, /dev/zero: no line break at all) is refused after reading 4 MiB,
# instead of being read whole into memory as one line.
MAX_RECORD_LINE = 4 * 1024 * 1024


class RecordFormatError(ValueError):
    """A records file that cannot be read (bad JSON, not an object); the message names the line."""


class RecordLineTooLong(RecordFormatError):
    """A line longer than :data:`MAX_RECORD_LINE`: no record is that long, and reading on would hold it all.

    Unlike a bad line it ends the reading (the next line's start is not known
    without reading the rest of this one); ``line`` is its number.
    """

    def __init__(self, line: int, limit: int) -> None:
        super().__init__(
            f"line {line} is longer than {limit:,} bytes, far more than any game's record: not a records file?"
        )
        self.line = line


def _jsonable(x: Any) -> Any:
    """json.dumps fallback for NumPy scalars and arrays."""
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    if isinstance(x, np.bool_):
        return bool(x)
    if isinstance(x, np.ndarray):
        return x.tolist()
    raise TypeError(f"a record holds JSON values only, not {type(x).__name__}")


def write_jsonl(path: str | os.PathLike, records: Iterable[dict], append: bool = False) -> int:
    """Write records to ``path``, one JSON object per line; returns how many.

    Every record is turned into JSON first, so a record that is not JSON
    changes nothing on disk. Overwriting goes through a temporary file in the
    same folder that is renamed over ``path`` only once everything is written
    (:func:`~bobshat_env.paths.replace_bytes`): a failure (a full disk) never
    leaves a half-written file or loses the old one. Appending adds whole
    lines under a file lock (:func:`~bobshat_env.paths.append_lines`), so
    several processes can append to one file at once (``play --save`` in two
    terminals) without losing or cutting a record; a line break is added
    first if the file did not end with one.
    """
    lines = [_json_line(r) for r in records]
    if append:
        append_lines(path, lines)
    else:
        replace_bytes(path, b"".join(lines))
    return len(lines)


# How much of a file is read to tell what it is: a record's line is far shorter (tens of KB); a longer first
# line is told by how it begins.
HEAD_BYTES = 1 << 20
_RECORD_START = re.compile(rb'\A\s*\{\s*"game"\s*:\s*"(' + b"|".join(g.encode() for g in GAMES) + rb')"')


def _is_record(value: Any) -> bool:
    """A game record as docs/records.md has it: an object naming one of our games, with its hands."""
    return isinstance(value, dict) and value.get("game") in GAMES and isinstance(value.get("hands"), list)


def records_file_problem(path: str | os.PathLike) -> str | None:
    """What ``path`` appears to be, if records must not be written to it; None if they may.

    Records may go to a file that does not exist yet, an empty one, one whose
    first line (blank lines and a byte-order mark skipped) is a bobshat
    record, and anything that is not a regular file (``/dev/null``, a FIFO:
    nothing to lose, and a FIFO must not be read). Anything else is told by
    its first bytes: ``"a torch checkpoint (zip archive)"``, ``"JSON that is
    not a game record"``, ``"binary data"``, ... Only the first
    :data:`HEAD_BYTES` are read. A file that cannot be read (write-only) is
    let be: its writability is checked elsewhere.
    """
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_size == 0:
        return None
    try:
        with open(path, "rb") as f:
            head = f.read(HEAD_BYTES)
    except OSError:
        return None
    whole = len(head) == st.st_size
    text = head[3:] if head.startswith(b"\xef\xbb\xbf") else head
    body = text.lstrip(b" \t\r\n")
    if not body:
        return None if whole else "text that is not a game record"
    first, newline, _ = body.partition(b"\n")
    if newline or whole:
        try:
            if _is_record(json.loads(first)):
                return None
        except (ValueError, RecursionError):
            pass
    elif _RECORD_START.match(first):  # a first line longer than the head: what it begins with
        return None
    return _what_file(head, text, whole)


def _what_file(head: bytes, text: bytes, whole: bool) -> str:
    """The kind of a file that is not records, from its first bytes (for the error)."""
    if head.startswith(b"PK\x03\x04"):
        return "a torch checkpoint (zip archive)" if b"data.pkl" in head[:4096] else "a zip archive"
    for magic, kind in (
        (b"\x80", "a pickle (an old torch checkpoint?)"),
        (b"\x89PNG", "a PNG image"),
        (b"%PDF", "a PDF document"),
        (b"\x1f\x8b", "gzip-compressed data"),
        (b"\xff\xd8\xff", "a JPEG image"),
    ):
        if head.startswith(magic):
            return kind
    try:
        decoded = text.decode("utf-8")
    except UnicodeDecodeError as err:
        if whole or err.start < len(text) - 3:  # not a character cut by the end of the head
            return "binary data"
        decoded = text[: err.start].decode("utf-8")
    if "\x00" in decoded:
        return "binary data"
    stripped = decoded.lstrip()
    if stripped.startswith(("{", "[")):  # an object or a list (a report, a sidecar), whole or in part
        return "JSON that is not a game record"
    try:
        json.loads(decoded if whole else stripped.partition("\n")[0])
        return "JSON that is not a game record"  # a number, a string
    except (ValueError, RecursionError):
        return "text that is not a game record"


def check_records_output(path: str | os.PathLike, what: str = "") -> None:
    """Refuse (:class:`~bobshat_env.paths.OutputPathError`, one line saying what the file appears to be) to
    write records to ``path`` unless it is new, empty or records already (:func:`records_file_problem`).

    ``simulate --records`` over a checkpoint left a file that was no longer a
    checkpoint, ``eval --records`` over a sidecar one that was no longer JSON;
    ``what`` (``--records``) starts the message.
    """
    kind = records_file_problem(path)
    if kind is not None:
        head = f"{what}: " if what else ""
        raise OutputPathError(
            f"{head}{os.fspath(path)} appears to be {kind}, not game records; records go only to a new or "
            "empty file or one that holds records: name another file"
        )


def _json_line(record: dict) -> bytes:
    return (json.dumps(record, separators=(",", ":"), default=_jsonable, allow_nan=False) + "\n").encode("utf-8")


class JsonlWriter:
    """Stream records into a file that appears whole or not at all (``eval --records``).

    Records go to a temporary file beside ``path`` as they come;
    :meth:`commit` renames it over ``path``, :meth:`abort` (or leaving a
    ``with`` block by an exception) removes it and leaves the old file as
    it was. Two runs writing the same path each leave a complete file (the
    last to finish wins), never a mix.
    """

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = path
        self.count = 0
        self._file = AtomicFile(path)

    def write(self, records: Iterable[dict]) -> int:
        """Add records, a line each, to the file being written; returns how many."""
        lines = [_json_line(r) for r in records]
        self._file.write(b"".join(lines))
        self.count += len(lines)
        return len(lines)

    def commit(self) -> None:
        """Put the finished file in place of ``path``."""
        self._file.commit()

    def abort(self) -> None:
        """Drop what was written; ``path`` stays as it was."""
        self._file.abort()

    def __enter__(self) -> JsonlWriter:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()


def read_records(source: str | os.PathLike | bytes) -> Iterator[tuple[int, dict | None, str | None]]:
    """``(line, record, None)`` for each record of a JSON Lines file (a path, or its bytes), and
    ``(line, None, why)`` for each line that is not a record, as ``bobshat replay`` reads them.

    Unlike :func:`read_jsonl` it goes on past a bad line, for listing a file's
    records (``bobshat serve``); blank lines are skipped. A line longer than
    :data:`MAX_RECORD_LINE` raises :class:`RecordLineTooLong`.
    """
    if isinstance(source, bytes):
        return _iter_file(io.BytesIO(source))
    return iter_lines(source)


def iter_lines(path: str | os.PathLike) -> Iterator[tuple[int, Any, str | None]]:
    """(line number, parsed value or None, error or None) for every non-blank line."""
    with open(path, "rb") as f:
        yield from _iter_file(f)


def bounded_lines(f: Any, limit: int | None = None) -> Iterator[tuple[int, bytes]]:
    """(line number, bytes) of each line of an open binary file; a line over ``limit`` bytes (its line break
    aside; default :data:`MAX_RECORD_LINE`) raises :class:`RecordLineTooLong` after at most ``limit + 1``
    bytes of it are read.

    The one line reader of records files (``replay``, ``imitate``, ``serve``'s
    listing): iterating a file object reads a line whole, however long, so a
    file with no line break (``/dev/zero``) would take all memory.
    """
    limit = MAX_RECORD_LINE if limit is None else int(limit)
    n = 0
    while True:
        raw = f.readline(limit + 1)
        if not raw:
            return
        n += 1
        if len(raw) > limit and not raw.endswith(b"\n"):
            raise RecordLineTooLong(n, limit)
        yield n, raw


def _iter_file(f: Any) -> Iterator[tuple[int, Any, str | None]]:
    """The records of an open binary file, line by line (see :func:`read_records`)."""
    for n, raw in bounded_lines(f):
        if n == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            yield n, None, f"line {n} is not UTF-8 text ({err.reason} at byte {err.start})"
            continue
        if not text.strip():
            continue
        try:
            value = json.loads(text)
        except json.JSONDecodeError as err:
            yield n, None, f"line {n} is not valid JSON: {err.msg} (column {err.colno})"
            continue
        except ValueError:  # Python refuses integers of more than 4,300 digits (sys.get_int_max_str_digits)
            yield n, None, f"line {n} holds a number too long to read (over {_max_digits():,} digits)"
            continue
        except RecursionError:  # e.g. 100,000 nested brackets: the parser gives up, the file goes on
            yield n, None, f"line {n} is nested too deeply to read (a record is a few levels deep)"
            continue
        if not isinstance(value, dict):
            yield n, None, f"line {n} is not a record: a record is a JSON object, got {type(value).__name__}"
            continue
        yield n, value, None


def _max_digits() -> int:
    return getattr(sys, "get_int_max_str_digits", lambda: 4300)() or 4300


def read_jsonl(path: str | os.PathLike) -> Iterator[tuple[int, dict]]:
    """Yield ``(line number, record)`` for each record of a JSON Lines file.

    Blank lines are skipped. A line that is not a JSON object raises
    :class:`RecordFormatError` naming the line.
    """
    for n, value, err in iter_lines(path):
        if err is not None:
            raise RecordFormatError(f"{path}: {err}")
        yield n, value
