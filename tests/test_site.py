"""The documentation site (``mkdocs.yml``, ``docs/``) cannot drift from the code.

``mkdocs build --strict`` passes (a broken link or anchor, a page missing from the nav, a docstring the API
reference cannot read: each is a warning, and strict makes it a failure). Every ```python block of every page
runs as written, and every ```bash block too, in a scratch folder where the repository's ``configs/``,
``checkpoints/``, ``benchmarks/``, ``examples/`` and ``scripts/`` are at hand, as they are for a reader in a
clone. A block too long for a test (a 30-minute training run, a server that runs until Ctrl-C) carries
``<!-- not run: REASON -->`` on the line right before it: the marker is required, so no block is left out
silently, and a marker before anything but a shell block is an error.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
# Path.rglob does not descend into docs/notebooks (a link to notebooks/): the notebooks have their own test.
PAGES = sorted(DOCS.rglob("*.md"))
SHELL = ("bash", "sh", "shell", "console")
NOT_RUN = re.compile(r"<!-- not run: (\S[^>]*?) -->\n\Z")
FENCE = re.compile(r"^```(\w*)[ \t]*\n(.*?)^```[ \t]*$", flags=re.S | re.M)
AT_HAND = ("configs", "checkpoints", "benchmarks", "examples", "scripts")


def fenced_blocks(text: str) -> list[tuple[int, str, str, str | None]]:
    """(first code line number, language, code, the not-run reason or None) of every fenced block."""
    out = []
    for m in FENCE.finditer(text):
        before = text[: m.start()]
        marker = NOT_RUN.search(before)
        out.append((text.count("\n", 0, m.start(2)) + 1, m.group(1), m.group(2), marker.group(1) if marker else None))
    return out


def _name(page: Path) -> str:
    return str(page.relative_to(ROOT))


BLOCKS = [(page, *block) for page in PAGES for block in fenced_blocks(page.read_text(encoding="utf-8"))]
# the README's shell blocks (its Python blocks are tests/test_readme.py's)
README_SHELL = [(ROOT / "README.md", *b) for b in fenced_blocks((ROOT / "README.md").read_text(encoding="utf-8"))]
PYTHON = [(page, line, code) for page, line, lang, code, why in BLOCKS if lang == "python" and why is None]
BASH = [(page, line, code) for page, line, lang, code, why in BLOCKS + README_SHELL if lang in SHELL and why is None]


def test_the_parser_sees_blocks_and_markers():
    text = "a\n```python\nx = 1\n```\n<!-- not run: a server -->\n```bash\nbobshat serve\n```\n```bash\nls\n```\n"
    assert fenced_blocks(text) == [
        (3, "python", "x = 1\n", None),
        (7, "bash", "bobshat serve\n", "a server"),
        (10, "bash", "ls\n", None),
    ]
    assert fenced_blocks("<!-- not run: far above -->\n\ntext\n```bash\nls\n```\n")[0][3] is None
    assert fenced_blocks("<!-- not run: a blank line below -->\n\n```bash\nls\n```\n")[0][3] is None


def test_the_site_has_pages_and_blocks_to_run():
    assert {"getting-started.md", "index.md"} <= {p.name for p in PAGES}
    assert len(PYTHON) >= 5 and len(BASH) >= 5, (len(PYTHON), len(BASH))


def test_every_not_run_marker_stands_before_a_shell_block():
    """A marker before a Python block, prose or nothing would skip nothing and say it did."""
    for page in [*PAGES, ROOT / "README.md"]:
        text = page.read_text(encoding="utf-8")
        for m in re.finditer(r"<!-- not run:", text):
            after = text[m.start() :]
            assert re.match(r"<!-- not run: \S[^>]*? -->\n```(?:" + "|".join(SHELL) + r")\n", after), (
                f"{_name(page)}:{text.count(chr(10), 0, m.start()) + 1}: a not-run marker must stand right before "
                "a shell block and give its reason"
            )


def test_every_code_block_is_python_shell_or_output():
    """A block in another language would be run by nothing: name the ones that are output or data."""
    for page, line, lang, _code, _why in BLOCKS:
        assert lang in ("python", *SHELL, "text", "json", "yaml"), f"{_name(page)}:{line}: a ```{lang} block"


@pytest.mark.parametrize(("page", "line", "code"), PYTHON, ids=[f"{_name(p)}:{n}" for p, n, _ in PYTHON])
def test_docs_python_block_runs(page: Path, line: int, code: str, tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a block that writes files writes them here
    padded = "\n" * (line - 1) + code  # tracebacks name the page's own line numbers
    exec(compile(padded, _name(page), "exec"), {"__name__": "__docs__"})


def _scratch(tmp_path: Path) -> dict[str, str]:
    """A reader's clone, as far as the blocks see it: the repository's folders linked, anything new written here."""
    for name in AT_HAND:
        (tmp_path / name).symlink_to(ROOT / name, target_is_directory=True)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    env["PATH"] = os.pathsep.join((str(Path(sys.executable).parent), env.get("PATH", "")))  # this venv's bobshat
    return env


@pytest.mark.parametrize(("page", "line", "code"), BASH, ids=[f"{_name(p)}:{n}" for p, n, _ in BASH])
def test_docs_shell_block_runs(page: Path, line: int, code: str, tmp_path: Path):
    env = _scratch(tmp_path)
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", code],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    said = f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    assert proc.returncode == 0, f"{_name(page)}:{line} exited {proc.returncode}\n{said}"


def test_mkdocs_build_strict_passes(tmp_path: Path):
    pytest.importorskip("mkdocs")
    pytest.importorskip("material")
    pytest.importorskip("mkdocstrings")
    pytest.importorskip("mkdocs_jupyter")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-5000:]
    built = {str(p.relative_to(tmp_path / "site")) for p in (tmp_path / "site").rglob("index.html")}
    for page in ("getting-started", "guides/training", "results", "api/envs", "notebooks/01_quickstart", "rules"):
        assert f"{page}/index.html" in built, page
