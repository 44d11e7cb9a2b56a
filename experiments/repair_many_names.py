"""Does the repair agent carry a repair to an entry name it never saw, when it trains on many? (issue 24; 17.5)

``experiments/repair_demo_split.py`` found GRPO teaching a trained-on variant it was never shown (+0.36) while
the held-out variant moved by +0.02. A variant differs from its siblings by the entry's name and the random
hidden cases, and the suite gives each template three names of its own (``count_above``, ``n_above``,
``above_count``): a model can key a repair to the name rather than to the body. This probe tests that
account. It rebuilds the trainer's suite with the same problems and the same split by problem, but each
training problem gets :data:`TRAIN_VARIANTS` variants whose names are drawn from one generic pool shared by
every template (:func:`generic_names`: ``find_value``, ``get_total``, ...), so a name says nothing about the
repair. It also gets :data:`HELDOUT_VARIANTS` variants named from a disjoint pool, which are held out by task.
Everything else follows ``rlvr-lab train --env repair`` for ``--steps`` GRPO steps (20 by default here, as in
``repair_heldout.py``; the trainer's preset runs 40): the ``cpu`` preset, the warm start on the
scripted repairs of the demonstrated kinds' training tasks, 16 tasks x G = 8 episodes per step in the
trainer's seeded order, and the trainer's :func:`~rlvr_lab.train.repair_loop.episode_step`. The arms of
``repair_heldout.py`` named by ``--arms`` (``eq2``, ``passes``; both by default) start from each seed's warm
start, with ``--max-new-tokens`` per action (the preset's 24 cuts off the longest scripted repairs, 31 tokens
with ``<eos>``). Three sets are measured before and after, with the trainer's evaluation seed and
``eval_samples`` episodes per task:

* ``trained``: variant 0 of every training problem (trained on; demonstrated for the demonstrated kinds);
* ``heldout``: the held-out-name variants of every training problem (the figure the probe is about);
* ``problems``: variant 0 of every held-out problem (a template and bug pair never trained on).

Stored (``experiments/results/repair_many_names.json``): per seed and arm the three sets' rates before and
after (Wilson intervals), each step's training repair rate; over seeds each arm's mean change per set with a
95 % t interval.

    PYTHONPATH=. nice -n 10 python experiments/repair_many_names.py --arms passes --max-new-tokens 32 --steps 40
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import REPAIR_CODE, fmt, machine, mean_ci, write_result  # noqa: E402
from repair_heldout import ARMS  # noqa: E402

#: The code the numbers come from (rlvr_lab.claims.fingerprint).
CODE = REPAIR_CODE + ("experiments/repair_many_names.py", "experiments/repair_heldout.py")
#: Variants per training problem that are trained on (names from the training pool).
TRAIN_VARIANTS = 8
#: Variants per training problem held out by task (names from the held-out pool).
HELDOUT_VARIANTS = 2
#: Name parts; none is a builtin, a keyword or a template's helper (``gap``, ``within``).
VERBS = ("find", "get", "compute", "calc", "eval", "solve", "make", "take", "check", "build", "pick", "read")
NOUNS = ("value", "result", "answer", "item", "total", "number", "score", "output", "entry", "amount")
#: The task sets measured, in the order stored.
SETS = ("trained", "heldout", "problems")


def generic_names(seed: int) -> tuple[list[str], list[str]]:
    """(training pool, held-out pool): every ``verb_noun`` name, shuffled by ``seed`` and split 4 : 1, so
    no held-out name is ever trained on or demonstrated.

    >>> train, held = generic_names(0)
    >>> len(train), len(held), set(train) & set(held)
    (96, 24, set())
    """
    names = [f"{v}_{n}" for v in VERBS for n in NOUNS]
    random.Random(f"{seed}:names").shuffle(names)
    cut = len(names) * 4 // 5
    return names[:cut], names[cut:]


def variant(task) -> int:
    """The variant number of a repair task (its id ends in ``/v<n>``)."""
    return int(task.task_id.rsplit("/v", 1)[1])


def many_names_suite(seed: int, heldout_fraction: float) -> list:
    """The trainer's problems and split by problem; each training problem's variants 0 to
    ``TRAIN_VARIANTS - 1`` named from the training pool (split ``train``) and the next ``HELDOUT_VARIANTS``
    from the held-out pool (split ``heldout-task``); a held-out problem gets one variant from the training
    pool (split ``heldout``)."""
    from rlvr_lab.envs.repair_tasks import TEMPLATES, make_repair_suite, make_repair_task

    split = {t.problem_id: t.split for t in make_repair_suite(seed=seed, variants=1, heldout_fraction=heldout_fraction)}
    train_pool, held_pool = generic_names(seed)
    suite = []
    for template in TEMPLATES:
        for kind in template.bugs:
            problem = f"{template.key}/{kind}"
            rng = random.Random(f"{seed}:{problem}:names")
            names = rng.sample(train_pool, TRAIN_VARIANTS) + rng.sample(held_pool, HELDOUT_VARIANTS)
            named = dataclasses.replace(template, names=tuple(names))
            if split[problem] == "heldout":
                suite.append(make_repair_task(named, kind, 0, "heldout", seed))
                continue
            for v in range(TRAIN_VARIANTS + HELDOUT_VARIANTS):
                suite.append(make_repair_task(named, kind, v, "train" if v < TRAIN_VARIANTS else "heldout-task", seed))
    return suite


def many_names_start(config, verifier):
    """:func:`rlvr_lab.train.repair_loop.warm_start` on :func:`many_names_suite`: the same steps (tokenizer over
    the suite and the scripts, the model built from the config, supervised on the scripted repairs of the
    demonstrated kinds' training tasks played through the environment)."""
    import torch

    from rlvr_lab.policy import build_model, train_tokenizer
    from rlvr_lab.train.repair_loop import CONTEXT_TOKENS, WarmStart, demonstration_episode, expert_actions
    from rlvr_lab.train.supervised import sft_sequences

    suite = many_names_suite(config.seed, config.heldout_fraction)
    train_tasks = [t for t in suite if t.split == "train"]
    held = [t for t in suite if t.split == "heldout-task"]
    demos = [t for t in train_tasks if t.bug_kind in config.demo_kinds]
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
    return {
        "trained": [t for t in start.train_tasks if variant(t) == 0],
        "heldout": list(start.heldout_tasks),
        "problems": list(start.heldout),
    }


def probe_seed(seed: int, steps: int, arms: list[str], max_new_tokens: int) -> dict:
    """The arms from one warm start, ``max_new_tokens`` per action; the per-seed dict stored by :func:`main`."""
    from rlvr_lab.policy import SamplingConfig
    from rlvr_lab.train.config import TrainConfig
    from rlvr_lab.train.repair_loop import EpisodeUpdate, PoolVerifier, episode_learner, episode_step, evaluate_heldout
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
        out = {}
        for arm in arms:
            update = EpisodeUpdate(**ARMS[arm])
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
            out[arm] = {"after": after, "steps": rows}
            print(
                f"seed {seed} {arm:7s} "
                + "; ".join(f"{k} {before[k]['repair_rate']:.3f} -> {after[k]['repair_rate']:.3f}" for k in SETS),
                flush=True,
            )
        return {
            "seed": seed,
            "train_tasks": len(start.train_tasks),
            "demonstrations": len(start.demos),
            "sets": {k: [t.task_id for t in v] for k, v in sets.items()},
            "names": {t.task_id: t.entry for v in sets.values() for t in v},
            "before": before,
            "arms": out,
        }
    finally:
        pool.close()


def summarize(runs: list[dict], arms: list[str]) -> dict:
    """Per arm and task set: the mean change of the repair rate over seeds with its 95 % t interval."""
    return {
        arm: {
            k: mean_ci([r["arms"][arm]["after"][k]["repair_rate"] - r["before"][k]["repair_rate"] for r in runs])
            for k in SETS
        }
        for arm in arms
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--arms", nargs="+", default=list(ARMS), choices=list(ARMS))
    parser.add_argument("--max-new-tokens", type=int, default=24, help="token budget per action [preset: 24]")
    args = parser.parse_args(argv)
    from rlvr_lab.claims import fingerprint

    runs = [probe_seed(s, args.steps, args.arms, args.max_new_tokens) for s in args.seeds]
    summary = summarize(runs, args.arms)
    for arm, row in summary.items():
        print(f"{arm:7s} change: " + "; ".join(f"{k} {fmt(row[k])}" for k in SETS))
    command = "PYTHONPATH=. nice -n 10 python experiments/repair_many_names.py"
    defaults = {"seeds": [0, 1, 2], "steps": 20, "arms": list(ARMS), "max_new_tokens": 24}
    command += "".join(
        f" --{k.replace('_', '-')} {' '.join(map(str, v)) if isinstance(v, list) else v}"
        for k, v in vars(args).items()
        if v != defaults[k]
    )
    config = {**vars(args), "train_variants": TRAIN_VARIANTS, "heldout_variants": HELDOUT_VARIANTS}
    data = {
        "command": command,
        "config": config,
        "runs": runs,
        "summary": summary,
        "machine": machine(),
        "fingerprint": fingerprint(CODE, config),
    }
    print("wrote", write_result("repair_many_names", data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
