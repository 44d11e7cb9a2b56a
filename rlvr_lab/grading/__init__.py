"""``rlvr-lab grade``: section 17.14's exercise notebooks graded across the course's own boundary (17.7).

A submission is untrusted code, as a candidate patch is for the verifier. :mod:`~rlvr_lab.grading.admission`
collects and parses notebooks in the grader; :mod:`~rlvr_lab.grading.notebook_sandbox` runs each one in a
sandbox of its own, where :mod:`~rlvr_lab.grading.notebook_executor` reports values as plain data;
:mod:`~rlvr_lab.grading.worker` scores them against the key, which never reaches a sandbox;
:mod:`~rlvr_lab.grading.grader` runs a class in threads or, with :mod:`~rlvr_lab.grading.ray_grader`, on a
Ray cluster; :mod:`~rlvr_lab.grading.exports` writes what it hands back: the report, per-student
:mod:`~rlvr_lab.grading.feedback`, the instructor's rubric marks (:mod:`~rlvr_lab.grading.manual`, merged
into every total), :mod:`~rlvr_lab.grading.canvas` and :mod:`~rlvr_lab.grading.gradescope` formats, each
notebook's student from :mod:`~rlvr_lab.grading.roster`. No sandbox ever sees this package: the library a
notebook imports is staged without it (:func:`~rlvr_lab.grading.notebook_sandbox.stage_library`).
"""

from rlvr_lab.grading.admission import (
    DEFAULT_KEY,
    MAX_BYTES,
    MAX_CELLS,
    collect_submissions,
    load_key,
    load_key_module,
    match_exercise,
    read_notebook,
    static_notes,
)
from rlvr_lab.grading.canvas import canvas_rows, read_roster, write_canvas
from rlvr_lab.grading.exports import Outputs, write_outputs
from rlvr_lab.grading.feedback import student_feedback, write_feedback
from rlvr_lab.grading.gradescope import RESULTS_SCHEMA, Layout, results_json
from rlvr_lab.grading.grader import format_table, grade, register, run, write_csv
from rlvr_lab.grading.manual import RUBRIC_POINTS, Mark, merge_marks, read_marks, rubrics, write_template
from rlvr_lab.grading.roster import by_student, student_of
from rlvr_lab.grading.worker import (
    GradeSettings,
    GradingSlot,
    KeyData,
    NotebookJob,
    grade_notebook,
    local_node,
    remember_key,
    score_parts,
)

__all__ = [
    "DEFAULT_KEY",
    "MAX_BYTES",
    "MAX_CELLS",
    "collect_submissions",
    "load_key",
    "load_key_module",
    "match_exercise",
    "read_notebook",
    "static_notes",
    "format_table",
    "grade",
    "register",
    "run",
    "write_csv",
    "GradeSettings",
    "GradingSlot",
    "KeyData",
    "NotebookJob",
    "grade_notebook",
    "local_node",
    "remember_key",
    "score_parts",
    "canvas_rows",
    "read_roster",
    "write_canvas",
    "Outputs",
    "write_outputs",
    "student_feedback",
    "write_feedback",
    "RESULTS_SCHEMA",
    "Layout",
    "results_json",
    "RUBRIC_POINTS",
    "Mark",
    "merge_marks",
    "read_marks",
    "rubrics",
    "write_template",
    "by_student",
    "student_of",
]
