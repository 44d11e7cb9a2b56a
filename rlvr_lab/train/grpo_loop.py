"""The GRPO training loop (17.5, 17.9, 17.10): warm start, then per step sample -> grade -> update -> log.

Each stage is a function from one dataclass to the next: :func:`sample_step` (-> :class:`Sampled`, scored
under the reference while the verifier works), :func:`grade_step` (-> :class:`Graded`, closed by the
complete-group rule and lag bound), :func:`update_step` (eqs 2-5, :mod:`~rlvr_lab.train.learner`) and
:func:`log_step`; :func:`train` evaluates and checkpoints when due. With ``overlap`` the update on one batch
runs while the verifier grades the next (bounded staleness, eq 8); the pipeline drains before every
evaluation and checkpoint, so a resumed run repeats the uninterrupted one exactly.
"""

from __future__ import annotations

import copy
import json
import os
import random
import time
from dataclasses import dataclass, field

import torch

from rlvr_lab.policy import load_policy, save_policy
from rlvr_lab.records import RolloutRecord, close_group, write_records
from rlvr_lab.tasks import GENERATOR_VERSION, CodeTask, split_tasks
from rlvr_lab.train import checkpoint as ckpt
from rlvr_lab.train import dynamic_sampling
from rlvr_lab.train.config import TrainConfig
from rlvr_lab.train.learner import Learner, build_policy, evaluate, generator_for, grpo_update, make_batch
from rlvr_lab.train.lora import apply_lora, load_adapters
from rlvr_lab.train.metrics import MetricsLog, group_outcomes, length_by_outcome
from rlvr_lab.train.precision import check_master_weights, weight_dtype
from rlvr_lab.train.prompting import prompt_format
from rlvr_lab.train.rollout import (
    Collection,
    PolicyHandle,
    VerdictCache,
    finish_collect,
    start_collect,
    tokenizer_digest,
)
from rlvr_lab.train.run import Run, setup
from rlvr_lab.train.supervised import sft


@dataclass
class TrainResult:
    """What a run returns to a notebook or the CLI."""

    out_dir: str
    before: dict
    """Held-out evaluation of the warm-start checkpoint (pass1, pass1_lo, pass1_hi, pass@k, ...)."""
    after: dict
    """Held-out evaluation after GRPO."""
    wall_s: float
    """Wall-clock seconds of the whole run (warm start, GRPO, evaluation)."""
    timing: dict
    """Seconds per phase (:data:`~rlvr_lab.train.run.PHASES`): setup, sft, sample, reference (scoring
    under the reference model), verify (time spent waiting for verdicts), update, eval, checkpoint."""
    steps: int
    rollouts: int
    """Training rollouts collected in this process (excludes evaluation)."""
    metrics: list = field(default_factory=list)
    """Per-step metric rows."""
    stopped_early: bool = False
    """True when ``stop_after_steps`` cut the run short (as if killed)."""
    grpo_s: float = 0.0
    """Wall-clock seconds of the GRPO steps in this process (evaluations and checkpoints excluded)."""

    @property
    def gain(self) -> float:
        """Held-out pass@1 after minus before."""
        return self.after.get("pass1", float("nan")) - self.before.get("pass1", float("nan"))


@dataclass
class Sampled:
    """A batch sampled and sent to the verifier, with its reference log-probs (computed meanwhile)."""

    step: int
    collection: Collection
    ref: dict
    started: float


@dataclass
class Graded:
    """A batch with its verdicts, closed by the complete-group rule and the lag bound."""

    step: int
    records: list[RolloutRecord]
    times: dict
    retry_s: float
    ref: dict


@dataclass
class Progress:
    """What the run has done so far (for the metrics rows and the result)."""

    lineage: dict
    log: MetricsLog
    last_eval: dict
    rollouts: int = 0
    grpo_s: float = 0.0
    mark: float = field(default_factory=time.perf_counter)


