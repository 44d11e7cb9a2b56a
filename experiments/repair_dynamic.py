"""Does DAPO's dynamic sampling lift the repair agent's gain per step? (issue 24; 17.5.4, eq 2)

``experiments/repair_many_names.py`` trained the repair agent on eight generically named variants per
training problem and found the held-out names' change following the trained tasks' seed by seed, with GRPO's
own gain as the limit: on seed 2 the step repair rates stay at 0.4-0.5 for all 40 steps while the policy's
entropy falls to about 0.1 nats per token. A sharp policy makes most groups all pass or all fail, and such a
group has zero advantage for every member (eq 2): the step's update then rests on the few groups with
contrast. This probe keeps everything of that run (the same suite and names, the same warm start, the
``passes`` update of ``repair_heldout.py``, ``--max-new-tokens`` per action, 16 tasks x G = 8 episodes per
step in the trainer's seeded order, the evaluation seed and sets) and changes one thing: each step refills
itself with :func:`rlvr_lab.train.dynamic_sampling.refill` (up to ``--rounds`` rounds of fresh training
tasks, seeded per step) until 16 groups have contrast, and updates on those
(:func:`~rlvr_lab.train.dynamic_sampling.keep_informative`); the other groups are recorded out with the
reason. It runs ``--steps`` steps (40 by default, as many as the ``passes`` arm it is compared with; a
screening run of 28 steps on seed 2 took 389 s of GRPO, so 40 stay near the issue's 10 minutes).

Its "before" figures are those of ``repair_many_names.json`` (the same warm start; a test checks it), so
each set's change compares with that run's ``passes`` arm seed by seed.

Stored (``experiments/results/repair_dynamic.json``): per seed the three sets' rates before and after
(Wilson intervals); per step the training repair rate of every sampled episode, the groups sampled, the
groups with contrast, the refill rounds used and the step's seconds; over seeds the mean change per set with
a 95 % t interval, and the GRPO seconds per seed.

    PYTHONPATH=. nice -n 10 python experiments/repair_dynamic.py
"""

from __future__ import annotations

import argparse
import copy
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import REPAIR_CODE, fmt, machine, mean_ci, write_result  # noqa: E402
from repair_heldout import ARMS  # noqa: E402
from repair_many_names import SETS, many_names_start, task_sets  # noqa: E402

#: The code the numbers come from (rlvr_lab.claims.fingerprint).
CODE = REPAIR_CODE + (
    "experiments/repair_dynamic.py",
    "experiments/repair_many_names.py",
    "experiments/repair_heldout.py",
)
#: The update applied to the admitted groups (``repair_heldout.ARMS``).
ARM = "passes"


def close_groups(records: list, group_size: int, version: int, max_lag: int) -> None:
    """The complete-group rule on every group of ``records``, in place (as ``episode_step`` applies it)."""
    from rlvr_lab.records import close_group

    groups: dict[str, list] = {}
    for r in records:
        groups.setdefault(r.group_id, []).append(r)
    for members in groups.values():
        ok, why = close_group(members, group_size, version, max_lag)
        for m in members:
            m.admitted, m.exclusion_reason = ok, why


def dynamic_step(learner, tasks, train_tasks, run_config, sampling, verifier, step, rounds, negative_weight):
    """One GRPO step whose batch is refilled with groups that have contrast; returns the step's row."""
    from rlvr_lab.train.dynamic_sampling import contrast_groups, keep_informative, refill
    from rlvr_lab.train.episodes import collect_episodes
    from rlvr_lab.train.learner import grpo_update, make_batch
    from rlvr_lab.train.repair_loop import CONTEXT_TOKENS, episode_summary, weigh_negatives
    from rlvr_lab.train.rollout import PolicyHandle

    s0 = time.perf_counter()
    handle = PolicyHandle(learner.model, learner.tok, learner.version, sampling, learner.tok_digest)

    def sample_and_grade(batch_tasks, prefix):
        recs = collect_episodes(
            handle,
            batch_tasks,
            run_config.group_size,
            verifier,
            step,
            learner.generator,
            run_config.horizon,
            CONTEXT_TOKENS,
            id_prefix=prefix,
        )
        close_groups(recs, run_config.group_size, learner.version, run_config.max_lag)
        return recs

    records = sample_and_grade(tasks, "e")
    records, spent = refill(
        records, train_tasks, run_config.tasks_per_step, rounds, f"{run_config.seed}:repair:{step}", sample_and_grade
    )
    contrast = len(contrast_groups(records))
    kept = keep_informative(records, run_config.tasks_per_step)
    admitted = [r for r in records if r.admitted]
    diags = {}
    if admitted:
        batch = make_batch(learner, admitted, run_config, sampling)
        batch.advantages = weigh_negatives(batch.advantages, negative_weight)
        diags = grpo_update(learner, batch, run_config, sampling)
    row = {
        "step": step,
        "repair_rate": episode_summary(records)["repair_rate"],
        "groups": len({r.group_id for r in records}),
        "contrast": contrast,
        "kept": len(kept),
        "rounds": spent,
        "step_s": time.perf_counter() - s0,
    }
    row.update({k: diags[k] for k in ("kl_mean", "entropy") if k in diags})
    return row


