"""Plain test functions run without pytest's machinery: the runner's direct route (sections 17.7, 17.9.5).

Most hidden tests are plain module-level ``def test_*():`` functions asserting on what candidate code
returns. For them pytest's collection and per-test protocol cost more than the tests, so the runner decides
once per fixture, by a trusted ``ast`` scan (:func:`direct_refusal`), whether the files are plain: only
``test_*.py`` modules holding imports, functions, non-``Test`` classes, assignments and a docstring; test
functions with no parameters, decorators, ``async`` or ``yield``; no pytest hooks or marks; ``pytest`` used
only for ``raises``, ``approx``, ``fail`` and ``skip``. Plain files are executed as modules and their tests
called in the trial's seeded order (:func:`run_tests`); the record has the pytest route's shape, so
:func:`~rlvr_lab.verifier.judging.judge` reads both alike. Assertions are not rewritten: a failed ``assert``
reports its source line, not the compared values. Anything else goes to pytest.

Plain tests that import only the candidate, ``pytest`` and stateless standard-library modules
(:data:`PURE_MODULES`) run in the runner itself, with no fork (:func:`inprocess_refusal`): fresh test
modules and a freshly seeded ``random`` per trial, candidate modules dropped after it, only plain data or
handles from the candidate, and a watchdog that ends an overrunning trial (:class:`RunnerOverrun`, an
infrastructure fault).
"""

from __future__ import annotations

import ast
import functools
import random
import sys
import types
from collections.abc import Mapping

#: Names pytest treats specially at module level; a file defining one is not plain.
SPECIAL_NAMES = frozenset(
    {
        "pytestmark",
        "__test__",
        "setup_module",
        "teardown_module",
        "setUpModule",
        "tearDownModule",
        "setup_function",
        "teardown_function",
        "setup",
        "teardown",
        "conftest",
    }
)
#: ``pytest.<name>`` a plain file may use: helpers that work without a pytest session.
PYTEST_HELPERS = frozenset({"raises", "approx", "fail", "skip"})
#: How many hidden-test files the scans and compiled modules below are kept for: as many fixtures as a
#: runner keeps prepared (:data:`~rlvr_lab.verifier.runner.FIXTURE_CACHE`), one file each in the usual case.
CACHED_FILES = 256
#: Longest failure summary kept per test, characters (the judge trims evidence further).
SUMMARY_CHARS = 400
#: Standard-library modules a plain test may import and still run inside the runner process: no
#: threads, processes, files, signals or process-wide settings that a test could leave changed.
PURE_MODULES = frozenset(
    {
        "math",
        "cmath",
        "random",
        "string",
        "re",
        "collections",
        "itertools",
        "functools",
        "operator",
        "typing",
        "copy",
        "heapq",
        "bisect",
        "fractions",
        "statistics",
        "json",
        "hashlib",
        "dataclasses",
        "enum",
        "numbers",
        "textwrap",
        "unicodedata",
        "array",
        "base64",
        "binascii",
        "struct",
        "difflib",
        "pprint",
        "reprlib",
        "keyword",
    }
)


#: Builtins a test that runs inside the runner process may not name (they reach files, code or globals).
UNSAFE_BUILTINS = frozenset(
    {"exec", "eval", "compile", "open", "globals", "vars", "__import__", "setattr", "breakpoint"}
)


class RunnerOverrun(BaseException):
    """Raised by the runner's watchdog in a trial that outlived its budget (the trusted side hung)."""


def is_test_file(path: str) -> bool:
    """pytest's default test-file pattern (``test_*.py`` or ``*_test.py``).

    >>> is_test_file("tests/test_a.py"), is_test_file("a_test.py"), is_test_file("helpers.py")
    (True, True, False)
    """
    name = path.rsplit("/", 1)[-1]
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def _nodes(tree: ast.AST):
    """Every node under ``tree`` but constants (the leaves that make up most of a big test's literal data),
    depth first: what :func:`ast.walk` yields, at a fraction of its cost on such files."""
    stack = [tree]
    constant = ast.Constant
    while stack:
        node = stack.pop()
        yield node
        for field in node._fields:
            value = getattr(node, field, None)
            if type(value) is list:
                stack.extend(item for item in value if isinstance(item, ast.AST) and type(item) is not constant)
            elif isinstance(value, ast.AST) and type(value) is not constant:
                stack.append(value)


def _uses_yield(fn: ast.AST) -> bool:
    return any(isinstance(node, (ast.Yield, ast.YieldFrom)) for node in _nodes(fn))


