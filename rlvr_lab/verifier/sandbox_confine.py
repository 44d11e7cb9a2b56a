"""Deprecated: moved to :mod:`rlvr_lab.sandbox.confine`; this path goes in 0.2."""

import warnings

from rlvr_lab.sandbox.confine import *  # noqa: F401,F403

warnings.warn(
    "rlvr_lab.verifier.sandbox_confine moved to rlvr_lab.sandbox.confine; the old path goes in 0.2",
    DeprecationWarning,
    stacklevel=2,
)
