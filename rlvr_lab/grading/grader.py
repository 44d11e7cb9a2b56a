"""``rlvr-lab grade``: grade section 17.14 exercise notebooks across the course's own boundary (17.7).

A class's run: admission and parsing here (:mod:`rlvr_lab.grading.admission`), each notebook graded by
:func:`~rlvr_lab.grading.worker.grade_notebook` in its own sandbox, in ``workers`` threads or on a Ray
cluster (:mod:`rlvr_lab.grading.ray_grader`), then the report as a table and the CLI's exit code; every file it
writes (JSON, CSV, per-student feedback, Canvas, Gradescope) is :mod:`rlvr_lab.grading.exports`.
A part whose values are wrong and whose notebook shows tampering evidence reads ``tampered``; a static
scan of the sources is a note and never changes a score.
"""

from __future__ import annotations

import os
import statistics
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import replace

from rlvr_lab.grading.admission import (
    DEFAULT_KEY,
    collect_submissions,
    load_key,
    match_exercise,
    read_notebook,
    static_notes,
)
from rlvr_lab.grading.code_parts import ungraded
from rlvr_lab.grading.exports import Outputs, load_marks, write_csv, write_outputs  # noqa: F401 (write_csv re-exported)
from rlvr_lab.grading.gradescope import Layout, submitter_names
from rlvr_lab.grading.roster import add_totals, counted, student_of
from rlvr_lab.grading.worker import (
    GradeSettings,
    GradingSlot,
    KeyData,
    NotebookJob,
    grade_notebook,
    local_node,
    remember_key,
    score_parts,
)

#: The checkout this package lives in (its ``labs/exercises/solutions`` is the default key).
CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# ---------------------------------------------------------------- scoring


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
        line = (
            f"\rgrading [{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} "
            f"{time.monotonic() - self.started:5.0f} s {label[-40:]:<40}"
        )
        sys.stderr.write(line)
        sys.stderr.flush()

    def step(self, label: str) -> None:
        with self.lock:
            self.done += 1
            self.draw(label)
            if self.enabled and self.done == self.total:
                sys.stderr.write("\n")


