"""Repair episodes on TRL's ``GRPOTrainer`` through its rollout hook (sections 17.2.1, 17.5, 17.6.2).

TRL 1.16 lets a caller replace its sampler: ``GRPOTrainer(rollout_func=...)`` hands the function the batch's
prompts (each one ``num_generations`` times in a row) and the trainer, and takes back, per prompt, the prompt's
token ids, one *completion* and its sampling log-probs. Anything else the function returns goes to the reward
functions, except ``env_mask``, which marks the completion's tokens the model wrote (1) apart from those the
environment wrote (0); TRL multiplies it into the loss mask.

:func:`repair_rollout_func` plays a whole repair episode for each prompt with
:func:`~rlvr_lab.train.episodes.collect_episodes` (the same environment, verifier, context rule and rollout
records as ``rlvr-lab train --env repair``) and lays each episode out as one completion
(:func:`episode_completion`): every call's sampled tokens (mask 1, their behaviour log-probs) then the
observation's tokens (mask 0), so TRL's loss scores the policy's tokens only, as eq 5 with observations
masked asks. The reward is the hidden tests' verdict; a group with an unresolved member is excluded whole
(the complete-group rule) by giving every member ``None``, which TRL leaves out of the baseline.

:func:`episode_trainer` adds the replay check: at TRL's first pass over a generation (the weights are still the
sampling ones), TRL's own per-token log-probs of the policy's tokens must match those the rollout recorded
within the run's limit, or the run stops with :class:`~rlvr_lab.train.learner.ReplayMismatch`.

:func:`train_repair_trl` is ``train_repair`` with TRL doing the update: the same warm start, split and held-out
evaluation (with our sampler), so the two engines' numbers sit side by side in ``benchmarks/train.py --env
repair``. It takes the repair run's :class:`~rlvr_lab.train.config.TrainConfig` as ``train_repair`` does
(``env='repair'``; ``engine`` names the function-task engine and is not read here) and maps its knobs to
``GRPOConfig`` as :mod:`~rlvr_lab.train.trl_engine` does.
"""

from __future__ import annotations

import json
import os
import time

import torch

from rlvr_lab.records import close_group, flatten, write_records
from rlvr_lab.train.config import TrainConfig
from rlvr_lab.train.repair_loop import PoolVerifier


def episode_completion(record) -> tuple[list[int], list[int], list[int], list[float]]:
    """``(prompt ids, completion ids, env mask, log-probs)`` of one episode record as TRL's single completion.

    The prompt is the first call's prefix; the completion is each call's sampled tokens (mask 1, their
    behaviour log-probs in nats) followed by its observation's tokens (mask 0, log-prob 0.0), except the last
    call's observation, which no call read. Raises ``ValueError`` when a call's prefix is not the previous
    prefix, its tokens and its observation (the append-only context :mod:`~rlvr_lab.train.episodes` keeps).
    """
    calls = record.invocations
    if not calls:
        raise ValueError(f"{record.rollout_id}: an episode with no policy call has no completion")
    ids, mask, logps = flatten(record)  # the loss's own layout: first prefix, then (tokens, observation) per call
    start, end = len(calls[0].prefix_ids), len(ids) - len(calls[-1].observation_ids)
    return ids[:start], ids[start:end], mask[start:end], logps[start:end]


