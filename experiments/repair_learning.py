"""How fast GRPO moves the repair agent on tasks it trains on (issue 24's open gap; sections 17.5 and 17.8).

``rlvr-lab train --env repair`` leaves the held-out repair rate where the warm start put it. This probe takes
the question one step back: does GRPO over whole episodes raise the repair rate even on the tasks it trains
on, and on renamed copies of them?

For each seed the course's model is warm-started exactly as the trainer does it
(:func:`rlvr_lab.train.repair_loop.warm_start`, ``cpu`` preset). Three training problems of the demonstrated
bug kinds are drawn (seeded); GRPO then trains on their variant 0 only: each step plays G = 16 episodes of
each of the three tasks and takes the trainer's own step (:func:`~rlvr_lab.train.repair_loop.episode_step`:
complete-group rule, one ``grpo_update`` with the replay check). The repair rate is measured before and
after with a fixed sampling seed on the trained tasks (32 episodes each) and on the *unseen variants* of
the same problems (variants 1 and 2: another entry name and other tests; 16 episodes each).

Three arms start from the same warm start: ``preset`` (AdamW at the preset's learning rate from the first
step, as ``train_repair`` does by default), ``warmup`` (the same rate reached linearly over the first
``--warmup`` steps: Adam's first step moves every weight by about the full rate, whatever its gradient) and
``passes`` (the warmup, and every failure's advantage set to 0, so that only passes are reinforced:
:class:`~rlvr_lab.train.repair_loop.EpisodeUpdate` with ``negative_weight=0``).

Stored (``experiments/results/repair_learning.json``): per seed and arm the rates before and after (with
Wilson intervals), each step's training repair rate, KL and entropy; over seeds the mean change with a 95 %
t interval.

    PYTHONPATH=. nice -n 10 python experiments/repair_learning.py
"""

from __future__ import annotations

import argparse
import copy
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import REPAIR_CODE, fmt, machine, mean_ci, write_result  # noqa: E402

#: The code the numbers come from (rlvr_lab.claims.fingerprint).
CODE = REPAIR_CODE + ("experiments/repair_learning.py",)
#: Problems trained on per seed, episodes per task per step (G), and episodes per task in an evaluation of
#: the trained tasks and of the unseen variants (two per problem).
PROBLEMS, GROUP, EVAL_TRAINED, EVAL_UNSEEN = 3, 16, 32, 16
ARMS = ("preset", "warmup", "passes")


def rates(model, tokenizer, trained, unseen, config, verifier, version: int) -> dict:
    """Repair rates on the trained tasks and on the unseen variants, sampled with the fixed ``config.eval_seed``."""
    from rlvr_lab.train.repair_loop import evaluate_heldout

    return {
        which: evaluate_heldout(model, tokenizer, tasks, config.with_overrides(eval_samples=n), verifier, version)
        for which, tasks, n in (("trained", trained, EVAL_TRAINED), ("unseen", unseen, EVAL_UNSEEN))
    }


def probe_seed(seed: int, steps: int, warmup: int) -> dict:
    """Both arms from one warm start; the per-seed dict stored by :func:`main`."""
    from rlvr_lab.policy import SamplingConfig
    from rlvr_lab.train.config import TrainConfig
    from rlvr_lab.train.repair_loop import EpisodeUpdate, PoolVerifier, episode_learner, episode_step, warm_start
    from rlvr_lab.verifier import VerifierPool

    config = TrainConfig.preset("cpu", env="repair", seed=seed, group_size=GROUP)
    pool = VerifierPool(workers=config.verifier_workers, seed=seed)
    try:
        verifier = PoolVerifier(pool)
        start = warm_start(config, verifier)
        problems = sorted({t.problem_id for t in start.demos})
        chosen = random.Random(f"{seed}:repair-learning").sample(problems, PROBLEMS)
        trained = [t for t in start.train_tasks if t.problem_id in chosen and t.task_id.endswith("/v0")]
        unseen = [t for t in start.train_tasks if t.problem_id in chosen and not t.task_id.endswith("/v0")]
        sampling = SamplingConfig(config.temperature, config.top_k, config.top_p, config.max_new_tokens)
        before = rates(start.model, start.tokenizer, trained, unseen, config, verifier, 0)
        arms = {}
        for arm in ARMS:
            model = copy.deepcopy(start.model)
            learner, run_config = episode_learner(model, start.tokenizer, config)
            rows = []
            for step in range(steps):
                update = EpisodeUpdate(
                    negative_weight=0.0 if arm == "passes" else 1.0, lr_warmup_steps=0 if arm == "preset" else warmup
                )
                for group in learner.optimizer.param_groups:
                    group["lr"] = config.lr * update.lr_scale(step)
                _, row = episode_step(
                    learner, trained, run_config, sampling, verifier, step, negative_weight=update.negative_weight
                )
                rows.append({k: row[k] for k in ("step", "repair_rate", "kl_mean", "entropy", "step_s") if k in row})
            after = rates(model, start.tokenizer, trained, unseen, config, verifier, learner.version)
            arms[arm] = {"after": after, "steps": rows}
            print(
                f"seed {seed} {arm:7s} trained {before['trained']['repair_rate']:.3f} -> "
                f"{after['trained']['repair_rate']:.3f}, unseen {before['unseen']['repair_rate']:.3f} -> "
                f"{after['unseen']['repair_rate']:.3f}",
                flush=True,
            )
        return {
            "seed": seed,
            "problems": chosen,
            "trained_tasks": [t.task_id for t in trained],
            "unseen_tasks": [t.task_id for t in unseen],
            "before": before,
            "arms": arms,
        }
    finally:
        pool.close()


def summarize(runs: list[dict]) -> dict:
    """Per arm and task set: mean change of the repair rate over seeds with its 95 % t interval."""
    return {
        arm: {
            which: mean_ci(
                [r["arms"][arm]["after"][which]["repair_rate"] - r["before"][which]["repair_rate"] for r in runs]
            )
            for which in ("trained", "unseen")
        }
        for arm in ARMS
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=8, help="steps of the warmup and passes arms' linear rise")
    args = parser.parse_args(argv)
    from rlvr_lab.claims import fingerprint

    runs = [probe_seed(s, args.steps, args.warmup) for s in args.seeds]
    summary = summarize(runs)
    for arm, row in summary.items():
        print(f"{arm:7s} change, trained tasks {fmt(row['trained'])}; unseen variants {fmt(row['unseen'])}")
    command = "PYTHONPATH=. nice -n 10 python experiments/repair_learning.py"
    defaults = {"seeds": [0, 1, 2], "steps": 20, "warmup": 8}
    command += "".join(
        f" --{k} {' '.join(map(str, v)) if isinstance(v, list) else v}"
        for k, v in vars(args).items()
        if v != defaults[k]
    )
    config = {
        **vars(args),
        "problems": PROBLEMS,
        "group": GROUP,
        "eval_trained": EVAL_TRAINED,
        "eval_unseen": EVAL_UNSEEN,
    }
    data = {
        "command": command,
        "config": config,
        "runs": runs,
        "summary": summary,
        "machine": machine(),
        "fingerprint": fingerprint(CODE, config),
    }
    print("wrote", write_result("repair_learning", data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
