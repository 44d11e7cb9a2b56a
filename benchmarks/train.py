"""Our GRPO loop against TRL's GRPOTrainer: rollouts per second and held-out pass@1, same run.

``--env repair`` compares whole repair episodes instead: ours (:mod:`rlvr_lab.train.repair_loop`) against
TRL's trainer fed through its rollout hook (:mod:`rlvr_lab.train.trl_repair`), both from the same seeded warm
start, on the same VerifierPool, for the same episodes per step, and the same update (GRPO's advantages as
eq 2 gives them: ours runs with ``EpisodeUpdate()``, not the trainer's default); the held-out figure is the
repair rate.

Both engines start from the same warm-start checkpoint, train on the same tasks for the same number of
rollouts (``--steps`` x tasks_per_step x group_size), take rewards from the same VerifierPool (with the same
verdict cache), and are evaluated by the same held-out protocol. TRL samples and updates in lockstep, so its
run has ``overlap`` off; ours keeps the preset's (the ``cpu`` preset updates on one batch while the next is
verified). Throughput counts the GRPO phase only
(sampling, verification, update; evaluation excluded) and is also given as the median over steps.

    .venv/bin/python benchmarks/train.py --preset cpu --steps 10
    .venv/bin/python benchmarks/train.py --preset cpu --steps 10 --env repair
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys


def _ours_step_rates(rows, per_step):
    return [per_step / r["step_s"] for r in rows if r.get("step_s")]


def _trl_step_rates(times, per_step, passes):
    """Rollouts per second of each generation: TRL logs one ``step_time`` per optimizer pass."""
    return [per_step / sum(times[i : i + passes]) for i in range(0, len(times) - passes + 1, passes)]


def engine_configs(preset: str, steps: int, seed: int, out: str, env: str = "functions"):
    """(shared base, ours, TRL's) :class:`~rlvr_lab.train.TrainConfig` for one comparison: the same preset,
    seed, steps and ``env``, no mid-run evaluation or checkpoint; TRL's with ``overlap`` off (it refuses it)."""
    from rlvr_lab.train import TrainConfig

    base = TrainConfig.preset(
        preset,
        env=env,
        seed=seed,
        grpo_steps=steps,
        eval_every=10**6,
        checkpoint_every=10**6,
        progress=False,
        plots=False,
    )
    ours = base.with_overrides(out_dir=os.path.join(out, "ours"))
    if env == "repair":  # train_repair_trl reads the repair run's config as ours does; TRL samples in lockstep
        return base, ours, base.with_overrides(out_dir=os.path.join(out, "trl"), overlap=False)
    trl = base.with_overrides(out_dir=os.path.join(out, "trl"), engine="trl", overlap=False)
    return base, ours, trl


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="cpu", choices=["ci", "cpu", "gpu"])
    parser.add_argument("--steps", type=int, default=10, help="GRPO steps for each engine")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="runs/bench_train")
    parser.add_argument("--env", default="functions", choices=["functions", "repair"])
    args = parser.parse_args(argv)

    from rlvr_lab.train import open_pool, train

    shutil.rmtree(args.out, ignore_errors=True)
    base, ours_cfg, trl_cfg = engine_configs(args.preset, args.steps, args.seed, args.out, args.env)
    if args.env == "repair":
        return repair(args, base, ours_cfg, trl_cfg)
    per_step = base.tasks_per_step * base.group_size
    pool = open_pool(base)
    try:
        ours = train(ours_cfg, pool=pool)
        ours_s = ours.grpo_s
        shutil.copytree(os.path.join(ours_cfg.out_dir, "warmstart"), os.path.join(trl_cfg.out_dir, "warmstart"))
        trl = train(trl_cfg, pool=pool)
        trl_s = trl.timing["grpo"]
    finally:
        pool.close()
    rows = [
        (
            "ours",
            ours.rollouts,
            ours_s,
            ours.rollouts / ours_s,
            statistics.median(_ours_step_rates(ours.metrics, per_step)),
            ours.after,
        ),
        (
            "trl",
            trl.rollouts,
            trl_s,
            trl.rollouts / trl_s,
            statistics.median(
                _trl_step_rates([r["step_time"] for r in trl.metrics if "step_time" in r], per_step, base.passes)
            ),
            trl.after,
        ),
    ]
    print(
        f"preset {args.preset}, {args.steps} GRPO steps x {per_step} rollouts, seed {args.seed}; "
        f"warm-start held-out pass@1 {ours.before['pass1']:.3f}"
    )
    print(
        f"{'engine':<6} {'rollouts':>8} {'grpo s':>8} {'rollouts/s':>11} {'median/step':>12}  held-out pass@1 [95% CI]"
    )
    for name, n, secs, rate, med, after in rows:
        print(
            f"{name:<6} {n:>8} {secs:>8.1f} {rate:>11.1f} {med:>12.1f}  "
            f"{after['pass1']:.3f} [{after['pass1_lo']:.3f}, {after['pass1_hi']:.3f}]"
        )
    print(
        f"ratio ours/trl rollouts/s: overall {rows[0][3] / rows[1][3]:.2f}x, median per step "
        f"{rows[0][4] / rows[1][4]:.2f}x; pass@1 difference {rows[0][5]['pass1'] - rows[1][5]['pass1']:+.3f}"
    )
    return 0


def repair(args, base, ours_cfg, trl_cfg) -> int:
    """``--env repair``: both engines over whole episodes; episodes per second and the held-out repair rate."""
    from rlvr_lab.train import open_pool
    from rlvr_lab.train.repair_loop import EpisodeUpdate, train_repair
    from rlvr_lab.train.trl_repair import train_repair_trl

    per_step = base.tasks_per_step * base.group_size
    pool = open_pool(base)
    try:
        # the same algorithm on both engines: eq 2's advantages as they are, the full rate from step 1
        ours = train_repair(ours_cfg, pool=pool, update=EpisodeUpdate())
        trl = train_repair_trl(trl_cfg, pool=pool)
    finally:
        pool.close()
    ours_steps = [per_step / t for t in ours["step_s"]]
    rows = [
        ("ours", ours, statistics.median(ours_steps)),
        ("trl", trl, statistics.median(_trl_step_rates(trl["step_times"], per_step, base.passes))),
    ]
    b = ours["before"]
    print(
        f"preset {args.preset}, env repair, {args.steps} GRPO steps x {per_step} episodes, seed {args.seed}; "
        f"warm-start held-out repair rate {b['repair_rate']:.3f} (trl's warm start: "
        f"{trl['before']['repair_rate']:.3f}), {b['turns']:.2f} turns per episode"
    )
    print(
        f"{'engine':<6} {'episodes':>8} {'grpo s':>8} {'episodes/s':>11} {'median/step':>12}  held-out repair [95% CI]"
    )
    for name, s, med in rows:
        a = s["after"]
        print(
            f"{name:<6} {s['episodes']:>8} {s['grpo_s']:>8.1f} {s['episodes'] / s['grpo_s']:>11.2f} {med:>12.2f}  "
            f"{a['repair_rate']:.3f} [{a['repair_lo']:.3f}, {a['repair_hi']:.3f}]; {a['turns']:.2f} turns"
        )
    rate = [s["episodes"] / s["grpo_s"] for _, s, _ in rows]
    print(
        f"ratio ours/trl episodes/s: overall {rate[0] / rate[1]:.2f}x, median per step {rows[0][2] / rows[1][2]:.2f}x; "
        f"repair-rate difference {ours['after']['repair_rate'] - trl['after']['repair_rate']:+.3f}; "
        f"trl replay max deviation {trl['replay_max_dev']:.1e} nats"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
