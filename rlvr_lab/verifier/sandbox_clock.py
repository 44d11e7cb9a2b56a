"""Deprecated: moved to :mod:`rlvr_lab.sandbox.clock`; this path goes in 0.2."""

import warnings

from rlvr_lab.sandbox.clock import *  # noqa: F401,F403

warnings.warn(
    "rlvr_lab.verifier.sandbox_clock moved to rlvr_lab.sandbox.clock; the old path goes in 0.2",
    DeprecationWarning,
    stacklevel=2,
)
