"""Deprecated: moved to :mod:`rlvr_lab.verifier.proxy.imports`; this path goes in 0.2."""

import warnings

from rlvr_lab.verifier.proxy.imports import *  # noqa: F401,F403

warnings.warn(
    "rlvr_lab.verifier.proxy_import moved to rlvr_lab.verifier.proxy.imports; the old path goes in 0.2",
    DeprecationWarning,
    stacklevel=2,
)
