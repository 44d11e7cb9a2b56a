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
import stat
from pathlib import Path
from collections.abc import Mapping

from rlvr_lab.verifier.schema import Candidate, Fixture

#: Largest single candidate file accepted, characters.
MAX_FILE_CHARS = 1_000_000
#: Most files a candidate may change.
MAX_FILES = 200
#: Largest module the runner parses itself for :func:`compile_error`; larger ones go to a trial.
MAX_COMPILE_CHARS = 64 * 1024
#: Directory and file names never captured from an explored tree (caches, VCS metadata).
IGNORED_NAMES = ("__pycache__", ".git", ".pytest_cache", ".mypy_cache", ".ipynb_checkpoints")


#: Longest file or directory name, bytes of UTF-8 (Linux NAME_MAX).
MAX_NAME_BYTES = 255
#: Longest relative path, bytes of UTF-8.
MAX_PATH_BYTES = 1024
#: Most characters over all files of one candidate.
MAX_TOTAL_CHARS = 4_000_000
#: Most directory entries :func:`capture` looks at beyond the fixture's own files.
MAX_WALK = 2000


def _utf8_error(text: str) -> str | None:
    """Why ``text`` cannot be written as UTF-8 (a lone surrogate), or None; linear time."""
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"is not valid Unicode text (lone surrogate at {exc.start})"
    return None


def path_error(path: str) -> str | None:
    """Why ``path`` is not a safe relative POSIX path, or None.

    >>> path_error("pkg/mod.py") is None
    True
    >>> path_error("../etc/passwd")
    "path '../etc/passwd' leaves the workspace"
    >>> path_error("a" * 300 + ".py")[:40]
    "path 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
    """
    if not isinstance(path, str) or not path:
        return f"path {path!r} is not a non-empty string"
    if _utf8_error(path):
        return f"path {path!r} is not valid Unicode text"
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in path):
        return f"path {path!r} holds a control character"
    if "\\" in path or path.startswith("/"):
        return f"path {path!r} is not a relative POSIX path"
    if ".." in path.split("/"):
        return f"path {path!r} leaves the workspace"
    if posixpath.normpath(path) != path:
        return f"path {path!r} is not in normal form"
    if len(path.encode("utf-8")) > MAX_PATH_BYTES:
        return f"path {path[:60]!r}... is longer than {MAX_PATH_BYTES} bytes"
    if any(len(part.encode("utf-8")) > MAX_NAME_BYTES for part in path.split("/")):
        return f"path {path[:60]!r}... has a name longer than {MAX_NAME_BYTES} bytes"
    return None


def collision_error(paths: list[str], base: Mapping[str, str]) -> str | None:
    """Why the candidate's ``paths`` cannot all be files beside the fixture's ``base`` files, or None.

    A path that is also a directory of another path (``a`` and ``a/b``) cannot be written.

    >>> collision_error(["a", "a/b"], {}) is None
    False
    >>> collision_error(["pkg/x.py"], {"pkg/y.py": ""}) is None
    True
    >>> collision_error(["pkg"], {"pkg/y.py": ""})
    "path 'pkg' is also a directory of 'pkg/y.py'"
    """
    files = set(base) | set(paths)
    dirs: dict[str, str] = {}
    for path in sorted(files):
        parts = path.split("/")
        for i in range(1, len(parts)):
            dirs.setdefault("/".join(parts[:i]), path)
    for path in sorted(files):
        if path in dirs:
            return f"path {path!r} is also a directory of {dirs[path]!r}"
    return None


