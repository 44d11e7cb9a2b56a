"""The verifier fleet on Ray against the local pool, in one run (section 17.9.5, verification capacity).

Starts a Ray cluster of two nodes on this machine (a head and a worker node, separate processes, as
:class:`rlvr_lab.verifier.ray_cluster.LocalCluster`; or joins ``--address``), then measures on the same
function task, alternating correct and incorrect candidates:

* latency: one candidate at a time, submit and wait, for :class:`~rlvr_lab.verifier.VerifierPool` and
  :class:`~rlvr_lab.verifier.RayVerifierPool` with 2 slots each, both open at once and taking turns
  (pairs in alternating order, so that both see the same load on a shared machine); the overhead per
  verification is the median of the paired differences (target: under 5 ms), with the difference of the
  medians and the Ray slot's own service time beside it;
* throughput: every candidate submitted at once, verifications per second of each pool.

Every verdict must equal the expected one. Usage: ``python benchmarks/verifier.py --ray [--n 200]`` or
``python benchmarks/verifier_ray.py [--n 200] [--latency-n 60] [--address HOST:PORT]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

from rlvr_lab.verifier import Candidate, Fixture, Limits, VerifierPool

HIDDEN = """\
from solution import span


def test_span():
    assert span([3, 1, 4]) == 3


def test_single():
    assert span([7]) == 0


def test_empty_is_refused():
    import pytest
    with pytest.raises(ValueError):
        span([])
"""
RIGHT = "def span(xs):\n    if not xs:\n        raise ValueError('empty')\n    return max(xs) - min(xs)\n"
WRONG = "def span(xs):\n    return max(xs) - min(xs) if xs else 0\n"


def task() -> Fixture:
    """A three-test function task (span of a list)."""
    return Fixture(
        name="span_bench",
        version="span_v1",
        files={"solution.py": "def span(xs):\n    pass\n"},
        hidden_tests={"test_hidden.py": HIDDEN},
        allowed_paths=("solution.py",),
        modules=("solution",),
        limits=Limits(wall_s=2.0, cpu_s=2, memory_mb=256, processes=16, file_mb=4, output_kb=64),
        checker_version="span_accept_v1",
    )


def batch(n: int, start: int = 0) -> list[tuple[Candidate, str]]:
    """``n`` textually distinct candidates, alternating right and wrong, with their expected verdicts."""
    return [
        (
            Candidate({"solution.py": (RIGHT if i % 2 == 0 else WRONG) + f"# candidate {i}\n"}),
            "pass" if i % 2 == 0 else "fail",
        )
        for i in range(start, start + n)
    ]


def latency(pool, items, fx) -> list[float]:
    """Seconds from submit to verdict, one candidate in flight at a time; checks every verdict."""
    out = []
    for cand, expected in items:
        t = time.perf_counter()
        verdict = pool.submit(cand, fx).result()
        out.append(time.perf_counter() - t)
        assert verdict.outcome == expected, f"{type(pool).__name__} gave {verdict.outcome}, expected {expected}"
    return out


def throughput(pool, items, fx) -> float:
    """Verifications per second with every candidate submitted at once; checks every verdict."""
    start = time.perf_counter()
    futures = [pool.submit(c, fx) for c, _ in items]
    outcomes = [f.result().outcome for f in futures]
    elapsed = time.perf_counter() - start
    assert outcomes == [e for _, e in items], f"{type(pool).__name__} disagrees with the expected verdicts"
    return len(items) / elapsed


def paired_latency(local, fleet, fx, n: int) -> tuple[list[float], list[float]]:
    """Per-candidate latencies of the two pools, measured in pairs whose order alternates."""
    a, b = [], []
    for i, item in enumerate(batch(n, 20_000)):
        if i % 2 == 0:
            a += latency(local, [item], fx)
            b += latency(fleet, [item], fx)
        else:
            b += latency(fleet, [item], fx)
            a += latency(local, [item], fx)
    return a, b


def rate(pool, fx, n: int) -> dict:
    """Throughput (verif/s), the slots' mean service time (ms) and their utilization over ``n`` candidates."""
    pool.meter.reset()
    per_s = throughput(pool, batch(n, 30_000), fx)
    load = pool.meter.snapshot()
    return {"rate": per_s, "service_ms": load.service_s * 1000, "utilization": load.utilization}


