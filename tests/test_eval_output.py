"""``bobshat eval --json -`` writes the JSON alone to stdout (the table and notes go to stderr), so its
output can be piped into ``jq`` or ``json.loads``."""

from __future__ import annotations

import json

from bobshat_env.cli import main


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
