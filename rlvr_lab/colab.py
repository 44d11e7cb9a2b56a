"""The Colab install cell: one source for every notebook a reader may open in Colab.

Every book chapter, lab and exercise notebook (student and solution) starts with the same code cell,
:func:`install_cell`. Outside Colab it does nothing. On Colab it installs the course library with its
``runtime`` extra (numpy, torch, transformers, tokenizers, matplotlib, ipywidgets and the pytest the
verifier's runner was written against; no book-building or test tools) from :data:`SOURCE`, the
repository's git URL, or from whatever ``RLVR_LAB_SOURCE`` names: another git URL, or a wheel file
uploaded to the runtime (``RLVR_LAB_SOURCE=/content/rlvr_lab-0.1.0-py3-none-any.whl``).

The repository lives here only (``_config.yml``'s ``repository.url`` is checked against it).
``python scripts/install_cells.py`` rewrites the first cell of every notebook from :func:`install_cell`
(and the jupytext ``.py`` twin of each chapter and lab with it); ``labs/exercises/build_notebooks.py``
takes it from here too, and ``tests/test_install.py`` checks that all of them agree.
"""

from __future__ import annotations

import json
from pathlib import Path

#: The course repository (also Jupyter Book's ``repository.url``).
REPOSITORY = "https://github.com/rlvr-lab/rlvr-lab"
#: Where the install cell gets the library from unless ``RLVR_LAB_SOURCE`` says otherwise.
SOURCE = f"git+{REPOSITORY}"
#: The extra the notebooks need at run time (see pyproject.toml).
EXTRA = "runtime"
#: Cell id of the install cell in every notebook.
CELL_ID = "colab-install"
#: Notebooks that open with the install cell, relative to the repository root.
NOTEBOOK_GLOBS = ("book/*.ipynb", "labs/*.ipynb", "labs/exercises/student/*.ipynb", "labs/exercises/solutions/*.ipynb")


def requirement(source: str = SOURCE) -> str:
    """The pip requirement the install cell installs from ``source`` (a URL, or a wheel's path).

    >>> requirement()
    'rlvr-lab[runtime] @ git+https://github.com/rlvr-lab/rlvr-lab'
    >>> requirement("/content/rlvr_lab-0.1.0-py3-none-any.whl")
    'rlvr-lab[runtime] @ file:///content/rlvr_lab-0.1.0-py3-none-any.whl'
    """
    if "://" not in source and not source.startswith("git+"):
        source = Path(source).absolute().as_uri()
    return f"rlvr-lab[{EXTRA}] @ {source}"


def install_cell() -> str:
    """Source of the install cell (identical in every notebook; it must not touch ``sys.modules``,
    which the exercise grader reads as tampering)."""
    return f'''# Colab only: install the course library (this cell is written by scripts/install_cells.py).
try:
    import google.colab  # noqa: F401  (importable on Colab only)
    ON_COLAB = True
except ImportError:
    ON_COLAB = False
if ON_COLAB:
    import os, subprocess, sys
    from pathlib import Path
    source = os.environ.get("RLVR_LAB_SOURCE", "{SOURCE}")  # a git URL or a wheel file
    if "://" not in source and not source.startswith("git+"):
        source = Path(source).absolute().as_uri()
    subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", f"rlvr-lab[{EXTRA}] @ {{source}}"])'''


def cell_json(lines: bool = False) -> dict:
    """The install cell as an nbformat-4 code cell (hidden in the rendered book); ``lines``: source as a
    list of lines (as Jupyter saves it) rather than one string."""
    text = install_cell()
    source = text.splitlines(keepends=True) if lines else text
    return {
        "cell_type": "code",
        "execution_count": None,
        "id": CELL_ID,
        "metadata": {"tags": ["remove-cell"]},
        "outputs": [],
        "source": source,
    }


def is_install_cell(cell: dict) -> bool:
    """True for this module's cell, and for the older hand-written Colab cells it replaces."""
    text = "".join(cell.get("source", "")) if cell.get("cell_type") == "code" else ""
    return cell.get("id") == CELL_ID or "google.colab" in text and "install" in text and len(text) < 1200


def notebooks(root: Path) -> list[Path]:
    """Every notebook that opens with the install cell."""
    return sorted(p for pattern in NOTEBOOK_GLOBS for p in Path(root).glob(pattern))


def rewrite(path: Path) -> bool:
    """Make ``path`` open with the install cell (replacing an old one); True when the file changed."""
    raw = path.read_text(encoding="utf-8")
    nb = json.loads(raw)
    cells = [c for c in nb["cells"] if not is_install_cell(c)]
    nb["cells"] = [cell_json(lines=any(isinstance(c.get("source"), list) for c in cells))] + cells
    indent = 1 if raw.startswith('{\n "') else 2
    text = json.dumps(nb, indent=indent, ensure_ascii=False) + "\n"
    if text == raw:
        return False
    path.write_text(text, encoding="utf-8")
    return True
