"""Deprecated: moved to :mod:`rlvr_lab.sandbox.zygote`; this path goes in 0.2."""

import warnings

from rlvr_lab.sandbox.zygote import *  # noqa: F401,F403

warnings.warn(
    "rlvr_lab.verifier.sandbox_zygote moved to rlvr_lab.sandbox.zygote; the old path goes in 0.2",
    DeprecationWarning,
    stacklevel=2,
)
