"""The progress bar: a line per quarter in a log, redrawn in place on a terminal, silent when disabled."""

from __future__ import annotations

import io

import numpy as np

from train.runtime.progress import ProgressBar


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_log_gets_a_line_per_quarter_and_a_terminal_one_line_redrawn():
    log = io.StringIO()
    bar = ProgressBar(100, "games", stream=log)
    for _ in range(10):
        bar.update(10, note="it 1")
    bar.close()
    lines = log.getvalue().splitlines()
    assert [line.split()[1:3] for line in lines] == [
        ["30.0%", "30/100"],
        ["50.0%", "50/100"],
        ["80.0%", "80/100"],
        ["100.0%", "100/100"],
    ]
    assert lines[-1].startswith("[" + "#" * 30 + "]") and lines[-1].endswith("ETA 00:00:00 it 1")
    assert "games" in lines[0]

    tty = _Tty()
    bar = ProgressBar(1_000_000, "decisions", done=250_000, stream=tty)  # a resumed run: 25% already done
    bar.update(750_000)
    bar.close()
    bar.close()  # a second close (cleanup after an error path's) adds no blank line
    assert tty.getvalue().startswith("\r[") and "1,000,000/1,000,000 decisions" in tty.getvalue()
    assert tty.getvalue().endswith("\n") and tty.getvalue().count("\n") == 1

    quiet = io.StringIO()
    bar = ProgressBar(10, stream=quiet, enabled=False)
    bar.update(10)
    bar.close()
    assert quiet.getvalue() == "" and bar.done == 10


class _Clock:
    """A stand-in for time.perf_counter that moves only when told."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_eta_honours_a_time_limit_and_says_the_run_is_time_capped(monkeypatch):
    clock = _Clock()
    monkeypatch.setattr("train.runtime.progress.time.perf_counter", clock)
    log = io.StringIO()
    # 4 minutes for 10^9 decisions at 1,000/s: the decisions would take 11.6 days, the cap ends it in 4 minutes
    bar = ProgressBar(10**9, "decisions", stream=log, time_limit_s=240.0, t0=clock.now)
    clock.now += 10.0
    bar.update(1_000)  # the first update starts the rate's clock: which limit ends the run is not known yet
    assert bar.line(clock.now).endswith("1,000/1,000,000,000 decisions --/s ETA --:--:--")
    clock.now += 60.0
    bar.update(60_000)
    line = bar.line(clock.now)
    assert "1,000/s ETA 00:02:50 (time-capped at 4 min)" in line, line
    # the bar fills with the time spent of the limit (70 of 240 s), not the decisions (0.006% of the cap)
    assert line.startswith("[" + "#" * 8 + "." * 22 + "]  29.2% 00:01:10/00:04:00 (time limit), 61,000 decisions")
    clock.now += 170.0
    bar.update(170_000)
    assert bar.line(clock.now).startswith("[" + "#" * 30 + "] 100.0% 00:04:00/00:04:00 (time limit)")
    # without a limit, or one that ends later than the decisions, the ETA is the decisions' and not capped
    free = ProgressBar(121_000, "decisions", stream=io.StringIO(), time_limit_s=3600.0, t0=clock.now - 70.0)
    free.update(1_000)
    clock.now += 60.0
    free.update(60_000)
    assert free.line(clock.now).endswith("61,000/121,000 decisions 1,000/s ETA 00:01:00")
    long = ProgressBar(10**9, stream=io.StringIO(), t0=clock.now - 60.0)
    long.update(1)
    clock.now += 60.0
    long.update(60_000)
    assert "ETA 277:45:40" in long.line(clock.now)  # past a day: hours, not a time of day that wraps


def test_the_start_up_does_not_count_in_the_rate_or_the_eta(monkeypatch):
    """The demo's first line promised ETA 00:29:30 for a 98-s run: the rate counted the compile time."""
    clock = _Clock()
    monkeypatch.setattr("train.runtime.progress.time.perf_counter", clock)
    log = io.StringIO()
    bar = ProgressBar(3_000_000, "decisions", stream=log, t0=clock.now)
    bar.status("preparing the game kernels")
    clock.now += 90.0  # setting up and compiling
    bar.update(30_000)  # the first step: a line (2 s since the status), but no rate yet
    first = log.getvalue().splitlines()[-1]
    assert "30,000/3,000,000 decisions --/s ETA --:--:--" in first, first
    for _ in range(10):  # then 30,000 decisions a second: 99 s to go at the tenth second
        clock.now += 1.0
        bar.update(30_000)
    assert "330,000/3,000,000 decisions 30,000/s ETA 00:01:29" in bar.line(clock.now)
    bar.restart_at(330_000)  # a resumed run's count: the rate starts again at its next update
    assert "--/s ETA --:--:--" in bar.line(clock.now)


def test_a_log_gets_lines_in_the_first_seconds_then_every_log_every_s(monkeypatch):
    clock = _Clock()
    monkeypatch.setattr("train.runtime.progress.time.perf_counter", clock)
    log = io.StringIO()
    bar = ProgressBar(10**9, "decisions", stream=log, log_every_s=30.0)
    bar.status("compiling")
    written = []
    for _ in range(120):  # two minutes, one update a second, far below a quarter
        clock.now += 1.0
        bar.update(1_000)
        written.append(len(log.getvalue().splitlines()))
    lines = log.getvalue().splitlines()
    assert lines[0].endswith("| compiling") and "0/1,000,000,000 decisions" in lines[0]
    assert written[1] == 2 and "compiling" in lines[1]  # after 2 s a line, still saying what the run does
    gaps = np.diff([i for i in range(1, len(written)) if written[i] > written[i - 1]])
    assert list(gaps[:3]) == [4, 8, 16] and set(gaps[3:]) == {30}  # 2, 4, 8, 16 s, then every 30 s
