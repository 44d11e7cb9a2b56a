"""The dual workspace: capture, admit, apply (section 17.7.1, table 7).

Exploration happens elsewhere; what crosses into assessment is only the candidate's *change* against
the fixture's base revision. :func:`capture` turns an explored tree into that change,
:func:`admission_error` refuses any change outside the fixture's permitted paths (tests, conftest files,
pytest configuration, ``sitecustomize``, ``.pth`` files are never permitted unless a fixture says so),
and :func:`apply` writes base + change into a fresh directory that becomes the graded copy.
:func:`compile_error` is a cheap gate in front of the sandbox: a module the hidden tests import that
Python cannot even parse fails every test at import, so it fails without a trial (parsing runs nothing).
"""

from __future__ import annotations

import fnmatch
import os
import warnings
import posixpath
import shutil
from pathlib import Path
from typing import Mapping

from rlvr_lab.verifier.schema import Candidate, Fixture

#: Largest single candidate file accepted, characters.
MAX_FILE_CHARS = 1_000_000
#: Most files a candidate may change.
MAX_FILES = 200
#: Largest module the runner parses itself for :func:`compile_error`; larger ones go to a trial.
MAX_COMPILE_CHARS = 64 * 1024
#: Directory and file names never captured from an explored tree (caches, VCS metadata).
IGNORED_NAMES = ("__pycache__", ".git", ".pytest_cache", ".mypy_cache", ".ipynb_checkpoints")


def path_error(path: str) -> str | None:
    """Why ``path`` is not a safe relative POSIX path, or None.

    >>> path_error("pkg/mod.py") is None
    True
    >>> path_error("../etc/passwd")
    "path '../etc/passwd' leaves the workspace"
    """
    if not isinstance(path, str) or not path:
        return f"path {path!r} is not a non-empty string"
    if "\\" in path or "\0" in path or path.startswith("/"):
        return f"path {path!r} is not a relative POSIX path"
    if ".." in path.split("/"):
        return f"path {path!r} leaves the workspace"
    if posixpath.normpath(path) != path:
        return f"path {path!r} is not in normal form"
    return None


def admission_error(candidate: Candidate, fixture: Fixture) -> str | None:
    """The reason ``candidate`` may not be graded against ``fixture``, or None when it is admitted.

    >>> fx = Fixture("t", "v1", files={"solution.py": ""}, hidden_tests={}, allowed_paths=("solution.py",))
    >>> admission_error(Candidate({"solution.py": "x = 1"}), fx) is None
    True
    >>> admission_error(Candidate({"conftest.py": ""}), fx)
    "path 'conftest.py' is not permitted (allowed: solution.py)"
    """
    if not candidate.files:
        return "the candidate changes no file"
    if len(candidate.files) > MAX_FILES:
        return f"the candidate changes {len(candidate.files)} files; at most {MAX_FILES} are accepted"
    for path, text in sorted(candidate.files.items()):
        problem = path_error(path)
        if problem:
            return problem
        if not isinstance(text, str):
            return f"content of {path!r} is not text"
        if len(text) > MAX_FILE_CHARS:
            return f"{path!r} has {len(text)} characters; at most {MAX_FILE_CHARS} are accepted"
        if not any(fnmatch.fnmatchcase(path, pattern) for pattern in fixture.allowed_paths):
            allowed = ", ".join(fixture.allowed_paths) or "nothing"
            return f"path {path!r} is not permitted (allowed: {allowed})"
    return None


def module_of(path: str) -> str | None:
    """Dotted module name of a ``.py`` path, or None.

    >>> module_of("solution.py"), module_of("pkg/__init__.py"), module_of("pkg/mod.py"), module_of("a.txt")
    ('solution', 'pkg', 'pkg.mod', None)
    """
    if not path.endswith(".py"):
        return None
    parts = path[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts) or None


def compile_error(candidate: Candidate, fixture: Fixture) -> str | None:
    r"""Why a module the hidden tests import (one of ``fixture.modules``) cannot be compiled, or None.

    ``compile`` parses and generates bytecode; it executes nothing, so the trusted runner may call it on
    untrusted text. Only small files of the listed modules are checked, so the verdict is the one a trial
    would reach: the tests' import of that module raises, and every test fails. Anything else (a file no
    test imports, a very large file, a parser that gives up with RecursionError or MemoryError) is left
    to the trials.

    >>> fx = Fixture("t", "v1", files={"solution.py": ""}, hidden_tests={}, allowed_paths=("*.py",),
    ...              modules=("solution",))
    >>> print(compile_error(Candidate({"solution.py": "def f(:\n"}), fx))
    solution.py: SyntaxError: invalid syntax (line 1)
    >>> compile_error(Candidate({"solution.py": "def f():\n    return 1\n", "notes.py": "def (\n"}), fx) is None
    True
    """
    for path, text in sorted(candidate.files.items()):
        if module_of(path) not in fixture.modules or len(text) > MAX_COMPILE_CHARS:
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                compile(text, path, "exec", dont_inherit=True)
        except SyntaxError as exc:  # IndentationError and TabError included
            return f"{path}: {type(exc).__name__}: {exc.msg} (line {exc.lineno})"
        except ValueError as exc:  # e.g. a null byte in the source
            return f"{path}: ValueError: {exc}"
        except (RecursionError, MemoryError):
            continue
    return None


def capture(tree: Path, fixture: Fixture) -> Candidate:
    """The change an explored ``tree`` makes to ``fixture``'s base revision, as a :class:`Candidate`.

    Files equal to the base are left out; files missing from the tree are ignored (deletion is not a
    supported change); caches and VCS metadata are skipped. Symbolic links are refused.
    """
    tree = Path(tree)
    if not tree.is_dir():
        raise ValueError(f"tree must be an existing directory, got {tree}")
    files: dict[str, str] = {}
    for root, dirs, names in os.walk(tree, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in IGNORED_NAMES)
        for name in sorted(names):
            full = Path(root) / name
            rel = full.relative_to(tree).as_posix()
            if full.is_symlink():
                raise ValueError(f"tree contains a symbolic link {rel!r}; candidates are plain files")
            try:
                text = full.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                raise ValueError(f"file {rel!r} is not UTF-8 text") from None
            if fixture.files.get(rel) != text:
                files[rel] = text
    return Candidate(files)


def apply(fixture: Fixture, candidate: Candidate, dest: Path) -> Path:
    """Write the base revision then the candidate's change into the fresh directory ``dest``.

    The caller must have admitted the candidate; ``dest`` must not exist yet. Files are world-readable
    and owned by the runner, so the sandbox (another uid) can read but not change them.

    >>> import tempfile
    >>> fx = Fixture("t", "v1", files={"pkg/a.py": "A = 1", "b.py": ""}, hidden_tests={})
    >>> dest = apply(fx, Candidate({"pkg/a.py": "A = 2"}), Path(tempfile.mkdtemp()) / "graded")
    >>> (dest / "pkg" / "a.py").read_text(), capture(dest, fx).files
    ('A = 2', {'pkg/a.py': 'A = 2'})
    >>> remove(dest.parent)
    """
    dest = Path(dest)
    dest.mkdir(mode=0o755)
    merged: Mapping[str, str] = {**fixture.files, **candidate.files}
    for rel, text in merged.items():
        problem = path_error(rel)
        if problem:
            raise ValueError(problem)
        target = dest / rel
        if len(Path(rel).parts) > 1:
            target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        with open(target, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(target, 0o644)
    return dest


def remove(dest: Path) -> None:
    """Delete a graded copy (missing is fine)."""
    shutil.rmtree(dest, ignore_errors=True)