def grade(
    submissions,
    key_dir: str = DEFAULT_KEY,
    workers: int = 2,
    timeout_s: float = 120.0,
    backend: str = "auto",
    progress: bool = False,
    memory_mb: int = 4096,
    ray_address: str | None = None,
) -> dict:
    """Grade notebooks; return the report (see ``book/instructors.md`` and ``rlvr-lab grade --json``).

    ``submissions`` are notebook paths or folders; ``workers`` notebooks run at once; ``timeout_s`` is each
    notebook's wall-clock budget in its sandbox; ``backend`` names the sandbox backend (``auto``, ``local``
    or ``docker``; the report's ``sandboxes`` says which ran, e.g. ``local-userns`` without root).
    ``ray_address``: grade on a Ray cluster instead of this machine (``"auto"``: the cluster this machine
    joined with ``ray start``; ``"HOST:6379"``): ``workers`` grading slots spread over its machines, each
    notebook in the same sandbox there, the key shipped as data, each notebook's ``node`` in the report
    (:mod:`rlvr_lab.grading.ray_grader`; needs the ``fleet`` extra). Admission and parsing stay here either way.
    """
    from rlvr_lab.sandbox.backend import SandboxUnavailable

    submissions = [submissions] if isinstance(submissions, str) else list(submissions)
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
    if not timeout_s > 0:
        raise ValueError(f"timeout_s must be > 0 seconds, got {timeout_s}")
    if ray_address is not None:
        if not isinstance(ray_address, str) or not ray_address.strip():
            raise ValueError(
                f"ray_address must be a Ray cluster address such as 'auto' or 'HOST:6379', got {ray_address!r}"
            )
        from rlvr_lab.grading.ray_grader import ray_module

        ray_module()  # an ImportError naming the extra, before any work
    key, key_module = load_key(key_dir)
    key_data = KeyData.from_dir(key_dir)
    remember_key(key_data, key_module)
    accepted, refused = collect_submissions(submissions, key_dir)
    started = time.monotonic()
    items = []
    for path, reason in refused:
        stem = os.path.splitext(os.path.basename(path))[0]
        duplicate = reason.startswith("duplicate of")
        exercise = None if duplicate else key.get(stem)
        items.append(
            {
                "path": path,
                "exercise": exercise,
                "outcome": "refused",
                "reason": reason,
                "parts": _blank_parts(key_module, exercise, "refused: " + reason),
                "runtime_s": 0.0,
            }
        )
    jobs = []
    for path, _ in accepted:
        cells, error = read_notebook(path)
        exercise = (
            match_exercise(path, cells, key) if error is None else key.get(os.path.splitext(os.path.basename(path))[0])
        )
        item = {
            "path": path,
            "exercise": exercise,
            "outcome": "invalid" if error else None,
            "reason": error or "",
            "parts": {},
            "runtime_s": 0.0,
            "notes": static_notes(cells),
        }
        if error is None and exercise is None:
            item.update(outcome="invalid", reason="matches no exercise of the key")
        if item["outcome"] == "invalid":
            item["parts"] = _blank_parts(key_module, exercise, item["reason"])
        else:
            jobs.append(NotebookJob(len(items), path, exercise, tuple(cells)))
        items.append(item)

    hide = tuple(sorted({os.path.realpath(key_dir)} | {os.path.dirname(os.path.realpath(p)) for p, _ in accepted}))
    settings = GradeSettings(backend=backend, timeout_s=float(timeout_s), memory_mb=memory_mb, hide=hide)
    bar = _Progress(len(jobs), progress)
    errors: list = []

    def finish(job, result, error, attempts: int, node: str) -> None:
        """Record one notebook's result, or why it has none (never a silent zero)."""
        item = items[job.index]
        if result is not None:
            item.update(result)
        else:
            if isinstance(error, SandboxUnavailable):
                errors.append(str(error))
                reason = f"sandbox unavailable: {error}"
            elif type(error).__name__ == "LostNotebook":
                reason = (
                    f"not graded: its grading worker was lost mid-notebook {attempts} time(s) "
                    f"(last on {error.node or '?'}: {error.error})"
                )
            else:  # the grader's own fault on this notebook: say so, grade the rest
                reason = f"grader error: {type(error).__name__}: {error}"
            item.update(
                outcome="infra", reason=reason[:300], parts=_blank_parts(key_module, job.exercise, reason[:300])
            )
        item.update(attempts=attempts, node=node)
        bar.step(os.path.basename(job.path))

    engine = {"engine": "threads", "ray_address": None, "nodes": [], "faults": []}
    if ray_address is None:
        _grade_here(jobs, key_data, settings, workers, finish)
        engine["nodes"] = [local_node()]
    else:
        from rlvr_lab.grading.ray_grader import RayGrader

        joined = time.monotonic()
        grader = RayGrader(key_data, settings, workers=workers, address=ray_address)
        engine["startup_s"] = round(time.monotonic() - joined, 2)  # join the cluster, start the actors
        try:
            grader.run(jobs, finish)
        finally:
            grader.close()
        engine.update(engine="ray", ray_address=ray_address, nodes=grader.nodes(), faults=grader.faults_as_dicts())
    runtimes = [i["runtime_s"] for i in items if i["outcome"] not in ("refused", "invalid", "infra")]
    report = {
        "key": key_dir,
        "backend": backend,
        "timeout_s": timeout_s,
        "workers": workers,
        "elapsed_s": round(time.monotonic() - started, 1),
        "median_notebook_s": round(statistics.median(runtimes), 2) if runtimes else None,
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "sandbox_error": errors[0] if errors else None,
        "sandboxes": sorted({i["sandbox"] for i in items if i.get("sandbox")}),
        **engine,
        "submissions": [],
    }
    report["ungraded"] = ungraded({"submissions": items})  # code parts the verifier could not decide
    for item in sorted(items, key=lambda i: (i["path"], i["outcome"] == "refused")):
        add_totals(item)
        item["student"] = student_of(item["path"], submissions)
        item.setdefault("tampering", [])
        item["error"] = item["reason"] if item["outcome"] in ("refused", "invalid", "infra") else None
        report["submissions"].append(item)
    return report


