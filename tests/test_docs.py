"""docs/rules.md and docs/records.md say what the code does: every worked example and record is recomputed here."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from bobshat.cli import main
from bobshat_env.core import bobs_hat, oh_hell
from bobshat_env.core.config import BobsHatConfig, OhHellConfig
from bobshat_env.records import replay_record

ROOT = Path(__file__).resolve().parents[1]
RULES = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
RECORDS = (ROOT / "docs" / "records.md").read_text(encoding="utf-8")


def examples(text: str) -> list[tuple[dict[str, str], list[list[str]]]]:
    """Each ``<!-- example: game key=value ... -->`` with the rows of the table right below it."""
    out = []
    for m in re.finditer(r"<!-- example: (\w+)((?: [\w]+=[^ ]+)*) -->\n((?:\|.*\|\n)+)", text):
        params = {"game": m.group(1), **dict(kv.split("=", 1) for kv in m.group(2).split())}
        rows = [[c.strip() for c in line.strip("|").split("|")] for line in m.group(3).splitlines()]
        out.append((params, rows[2:]))  # skip the header and the --- line
    return out


def _bid_code(text: str) -> int:
    if text == "none":
        return 0
    most, fewest = [], 0
    for part in (p.strip() for p in text.split("+")):
        if part == "fewest":
            fewest += 1
        elif part == "double fewest":
            fewest += 2
        else:
            most.append(part.replace("most ", "most_"))
    return bobs_hat.bid_code(most, fewest)


def _points(cell: str) -> int:
    return int(cell.replace("+", ""))


EXAMPLES = examples(RULES)


def test_rules_has_worked_examples_for_both_games():
    games = [p["game"] for p, _ in EXAMPLES]
    assert games.count("bobs_hat") >= 5 and games.count("oh_hell") >= 2


@pytest.mark.parametrize(("params", "rows"), EXAMPLES)
def test_worked_example_scores_are_the_engines(params, rows):
    P = int(params["players"])
    assert len(rows) == P and [int(r[0]) for r in rows] == list(range(P))
    if params["game"] == "bobs_hat":
        options = {o: True for o in params.get("options", "").split(",") if o}
        cfg = BobsHatConfig(players=P, **options)
        size = int(params["hand_size"])
        taken = np.array([[[int(r[2]), int(r[3]), int(r[4])] for r in rows]])
        assert [int(r[5]) for r in rows] == taken[0].sum(axis=1).tolist()  # the cards column adds up
        assert taken.sum() == P * size  # every card dealt was taken
        bids = np.array([[_bid_code(r[1]) for r in rows]])
        got = bobs_hat.score_hand(cfg, bids, taken, int(params["hat"]), int(params["holder"]), size)
        assert got[0].tolist() == [_points(r[6]) for r in rows]
    else:
        bids = np.array([[int(r[1]) for r in rows]])
        taken = np.array([[int(r[2]) for r in rows]])
        for col, scoring in enumerate(("positive", "neutral", "negative"), start=3):
            got = oh_hell.score_hand(OhHellConfig(players=P, scoring=scoring), bids, taken)
            assert got[0].tolist() == [_points(r[col]) for r in rows], scoring


def _json_blocks(text: str) -> list[dict]:
    return [json.loads(b) for b in re.findall(r"^```json\n(.*?)^```$", text, flags=re.S | re.M)]


def _command(text: str, game: str) -> list[str]:
    """The `bobshat simulate ...` command the doc names for the example of ``game``."""
    cmds = re.findall(r"`bobshat (simulate [^`]*--records game\.jsonl)`", text)
    (cmd,) = [c for c in cmds if ("--game oh_hell" in c) == (game == "oh_hell")]
    return cmd.split()


def test_records_examples_are_what_the_code_writes(tmp_path, capsys):
    bh_doc, oh_doc = _json_blocks(RECORDS)
    for doc in (bh_doc, oh_doc):
        argv = [
            a if a != "game.jsonl" else str(tmp_path / f"{doc['game']}.jsonl") for a in _command(RECORDS, doc["game"])
        ]
        assert main(argv) == 0
    capsys.readouterr()
    bh = json.loads((tmp_path / "bobs_hat.jsonl").read_text())
    assert bh_doc == bh and replay_record(bh) == []
    oh = json.loads((tmp_path / "oh_hell.jsonl").read_text())
    shown = [h for h in oh_doc["hands"] if isinstance(h, dict)]
    assert oh_doc["hands"][len(shown) :] == [f"... hands {len(shown) + 1} to {len(oh['hands'])} ..."]
    assert shown == oh["hands"][: len(shown)]
    assert {k: v for k, v in oh_doc.items() if k != "hands"} == {k: v for k, v in oh.items() if k != "hands"}
    assert replay_record(oh) == []

    # the replay output shown: the Bob's Hat record with its last trick's winner changed to 0
    bh["hands"][0]["tricks"][-1]["winner"] = 0
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(bh) + "\n")
    assert main(["replay", str(bad)]) == 1
    shown_text = re.search(r"^```text\n(.*?)^```$", RECORDS, flags=re.S | re.M).group(1)
    assert capsys.readouterr().out == shown_text


def test_docs_are_linked_and_the_old_names_are_gone():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "docs/rules.md" in readme and "docs/records.md" in readme
    assert "](records.md)" in RULES and "](rules.md#card-notation)" in RECORDS
    files = [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]
    for folder in ("bobshat_env", "agents", "train", "tests", "benchmarks", "examples", "notebooks", "scripts"):
        files += [p for ext in ("*.py", "*.ipynb", "*.md") for p in (ROOT / folder).rglob(ext)]
    old = re.compile(r"(?<![\w/])(RULES|RECORDS)\.md")
    stale = [
        str(p.relative_to(ROOT))
        for p in files
        if p.name != "test_docs.py" and old.search(p.read_text(errors="replace"))
    ]
    assert stale == [], "cite docs/rules.md or docs/records.md"
