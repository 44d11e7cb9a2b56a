"""The same run on TRL's ``GRPOTrainer`` (section 17.5), for comparison with our loop.

Same tasks, same warm-start checkpoint, same VerifierPool as the reward: the reward function submits each
completion to the verifier and returns 1.0, 0.0, or ``None`` for an unresolved verdict (TRL then leaves the
completion out of the group baseline and gives it no advantage, so nothing is coerced). Matching knobs:
``num_generations`` = G, ``num_iterations`` = passes, ``epsilon``/``epsilon_high`` = clip widths, ``beta``,
``loss_type`` from ``norm`` (:data:`TRL_LOSS_TYPES`), ``scale_rewards`` = ``scale``, a constant learning rate,
dropout off (``disable_dropout`` and :func:`~rlvr_lab.scoring_mode.without_dropout`: TRL scores in train mode,
and the attention dropout of Llama and Qwen2 models is read from a float, not an ``nn.Dropout``),
``bf16``/``fp16`` autocast on float32 weights (TRL's Trainer scales the float16 loss), LoRA through
``peft_config``, the chat template through a conversational dataset. The complete-group rule is honoured in
the reward function: ``exclude`` makes a whole group None when one member is unresolved, ``wait`` first
resubmits unresolved members ``verify_retries`` times. ``max_lag`` holds trivially (TRL samples and updates in
lockstep: every rollout enters its update at lag 0). Refused by :class:`~rlvr_lab.train.config.TrainConfig`,
with an error naming the flag: ``multi_turn``, ``overlap``, ``micro_batch``, and, asked for by name, the
fields in :data:`~rlvr_lab.train.config.TRL_UNUSED`. ``std`` is honoured: ``population`` (the chapter's eq 2,
the default) replaces TRL's advantages, which use the sample std, with ours; ``sample`` keeps TRL's. Stated
differences: stop strings cut the graded text, but TRL still trains on the tokens it sampled after them.
Rollout records and the replay check come from :mod:`rlvr_lab.train.trl_records` (TRL's generate returns no
log-probs: each completion is scored right after sampling, with the weights that sampled it). Held-out pass@1
is measured with our sampler and verifier, exactly as for our engine.
"""

from __future__ import annotations

import os
import time

import torch

from rlvr_lab.train.config import TrainConfig

#: TRL's ``loss_type`` for each of our ``norm`` choices (the losses agree term by term:
#: ``tests/test_grpo_trl.py``).
TRL_LOSS_TYPES = {"sequence": "grpo", "constant": "dr_grpo", "token": "bnpo"}


def reward_function(
    grader,
    tasks_by_id: dict,
    fmt=None,
    closure: str = "exclude",
    retries: int = 0,
    group_size: int | None = None,
    graded=None,
):
    """A TRL reward function grading completions through ``grader`` (a :class:`~.rollout.VerdictCache`).

    ``fmt`` (a :class:`~rlvr_lab.train.prompting.PromptFormat`) turns a reply into the candidate file.
    ``closure="wait"`` resubmits unresolved verdicts ``retries`` times; then, with ``group_size``, a group
    (G consecutive completions of one task, as TRL orders them) with an unresolved member is excluded whole
    (every member None), the complete-group rule of our engine. ``graded`` (a
    :class:`~rlvr_lab.train.trl_records.GradedBatch`) receives each call's verdicts and final rewards, for the
    rollout records.
    """
    from rlvr_lab.train.prompting import PromptFormat, candidate_for, cut_at_stop

    fmt = fmt or PromptFormat()

    def verifier_reward(prompts, completions, task_id, **kwargs):
        texts = [c[-1]["content"] if isinstance(c, list) else c for c in completions]  # conversational or plain
        items = [
            (candidate_for(tasks_by_id[tid], cut_at_stop(text, fmt.stop_strings), fmt), tasks_by_id[tid].fixture)
            for tid, text in zip(task_id, texts)
        ]
        verdicts = [v for v, _ in grader.grade(items)]
        rewards = [v.reward for v in verdicts]
        for _ in range(retries if closure == "wait" else 0):
            todo = [i for i, r in enumerate(rewards) if r is None]
            if not todo:
                break
            for i, (v, _) in zip(todo, grader.grade([items[i] for i in todo])):
                verdicts[i], rewards[i] = v, v.reward
        if group_size and len(rewards) % group_size == 0:
            for start in range(0, len(rewards), group_size):
                group = range(start, start + group_size)
                if len({task_id[i] for i in group}) == 1 and any(rewards[i] is None for i in group):
                    for i in group:
                        rewards[i] = None
        if graded is not None:
            graded.put(verdicts, rewards)
        return rewards

    verifier_reward.__name__ = "verifier_reward"
    return verifier_reward