def _grade_here(jobs: list, key: KeyData, settings: GradeSettings, workers: int, finish) -> None:
    """Grade ``jobs`` on this machine: ``workers`` threads, each with a warm slot running :func:`grade_notebook`."""
    slots, local, lock = [], threading.local(), threading.Lock()

    def one(job):
        if getattr(local, "slot", None) is None:
            local.slot = GradingSlot(key, settings)
            with lock:
                slots.append(local.slot)
        return grade_notebook(job, key, settings, local.slot)

    try:
        with ThreadPoolExecutor(max_workers=max(1, min(workers, len(jobs) or 1))) as pool:
            futures = {pool.submit(one, job): job for job in jobs}
            for future in as_completed(futures):
                try:
                    result, error = future.result(), None
                except Exception as exc:
                    result, error = None, exc
                finish(futures[future], result, error, 1, local_node())
    finally:
        for slot in slots:
            slot.close()


# ---------------------------------------------------------------- reports


def format_table(report: dict) -> str:
    """The report as a plain-text table: one row per submission and part, then the class total."""
    lines = [f"{'submission':<48} {'part':<11} {'score':>5}  {'status':<10} {'time':>6}  reason"]
    for sub in report["submissions"]:
        head = (
            f"{sub['path'][-48:]:<48} {'[' + (sub['exercise'] or '?') + ']':<11} "
            f"{sub['score']}/{sub['max']:<3} {sub['outcome'] or '':<10} {sub['runtime_s']:6.1f}  {sub['reason']}"
        )
        lines.append(head.rstrip())
        for part, entry in sub["parts"].items():
            lines.append(
                f"{'':<48} {part:<11} {entry['score']}/{entry['max']:<3} {entry['status']:<10} "
                f"{'':>6}  {entry['detail'][:140]}".rstrip()
            )
        for evidence in sub.get("tampering", [])[:5]:
            lines.append(f"{'':<48} tampering: {evidence[:150]}")
    graded = [s for s in report["submissions"] if counted(s)]
    total, most = sum(s["score"] for s in graded), sum(s["max"] for s in graded)
    lines.append(
        f"total {total}/{most} over {len(graded)} notebooks in {report['elapsed_s']} s "
        f"(median {report['median_notebook_s']} s per notebook, load {report['load_average']}, "
        f"sandbox {', '.join(report.get('sandboxes') or ['none'])})"
    )
    if report.get("engine") == "ray":
        lost = report.get("faults") or []
        lines.append(
            f"graded on Ray at {report['ray_address']}: {len(report['nodes'])} node(s); "
            f"{len(lost)} notebook run(s) lost with their worker"
            + (f", {sum(not f['retried'] for f in lost)} not graded" if lost else "")
        )
    return "\n".join(lines)


