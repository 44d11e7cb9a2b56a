"""``rlvr-lab grade``: grade section 17.14 exercise notebooks across the course's own boundary (17.7).

Threat model. A submission is untrusted code, as a candidate patch is for the verifier: it may loop,
crash, flood its output, forge records, read the file system for the key, patch or profile the
self-check module, or try to reach the grader and the other submissions. The design follows the
verifier: the verdict is computed where the submission cannot reach.

1. **Admission, in the grader.** Paths are collected without following links: a symbolic link, a path
   outside the given submissions or inside the key, a file over :data:`MAX_BYTES` is refused with its
   reason; the same file given twice (same device and inode) is graded once. Each notebook is parsed
   here: invalid JSON, a cell whose source is not text, more than :data:`MAX_CELLS` code cells are that
   notebook's outcome, named. Only the code cells' sources go on; stored outputs are never read.
2. **Execution, in a sandbox per notebook** (:mod:`rlvr_lab.grading_sandbox`): the verifier's backend,
   a fresh read-only workspace with only that notebook's cells, a private ``/tmp``, the grader's folders
   hidden, no network, an unprivileged uid, rlimits and a SIGKILL deadline. Inside,
   :mod:`rlvr_lab.notebook_executor` runs the cells in an IPython shell and reports, over a socket the
   grader holds, each cell's outcome, the answer variables' values (plain data) and integrity evidence.
3. **The grade, in the grader.** The key folder's ``exercise_key.py`` (:func:`load_key_module`; never
   in the package, hidden from every sandbox) compares the last reported values
   of each part's variables with expected values computed here only; the student's process never holds
   them (its self-checks compare salted hashes, :mod:`rlvr_lab.checks`). Values are read from the
   notebook's final state, so cell order and copies of check cells do not matter.
4. **Tampering is reported, with evidence**: grading machinery a cell replaced (builtins, ``math``,
   ``json``, the self-checks, profile hooks) and forged frames. A part whose values are not right and
   whose notebook shows such evidence reads ``tampered``; a static scan of the sources is reported as a
   note and never changes a score.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import statistics
import stat
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

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


# ---------------------------------------------------------------- admission


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
    exercises = {part.split(".")[0] for part in module.PARTS}
    key = {}
    for name in sorted(os.listdir(key_dir)):
        stem = name[:-len(".ipynb")] if name.endswith(".ipynb") else ""
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
                dirs[:] = sorted(d for d in dirs if d != ".ipynb_checkpoints"
                                 and not os.path.islink(os.path.join(root, d)))
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
            return [], f"cell {number} has a source that is not text ({type(source).__name__} holding " \
                       f"{sorted({type(s).__name__ for s in source}) if isinstance(source, list) else '-'})"
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

    >>> static_notes([(3, "import sys\\nsys.setprofile(f)"), (4, "x = rewards.composite_reward(1, 0, 0)")])
    ['cell 3: installs a profile/trace hook or reads frames']
    """
    return [f"cell {n}: {why}" for n, src in cells for pattern, why in NOTE_PATTERNS if pattern.search(src)]


# ---------------------------------------------------------------- scoring


def score_parts(key_module, exercise: str, run, stopped: str) -> dict:
    """Score every part of ``exercise`` from a run's final values (``run`` None: nothing ran)."""
    PARTS, verify = key_module.PARTS, key_module.verify
    values = run.values if run is not None else {}
    evidence = run.evidence if run is not None else []
    out = {}
    for part_id, part in PARTS.items():
        if not part_id.startswith(exercise + "."):
            continue
        entry = {"score": 0, "max": 1, "title": part.title}
        given = {name: values.get(name) for name in part.names}
        unanswered = all(v is None for v in given.values())
        try:
            problems = verify(part_id, given)
        except Exception as exc:  # a value the key cannot handle is a wrong answer, not a crash
            problems = [f"the key could not evaluate the values ({type(exc).__name__})"]
        if not problems:
            entry.update(score=1, status="correct", detail="")
        elif evidence:
            entry.update(status="tampered", detail="; ".join(evidence[:3])[:400])
        elif unanswered and stopped:
            entry.update(status="not run", detail=stopped)
        else:
            entry.update(status="unanswered" if unanswered else "wrong", detail=" ".join(problems)[:600])
        out[part_id] = entry
    return out


def _blank_parts(key_module, exercise: str | None, reason: str) -> dict:
    return score_parts(key_module, exercise, None, reason) if exercise else {}


# ---------------------------------------------------------------- the run


class _Progress:
    """A one-line progress bar over notebooks on stderr."""

    def __init__(self, total: int, enabled: bool):
        self.total, self.done, self.enabled, self.started = total, 0, enabled and total > 0, time.monotonic()
        self.lock = threading.Lock()
        self.draw()

    def draw(self, label: str = "") -> None:
        if not self.enabled:
            return
        width = 30
        filled = int(width * self.done / self.total)
        line = (f"\rgrading [{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} "
                f"{time.monotonic() - self.started:5.0f} s {label[-40:]:<40}")
        sys.stderr.write(line)
        sys.stderr.flush()

    def step(self, label: str) -> None:
        with self.lock:
            self.done += 1
            self.draw(label)
            if self.enabled and self.done == self.total:
                sys.stderr.write("\n")


