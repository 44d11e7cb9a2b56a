"""Rewrite the Colab install cell at the top of every notebook from rlvr_lab.colab (run from the repo root).

    python scripts/install_cells.py          # rewrite; prints the notebooks that changed
    python scripts/install_cells.py --check  # exit 1 if any notebook or pair disagrees (tests/test_install.py)

The book chapters (``book/NN_*.ipynb``) and the labs (``labs/labN_*.ipynb``) are jupytext pairs: the
percent-format ``.py`` beside each notebook is the source of truth of its cells, and is rewritten with it.
A pair whose two files hold different cells is left alone (sync it first with ``jupytext --sync``), so an
edit made in the ``.py`` is never overwritten. The exercise notebooks are written by
labs/exercises/build_notebooks.py, which takes the same cell from rlvr_lab.colab; this script keeps them in
step too.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rlvr_lab.colab import install_cell, notebooks, rewrite  # noqa: E402


def cells(notebook) -> list[tuple[str, str, list]]:
    return [(c.cell_type, c.source.strip(), c.metadata.get("tags", [])) for c in notebook.cells]


def pair_state(path: Path) -> str:
    """``"none"`` (no ``.py`` beside the notebook), ``"apart"`` (the two hold different cells), ``"stale"``
    (in step, but the pair's install cell is not :func:`install_cell`) or ``"ok"``."""
    pair = path.with_suffix(".py")
    if not pair.exists():
        return "none"
    import jupytext

    text = jupytext.read(pair)
    if cells(text) != cells(jupytext.read(path)):
        return "apart"
    first = text.cells[0] if text.cells else None
    return "ok" if first is not None and first.cell_type == "code" and first.source == install_cell() else "stale"


def sync_pair(path: Path) -> None:
    """Rewrite the notebook's paired percent-format ``.py`` from the notebook."""
    import jupytext

    jupytext.write(jupytext.read(path), path.with_suffix(".py"), fmt="py:percent")


def main(argv: list[str]) -> int:
    check = "--check" in argv
    changed, apart = [], []
    for path in notebooks(ROOT):
        state = pair_state(path)
        if state == "apart":
            apart.append(path)
            continue
        if check:
            before = path.read_text(encoding="utf-8")
            if rewrite(path):
                path.write_text(before, encoding="utf-8")
                changed.append(path)
            elif state == "stale":
                changed.append(path.with_suffix(".py"))
        elif rewrite(path) or state == "stale":
            changed.append(path)
            if state != "none":
                sync_pair(path)
    for path in changed:
        print(("differs: " if check else "rewrote: ") + str(path.relative_to(ROOT)))
    for path in apart:
        print(
            f"apart: {path.relative_to(ROOT)} and its .py hold different cells; "
            f"run jupytext --sync {path.with_suffix('.py').relative_to(ROOT)} first"
        )
    return 1 if apart or (check and changed) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
