"""Deprecated: moved to :mod:`rlvr_lab.grading.notebook_executor`; this path goes in 0.2."""

import warnings

from rlvr_lab.grading.notebook_executor import (  # noqa: F401
    OUTPUT_EXCERPT,
    OUTPUT_CAP,
    MAX_ITEMS,
    MAX_DEPTH,
    serve,
    encode,
    main,
)

warnings.warn(
    "rlvr_lab.notebook_executor moved to rlvr_lab.grading.notebook_executor; the old path goes in 0.2",
    DeprecationWarning,
    stacklevel=2,
)