def warm_start(run: Run, bar=None) -> tuple[torch.nn.Module, object, dict]:
    """The warm-start policy and its held-out evaluation: loaded from ``warm_dir``, or trained (SFT on
    demonstrations), evaluated and saved there."""
    config, timer = run.config, run.timer
    if os.path.exists(os.path.join(run.warm_dir, "lineage.json")):
        model, tok = load_policy(run.warm_dir, device=str(run.device), dtype=weight_dtype(config, run.precision))
        return model, tok, ckpt.read_lineage(run.warm_dir)["heldout"]
    with timer.phase("sft"):
        model, tok = build_policy(config, run.suite, run.device)
        fmt = prompt_format(config, tok, model)
        demos = (
            []
            if not config.sft_steps
            else run.train_tasks
            if config.tasks == "mbpp"
            else split_tasks(run.suite, "train", config.sft_families)
        )
        losses = sft(
            model,
            tok,
            demos,
            config.sft_steps,
            config.sft_batch,
            config.sft_lr,
            config.seed,
            progress=bar,
            fmt=fmt,
            precision=run.precision,
        )
    with timer.phase("eval"):
        before, _ = evaluate(
            PolicyHandle(model, tok, 0, run.sampling, tokenizer_digest(tok), fmt, run.precision),
            run.heldout,
            config,
            run.grader,
            "warm",
        )
    save_policy(model, tok, run.warm_dir)
    lineage = _lineage(config, tokenizer_digest(tok), config.model or "config:" + config.model_size, run.pool)
    lineage.update(
        {"heldout": before, "sft_final_nll": losses[-1] if losses else None, "sft_demonstrations": len(demos)}
    )
    _write_json(os.path.join(run.warm_dir, "lineage.json"), lineage)
    return model, tok, before


def make_learner(run: Run, model, tok) -> tuple[Learner, int]:
    """The learner around the warm-start weights, resumed from the latest checkpoint when there is one
    (records and metrics cut back to it; without one they start empty); returns it with the first step to run."""
    config, log = run.config, MetricsLog(run.config.out_dir)
    fmt = prompt_format(config, tok, model)
    if config.lora_rank:  # adapters on the frozen warm start; the reference is the same model, adapters off
        model, ref_model = (
            apply_lora(model, config.lora_rank, config.lora_alpha, config.lora_targets, config.seed),
            None,
        )
    else:
        ref_model = copy.deepcopy(model).eval()
        for p in ref_model.parameters():
            p.requires_grad_(False)
    check_master_weights(model)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=config.lr, weight_decay=0.0)
    learner = Learner(
        model,
        tok,
        ref_model,
        optimizer,
        torch.Generator(device="cpu").manual_seed(config.seed + 1),
        generator_for(model, config.seed + 1),
        tokenizer_digest(tok),
        0,
        fmt,
        run.precision,
        run.precision.scaler(),
    )
    resume = ckpt.latest_checkpoint(config.out_dir)
    if resume is None:
        ckpt.truncate_to(run.records_path, 0)
        ckpt.truncate_to(log.jsonl, 0)
        return learner, 0
    state = ckpt.load_trainer_state(resume)
    if config.lora_rank:
        load_adapters(model, resume)
    else:
        resumed, _ = load_policy(resume, device=str(run.device), dtype=torch.float32)
        model.load_state_dict(resumed.state_dict())
    optimizer.load_state_dict(state["optimizer"])
    if state.get("scaler") and learner.scaler is not None:
        learner.scaler.load_state_dict(state["scaler"])
    ckpt.restore_rng(state["rng"], learner.generator)
    ckpt.truncate_to(run.records_path, state["records_size"])
    ckpt.truncate_to(log.jsonl, state["metrics_size"])
    learner.version = state["version"]
    return learner, state["step"] + 1


def sample_step(run: Run, learner: Learner, step: int) -> Sampled:
    """Sample G completions for the step's tasks, send them to the verifier, and score them under the
    reference model while it works."""
    config = run.config
    rng = random.Random(f"{config.seed}:step:{step}")
    tasks = rng.sample(run.train_tasks, min(config.tasks_per_step, len(run.train_tasks)))
    started = time.perf_counter()
    gen = learner.sample_gen if learner.sample_gen is not None else learner.generator
    collection = start_collect(learner.handle(run), tasks, config.group_size, run.grader, step, gen, config.multi_turn)
    with run.timer.phase("reference"):
        ref = learner.reference(collection.records, run.sampling, config.share_prompt)
    return Sampled(step, collection, ref, started)


def grade_step(run: Run, learner: Learner, sampled: Sampled) -> Graded:
    """Wait for the verdicts, apply the complete-group rule, record each rollout's age and lag; with
    ``dynamic_sampling``, refill the step with groups that have contrast (:mod:`.dynamic_sampling`)."""
    graded = _grade(run, learner, sampled)
    config = run.config
    if not config.dynamic_sampling:
        return graded

    def sample_and_grade(tasks, id_prefix):
        gen = learner.sample_gen if learner.sample_gen is not None else learner.generator
        started = time.perf_counter()
        collection = start_collect(
            learner.handle(run), tasks, config.group_size, run.grader, graded.step, gen, config.multi_turn, id_prefix
        )
        with run.timer.phase("reference"):
            graded.ref.update(learner.reference(collection.records, run.sampling, config.share_prompt))
        more = _grade(run, learner, Sampled(graded.step, collection, {}, started))
        for key in ("sample_s", "verify_s"):
            graded.times[key] += more.times[key]
        graded.retry_s += more.retry_s
        return more.records

    seed = f"{config.seed}:step:{graded.step}"
    graded.records, rounds = dynamic_sampling.refill(
        graded.records,
        run.train_tasks,
        config.tasks_per_step,
        config.dynamic_sampling_rounds,
        seed,
        sample_and_grade,
    )
    kept = dynamic_sampling.keep_informative(graded.records, config.tasks_per_step)
    graded.times.update(refill_rounds=rounds, informative_groups=len(kept))
    return graded


