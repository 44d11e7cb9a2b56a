"""Deprecated: moved to :mod:`rlvr_lab.grading.ray_grader`; this path goes in 0.2."""

import warnings

from rlvr_lab.grading.ray_grader import (  # noqa: F401
    REPLACE_S,
    START_S,
    SCRATCH_PREFIX,
    ray_module,
    sweep_orphans,
    LostNotebook,
    RayGrader,
)
from rlvr_lab.ray_workers import AVOID_S  # noqa: F401

warnings.warn(
    "rlvr_lab.grading_ray moved to rlvr_lab.grading.ray_grader; the old path goes in 0.2",
    DeprecationWarning,
    stacklevel=2,
)
