"""Deprecated: moved to :mod:`rlvr_lab.sandbox.backend`; this path goes in 0.2."""

import warnings

from rlvr_lab.sandbox.backend import *  # noqa: F401,F403

warnings.warn(
    "rlvr_lab.verifier.backend moved to rlvr_lab.sandbox.backend; the old path goes in 0.2",
    DeprecationWarning,
    stacklevel=2,
)
