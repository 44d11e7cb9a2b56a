# ruff: noqa: F401 (a deprecated path: every import here is a re-export)
"""Deprecated: moved to :mod:`rlvr_lab.figures.style`; this path goes in 0.2."""

import warnings

from rlvr_lab.figures.style import (
    ACCENT,
    FAIL_COLOR,
    MUTED,
    NEUTRAL,
    PASS_COLOR,
    BookFigure,
    axes_row,
    mark_point,
    png_bytes,
)

warnings.warn(
    "rlvr_lab.figure_style moved to rlvr_lab.figures.style; the old path goes in 0.2", DeprecationWarning, stacklevel=2
)