def grade(submissions, key_dir: str = DEFAULT_KEY, workers: int = 2, timeout_s: float = 120.0,
          backend: str = "local", progress: bool = False, memory_mb: int = 4096) -> dict:
    """Grade notebooks; return the report (see ``book/instructors.md`` and ``rlvr-lab grade --json``).

    ``submissions`` are notebook paths or folders; ``timeout_s`` is each notebook's wall-clock budget in
    its sandbox; ``backend`` names the sandbox backend (``local``, or ``auto``).
    """
    from rlvr_lab.grading_sandbox import NotebookRunner, SandboxConfig
    from rlvr_lab.verifier.backend import SandboxUnavailable

    if not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
    if not timeout_s > 0:
        raise ValueError(f"timeout_s must be > 0 seconds, got {timeout_s}")
    key, key_module = load_key(key_dir)
    accepted, refused = collect_submissions(submissions, key_dir)
    started = time.monotonic()
    items = []
    for path, reason in refused:
        stem = os.path.splitext(os.path.basename(path))[0]
        duplicate = reason.startswith("duplicate of")
        exercise = None if duplicate else key.get(stem)
        items.append({"path": path, "exercise": exercise, "outcome": "refused", "reason": reason,
                      "parts": _blank_parts(key_module, exercise, "refused: " + reason), "runtime_s": 0.0})
    jobs = []
    for path, _ in accepted:
        cells, error = read_notebook(path)
        exercise = match_exercise(path, cells, key) if error is None else key.get(
            os.path.splitext(os.path.basename(path))[0])
        item = {"path": path, "exercise": exercise, "outcome": "invalid" if error else None, "reason": error or "",
                "parts": {}, "runtime_s": 0.0, "notes": static_notes(cells)}
        if error is None and exercise is None:
            item.update(outcome="invalid", reason="matches no exercise of the key")
        if item["outcome"] == "invalid":
            item["parts"] = _blank_parts(key_module, exercise, item["reason"])
        else:
            jobs.append((item, cells))
        items.append(item)

    config = SandboxConfig(backend=backend, timeout_s=float(timeout_s), memory_mb=memory_mb)
    hide = tuple(sorted({os.path.realpath(key_dir)} | {os.path.dirname(os.path.realpath(p)) for p, _ in accepted}))
    scratch = tempfile.mkdtemp(prefix="rlvr-grade-")
    bar = _Progress(len(jobs), progress)
    runners: list = []
    pool_error = None
    try:
        local, slots = threading.local(), iter(range(1 << 30))
        slot_lock = threading.Lock()

        def run_one(job):
            item, cells = job
            if getattr(local, "runner", None) is None:
                with slot_lock:
                    slot = next(slots)
                local.runner = NotebookRunner(Path(scratch) / f"slot{slot}", config, hide=hide)
                with slot_lock:
                    runners.append(local.runner)
            names = [n for pid, part in key_module.PARTS.items() if pid.startswith(item["exercise"] + ".") for n in part.names]
            return local.runner.run([src for _, src in cells], names, [n for n, _ in cells])

        with ThreadPoolExecutor(max_workers=max(1, min(workers, len(jobs) or 1))) as pool:
            futures = {pool.submit(run_one, job): job for job in jobs}
            for future in as_completed(futures):
                item, cells = futures[future]
                try:
                    run = future.result()
                except SandboxUnavailable as exc:
                    pool_error = str(exc)
                    run = None
                    item.update(outcome="infra", reason=f"sandbox unavailable: {exc}"[:300])
                except Exception as exc:  # the grader's own fault on this notebook: say so, grade the rest
                    run = None
                    item.update(outcome="infra", reason=f"grader error: {type(exc).__name__}: {exc}"[:300])
                if run is not None:
                    item.update(outcome=run.outcome, reason=run.reason, runtime_s=run.runtime_s,
                                tampering=run.evidence, cells_run=run.cells_run, cell_errors=run.errors)
                item["parts"] = score_parts(key_module, item["exercise"], run, item["reason"] if (
                    run is None or run.outcome != "completed") else "")
                bar.step(os.path.basename(item["path"]))
    finally:
        for runner in runners:
            runner.close()
        shutil.rmtree(scratch, ignore_errors=True)
    runtimes = [i["runtime_s"] for i in items if i["outcome"] not in ("refused", "invalid", "infra")]
    report = {"key": key_dir, "backend": backend, "timeout_s": timeout_s, "workers": workers,
              "elapsed_s": round(time.monotonic() - started, 1),
              "median_notebook_s": round(statistics.median(runtimes), 2) if runtimes else None,
              "load_average": [round(x, 2) for x in os.getloadavg()], "sandbox_error": pool_error,
              "submissions": []}
    for item in sorted(items, key=lambda i: (i["path"], i["outcome"] == "refused")):
        item["score"] = sum(p["score"] for p in item["parts"].values())
        item["max"] = sum(p["max"] for p in item["parts"].values())
        item["percent"] = round(100.0 * item["score"] / item["max"], 1) if item["max"] else 0.0
        item.setdefault("tampering", [])
        item["error"] = item["reason"] if item["outcome"] in ("refused", "invalid", "infra") else None
        report["submissions"].append(item)
    return report


