"""Whose each graded notebook is, and what it totals: the rows that feedback and exports group (section 17.14).

``rlvr-lab grade`` grades notebooks; an instructor hands grades back per student. A class is collected as
one sub-folder per student (``submissions/ada/ex1_false_accepts.ipynb``), so the student of a notebook is
the first folder below the submission folder it was found in; a notebook directly in that folder (or a
notebook named on the command line) belongs to the folder that holds it (``/autograder/submission`` on
Gradescope holds one student's notebooks). A duplicate of a file already graded counts once and belongs
to nobody.
"""

from __future__ import annotations

import os

__all__ = ["student_of", "counted", "by_student", "add_totals", "sheet_cell", "sheet_text"]

_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def student_of(path: str, roots) -> str:
    """The student a notebook at ``path`` belongs to, given the submission paths ``roots`` it was collected from.

    >>> student_of("subs/ada/ex1_false_accepts.ipynb", ["subs"]), student_of("subs/ex1.ipynb", ["subs"])
    ('ada', 'subs')
    >>> student_of("subs/ada/late/ex1.ipynb", ["elsewhere", "subs"])
    'ada'
    """
    absolute = os.path.abspath(path)
    for root in roots:
        top = os.path.abspath(root)
        if absolute != top and absolute.startswith(top.rstrip(os.sep) + os.sep):
            parts = os.path.relpath(absolute, top).split(os.sep)
            return parts[0] if len(parts) > 1 else os.path.basename(top)
    return os.path.basename(os.path.dirname(absolute))


def counted(sub: dict) -> bool:
    """False for a duplicate of a file already graded (it is listed, and counts once: on the first copy)."""
    return not (sub["outcome"] == "refused" and str(sub.get("reason", "")).startswith("duplicate"))


def by_student(report: dict) -> dict:
    """``{student: [submission, ...]}`` over the counted submissions of ``report``, students sorted.

    A report written before submissions named their student groups them by :func:`student_of` of their
    path relative to no root (the folder holding each notebook).
    """
    groups: dict = {}
    for sub in report["submissions"]:
        if counted(sub):
            student = sub.get("student") or student_of(sub["path"], [])
            groups.setdefault(student, []).append(sub)
    return dict(sorted(groups.items()))


def add_totals(sub: dict) -> dict:
    """Set ``score``, ``max`` and ``percent`` of one submission from its parts (automatic and rubric alike)."""
    score = sum(p["score"] for p in sub["parts"].values())
    most = sum(p["max"] for p in sub["parts"].values())
    sub["score"] = round(score, 4) if isinstance(score, float) else score
    sub["max"] = round(most, 4) if isinstance(most, float) else most
    sub["percent"] = round(100.0 * score / most, 1) if most else 0.0
    return sub


def sheet_cell(text: str) -> str:
    """``text`` safe to open in a spreadsheet: a leading ``= + - @`` (a formula there) gets a ``'`` before it.

    Student-controlled text (a folder name) goes into CSV files an instructor opens in a spreadsheet.

    >>> sheet_cell("=HYPERLINK(1)"), sheet_cell("ada")
    ("'=HYPERLINK(1)", 'ada')
    """
    return "'" + text if text.startswith(_FORMULA) else text


def sheet_text(cell: str) -> str:
    """The text :func:`sheet_cell` protected, read back from a CSV file.

    >>> sheet_text("'=HYPERLINK(1)"), sheet_text("'ada")
    ('=HYPERLINK(1)', "'ada")
    """
    return cell[1:] if cell.startswith("'") and cell[1:].startswith(_FORMULA) else cell
