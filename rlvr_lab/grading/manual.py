"""The instructor's marks for written arguments: rubrics from the key, a marks file, merged into the totals (17.14).

A decision part (``Part.argued``) pairs a checked short answer, which the grader scores, with a written
argument, which the instructor reads against the rubric kept in the reference solution (a markdown cell
``**Rubric (part c).** ...`` in the key folder). :func:`rubrics` reads those rubrics; the instructor's marks
come from a CSV file (:data:`MARK_FIELDS`, one row per student and decision part, ``points`` in
``[0, RUBRIC_POINTS]``, blank while not yet marked) that :func:`read_marks` validates row by row and
:func:`merge_marks` adds to the report as parts of their own (``ex1.part_c.rubric``), so every total and
every export counts them. :func:`write_template` writes the file to fill in.
"""

from __future__ import annotations

import csv
import json
import math
import os
import re
from dataclasses import dataclass

from rlvr_lab.grading.roster import add_totals, by_student, sheet_cell, sheet_text

__all__ = [
    "RUBRIC_POINTS",
    "MARK_FIELDS",
    "Mark",
    "rubrics",
    "decision_parts",
    "rubric_id",
    "read_marks",
    "merge_marks",
    "write_template",
]

#: Points of one written argument (a decision part's rubric): 0 none, 1 partial, 2 full; halves allowed.
RUBRIC_POINTS = 2.0
#: Columns of the marks file, in order.
MARK_FIELDS = ("student", "exercise", "part", "points", "comment")
_RUBRIC_CELL = re.compile(r"\*\*Rubric \(part ([a-z])\)\.\*\*\s*(.*)", re.S)


@dataclass(frozen=True)
class Mark:
    """One row of the marks file, validated."""

    student: str
    """The student, as :func:`rlvr_lab.grading.roster.student_of` names them (their sub-folder)."""
    part_id: str
    """The decision part marked (``ex1.part_c``)."""
    points: float | None
    """Points in ``[0, RUBRIC_POINTS]``; None while the argument is not yet marked."""
    comment: str
    """The instructor's comment, shown to the student in the feedback."""
    row: int
    """Line of the file the mark came from (the header is line 1)."""


def rubric_id(part_id: str) -> str:
    """The report's part id for the written argument of ``part_id``: ``ex1.part_c`` -> ``ex1.part_c.rubric``."""
    return part_id + ".rubric"


def decision_parts(key_module) -> dict:
    """``{part id: Part}`` of every decision part (``argued``) of the key, in order."""
    return {pid: part for pid, part in key_module.PARTS.items() if getattr(part, "argued", False)}


def rubrics(key_dir: str) -> dict:
    """``{part id: rubric text}`` from the reference-solution notebooks of the key folder ``key_dir``
    (a markdown cell ``**Rubric (part c).** ...`` per decision part; ``tests/test_grading_exports.py``
    reads the course's)."""
    out = {}
    for name in sorted(os.listdir(key_dir)):
        if not (name.endswith(".ipynb") and re.match(r"ex\d+_", name)):
            continue
        with open(os.path.join(key_dir, name), encoding="utf-8") as handle:
            cells = json.load(handle).get("cells", [])
        for cell in cells:
            source = cell.get("source", "")
            source = "".join(source) if isinstance(source, list) else str(source)
            match = _RUBRIC_CELL.match(source.strip()) if cell.get("cell_type") == "markdown" else None
            if match:
                out[f"{name.split('_')[0]}.part_{match.group(1)}"] = match.group(2).strip()
    return out


def _part_id(exercise: str, part: str) -> str:
    part = part.strip().lower()
    if part.startswith(exercise + "."):
        part = part[len(exercise) + 1 :]
    return f"{exercise}.{part if part.startswith('part_') else 'part_' + part}"