def repair_rollout_func(tasks_by_prompt: dict, verifier, config: TrainConfig, tokenizer, sampling, digest, generator,
                        records_path: str, context_tokens: int):  # fmt: skip
    """TRL's ``rollout_func(prompts, trainer)`` over repair episodes.

    ``tasks_by_prompt`` maps each dataset prompt (the task's first observation) to its
    :class:`~rlvr_lab.envs.repair_tasks.RepairTask`; ``verifier`` has ``verify(candidate, fixture)``;
    ``generator`` is the torch generator episodes sample from. Each call appends the episodes' records (policy
    version: TRL's optimizer step) to ``records_path`` and returns prompt ids, completion ids, log-probs,
    ``env_mask`` and ``episode_reward`` (1.0, 0.0, or None for a member of an excluded group).
    """
    from rlvr_lab.scoring_mode import scoring_mode
    from rlvr_lab.train.episodes import collect_episodes
    from rlvr_lab.train.rollout import PolicyHandle

    def rollout_func(prompts: list, trainer) -> dict:
        size = trainer.num_generations
        if len(prompts) % size:
            raise ValueError(f"{len(prompts)} prompts are not whole groups of num_generations {size}")
        heads = prompts[::size]
        for start, head in enumerate(heads):
            if any(p != head for p in prompts[start * size : (start + 1) * size]):
                raise ValueError("TRL's batch does not hold each prompt num_generations times in a row")
        unknown = [p for p in heads if p not in tasks_by_prompt]
        if unknown:
            raise KeyError(f"a prompt that is no task's first observation: {unknown[0][:60]!r}")
        step = trainer.state.global_step
        model = trainer.accelerator.unwrap_model(trainer.model)
        with scoring_mode(model):
            handle = PolicyHandle(model, tokenizer, step, sampling, digest)
            records = collect_episodes(
                handle, [tasks_by_prompt[p] for p in heads], size, verifier, step, generator, config.horizon,
                context_tokens, id_prefix="trl",
            )  # fmt: skip
        groups: dict[str, list] = {}
        for r in records:
            groups.setdefault(r.group_id, []).append(r)
        for members in groups.values():
            ok, why = close_group(members, size, step, config.max_lag)
            for m in members:
                m.admitted, m.exclusion_reason = ok, why
        write_records(records_path, records)
        rollout_func.episodes += len(records)
        laid = [episode_completion(r) for r in records]
        return {
            "prompt_ids": [p for p, _, _, _ in laid],
            "completion_ids": [c for _, c, _, _ in laid],
            "logprobs": [lp for _, _, _, lp in laid],
            "env_mask": [m for _, _, m, _ in laid],
            "episode_reward": [r.reward if r.admitted else None for r in records],
        }

    rollout_func.episodes = 0  # episodes played so far
    return rollout_func


def episode_reward(prompts, completions, episode_reward, **kwargs) -> list:
    """TRL reward function: the episode's verdict reward as the rollout function recorded it."""
    return list(episode_reward)


def episode_trainer(base):
    """A subclass of TRL's ``GRPOTrainer`` (``base``) with the replay check of
    :func:`~rlvr_lab.train.trl_records.replay_checking` on the policy's tokens of each episode: the rollout's
    recorded log-probs ride in the batch until TRL's first pass compares its own with them (construct it with
    ``replay_limit`` in nats; the deviations are kept in ``replay_devs``)."""
    from rlvr_lab.train.trl_records import REPLAY_KEY, replay_checking

    class EpisodeGRPOTrainer(replay_checking(base)):
        def _generate_and_score_completions(self, inputs):
            out = super()._generate_and_score_completions(inputs)
            out[REPLAY_KEY] = out["sampling_per_token_logps"].float()
            return out

    return EpisodeGRPOTrainer


