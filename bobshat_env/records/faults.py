"""What a replay finds: a :class:`Fault` per disagreement, a :class:`ReplayReport` per record.

A fault carries where it is (record, file line, hand, entry, trick) so that
``bobshat replay`` and the web viewer can point at it; :class:`FaultSink` and
:class:`HandFaults` stamp that place on the faults while a record is replayed.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Fault:
    """One disagreement between a record and the rules, or a broken record.

    record: 0-based index of the record in its file or list (None if unknown).
    line: 1-based line in the file (None if not read from a file).
    hand: 1-based hand number the fault is in (None for game-level faults).
    entry: 0-based index into the record's ``hands`` list (differs from
    ``hand - 1`` after a renege, when a hand is dealt again).
    trick: 1-based trick number within the hand (None if not about a trick).
    message: what is wrong, in plain words.
    """

    message: str
    record: int | None = None
    line: int | None = None
    hand: int | None = None
    entry: int | None = None
    trick: int | None = None

    def where(self) -> str:
        """Where the fault is, e.g. ``line 4, hand 3, trick 2``."""
        parts = []
        if self.line is not None:
            parts.append(f"line {self.line}")
        elif self.record is not None:
            parts.append(f"record {self.record}")
        if self.hand is not None:
            again = self.entry is not None and self.entry != self.hand - 1
            parts.append(f"hand {self.hand}" + (f" (hands[{self.entry}])" if again else ""))
        if self.trick is not None:
            parts.append(f"trick {self.trick}")
        return ", ".join(parts)

    def __str__(self) -> str:
        where = self.where()
        return f"{where}: {self.message}" if where else self.message


@dataclass
class ReplayReport:
    """The outcome of replaying one record: its faults and what the rules give."""

    faults: list[Fault]
    game: str | None = None
    players: int | None = None
    hands: int = 0  # hand entries in the record
    totals: list[int] | None = None  # totals by the rules (None if the game could not be set up)
    recorded_totals: list[int] | None = None  # the record's own totals, when they are a list of P integers
    agents: list[str] | None = None

    @property
    def ok(self) -> bool:
        """True when the record agrees with the rules (no fault)."""
        return not self.faults


class FaultSink:
    """Collects the faults of one record, each stamped with where it is (record index, file line)."""

    def __init__(self, record: int | None, line: int | None) -> None:
        self.record, self.line = record, line
        self.faults: list[Fault] = []

    def add(self, message: str, hand: int | None = None, entry: int | None = None, trick: int | None = None) -> None:
        self.faults.append(Fault(message, self.record, self.line, hand, entry, trick))


class HandFaults:
    """Reports the faults of one hand entry: called with a message (and a trick), it stamps the hand."""

    def __init__(self, sink: FaultSink, hand: int, entry: int) -> None:
        self.sink, self.hand, self.entry = sink, hand, entry

    def __call__(self, message: str, trick: int | None = None) -> None:
        self.sink.add(message, self.hand, self.entry, trick)
