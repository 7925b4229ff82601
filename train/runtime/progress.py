"""The progress bar of long runs: training (table decisions) and tournaments (games)."""

from __future__ import annotations

import math
import sys
import time
from typing import Any


def _clock(seconds: float) -> str:
    """A duration as H:MM:SS (hours past 99 shown as they are)."""
    s = int(round(seconds))
    return f"{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}"


class ProgressBar:
    """Progress toward ``total`` on one line of stderr (or ``stream``), with the rate and the time left.

    On a terminal the line is redrawn in place, at most 5 times a second and
    at the end. Written to a file or a pipe (CI, logs), it adds a line each
    time another quarter is done or an interval has passed since the last
    line: 2 s at first, doubling up to ``log_every_s``, so a log shows
    progress from the first seconds and a line every ``log_every_s`` later.
    ``done``: the count already reached when the run starts (a resumed
    training run); the rate counts from there.

    ``time_limit_s`` (0: none): the run also stops this many seconds after
    ``t0`` (``time.perf_counter``; default now); the ETA is then the earlier
    of the two ends. Where the time limit ends the run first, the bar fills
    with the time (the decision cap would leave it at a few percent when the
    run stops) and the line says so (``time-capped``). :meth:`status` shows
    what the run is doing before the count moves (compiling, the first
    rollout).

    The rate, and so the ETA, is measured from the first update on: the
    start-up before it (setting up, compiling the kernels, the first
    rollout) would make a run look many times slower than it is. Until a
    second update gives a rate, the ETA is unknown (``--:--:--``), and so is
    which limit will end the run.
    """

    def __init__(
        self,
        total: int,
        label: str = "",
        done: int = 0,
        enabled: bool = True,
        stream: Any = None,
        log_every_s: float = 30.0,
        time_limit_s: float = 0.0,
        t0: float | None = None,
    ) -> None:
        self.total, self.label, self.done, self.start = total, label, done, done
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.log_every_s = log_every_s
        self.time_limit_s = time_limit_s
        self.t0 = t0 if t0 is not None else time.perf_counter()
        self._last = time.perf_counter()
        self._interval = min(2.0, log_every_s)
        self._quarter = self._quarters()
        self._status = self._note = ""
        self._closed = False
        self._since: tuple[float, int] | None = None  # (time, count) of the first update: the rate's start

    def _quarters(self) -> int:
        return self.done * 4 // self.total if self.total > 0 else 4

    def restart_at(self, done: int) -> None:
        """Count from ``done`` (a resumed run's step, known once its checkpoint is read); the rate from there."""
        self.done = self.start = done
        self._quarter = self._quarters()
        self._since = None

    def status(self, text: str) -> None:
        """Show ``text`` (what the run is doing now) at once, and after the bar until the count moves."""
        self._status = text
        if not self.enabled:
            return
        now = time.perf_counter()
        self._last = now
        line = f"{self.line(now)} | {text}"
        self.stream.write(f"\r{line}" if self.tty else f"{line}\n")
        self.stream.flush()

    def update(self, n: int, note: str = "") -> None:
        """Add ``n`` to the count; ``note``: a few words shown after the bar (the iteration, its return)."""
        self.done += n
        if note:
            self._status, self._note = "", note
        now = time.perf_counter()
        if self._since is None and self.done > self.start:
            self._since = (now, self.done)
        if not self.enabled:
            return
        finished = self.done >= self.total
        text = self._status or self._note
        if self.tty:
            if now - self._last >= 0.2 or finished:
                self._last = now
                self.stream.write("\r" + self.line(now, text))
                self.stream.flush()
        elif self._quarters() > self._quarter or now - self._last >= self._interval:
            self._quarter, self._last = self._quarters(), now
            self._interval = min(2 * self._interval, self.log_every_s)
            self.stream.write(self.line(now, text) + "\n")
            self.stream.flush()

    def rate(self, now: float) -> float:
        """Counts per second since the first update (0.0 until a later moment gives one)."""
        if self._since is None or now <= self._since[0]:
            return 0.0
        return (self.done - self._since[1]) / (now - self._since[0])

    def eta(self, now: float) -> tuple[float, bool]:
        """(seconds left, whether the time limit sets them) at time ``now``; inf while the rate is unknown."""
        rate = self.rate(now)
        eta = max(self.total - self.done, 0) / rate if rate > 0 else math.inf
        if self.done >= self.total > 0:
            eta = 0.0
        if self.time_limit_s > 0 and math.isfinite(eta):  # which limit ends the run is known once the rate is
            left = max(self.time_limit_s - (now - self.t0), 0.0)
            if left < eta:
                return left, True
        return eta, False

    def line(self, now: float, note: str = "") -> str:
        """The bar as text, at time ``now`` (``time.perf_counter``)."""
        # a training run ends on a whole iteration, past its budget: the line stops at total/total, 100%
        # (the summary printed at the end gives the exact count)
        shown = min(self.done, self.total) if self.total > 0 else self.done
        frac = shown / self.total if self.total > 0 else 1.0
        eta, capped = self.eta(now)
        eta_s = _clock(eta) if math.isfinite(eta) else "--:--:--"
        label = f" {self.label}" if self.label else ""
        count = f"{shown:,}/{self.total:,}{label}"
        if capped:  # the time limit ends the run: progress is the time spent of it
            spent = min(max(now - self.t0, 0.0), self.time_limit_s)
            frac = spent / self.time_limit_s
            count = f"{_clock(spent)}/{_clock(self.time_limit_s)} (time limit), {self.done:,}{label}"
            eta_s += f" (time-capped at {self.time_limit_s / 60:g} min)"
        bar = "#" * int(30 * frac) + "." * (30 - int(30 * frac))
        rate = self.rate(now)
        rate_s = f"{rate:,.0f}/s" if rate > 0 else "--/s"
        text = f"[{bar}] {frac:6.1%} {count} {rate_s} ETA {eta_s}"
        return f"{text} {note}" if note else text

    def close(self) -> None:
        """End the line on a terminal; once (a run's cleanup and its error path may both call it)."""
        if self._closed:
            return
        self._closed = True
        if self.enabled and self.tty:
            self.stream.write("\n")
            self.stream.flush()
