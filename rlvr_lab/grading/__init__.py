"""``rlvr-lab grade``: section 17.14's exercise notebooks graded across the course's own boundary (17.7).

A submission is untrusted code, as a candidate patch is for the verifier. :mod:`~rlvr_lab.grading.admission`
collects and parses notebooks in the grader; :mod:`~rlvr_lab.grading.notebook_sandbox` runs each one in a
sandbox of its own, where :mod:`~rlvr_lab.grading.notebook_executor` reports values as plain data;
:mod:`~rlvr_lab.grading.worker` scores them against the key, which never reaches a sandbox;
:mod:`~rlvr_lab.grading.grader` runs a class in threads or, with :mod:`~rlvr_lab.grading.ray_grader`, on a
Ray cluster, and writes the report. No sandbox ever sees this package: the library a notebook imports is
staged without it (:func:`~rlvr_lab.grading.notebook_sandbox.stage_library`).
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
from rlvr_lab.grading.grader import format_table, grade, register, run, write_csv
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

__all__ = ["DEFAULT_KEY", "MAX_BYTES", "MAX_CELLS", "collect_submissions", "load_key", "load_key_module",
           "match_exercise", "read_notebook", "static_notes", "format_table", "grade", "register", "run",
           "write_csv", "GradeSettings", "GradingSlot", "KeyData", "NotebookJob", "grade_notebook", "local_node",
           "remember_key", "score_parts"]