def register(subparsers) -> None:
    """Add ``rlvr-lab grade SUBMISSION... [--key DIR] [--json OUT] [--csv OUT] [--feedback DIR] ...`` to the CLI."""
    parser = subparsers.add_parser(
        "grade",
        help="grade section 17.14 exercise notebooks, each in its own sandbox",
        description=__doc__.split("\n\n")[0],
    )
    parser.add_argument(
        "submissions",
        nargs="*",
        metavar="SUBMISSION",
        help="notebooks or folders of notebooks (one sub-folder per student names the student)",
    )
    parser.add_argument(
        "--key",
        default=DEFAULT_KEY,
        metavar="DIR",
        help=f"folder of reference-solution notebooks, hidden from submissions (default {DEFAULT_KEY})",
    )
    parser.add_argument("--json", default=None, metavar="OUT", help="also write the full report as JSON")
    parser.add_argument("--csv", default=None, metavar="OUT", help="also write one row per submission and part")
    parser.add_argument(
        "--feedback",
        default=None,
        metavar="DIR",
        help="write one feedback file per student, STUDENT.md and STUDENT.html, into DIR",
    )
    parser.add_argument(
        "--marks",
        default=None,
        metavar="FILE",
        help="merge the instructor's rubric marks (CSV: student,exercise,part,points,comment; "
        "points in [0, 2] or blank) into every total and export",
    )
    parser.add_argument(
        "--marks-template",
        default=None,
        metavar="OUT",
        help="write the marks CSV to fill in: one row per student and decision part",
    )
    parser.add_argument("--canvas", default=None, metavar="OUT", help="write a Canvas gradebook import CSV")
    parser.add_argument(
        "--canvas-roster",
        default=None,
        metavar="FILE",
        help="a Canvas gradebook export: matches students and assignment ids for --canvas",
    )
    parser.add_argument(
        "--gradescope",
        action="store_true",
        help="run as Gradescope's autograder: grade ROOT/submission, write ROOT/results/results.json",
    )
    parser.add_argument(
        "--gradescope-root",
        default="/autograder",
        metavar="ROOT",
        help="the autograder folder for --gradescope (default /autograder)",
    )
    parser.add_argument(
        "--exercises",
        default="",
        metavar="EX,EX",
        help="with --gradescope: the exercises the assignment asks for (ex1,ex7); a missing "
        "notebook shows as failed tests",
    )
    parser.add_argument("--workers", type=int, default=2, help="notebooks executed in parallel (default 2)")
    parser.add_argument("--timeout", type=float, default=120.0, help="budget per notebook in seconds (default 120)")
    parser.add_argument(
        "--backend",
        default="auto",
        help="sandbox backend: auto (local as root or in a user namespace, else docker), local "
        "or docker (default auto)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    parser.add_argument(
        "--ray-address",
        default=None,
        metavar="ADDRESS",
        type=_ray_address,
        help="grade on a Ray cluster (auto: the one this machine joined; HOST:6379): --workers "
        "slots spread over its machines, each notebook in its own sandbox there "
        "(needs rlvr-lab[fleet] on every machine)",
    )
    parser.set_defaults(func=run)


def _ray_address(text: str) -> str:
    """argparse type of ``--ray-address``: a non-empty cluster address."""
    import argparse

    if not text.strip():
        raise argparse.ArgumentTypeError("must be a Ray cluster address such as auto or HOST:6379")
    return text.strip()


def _plan(args) -> tuple:
    """``(submissions, key folder, Outputs)`` from the arguments; a ValueError for a contradiction."""
    key, layout = args.key, Layout(getattr(args, "gradescope_root", "/autograder"))
    gradescope = getattr(args, "gradescope", False)
    if gradescope and key == DEFAULT_KEY and os.path.isdir(os.path.join(layout.source, "key")):
        key = os.path.join(layout.source, "key")  # the key inside the autograder bundle
    if key == DEFAULT_KEY and not os.path.isdir(key):  # run outside the repository root: use the checkout's key
        key = os.path.join(CHECKOUT, DEFAULT_KEY)
    submissions = list(args.submissions) or ([layout.submission] if gradescope else [])
    if not submissions:
        raise ValueError("submission: name at least one notebook or folder (or run with --gradescope)")
    expect = tuple(e.strip() for e in getattr(args, "exercises", "").split(",") if e.strip())
    outputs = Outputs(
        json=args.json,
        csv=args.csv,
        feedback=getattr(args, "feedback", None),
        marks=getattr(args, "marks", None),
        marks_template=getattr(args, "marks_template", None),
        canvas=getattr(args, "canvas", None),
        canvas_roster=getattr(args, "canvas_roster", None),
        gradescope=layout.results if gradescope else None,
        expect=expect,
        submitter=submitter_names(layout) if gradescope else "",
    )
    return submissions, key, outputs


