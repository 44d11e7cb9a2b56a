# ruff: noqa: F401 (a deprecated path: every import here is a re-export)
"""Deprecated: moved to :mod:`rlvr_lab.figures.dashboard`; this path goes in 0.2."""

import warnings

from rlvr_lab.figures.dashboard import (
    LAYOUT,
    STYLE,
    Dashboard,
    check_range,
    float_slider,
    int_slider,
    log_slider,
)

warnings.warn(
    "rlvr_lab.dashboard moved to rlvr_lab.figures.dashboard; the old path goes in 0.2", DeprecationWarning, stacklevel=2
)
