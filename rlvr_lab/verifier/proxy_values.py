"""Deprecated: moved to :mod:`rlvr_lab.verifier.proxy.values`; this path goes in 0.2."""

import warnings

from rlvr_lab.verifier.proxy.values import *  # noqa: F401,F403

warnings.warn(
    "rlvr_lab.verifier.proxy_values moved to rlvr_lab.verifier.proxy.values; the old path goes in 0.2",
    DeprecationWarning,
    stacklevel=2,
)