def run(args) -> int:
    """Grade, print the table, write every output asked for. Exit 0; 2 for bad arguments (a marks file, a
    roster) or no Ray; 3 if no sandbox (or no cluster) could start; 4 if a notebook stayed ungraded because
    its grading workers were lost; 5 if a code part's verdict stayed ``pending``/``unknown`` (listed in the
    report's ``ungraded``). With ``--gradescope`` a submission without notebooks still gets its
    ``results.json`` (zero, saying so); a sandbox that cannot start gets none (Gradescope shows the failure)."""
    try:
        submissions, key, outputs = _plan(args)
        marks = load_marks(outputs, submissions, key)
        report = grade(
            submissions,
            key_dir=key,
            workers=args.workers,
            timeout_s=args.timeout,
            backend=args.backend,
            progress=not args.no_progress,
            ray_address=getattr(args, "ray_address", None),
        )
    except (ValueError, ImportError) as exc:
        if _gradescope_empty(args, exc):
            return 0
        print(f"rlvr-lab grade: {exc}", file=sys.stderr)
        return 2
    except ConnectionError as exc:  # no Ray cluster at that address
        print(f"rlvr-lab grade: cannot join the Ray cluster {args.ray_address!r}: {exc}", file=sys.stderr)
        return 3
    if report["sandbox_error"] and outputs.gradescope:
        outputs = replace(outputs, gradescope=None)
    try:
        written = write_outputs(report, outputs, key, marks)
    except ValueError as exc:
        print(format_table(report))
        print(f"rlvr-lab grade: {exc}", file=sys.stderr)
        return 2
    print(format_table(report))
    for what, path in written:
        print(f"wrote {what}: {path}")
    if report.get("manual", {}).get("unused"):
        print(
            "rlvr-lab grade: marks for a notebook that was not submitted (not counted): "
            + "; ".join(report["manual"]["unused"][:10]),
            file=sys.stderr,
        )
    if report.get("manual", {}).get("unmarked"):
        print(
            f"rlvr-lab grade: {report['manual']['unmarked']} written argument(s) not yet marked (scored 0)",
            file=sys.stderr,
        )
    if report["sandbox_error"]:
        print(f"rlvr-lab grade: {report['sandbox_error']}", file=sys.stderr)
        return 3
    lost = [f["path"] for f in report.get("faults", []) if not f["retried"]]
    if lost:
        print(
            f"rlvr-lab grade: {len(lost)} notebook(s) not graded, their grading workers were lost: "
            + ", ".join(lost[:5]),
            file=sys.stderr,
        )
        return 4
    if report["ungraded"]:
        print(
            f"rlvr-lab grade: {len(report['ungraded'])} code part(s) not graded, the verifier could not decide "
            "(pending/unknown, 0 points until regraded): " + ", ".join(report["ungraded"][:5]),
            file=sys.stderr,
        )
        return 5
    return 0


def _gradescope_empty(args, error: Exception) -> bool:
    """``--gradescope`` on a submission holding no notebook: write a zero ``results.json`` saying so (True)."""
    if not getattr(args, "gradescope", False) or "no .ipynb notebook" not in str(error):
        return False
    submissions, key, outputs = _plan(args)
    empty = {"submissions": [], "elapsed_s": 0.0, "sandboxes": []}
    write_outputs(
        empty, Outputs(gradescope=outputs.gradescope, expect=outputs.expect, submitter=outputs.submitter), key, {}
    )
    print(f"rlvr-lab grade: {error}; wrote a zero results.json: {outputs.gradescope}")
    return True
