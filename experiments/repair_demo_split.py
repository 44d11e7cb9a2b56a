"""What GRPO over episodes learns beyond its demonstrations, and what it does not (issue 24; sections 17.5, 17.8).

``experiments/repair_heldout.py`` finds the trainer's held-out figure unmoved. This probe asks where the
gain stops. The warm start here demonstrates only variant 0 of each training problem of the demonstrated bug
kinds; everything else is as ``rlvr-lab train --env repair --steps 20`` runs it (``cpu`` preset, the suite
split by problem and then variant :data:`~rlvr_lab.train.repair_loop.HELDOUT_VARIANT` held out by task, 16
training tasks x G = 8 episodes per step drawn with the trainer's seeded order, the trainer's own
:func:`~rlvr_lab.train.repair_loop.episode_step`). Variant 1 of the same problems is therefore *trained on but
never demonstrated*: another entry name and other tests, as the held-out variant 2 has. Three task sets are
measured before and after, with the trainer's fixed evaluation seed and ``eval_samples`` episodes per task:

* ``demonstrated``: variant 0 of the demonstrated kinds (demonstrated and trained on);
* ``undemonstrated``: variant 1 of the same problems (trained on, never demonstrated);
* ``heldout``: variant 2 of every training problem (neither), the trainer's held-out figure.

The two arms of ``repair_heldout.py`` share each seed's warm start: ``eq2`` (eq 2's advantages at the full
rate) and ``passes`` (failures' advantages set to 0, an 8-step learning-rate warmup).

Stored (``experiments/results/repair_demo_split.json``): per seed and arm the three sets' rates before and
after (Wilson intervals) and each step's training repair rate; over seeds each arm's mean change per set
with a 95 % t interval.

    PYTHONPATH=. nice -n 10 python experiments/repair_demo_split.py
"""

from __future__ import annotations

import argparse
import copy
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import REPAIR_CODE, fmt, machine, mean_ci, write_result  # noqa: E402
from repair_heldout import ARMS  # noqa: E402

#: The code the numbers come from (rlvr_lab.claims.fingerprint).
CODE = REPAIR_CODE + ("experiments/repair_demo_split.py", "experiments/repair_heldout.py")
#: The only variant whose scripted repair the warm start learns from.
DEMO_VARIANT = 0
#: The task sets measured, in the order stored.
SETS = ("demonstrated", "undemonstrated", "heldout")


def variant(task) -> int:
    """The variant number of a repair task (its id ends in ``/v<n>``)."""
    return int(task.task_id.rsplit("/v", 1)[1])


def demo_split_start(config, verifier):
    """:func:`rlvr_lab.train.repair_loop.warm_start` with the trainer's split, demonstrations restricted to
    variant :data:`DEMO_VARIANT`: the same steps (tokenizer over the suite and the scripts, the model built
    from the config, supervised on the scripted repairs played through the environment)."""
    import torch

    from rlvr_lab.envs.repair_tasks import make_repair_suite
    from rlvr_lab.policy import build_model, train_tokenizer
    from rlvr_lab.train.repair_loop import (
        CONTEXT_TOKENS,
        HELDOUT_VARIANT,
        WarmStart,
        demonstration_episode,
        expert_actions,
    )
    from rlvr_lab.train.supervised import sft_sequences

    suite = make_repair_suite(seed=config.seed, heldout_fraction=config.heldout_fraction)
    held = [t for t in suite if t.split == "train" and variant(t) == HELDOUT_VARIANT]
    train_tasks = [t for t in suite if t.split == "train" and t not in held]
    demos = [t for t in train_tasks if t.bug_kind in config.demo_kinds and variant(t) == DEMO_VARIANT]
    scripts = [a for t in demos for a in expert_actions(t)]
    corpus = [t.buggy + t.fixed for t in suite] + scripts + ["public tests: failed\npublic tests: all passed\n"]
    tok = train_tokenizer(corpus * 2, config.vocab_size)
    torch.manual_seed(config.seed)
    model = build_model(tok, config.model_size, seed=config.seed, max_positions=CONTEXT_TOKENS)
    sequences = [demonstration_episode(t, tok, verifier, config.horizon) for t in demos]
    losses = sft_sequences(model, tok, sequences, config.sft_steps, config.sft_batch, config.sft_lr, config.seed)
    heldout = [t for t in suite if t.split == "heldout"]
    return WarmStart(train_tasks, heldout, demos, tok, model, losses, held)