@functools.lru_cache(maxsize=CACHED_FILES)
def _scan(path: str, text: str) -> tuple[str, tuple[str, ...], frozenset[str]]:
    """One parse and one walk of a hidden test file: (why it is not plain or '', every module it imports
    anywhere, every name it loads). Cached: a fixture's files are scanned once, not once per question."""
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError as exc:
        return f"{path} does not parse ({exc.msg})", (), frozenset()
    refusal = _file_refusal(path, tree)
    imports: list[str] = []
    loads: set[str] = set()
    for node in _nodes(tree):
        kind = type(node)
        if kind is ast.Name:
            loads.add(node.id)
        elif kind is ast.Import:
            imports.extend(a.name for a in node.names)
        elif kind is ast.ImportFrom:
            imports.append("." * node.level + (node.module or ""))
        elif (
            kind is ast.Attribute
            and not refusal
            and type(node.value) is ast.Name
            and node.value.id == "pytest"
            and node.attr not in PYTEST_HELPERS
        ):
            refusal = f"{path} uses pytest.{node.attr}"
    return refusal, tuple(imports), frozenset(loads)


def _file_refusal(path: str, tree: ast.Module) -> str:
    """Why the module-level statements of the test file ``path`` are not plain ('' when they are)."""
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if isinstance(node, ast.ImportFrom) and (
                node.level or (node.module or "").split(".")[0] in ("pytest", "_pytest")
            ):
                return f"{path} imports from {'.' * node.level}{node.module or ''}"
            if isinstance(node, ast.Import) and any(
                a.name.split(".")[0] == "_pytest" or (a.name.startswith("pytest.")) for a in node.names
            ):
                return f"{path} imports pytest internals"
            names = [a.asname or a.name for a in node.names]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names = [node.name]
            if node.name.startswith("test"):
                args = node.args
                if isinstance(node, ast.AsyncFunctionDef):
                    return f"{path}::{node.name} is async"
                if node.decorator_list:
                    return f"{path}::{node.name} is decorated"
                if args.posonlyargs or args.args or args.vararg or args.kwonlyargs or args.kwarg:
                    return f"{path}::{node.name} takes arguments (fixtures)"
                if _uses_yield(node):
                    return f"{path}::{node.name} is a generator"
        elif isinstance(node, ast.ClassDef):
            if node.name.startswith("Test"):
                return f"{path} defines test class {node.name}"
            names = [node.name]
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [n.id for t in targets for n in _nodes(t) if isinstance(n, ast.Name)]
            if any(name.startswith("test") for name in names):
                return f"{path} assigns a test name ({', '.join(names)})"
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            continue
        else:
            return f"{path} has a module-level {type(node).__name__} statement"
        for name in names:
            if name in SPECIAL_NAMES or name.startswith("pytest_"):
                return f"{path} defines {name}"
    return ""


def direct_refusal(hidden_tests: Mapping[str, str], shared: tuple[str, ...] = ()) -> str:
    """Why the hidden tests need pytest ('' when every file is plain and the direct path applies).
    ``shared``: the fixture's shared modules (``<name>.py``), helpers the tests import, not tests.

    >>> direct_refusal({"test_a.py": "from solution import f\\n\\ndef test_f():\\n    assert f(1) == 2\\n"})
    ''
    >>> direct_refusal({"test_a.py": "import pytest\\n\\n@pytest.mark.slow\\ndef test_f():\\n    pass\\n"})
    'test_a.py::test_f is decorated'
    >>> direct_refusal({"conftest.py": "", "test_a.py": "def test_f():\\n    pass\\n"})
    'conftest.py is not a test file'
    """
    if not hidden_tests:
        return "no hidden tests"
    helpers = {f"{name}.py" for name in shared}
    for path, text in sorted(hidden_tests.items()):
        if path in helpers:
            continue
        if not is_test_file(path):
            return f"{path} is not a test file"
        problem = _scan(path, text)[0]
        if problem:
            return problem
    return ""


def inprocess_refusal(hidden_tests: Mapping[str, str], modules: tuple[str, ...]) -> str:
    """Why plain hidden tests must run in a forked process ('' when the runner may run them itself): an
    import of anything but ``modules`` (the candidate's), ``pytest`` or :data:`PURE_MODULES`, anywhere in
    the file, or a use of ``exec``, ``eval``, ``compile``, ``open``, ``globals``, ``vars``, ``__import__``,
    ``setattr`` or ``breakpoint``.

    >>> inprocess_refusal({"test_a.py": "import math\\nfrom solution import *\\n"}, ("solution",))
    ''
    >>> inprocess_refusal({"test_a.py": "def test_x():\\n    import threading\\n"}, ("solution",))
    'test_a.py imports threading'
    """
    allowed = PURE_MODULES | set(modules) | {"pytest"}
    for path, text in sorted(hidden_tests.items()):
        _, imports, loads = _scan(path, text)
        for name in imports:
            if name.split(".")[0] not in allowed:
                return f"{path} imports {name}"
        used = sorted(loads & UNSAFE_BUILTINS)
        if used:
            return f"{path} uses {used[0]}"
    return ""


