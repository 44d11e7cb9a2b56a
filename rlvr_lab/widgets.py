# ruff: noqa: F401 (a deprecated path: every import here is a re-export)
"""Deprecated: moved to :mod:`rlvr_lab.figures.widgets`; this path goes in 0.2."""

import warnings

from rlvr_lab.figures.widgets import (
    ALL,
    SCORE_TABLE,
    Dashboard,
    all_pass_explorer,
    clip_explorer,
    contrast_explorer,
    cycle_explorer,
    false_accept_explorer,
    fork_explorer,
    reward_weights_explorer,
    staleness_explorer,
    verifier_pool_explorer,
)

warnings.warn(
    "rlvr_lab.widgets moved to rlvr_lab.figures.widgets; the old path goes in 0.2", DeprecationWarning, stacklevel=2
)
