"""The same run on TRL's ``GRPOTrainer`` (section 17.5), for comparison with our loop.

Same tasks, same warm-start checkpoint, same VerifierPool as the reward: the reward function submits each
completion to the verifier and returns 1.0, 0.0, or ``None`` for an unresolved verdict (TRL then leaves the
completion out of the group baseline and gives it no advantage, so nothing is coerced). Matching knobs:
``num_generations`` = G, ``num_iterations`` = passes, ``epsilon``/``epsilon_high`` = clip widths, ``beta``,
``loss_type`` ``grpo`` (norm ``sequence``) or ``dr_grpo`` (norm ``constant``), a constant learning rate.
One deliberate difference, stated: TRL's group std is the sample std, the chapter's the population std.
Held-out pass@1 is measured with our sampler and verifier, exactly as for our engine.
"""

from __future__ import annotations

import os
import time

import torch

from rlvr_lab.train.config import TrainConfig


def reward_function(grader, tasks_by_id: dict):
    """A TRL reward function grading completions through ``grader`` (a :class:`~.rollout.Grader`)."""

    def verifier_reward(prompts, completions, task_id, **kwargs):
        items = [(tasks_by_id[tid].candidate(text), tasks_by_id[tid].fixture) for tid, text in zip(task_id, completions)]
        return [v.reward for v, _ in grader.grade(items)]

    verifier_reward.__name__ = "verifier_reward"
    return verifier_reward


def train_trl(config: TrainConfig, pool=None):
    """Warm start (shared with our engine), then TRL GRPO, then held-out evaluation; returns a TrainResult."""
    from datasets import Dataset
    from transformers.utils import logging as hf_logging
    from trl import GRPOConfig, GRPOTrainer

    from rlvr_lab.policy import load_policy
    from rlvr_lab.tasks import make_suite, split_tasks
    from rlvr_lab.train import grpo_loop
    from rlvr_lab.train.checkpoint import read_lineage
    from rlvr_lab.train.rollout import Grader, PolicyHandle, tokenizer_digest

    t_start = time.perf_counter()
    warm_dir = os.path.join(config.out_dir, "warmstart")
    own_pool = pool is None
    pool = grpo_loop.open_pool(config) if own_pool else pool
    try:
        if not os.path.exists(os.path.join(warm_dir, "lineage.json")):
            grpo_loop.train(config.with_overrides(grpo_steps=0, engine="ours", plots=False), pool=pool)
        timing = {"sft+eval_before": time.perf_counter() - t_start}
        device = grpo_loop.resolve_device(config.device)
        model, tok = load_policy(warm_dir, device=str(device), dtype=grpo_loop.resolve_dtype(config.dtype, device))
        before = read_lineage(warm_dir)["heldout"]
        suite = make_suite(seed=config.seed, families=tuple(sorted(set(config.families) | set(config.sft_families))),
                           variants=config.variants, heldout_fraction=config.heldout_fraction,
                           problems_per_family=config.problems_per_family)
        train_tasks = split_tasks(suite, "train", config.families)
        by_id = {t.task_id: t for t in suite}
        grader = Grader(pool, cache=config.verdict_cache, timeout_s=config.verify_timeout_s)
        bos = tok.bos_token or ""
        data = Dataset.from_list([{"prompt": bos + t.prompt, "task_id": t.task_id} for t in train_tasks])
        rollouts_per_step = config.tasks_per_step * config.group_size
        args = GRPOConfig(
            output_dir=os.path.join(config.out_dir, "trl"), seed=config.seed, use_cpu=device.type == "cpu",
            bf16=grpo_loop.resolve_dtype(config.dtype, device) == torch.bfloat16,
            per_device_train_batch_size=rollouts_per_step, num_generations=config.group_size,
            steps_per_generation=1, num_iterations=config.passes, max_steps=config.grpo_steps * config.passes,
            learning_rate=config.lr, lr_scheduler_type="constant", warmup_steps=0, weight_decay=0.0,
            max_grad_norm=config.max_grad_norm, beta=config.beta, epsilon=config.eps_low,
            epsilon_high=config.eps_high, loss_type="grpo" if config.norm == "sequence" else "dr_grpo",
            scale_rewards="group", max_completion_length=config.max_new_tokens, temperature=config.temperature,
            top_k=config.top_k, top_p=config.top_p, logging_steps=1, report_to="none", save_strategy="no",
            disable_tqdm=not config.progress, remove_unused_columns=False, dataloader_num_workers=0,
            use_bias_correction_kl=False)
        hf_logging.set_verbosity_error()
        trainer = GRPOTrainer(model=model, reward_funcs=reward_function(grader, by_id), args=args,
                              train_dataset=data, processing_class=tok)
        t0 = time.perf_counter()
        trainer.train()
        timing["grpo"] = time.perf_counter() - t0
        timing["verify"] = grader.seconds
        model = trainer.model.eval()
        t0 = time.perf_counter()
        handle = PolicyHandle(model, tok, config.grpo_steps * config.passes, grpo_loop.sampling_of(config),
                              tokenizer_digest(tok))
        after, _ = grpo_loop.evaluate(handle, grpo_loop.heldout_subset(config, suite), config, grader, "trl")
        timing["eval"] = time.perf_counter() - t0
        rows = [dict(r, step=i) for i, r in enumerate(trainer.state.log_history)]
        result = grpo_loop.TrainResult(config.out_dir, before, after, time.perf_counter() - t_start, timing,
                                       config.grpo_steps, config.grpo_steps * rollouts_per_step, rows)
        from rlvr_lab.train.report import write_report

        write_report(result, config.with_overrides(plots=False), grader)
        return result
    finally:
        if own_pool:
            pool.close()
