"""Everything ``rlvr-lab grade`` writes after grading (section 17.14): one place that runs each export.

The report (:func:`rlvr_lab.grading.grader.grade`) goes out as the JSON report and the per-part CSV
(:func:`write_csv`), as per-student feedback (:mod:`~rlvr_lab.grading.feedback`), as a Canvas import
(:mod:`~rlvr_lab.grading.canvas`) and as Gradescope's ``results.json``
(:mod:`~rlvr_lab.grading.gradescope`). The instructor's marks (:mod:`~rlvr_lab.grading.manual`) are
read and checked against the class *before* any notebook runs (:func:`load_marks`), and merged into the
report before anything is written, so every export counts them.
"""

from __future__ import annotations

import csv
import json
import os
from dataclasses import dataclass

from rlvr_lab.grading.admission import collect_submissions, load_key_module
from rlvr_lab.grading.manual import merge_marks, read_marks, rubrics, write_template
from rlvr_lab.grading.roster import student_of

__all__ = ["Outputs", "load_marks", "write_csv", "write_outputs"]


@dataclass(frozen=True)
class Outputs:
    """What one grading run writes besides the table (None: not written)."""

    json: str | None = None
    """The full report as JSON."""
    csv: str | None = None
    """One row per submission and part (:func:`write_csv`)."""
    feedback: str | None = None
    """A folder for ``<student>.md`` and ``<student>.html``."""
    marks: str | None = None
    """The instructor's marks file to merge (:func:`rlvr_lab.grading.manual.read_marks`)."""
    marks_template: str | None = None
    """Where to write the marks file to fill in (marks already given are kept)."""
    canvas: str | None = None
    """A Canvas gradebook import CSV."""
    canvas_roster: str | None = None
    """A Canvas gradebook export naming the students and assignments (:func:`rlvr_lab.grading.canvas.read_roster`)."""
    gradescope: str | None = None
    """Gradescope's ``results.json``, for a run over one student's submission."""
    expect: tuple = ()
    """Exercise ids a Gradescope submission must hold (missing ones show as failed tests)."""
    submitter: str = ""
    """The submitter's name on Gradescope (its submission metadata)."""


def load_marks(outputs: Outputs, submissions, key_dir: str) -> dict:
    """The validated marks of ``outputs.marks`` ({} without one), checked against the students of
    ``submissions`` before grading: a ValueError names the file, the line and the problem. A Canvas roster
    is read here too, so an unreadable one stops the run before any notebook runs."""
    if outputs.canvas_roster:
        if not outputs.canvas:
            raise ValueError("canvas_roster: --canvas-roster needs --canvas OUT (the import file to write)")
        from rlvr_lab.grading.canvas import read_roster

        read_roster(outputs.canvas_roster)
    if not outputs.marks:
        return {}
    accepted, refused = collect_submissions(submissions, key_dir)
    students = {student_of(path, submissions) for path, _ in list(accepted) + list(refused)}
    return read_marks(outputs.marks, load_key_module(key_dir), students)


def write_csv(report: dict, path: str) -> None:
    """One row per submission and part (a refused or invalid notebook without parts gets one row)."""
    fields = [
        "path",
        "exercise",
        "part",
        "score",
        "max",
        "status",
        "detail",
        "outcome",
        "reason",
        "runtime_s",
        "tampering",
        "node",
    ]
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        for sub in report["submissions"]:
            base = {
                "path": sub["path"],
                "exercise": sub["exercise"] or "",
                "outcome": sub["outcome"],
                "reason": sub["reason"],
                "runtime_s": sub["runtime_s"],
                "tampering": " | ".join(sub["tampering"]),
                "node": sub.get("node", ""),
            }
            rows = [
                dict(base, part=p, score=e["score"], max=e["max"], status=e["status"], detail=e["detail"])
                for p, e in sub["parts"].items()
            ] or [dict(base, part="", score=0, max=0, status=sub["outcome"], detail="")]
            writer.writerows(rows)


def write_outputs(report: dict, outputs: Outputs, key_dir: str, marks: dict) -> list:
    """Merge ``marks`` (when a marks file was given) and write every output asked for; return
    ``[(what, path)]``. A ValueError (a Canvas roster that misses a student) names the problem."""
    from rlvr_lab.grading import canvas, feedback, gradescope

    key_module = load_key_module(key_dir)
    if outputs.marks:
        merge_marks(report, marks, key_module)
    written = []
    if outputs.json:
        with open(outputs.json, "w", encoding="utf-8") as handle:
            json.dump(report, handle, indent=2, default=str)
        written.append(("report", outputs.json))
    if outputs.csv:
        write_csv(report, outputs.csv)
        written.append(("csv", outputs.csv))
    if outputs.marks_template:
        write_template(report, outputs.marks_template, key_module, marks)
        written.append(("marks template", outputs.marks_template))
    if outputs.feedback:
        paths = feedback.write_feedback(report, outputs.feedback, key_module, rubrics(key_dir))
        written.append((f"feedback for {len(paths) // 2} student(s)", outputs.feedback))
    if outputs.canvas:
        canvas.write_canvas(report, outputs.canvas, key_module, outputs.canvas_roster)
        written.append(("canvas", outputs.canvas))
    if outputs.gradescope:
        results = gradescope.results_json(report, key_module, outputs.expect, outputs.submitter)
        written.append(("gradescope", gradescope.write_results(results, outputs.gradescope)))
    return [(what, os.path.abspath(path)) for what, path in written]
