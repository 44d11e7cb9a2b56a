"""Book chapters are reviewable text (issue 15): each ``book/NN_*.ipynb`` has a jupytext percent-format
``.py`` beside it, the source of truth for its cells (edit the ``.py``, then ``jupytext --sync``); the
notebook keeps the same cells plus its stored outputs. This test fails when the two drift apart."""

from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted(ROOT.glob("book/[0-9][0-9]_*.ipynb"))


def cells(notebook) -> list[tuple[str, str]]:
    return [(c.cell_type, c.source.strip()) for c in notebook.cells]


def test_every_chapter_is_paired():
    assert len(CHAPTERS) == 10
    for path in CHAPTERS:
        assert path.with_suffix(".py").exists(), f"{path.name}: run jupytext --set-formats ipynb,py:percent"
        assert jupytext.read(path).metadata.get("jupytext", {}).get("formats") == "ipynb,py:percent"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_the_pair_holds_the_same_cells(path):
    text, notebook = jupytext.read(path.with_suffix(".py")), jupytext.read(path)
    assert cells(text) == cells(notebook), f"{path.name} and its .py differ: jupytext --sync {path.with_suffix('.py')}"
    assert [c.metadata.get("tags", []) for c in text.cells] == [c.metadata.get("tags", []) for c in notebook.cells]
