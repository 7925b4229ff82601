"""``bobshat eval --json -`` writes the JSON alone to stdout (the table and notes go to stderr), so its
output can be piped into ``jq`` or ``json.loads``."""

from __future__ import annotations

import json

import pytest

from bobshat.cli import main


def test_eval_json_dash_puts_only_json_on_stdout(tmp_path, capsys):
    rec = tmp_path / "g.jsonl"
    argv = ["eval", "--players", "3", "--hands", "1", "--deals", "3", "--json", "-", "--records", str(rec)]
    assert main(argv) == 0  # progress bar on: it goes to stderr too
    out, err = capsys.readouterr()
    summary = json.loads(out)  # the whole of stdout is one JSON document
    assert summary["schema"] == "bobshat.eval/1" and summary["deals"] == 3
    assert "per hand" in err and f"wrote 3 records to {rec}" in err  # the table and notes are still shown


def test_eval_without_json_dash_keeps_the_table_on_stdout(tmp_path, capsys):
    path = tmp_path / "e.json"
    assert main(["eval", "--players", "3", "--hands", "1", "--deals", "2", "--json", str(path), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "per hand" in out and f"wrote {path}" in out and json.loads(path.read_text())["deals"] == 2


# --------------------------------------------------------------------------
# every output checked before the run (issue 24.5)
def _never(*a, **k):
    raise AssertionError("the run started before its outputs were checked")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["eval", "--plot", "x"], "--plot: x needs an image extension (.png, .pdf, .svg, "),
        (["eval", "--plot", "x.pnj"], "--plot: x.pnj needs an image extension (.png, .pdf, .svg, "),
        (["bids", "--plot", "x"], "--plot: x needs an image extension"),
        (["eval", "--records", "-"], "--records: '-' (standard output) is not supported here; name a file"),
        (["eval", "--plot", "-"], "--plot: '-' (standard output) is not supported here; name a file"),
        (["simulate", "--records", "-"], "--records: '-' (standard output) is not supported here; name a file"),
        (["bench", "--json", "{tmp}"], "--json: cannot write {tmp}: it is a folder; name a file"),
    ],
)
def test_outputs_are_refused_before_the_run(tmp_path, monkeypatch, capsys, argv, message):
    """`bench --json /tmp` ran the whole benchmark, then IsADirectoryError; `eval --plot x` wrote x.png and said
    "wrote x"; a bad --plot extension was refused after the tournament; `--records -` wrote a file named -."""
    import agents.arena
    import benchmarks.throughput
    import train.bids.command
    import train.evaluate.command

    for mod, name in [
        (train.evaluate.command, "cli_eval"),
        (train.bids.command, "cli_bids"),
        (benchmarks.throughput, "bench"),
    ]:
        monkeypatch.setattr(mod, name, _never)
    monkeypatch.setattr(agents.arena, "play_games", _never)
    monkeypatch.chdir(tmp_path)
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message.replace("{tmp}", str(tmp_path)) in err, err
    assert list(tmp_path.iterdir()) == []  # nothing written, not even a file named '-'


def test_eval_plot_writes_the_file_it_names(tmp_path, capsys):
    """The extension picks the format (no .png added behind the user's back) and the note names that file."""
    path = tmp_path / "scores.svg"
    assert main(["eval", "--players", "3", "--hands", "1", "--deals", "2", "--quiet", "--plot", str(path)]) == 0
    assert f"wrote {path}\n" in capsys.readouterr().out
    assert path.read_bytes().lstrip().startswith(b"<?xml") and b"<svg" in path.read_bytes()[:2000]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scores.svg"]


def test_bench_json_dash_puts_only_json_on_stdout(capsys):
    argv = ["bench", "--batches", "1", "--reps", "1", "--seconds", "0", "--no-peers", "--quiet", "--json", "-"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    rows = json.loads(out)
    assert rows and all("decisions_per_s" in r for r in rows) and "bobshat" in err
