"""Grading a class on this machine and over a Ray cluster of two nodes, in one run (section 17.14 spread as
section 17.9's fleet).

Builds ``--n`` submissions (default 16: the eight reference solutions and the eight untouched student
notebooks, repeated, each in a folder of its own), starts a Ray cluster of two nodes on this machine (a
head and a worker node, separate processes, :class:`rlvr_lab.verifier.ray_cluster.LocalCluster`; or joins
``--address``), and grades the same submissions ``--rounds`` times each way, taking turns (the order
alternates every round, so both see the same load on a shared machine):

* ``local``: :func:`rlvr_lab.grading.grade` with ``--workers`` threads on this machine;
* ``ray``: the same call with ``ray_address``: ``--workers`` grading slots spread over the two nodes.

Prints the median wall-clock seconds of a whole grading run and the median seconds per notebook
(launch to end of its sandbox) for each, the ratio ray / local, and the engine's overhead per notebook
(difference of the medians of the whole runs over ``--n``) with the part of it spent starting the actors,
and the load average before and after.
Both nodes share this machine's cores, so the cluster cannot be faster here: this measures what the
engine costs; on real machines the slots add the machines' cores. Every run's scores must equal the
expected ones (solutions full marks, student notebooks 0), the same way in both.

Usage: ``python benchmarks/grading_ray.py [--n 16] [--workers 2] [--rounds 3] [--address HOST:PORT]``
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
SOLUTIONS = os.path.join(ROOT, "labs", "exercises", "solutions")
STUDENTS = os.path.join(ROOT, "labs", "exercises", "student")


def build(folder: str, n: int) -> dict:
    """``n`` submissions in ``folder``; returns {folder name: expected full marks (True) or zero (False)}."""
    names = sorted(f for f in os.listdir(SOLUTIONS) if f.endswith(".ipynb"))
    expected = {}
    for i in range(n):
        source, honest = (SOLUTIONS, True) if i % 2 == 0 else (STUDENTS, False)
        name = names[(i // 2) % len(names)]
        sub = os.path.join(folder, f"s{i:03d}")
        os.makedirs(sub)
        shutil.copy(os.path.join(source, name), os.path.join(sub, name))
        expected[f"s{i:03d}"] = honest
    return expected


def check(report: dict, folder: str, expected: dict) -> dict:
    """Scores as expected; returns {submission: (outcome, score, statuses)} to compare the two engines."""
    out = {}
    for sub in report["submissions"]:
        name = os.path.relpath(sub["path"], folder).split(os.sep)[0]
        full = sub["score"] == sub["max"] > 0
        if sub["outcome"] != "completed" or full != expected[name] or (not full and sub["score"] != 0):
            raise SystemExit(f"wrong grade for {name}: {sub['outcome']} {sub['score']}/{sub['max']} {sub['reason']}")
        out[name] = (sub["outcome"], sub["score"], tuple(p["status"] for p in sub["parts"].values()))
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=16, help="notebooks per grading run (default 16)")
    parser.add_argument("--workers", type=int, default=2, help="threads here, slots on the cluster (default 2)")
    parser.add_argument("--rounds", type=int, default=3, help="grading runs each way (default 3)")
    parser.add_argument("--timeout", type=float, default=120.0, help="budget per notebook, seconds")
    parser.add_argument("--address", default=None, help="join this Ray cluster instead of starting two nodes here")
    args = parser.parse_args(argv)
    if args.n < 2 or args.rounds < 1 or args.workers < 1:
        parser.error("--n must be >= 2, --rounds and --workers >= 1")
    import ray

    from rlvr_lab.grading import grade
    from rlvr_lab.verifier.ray_cluster import LocalCluster

    folder = tempfile.mkdtemp(prefix="rlvr-grade-bench-")
    expected = build(folder, args.n)
    load_before = os.getloadavg()
    cluster = None
    try:
        if args.address is None:
            cluster = LocalCluster(workers=1, cpus_per_node=2, extra_env={"PYTHONPATH": ROOT})
            cluster.connect()
            address = cluster.address
        else:
            address = args.address
            ray.init(address=address, include_dashboard=False, log_to_driver=False, logging_level="WARNING")
        times: dict = {"local": [], "ray": []}
        per_notebook: dict = {"local": [], "ray": []}
        startup = []
        grades, nodes = {}, set()
        for r in range(args.rounds):
            for engine in ("local", "ray") if r % 2 == 0 else ("ray", "local"):
                started = time.perf_counter()
                report = grade(
                    [folder],
                    key_dir=SOLUTIONS,
                    workers=args.workers,
                    timeout_s=args.timeout,
                    ray_address=None if engine == "local" else address,
                )
                times[engine].append(time.perf_counter() - started)
                per_notebook[engine].append(report["median_notebook_s"])
                grades.setdefault(engine, check(report, folder, expected))
                if engine == "ray":
                    nodes |= {s["node"] for s in report["submissions"]}
                    startup.append(report["startup_s"])
                    if report["faults"]:
                        raise SystemExit(f"faults in a benchmark run: {report['faults']}")
                print(
                    f"round {r + 1} {engine:<5} {times[engine][-1]:7.2f} s  load {os.getloadavg()[0]:.2f}",
                    file=sys.stderr,
                )
        if grades["ray"] != grades["local"]:
            raise SystemExit("the two engines graded differently")
    finally:
        if ray.is_initialized():
            ray.shutdown()
        if cluster is not None:
            cluster.shutdown()
        shutil.rmtree(folder, ignore_errors=True)
    med = {e: statistics.median(t) for e, t in times.items()}
    nb = {e: statistics.median(t) for e, t in per_notebook.items()}
    result = {
        "n": args.n,
        "workers": args.workers,
        "rounds": args.rounds,
        "nodes": len(nodes),
        "local_s": round(med["local"], 2),
        "ray_s": round(med["ray"], 2),
        "ratio_ray_over_local": round(med["ray"] / med["local"], 2),
        "overhead_per_notebook_s": round((med["ray"] - med["local"]) / args.n, 3),
        "ray_startup_s": round(statistics.median(startup), 2),
        "median_notebook_s": {e: round(v, 2) for e, v in nb.items()},
        "runs_s": {e: [round(x, 2) for x in t] for e, t in times.items()},
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in os.getloadavg()],
    }
    print(
        f"grading {args.n} notebooks, {args.workers} workers, median of {args.rounds} runs each "
        f"(load {result['load_before'][0]} -> {result['load_after'][0]}):"
    )
    print(f"  local (threads, 1 machine)  {result['local_s']:7.2f} s   median {nb['local']:.2f} s per notebook")
    print(f"  ray ({len(nodes)} nodes, same cores)  {result['ray_s']:7.2f} s   median {nb['ray']:.2f} s per notebook")
    print(
        f"  ray / local {result['ratio_ray_over_local']}x; engine overhead {result['overhead_per_notebook_s']:+.3f} "
        f"s per notebook, of which starting the actors {result['ray_startup_s']:.2f} s per run; every grade "
        "equal in both"
    )
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
