"""The dual workspace: capture, admit, apply (section 17.7.1, table 7).

Exploration happens elsewhere; what crosses into assessment is only the candidate's *change* against
the fixture's base revision. :func:`capture` turns an explored tree into that change,
:func:`admission_error` refuses any change outside the fixture's permitted paths (tests, conftest files,
pytest configuration, ``sitecustomize``, ``.pth`` files are never permitted unless a fixture says so),
and :func:`apply` writes base + change into a fresh directory that becomes the graded copy.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
import shutil
from pathlib import Path
from typing import Mapping

from rlvr_lab.verifier.schema import Candidate, Fixture

#: Largest single candidate file accepted, characters.
MAX_FILE_CHARS = 1_000_000
#: Most files a candidate may change.
MAX_FILES = 200
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