def grpo_args(config: TrainConfig, output_dir: str, **fields):
    """TRL's ``GRPOConfig`` with the module docstring's matching knobs: one generation per step of
    ``tasks_per_step`` x G completions (``steps_per_generation`` 1, ``num_iterations`` = passes), a
    constant learning rate, no weight decay, nothing saved or reported. ``fields`` set the rest (``use_cpu``,
    ``bf16``/``fp16``: GRPOConfig defaults to bfloat16 autocast, even on a CPU) or override these
    (``max_completion_length``, eq 5's constant under ``dr_grpo``)."""
    from trl import GRPOConfig

    knobs = dict(
        output_dir=output_dir,
        seed=config.seed,
        disable_dropout=True,
        per_device_train_batch_size=config.tasks_per_step * config.group_size,
        num_generations=config.group_size,
        steps_per_generation=1,
        num_iterations=config.passes,
        max_steps=config.grpo_steps * config.passes,
        learning_rate=config.lr,
        lr_scheduler_type="constant",
        warmup_steps=0,
        weight_decay=0.0,
        max_grad_norm=config.max_grad_norm,
        beta=config.beta,
        epsilon=config.eps_low,
        epsilon_high=config.eps_high,
        loss_type=TRL_LOSS_TYPES[config.norm],
        scale_rewards=config.scale,
        max_completion_length=config.max_new_tokens,
        temperature=config.temperature,
        top_k=config.top_k,
        top_p=config.top_p,
        logging_steps=1,
        report_to="none",
        save_strategy="no",
        disable_tqdm=not config.progress,
        remove_unused_columns=False,
        dataloader_num_workers=0,
        use_bias_correction_kl=False,
    )
    knobs.update(fields)
    return GRPOConfig(**knobs)


def train_trl(config: TrainConfig, pool=None):
    """Warm start (shared with our engine), then TRL GRPO, then held-out evaluation; returns a TrainResult."""
    from datasets import Dataset
    from transformers.utils import logging as hf_logging
    from trl import GRPOTrainer

    from rlvr_lab.policy import load_policy
    from rlvr_lab.scoring_mode import without_dropout
    from rlvr_lab.train import grpo_loop
    from rlvr_lab.train.checkpoint import read_lineage
    from rlvr_lab.train.learner import evaluate, replay_limit
    from rlvr_lab.train.trl_records import GradedBatch, recording_trainer
    from rlvr_lab.train.rollout import PolicyHandle, tokenizer_digest
    from rlvr_lab.train.prompting import chat_message, prompt_format
    from rlvr_lab.train.run import setup

    run = setup(config, pool)
    try:
        if not os.path.exists(os.path.join(run.warm_dir, "lineage.json")):
            grpo_loop.train(config.with_overrides(grpo_steps=0, engine="ours", plots=False), pool=run.pool)
        timing = {"sft+eval_before": run.timer.elapsed()}
        device = run.device
        model, tok = load_policy(run.warm_dir, device=str(device), dtype=torch.float32)  # master weights
        without_dropout(model)  # TRL scores in train mode; its disable_dropout misses functional dropout
        before = read_lineage(run.warm_dir)["heldout"]
        train_tasks, by_id, grader = run.train_tasks, run.by_id, run.grader
        fmt, precision = prompt_format(config, tok, model), run.precision
        bos = tok.bos_token or ""
        if fmt.chat:  # conversational: TRL applies the tokenizer's chat template
            rows = [
                {
                    "prompt": [{"role": "user", "content": chat_message(t.prompt) if t.keep_prompt else t.prompt}],
                    "task_id": t.task_id,
                }
                for t in train_tasks
            ]
        else:
            rows = [{"prompt": bos + t.prompt, "task_id": t.task_id} for t in train_tasks]
        data = Dataset.from_list(rows)
        rollouts_per_step = config.tasks_per_step * config.group_size
        args = grpo_args(
            config,
            os.path.join(config.out_dir, "trl"),
            use_cpu=device.type == "cpu",
            bf16=precision.dtype == "bfloat16",
            fp16=precision.dtype == "float16",
        )
        hf_logging.set_verbosity_error()
        peft_config = None
        if config.lora_rank:
            from peft import LoraConfig

            targets = "all-linear" if tuple(config.lora_targets) == ("all-linear",) else list(config.lora_targets)
            peft_config = LoraConfig(
                r=config.lora_rank,
                lora_alpha=config.lora_alpha,
                lora_dropout=0.0,
                target_modules=targets,
                task_type="CAUSAL_LM",
            )
        graded = GradedBatch()
        reward = reward_function(grader, by_id, fmt, config.closure, config.verify_retries, config.group_size, graded)
        trainer = recording_trainer(GRPOTrainer)(
            model=model,
            reward_funcs=reward,
            args=args,
            train_dataset=data,
            processing_class=tok,
            peft_config=peft_config,
            records_path=run.records_path,
            graded=graded,
            tasks_by_id=by_id,
            sampling=run.sampling,
            tokenizer_digest=tokenizer_digest(tok),
            replay_limit=replay_limit(config.replay_bound, precision),
            group_size=config.group_size,
            population_std=config.std == "population" and config.scale != "none",
            scale=config.scale,
        )
        t0 = time.perf_counter()
        trainer.train()
        timing["grpo"] = time.perf_counter() - t0
        timing["verify"] = grader.seconds
        model = trainer.model.eval()
        t0 = time.perf_counter()
        handle = PolicyHandle(
            model, tok, config.grpo_steps * config.passes, run.sampling, tokenizer_digest(tok), fmt, precision
        )
        after, _ = evaluate(handle, run.heldout, config, grader, "trl")
        timing["eval"] = time.perf_counter() - t0
        rows = [dict(r, step=i) for i, r in enumerate(trainer.state.log_history)]
        result = grpo_loop.TrainResult(
            config.out_dir,
            before,
            after,
            run.timer.elapsed(),
            timing,
            config.grpo_steps,
            config.grpo_steps * rollouts_per_step,
            rows,
        )
        from rlvr_lab.train.report import write_report

        write_report(result, config.with_overrides(plots=False), grader)
        return result
    finally:
        run.close()
