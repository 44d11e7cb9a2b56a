"""Equation numbers come from one source, the equations' labels (rlvr_lab.equations).

Cheap checks without a build: the registry lists the chapters' labels in the order the book numbers them;
no figure, dashboard, printed line, static-page script or chapter text types an equation number by hand;
every dashboard names its equations by label and writes their numbers into the page for the static
panels. tests/test_book_build.py then checks every number shown on the built site.
"""

import ast
import json
import re
from pathlib import Path

import nbformat
import pytest

from book_site import ROOT, source_of, toc_files
from rlvr_lab import equations

# "eq 9", "eqs (4) and (5)", "Eq. (28)", "equation 8", "equations 4-5": a number typed next to the word
HAND_TYPED = re.compile(r"\b(?:eqs?|equations?)\.?\s*\(?\s*\d", re.IGNORECASE)
LABEL_LINE = re.compile(r"^\s*\$\$\s*\(([\w-]+)\)\s*$|^\s*:label:\s*([\w-]+)\s*$", re.MULTILINE)
# Everything a reader sees whose text rlvr_lab or the static page writes: figure and panel titles,
# dashboards, the worked numbers of `rlvr-lab demo`, the exercises' prompts, hints and stubs.
SHOWN_MODULES = sorted((ROOT / "rlvr_lab" / "figures").glob("*.py")) + [
    ROOT / "rlvr_lab" / "demo.py",
    ROOT / "rlvr_lab" / "cli.py",
    ROOT / "rlvr_lab" / "equations.py",
    ROOT / "rlvr_lab" / "exercises.py",
    ROOT / "rlvr_lab" / "exercise_code.py",
    ROOT / "rlvr_lab" / "exercise_spec.py",
]
STATIC_JS = sorted((ROOT / "book" / "_static").glob("rlvr-*.js"))


def book_labels() -> list[str]:
    """The labels of the book's numbered equations, in build order (toc order, top to bottom)."""
    found = []
    for doc in toc_files():
        src = source_of(doc)
        if src.suffix == ".ipynb":
            texts = [c.source for c in nbformat.read(src, as_version=4).cells if c.cell_type == "markdown"]
        else:
            texts = [src.read_text()]
        for text in texts:
            found += [a or b for a, b in LABEL_LINE.findall(text)]
    return found


def test_the_registry_is_the_books_labels_in_build_order():
    labels = book_labels()
    assert len(labels) == len(set(labels)), "an equation label is used twice"
    assert tuple(labels) == equations.LABELS, (
        f"rlvr_lab.equations.LABELS must list the chapters' equation labels in build order:\nLABELS = {tuple(labels)!r}"
    )


def test_eq_text_and_html():
    assert equations.eq("ch8-cycle") == f"eq ({equations.LABELS.index('ch8-cycle') + 1})"
    assert equations.eq("ch1-objective", "ch1-contrast", "ch2-false-share") == "eqs (1), (2) and (3)"
    assert equations.eq_html("ch8-lag", "ch8-workers") == (
        'eqs <span class="rlvr-eq" data-eq="ch8-lag">(28)</span> and '
        '<span class="rlvr-eq" data-eq="ch8-workers">(30)</span>'
    )
    with pytest.raises(ValueError, match="label"):
        equations.eq("ch9-none")
    with pytest.raises(ValueError, match="labels"):
        equations.eq()


