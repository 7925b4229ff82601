"""Every Python code block of README.md runs as written, so the documentation cannot drift from the code."""

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
