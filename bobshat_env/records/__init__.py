"""Game records (docs/records.md): record batched play, write and read JSON Lines, replay.

A record is one finished game as a JSON object; a records file holds one per
line. Records are how games are shared, audited and turned into data sets, so
two things matter here: the recorder writes exactly the format of docs/records.md,
and the replay trusts nothing in a record but rebuilds every hand with the
batched rules core and reports every disagreement as a :class:`Fault`.

The package, a job per module:

- ``recorder``: :class:`Recorder`, batched core steps -> record dicts;
- ``io``: JSON Lines through the one atomic writer (:func:`write_jsonl`,
  :class:`JsonlWriter`, :func:`read_jsonl`, :func:`read_records`, each line
  read through :func:`bounded_lines`, at most :data:`MAX_RECORD_LINE` bytes);
- ``validate``: the replay of one record (:func:`replay_report`,
  :func:`replay_record`, :func:`replay_steps`), ``faults`` what it reports
  and ``steps`` the states it passes through;
- ``command``: a whole file (:func:`replay_file`) and ``bobshat replay``
  (:func:`replay_main`);
- ``rules``: the contract of a game's adapter; ``bobs_hat`` and ``oh_hell``
  the two games' adapters, found through each game's description
  (``record_rules`` in :mod:`bobshat_env.games`).
"""

from .command import replay_file, replay_main
from .faults import Fault, ReplayReport
from .io import (
    MAX_RECORD_LINE,
    JsonlWriter,
    RecordFormatError,
    RecordLineTooLong,
    bounded_lines,
    read_jsonl,
    read_records,
    write_jsonl,
)
from .recorder import Recorder
from .rules import FORMAT
from .steps import ReplayStep
from .validate import replay_record, replay_report, replay_steps

__all__ = [
    "FORMAT",
    "MAX_RECORD_LINE",
    "Fault",
    "JsonlWriter",
    "Recorder",
    "RecordFormatError",
    "RecordLineTooLong",
    "ReplayReport",
    "ReplayStep",
    "bounded_lines",
    "read_jsonl",
    "read_records",
    "replay_file",
    "replay_main",
    "replay_record",
    "replay_report",
    "replay_steps",
    "write_jsonl",
]
