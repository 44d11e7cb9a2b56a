"""Verifier throughput on a small function task (section 17.9.5, verification capacity).

Prints, from one run, the median milliseconds per verification and verifications per second of:

* ``baseline``: the usual harness, ``python -m pytest`` in a fresh subprocess per candidate, on a fresh
  directory holding the candidate and the tests (no isolation at all); also shown with plugin
  autoloading off, the cheapest form of that baseline (ratios are against the usual one);
* ``verifier``: :class:`rlvr_lab.verifier.Verifier` on the local backend, one slot, sequential calls;
* ``pool-1`` and ``pool-2``: :class:`rlvr_lab.verifier.VerifierPool` with 1 and 2 slots, all candidates
  submitted at once (median is the per-request latency from submission; throughput is what counts);

then the throughput ratio of each against the baseline, and checks that every exploit candidate of the
function task is still rejected by the same verifier. Candidates alternate correct and incorrect.

Usage: ``python benchmarks/verifier.py [--n 200] [--baseline-n 20]``; with ``--ray`` it runs
``benchmarks/verifier_ray.py`` instead (the Ray pool beside the local pool, overhead per verification).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rlvr_lab.verifier import Candidate, Fixture, Limits, Verifier, VerifierPool

HIDDEN = """\
import pytest
from solution import clamp


def test_inside():
    assert clamp(5, 0, 10) == 5


def test_below_and_above():
    assert clamp(-3, 0, 10) == 0
    assert clamp(42, 0, 10) == 10


def test_bad_bounds():
    with pytest.raises(ValueError):
        clamp(1, 5, 0)
"""

GOOD = """\
def clamp(x, lo, hi):
    if lo > hi:
        raise ValueError("lo must not exceed hi")
    return max(lo, min(hi, x))
"""

BAD = """\
def clamp(x, lo, hi):
    return max(lo, min(hi, x))