def defined_tests(text: str) -> list[str]:
    """Names of the module-level test functions of a plain file, in source order.

    >>> defined_tests("def helper():\\n    pass\\ndef test_b():\\n    pass\\ndef test_a():\\n    pass\\n")
    ['test_b', 'test_a']
    """
    names = [
        node.name for node in ast.parse(text).body if isinstance(node, ast.FunctionDef) and node.name.startswith("test")
    ]
    return list(dict.fromkeys(names))


def _outcome_of(exc: BaseException) -> str:
    """``skipped`` for pytest's skip outcomes (``pytest.skip``, ``pytest.xfail``), else ``failed``."""
    outcomes = sys.modules.get("_pytest.outcomes")
    if outcomes is not None and isinstance(exc, (outcomes.Skipped, outcomes.XFailed)):
        return "skipped"
    return "failed"


def _summary(exc: BaseException, filename: str, rel: str, lines: list[str]) -> str:
    """``rel:LINE: Type: message`` at the test file's innermost frame; a bare assert shows its source."""
    lineno = 0
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            lineno = tb.tb_lineno
        tb = tb.tb_next
    message = str(exc)
    if not message and isinstance(exc, AssertionError) and 0 < lineno <= len(lines):
        message = lines[lineno - 1].strip()
    return f"{rel}:{lineno}: {type(exc).__name__}: {message}"[:SUMMARY_CHARS]


@functools.lru_cache(maxsize=CACHED_FILES)
def compiled(filename: str, text: str) -> tuple[types.CodeType, tuple[str, ...]]:
    """The hidden test file ``text`` compiled under ``filename``, and its test names in source order
    (:func:`defined_tests`). Cached: every trial of a fixture runs the same code object in a fresh module,
    so only its first trial pays for the parse and the compile. Raises what :func:`compile` raises."""
    return compile(text, filename, "exec", dont_inherit=True), tuple(defined_tests(text))


def run_tests(files: Mapping[str, str], test_dir: str, prefix: str, seed: int) -> dict:
    """Run plain hidden tests in this (trusted, forked) process; the trial's record for ``judge``.

    ``files``: the hidden tests (relative path -> text), already found plain by :func:`direct_refusal`;
    ``test_dir``: their runner-owned directory (code objects are named by their paths there, so
    tracebacks and ``__file__`` match the pytest path); ``prefix``: node-id prefix of that directory;
    ``seed``: the trial seed, which shuffles the tests as the pytest path does. Candidate names reach
    the modules through the proxy's import hook, which the caller has bound to this trial's sandbox.
    """
    reports: list[dict] = []
    collect_errors: list[dict] = []
    tests: list[tuple[str, str, object, str, list[str]]] = []
    registered = []
    try:
        for rel, text in sorted(files.items()):
            filename = f"{test_dir}/{rel}"
            name = rel[:-3].replace("/", ".")
            module = types.ModuleType(name)
            module.__file__ = filename
            sys.modules[name] = module
            registered.append(name)
            lines = text.splitlines()
            try:
                code, names = compiled(filename, text)
                exec(code, module.__dict__)
            except RunnerOverrun:
                raise
            except BaseException as exc:  # the module could not be imported: pytest's collection error
                collect_errors.append({"nodeid": prefix + rel, "summary": _summary(exc, filename, rel, lines)})
                continue
            for test in names:
                fn = module.__dict__.get(test)
                if isinstance(fn, types.FunctionType):
                    tests.append((rel, test, fn, filename, lines))
        random.Random(seed).shuffle(tests)
        failed = 0
        for rel, test, fn, filename, lines in tests:
            nodeid = f"{prefix}{rel}::{test}"
            try:
                fn()
            except RunnerOverrun:
                raise
            except BaseException as exc:
                outcome = _outcome_of(exc)
                failed += outcome == "failed"
                reports.append(
                    {
                        "nodeid": nodeid,
                        "when": "call",
                        "outcome": outcome,
                        "summary": _summary(exc, filename, rel, lines),
                    }
                )
                continue
            reports.append({"nodeid": nodeid, "when": "call", "outcome": "passed", "summary": ""})
    finally:
        for name in registered:
            sys.modules.pop(name, None)
    exit_code = 2 if collect_errors else 1 if failed else 5 if not tests else 0
    return {"exit": exit_code, "reports": reports, "collect_errors": collect_errors}
