"""The tutorial notebooks run top to bottom (small budgets; deselect with ``-m 'not notebooks'``),
and the generated observation tables of docs/guides/envs.md still match the code.

Each notebook is executed in a fresh kernel, in a scratch working folder (so
nothing it writes lands in the repository); any cell that raises fails the
test with the cell's error. Notebooks are stored without outputs, and the test checks
that too, so the repository stays small and diffs stay readable.
"""

from __future__ import annotations

from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
CELL_TIMEOUT_S = 300
ENVS_GUIDE = Path(__file__).resolve().parents[1] / "docs" / "guides" / "envs.md"


def _ids(paths: list[Path]) -> list[str]:
    return [p.stem for p in paths]


def test_there_are_notebooks():
    assert NOTEBOOKS, "no notebooks found under notebooks/"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_notebook_is_stored_without_outputs(path: Path):
    nbformat = pytest.importorskip("nbformat")
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    dirty = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and (c.outputs or c.execution_count)]
    assert not dirty, f"{path.name}: cells {dirty} keep outputs; clear them before committing"


@pytest.mark.notebooks
@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_notebook_runs_top_to_bottom(path: Path, tmp_path: Path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb,
        timeout=CELL_TIMEOUT_S,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors


def test_the_envs_guide_observation_tables_match_the_layouts():
    from bobshat_env.core import bobs_hat, oh_hell
    from bobshat_env.core.config import BobsHatConfig, OhHellConfig

    text = ENVS_GUIDE.read_text(encoding="utf-8")
    for layout in (bobs_hat.layout(BobsHatConfig(players=4)), oh_hell.layout(OhHellConfig(players=4))):
        assert f"({layout.size} floats)" in text
        for row in layout.table().splitlines()[2:]:  # "| name | offset | shape |"
            assert row + " " in text, f"docs/guides/envs.md: no row {row!r} (regenerate with layout.table())"