def _grade(run: Run, learner: Learner, sampled: Sampled) -> Graded:
    records, times = finish_collect(sampled.collection, run.grader)
    run.timer.add("sample", times["sample_s"])
    run.timer.add("verify", times["verify_s"])
    records, retry_s = apply_closure(records, run.config, run.grader, learner.version, run.by_id)
    for r in records:
        r.age_s = time.perf_counter() - sampled.started
    run.timer.add("verify", retry_s)
    return Graded(sampled.step, records, times, retry_s, sampled.ref)


def update_step(run: Run, learner: Learner, graded: Graded) -> dict:
    """``passes`` GRPO optimizer steps on the admitted records (none admitted: no update); diagnostics."""
    admitted = [r for r in graded.records if r.admitted]
    if not admitted:
        return {}
    with run.timer.phase("update"):
        batch = make_batch(learner, admitted, run.config, run.sampling, graded.ref)
        return grpo_update(learner, batch, run.config, run.sampling)


def log_step(
    run: Run,
    learner: Learner,
    graded: Graded,
    diags: dict,
    step_s: float,
    heldout: dict | None,
    progress: Progress,
    bar,
) -> dict:
    """Write the step's records and its metrics row (``step_s`` of wall time; the held-out evaluation
    ``heldout`` when one ran); returns the row."""
    write_records(run.records_path, graded.records)
    progress.rollouts += len(graded.records)
    progress.grpo_s += step_s
    row = _step_row(graded.step, learner.version, graded.records, diags, graded.times, step_s, graded.retry_s)
    if heldout is not None:
        progress.last_eval = heldout
        row.update({f"heldout_{k}": v for k, v in heldout.items()})
    progress.log.append(row)
    if bar is not None:
        bar.update(1)
        bar.set_postfix(reward=f"{row['reward_mean']:.2f}", heldout=f"{progress.last_eval.get('pass1', 0):.2f}")
    return row


def finish_step(run: Run, learner: Learner, graded: Graded, progress: Progress, bar) -> None:
    """A graded batch's update, then its log row, with a held-out evaluation and a checkpoint when due."""
    config, step = run.config, graded.step
    diags = update_step(run, learner, graded)
    step_s = time.perf_counter() - progress.mark  # wall time since the previous step was done
    heldout = None
    if _due(step, config.eval_every, config):
        with run.timer.phase("eval"):
            heldout, _ = evaluate(learner.handle(run), run.heldout, config, run.grader, f"s{step}")
    log_step(run, learner, graded, diags, step_s, heldout, progress, bar)
    if _due(step, config.checkpoint_every, config):
        with run.timer.phase("checkpoint"):
            ckpt.save_checkpoint(
                config.out_dir,
                step,
                learner.model,
                learner.tok,
                learner.optimizer,
                learner.generator,
                learner.version,
                run.records_path,
                progress.log.jsonl,
                progress.lineage,
                learner.scaler,
            )
    progress.mark = time.perf_counter()


def _due(step: int, every: int, config: TrainConfig) -> bool:
    """Every ``every`` steps and at the last one (evaluations, checkpoints; the overlap pipeline drains)."""
    return (step + 1) % every == 0 or step + 1 == config.grpo_steps


def train(config: TrainConfig, pool=None) -> TrainResult:
    """Run warm start, GRPO and evaluation; resumes from ``out_dir``'s latest checkpoint when one exists.

    ``pool`` defaults to a fresh :class:`rlvr_lab.verifier.VerifierPool` (closed at the end). Under
    ``overlap`` a graded batch waits: its update runs while the next batch is verified.
    """
    run = setup(config, pool)
    bar = _progress(config)
    try:
        run.timer.add("setup", run.timer.elapsed())
        model, tok, before = warm_start(run, bar)
        log = MetricsLog(config.out_dir)
        learner, start_step = make_learner(run, model, tok)
        progress = Progress(_lineage(config, learner.tok_digest, run.warm_dir, run.pool), log, dict(before))
        waiting, stopped = None, False
        for step in range(start_step, config.grpo_steps):
            if config.stop_after_steps is not None and step - start_step >= config.stop_after_steps:
                stopped = True  # as if killed: a batch still waiting for its update is lost with the process
                break
            sampled = sample_step(run, learner, step)
            if waiting is not None:
                finish_step(run, learner, waiting, progress, bar)
                waiting = None
            graded = grade_step(run, learner, sampled)
            drains = _due(step, config.eval_every, config) or _due(step, config.checkpoint_every, config)
            if config.overlap and not drains:
                waiting = graded
            else:
                finish_step(run, learner, graded, progress, bar)
        after = before if not stopped and config.grpo_steps == 0 else progress.last_eval
        result = TrainResult(
            config.out_dir,
            before,
            after,
            run.timer.elapsed(),
            run.timer.seconds,
            config.grpo_steps,
            progress.rollouts,
            log.rows(),
            stopped,
            progress.grpo_s,
        )
        if not stopped:
            from rlvr_lab.train.report import write_report

            write_report(result, config, run.grader)
        return result
    finally:
        if bar is not None:
            bar.close()
        run.close()