"""

EXPLOITS = {
    "always-equal object": "class Yes:\n    def __eq__(self, o):\n        return True\n"
                           "def clamp(x, lo, hi):\n    if lo > hi:\n        raise ValueError\n    return Yes()\n",
    "int subclass": "class N(int):\n    def __eq__(self, o):\n        return True\n"
                    "def clamp(x, lo, hi):\n    if lo > hi:\n        raise ValueError\n    return N(0)\n",
    "sys.exit(0) at import": "import sys\nsys.exit(0)\n",
    "os._exit(0) in call": "import os\ndef clamp(x, lo, hi):\n    os._exit(0)\n",
    "patch pytest from the candidate": "import _pytest.reports\n" + GOOD,
    "read hidden tests from /proc": "import os\ndef clamp(x, lo, hi):\n"
                                    "    raise RuntimeError(str(os.listdir('/proc')))\n",
    "infinite loop": "def clamp(x, lo, hi):\n    while True:\n        pass\n",
}


def fixture() -> Fixture:
    return Fixture(name="clamp_bench", version="clamp_v1", files={"solution.py": "def clamp(x, lo, hi):\n    pass\n"},
                   hidden_tests={"test_hidden.py": HIDDEN}, allowed_paths=("solution.py",), modules=("solution",),
                   limits=Limits(wall_s=2.0, cpu_s=2, memory_mb=256, processes=16, file_mb=4, output_kb=64),
                   trials=1, checker_version="clamp_accept_v1")


def candidates(n: int) -> list[tuple[Candidate, str]]:
    """Alternating correct/incorrect candidates, each textually distinct (a comment with its index)."""
    out = []
    for i in range(n):
        good = i % 2 == 0
        out.append((Candidate({"solution.py": (GOOD if good else BAD) + f"# candidate {i}\n"}), "pass" if good else "fail"))
    return out


def baseline_once(cand: Candidate, fx: Fixture, lean: bool = False) -> str:
    work = Path(tempfile.mkdtemp(prefix="rlvr-bench-"))
    try:
        for rel, text in {**fx.files, **cand.files, **fx.hidden_tests}.items():
            (work / rel).write_text(text)
        env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1") if lean else None
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(work)],
                              cwd=work, capture_output=True, text=True, env=env)
        return "pass" if proc.returncode == 0 else "fail"
    finally:
        shutil.rmtree(work, ignore_errors=True)


def tree_cpu_s(pid: int) -> float:
    """CPU seconds of ``pid``, its reaped children and (recursively) its live children, from /proc."""
    tick = os.sysconf("SC_CLK_TCK")
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    total = sum(int(x) for x in fields[11:15]) / tick  # utime, stime, cutime, cstime
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            total += tree_cpu_s(int(child))
    return total


def timed(fn, items) -> tuple[list[float], float, list[str]]:
    """Per-item seconds, total seconds and outcomes of ``fn(item)`` over ``items`` sequentially."""
    per, outcomes = [], []
    start = time.perf_counter()
    for item in items:
        t = time.perf_counter()
        outcomes.append(fn(item))
        per.append(time.perf_counter() - t)
    return per, time.perf_counter() - start, outcomes


def pool_run(workers: int, items, fx: Fixture) -> tuple[list[float], float, list[str]]:
    with VerifierPool(workers=workers, max_queue=len(items), seed=11) as pool:
        pool.map([c for c, _ in items[:4]], fx)  # warm: hidden tests written, zygotes started
        start = time.perf_counter()
        submitted = []
        for cand, _ in items:
            submitted.append((time.perf_counter(), pool.submit(cand, fx)))
        latencies, outcomes = [], []
        for t0, fut in submitted:
            outcomes.append(fut.result().outcome)
        total = time.perf_counter() - start
        done_at = time.perf_counter()
        latencies = [done_at - t0 for t0, _ in submitted]  # upper bound; throughput is the figure here
    return latencies, total, outcomes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=200, help="candidates per verifier configuration")
    parser.add_argument("--baseline-n", type=int, default=20, help="candidates for the subprocess baseline")
    parser.add_argument("--ray", action="store_true", help="the Ray pool beside the local pool (verifier_ray.py)")
    args = parser.parse_args()
    if args.ray:
        from verifier_ray import run as run_ray

        run_ray(n=args.n)
        return 0
    fx = fixture()
    items = candidates(args.n)
    expected = [e for _, e in items]
    print(f"host: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; task: 3 hidden tests, "
          f"{args.n} candidates (half correct)")
    rows = []

    per, total, outcomes = timed(lambda it: baseline_once(it[0], fx), items[: args.baseline_n])
    assert outcomes == expected[: args.baseline_n], "baseline disagrees with the expected verdicts"
    rows.append(("baseline: pytest subprocess", statistics.median(per), len(per) / total))
    per, total, outcomes = timed(lambda it: baseline_once(it[0], fx, lean=True), items[: args.baseline_n])
    assert outcomes == expected[: args.baseline_n], "lean baseline disagrees with the expected verdicts"
    rows.append(("  same, plugin autoload off", statistics.median(per), len(per) / total))

    with Verifier(backend="local", retries=0, seed=7) as verifier:
        for cand, _ in items[:4]:
            verifier.verify(cand, fx)  # warm
        cpu0 = tree_cpu_s(verifier.runner_pid) + time.process_time()
        per, total, outcomes = timed(lambda it: verifier.verify(it[0], fx).outcome, items)
        cpu_ms = (tree_cpu_s(verifier.runner_pid) + time.process_time() - cpu0) / len(items) * 1000
        assert outcomes == expected, "verifier disagrees with the expected verdicts"
        rows.append(("verifier (local, 1 slot)", statistics.median(per), len(per) / total))
        rejected = {name: verifier.verify(Candidate({"solution.py": body}), fx).outcome
                    for name, body in EXPLOITS.items()}

    for workers in (1, 2):
        per, total, outcomes = pool_run(workers, items, fx)
        assert outcomes == expected, f"pool-{workers} disagrees with the expected verdicts"
        rows.append((f"pool ({workers} worker{'s' if workers > 1 else ''})", total / len(per), len(per) / total))

    base_rate = rows[0][2]
    print(f"{'configuration':30s} {'median ms/verif':>16s} {'verif/s':>9s} {'x baseline':>11s}")
    for name, median_s, rate in rows:
        label = "(mean)" if name.startswith("pool") else ""
        print(f"{name:30s} {median_s * 1000:10.1f} {label:>5s} {rate:9.1f} {rate / base_rate:10.1f}x")
    print("pool rows: ms/verification is wall time per candidate with the slots working in parallel")
    print(f"CPU time per verification, all processes together (caller, runner, pytest forks, zygote, "
          f"sandboxes): {cpu_ms:.1f} ms")
    print("exploits (all must be rejected):")
    for name, outcome in rejected.items():
        print(f"  {name:34s} {outcome}")
    ok = all(outcome != "pass" for outcome in rejected.values())
    print("every exploit rejected" if ok else "AN EXPLOIT PASSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
