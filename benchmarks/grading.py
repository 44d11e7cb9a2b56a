"""Grading throughput: a class of notebooks, each in its own sandbox, one of them endless (section 17.14).

Builds ``--n`` submissions (default 40): the eight reference solutions and the eight untouched student
notebooks, repeated, with one notebook whose third cell never ends. Prints, from one run:

* ``baseline``: the usual way to execute a notebook, ``nbclient`` with a fresh Jupyter kernel, in a
  subprocess per notebook, unsandboxed, on ``--baseline-n`` of the honest notebooks (median seconds);
* ``grade``: :func:`rlvr_lab.grading.grade` on all ``--n`` with ``--workers`` (default 2) and the default
  120 s budget per notebook: total wall-clock seconds, the median seconds per notebook (launch to end
  of its sandbox, the endless one excluded), and the ratio of that median to the baseline's;

with the load average before and after (the machine may be shared) and a check that the scores are
right: every solution full marks, every student notebook 0, the endless one "timed out in cell 3".

Usage: ``python benchmarks/grading.py [--n 40] [--workers 2] [--timeout 120] [--baseline-n 6]``
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOLUTIONS = os.path.join(ROOT, "labs", "exercises", "solutions")
STUDENTS = os.path.join(ROOT, "labs", "exercises", "student")
BASELINE = """
import sys, nbformat
from nbclient import NotebookClient
nb = nbformat.read(sys.argv[1], as_version=4)
NotebookClient(nb, timeout=600, allow_errors=True, kernel_name="python3").execute()
"""


def build(folder: str, n: int) -> dict:
    """Write ``n`` submissions (one endless) under ``folder``; return {path: "full", "zero" or "endless"}."""
    sources = [(SOLUTIONS, name) for name in sorted(os.listdir(SOLUTIONS)) if name.endswith(".ipynb")]
    sources += [(STUDENTS, name) for name in sorted(os.listdir(STUDENTS))]
    expected = {}
    for i in range(n - 1):
        src_dir, name = sources[i % len(sources)]
        target = os.path.join(folder, f"student{i:02d}", name)
        os.makedirs(os.path.dirname(target))
        shutil.copy(os.path.join(src_dir, name), target)
        expected[target] = "full" if src_dir == SOLUTIONS else "zero"
    with open(os.path.join(STUDENTS, sources[0][1]), encoding="utf-8") as handle:
        nb = json.load(handle)
    nb["cells"].insert(
        2,
        {
            "cell_type": "code",
            "metadata": {},
            "outputs": [],
            "execution_count": None,
            "source": "while True:\n    pass",
        },
    )
    endless = os.path.join(folder, "endless", sources[0][1])
    os.makedirs(os.path.dirname(endless))
    with open(endless, "w", encoding="utf-8") as handle:
        json.dump(nb, handle)
    expected[endless] = "endless"
    return expected


def baseline(paths: list) -> list:
    times = []
    for path in paths:
        started = time.monotonic()
        subprocess.run([sys.executable, "-c", BASELINE, path], check=True, capture_output=True, cwd=ROOT)
        times.append(time.monotonic() - started)
    return times


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=40)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--baseline-n", type=int, default=6)
    args = parser.parse_args(argv)
    from rlvr_lab.grading import grade

    folder = tempfile.mkdtemp(prefix="rlvr-grade-bench-")
    try:
        expected = build(folder, args.n)
        load_before = os.getloadavg()
        base = baseline([p for p, e in expected.items() if e == "full"][: args.baseline_n])
        started = time.monotonic()
        report = grade([folder], key_dir=SOLUTIONS, workers=args.workers, timeout_s=args.timeout)
        total = time.monotonic() - started
        load_after = os.getloadavg()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    subs = {s["path"]: s for s in report["submissions"]}
    honest = [s["runtime_s"] for p, s in subs.items() if expected[p] != "endless"]
    median, base_median = statistics.median(honest), statistics.median(base)
    print(
        f"load average before {load_before[0]:.2f} {load_before[1]:.2f}, after {load_after[0]:.2f} {load_after[1]:.2f}"
    )
    print(f"baseline  nbclient + Jupyter kernel, unsandboxed: median {base_median:.2f} s per notebook (n={len(base)})")
    print(
        f"grade     {args.n} notebooks, {args.workers} workers, budget {args.timeout:g} s: total {total:.1f} s, "
        f"median {median:.2f} s per notebook ({median / base_median:.2f}x the baseline's median)"
    )
    wrong = []
    for path, sub in subs.items():
        if expected[path] == "endless":
            ok = sub["outcome"] == "timeout" and sub["reason"].startswith("timed out in cell 3")
        else:
            ok = sub["outcome"] == "completed" and sub["score"] == (sub["max"] if expected[path] == "full" else 0)
        if not ok:
            wrong.append((path, sub["outcome"], sub["reason"], sub["score"], sub["max"]))
    print("scores: all as expected" if not wrong else f"scores: UNEXPECTED {wrong[:3]}")
    return 0 if not wrong else 1


if __name__ == "__main__":
    sys.exit(main())
