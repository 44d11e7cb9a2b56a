"""One real group of the repair agent, followed through its records, verdicts and update (chapters 5 and 9).

The course's model is warm-started on scripted repairs exactly as ``rlvr-lab train --env repair`` does
(:func:`rlvr_lab.train.repair_loop.warm_start`, ``cpu`` preset, seed 0). Training tasks are then drawn in a
seeded order; for each, G episodes are sampled with the policy in the loop
(:func:`rlvr_lab.train.episodes.collect_episodes`, the trainer's horizon, context rule and verifier) until a
group holds both a pass and a failure: an all-pass or all-fail group has zero advantages and teaches nothing
(eq 2), so the trainer's update would skip past it too. That group goes through the trainer's own path: the
complete-group rule (:func:`rlvr_lab.records.close_group`), :func:`~rlvr_lab.train.learner.make_batch` and
one :func:`~rlvr_lab.train.learner.grpo_update` (the preset's passes, with the replay check). Every member's
action tokens are scored before and after the update.

Stored (``experiments/results/repair_group.json`` and the package copy read by the book): the task, how many
groups were drawn to find a mixed one, the whole records (exact prefixes, sampled ids, behaviour log-probs,
tools, observations, verdicts with their evidence), each action's text, the advantages the batch carried,
the update's diagnostics, and per member the summed log-prob of its action tokens before and after (nats).

    PYTHONPATH=. nice -n 10 python experiments/repair_group.py
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import REPAIR_CODE, machine, write_result  # noqa: E402

#: The code the numbers come from (rlvr_lab.claims.fingerprint).
CODE = REPAIR_CODE + ("experiments/repair_group.py",)

#: Most groups drawn before giving up on finding one with a pass and a failure.
MAX_DRAWS = 40


def action_logprob_sums(model, records, pad_id) -> list[float]:
    """Per record, the summed log-prob (nats) of its action tokens under ``model`` (observations are context)."""
    import torch

    from rlvr_lab.policy import SamplingConfig, completion_logprobs
    from rlvr_lab.records import flatten

    out = []
    for r in records:
        ids, mask, _ = flatten(r)
        with torch.no_grad():
            logp, m = completion_logprobs(model, [ids], [mask], SamplingConfig(**r.sampling), pad_id)
        out.append(float((logp * m).sum()))
    return out


def follow_group(seed: int) -> dict:
    """Warm start, draw groups until one is mixed, update on it; the dict stored by :func:`main`."""
    from rlvr_lab.policy import SamplingConfig
    from rlvr_lab.records import close_group
    from rlvr_lab.train.config import TrainConfig
    from rlvr_lab.train.episodes import collect_episodes
    from rlvr_lab.train.learner import grpo_update, make_batch
    from rlvr_lab.train.repair_loop import CONTEXT_TOKENS, PoolVerifier, episode_learner, warm_start
    from rlvr_lab.train.rollout import PolicyHandle, completion_text
    from rlvr_lab.verifier import VerifierPool

    config = TrainConfig.preset("cpu", env="repair", seed=seed)
    pool = VerifierPool(workers=config.verifier_workers, seed=seed)
    try:
        verifier = PoolVerifier(pool)  # the adapter train_repair uses
        start = warm_start(config, verifier)
        model, tok = start.model, start.tokenizer
        sampling = SamplingConfig(config.temperature, config.top_k, config.top_p, config.max_new_tokens)
        learner, run_config = episode_learner(model, tok, config)  # as train_repair builds it
        digest = learner.tok_digest
        order = random.Random(f"{seed}:repair-group").sample(start.train_tasks, len(start.train_tasks))
        drawn = []
        for draw, task in enumerate(order[:MAX_DRAWS]):
            handle = PolicyHandle(model, tok, learner.version, sampling, digest)
            records = collect_episodes(handle, [task], config.group_size, verifier, draw, learner.generator,
                                       config.horizon, CONTEXT_TOKENS)  # fmt: skip
            drawn.append((task.task_id, sum(r.verdict == "pass" for r in records)))
            if {r.verdict for r in records} == {"pass", "fail"}:
                break
        else:
            raise RuntimeError(f"no mixed group in {MAX_DRAWS} draws: {drawn}")
        admitted, reason = close_group(records, config.group_size, learner.version, config.max_lag)
        for r in records:
            r.admitted, r.exclusion_reason = admitted, reason
        before = action_logprob_sums(model, records, tok.pad_token_id)
        batch = make_batch(learner, records, run_config, sampling)
        diags = grpo_update(learner, batch, run_config, sampling)
        after = action_logprob_sums(model, records, tok.pad_token_id)
        return {
            "seed": seed,
            "task": records[0].task_id,
            "bug_kind": task.bug_kind,
            "demonstrated_kind": task.bug_kind in config.demo_kinds,
            "draws": [{"task": t, "passes": n} for t, n in drawn],
            "group_size": config.group_size,
            "admitted": admitted,
            "advantages": [float(a) for a in batch.advantages.tolist()],
            "update": {k: float(v) for k, v in diags.items() if isinstance(v, (int, float))},
            "passes": config.passes,
            "norm_constant": run_config.norm_constant,
            "action_logprob_before": before,
            "action_logprob_after": after,
            "actions": [[completion_text(tok, c.completion_ids) for c in r.invocations] for r in records],
            "records": [dataclasses.asdict(r) for r in records],
            "config": {k: v for k, v in config.to_dict().items() if k != "out_dir"},
        }
    finally:
        pool.close()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    from rlvr_lab.claims import fingerprint

    data = follow_group(args.seed)
    for k, r in enumerate(data["records"]):
        tools = " ".join(c["tool"] or "?" for c in r["invocations"])
        print(f"member {k}: {r['verdict']:4s} A = {data['advantages'][k]:+.3f}  {tools:24s} "
              f"{data['action_logprob_before'][k]:8.2f} -> {data['action_logprob_after'][k]:8.2f} nats")  # fmt: skip
    print(f"task {data['task']} after {len(data['draws'])} draw(s); update: {data['update']}")
    data["command"] = "PYTHONPATH=. nice -n 10 python experiments/repair_group.py" + (
        f" --seed {args.seed}" if args.seed else ""
    )
    data["machine"] = machine()
    data["fingerprint"] = fingerprint(CODE, {"seed": args.seed, "max_draws": MAX_DRAWS})
    print("wrote", write_result("repair_group", data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
