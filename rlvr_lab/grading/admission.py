"""Admission for ``rlvr-lab grade`` (section 17.14 over 17.7): what is graded, read as data in the grader.

Paths are collected without following links (a link, a path outside the submissions or inside the key, an
oversized file are refused with the reason; the same file twice is graded once); each notebook is parsed
with its failures named, matched to its exercise and scanned for report-only notes. The key folder's
module is loaded here too; it never reaches a sandbox.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys

DEFAULT_KEY = os.path.join("labs", "exercises", "solutions")
#: Largest notebook file admitted, bytes.
MAX_BYTES = 32 * 1024 * 1024
#: Most code cells run from one notebook.
MAX_CELLS = 2000
_CHECK_CALL = re.compile(r"checks\.(ex\d+)\.(part_[a-z])\b")
#: Static patterns reported as notes (never scored): ways a cell can reach for the grading machinery.
NOTE_PATTERNS = (
    (re.compile(r"\bsys\.(?:setprofile|settrace|_current_frames)\b"), "installs a profile/trace hook or reads frames"),
    (re.compile(r"/proc/|\bRLVR_GRADER|\bos\.environ\b"), "reads /proc or the environment"),
    (re.compile(r"\bsys\.modules\b|\bimportlib\.reload\b"), "touches sys.modules or reloads modules"),
    (re.compile(r"^\s*(?:rlvr_lab\.)?checks(?:\.\w+)+\s*=(?!=)", re.M), "assigns into checks"),
    (re.compile(r"%run\b|\bexercise_key\b|\bsolutions\b"), "runs other notebooks or names the key"),
)


#: The module of the key folder that computes the expected values (never part of the package).
KEY_MODULE = "exercise_key.py"


def load_key_module(key_dir: str):
    """Import ``KEY_MODULE`` from the key folder ``key_dir`` (the grader's process only).

    >>> load_key_module("labs/exercises/solutions").verify("ex1.part_c", {"harden_when": "before"})
    []
    """
    import importlib.util

    path = os.path.join(key_dir, KEY_MODULE)
    if not os.path.isfile(path):
        raise ValueError(f"key must be a directory holding {KEY_MODULE} and the reference solutions, got {key_dir!r}")
    name = "rlvr_exercise_key"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up by name
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def load_key(key_dir: str) -> tuple:
    """``({notebook stem: exercise id}, key module)`` for the key folder (``ex1_false_accepts`` -> ``ex1``).

    >>> load_key("labs/exercises/solutions")[0]["ex3_all_pass_rule"]
    'ex3'
    """
    if not os.path.isdir(key_dir):
        raise ValueError(f"key must be a directory of reference-solution notebooks, got {key_dir!r}")
    module = load_key_module(key_dir)
    exercises = {part.split(".")[0] for part in [*module.PARTS, *getattr(module, "CODE_PARTS", {})]}
    key = {}
    for name in sorted(os.listdir(key_dir)):
        stem = name[: -len(".ipynb")] if name.endswith(".ipynb") else ""
        if stem.split("_")[0] in exercises:
            key[stem] = stem.split("_")[0]
    if not key:
        raise ValueError(f"key directory {key_dir!r} holds no exercise notebook (ex1_*.ipynb ...)")
    return key, module


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def collect_submissions(paths, key_dir: str | None = None) -> tuple:
    """Expand files and folders, refusing what must not be graded.

    Returns ``(accepted, refused)``: ``accepted`` is a list of ``(path, (device, inode))`` in order, each
    file once; ``refused`` a list of ``(path, reason)``. Links are never followed; a path inside the key
    or outside every given submission is refused; a repeated file is refused as a duplicate.
    """
    accepted, refused, seen = [], [], {}
    key_real = os.path.realpath(key_dir) if key_dir else None
    roots = [os.path.abspath(p) for p in paths]

    def admit(path: str) -> None:
        absolute = os.path.abspath(path)
        try:
            info = os.lstat(absolute)
        except OSError as exc:
            refused.append((path, f"cannot be read: {exc.strerror}"))
            return
        real = os.path.realpath(absolute)
        if stat.S_ISLNK(info.st_mode):
            refused.append((path, "is a symbolic link (links are never followed)"))
        elif not stat.S_ISREG(info.st_mode):
            refused.append((path, "is not a regular file"))
        elif real != absolute or not any(_inside(real, r) for r in roots):
            refused.append((path, "lies outside the submissions (through a linked folder)"))
        elif key_real and _inside(real, key_real):
            refused.append((path, "lies inside the key folder"))
        elif info.st_size > MAX_BYTES:
            refused.append((path, f"is {info.st_size} bytes, over the {MAX_BYTES}-byte limit"))
        elif (info.st_dev, info.st_ino) in seen:
            refused.append((path, f"duplicate of {seen[(info.st_dev, info.st_ino)]} (graded once)"))
        else:
            seen[(info.st_dev, info.st_ino)] = path
            accepted.append((path, (info.st_dev, info.st_ino)))

    for path in paths:
        if os.path.islink(path):
            refused.append((path, "is a symbolic link (links are never followed)"))
        elif os.path.isdir(path):
            for root, dirs, files in os.walk(path, followlinks=False):
                for d in sorted(dirs):
                    if os.path.islink(os.path.join(root, d)):
                        refused.append((os.path.join(root, d), "is a symbolic link (links are never followed)"))
                dirs[:] = sorted(
                    d for d in dirs if d != ".ipynb_checkpoints" and not os.path.islink(os.path.join(root, d))
                )
                for name in sorted(files):
                    if name.endswith(".ipynb"):
                        admit(os.path.join(root, name))
        elif path.endswith(".ipynb") or os.path.exists(path):
            admit(path)
        else:
            refused.append((path, "does not exist"))
    if not accepted and not refused:
        raise ValueError("submission: no .ipynb notebook found in " + ", ".join(map(repr, paths)))
    return accepted, refused


def read_notebook(path: str) -> tuple:
    """Parse one admitted file: ``(code cells [(cell number, source)], error or None)``.

    >>> read_notebook("/nonexistent.ipynb")[1][:20]
    'cannot be read: [Err'
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as handle:
            raw = handle.read(MAX_BYTES + 1)
    except OSError as exc:
        return [], f"cannot be read: {exc}"
    try:
        nb = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        return [], f"notebook is not valid JSON: {str(exc)[:200]}"
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        return [], "not a notebook: no list of cells"
    cells = []
    for number, cell in enumerate(nb["cells"], start=1):
        if not isinstance(cell, dict):
            return [], f"cell {number} is not an object"
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(s, str) for s in source):
            source = "".join(source)
        if not isinstance(source, str):
            return (
                [],
                f"cell {number} has a source that is not text ({type(source).__name__} holding "
                f"{sorted({type(s).__name__ for s in source}) if isinstance(source, list) else '-'})",
            )
        cells.append((number, source))
    if len(cells) > MAX_CELLS:
        return [], f"notebook has {len(cells)} code cells, more than the {MAX_CELLS} the grader runs"
    return cells, None


