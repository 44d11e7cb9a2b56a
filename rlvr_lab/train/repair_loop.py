"""GRPO over whole repair episodes: ``rlvr-lab train --env repair`` (sections 17.2.1, 17.5, 17.6).

The course's model, built from a config, learns to repair code with tools:

1. **Tasks**: :func:`~rlvr_lab.envs.repair_tasks.make_repair_suite`, split by problem (held-out problems are
   new template and bug pairs) with every variant of a problem on one side; then, by task, variant
   :data:`HELDOUT_VARIANT` of every training problem is held out too (another entry name and other hidden
   cases: neither demonstrated nor trained on).
2. **Warm start**: scripted repairs (:func:`expert_actions`: ``RUN``, the smallest ``LINE`` edit that turns
   the buggy module into the fixed one, ``SUBMIT``) of the training tasks whose bug kind is in
   ``demo_kinds``, run through the real environment so their observations are the real ones; supervised on
   the policy's own tokens only (:func:`~rlvr_lab.train.supervised.sft_sequences`).
3. **GRPO**: each step samples ``tasks_per_step`` tasks x G episodes with the policy in the loop
   (:func:`~rlvr_lab.train.episodes.collect_episodes`); an episode's reward is the hidden tests' verdict; a
   group with an unresolved member is excluded whole (the complete-group rule); the update is the same
   :func:`~rlvr_lab.train.learner.grpo_update` as for single-turn tasks, observations masked, with its replay
   check on every invocation. :class:`EpisodeUpdate` may scale the failures' (negative) advantages down and
   warm the learning rate up (``experiments/repair_learning.py`` and ``repair_heldout.py`` measure both).
4. **Evaluation**: the repair rate (episodes ending in ``pass``) with its Wilson interval on the held-out
   tasks and on the held-out problems, and the mean turns and tool calls per episode, before and after.
"""

from __future__ import annotations

import copy
import difflib
import json
import os
import random
import time
from dataclasses import asdict, dataclass, field

import torch

from rlvr_lab.envs.repair import RepairEnv
from rlvr_lab.envs.repair_tasks import RepairTask, make_repair_suite
from rlvr_lab.policy import SamplingConfig, build_model, train_tokenizer
from rlvr_lab.records import close_group, write_records
from rlvr_lab.rewards import wilson_interval
from rlvr_lab.train.config import TrainConfig
from rlvr_lab.train.episodes import ACTION_MARK, collect_episodes, observation_tokens
from rlvr_lab.train.learner import Learner, grpo_update, make_batch
from rlvr_lab.train.rollout import PolicyHandle, prompt_ids, tokenizer_digest
from rlvr_lab.train.supervised import sft_sequences

#: Token window of the course's model (its position table).
CONTEXT_TOKENS = 512
#: The variant of every training problem that the trainer holds out by task (the suite makes variants 0-2).
HELDOUT_VARIANT = 2


def expert_actions(task: RepairTask) -> list[str]:
    """A scripted repair: ``RUN``, then one edit, then ``SUBMIT``. The edit is ``LINE n`` when one line of
    the buggy module (or an insertion before it) becomes the fixed lines; else ``DEF`` of the entry.

    >>> from rlvr_lab.envs.repair_tasks import make_repair_suite
    >>> t = next(t for t in make_repair_suite(variants=1) if t.task_id == "sum_range/off_by_one/v0")
    >>> expert_actions(t)
    ['RUN', 'LINE 4\\n    for i in range(a, b + 1):', 'SUBMIT']
    """
    bad, good = task.buggy.splitlines(), task.fixed.splitlines()
    ops = [op for op in difflib.SequenceMatcher(a=bad, b=good).get_opcodes() if op[0] != "equal"]
    if len(ops) == 1:
        tag, i1, i2, j1, j2 = ops[0]
        if tag == "replace" and i2 - i1 == 1:
            return ["RUN", f"LINE {i1 + 1}\n" + "\n".join(good[j1:j2]), "SUBMIT"]
        if tag == "insert" and i1 < len(bad):
            return ["RUN", f"LINE {i1 + 1}\n" + "\n".join(good[j1:j2] + [bad[i1]]), "SUBMIT"]
    start = task.fixed.index(f"def {task.entry}(")
    return ["RUN", f"DEF {task.entry}\n" + task.fixed[start:].rstrip("\n"), "SUBMIT"]