def admission_error(candidate: Candidate, fixture: Fixture) -> str | None:
    """The reason ``candidate`` may not be graded against ``fixture``, or None when it is admitted.

    Everything a candidate controls is checked here (names, lengths, encodings, sizes, counts,
    colliding paths, problems met while capturing its tree), so that nothing it sends can later make
    the runner fail in a way that would read as an infrastructure fault.

    >>> fx = Fixture("t", "v1", files={"solution.py": ""}, hidden_tests={}, allowed_paths=("solution.py",))
    >>> admission_error(Candidate({"solution.py": "x = 1"}), fx) is None
    True
    >>> admission_error(Candidate({"conftest.py": ""}), fx)
    "path 'conftest.py' is not permitted (allowed: solution.py)"
    >>> admission_error(Candidate({"solution.py": "x = '\\ud800'"}), fx)
    "content of 'solution.py' is not valid Unicode text (lone surrogate at 5)"
    """
    problems = getattr(candidate, "problems", ())
    if problems:
        return str(problems[0])[:500]
    if not isinstance(candidate.files, Mapping):
        return "the candidate's files are not a mapping of path -> text"
    if not candidate.files:
        return "the candidate changes no file"
    if len(candidate.files) > MAX_FILES:
        return f"the candidate changes {len(candidate.files)} files; at most {MAX_FILES} are accepted"
    total = 0
    for path, text in sorted(candidate.files.items(), key=lambda item: str(item[0])):
        problem = path_error(path)
        if problem:
            return problem
        if not isinstance(text, str):
            return f"content of {path!r} is not text"
        if len(text) > MAX_FILE_CHARS:
            return f"{path!r} has {len(text)} characters; at most {MAX_FILE_CHARS} are accepted"
        total += len(text)
        if total > MAX_TOTAL_CHARS:
            return f"the candidate's files hold more than {MAX_TOTAL_CHARS} characters"
        if not any(fnmatch.fnmatchcase(path, pattern) for pattern in fixture.allowed_paths):
            allowed = ", ".join(fixture.allowed_paths) or "nothing"
            return f"path {path!r} is not permitted (allowed: {allowed})"
        problem = _utf8_error(text)
        if problem:
            return f"content of {path!r} {problem}"
    return collision_error(list(candidate.files), fixture.files)


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
    supported change); caches and VCS metadata are skipped. Anything that is not a plain change
    (symbolic links, FIFOs, sockets, devices, files that are not UTF-8 or larger than
    :data:`MAX_FILE_CHARS` allows, names that are not text, more than :data:`MAX_WALK` entries) is
    recorded in ``Candidate.problems`` and refused at admission. The work done here is bounded: a
    file is never opened unless ``lstat`` says it is a regular file small enough, it is opened without
    following links and without blocking, and at most the size limit is read (a sparse file of
    terabytes costs one ``lstat``).
    """
    tree = Path(tree)
    if not tree.is_dir():
        raise ValueError(f"tree must be an existing directory, got {tree}")
    files: dict[str, str] = {}
    problems: list[str] = []
    limit_bytes = 4 * MAX_FILE_CHARS
    seen = 0
    budget = MAX_WALK + len(fixture.files)
    for root, dirs, names in os.walk(tree, followlinks=False):
        seen += len(dirs) + len(names)
        if seen > budget:
            problems.append(f"the tree holds more than {budget} entries")
            break
        kept = []
        for d in sorted(dirs):
            if d in IGNORED_NAMES:
                continue
            if os.path.islink(os.path.join(root, d)):
                rel = Path(root, d).relative_to(tree).as_posix()
                problems.append(f"tree contains a symbolic link {rel!r}; candidates are plain files")
                continue
            kept.append(d)
        dirs[:] = kept
        for name in sorted(names):
            if name in IGNORED_NAMES:
                continue
            full = os.path.join(root, name)
            rel = Path(full).relative_to(tree).as_posix()
            problem = path_error(rel)
            if problem:
                problems.append(problem)
                continue
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                problems.append(f"tree contains a symbolic link {rel!r}; candidates are plain files")
                continue
            if not stat.S_ISREG(st.st_mode):
                problems.append(f"{rel!r} is not a regular file (mode {stat.filemode(st.st_mode)})")
                continue
            if st.st_size > limit_bytes:
                problems.append(f"{rel!r} has {st.st_size} bytes; at most {MAX_FILE_CHARS} characters are accepted")
                continue
            try:
                fd = os.open(full, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            except OSError as exc:
                problems.append(f"{rel!r} cannot be read: {exc.strerror}")
                continue
            with os.fdopen(fd, "rb") as handle:
                data = handle.read(limit_bytes + 1)
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                problems.append(f"file {rel!r} is not UTF-8 text")
                continue
            if fixture.files.get(rel) != text:
                files[rel] = text
    return Candidate(files, problems=tuple(problems))


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
