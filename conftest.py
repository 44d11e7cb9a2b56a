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

#: Test files that need the one book build (tests/book_site.py).
BOOK_BUILD_FILES = ("test_book_build.py", "test_browser.py")


def pytest_collection_modifyitems(config, items):
    """The tests that need the book build run last (pyproject.toml's ``--no-loadscope-reorder`` keeps this
    order for xdist), so that the build started in the background below is done when they start."""
    items.sort(key=lambda item: item.path.name in BOOK_BUILD_FILES)  # stable: the rest keep their order


def pytest_collection_finish(session):
    """Start the book build in the background as soon as collection ends (on one xdist worker, only when a
    test that needs it was selected), so that it runs beside the other tests instead of a worker waiting on
    it. The tests that need it wait on the build's file lock as before (tests/book_site.py)."""
    if session.config.option.collectonly or os.environ.get("PYTEST_XDIST_WORKER", "gw0") != "gw0":
        return
    if not any(item.path.name in BOOK_BUILD_FILES for item in session.items):
        return
    factory = getattr(session.config, "_tmp_path_factory", None)  # what the tmp_path_factory fixture returns
    if factory is None:
        return
    import sys
    import threading

    tests = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tests")
    if tests not in sys.path:
        sys.path.insert(0, tests)
    from book_site import build_book, shared_dir

    threading.Thread(target=build_book, args=(shared_dir(factory),), name="book-build", daemon=True).start()
