"""Shared pytest configuration for the RLVR Lab test suite."""

import os

import pytest

# Tests never reach a model hub: every model is built from a config or saved locally.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("MPLBACKEND", "Agg")
# Lab notebooks size themselves from this preset; CI and tests run the small one.
os.environ.setdefault("RLVR_LAB_PRESET", "ci")

# nbval collects the exercise *solutions*; student notebooks are graded, not tested, and the hidden tests of
# exercise 9 run only in the verifier, against a student's function. The lab notebooks are executed once, by
# the book build (on the ci preset, a cell error failing the build; tests/test_book_build.py checks each
# executed lab for errors), not a second time by nbval.
# The labs' jupytext twins (labs/lab*.py) hold the same cells as their notebooks; --doctest-modules must not
# import (run) the twins.
collect_ignore_glob = [
    "labs/exercises/student/*",
    "labs/exercises/solutions/hidden/*",
    "**/.ipynb_checkpoints/*",
    "rlvr_lab/fixtures/*",
    "book/*",
    "labs/lab*.py",
    "labs/lab*.ipynb",
]

#: Test files that share one book build (tests/book_site.py). They run on one xdist worker, so the other
#: worker never sits idle waiting for the build another one is running.
BOOK_BUILD_FILES = ("test_book_build.py", "test_browser.py")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Under ``--dist loadgroup`` (pyproject.toml) each test file is one unit of work, as with
    ``--dist loadfile``, except that the files sharing the book build form one unit together."""
    for item in items:
        name = item.path.name
        item.add_marker(pytest.mark.xdist_group("book-build" if name in BOOK_BUILD_FILES else str(item.path)))