def demonstration_episode(task: RepairTask, tok, verifier, horizon: int) -> tuple[list[int], list[int]]:
    """(token ids, loss mask) of :func:`expert_actions` played in the environment: the context and the real
    observations carry no loss, the actions and their ``<eos>`` do. Raises if the script does not repair."""
    env = RepairEnv(task, verifier, max(horizon, 3))
    ids = prompt_ids(tok, env.reset() + ACTION_MARK.lstrip("\n"))
    mask = [0] * len(ids)
    for action in expert_actions(task):
        act = tok(action, add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
        ids, mask = ids + act, mask + [1] * len(act)
        step = env.step(action)
        if step.done:
            break
        obs = observation_tokens(tok, step.observation)
        ids, mask = ids + obs, mask + [0] * len(obs)
    if env.episode.verdict is None or env.episode.verdict.outcome != "pass":
        raise RuntimeError(f"the scripted repair of {task.task_id} did not pass")
    return ids, mask


def episode_summary(records) -> dict:
    """Repair rate (share of episodes that passed) with its Wilson interval, mean turns and tool calls."""
    n = len(records)
    passed = sum(r.verdict == "pass" for r in records)
    lo, hi = wilson_interval(passed, n)
    tools = [sum(c.tool in ("RUN", "SHOW", "LINE", "DEF") for c in r.invocations) for r in records]
    return {
        "repair_rate": passed / n,
        "repair_lo": lo,
        "repair_hi": hi,
        "episodes": n,
        "turns": sum(len(r.invocations) for r in records) / n,
        "tool_calls": sum(tools) / n,
        "unresolved": sum(r.reward is None for r in records),
    }


class PoolVerifier:
    """``verify(candidate, fixture)`` through a :class:`~rlvr_lab.verifier.VerifierPool`, waiting for the
    verdict: the environments of a batch call it from their threads and share the pool's slots (both
    engines use it: this loop and :mod:`~rlvr_lab.train.trl_repair`)."""

    def __init__(self, pool):
        self.pool = pool

    def verify(self, candidate, fixture):
        return self.pool.submit(candidate, fixture).result()


@dataclass
class WarmStart:
    """What :func:`warm_start` returns: the split, the tokenizer and the model after its supervised phase."""

    train_tasks: list
    """Training tasks (:class:`~rlvr_lab.envs.repair_tasks.RepairTask`, split ``train``)."""
    heldout: list
    """Held-out tasks (split ``heldout``)."""
    demos: list
    """The training tasks whose scripted repair the warm start learned from (bug kind in ``demo_kinds``)."""
    tokenizer: object
    """The tokenizer trained on the suite's modules and the scripted actions."""
    model: object
    """The course's model after supervised training on the scripted repairs (training mode)."""
    sft_losses: list
    """Supervised loss per step (nats per action token)."""
    heldout_tasks: list = field(default_factory=list)
    """Tasks of training problems held out by task (variant ``hold_variant``; empty when it is None)."""


def warm_start(config: TrainConfig, verifier, hold_variant: int | None = None) -> WarmStart:
    """Step 1-2 of the module docstring: the suite split by ``config.seed`` and ``heldout_fraction``, a
    tokenizer, the model built from ``config.model_size`` and supervised on the scripted repairs of the
    ``demo_kinds`` tasks played through the environment (``verifier`` runs their public and hidden tests).
    ``hold_variant``: that variant of every training problem leaves the training tasks (and so the
    demonstrations) for :attr:`WarmStart.heldout_tasks`; None keeps every variant for training."""
    suite = make_repair_suite(seed=config.seed, heldout_fraction=config.heldout_fraction)
    held = [t for t in suite if t.split == "train" and t.task_id.endswith(f"/v{hold_variant}")]
    train_tasks = [t for t in suite if t.split == "train" and t not in held]
    heldout = [t for t in suite if t.split == "heldout"]
    demos = [t for t in train_tasks if t.bug_kind in config.demo_kinds]
    scripts = [a for t in demos for a in expert_actions(t)]
    corpus = [t.buggy + t.fixed for t in suite] + scripts + ["public tests: failed\npublic tests: all passed\n"]
    tok = train_tokenizer(corpus * 2, config.vocab_size)
    torch.manual_seed(config.seed)
    model = build_model(tok, config.model_size, seed=config.seed, max_positions=CONTEXT_TOKENS)
    sequences = [demonstration_episode(t, tok, verifier, config.horizon) for t in demos]
    losses = sft_sequences(model, tok, sequences, config.sft_steps, config.sft_batch, config.sft_lr, config.seed)
    return WarmStart(train_tasks, heldout, demos, tok, model, losses, held)


def evaluate_heldout(model, tokenizer, heldout: list, config: TrainConfig, verifier, version: int) -> dict:
    """:func:`episode_summary` of ``config.eval_samples`` episodes per held-out task, sampled from a generator
    seeded with ``config.eval_seed`` (the same draws before and after training, and for either engine)."""
    sampling = SamplingConfig(config.temperature, config.top_k, config.top_p, config.max_new_tokens)
    handle = PolicyHandle(model, tokenizer, version, sampling, tokenizer_digest(tokenizer))
    gen = torch.Generator().manual_seed(config.eval_seed)
    recs = collect_episodes(
        handle, heldout, config.eval_samples, verifier, -1, gen, config.horizon, CONTEXT_TOKENS, id_prefix="h"
    )
    return episode_summary(recs)


@dataclass(frozen=True)
class EpisodeUpdate:
    """How :func:`train_repair` applies GRPO's update to episodes, beyond the :class:`TrainConfig` fields."""

    negative_weight: float = 1.0
    """Factor on every negative advantage (the failures of a mixed group), in [0, 1]: 1 is eq 2's update;
    0 reinforces the passes only, so the update never pushes probability off a failed episode."""
    lr_warmup_steps: int = 0
    """Steps over which the learning rate rises linearly to ``config.lr`` (0: the full rate from step 1;
    Adam's first step moves every weight by about the full rate, whatever its gradient)."""

    def __post_init__(self):
        if not 0.0 <= self.negative_weight <= 1.0:
            raise ValueError(f"negative_weight must be in [0, 1], got {self.negative_weight}")
        if self.lr_warmup_steps < 0:
            raise ValueError(f"lr_warmup_steps must be >= 0, got {self.lr_warmup_steps}")

    def lr_scale(self, step: int) -> float:
        """The learning rate's factor at GRPO step ``step`` (from 0).

        >>> [EpisodeUpdate(lr_warmup_steps=4).lr_scale(s) for s in range(5)]
        [0.25, 0.5, 0.75, 1.0, 1.0]
        """
        return min(1.0, (step + 1) / self.lr_warmup_steps) if self.lr_warmup_steps else 1.0


#: The update ``rlvr-lab train --env repair`` uses unless told otherwise: eq 2's advantages at the full rate.
#: ``experiments/repair_heldout.py`` measures it against reinforcing the passes only (with a warmup).
TRAINER_UPDATE = EpisodeUpdate()


def weigh_negatives(advantages: torch.Tensor, weight: float) -> torch.Tensor:
    """(B,) advantages with every negative one multiplied by ``weight`` (positive ones unchanged).

    >>> weigh_negatives(torch.tensor([1.0, -2.0, 0.0]), 0.25).tolist()
    [1.0, -0.5, 0.0]
    """
    return torch.where(advantages < 0, advantages * weight, advantages)


def episode_learner(model, tokenizer, config: TrainConfig) -> tuple[Learner, TrainConfig]:
    """The GRPO state for episodes from the warm-started ``model``: a frozen copy as the KL reference, AdamW
    at ``config.lr``, the sampling generator seeded with ``config.seed + 1``; and the config the update
    reads, whose eq 5 constant is the whole episode's token budget (``max_new_tokens`` x ``horizon``)."""
    ref = copy.deepcopy(model).eval()
    for p in ref.parameters():
        p.requires_grad_(False)
    learner = Learner(
        model,
        tokenizer,
        ref,
        torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=0.0),
        torch.Generator().manual_seed(config.seed + 1),
        None,
        tokenizer_digest(tokenizer),
    )
    run_config = config.with_overrides(norm_constant=config.norm_constant or config.max_new_tokens * config.horizon)
    return learner, run_config