def train_repair_trl(config: TrainConfig, pool=None) -> dict:
    """The warm start of ``train_repair``, GRPO on TRL's trainer through :func:`repair_rollout_func`, and
    the same held-out evaluation; writes ``records.jsonl`` and ``summary.json`` to ``out_dir`` and returns the
    summary (``engine: trl``; ``replay_max_dev`` over the run)."""
    from datasets import Dataset
    from transformers.utils import logging as hf_logging
    from trl import GRPOTrainer

    from rlvr_lab.policy import SamplingConfig, load_policy, save_policy
    from rlvr_lab.scoring_mode import without_dropout
    from rlvr_lab.train.learner import replay_limit
    from rlvr_lab.train.precision import Precision
    from rlvr_lab.train.repair_loop import CONTEXT_TOKENS, HELDOUT_VARIANT, evaluate_heldout, warm_start
    from rlvr_lab.train.rollout import tokenizer_digest
    from rlvr_lab.train.trl_engine import grpo_args
    from rlvr_lab.verifier import VerifierPool
    from rlvr_lab.envs.repair import RepairEnv

    t0 = time.perf_counter()
    os.makedirs(config.out_dir, exist_ok=True)
    own = pool is None
    pool = pool or VerifierPool(workers=config.verifier_workers, seed=config.seed)
    verifier = PoolVerifier(pool)
    try:
        start = warm_start(config, verifier, HELDOUT_VARIANT)
        warm_dir = os.path.join(config.out_dir, "warm")  # TRL builds its reference model from a path
        save_policy(start.model, start.tokenizer, warm_dir)
        model, tok = load_policy(warm_dir, device="cpu", dtype=torch.float32)
        without_dropout(model)
        sampling = SamplingConfig(config.temperature, config.top_k, config.top_p, config.max_new_tokens)
        digest = tokenizer_digest(tok)
        before = evaluate_heldout(model, tok, start.heldout_tasks, config, verifier, 0)
        before_problems = evaluate_heldout(model, tok, start.heldout, config, verifier, 0)
        by_prompt = {RepairEnv(t, verifier, config.horizon).reset(): t for t in start.train_tasks}
        if len(by_prompt) != len(start.train_tasks):
            raise ValueError("two training tasks share a first observation: TRL's prompts would not tell them apart")
        records_path = os.path.join(config.out_dir, "records.jsonl")
        open(records_path, "w").close()
        generator = torch.Generator().manual_seed(config.seed + 1)
        rollout = repair_rollout_func(
            by_prompt, verifier, config, tok, sampling, digest, generator, records_path, CONTEXT_TOKENS
        )
        rows = [{"prompt": p} for p in by_prompt]
        args = grpo_args(
            config,
            os.path.join(config.out_dir, "trl"),
            use_cpu=True,
            bf16=False,  # float32, as our engine runs it
            fp16=False,
            # eq 5's constant for the whole episode, as our engine's repair run sets it
            max_completion_length=config.norm_constant or config.max_new_tokens * config.horizon,
        )
        hf_logging.set_verbosity_error()
        os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
        model.train()
        trainer = episode_trainer(GRPOTrainer)(
            replay_limit=replay_limit(config.replay_bound, Precision()),
            model=model,
            reward_funcs=episode_reward,
            args=args,
            train_dataset=Dataset.from_list(rows),
            processing_class=tok,
            rollout_func=rollout,
        )
        g0 = time.perf_counter()
        trainer.train()
        grpo_s = time.perf_counter() - g0
        model = trainer.model.eval()
        version = config.grpo_steps * config.passes
        after = evaluate_heldout(model, tok, start.heldout_tasks, config, verifier, version)
        after_problems = evaluate_heldout(model, tok, start.heldout, config, verifier, version)
        episodes = rollout.episodes
        summary = {
            "env": "repair",
            "engine": "trl",
            "before": before,
            "after": after,
            "gain": after["repair_rate"] - before["repair_rate"],
            "problems_before": before_problems,
            "problems_after": after_problems,
            "train_tasks": len(start.train_tasks),
            "heldout_tasks": len(start.heldout_tasks),
            "heldout_problem_tasks": len(start.heldout),
            "demonstrations": len(start.demos),
            "episodes": episodes,
            "grpo_s": grpo_s,
            "replay_max_dev": max(trainer.replay_devs, default=0.0),
            "step_times": [r["step_time"] for r in trainer.state.log_history if "step_time" in r],
            "wall_s": time.perf_counter() - t0,
            "config": config.to_dict(),
        }
        with open(os.path.join(config.out_dir, "summary.json"), "w") as fh:
            json.dump(summary, fh, indent=2, default=list)
        return summary
    finally:
        if own:
            pool.close()
