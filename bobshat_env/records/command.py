"""Replaying a records file: every record's verdict (:func:`replay_file`) and ``bobshat replay``'s printout.

The file is read line by line (:func:`~bobshat_env.records.io.iter_lines`), so
a line that is not a record becomes a fault of that line and the rest of the
file is still checked.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import TextIO

from ..text import plural
from .faults import Fault, ReplayReport
from .io import RecordLineTooLong, iter_lines
from .validate import replay_report


def replay_file(path: str | os.PathLike) -> tuple[int, list[Fault]]:
    """Replay every record of a JSON Lines file: (number of records, all faults)."""
    reports = [report for _line, report in _replay_lines(path)]
    return len(reports), [f for r in reports for f in r.faults]


def _replay_lines(path: str | os.PathLike) -> Iterator[tuple[int, ReplayReport]]:
    """(line, report) for every non-blank line; a line that is no record gets a report of that one fault."""
    for index, (line, value, err) in enumerate(iter_lines(path)):
        if err is not None:
            yield line, ReplayReport([Fault(err, index, line)])
        else:
            yield line, replay_report(value, index, line)


def replay_main(path: str, out: TextIO | None = None) -> int:
    """``bobshat replay FILE``: print a line per record and each fault; the exit code.

    0 when every record is valid; 1 when any record has a fault or the file
    holds no record; 2 when the file cannot be read, or holds a line longer
    than any record (:data:`~bobshat_env.records.io.MAX_RECORD_LINE`).
    """
    out = sys.stdout if out is None else out
    n = bad = n_faults = 0
    try:
        for n, (line, report) in enumerate(_replay_lines(path), start=1):
            head = f"record {n} (line {line})"
            if report.game is not None:
                head += f": {report.game}"
                if report.players is not None:
                    head += f", {report.players} players, {plural(report.hands, 'hand entry', 'hand entries')}"
                if report.agents:
                    head += f", agents {', '.join(report.agents)}"
                if report.recorded_totals is not None:  # the record's own: a fault line says if the rules differ
                    head += f", totals {report.recorded_totals}"
                elif report.totals is not None:
                    head += f", totals {report.totals} (recomputed)"
            if report.ok:
                print(f"{head}: ok", file=out)
                continue
            bad += 1
            n_faults += len(report.faults)
            print(f"{head}: {len(report.faults)} fault(s)", file=out)
            for f in report.faults:
                print(f"  {f}", file=out)
    except OSError as err:
        print(f"cannot read {path}: {err.strerror or err}", file=out)
        return 2
    except RecordLineTooLong as err:  # no record is that long, and reading on would hold the whole line
        print(f"cannot read {path}: {err}", file=out)
        return 2
    if n == 0:
        print(f"{path}: no game records", file=out)
        return 1
    if bad:
        print(f"{n} record(s): {n - bad} valid, {bad} with faults ({n_faults} fault(s) in all)", file=out)
        return 1
    print(f"{n} record(s), all valid", file=out)
    return 0
