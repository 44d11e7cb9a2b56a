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
    """A TRL reward function grading completions through ``grader`` (a :class:`~.rollout.VerdictCache`)."""

    def verifier_reward(prompts, completions, task_id, **kwargs):
        items = [(tasks_by_id[tid].candidate(text), tasks_by_id[tid].fixture)
                 for tid, text in zip(task_id, completions)]
        return [v.reward for v, _ in grader.grade(items)]

    verifier_reward.__name__ = "verifier_reward"
    return verifier_reward


def train_trl(config: TrainConfig, pool=None):
    """Warm start (shared with our engine), then TRL GRPO, then held-out evaluation; returns a TrainResult."""
    from datasets import Dataset
    from transformers.utils import logging as hf_logging
    from trl import GRPOConfig, GRPOTrainer

    from rlvr_lab.policy import load_policy
    from rlvr_lab.train import grpo_loop
    from rlvr_lab.train.checkpoint import read_lineage
    from rlvr_lab.train.learner import evaluate
    from rlvr_lab.train.rollout import PolicyHandle, tokenizer_digest
    from rlvr_lab.train.run import resolve_dtype, setup

    run = setup(config, pool)
    try:
        if not os.path.exists(os.path.join(run.warm_dir, "lineage.json")):
            grpo_loop.train(config.with_overrides(grpo_steps=0, engine="ours", plots=False), pool=run.pool)
        timing = {"sft+eval_before": run.timer.elapsed()}
        device = run.device
        model, tok = load_policy(run.warm_dir, device=str(device), dtype=resolve_dtype(config.dtype, device))
        before = read_lineage(run.warm_dir)["heldout"]
        train_tasks, by_id, grader = run.train_tasks, run.by_id, run.grader
        bos = tok.bos_token or ""
        data = Dataset.from_list([{"prompt": bos + t.prompt, "task_id": t.task_id} for t in train_tasks])
        rollouts_per_step = config.tasks_per_step * config.group_size
        args = GRPOConfig(
            output_dir=os.path.join(config.out_dir, "trl"), seed=config.seed, use_cpu=device.type == "cpu",
            bf16=resolve_dtype(config.dtype, device) == torch.bfloat16,
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
        handle = PolicyHandle(model, tok, config.grpo_steps * config.passes, run.sampling, tokenizer_digest(tok))
        after, _ = evaluate(handle, run.heldout, config, grader, "trl")
        timing["eval"] = time.perf_counter() - t0
        rows = [dict(r, step=i) for i, r in enumerate(trainer.state.log_history)]
        result = grpo_loop.TrainResult(config.out_dir, before, after, run.timer.elapsed(), timing,
                                       config.grpo_steps, config.grpo_steps * rollouts_per_step, rows)
        from rlvr_lab.train.report import write_report

        write_report(result, config.with_overrides(plots=False), grader)
        return result
    finally:
        run.close()
