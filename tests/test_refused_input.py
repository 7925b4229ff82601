"""Input that used to be accepted silently is refused with a message naming it: a ppo ``sample`` that
is not true/false, card ranks in non-ASCII digits, and a win-rate interval wider than 0-100% from too
few deals. (Oh Hell options given to Bob's Hat: tests/test_cli.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bobshat.cli import main
from bobshat_env.core.cards import bh_parse_card
from bobshat_env.games import make_game
from bobshat_env.records import replay_record

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("value", ["maybe", "yes", "1", "ture", ""])
def test_ppo_sample_must_be_true_or_false(value, capsys):
    from agents import make_agent

    spec = f"ppo:{ROOT / 'checkpoints' / 'bobs_hat_4p.pt'},sample={value}"
    with pytest.raises(ValueError, match=f"sample must be true or false, got '{value}'"):
        make_agent(spec, make_game("bobs_hat", players=4))
    assert main(["simulate", "--games", "1", "--agents", f"{spec},random,random,random"]) == 2
    assert "sample must be true or false" in capsys.readouterr().err


def test_ppo_sample_true_and_false_in_any_case():
    from agents import make_agent

    game = make_game("bobs_hat", players=4)
    path = ROOT / "checkpoints" / "bobs_hat_4p.pt"
    assert make_agent(f"ppo:{path},sample=TRUE", game).sample is True
    assert make_agent(f"ppo:{path},sample=false", game).sample is False


@pytest.mark.parametrize(
    "text", ["blue\u0661\u0664", "red\u0663", "black\uff11\uff12", "blue\u00b2", "blue 14", "blue014"]
)
def test_card_ranks_in_other_digits_are_not_cards(text):
    # str.isdigit() and int() read Arabic-Indic, full-width and superscript digits; a card's rank is ASCII
    with pytest.raises(ValueError, match="unknown card"):
        bh_parse_card(text)
    assert bh_parse_card("blue14") == 13 and bh_parse_card("black20") == 59


def test_a_record_with_a_non_ascii_rank_is_reported(tmp_path, capsys):
    out = tmp_path / "g.jsonl"
    assert main(["simulate", "--games", "1", "--players", "3", "--hands", "1", "--records", str(out)]) == 0
    capsys.readouterr()
    record = json.loads(out.read_text())
    card = record["hands"][0]["tricks"][0]["cards"][0]
    suit = card.rstrip("0123456789")
    arabic = "".join(chr(0x0660 + int(d)) for d in card[len(suit) :])
    record["hands"][0]["tricks"][0]["cards"][0] = suit + arabic  # blue14 -> blue١٤
    faults = replay_record(record)
    assert faults and any("unknown card" in f.message and arabic in f.message for f in faults), faults


def test_win_rate_interval_never_leaves_0_to_100_percent():
    from train.evaluate import evaluate, format_report

    game = make_game("bobs_hat", players=4, hands=2)
    ev = evaluate(game, ["strong", "random", "random", "random"], deals=2, seed=0)
    summary = ev.summary()
    for a in summary["agents"]:
        lo, hi = a["win_rate_ci95_range"]
        assert 0.0 <= lo <= a["win_rate"] <= hi <= 1.0
    strong = summary["agents"][0]
    assert strong["win_rate"] + strong["win_rate_ci95"] > 1 and strong["win_rate"] - strong["win_rate_ci95"] < 0
    text = format_report(summary)
    row = next(line for line in text.splitlines() if line.startswith("strong"))
    assert "n/a*" in row and "too few deals (2)" in text
    assert not any(f"{p}%" in row for p in range(101, 2000)), row  # no win-rate interval above 100% in the table
