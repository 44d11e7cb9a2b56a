"""Deprecated: moved to :mod:`rlvr_lab.sandbox.init`; this path goes in 0.2."""

import warnings

from rlvr_lab.sandbox.init import *  # noqa: F401,F403

warnings.warn(
    "rlvr_lab.verifier.sandbox_init moved to rlvr_lab.sandbox.init; the old path goes in 0.2",
    DeprecationWarning,
    stacklevel=2,
)