def episode_step(
    learner: Learner,
    tasks: list,
    run_config: TrainConfig,
    sampling,
    verifier,
    step: int,
    negative_weight: float = 1.0,
):
    """One GRPO step over whole episodes (step 3 of the module docstring): ``run_config.group_size`` episodes
    of each task in ``tasks`` with the learner's weights, the complete-group rule, one
    :func:`~rlvr_lab.train.learner.grpo_update` on the admitted groups, their negative advantages multiplied by
    ``negative_weight`` (:func:`weigh_negatives`; 1 leaves eq 2's advantages). Returns ``(records, row)``: the
    episodes' records (admission set) and the step's :func:`episode_summary` with its seconds and the update's
    loss, replay deviation, KL and entropy."""
    s0 = time.perf_counter()
    handle = PolicyHandle(learner.model, learner.tok, learner.version, sampling, learner.tok_digest)
    records = collect_episodes(
        handle, tasks, run_config.group_size, verifier, step, learner.generator, run_config.horizon, CONTEXT_TOKENS
    )
    groups: dict[str, list] = {}
    for r in records:
        groups.setdefault(r.group_id, []).append(r)
    for members in groups.values():
        ok, why = close_group(members, run_config.group_size, learner.version, run_config.max_lag)
        for m in members:
            m.admitted, m.exclusion_reason = ok, why
    admitted = [r for r in records if r.admitted]
    diags = {}
    if admitted:
        batch = make_batch(learner, admitted, run_config, sampling)
        if negative_weight != 1.0:
            batch.advantages = weigh_negatives(batch.advantages, negative_weight)
        diags = grpo_update(learner, batch, run_config, sampling)
    row = {"step": step, **episode_summary(records), "step_s": time.perf_counter() - s0}
    row.update({k: v for k, v in diags.items() if k in ("loss", "replay_max_dev", "kl_mean", "entropy")})
    return records, row