def match_exercise(path: str, cells: list, key: dict) -> str | None:
    """The exercise a submission answers: by file name, else by the exercise its check calls name most."""
    stem = os.path.splitext(os.path.basename(path))[0]
    if stem in key:
        return key[stem]
    counts: dict = {}
    for _, source in cells:
        for match in _CHECK_CALL.finditer(source):
            counts[match.group(1)] = counts.get(match.group(1), 0) + 1
    known = set(key.values())
    counts = {ex: n for ex, n in counts.items() if ex in known}
    return max(sorted(counts), key=counts.get) if counts else None


def static_notes(cells: list) -> list:
    """Report-only notes: ``"cell N: <pattern>"`` for sources that reach for the grading machinery.

    The course's own Colab install cell (``rlvr_lab.colab.install_cell``, which reads ``os.environ``) is
    not reported.

    >>> static_notes([(3, "import sys\\nsys.setprofile(f)"), (4, "x = rewards.composite_reward(1, 0, 0)")])
    ['cell 3: installs a profile/trace hook or reads frames']
    """
    from rlvr_lab.colab import install_cell

    ours = install_cell().strip()
    return [
        f"cell {n}: {why}"
        for n, src in cells
        if src.strip() != ours
        for pattern, why in NOTE_PATTERNS
        if pattern.search(src)
    ]
