"""Every Python code block of README.md runs as written, so the documentation cannot drift from the code; and the
facts that README.md and the site's pages (docs/) show are the code's. (tests/test_site.py runs the shell blocks of
both and every block of docs/.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks(text: str) -> list[tuple[int, str]]:
    """(first line number, code) of every ```python fenced block."""
    return [
        (text.count("\n", 0, m.start(1)) + 1, m.group(1))
        for m in re.finditer(r"^```python[ \t]*\n(.*?)^```[ \t]*$", text, flags=re.S | re.M)
    ]


BLOCKS = python_blocks(README.read_text(encoding="utf-8"))


def test_the_readme_has_python_blocks():
    assert len(BLOCKS) >= 2
    assert python_blocks("a\n```python\nx = 1\n```\n```bash\nls\n```\n") == [(3, "x = 1\n")]


@pytest.mark.parametrize(("line", "code"), BLOCKS, ids=[f"README.md:{line}" for line, _ in BLOCKS])
def test_readme_python_block_runs(line, code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a block that writes files writes them here
    padded = "\n" * (line - 1) + code  # tracebacks name the README's own line numbers
    exec(compile(padded, str(README.name), "exec"), {"__name__": "__readme__"})


ROOT = README.parent
TEXT = README.read_text(encoding="utf-8")
DOCS = ROOT / "docs"
# where the README's long sections moved: the tournament's output, the browser
EVAL_RESULTS = (DOCS / "results" / "evaluation.md").read_text(encoding="utf-8")
PLAY_GUIDE = (DOCS / "guides" / "play.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("where", ["README.md", "docs/guides/bids.md"])
def test_every_checkpoint_hash_the_readme_shows_is_the_files(where):
    """The Suite v1 hashes: the prefixes shown are the shipped files' SHA-256, as `bids` records it."""
    import hashlib

    from bobshat_env.games import make_game
    from train.bids.bidders import shipped_play, spec_sha256

    text = (ROOT / where).read_text(encoding="utf-8")
    shown = re.findall(r"`checkpoints/([\w.]+\.pt)`,(?: SHA-256)?\s+`([0-9a-f]{8,64})(?:\.\.\.)?`", text)
    assert {name for name, _ in shown} >= {"bobs_hat_4p.pt", "oh_hell_4p.pt"}  # the suite's play policies
    hexes = set(re.findall(r"`([0-9a-f]{12,64})(?:\.\.\.)?`", text))
    assert hexes == {h for _, h in shown}, f"a hash {where} shows is not next to the file it is of"
    for name, prefix in shown:
        digest = hashlib.sha256((ROOT / "checkpoints" / name).read_bytes()).hexdigest()
        assert digest.startswith(prefix), f"{where}: checkpoints/{name} is {digest[:12]}..., not {prefix}..."
        game, players = name.removesuffix(".pt").rsplit("_", 1)
        assert spec_sha256(shipped_play(make_game(game, players=int(players[:-1])))) == digest  # the JSON's play_sha256


def _help_texts() -> str:
    """Every `bobshat` command's --help, as one text."""
    from bobshat.cli import build_parser

    parser = build_parser()
    texts = [parser.format_help()]
    for action in parser._subparsers._group_actions:  # the sub-commands
        texts += [sub.format_help() for sub in action.choices.values()]
    return "\n".join(texts)


def test_every_runs_path_in_the_readme_and_help_names_a_file_training_writes():
    """`ppo:runs/my_run/model.pt` was in the README and `serve --help`: training writes policy.pt."""
    from agents.checkpoint import RUN_FILES
    from train.exploit import REPORT

    written = {*RUN_FILES, REPORT}
    sources = {"README.md": TEXT, "--help": _help_texts()}
    for folder in ("bobshat_env", "agents", "train", "docs", "examples", "notebooks", "scripts"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in (".py", ".md", ".ipynb", ".sh"):
                sources[str(path.relative_to(ROOT))] = path.read_text(encoding="utf-8")
    seen = 0
    for where, text in sources.items():
        for name in re.findall(r"\bruns?/[\w<>{}.-]+/([\w.]+\.(?:pt|json))\b", text):
            seen += 1
            assert name in written, f"{where} names runs/.../{name}: training writes {sorted(written)}"
    assert seen >= 5


def test_every_output_shown_follows_its_command():
    """'The output of the command above' must come right after that command: its deals and agents."""
    no_fence = r"(?:(?!```).)*"  # text that opens or closes no code block
    pattern = rf"```bash\n({no_fence})```\n\s*The output of the command above{no_fence}```text\n(.*?)```"
    pairs = re.findall(pattern, EVAL_RESULTS, flags=re.S)
    assert pairs and len(pairs) == EVAL_RESULTS.count("The output of the command above")
    for command, output in pairs:
        deals = re.search(r"--deals (\d+)", command).group(1)
        assert f"duplicate: {deals} deals" in output
        for agent in re.search(r"--agents (\S+)", command).group(1).split(","):
            assert re.search(rf"^{re.escape(agent)} ", output, flags=re.M), agent


def test_the_play_guide_names_every_shipped_policy_serve_offers():
    from bobshat.web.session import AgentCatalog

    offered = AgentCatalog().shipped
    assert len(offered) == 8
    serve = PLAY_GUIDE[PLAY_GUIDE.index("## Playing, watching and replaying in the browser") :]
    serve = serve[: serve.index("\n## ", 1)] if "\n## " in serve[1:] else serve
    for alias in offered:
        assert f"`{alias}`" in serve, f"docs/guides/play.md's serve section does not name {alias}"
