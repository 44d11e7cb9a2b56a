"""GRPO, Dr. GRPO and DAPO side by side on the same warm start (section 17.5, eqs 2, 4-5).

Three arms per seed, each from that seed's warm start with the same sampling seed:

- ``grpo``: eq 4 as the chapter writes it: advantages divided by each group's std (eq 2), each rollout's
  token losses divided by its own length |o_i| (``norm="sequence"``, ``scale="group"``);
- ``dr_grpo``: Liu et al.'s two removals: no std division (``scale="none"``) and one constant denominator
  for every rollout (``norm="constant"``, the token budget);
- ``dapo``: Yu et al.'s token-level loss (``norm="token"``) and dynamic sampling (a step refills itself with
  unseen tasks until ``tasks_per_step`` groups have contrast; ``dynamic_sampling_rounds=3``).

The regime is the cpu preset (40 steps, 16 tasks x G 8, clip 0.2/0.28, beta 0.02, overlap off so the arms
differ only in the loss), written down before the runs. Reported per run: held-out pass@1 before and after
and its gain; the share of sampled groups that had contrast (what dynamic sampling buys) and the rollouts
each arm sampled (what it costs); wall seconds. Means over seeds with 95 % t intervals; paired differences
against ``grpo`` on the same seed.

    PYTHONPATH=. nice -n 10 python experiments/loss_variants.py --seeds 0 1 2
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import fmt, machine, mean_ci, write_result  # noqa: E402

REGIME = dict(overlap=False, eval_every=40, checkpoint_every=40)
ARMS = {
    "grpo": dict(norm="sequence", scale="group"),
    "dr_grpo": dict(norm="constant", scale="none"),
    "dapo": dict(norm="token", scale="group", dynamic_sampling=True, dynamic_sampling_rounds=3),
}
#: The code the numbers come from (rlvr_lab.claims.fingerprint hashes it with REGIME and ARMS).
#: Our engine's modules, the math, the model and the tasks; not the TRL engine, the CLI or the report, and not
#: the verifier, whose verdicts its own tests hold to pass/fail.
CODE = tuple(f"rlvr_lab/train/{m}.py" for m in (
    "config", "grpo_loop", "learner", "rollout", "run", "supervised", "metrics", "prompting", "precision",
    "checkpoint", "dynamic_sampling", "lora")) + (
    "rlvr_lab/grpo.py", "rlvr_lab/advantages.py", "rlvr_lab/policy.py", "rlvr_lab/tasks.py", "rlvr_lab/records.py",
    "rlvr_lab/scoring_mode.py", "experiments/loss_variants.py")  # fmt: skip


def contrast_share(rows: list[dict], group_size: int) -> float:
    """Share of the run's sampled groups whose members did not all get the same reward (each step row holds
    its groups' fractions; a step sampled rollouts / G groups)."""
    groups = [r["rollouts"] / group_size for r in rows]
    informative = sum(n * r["groups_contrast"] for n, r in zip(groups, rows))
    return informative / sum(groups) if sum(groups) else float("nan")


def run_seed(seed: int, out: str) -> dict:
    from rlvr_lab.train import TrainConfig, train

    base = TrainConfig.preset("cpu", seed=seed, progress=False, plots=False, **REGIME)
    warm = train(base.with_overrides(out_dir=os.path.join(out, "warm"), grpo_steps=0))
    row = {"seed": seed, "warm_pass1": warm.before["pass1"]}
    for arm, knobs in ARMS.items():
        d = os.path.join(out, arm)
        shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(os.path.join(warm.out_dir, "warmstart"), os.path.join(d, "warmstart"))
        result = train(base.with_overrides(out_dir=d, **knobs))
        rows = [r for r in result.metrics if r.get("step", -1) >= 0]
        row[arm] = {
            "pass1_after": result.after["pass1"],
            "gain": result.after["pass1"] - result.before["pass1"],
            "contrast_share": contrast_share(rows, base.group_size),
            "rollouts": sum(r["rollouts"] for r in rows),
            "wall_s": result.wall_s,
        }
        print(
            f"seed {seed} {arm}: pass@1 {result.before['pass1']:.3f} -> {result.after['pass1']:.3f}, "
            f"groups with contrast {row[arm]['contrast_share']:.3f}, {row[arm]['rollouts']} rollouts "
            f"({result.wall_s:.0f} s)",
            flush=True,
        )
    return row


def main(argv=None) -> int:
    from rlvr_lab.claims import fingerprint

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--out", default="runs/exp_loss_variants")
    args = parser.parse_args(argv)
    t0 = time.time()
    rows = [run_seed(s, os.path.join(args.out, f"seed{s}")) for s in args.seeds]
    summary = {}
    for key in ("pass1_after", "gain", "contrast_share", "rollouts", "wall_s"):
        summary[key] = {arm: mean_ci([r[arm][key] for r in rows]) for arm in ARMS}
        for arm in ("dr_grpo", "dapo"):
            summary[key][f"{arm}-grpo"] = mean_ci([r[arm][key] - r["grpo"][key] for r in rows])
    for key, by in summary.items():
        print(f"{key:15s} " + "  ".join(f"{arm} {fmt(ci, 3)}" for arm, ci in by.items()))
    write_result(
        "loss_variants",
        {
            "claim": "GRPO, Dr. GRPO and DAPO (token-level loss, dynamic sampling) from one warm start (17.5)",
            "command": "PYTHONPATH=. nice -n 10 python experiments/loss_variants.py --seeds "
            + " ".join(map(str, args.seeds)),
            "regime": REGIME,
            "arms": ARMS,
            "runs": rows,
            "summary": summary,
            "machine": machine(),
            "wall_s": time.time() - t0,
            "fingerprint": fingerprint(CODE, {"regime": REGIME, "arms": ARMS, "seeds": args.seeds}),
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
