"""The learning claim: held-out pass@1 rises by >= 10 points over the warm start, averaged over 3 seeds.

Runs the ``cpu`` preset (warm start, GRPO, evaluation by the isolated verifier) for seeds 0, 1, 2 and
prints, per seed, pass@1 before and after with 95 % confidence intervals over held-out tasks, the gain and
the wall time, then the mean gain. Results also go to ``<out>/learning_claim.json``.

    .venv/bin/python experiments/learning_claim.py [--preset cpu] [--seeds 0 1 2] [--jobs 3]

``--jobs N`` runs N seeds at once in separate processes, one torch thread each (each run's wall time then
includes waiting for the others' share of the cores).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys


def run_seed(preset: str, seed: int, out_dir: str, threads: int | None) -> dict:
    """One full run (warm start, GRPO, evaluation) for one seed; returns its summary row."""
    import shutil

    import torch

    from rlvr_lab.train import TrainConfig, train

    if threads:
        torch.set_num_threads(threads)
    shutil.rmtree(out_dir, ignore_errors=True)
    result = train(TrainConfig.preset(preset, seed=seed, out_dir=out_dir, progress=False))
    print(
        f"seed {seed}: {result.before['pass1']:.3f} -> {result.after['pass1']:.3f} "
        f"({result.gain:+.3f}) in {result.wall_s:.0f} s",
        flush=True,
    )
    return {
        "seed": seed,
        "before": result.before,
        "after": result.after,
        "gain": result.gain,
        "wall_s": result.wall_s,
        "timing": result.timing,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="cpu", choices=["ci", "cpu", "gpu"])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--out", default="runs/learning_claim")
    parser.add_argument("--jobs", type=int, default=1, help="seeds run at once (separate processes)")
    parser.add_argument(
        "--summarize",
        action="store_true",
        help="do not train: print the table from the seeds' summary.json files under --out",
    )
    args = parser.parse_args(argv)
    if args.jobs < 1:
        raise ValueError(f"--jobs must be >= 1, got {args.jobs}")

    dirs = {seed: os.path.join(args.out, f"seed{seed}") for seed in args.seeds}
    if args.summarize:
        rows = []
        for seed in args.seeds:
            with open(os.path.join(dirs[seed], "summary.json"), encoding="utf-8") as fh:
                summary = json.load(fh)
            rows.append({"seed": seed, **{k: summary[k] for k in ("before", "after", "gain", "wall_s", "timing")}})
    elif args.jobs == 1:
        rows = [run_seed(args.preset, seed, dirs[seed], None) for seed in args.seeds]
    else:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=args.jobs, mp_context=ctx) as ex:
            futures = [ex.submit(run_seed, args.preset, seed, dirs[seed], 1) for seed in args.seeds]
            rows = [f.result() for f in futures]
    print(f"\npreset {args.preset}: held-out pass@1 (95% CI over tasks), isolated verifier")
    print(f"{'seed':>4}  {'warm start':<22} {'after GRPO':<22} {'gain':>7} {'wall s':>7}")
    for r in rows:
        b, a = r["before"], r["after"]
        print(
            f"{r['seed']:>4}  {b['pass1']:.3f} [{b['pass1_lo']:.3f},{b['pass1_hi']:.3f}]  "
            f"{a['pass1']:.3f} [{a['pass1_lo']:.3f},{a['pass1_hi']:.3f}]  {r['gain']:+7.3f} {r['wall_s']:7.0f}"
        )
    mean_gain = statistics.mean(r["gain"] for r in rows)
    print(
        f"mean gain {mean_gain:+.3f} ({100 * mean_gain:+.1f} points); claim (>= +10 points) "
        f"{'holds' if mean_gain >= 0.10 else 'does NOT hold'}"
    )
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "learning_claim.json"), "w", encoding="utf-8") as fh:
        json.dump({"preset": args.preset, "runs": rows, "mean_gain": mean_gain}, fh, indent=2, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
