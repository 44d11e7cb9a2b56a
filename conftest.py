"""Shared pytest configuration for the RLVR Lab test suite."""

import os

# Tests never reach a model hub: every model is built from a config or saved locally.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("MPLBACKEND", "Agg")
# Lab notebooks size themselves from this preset; CI and tests run the small one.
os.environ.setdefault("RLVR_LAB_PRESET", "ci")

# nbval collects the lab notebooks and the exercise *solutions*; student notebooks are graded, not tested, and
# the hidden tests of exercise 9 run only in the verifier, against a student's function.
# The labs' jupytext twins (labs/lab*.py) hold the same cells as their notebooks: nbval runs the notebooks,
# and --doctest-modules must not import (run) the twins.
collect_ignore_glob = [
    "labs/exercises/student/*",
    "labs/exercises/solutions/hidden/*",
    "**/.ipynb_checkpoints/*",
    "rlvr_lab/fixtures/*",
    "book/*",
    "labs/lab*.py",
]
