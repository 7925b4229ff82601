"""The progress bar: a line per quarter in a log, redrawn in place on a terminal, silent when disabled."""

from __future__ import annotations

import io

from train.progress import ProgressBar


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
    assert tty.getvalue().startswith("\r[") and "1,000,000/1,000,000 decisions" in tty.getvalue()
    assert tty.getvalue().endswith("\n") and tty.getvalue().count("\n") == 1

    quiet = io.StringIO()
    bar = ProgressBar(10, stream=quiet, enabled=False)
    bar.update(10)
    bar.close()
    assert quiet.getvalue() == "" and bar.done == 10
