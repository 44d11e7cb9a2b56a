"""Little's law in practice: the verifier pool measured while the trainer trains (section 17.9.5, eq 9).

Runs a short GRPO run (``--preset ci`` or ``cpu``, ``--steps``) on a pool this script owns, the local
:class:`~rlvr_lab.verifier.VerifierPool` or, with ``--ray``, a
:class:`~rlvr_lab.verifier.RayVerifierPool` on a two-node Ray cluster started on this machine. The pool's
meter is reset once the warm start has written its checkpoint, so the window is the GRPO phase (and the
final held-out evaluation). It then prints, side by side, what equation 9 predicts from the measured
arrival rate and service time per verification
(:func:`rlvr_lab.cycle_time.verifier_utilization`, :func:`~rlvr_lab.cycle_time.verifier_workers`) and
Little's ``L = lambda W``, against what the meter's probe observed on its own: the share of slots busy and
the verifications inside, looked at at random moments (with standard errors). The mean wait is set
against the mean service time. Results go to
``--json`` (default ``experiments/results/littles_law.json``, read by chapter 8).

    .venv/bin/python experiments/littles_law.py [--preset ci] [--steps 6] [--workers 2] [--ray]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import ENGINE_CODE  # noqa: E402

TARGET_UTILIZATION = 0.8
#: The code the numbers come from (rlvr_lab.claims.fingerprint): the trainer, the pools and their meter, the
#: equations, and this script.
CODE = ENGINE_CODE + (
    "rlvr_lab/cycle_time.py",
    "rlvr_lab/verifier/pool.py",
    "rlvr_lab/verifier/meter.py",
    "rlvr_lab/verifier/ray_pool.py",
    "experiments/littles_law.py",
)


def measure(preset: str, steps: int, workers: int, use_ray: bool, out_dir: str) -> dict:
    """Train with a metered pool; returns the measured load and equation 9's prediction."""
    import shutil

    from rlvr_lab.train import TrainConfig, train
    from rlvr_lab.verifier import VerifierPool

    shutil.rmtree(out_dir, ignore_errors=True)
    config = TrainConfig.preset(
        preset,
        grpo_steps=steps,
        out_dir=out_dir,
        progress=False,
        plots=False,
        verifier_workers=workers,
        eval_every=max(steps, 1),
        heldout_tasks=8,
    )
    cluster = None
    if use_ray:
        from rlvr_lab.verifier.ray_cluster import LocalCluster
        from rlvr_lab.verifier.ray_pool import RayVerifierPool

        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        cluster = LocalCluster(
            workers=1,
            extra_env={"PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)},
        )
        cluster.connect()
        pool = RayVerifierPool(workers=workers, max_queue=max(64, 2 * config.tasks_per_step * config.group_size))
    else:
        pool = VerifierPool(workers=workers, max_queue=max(64, 2 * config.tasks_per_step * config.group_size))
    warm = os.path.join(out_dir, "warmstart", "lineage.json")
    done = threading.Event()

    def reset_after_warm_start() -> None:
        while not done.is_set() and not os.path.exists(warm):
            time.sleep(0.05)
        pool.meter.reset()

    watcher = threading.Thread(target=reset_after_warm_start, daemon=True)
    watcher.start()
    try:
        result = train(config, pool=pool)
        load = pool.meter.snapshot()
    finally:
        done.set()
        pool.close()
        if cluster is not None:
            import ray

            ray.shutdown()
            cluster.shutdown()
    measured = load.as_dict()
    return {
        "pool": type(pool).__name__,
        "preset": preset,
        "steps": steps,
        "workers": workers,
        "load_average": os.getloadavg()[0],
        "grpo_s": result.grpo_s,
        "rollouts": result.rollouts,
        "measured": measured,
        "predicted": predict(measured, workers),
    }


def predict(measured: dict, workers: int) -> dict:
    """Equation 9 from the measured arrival rate and service time.

    ``K t_v`` enters as one measured number, the mean service seconds ``S`` of a verification: a tiny
    policy's candidates are mostly refused at admission (0 trials, yet a slot's time), so ``K`` alone
    would undercount the work.
    """
    from rlvr_lab import cycle_time

    lam, service = measured["arrival_per_s"], measured["service_s"]
    if service <= 0 or lam <= 0:
        return {"utilization": 0.0, "workers_at_target": 0, "target_utilization": TARGET_UTILIZATION, "in_system": 0.0}
    return {
        "utilization": cycle_time.verifier_utilization(lam, 1, service, workers),
        "workers_at_target": cycle_time.verifier_workers(lam, 1, service, TARGET_UTILIZATION),
        "target_utilization": TARGET_UTILIZATION,
        "in_system": lam * measured["wait_s"],
    }


def report(row: dict) -> str:
    """The prediction and the measurement side by side, as plain text."""
    m, p = row["measured"], row["predicted"]
    lines = [
        f"{row['pool']} with {row['workers']} slots, {row['preset']} preset, {row['steps']} GRPO steps "
        f"({row['rollouts']} rollouts), window {m['elapsed_s']:.1f} s, load average {row['load_average']:.1f}",
        f"  measured: lambda = {m['arrival_per_s']:.2f} verifications/s, service S = K t_v = "
        f"{m['service_s'] * 1000:.1f} ms (mean trials K = {m['trials']:.2f}), mean wait W = "
        f"{m['wait_s'] * 1000:.0f} ms",
        f"  {'quantity':34s} {'eq 9 / Little':>14s} {'probe (' + str(m['looks']) + ' looks)':>22s}",
        f"  {'utilization rho':34s} {p['utilization']:14.3f} "
        f"{m['utilization_sampled']:14.3f} +- {m['utilization_sampled_se']:.3f}",
        f"  {'in the system L = lambda W':34s} {p['in_system']:14.2f} "
        f"{m['in_system_sampled']:14.2f} +- {m['in_system_sampled_se']:.2f}",
        f"  {'workers for rho <= ' + format(p['target_utilization'], '.1f'):34s} {p['workers_at_target']:14d} "
        f"{row['workers']:10d}",
        f"  mean wait / mean service = {m['wait_s'] / m['service_s']:.1f} (batches arrive at once: "
        f"most of W is queueing)"
        if m["service_s"]
        else "  no verification in the window",
        f"  producer blocked by the queue bound: {m['blocked_s']:.2f} s",
    ]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", choices=["ci", "cpu"], default="ci")
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--ray", action="store_true", help="also measure the RayVerifierPool on a local cluster")
    parser.add_argument("--out", default="runs/littles_law")
    parser.add_argument(
        "--json", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "littles_law.json")
    )
    args = parser.parse_args(argv)
    if args.steps < 1 or args.workers < 1:
        parser.error("--steps and --workers must be >= 1")
    rows = [measure(args.preset, args.steps, args.workers, False, os.path.join(args.out, "local"))]
    print(report(rows[-1]), flush=True)
    if args.ray:
        rows.append(measure(args.preset, args.steps, args.workers, True, os.path.join(args.out, "ray")))
        print(report(rows[-1]), flush=True)
    from rlvr_lab.claims import fingerprint

    command = (
        f"PYTHONPATH=. nice -n 10 python experiments/littles_law.py --preset {args.preset} --steps {args.steps}"
        + (f" --workers {args.workers}" if args.workers != 2 else "")
        + (" --ray" if args.ray else "")
    )
    config = {"preset": args.preset, "steps": args.steps, "workers": args.workers, "ray": args.ray}
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w", encoding="utf-8") as fh:
        json.dump(
            {
                "measured_on": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                "command": command,
                "rows": rows,
                "fingerprint": fingerprint(CODE, config),
            },
            fh,
            indent=1,
        )
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
