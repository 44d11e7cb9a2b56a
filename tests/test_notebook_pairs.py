"""Notebooks are reviewable text (issue 15): each book chapter (``book/NN_*.ipynb``) and each lab
(``labs/labN_*.ipynb``) has a jupytext percent-format ``.py`` beside it, the source of truth for its cells
(edit the ``.py``, then ``jupytext --sync``). The notebook keeps the same cells plus, for a chapter, its
stored outputs; a lab is committed without outputs (the book build executes it in the suite). This test fails when a
pair drifts apart."""

import json
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted(ROOT.glob("book/[0-9][0-9]_*.ipynb"))
LABS = sorted(ROOT.glob("labs/lab[0-9]_*.ipynb"))


def cells(notebook) -> list[tuple[str, str]]:
    return [(c.cell_type, c.source.strip()) for c in notebook.cells]


def test_every_chapter_and_lab_is_paired():
    assert len(CHAPTERS) == 10 and len(LABS) == 5
    for path in CHAPTERS + LABS:
        assert path.with_suffix(".py").exists(), f"{path.name}: run jupytext --set-formats ipynb,py:percent"
        assert jupytext.read(path).metadata.get("jupytext", {}).get("formats") == "ipynb,py:percent"


def test_no_stray_lab_source():
    """The labs' only source is their pairs: no generator, no ``.py`` without a notebook."""
    assert not (ROOT / "labs/build_labs.py").exists()
    assert sorted(p.with_suffix(".ipynb") for p in ROOT.glob("labs/*.py")) == LABS


@pytest.mark.parametrize("path", CHAPTERS + LABS, ids=lambda p: p.stem)
def test_the_pair_holds_the_same_cells(path):
    text, notebook = jupytext.read(path.with_suffix(".py")), jupytext.read(path)
    assert cells(text) == cells(notebook), f"{path.name} and its .py differ: jupytext --sync {path.with_suffix('.py')}"
    assert [c.metadata.get("tags", []) for c in text.cells] == [c.metadata.get("tags", []) for c in notebook.cells]


@pytest.mark.parametrize("path", LABS, ids=lambda p: p.stem)
def test_labs_are_committed_without_outputs_for_a_colab_gpu(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert all(c["outputs"] == [] and c["execution_count"] is None for c in code), (
        f"{path.name} is committed with outputs (jupyter nbconvert --clear-output --inplace)"
    )
    assert nb["metadata"].get("accelerator") == "GPU"  # Colab opens it on a GPU runtime
    assert jupytext.read(path.with_suffix(".py")).metadata.get("accelerator") == "GPU"