def _lineage(config: TrainConfig, tok_digest: str, parent: str, pool) -> dict:
    return {
        "config": config.to_dict(),
        "seed": config.seed,
        "engine": config.engine,
        "task_generator": GENERATOR_VERSION,
        "fixture_version": f"{GENERATOR_VERSION}-s{config.seed}",
        "verifier": {
            "backend": config.verifier_backend,
            "resolved": getattr(pool, "backend", None),
            "isolation": list(getattr(getattr(pool, "verifiers", [None])[0], "isolation", ())),
            "pool": type(pool).__module__ + "." + type(pool).__name__,
            "workers": config.verifier_workers,
            "verdict_cache": config.verdict_cache,
            "nodes": pool.nodes() if hasattr(pool, "nodes") else [],
        },
        "tokenizer_sha256": tok_digest,
        "parent": parent,
        "objective": {
            "group_size": config.group_size,
            "eps_low": config.eps_low,
            "eps_high": config.eps_high,
            "beta": config.beta,
            "norm": config.norm,
            "std": config.std,
            "passes": config.passes,
            "max_lag": config.max_lag,
            "closure": config.closure,
        },
    }


def apply_closure(
    records: list[RolloutRecord],
    config: TrainConfig,
    grader: VerdictCache,
    trainer_version: int,
    tasks: dict[str, CodeTask],
) -> tuple[list[RolloutRecord], float]:
    """Apply the declared complete-group rule; under ``wait`` resubmit unresolved members first."""
    spent = 0.0
    if config.closure == "wait":
        for _ in range(config.verify_retries):
            todo = [r for r in records if r.reward is None]
            if not todo:
                break
            t0 = time.perf_counter()
            verdicts = grader.grade(
                [(tasks[r.task_id].candidate(r.completion_text), tasks[r.task_id].fixture) for r in todo]
            )
            spent += time.perf_counter() - t0
            for r, (v, cached) in zip(todo, verdicts):
                r.verdict, r.reward = v.outcome, v.reward
                r.evidence = dict(v.to_dict(), cached=cached, resubmitted=True)
    groups: dict[str, list[RolloutRecord]] = {}
    for r in records:
        groups.setdefault(r.group_id, []).append(r)
    for members in groups.values():
        ok, why = close_group(members, config.group_size, trainer_version, config.max_lag, rule="exclude")
        for m in members:
            m.admitted, m.exclusion_reason = ok, why
            m.version_lag = trainer_version - m.policy_version
    return records, spent


def _step_row(
    step: int, version: int, records: list[RolloutRecord], diags: dict, times: dict, step_s: float, retry_s: float
) -> dict:
    resolved = [r.reward for r in records if r.reward is not None]
    row = {
        "step": step,
        "policy_version": version,
        "rollouts": len(records),
        "reward_mean": sum(resolved) / len(resolved) if resolved else float("nan"),
        "unresolved": sum(r.reward is None for r in records),
        "admitted": sum(bool(r.admitted) for r in records),
        "excluded_groups": len({r.group_id for r in records if r.admitted is False}),
        "stop_length": sum(r.stop_reason == "length" for r in records),
        "step_s": step_s,
        "sample_s": times["sample_s"],
        "verify_s": times["verify_s"] + retry_s,
        "verifier_share": (times["verify_s"] + retry_s) / step_s if step_s > 0 else 0.0,
    }
    row.update({k: times[k] for k in ("refill_rounds", "informative_groups") if k in times})
    row.update({f"groups_{k}": v for k, v in group_outcomes(records).items()})
    row.update(length_by_outcome(records))
    row.update(diags)
    reasons = sorted({r.exclusion_reason for r in records if r.exclusion_reason})
    if reasons:
        row["exclusion_reasons"] = reasons
    return row


def _progress(config: TrainConfig):
    if not config.progress:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=config.sft_steps + config.grpo_steps, desc="rlvr-lab train", unit="step")


def _write_json(path: str, data: dict) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2, sort_keys=True, default=str)
