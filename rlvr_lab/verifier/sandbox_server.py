"""Deprecated: moved to :mod:`rlvr_lab.verifier.proxy.server`; this path goes in 0.2."""

import warnings

from rlvr_lab.verifier.proxy.server import *  # noqa: F401,F403

warnings.warn(
    "rlvr_lab.verifier.sandbox_server moved to rlvr_lab.verifier.proxy.server; the old path goes in 0.2",
    DeprecationWarning,
    stacklevel=2,
)
