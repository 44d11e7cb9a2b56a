# ruff: noqa: F401 (a deprecated path: every import here is a re-export)
"""Deprecated: moved to :mod:`rlvr_lab.figures.chapter`; this path goes in 0.2."""

import warnings

from rlvr_lab.figures.chapter import (
    FIGURES,
    VERDICT_COLORS,
    all_pass_measured_figure,
    case_study_figure,
    clip_higher_figure,
    exploit_gallery_figure,
    key_numbers_figure,
    length_bias_figure,
    rollout_roles_figure,
)

warnings.warn(
    "rlvr_lab.chapter_figures moved to rlvr_lab.figures.chapter; the old path goes in 0.2",
    DeprecationWarning,
    stacklevel=2,
)
