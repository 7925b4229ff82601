"""The progress bar of long runs: training (table decisions) and tournaments (games)."""

from __future__ import annotations

import math
import sys
import time
from typing import Any


class ProgressBar:
    """Progress toward ``total`` on one line of stderr (or ``stream``), with the rate and the time left.

    On a terminal the line is redrawn in place, at most 5 times a second and
    at the end. Written to a file or a pipe (CI, logs), it adds a line each
    time another quarter is done or ``log_every_s`` seconds have passed
    since the last line. ``done``: the count already reached when the run
    starts (a resumed training run); the rate counts from there.
    """

    def __init__(
        self,
        total: int,
        label: str = "",
        done: int = 0,
        enabled: bool = True,
        stream: Any = None,
        log_every_s: float = 30.0,
    ) -> None:
        self.total, self.label, self.done, self.start = total, label, done, done
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.log_every_s = log_every_s
        self.t0 = self._last = time.perf_counter()
        self._quarter = self._quarters()

    def _quarters(self) -> int:
        return self.done * 4 // self.total if self.total > 0 else 4

    def update(self, n: int, note: str = "") -> None:
        """Add ``n`` to the count; ``note``: a few words shown after the bar (the iteration, its return)."""
        self.done += n
        if not self.enabled:
            return
        now = time.perf_counter()
        finished = self.done >= self.total
        if self.tty:
            if now - self._last >= 0.2 or finished:
                self._last = now
                self.stream.write("\r" + self.line(now, note))
                self.stream.flush()
        elif self._quarters() > self._quarter or now - self._last >= self.log_every_s:
            self._quarter, self._last = self._quarters(), now
            self.stream.write(self.line(now, note) + "\n")
            self.stream.flush()

    def line(self, now: float, note: str = "") -> str:
        """The bar as text, at time ``now`` (``time.perf_counter``)."""
        # a training run ends on a whole iteration, past its budget: the line stops at total/total, 100%
        # (the summary printed at the end gives the exact count)
        shown = min(self.done, self.total) if self.total > 0 else self.done
        frac = shown / self.total if self.total > 0 else 1.0
        rate = (self.done - self.start) / max(now - self.t0, 1e-9)
        eta = max(self.total - self.done, 0) / rate if rate > 0 else math.inf
        eta_s = time.strftime("%H:%M:%S", time.gmtime(eta)) if math.isfinite(eta) else "--:--:--"
        bar = "#" * int(30 * frac) + "." * (30 - int(30 * frac))
        label = f" {self.label}" if self.label else ""
        text = f"[{bar}] {frac:6.1%} {shown:,}/{self.total:,}{label} {rate:,.0f}/s ETA {eta_s}"
        return f"{text} {note}" if note else text

    def close(self) -> None:
        """End the line on a terminal."""
        if self.enabled and self.tty:
            self.stream.write("\n")
            self.stream.flush()
