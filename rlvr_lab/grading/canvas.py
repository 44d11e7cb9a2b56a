"""A Canvas gradebook import CSV from a grading report (section 17.14).

Canvas imports grades from the CSV its gradebook exports: the columns ``Student``, ``ID``, ``SIS User ID``,
``SIS Login ID``, ``Section``, then one column per assignment headed ``Name (assignment id)``, a
``Points Possible`` row under the header, then one row per student. :func:`canvas_rows` writes one
assignment column per exercise (its points: the automatic parts, plus the rubric points when marks were
merged), a student's best notebook for that exercise, and a blank where a student has no graded notebook
for it (Canvas leaves a blank cell unchanged). Students and assignments are matched to the course by a
gradebook export passed as ``roster`` (:func:`read_roster`): a student folder is found by its SIS login,
SIS user id, Canvas id or name; an exercise column reuses the export's ``Name (id)`` header of the
assignment named ``RLVR Lab ex1`` (or the exercise's title). Without a roster the student's folder name
fills ``Student`` and ``SIS Login ID`` (a name a spreadsheet would read as a formula is quoted,
:func:`~rlvr_lab.grading.roster.sheet_cell`) and the columns are new assignments.
"""

from __future__ import annotations

import csv
import re

from rlvr_lab.grading.manual import RUBRIC_POINTS, decision_parts
from rlvr_lab.grading.roster import by_student, sheet_cell

__all__ = ["IDENTITY", "POINTS_POSSIBLE", "assignment_name", "read_roster", "canvas_rows", "write_canvas"]

#: The identity columns Canvas expects first, in order.
IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
#: The first cell of the row that gives each assignment's points.
POINTS_POSSIBLE = "Points Possible"
_WITH_ID = re.compile(r"^(.*?)\s*\((\d+)\)\s*$")


def assignment_name(exercise: str) -> str:
    """The default Canvas assignment name of an exercise: ``RLVR Lab ex1``."""
    return f"RLVR Lab {exercise}"


def read_roster(path: str) -> tuple:
    """A Canvas gradebook export: ``(students [{identity column: value}], {assignment name: 'Name (id)'})``.

    The ``Points Possible`` row and rows without a Canvas ``ID`` are skipped; a ValueError names a file
    that cannot be read or whose header lacks the identity columns.
    """
    try:
        handle = open(path, newline="", encoding="utf-8-sig")
    except OSError as exc:
        raise ValueError(f"canvas roster {path!r} cannot be read: {exc.strerror}") from None
    with handle:
        reader = csv.DictReader(handle)
        header = [h.strip() for h in (reader.fieldnames or [])]
        missing = [c for c in IDENTITY if c not in header]
        if missing:
            raise ValueError(
                f"canvas roster {path!r} is not a Canvas gradebook export: its header lacks {', '.join(missing)}"
            )
        reader.fieldnames = header
        students = [
            {c: (row.get(c) or "").strip() for c in IDENTITY}
            for row in reader
            if POINTS_POSSIBLE not in (row.get("Student") or "") and (row.get("ID") or "").strip()
        ]
    columns = {}
    for h in header[len(IDENTITY) :]:
        match = _WITH_ID.match(h)
        if match:
            columns[match.group(1).strip()] = h
    return students, columns


def _find(student: str, roster: list):
    wanted = student.strip().lower()
    for column in ("SIS Login ID", "SIS User ID", "ID", "Student"):
        hits = [r for r in roster if r[column].lower() == wanted]
        if len(hits) == 1:
            return hits[0]
    return None


def _of(part_ids, exercise: str) -> list:
    return [p for p in part_ids if p.startswith(exercise + ".")]


def canvas_rows(report: dict, key_module, roster: tuple | None = None) -> list:
    """The import CSV as rows (lists of strings): header, ``Points Possible``, one row per student.

    A ValueError names the students of the report that the roster does not hold.
    """
    from rlvr_lab import exercises

    groups = by_student(report)
    present = sorted(
        {s["exercise"] for subs in groups.values() for s in subs if s.get("exercise")},
        key=lambda ex: int(ex[2:]) if ex[2:].isdigit() else 10**6,
    )
    students, columns = roster if roster is not None else ([], {})
    titles = {e.id: e.title.split(" (")[0] for e in exercises.EXERCISES}
    header = list(IDENTITY)
    for ex in present:
        header.append(columns.get(assignment_name(ex)) or columns.get(titles.get(ex, "")) or assignment_name(ex))
    rubric = RUBRIC_POINTS if "manual" in report else 0.0
    decision = decision_parts(key_module)
    points = []
    for ex in present:  # the key's parts (and arguments); else what the report says the exercise is out of
        graded = [s["max"] for subs in groups.values() for s in subs if s.get("exercise") == ex]
        keyed = len(_of(key_module.PARTS, ex)) + rubric * len(_of(decision, ex))
        points.append(f"{keyed or max(graded):g}")
    rows = [header, [POINTS_POSSIBLE, "", "", "", ""] + points]
    unknown = []
    for student, subs in groups.items():
        if roster is None:
            identity = [sheet_cell(student), "", "", sheet_cell(student), ""]
        else:
            found = _find(student, students)
            if found is None:
                unknown.append(student)
                continue
            identity = [found[c] for c in IDENTITY]
        cells = []
        for ex in present:
            graded = [s["score"] for s in subs if s.get("exercise") == ex and s["outcome"] != "infra"]
            cells.append(f"{max(graded):g}" if graded else "")
        rows.append(identity + cells)
    if unknown:
        raise ValueError(
            f"canvas roster: no student matches {', '.join(repr(u) for u in unknown[:10])} by SIS "
            "Login ID, SIS User ID, ID or name (name the submission folders by one of them)"
        )
    return rows


def write_canvas(report: dict, path: str, key_module, roster_path: str | None = None) -> int:
    """Write :func:`canvas_rows` to ``path``; return the number of student rows."""
    rows = canvas_rows(report, key_module, read_roster(roster_path) if roster_path else None)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)
    return len(rows) - 2
