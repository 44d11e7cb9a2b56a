"""The repair trainer's held-out figure over seeds (issue 24; sections 17.5 and 17.8).

Each seed runs :func:`rlvr_lab.train.repair_loop.train_repair` exactly as ``rlvr-lab train --env repair
--steps N --seed S`` runs it (``cpu`` preset): the suite split by problem, then variant
:data:`~rlvr_lab.train.repair_loop.HELDOUT_VARIANT` of every training problem held out by task (never
demonstrated, never trained on); the warm start on scripted repairs; GRPO over whole episodes. Two arms share
each seed's warm start, because the trainer seeds it:

* ``eq2``: the trainer's default update (:data:`~rlvr_lab.train.repair_loop.TRAINER_UPDATE`): GRPO's
  advantages as eq 2 gives them, the full learning rate from the first step;
* ``passes``: the failures' advantages set to 0, so only passes are reinforced, and an 8-step learning-rate
  warmup (``--negative-weight 0 --lr-warmup-steps 8``), the update that moved the trained tasks most in
  ``experiments/repair_learning.py``.

Stored (``experiments/results/repair_heldout.json``): per seed and arm the run's summary (held-out tasks and
held-out problems before and after with Wilson intervals, turns and tool calls per episode, seconds) and
each step's training repair rate and KL; over seeds the mean change of the held-out repair rate with a 95 %
t interval, and the mean wall time.

    PYTHONPATH=. nice -n 10 python experiments/repair_heldout.py
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import REPAIR_CODE, fmt, machine, mean_ci, write_result  # noqa: E402

#: The code the numbers come from (rlvr_lab.claims.fingerprint).
CODE = REPAIR_CODE + ("experiments/repair_heldout.py",)
#: Each arm's :class:`~rlvr_lab.train.repair_loop.EpisodeUpdate` fields.
ARMS = {"eq2": {"negative_weight": 1.0, "lr_warmup_steps": 0}, "passes": {"negative_weight": 0.0, "lr_warmup_steps": 8}}
#: What a step's row keeps.
STEP_KEYS = ("step", "repair_rate", "kl_mean", "entropy", "step_s")


def run_arm(seed: int, steps: int, arm: str) -> dict:
    """One ``train_repair`` run; the summary's figures and the per-step rows."""
    from rlvr_lab.train.config import TrainConfig
    from rlvr_lab.train.repair_loop import EpisodeUpdate, train_repair

    update = EpisodeUpdate(**ARMS[arm])
    with tempfile.TemporaryDirectory() as out:
        config = TrainConfig.preset("cpu", env="repair", seed=seed, grpo_steps=steps, out_dir=out)
        summary = train_repair(config, update=update)
        with open(os.path.join(out, "metrics.jsonl")) as fh:
            rows = [json.loads(line) for line in fh]
    keep = ("before", "after", "gain", "problems_before", "problems_after", "update", "train_tasks")
    keep += ("heldout_tasks", "heldout_problem_tasks", "demonstrations", "episodes", "grpo_s", "wall_s")
    result = {k: summary[k] for k in keep}
    result["steps"] = [{k: r[k] for k in STEP_KEYS if k in r} for r in rows]
    print(
        f"seed {seed} {arm:7s} held-out {summary['before']['repair_rate']:.3f} -> "
        f"{summary['after']['repair_rate']:.3f}; problems {summary['problems_before']['repair_rate']:.3f} -> "
        f"{summary['problems_after']['repair_rate']:.3f}; {summary['wall_s']:.0f} s",
        flush=True,
    )
    return result


def summarize(runs: list[dict]) -> dict:
    """Per arm: the mean change of the held-out tasks' and problems' repair rates over seeds (95 % t
    intervals) and the mean wall seconds."""
    out = {}
    for arm in ARMS:
        arms = [r["arms"][arm] for r in runs]
        out[arm] = {
            "gain": mean_ci([a["gain"] for a in arms]),
            "problems_gain": mean_ci(
                [a["problems_after"]["repair_rate"] - a["problems_before"]["repair_rate"] for a in arms]
            ),
            "before": mean_ci([a["before"]["repair_rate"] for a in arms]),
            "after": mean_ci([a["after"]["repair_rate"] for a in arms]),
            "wall_s": mean_ci([a["wall_s"] for a in arms]),
        }
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args(argv)
    from rlvr_lab.claims import fingerprint

    runs = [{"seed": s, "arms": {arm: run_arm(s, args.steps, arm) for arm in ARMS}} for s in args.seeds]
    summary = summarize(runs)
    for arm, row in summary.items():
        print(
            f"{arm:7s} held-out change {fmt(row['gain'])}; held-out problems {fmt(row['problems_gain'])}; "
            f"{row['wall_s']['mean']:.0f} s per run"
        )
    command = "PYTHONPATH=. nice -n 10 python experiments/repair_heldout.py"
    defaults = {"seeds": [0, 1, 2], "steps": 20}
    command += "".join(
        f" --{k} {' '.join(map(str, v)) if isinstance(v, list) else v}"
        for k, v in vars(args).items()
        if v != defaults[k]
    )
    config = {**vars(args), "arms": ARMS}
    data = {
        "command": command,
        "config": config,
        "runs": runs,
        "summary": summary,
        "machine": machine(),
        "fingerprint": fingerprint(CODE, config),
    }
    print("wrote", write_result("repair_heldout", data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
