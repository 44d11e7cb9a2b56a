"""Deprecated: moved to :mod:`rlvr_lab.grading.admission`; this path goes in 0.2."""

import warnings

from rlvr_lab.grading.admission import (  # noqa: F401
    DEFAULT_KEY,
    MAX_BYTES,
    MAX_CELLS,
    NOTE_PATTERNS,
    KEY_MODULE,
    load_key_module,
    load_key,
    collect_submissions,
    read_notebook,
    match_exercise,
    static_notes,
)

warnings.warn(
    "rlvr_lab.grading_admission moved to rlvr_lab.grading.admission; the old path goes in 0.2",
    DeprecationWarning,
    stacklevel=2,
)