def read_marks(path: str, key_module, students=None) -> dict:
    """Read and validate the marks file at ``path``: ``{(student, part id): Mark}``.

    ``part`` may be written ``c``, ``part_c`` or ``ex1.part_c``. A ValueError names the file and the line
    for a missing column, an unknown exercise or student (``students``: the students of this run, None to
    skip that check), a part that is not a decision part, points that are not a number in
    ``[0, RUBRIC_POINTS]``, and a second row for the same student and part.
    """
    decision = decision_parts(key_module)
    exercises = sorted({pid.split(".")[0] for pid in key_module.PARTS})
    known = None if students is None else set(students)
    try:
        handle = open(path, newline="", encoding="utf-8-sig")
    except OSError as exc:
        raise ValueError(f"marks file {path!r} cannot be read: {exc.strerror}") from None
    marks: dict = {}
    with handle:
        reader = csv.DictReader(handle)
        missing = [f for f in MARK_FIELDS if f not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(
                f"marks file {path!r}: the header must name the columns {', '.join(MARK_FIELDS)}; "
                f"missing {', '.join(missing)}"
            )
        for row in reader:
            line = reader.line_num

            def fail(why: str, line: int = line):
                return ValueError(f"marks file {path!r}, line {line}: {why}")

            student, exercise = sheet_text(row["student"] or "").strip(), (row["exercise"] or "").strip().lower()
            if not student:
                raise fail("student is empty")
            if known is not None and student not in known:
                raise fail(
                    f"student {student!r} has no submission in this run (students: "
                    f"{', '.join(sorted(known)[:8])}{' ...' if len(known) > 8 else ''})"
                )
            if exercise not in exercises:
                raise fail(f"exercise must be one of {exercises}, got {row['exercise']!r}")
            part_id = _part_id(exercise, row["part"] or "")
            if part_id not in decision:
                choices = [p.split(".")[1] for p in decision if p.startswith(exercise + ".")]
                raise fail(
                    f"part {row['part']!r} of {exercise} is not a decision part with a rubric "
                    f"(the decision parts of {exercise}: {', '.join(choices) or 'none'})"
                )
            text = (row["points"] or "").strip()
            points = None
            if text:
                try:
                    points = float(text)
                except ValueError:
                    raise fail(f"points must be a number in [0, {RUBRIC_POINTS:g}] or blank, got {text!r}") from None
                if not (math.isfinite(points) and 0.0 <= points <= RUBRIC_POINTS):
                    raise fail(f"points must be in [0, {RUBRIC_POINTS:g}] for {part_id}, got {text}")
            if (student, part_id) in marks:
                raise fail(f"a second mark for {student} {part_id} (first on line {marks[(student, part_id)].row})")
            marks[(student, part_id)] = Mark(student, part_id, points, (row["comment"] or "").strip(), line)
    return marks


def merge_marks(report: dict, marks: dict, key_module) -> dict:
    """Add one rubric part per decision part to every counted submission of ``report`` and recompute its totals.

    A part marked in ``marks`` scores its points with status ``marked`` and the comment as its detail;
    an unmarked one scores 0 of :data:`RUBRIC_POINTS` with status ``unmarked``. Returns ``report``, changed
    in place; ``report["manual"]`` counts the marks used and the unmarked arguments, and lists the marks that
    found no notebook (``unused``: the student submitted no notebook for that exercise).
    """
    decision = decision_parts(key_module)
    used = unmarked = 0
    applied = set()
    for student, subs in by_student(report).items():
        for sub in subs:
            parts = {}
            for pid, entry in sub["parts"].items():
                parts[pid] = entry
                if pid not in decision:
                    continue
                mark = marks.get((student, pid))
                applied.add((student, pid))
                if mark is not None and mark.points is not None:
                    used += 1
                    parts[rubric_id(pid)] = {
                        "score": mark.points,
                        "max": RUBRIC_POINTS,
                        "status": "marked",
                        "detail": mark.comment,
                        "title": f"{entry['title']}: written argument",
                        "kind": "rubric",
                    }
                else:
                    unmarked += 1
                    parts[rubric_id(pid)] = {
                        "score": 0,
                        "max": RUBRIC_POINTS,
                        "status": "unmarked",
                        "detail": mark.comment if mark else "",
                        "title": f"{entry['title']}: written argument",
                        "kind": "rubric",
                    }
            sub["parts"] = parts
            add_totals(sub)
    unused = [
        f"line {m.row}: {m.student} {m.part_id}"
        for key, m in sorted(marks.items(), key=lambda kv: kv[1].row)
        if key not in applied
    ]
    report["manual"] = {"rubric_points": RUBRIC_POINTS, "marked": used, "unmarked": unmarked, "unused": unused}
    return report


def write_template(report: dict, path: str, key_module, marks: dict | None = None) -> int:
    """Write the marks file to fill in: one row per student and decision part they submitted (marks kept).

    Returns the number of rows written.
    """
    decision, rows = decision_parts(key_module), []
    for student, subs in by_student(report).items():
        for pid in sorted(
            {p for s in subs if s.get("exercise") for p in decision if p.startswith(s["exercise"] + ".")}
        ):
            mark = (marks or {}).get((student, pid))
            rows.append(
                {
                    "student": sheet_cell(student),
                    "exercise": pid.split(".")[0],
                    "part": pid.split(".")[1],
                    "points": "" if mark is None or mark.points is None else f"{mark.points:g}",
                    "comment": sheet_cell(mark.comment) if mark else "",
                }
            )
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(MARK_FIELDS))
        writer.writeheader()
        writer.writerows(rows)
    return len(rows)
