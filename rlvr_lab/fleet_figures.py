"""Deprecated: moved to :mod:`rlvr_lab.figures.fleet`; this path goes in 0.2."""

import warnings

from rlvr_lab.cycle_time import admitted_fraction  # noqa: F401
from rlvr_lab.figures.fleet import barrier_figure, cycle_figure, staleness_figure, verifier_pool_figure  # noqa: F401
from rlvr_lab.rewards import mixture_trials  # noqa: F401

warnings.warn(
    "rlvr_lab.fleet_figures moved to rlvr_lab.figures.fleet; the old path goes in 0.2", DeprecationWarning, stacklevel=2
)
