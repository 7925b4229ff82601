"""Game records (docs/records.md): the public names, re-exported from the package's modules."""

from .validate import (
    FORMAT,
    Fault,
    JsonlWriter,
    Recorder,
    RecordFormatError,
    ReplayReport,
    ReplayStep,
    read_jsonl,
    read_records,
    replay_file,
    replay_main,
    replay_record,
    replay_report,
    replay_steps,
    write_jsonl,
)

__all__ = [
    "FORMAT",
    "Fault",
    "JsonlWriter",
    "Recorder",
    "RecordFormatError",
    "ReplayReport",
    "ReplayStep",
    "read_jsonl",
    "read_records",
    "replay_file",
    "replay_main",
    "replay_record",
    "replay_report",
    "replay_steps",
    "write_jsonl",
]
