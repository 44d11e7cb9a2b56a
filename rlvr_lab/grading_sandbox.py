"""Deprecated: moved to :mod:`rlvr_lab.grading.notebook_sandbox`; this path goes in 0.2."""

import warnings

from rlvr_lab.grading.notebook_sandbox import (  # noqa: F401
    MAX_FRAME,
    EXIT_GRACE_S,
    ERRORS_KEPT,
    SandboxConfig,
    RunResult,
    stage_library,
    decode,
    NotebookRunner,
)

warnings.warn(
    "rlvr_lab.grading_sandbox moved to rlvr_lab.grading.notebook_sandbox; the old path goes in 0.2",
    DeprecationWarning,
    stacklevel=2,
)
