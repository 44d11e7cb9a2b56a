"""Deprecated: moved to :mod:`rlvr_lab.sandbox.namespaces`; this path goes in 0.2."""

import warnings

from rlvr_lab.sandbox.namespaces import *  # noqa: F401,F403

warnings.warn(
    "rlvr_lab.verifier.sandbox_setup moved to rlvr_lab.sandbox.namespaces; the old path goes in 0.2",
    DeprecationWarning,
    stacklevel=2,
)