# ---------------------------------------------------------------- reports


def format_table(report: dict) -> str:
    """The report as a plain-text table: one row per submission and part, then the class total."""
    lines = [f"{'submission':<48} {'part':<11} {'score':>5}  {'status':<10} {'time':>6}  reason"]
    for sub in report["submissions"]:
        head = f"{sub['path'][-48:]:<48} {'[' + (sub['exercise'] or '?') + ']':<11} " \
               f"{sub['score']}/{sub['max']:<3} {sub['outcome'] or '':<10} {sub['runtime_s']:6.1f}  {sub['reason']}"
        lines.append(head.rstrip())
        for part, entry in sub["parts"].items():
            lines.append(f"{'':<48} {part:<11} {entry['score']}/{entry['max']:<3} {entry['status']:<10} "
                         f"{'':>6}  {entry['detail'][:140]}".rstrip())
        for evidence in sub.get("tampering", [])[:5]:
            lines.append(f"{'':<48} tampering: {evidence[:150]}")
    graded = [s for s in report["submissions"] if s["outcome"] != "refused" or not s["reason"].startswith("duplicate")]
    total, most = sum(s["score"] for s in graded), sum(s["max"] for s in graded)
    lines.append(f"total {total}/{most} over {len(graded)} notebooks in {report['elapsed_s']} s "
                 f"(median {report['median_notebook_s']} s per notebook, load {report['load_average']})")
    return "\n".join(lines)


def write_csv(report: dict, path: str) -> None:
    """One row per submission and part (a refused or invalid notebook without parts gets one row)."""
    fields = ["path", "exercise", "part", "score", "max", "status", "detail", "outcome", "reason", "runtime_s",
              "tampering"]
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        for sub in report["submissions"]:
            base = {"path": sub["path"], "exercise": sub["exercise"] or "", "outcome": sub["outcome"],
                    "reason": sub["reason"], "runtime_s": sub["runtime_s"], "tampering": " | ".join(sub["tampering"])}
            rows = [dict(base, part=p, score=e["score"], max=e["max"], status=e["status"], detail=e["detail"])
                    for p, e in sub["parts"].items()] or [dict(base, part="", score=0, max=0, status=sub["outcome"],
                                                                 detail="")]
            writer.writerows(rows)


def register(subparsers) -> None:
    """Add ``rlvr-lab grade SUBMISSION... [--key DIR] [--json OUT] [--csv OUT]`` to the CLI."""
    parser = subparsers.add_parser("grade", help="grade section 17.14 exercise notebooks, each in its own sandbox",
                                   description=__doc__.split("\n\n")[0])
    parser.add_argument("submissions", nargs="+", metavar="SUBMISSION", help="notebooks or folders of notebooks")
    parser.add_argument("--key", default=DEFAULT_KEY, metavar="DIR",
                        help=f"folder of reference-solution notebooks, hidden from submissions (default {DEFAULT_KEY})")
    parser.add_argument("--json", default=None, metavar="OUT", help="also write the full report as JSON")
    parser.add_argument("--csv", default=None, metavar="OUT", help="also write one row per submission and part")
    parser.add_argument("--workers", type=int, default=2, help="notebooks executed in parallel (default 2)")
    parser.add_argument("--timeout", type=float, default=120.0, help="budget per notebook in seconds (default 120)")
    parser.add_argument("--backend", default="local", help="sandbox backend: local or auto (default local)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    parser.set_defaults(func=run)


def run(args) -> int:
    """Grade, print the table, write JSON/CSV. Exit 0; 2 for bad arguments; 3 if no sandbox could start."""
    key = args.key
    if key == DEFAULT_KEY and not os.path.isdir(key):  # run outside the repository root: use the checkout's key
        key = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), DEFAULT_KEY)
    try:
        report = grade(args.submissions, key_dir=key, workers=args.workers, timeout_s=args.timeout,
                       backend=args.backend, progress=not args.no_progress)
    except ValueError as exc:
        print(f"rlvr-lab grade: {exc}", file=sys.stderr)
        return 2
    print(format_table(report))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(report, handle, indent=2, default=str)
    if args.csv:
        write_csv(report, args.csv)
    if report["sandbox_error"]:
        print(f"rlvr-lab grade: {report['sandbox_error']}", file=sys.stderr)
        return 3
    return 0
