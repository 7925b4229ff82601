"""Small things a new user tripped on: help texts, the table's words, the training progress bar."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agents.registry import available
from bobshat.cli import main
from bobshat_env.core import bobs_hat as bh
from bobshat_env.core import rng
from bobshat_env.games import make_game
from bobshat_env.text import render
from bobshat_env.text.bobs_hat import bid_text

ROOT = Path(__file__).resolve().parents[1]
SHIPPED_AGENTS = {"random", "simple", "strong", "pimc", "ppo"}


def _shipped() -> list[str]:
    """The agents the package registers (a fresh interpreter: tests register agents of their own)."""
    code = "from agents.registry import available; print(','.join(available()))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    return out.stdout.strip().split(",")


def test_top_level_help_shows_no_rst_markup(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "``" not in out and "The bobshat command line" in out


@pytest.mark.parametrize("command, flag", [("simulate", "--agents"), ("eval", "--agents"), ("play", "--opponents")])
def test_agent_help_lists_every_registered_agent(command, flag, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    out = " ".join(capsys.readouterr().out.split())  # argparse wraps the help text
    text = out[out.rindex(flag + " ") :]  # its entry under options, after the usage line
    assert SHIPPED_AGENTS <= set(available())
    for name in available():
        assert re.search(rf"\b{name}\b", text), f"{command} --help does not mention agent {name!r}"
    assert "pimc[:worlds=N" in text and "ppo:PATH[,sample=true|false]" in text and "bid=SPEC+play=SPEC" in text


def test_the_command_line_guide_names_every_agent_spec():
    readme = (ROOT / "docs" / "guides" / "command-line.md").read_text()
    shipped = _shipped()
    assert SHIPPED_AGENTS <= set(shipped)
    for name in shipped:
        assert f"| `{name}" in readme, f"docs/guides/command-line.md's agent table lacks {name!r}"
    assert "`bid=SPEC+play=SPEC`" in readme


def _bobs_hat_until(game, stop):
    state = game.init(rng.game_keys(3, np.arange(1), 0))
    while not stop(state):
        mask = game.legal_action_mask(state)
        game.step(state, np.array([int(np.flatnonzero(mask[0])[-1])]))
    return state


def test_a_hidden_hand_of_one_card_says_1_card():
    game = make_game("bobs_hat", players=3, hands=1)  # 5 cards each: after 4 tricks, one left
    state = _bobs_hat_until(game, lambda s: int(s.tricks_done[0]) == 4)
    text = render(game, state, 0, show_hands=0)
    assert "(1 card)" in text and "(1 cards)" not in text


def test_the_table_shows_bids_as_they_are_typed_and_names_the_taken_suits():
    from bobshat_env.text.bobs_hat import PlayText

    game = make_game("bobs_hat", players=4)
    state = _bobs_hat_until(game, lambda s: int(s.phase[0]) == bh.PLAY)
    text = render(game, state, 0)
    assert "taken blue/red/black" in text and "b/r/k" not in text
    assert "most_" not in text  # records say most_red; the table, like the prompt, says red
    for p in range(4):
        assert bid_text(int(state.bids[0, p])) in text
    for code in range(bh.N_BID_CODES):  # what the table shows is what play accepts, for every bid
        assert PlayText._parse_bid(bid_text(code)) == code
    assert bid_text(0) == "none" and bid_text(2 + 8) == "red+fewest"


def test_training_progress_stops_at_100_percent(capsys):
    from train.runtime.progress import ProgressBar

    bar = ProgressBar(total=3_000_000, label="decisions", enabled=True)
    bar.update(3_010_560, "it 12")  # runs end on whole iterations, a little past the budget
    line = capsys.readouterr().err
    assert "100.0%" in line and "3,000,000/3,000,000" in line and "3,010,560" not in line
    assert "#" * 30 in line


def _fake_command(path: Path, body: str) -> None:
    path.write_text("#!/usr/bin/env bash\n" + body)
    path.chmod(0o755)


@pytest.mark.parametrize("has_torch", [False, True])
def test_install_script_says_each_step_before_pip_runs(tmp_path, has_torch):
    """pip runs quietly for minutes: each step is announced on its own line first, and the end says how long."""
    fake = tmp_path / "python"
    torch_check = "echo 2.13.0; exit 0" if has_torch else "exit 1"
    _fake_command(fake, f'if [ "$1" = -c ]; then {torch_check}; fi\necho "PIP $*"\n')
    out = subprocess.run(
        ["bash", str(ROOT / "scripts" / "install.sh"), "--with-sb3"],
        env={"PATH": "/usr/bin:/bin", "PYTHON": str(fake)},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert out[0].startswith("install.sh: installing bobshat")  # before anything slow
    pips = [i for i, line in enumerate(out) if line.startswith("PIP ")]
    assert out[pips[-1]] == "PIP -m pip install --quiet -e .[dev,ray,docs,sb3]"
    assert "with extras dev,ray,docs,sb3" in out[pips[-1] - 1]  # said just before it runs
    if has_torch:
        assert len(pips) == 1 and any("torch 2.13.0 is installed: keeping it" in line for line in out)
    else:
        assert out[pips[0]] == "PIP -m pip install --quiet torch==2.13.0"
        assert "installing torch 2.13.0" in out[pips[0] - 1]
    assert re.fullmatch(r"install\.sh: done in \d+ s", out[-1])


def test_demo_script_says_how_long_training_took_and_its_rate(tmp_path):
    """The demo's timing depends on the machine's load: its output gives this run's time and rate."""
    (tmp_path / "scripts").mkdir()
    demo = tmp_path / "scripts" / "demo.sh"
    demo.write_text((ROOT / "scripts" / "demo.sh").read_text())
    bindir = tmp_path / "bin"
    bindir.mkdir()
    # a stand-in `bobshat`: train writes policy.pt.json and its summary line, eval prints a table
    _fake_command(
        bindir / "bobshat",
        'if [ "$1" = train ]; then\n'
        '  run=$(echo "$@" | sed "s/.*--run-name \\([^ ]*\\).*/\\1/"); mkdir -p runs/$run\n'
        "  echo '{\"global_step\": 3010560}' > runs/$run/policy.pt.json\n"
        '  echo "${SUMMARY_LINE:-}"\n'
        "else echo 'the evaluation table'; fi\n",
    )
    env = {"PATH": f"{bindir}:/usr/bin:/bin", "PYTHON": sys.executable}
    line = '{"global_step": 3010560, "learner_decisions": 1900000, "seconds": 30.1, "charts/SPS": 100000.0}'
    out = subprocess.run(
        ["bash", str(demo)], env=env | {"SUMMARY_LINE": line}, capture_output=True, text=True, check=True
    ).stdout
    assert "the evaluation table" in out
    assert "demo: training took 30.1 s for 3,010,560 table decisions, 100,019 decisions/s" in out
    # a train that prints no summary: the wall time and the decisions its policy.pt.json records
    out = subprocess.run(["bash", str(demo)], env=env, capture_output=True, text=True, check=True).stdout
    m = re.search(r"demo: training took (\d+\.\d) s for 3,010,560 table decisions, ([\d,]+) decisions/s", out)
    assert m and int(m.group(2).replace(",", "")) == round(3010560 / float(m.group(1)))