def _strings_shown(path: Path):
    """(line, text) of every string literal of a module that is not a docstring (f-strings included)."""
    tree = ast.parse(path.read_text())
    docstrings = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            if isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
                docstrings.add(id(body[0].value))
        # an attribute docstring: a bare string right after an assignment
        for field in ("body", "orelse"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list):
                for prev, cur in zip(stmts, stmts[1:]):
                    if isinstance(prev, (ast.Assign, ast.AnnAssign)) and isinstance(cur, ast.Expr):
                        if isinstance(cur.value, ast.Constant) and isinstance(cur.value.value, str):
                            docstrings.add(id(cur.value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            yield node.lineno, node.value


def test_no_library_output_types_an_equation_number():
    offences = [
        f"{path.relative_to(ROOT)}:{line}: {text!r}"
        for path in SHOWN_MODULES
        for line, text in _strings_shown(path)
        if HAND_TYPED.search(text)
    ]
    assert offences == [], "cite equations with rlvr_lab.equations.eq(label):\n" + "\n".join(offences)


def test_no_static_page_script_types_an_equation_number():
    offences = []
    for path in STATIC_JS:
        for i, line in enumerate(path.read_text().splitlines(), start=1):
            for literal in re.findall(r'"(?:[^"\\]|\\.)*"', line):
                if HAND_TYPED.search(literal) or re.search(r"\(\d+\)", literal):
                    offences.append(f"{path.name}:{i}: {literal}")
    assert offences == [], "panels cite equations by label (E(label)), numbered by the page:\n" + "\n".join(offences)


def test_no_chapter_text_types_an_equation_number():
    """Text and code of every chapter cite equations with {eq}`label`, which the build numbers. (The labs and
    exercise notebooks are pages too, but they also run outside the book, in Colab, where {eq} does not
    render: the exercises number theirs through rlvr_lab.equations.cite; the labs' are listed in issue 25.)"""
    offences = []
    for doc in [d for d in toc_files() if d.startswith("book/")]:
        src = source_of(doc)
        twin = src.with_suffix(".py")
        path = twin if twin.exists() else src
        for i, line in enumerate(path.read_text().splitlines(), start=1):
            if HAND_TYPED.search(re.sub(r"\{eq\}`[\w-]+`", "", line)):
                offences.append(f"{path.relative_to(ROOT)}:{i}: {line.strip()}")
    assert offences == [], "\n".join(offences)


def test_every_dashboard_names_its_equations_and_writes_their_numbers_into_the_page():
    from rlvr_lab.figures import widgets

    for make in widgets.ALL:
        d = make()
        assert d.equations, f"{make.__name__}: a dashboard cites the equations it explores"
        header = d.children[0].value
        for label in d.equations:
            n = equations.number(label)
            assert f'<span class="rlvr-eq" data-eq="{label}">({n})</span>' in header, (make.__name__, header)
            assert f"({n})" in d.title
        spec = json.loads(re.search(r"data-rlvr='([^']*)'", d.readout.value).group(1).replace("&quot;", '"'))
        assert spec["eq"] == {label: equations.number(label) for label in d.equations}
        assert spec["params"] == d.params()


def test_train_help_cites_equations_by_label():
    """`rlvr-lab train --help` prints TrainConfig's field docstrings, which cite equations by label."""
    import inspect

    from rlvr_lab.train import config

    source = inspect.getsource(config.TrainConfig)
    assert not HAND_TYPED.search(re.sub(r"\beq `[\w-]+`", "", source))
    docs = config.field_docs()
    assert not any("eq `" in text for text in docs.values())
    assert eq_in(docs["group_size"]) == {equations.number("ch4-advantage")}
    assert eq_in(docs["verifier_workers"]) == {equations.number("ch8-workers")}


def eq_in(text: str) -> set[int]:
    return {int(n) for n in re.findall(r"\beq \((\d+)\)", text)}


def test_exercise_texts_cite_equations_by_label():
    """Prompts, hints and code stubs of the exercises (and the self-check table built from them) carry the
    numbers of rlvr_lab.equations; the specs name labels only."""
    from rlvr_lab import exercises

    texts = []
    for ex in exercises.EXERCISES:
        texts += [ex.summary, ex.setting]
        for p in ex.parts:
            texts += [p.title, p.prompt] + [t for a in p.answers for t in (a.hint, a.todo, a.stub)]
    assert not any("`ch" in t for t in texts), "an equation label was left unnumbered"
    shown = {int(n) for t in texts for n in re.findall(r"\b(?:eqs?|equations?) \((\d+)\)", t, re.IGNORECASE)}
    assert {equations.number("ch2-false-share"), equations.number("ch8-lag")} <= shown
    table = (ROOT / "rlvr_lab" / "check_table.json").read_text()
    assert not HAND_TYPED.search(re.sub(r"\b(?:eqs?|equations?) \(\d+\)", "", table, flags=re.IGNORECASE))
    assert all(int(n) <= len(equations.LABELS) for n in re.findall(r"equation \((\d+)\)", table))