def probe_seed(seed: int, steps: int, rounds: int, max_new_tokens: int) -> dict:
    """The warm start of ``repair_many_names.py`` and ``steps`` dynamically sampled steps; the stored dict."""
    from rlvr_lab.policy import SamplingConfig
    from rlvr_lab.train.config import TrainConfig
    from rlvr_lab.train.repair_loop import EpisodeUpdate, PoolVerifier, episode_learner, evaluate_heldout
    from rlvr_lab.verifier import VerifierPool

    config = TrainConfig.preset("cpu", env="repair", seed=seed, grpo_steps=steps, max_new_tokens=max_new_tokens)
    pool = VerifierPool(workers=config.verifier_workers, seed=seed)
    try:
        verifier = PoolVerifier(pool)
        start = many_names_start(config, verifier)
        sets = task_sets(start)

        def rates(model, version):
            return {k: evaluate_heldout(model, start.tokenizer, sets[k], config, verifier, version) for k in SETS}

        before = rates(start.model, 0)
        print(f"seed {seed} before " + "; ".join(f"{k} {before[k]['repair_rate']:.3f}" for k in SETS), flush=True)
        sampling = SamplingConfig(config.temperature, config.top_k, config.top_p, config.max_new_tokens)
        update = EpisodeUpdate(**ARMS[ARM])
        model = copy.deepcopy(start.model)
        learner, run_config = episode_learner(model, start.tokenizer, config)
        rows = []
        for step in range(steps):
            for group in learner.optimizer.param_groups:
                group["lr"] = config.lr * update.lr_scale(step)
            tasks = random.Random(f"{config.seed}:repair:{step}").sample(start.train_tasks, config.tasks_per_step)
            row = dynamic_step(
                learner, tasks, start.train_tasks, run_config, sampling, verifier, step, rounds, update.negative_weight
            )
            rows.append(row)
            print(
                f"seed {seed} step {step:2d} rate {row['repair_rate']:.2f} contrast {row['contrast']}/"
                f"{row['groups']} {row['step_s']:.1f} s",
                flush=True,
            )
        after = rates(model, learner.version)
        print(
            f"seed {seed} dynamic "
            + "; ".join(f"{k} {before[k]['repair_rate']:.3f} -> {after[k]['repair_rate']:.3f}" for k in SETS),
            flush=True,
        )
        return {
            "seed": seed,
            "train_tasks": len(start.train_tasks),
            "demonstrations": len(start.demos),
            "before": before,
            "after": after,
            "grpo_s": sum(r["step_s"] for r in rows),
            "steps": rows,
        }
    finally:
        pool.close()


def summarize(runs: list[dict]) -> dict:
    """Per task set: the mean change of the repair rate over seeds with its 95 % t interval."""
    return {k: mean_ci([r["after"][k]["repair_rate"] - r["before"][k]["repair_rate"] for r in runs]) for k in SETS}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3, help="most refill rounds per step [preset: 3]")
    parser.add_argument("--max-new-tokens", type=int, default=32, help="token budget per action")
    args = parser.parse_args(argv)
    from rlvr_lab.claims import fingerprint

    runs = [probe_seed(s, args.steps, args.rounds, args.max_new_tokens) for s in args.seeds]
    summary = summarize(runs)
    print("dynamic change: " + "; ".join(f"{k} {fmt(summary[k])}" for k in SETS))
    print("GRPO seconds per seed: " + ", ".join(f"{r['grpo_s']:.0f}" for r in runs))
    command = "PYTHONPATH=. nice -n 10 python experiments/repair_dynamic.py"
    defaults = {"seeds": [0, 1, 2], "steps": 40, "rounds": 3, "max_new_tokens": 32}
    command += "".join(
        f" --{k.replace('_', '-')} {' '.join(map(str, v)) if isinstance(v, list) else v}"
        for k, v in vars(args).items()
        if v != defaults[k]
    )
    config = {**vars(args), "arm": ARM}
    data = {
        "command": command,
        "config": config,
        "runs": runs,
        "summary": summary,
        "machine": machine(),
        "fingerprint": fingerprint(CODE, config),
    }
    print("wrote", write_result("repair_dynamic", data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
