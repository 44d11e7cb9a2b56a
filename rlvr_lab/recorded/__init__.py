"""Deprecated: renamed :mod:`rlvr_lab.claims` (the data lives there now); this path goes in 0.2."""

import warnings

from rlvr_lab.claims import NAMES, ci, load, table  # noqa: F401

warnings.warn("rlvr_lab.recorded moved to rlvr_lab.claims; the old path goes in 0.2", DeprecationWarning, stacklevel=2)