def run(n: int = 200, latency_n: int = 60, address: str | None = None, workers: int = 2) -> dict:
    """Both pools in one run (module docstring); prints the table and returns the numbers."""
    import ray

    from rlvr_lab.verifier.ray_cluster import LocalCluster
    from rlvr_lab.verifier.ray_pool import RayVerifierPool

    fx = task()
    print(
        f"host: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; task: 3 hidden tests; "
        f"{workers} slots per pool; latency over {latency_n} sequential candidates, throughput over {n}"
    )
    cluster = None
    if address is None:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        # Ray's own health-check pace (the fault tests' fast one would add background work to the timing)
        cluster = LocalCluster(
            workers=1,
            extra_env={
                "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p),
                "RAY_health_check_period_ms": "3000",
                "RAY_health_check_timeout_ms": "10000",
                "RAY_health_check_failure_threshold": "5",
            },
        )
        cluster.connect()
    else:
        ray.init(address=address, include_dashboard=False, log_to_driver=False, logging_level="WARNING")
    try:
        with (
            VerifierPool(workers=workers, max_queue=n, seed=11) as lp,
            RayVerifierPool(workers=workers, max_queue=n, seed=11) as rp,
        ):
            nodes = len(set(rp.nodes()))
            for pool in (lp, rp):
                pool.map([c for c, _ in batch(4, 10_000)], fx)  # warm: every slot has the tests collected
            lp.meter.reset()
            rp.meter.reset()
            lat_local, lat_ray = paired_latency(lp, rp, fx, latency_n)
            one_at_a_time = [pool.meter.snapshot() for pool in (lp, rp)]
            calls = []
            for _ in range(latency_n):  # the bare cost of one actor call on this cluster, for comparison
                t = time.perf_counter()
                ray.get(rp.slots[0].info.remote())
                calls.append(time.perf_counter() - t)
            local, fleet = rate(lp, fx, n), rate(rp, fx, n)
    finally:
        ray.shutdown()
        if cluster is not None:
            cluster.shutdown()
    local["median_ms"], fleet["median_ms"] = statistics.median(lat_local) * 1000, statistics.median(lat_ray) * 1000
    paired = statistics.median(remote - here for here, remote in zip(lat_local, lat_ray)) * 1000
    names = (f"VerifierPool ({workers} threads)", f"RayVerifierPool ({workers} actors, {nodes} nodes)")
    print(f"{'pool':36s} {'median ms/verif':>16s} {'slot service ms':>16s} {'verif/s':>9s} {'utilization':>12s}")
    for name, row in zip(names, (local, fleet)):
        print(
            f"{name:36s} {row['median_ms']:16.1f} {row['service_ms']:16.1f} {row['rate']:9.1f} "
            f"{row['utilization']:12.2f}"
        )
    print(
        f"Ray overhead per verification: {paired:+.1f} ms, median of paired differences "
        f"({'within' if paired < 5.0 else 'OVER'} the 5 ms target); difference of the medians "
        f"{fleet['median_ms'] - local['median_ms']:+.1f} ms; throughput ratio {fleet['rate'] / local['rate']:.2f}x; "
        f"load average now {os.getloadavg()[0]:.2f}"
    )
    for name, load in zip(names, one_at_a_time):
        print(
            f"{name:36s} one at a time: mean service {load.service_s * 1000:.1f} ms in the slot, mean "
            f"submission-to-verdict {load.wait_s * 1000:.1f} ms"
        )
    call_ms = statistics.median(calls) * 1000
    print(f"a bare Ray actor call (no verification) takes {call_ms:.1f} ms (median) on this cluster")
    return {"local": local, "ray": fleet, "overhead_ms": paired, "nodes": nodes, "actor_call_ms": call_ms}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=200, help="candidates for the throughput runs")
    parser.add_argument("--latency-n", type=int, default=60, help="sequential candidates for the latency runs")
    parser.add_argument("--address", default=None, help="join this Ray cluster instead of starting one here")
    args = parser.parse_args(argv)
    if args.n < 2 or args.latency_n < 2:
        parser.error("--n and --latency-n must be >= 2")
    run(args.n, args.latency_n, args.address)
    return 0


if __name__ == "__main__":
    sys.exit(main())
