# ruff: noqa: F401 (a deprecated path: every import here is a re-export)
"""Deprecated: moved to :mod:`rlvr_lab.figures.experiments`; this path goes in 0.2."""

import warnings

from rlvr_lab.claims import load
from rlvr_lab.figures.experiments import (
    recorded_clip_figure,
    recorded_exploit_figure,
    recorded_length_figure,
    recorded_pass_at_k_figure,
)

load_recorded = load

warnings.warn(
    "rlvr_lab.recorded.figures moved to rlvr_lab.figures.experiments; the old path goes in 0.2",
    DeprecationWarning,
    stacklevel=2,
)