def task_sets(start) -> dict:
    """The three measured sets of the module docstring, as lists of tasks."""
    problems = {t.problem_id for t in start.demos}
    return {
        "demonstrated": list(start.demos),
        "undemonstrated": [t for t in start.train_tasks if t.problem_id in problems and variant(t) == 1],
        "heldout": list(start.heldout_tasks),
    }


def probe_seed(seed: int, steps: int) -> dict:
    """Both arms from one warm start; the per-seed dict stored by :func:`main`."""
    from rlvr_lab.policy import SamplingConfig
    from rlvr_lab.train.config import TrainConfig
    from rlvr_lab.train.repair_loop import EpisodeUpdate, PoolVerifier, episode_learner, episode_step, evaluate_heldout
    from rlvr_lab.verifier import VerifierPool

    config = TrainConfig.preset("cpu", env="repair", seed=seed, grpo_steps=steps)
    pool = VerifierPool(workers=config.verifier_workers, seed=seed)
    try:
        verifier = PoolVerifier(pool)
        start = demo_split_start(config, verifier)
        sets = task_sets(start)

        def rates(model, version):
            return {k: evaluate_heldout(model, start.tokenizer, sets[k], config, verifier, version) for k in SETS}

        before = rates(start.model, 0)
        sampling = SamplingConfig(config.temperature, config.top_k, config.top_p, config.max_new_tokens)
        arms = {}
        for arm, fields in ARMS.items():
            update = EpisodeUpdate(**fields)
            model = copy.deepcopy(start.model)
            learner, run_config = episode_learner(model, start.tokenizer, config)
            rows = []
            for step in range(steps):
                for group in learner.optimizer.param_groups:
                    group["lr"] = config.lr * update.lr_scale(step)
                tasks = random.Random(f"{config.seed}:repair:{step}").sample(start.train_tasks, config.tasks_per_step)
                _, row = episode_step(
                    learner, tasks, run_config, sampling, verifier, step, negative_weight=update.negative_weight
                )
                rows.append({k: row[k] for k in ("step", "repair_rate", "kl_mean", "entropy", "step_s") if k in row})
            after = rates(model, learner.version)
            arms[arm] = {"after": after, "steps": rows}
            print(
                f"seed {seed} {arm:7s} "
                + "; ".join(f"{k} {before[k]['repair_rate']:.3f} -> {after[k]['repair_rate']:.3f}" for k in SETS),
                flush=True,
            )
        return {
            "seed": seed,
            "train_tasks": len(start.train_tasks),
            "sets": {k: [t.task_id for t in v] for k, v in sets.items()},
            "before": before,
            "arms": arms,
        }
    finally:
        pool.close()


def summarize(runs: list[dict]) -> dict:
    """Per arm and task set: the mean change of the repair rate over seeds with its 95 % t interval."""
    return {
        arm: {
            k: mean_ci([r["arms"][arm]["after"][k]["repair_rate"] - r["before"][k]["repair_rate"] for r in runs])
            for k in SETS
        }
        for arm in ARMS
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args(argv)
    from rlvr_lab.claims import fingerprint

    runs = [probe_seed(s, args.steps) for s in args.seeds]
    summary = summarize(runs)
    for arm, row in summary.items():
        print(f"{arm:7s} change: " + "; ".join(f"{k} {fmt(row[k])}" for k in SETS))
    command = "PYTHONPATH=. nice -n 10 python experiments/repair_demo_split.py"
    defaults = {"seeds": [0, 1, 2], "steps": 20}
    command += "".join(
        f" --{k} {' '.join(map(str, v)) if isinstance(v, list) else v}"
        for k, v in vars(args).items()
        if v != defaults[k]
    )
    config = {**vars(args), "arms": ARMS, "demo_variant": DEMO_VARIANT}
    data = {
        "command": command,
        "config": config,
        "runs": runs,
        "summary": summary,
        "machine": machine(),
        "fingerprint": fingerprint(CODE, config),
    }
    print("wrote", write_result("repair_demo_split", data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
