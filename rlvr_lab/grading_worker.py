"""Deprecated: moved to :mod:`rlvr_lab.grading.worker`; this path goes in 0.2."""

import warnings

from rlvr_lab.grading.worker import (  # noqa: F401
    KEY_MODULE_NAME,
    KeyData,
    GradeSettings,
    NotebookJob,
    key_module,
    remember_key,
    answer_names,
    score_parts,
    local_node,
    GradingSlot,
    grade_notebook,
)

warnings.warn(
    "rlvr_lab.grading_worker moved to rlvr_lab.grading.worker; the old path goes in 0.2",
    DeprecationWarning,
    stacklevel=2,
)
