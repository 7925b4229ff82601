"""The mutation lists (scripts/mutants/*.toml) stay current: each mutant's line is in its file exactly once.

``scripts/mutate.py`` refuses a mutant whose ``old`` text moved, but only when someone runs that list;
nine of them had gone stale unseen as the code moved on (a function moved to another module, a flag
renamed). This check fails at once instead, naming the mutant to rewrite.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LISTS = sorted((ROOT / "scripts" / "mutants").glob("*.toml"))


def _mutate():
    spec = importlib.util.spec_from_file_location("mutate_script", ROOT / "scripts" / "mutate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (its dataclasses look their module up there)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("path", LISTS, ids=lambda p: p.name)
def test_every_mutant_still_finds_its_line(path: Path) -> None:
    default_tests, mutants = _mutate().load_mutants(path)
    assert mutants, f"{path.name} lists no mutant"
    for m in mutants:
        target = ROOT / m.file
        assert target.is_file(), f"{path.name}: mutant {m.name!r} names {m.file}, which is gone"
        count = target.read_text().count(m.old)
        assert count == 1, f"{path.name}: mutant {m.name!r}: its line occurs {count} times in {m.file}; rewrite it"
        for test in m.tests or default_tests:
            file = test.split("::")[0]
            assert (ROOT / file).is_file(), f"{path.name}: mutant {m.name!r} runs {file}, which is gone"


def test_the_check_sees_a_stale_mutant(tmp_path: Path) -> None:
    """A list whose line moved is caught by the same count (the check above can fail)."""
    stale = tmp_path / "stale.toml"
    stale.write_text('[[mutant]]\nname = "gone"\nfile = "agents/base.py"\nold = "no such line x7"\nnew = "y"\n')
    _, mutants = _mutate().load_mutants(stale)
    assert (ROOT / mutants[0].file).read_text().count(mutants[0].old) == 0
