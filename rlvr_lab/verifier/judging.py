"""Judging one trial from the trusted pytest's reports (section 17.7).

The runner's pytest carries :class:`RecordPlugin`, which shuffles the hidden tests with the trial's
seed and records every report as plain data; the pytest child sends that record back over a pipe and
:func:`judge` decides the trial from it: ``pass`` only if pytest exited 0, nothing failed or was skipped,
nothing failed to collect, and every test function that a trusted ``ast`` scan of the hidden files
finds (:func:`expected_tests`) passed.
"""

from __future__ import annotations

import ast
import os
import random
from pathlib import Path
from typing import Any
from collections.abc import Mapping

#: Longest report excerpt kept in a trial's ``detail``, characters.
DETAIL_CHARS = 400


def expected_tests(hidden_tests: Mapping[str, str]) -> frozenset[str]:
    """Test ids (``path::name`` or ``path::Class::name``) that the hidden files define, by ``ast``.

    Parametrized tests count once; a verdict needs at least one passing item for each.

    >>> sorted(expected_tests({"test_a.py": "def test_x(): pass\\nclass TestY:\\n    def test_z(self): pass\\n",
    ...                        "helper.py": "def test_no(): pass"}))
    ['test_a.py::TestY::test_z', 'test_a.py::test_x']
    """
    found = set()
    for path, text in hidden_tests.items():
        name = path.rsplit("/", 1)[-1]
        if not (name.startswith("test_") or name.endswith("_test.py")) or not name.endswith(".py"):
            continue
        tree = ast.parse(text, filename=path)
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
                found.add(f"{path}::{node.name}")
            elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name.startswith("test"):
                        found.add(f"{path}::{node.name}::{item.name}")
    return frozenset(found)


def _short(report: Any) -> str:
    text = getattr(report, "longreprtext", "") or ""
    lines = [line for line in text.splitlines() if line.startswith("E ")]
    return (lines[-1] if lines else text.strip().splitlines()[-1] if text.strip() else "")[:DETAIL_CHARS]


class RecordPlugin:
    """Trusted pytest plugin: shuffles items with the trial's seed and records every report.

    It also keeps collection to the active hidden-test directory: the runner caches up to
    :data:`~rlvr_lab.verifier.runner.FIXTURE_CACHE` of them side by side, and pytest would otherwise list
    every sibling and match it against its ignore rules on each collection (about half of a new
    fixture's collection time).
    """

    def __init__(self) -> None:
        self.seed = 0
        self.reports: list[dict] = []
        self.collect_errors: list[dict] = []
        self.active_dir: str | None = None  # absolute path of the hidden-test directory being collected

    def pytest_ignore_collect(self, collection_path: Path, config: Any) -> bool | None:
        # pytest calls the last-registered plugin first (this one) and stops at the first answer
        active = self.active_dir
        if (
            active is not None
            and os.path.dirname(str(collection_path)) == os.path.dirname(active)
            and str(collection_path) != active
        ):
            return True  # another cached fixture's directory
        return None

    def pytest_collection_modifyitems(self, session: Any, config: Any, items: list) -> None:
        random.Random(self.seed).shuffle(items)

    def pytest_runtest_logreport(self, report: Any) -> None:
        self.reports.append(
            {
                "nodeid": report.nodeid,
                "when": report.when,
                "outcome": report.outcome,
                "summary": _short(report) if report.outcome != "passed" else "",
            }
        )

    def pytest_collectreport(self, report: Any) -> None:
        if report.outcome != "passed":
            self.collect_errors.append({"nodeid": report.nodeid, "summary": _short(report)})


def judge(result: dict, expected: frozenset[str], prefix: str) -> tuple[bool, str, str]:
    """Decide one trial from the pytest child's record: ``(passed, reason, detail)``.

    ``prefix`` is the node-id prefix of the hidden-test directory (e.g. ``tests/ab12/``). Only a
    clean run in which every expected test passed is a pass; exit code 5 (no tests) is a failure.

    >>> rec = {"exit": 0, "collect_errors": [], "reports": [
    ...     {"nodeid": "t/test_a.py::test_x", "when": "call", "outcome": "passed", "summary": ""}]}
    >>> judge(rec, frozenset({"test_a.py::test_x"}), "t/")[:2]
    (True, 'tests passed')
    >>> judge(rec, frozenset({"test_a.py::test_x", "test_a.py::test_y"}), "t/")[1]
    'expected tests did not pass: test_a.py::test_y'
    >>> judge({"exit": 5, "collect_errors": [], "reports": []}, frozenset(), "t/")[1]
    'pytest exit code 5'
    """
    for error in result.get("collect_errors", []):
        return False, "collection error", f"{error['nodeid']}: {error['summary']}"[:DETAIL_CHARS]
    for report in result.get("reports", []):
        if report["outcome"] == "failed":
            return False, f"test failed in {report['when']}", f"{report['nodeid']}: {report['summary']}"[:DETAIL_CHARS]
        if report["outcome"] == "skipped":
            return False, "test skipped", report["nodeid"][:DETAIL_CHARS]
    if result.get("exit") != 0:
        return False, f"pytest exit code {result.get('exit')}", ""
    passed = set()
    for report in result.get("reports", []):
        if report["when"] == "call" and report["outcome"] == "passed":
            nodeid = report["nodeid"]
            nodeid = nodeid[len(prefix) :] if nodeid.startswith(prefix) else nodeid
            passed.add(nodeid.split("[", 1)[0])
    if not passed:
        return False, "no test ran", ""
    missing = sorted(expected - passed)
    if missing:
        return False, "expected tests did not pass: " + ", ".join(missing)[:DETAIL_CHARS], ""
    return True, "tests passed", f"{len(passed)} tests"
