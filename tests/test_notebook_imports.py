"""Notebooks import only the public API (issue 15): no private name or module, and from the trainer only
what ``rlvr_lab.train.__all__`` lists (the labs take the step apart through it, not through internals)."""

import ast
import json
from pathlib import Path

import rlvr_lab.train

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted([*ROOT.glob("book/*.ipynb"), *ROOT.glob("labs/*.ipynb"), *ROOT.glob("labs/exercises/*/*.ipynb")])


def imports(path: Path) -> list[tuple[str, str]]:
    """``(module, name)`` for every ``from rlvr_lab... import name`` (name "" for ``import rlvr_lab...``)."""
    found = []
    for cell in json.loads(path.read_text())["cells"]:
        if cell["cell_type"] != "code":
            continue
        lines = [line for line in "".join(cell["source"]).splitlines() if not line.lstrip().startswith(("%", "!"))]
        try:
            tree = ast.parse("\n".join(lines))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("rlvr_lab"):
                found += [(node.module, a.name) for a in node.names]
            elif isinstance(node, ast.Import):
                found += [(a.name, "") for a in node.names if a.name.startswith("rlvr_lab")]
    return found


def test_there_are_notebooks_to_check():
    assert len(NOTEBOOKS) >= 20


def test_notebooks_import_only_public_names():
    offences = []
    for path in NOTEBOOKS:
        for module, name in imports(path):
            where = f"{path.relative_to(ROOT)}: {module} {name}".strip()
            if any(part.startswith("_") for part in module.split(".")) or name.startswith("_"):
                offences.append(where + " (private)")
            elif module.startswith("rlvr_lab.train") and (
                module != "rlvr_lab.train" or name not in rlvr_lab.train.__all__
            ):
                offences.append(where + " (use the names of rlvr_lab.train.__all__)")
    assert offences == []


DEPRECATED = {
    "rlvr_lab.plots",
    "rlvr_lab.widgets",
    "rlvr_lab.dashboard",
    "rlvr_lab.chapter_figures",
    "rlvr_lab.fleet_figures",
    "rlvr_lab.figure_style",
    "rlvr_lab.recorded",
    "rlvr_lab.recorded.figures",
}
"""Old paths kept only as deprecation shims for homework scripts (issue 21); notebooks use the new ones."""


def test_notebooks_do_not_import_deprecated_paths():
    offences = []
    for path in NOTEBOOKS:
        for module, name in imports(path):
            if module in DEPRECATED or f"{module}.{name}" in DEPRECATED:
                offences.append(f"{path.relative_to(ROOT)}: {module} {name}".strip())
    assert offences == []
