"""Every package the code and the suite import is one that the project's install names.

A package that only one machine has hides in a suite that passes there: the fuzz
suite once imported ``hypothesis``, which no extra named, and CI stayed green
because the CI machine's system Python had it, while a fresh clone's virtual
environment stopped at collection. ``.ci/run`` now installs into a fresh
environment, which catches such a package when CI runs; this test catches it on
any machine, from the sources alone: each third-party module imported by the
project (``import``, ``from ... import`` and ``pytest.importorskip("...")``)
must come from a distribution that ``pyproject.toml`` names directly, in the
dependencies or, for the tests, in an extra that ``scripts/install.sh``
installs. A module that only arrives as some other package's dependency is not
enough (``scipy`` came with ``open-spiel``): that package may drop it.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PROJECT = PYPROJECT["project"]["name"]
SOURCE_DIRS = ("bobshat_env", "agents", "train", "benchmarks", "examples", "scripts")


def _name(requirement: str) -> str:
    """A requirement's distribution name, normalized (PEP 503): ``"ray[default]>=2.40"`` -> ``"ray"``."""
    got = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    assert got, f"pyproject.toml: cannot read the requirement {requirement!r}"
    return re.sub(r"[-_.]+", "-", got.group(1)).lower()


def _extras_of(requirement: str) -> list[str]:
    got = re.search(r"\[([^\]]*)\]", requirement)
    return [e.strip() for e in got.group(1).split(",")] if got else []


def declared(extras: list[str]) -> set[str]:
    """Distributions named by the dependencies and the given extras, following ``bobshat[web]`` self-references."""
    optional = PYPROJECT["project"].get("optional-dependencies", {})
    names = {_name(r) for r in PYPROJECT["project"]["dependencies"]}
    todo, seen = list(extras), set()
    while todo:
        extra = todo.pop()
        if extra in seen:
            continue
        seen.add(extra)
        assert extra in optional, f"pyproject.toml has no extra {extra!r}"
        for req in optional[extra]:
            if _name(req) == PROJECT:
                todo.extend(_extras_of(req))
            else:
                names.add(_name(req))
    return names


def install_extras() -> list[str]:
    """The extras ``scripts/install.sh`` installs, as CI runs it (``--with-sb3``)."""
    script = (ROOT / "scripts" / "install.sh").read_text(encoding="utf-8")
    base = re.search(r"^EXTRAS=([\w,]+)", script, re.M)
    assert base, "scripts/install.sh: no EXTRAS= line"
    extras = base.group(1).split(",")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    for flag, extra in re.findall(r"--with-(\w+)\)\s*EXTRAS=\"\$EXTRAS,(\w+)\"", script):
        if f"install.sh --with-{flag}" in ci:
            extras.append(extra)
    return extras


def imported_modules(path: Path) -> set[str]:
    """Top-level names of the modules a file imports (absolute imports, and ``importorskip`` strings)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "importorskip"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.add(node.args[0].value.split(".")[0])
    return found


def local_modules() -> set[str]:
    """Names that resolve inside the repository: its packages, and modules the tests and examples put on sys.path."""
    names = {p.name for p in ROOT.iterdir() if (p / "__init__.py").exists()} | {"tests"}
    for folder in ("tests", "examples", "scripts"):
        names.update(p.stem for p in (ROOT / folder).glob("*.py"))
    return names


def third_party(paths: list[Path]) -> dict[str, list[str]]:
    """Each third-party top-level module imported by ``paths`` -> the files that import it."""
    local = local_modules() | set(sys.stdlib_module_names) | {"__future__"}
    out: dict[str, list[str]] = {}
    for path in paths:
        for mod in imported_modules(path):
            if mod not in local:
                out.setdefault(mod, []).append(str(path.relative_to(ROOT)))
    return out


def undeclared(modules: dict[str, list[str]], names: set[str]) -> list[str]:
    """One line per module that no distribution in ``names`` provides."""
    providers = importlib.metadata.packages_distributions()
    problems = []
    for mod, files in sorted(modules.items()):
        dists = {re.sub(r"[-_.]+", "-", d).lower() for d in providers.get(mod, [])}
        if not dists:
            problems.append(f"{mod} (imported by {', '.join(sorted(files))}) is not installed here")
        elif not dists & names:
            problems.append(
                f"{mod} (imported by {', '.join(sorted(files))}) comes from {', '.join(sorted(dists))}, "
                "which pyproject.toml does not name"
            )
    return problems


def _python_files(*folders: str) -> list[Path]:
    return sorted(p for f in folders for p in (ROOT / f).rglob("*.py"))


def test_every_package_the_suite_imports_is_named_by_an_extra_that_install_sh_installs():
    names = declared(install_extras())
    problems = undeclared(third_party(_python_files("tests")), names)
    assert not problems, "the suite imports packages a fresh install lacks:\n" + "\n".join(problems)


def test_every_package_the_code_imports_is_named_by_pyproject():
    names = declared(list(PYPROJECT["project"].get("optional-dependencies", {})))
    problems = undeclared(third_party(_python_files(*SOURCE_DIRS)), names)
    assert not problems, "the code imports packages pyproject.toml does not name:\n" + "\n".join(problems)


def test_the_check_finds_a_package_that_no_extra_names(tmp_path):
    """The check itself, seen red: an installed package that the extras do not name is reported; numpy is not."""
    fake = tmp_path / "test_fake.py"
    fake.write_text("import pytest\nhypothesis = pytest.importorskip('hypothesis.strategies')\nimport numpy\n")
    names = declared(["dev"]) - {"hypothesis"}
    problems = undeclared({m: ["test_fake.py"] for m in imported_modules(fake) - {"pytest"}}, names)
    assert [p.split(" ")[0] for p in problems] == ["hypothesis"]


@pytest.mark.parametrize("extra", ["dev", "ray", "sb3"])
def test_install_sh_as_ci_runs_it_installs_the_test_extras(extra):
    assert extra in install_extras()


def test_every_slow_test_listed_exists():
    """tests/slow_tests.txt names test functions by ``file::function``: a renamed or removed one is named here."""
    from conftest import slow_tests

    missing = []
    for entry in sorted(slow_tests()):
        path, _, name = entry.partition("::")
        source = ROOT / path
        if not source.is_file() or not re.search(rf"^(?:async )?def {re.escape(name)}\(", source.read_text(), re.M):
            missing.append(entry)
    assert slow_tests() and not missing, f"tests/slow_tests.txt names tests that do not exist: {missing}"