def train_repair(config: TrainConfig, pool=None, update: EpisodeUpdate = TRAINER_UPDATE) -> dict:
    """Warm start, GRPO over episodes (applied as ``update`` says) and held-out evaluation; writes
    ``records.jsonl``, ``metrics.jsonl`` and ``summary.json`` to ``out_dir`` and returns the summary."""
    from rlvr_lab.verifier import VerifierPool

    t0 = time.perf_counter()
    os.makedirs(config.out_dir, exist_ok=True)
    own = pool is None
    pool = pool or VerifierPool(workers=config.verifier_workers, seed=config.seed)
    verifier = PoolVerifier(pool)
    try:
        start = warm_start(config, verifier, HELDOUT_VARIANT)
        train_tasks, heldout, demos = start.train_tasks, start.heldout, start.demos
        tok, model, losses = start.tokenizer, start.model, start.sft_losses
        sampling = SamplingConfig(config.temperature, config.top_k, config.top_p, config.max_new_tokens)

        before = evaluate_heldout(model, tok, start.heldout_tasks, config, verifier, 0)
        before_problems = evaluate_heldout(model, tok, heldout, config, verifier, 0)
        learner, run_config = episode_learner(model, tok, config)
        records_path, rows = os.path.join(config.out_dir, "records.jsonl"), []
        open(records_path, "w").close()
        for step in range(config.grpo_steps):
            for group in learner.optimizer.param_groups:
                group["lr"] = config.lr * update.lr_scale(step)
            tasks = random.Random(f"{config.seed}:repair:{step}").sample(train_tasks, config.tasks_per_step)
            records, row = episode_step(
                learner, tasks, run_config, sampling, verifier, step, negative_weight=update.negative_weight
            )
            write_records(records_path, records)
            rows.append(row)
        grpo_s = sum(r["step_s"] for r in rows)
        after = evaluate_heldout(model, tok, start.heldout_tasks, config, verifier, learner.version)
        after_problems = evaluate_heldout(model, tok, heldout, config, verifier, learner.version)
        with open(os.path.join(config.out_dir, "metrics.jsonl"), "w") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in rows)
        summary = {
            "env": "repair",
            "before": before,
            "after": after,
            "gain": after["repair_rate"] - before["repair_rate"],
            "problems_before": before_problems,
            "problems_after": after_problems,
            "update": asdict(update),
            "train_tasks": len(train_tasks),
            "heldout_tasks": len(start.heldout_tasks),
            "heldout_problem_tasks": len(heldout),
            "demonstrations": len(demos),
            "episodes": sum(r["episodes"] for r in rows),
            "grpo_s": grpo_s,
            "step_s": [r["step_s"] for r in rows],
            "sft_final_nll": losses[-1] if losses else None,
            "wall_s": time.perf_counter() - t0,
            "config": config.to_dict(),
        }
        with open(os.path.join(config.out_dir, "summary.json"), "w") as fh:
            json.dump(summary, fh, indent=2, default=list)
        return summary
    finally:
        if own:
            pool.close()


def format_summary(summary: dict) -> str:
    """The closing lines of ``rlvr-lab train --env repair``."""
    b, a = summary["before"], summary["after"]

    def rate(e):
        return f"{e['repair_rate']:.3f} [{e['repair_lo']:.3f}, {e['repair_hi']:.3f}]"

    lines = [
        f"repair environment: {summary['train_tasks']} training tasks, {summary['heldout_tasks']} held-out tasks "
        f"of the same problems, {summary.get('heldout_problem_tasks', 0)} of held-out problems; "
        f"{summary['demonstrations']} scripted repairs in the warm start",
        f"held-out repair rate: {rate(b)} -> {rate(a)} ({summary['gain']:+.3f})",
    ]
    if "problems_before" in summary:
        pb, pa = summary["problems_before"], summary["problems_after"]
        lines.append(f"held-out problems: {rate(pb)} -> {rate(pa)} ({pa['repair_rate'] - pb['repair_rate']:+.3f})")
    lines += [
        f"turns per episode: {b['turns']:.2f} -> {a['turns']:.2f}; tool calls: {b['tool_calls']:.2f} -> "
        f"{a['tool_calls']:.2f}",
        f"wall time: {summary['wall_s']:.0f} s",
    ]
    return "\n".join(lines)
