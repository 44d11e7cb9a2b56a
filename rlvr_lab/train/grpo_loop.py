"""The GRPO training loop: warm start, collection, verification, closure, update, checkpoint (17.5, 17.9, 17.10).

One step, as data: tasks -> :func:`~rlvr_lab.train.rollout.collect` (token ids, behaviour log-probs,
version) -> verdicts from the isolated VerifierPool -> :func:`~rlvr_lab.records.close_group` (complete
group, lag bound) -> :func:`rlvr_lab.grpo.group_advantages` -> :func:`rlvr_lab.grpo.grpo_loss` over
``passes`` optimizer steps against the recorded log-probs -> records, metrics, checkpoint with lineage.
Held-out pass@1 is measured before GRPO, every ``eval_every`` steps and at the end, by the same verifier
with a fixed sampling seed.

The verifier never holds the policy still. Each batch is sampled, sent to the pool, and scored under the
frozen reference model while the verifier works. With ``overlap`` on (the cpu and gpu presets), the
optimizer then updates on the *previous* batch while the verifier grades this one, so a batch enters its
update one update (``passes`` versions) after it was sampled: the bounded staleness of section 17.9's
rollout fleet, checked at admission against ``max_lag`` (equation 8) and corrected by the importance ratio
against the recorded behaviour log-probs. The pipeline drains before every evaluation and checkpoint, so
a checkpoint never holds a half-processed batch and a resumed run repeats the uninterrupted one exactly.
"""

from __future__ import annotations

import copy
import os
import random
import time
from dataclasses import dataclass, field

import torch

from rlvr_lab.policy import (SamplingConfig, build_model, completion_logprobs, load_policy, save_policy,
                             shared_prefix_logprobs)
from rlvr_lab.records import RolloutRecord, close_group, flatten, write_records
from rlvr_lab.tasks import GENERATOR_VERSION, CodeTask, make_suite, split_tasks
from rlvr_lab.train import checkpoint as ckpt
from rlvr_lab.train.config import TrainConfig
from rlvr_lab.train.metrics import MetricsLog, group_outcomes, length_by_outcome, pass_at_k_summary, per_family_pass1
from rlvr_lab.train.rollout import Grader, PolicyHandle, collect, finish_collect, start_collect, tokenizer_digest
from rlvr_lab.train.sft import sft


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
    """Seconds per phase: setup, sft, sample, reference (scoring under the reference model), verify (time
    spent waiting for verdicts), update, eval, checkpoint."""
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


def resolve_device(name: str) -> torch.device:
    """``auto`` -> CUDA when available, else CPU.

    >>> resolve_device("cpu").type
    'cpu'
    """
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device {name!r} requested but CUDA is not available")
    return torch.device(name)


def resolve_dtype(name: str, device: torch.device) -> torch.dtype:
    """``auto`` -> bfloat16 on a GPU that supports it (Ampere and later), else float32.

    >>> resolve_dtype("auto", torch.device("cpu"))
    torch.float32
    """
    if name == "auto":
        if device.type == "cuda" and torch.cuda.is_bf16_supported():
            return torch.bfloat16
        return torch.float32
    return getattr(torch, name)


def sampling_of(config: TrainConfig) -> SamplingConfig:
    """The run's sampling configuration."""
    return SamplingConfig(config.temperature, config.top_k, config.top_p, config.max_new_tokens)


def open_pool(config: TrainConfig):
    """The isolated verifier pool the rewards come from.

    Its queue holds two training batches: a whole batch is submitted at once and then graded while the
    learner works, so a smaller queue would make the submission itself wait for the verifier (the
    backpressure still bounds memory when the verifier falls behind by more than that).
    """
    from rlvr_lab.verifier import VerifierPool

    return VerifierPool(workers=config.verifier_workers, backend=config.verifier_backend,
                        max_queue=max(64, 2 * config.tasks_per_step * config.group_size))


def heldout_subset(config: TrainConfig, suite: list[CodeTask]) -> list[CodeTask]:
    """The fixed held-out evaluation tasks (a seed-chosen subset when ``heldout_tasks`` is set)."""
    tasks = split_tasks(suite, "heldout", config.families)
    if config.heldout_tasks is not None and len(tasks) > config.heldout_tasks:
        tasks = sorted(random.Random(f"heldout:{config.seed}").sample(tasks, config.heldout_tasks),
                       key=lambda t: t.task_id)
    return tasks


def evaluate(policy: PolicyHandle, tasks: list[CodeTask], config: TrainConfig, grader: Grader,
             label: str) -> tuple[dict, list[RolloutRecord]]:
    """Held-out pass@1 / pass@k with ``eval_samples`` samples per task and a fixed seed (17.9.6)."""
    gen = torch.Generator(device="cpu").manual_seed(config.eval_seed)
    device_gen = _generator_for(policy.model, config.eval_seed) or gen
    records: list[RolloutRecord] = []
    chunk = max(1, 128 // config.eval_samples)
    for i in range(0, len(tasks), chunk):
        recs, _ = collect(policy, tasks[i:i + chunk], config.eval_samples, grader, step=i // chunk,
                          generator=device_gen, multi_turn=config.multi_turn, id_prefix=f"eval-{label}-")
        records += recs
    summary = pass_at_k_summary(records, config.eval_k)
    summary.update(per_family_pass1(records))
    return summary, records


def _generator_for(model, seed: int) -> torch.Generator | None:
    device = next(model.parameters()).device
    if device.type == "cpu":
        return None
    return torch.Generator(device=device).manual_seed(seed)


def build_policy(config: TrainConfig, suite: list[CodeTask], device: torch.device):
    """(model, tokenizer): loaded from ``config.model`` or built from a config with a BPE tokenizer."""
    from rlvr_lab.policy import train_tokenizer

    dtype = resolve_dtype(config.dtype, device)
    if config.model:
        model, tok = load_policy(config.model, device=str(device), dtype=dtype)
        return model, tok
    corpus = [t.prompt + t.solution for t in suite if t.split == "train"]
    tok = train_tokenizer(corpus, config.vocab_size)
    model = build_model(tok, config.model_size, seed=config.seed).to(device=device, dtype=dtype)
    return model, tok


def score(model, flat: list[tuple[list[int], list[int], list[float]]], prefix: list[int],
          sampling: SamplingConfig, pad_id: int, share_prompt: bool):
    """Per-token log-probs of flattened records (:func:`~rlvr_lab.records.flatten`) under ``model``.

    ``prefix[i]`` is the length of record i's first prompt. Returns ``(logp, mask, logits, logits_mask)``:
    logp and mask of shape (B, T-1) as :func:`~rlvr_lab.policy.completion_logprobs` (gradients flow), and
    logits with their score mask for the entropy. With ``share_prompt`` a group's common prompt runs
    through the model once (:func:`~rlvr_lab.policy.shared_prefix_logprobs`, equal up to float rounding).
    """
    seqs, masks = [f[0] for f in flat], [f[1] for f in flat]
    if share_prompt:
        return shared_prefix_logprobs(model, seqs, masks, prefix, sampling, pad_id)
    logp, mask, logits = completion_logprobs(model, seqs, masks, sampling, pad_id, with_logits=True)
    return logp, mask, logits, mask


def _prefix_lengths(records: list[RolloutRecord]) -> list[int]:
    return [len(r.invocations[0].prefix_ids) for r in records]


def reference_logprobs(ref_model, records: list[RolloutRecord], sampling: SamplingConfig, pad_id: int,
                       share_prompt: bool = True) -> dict[str, torch.Tensor]:
    """Log-probs of every record's tokens under the frozen reference model, keyed by rollout id.

    Each value has shape (len(ids) - 1,), aligned like :func:`~rlvr_lab.policy.completion_logprobs`
    (context positions are 0). They need no verdict, so the trainer computes them while the verifier runs.
    """
    if not records:
        return {}
    flat = [flatten(r) for r in records]
    with torch.no_grad():
        logp = score(ref_model, flat, _prefix_lengths(records), sampling, pad_id, share_prompt)[0]
    return {r.rollout_id: logp[i, :len(f[0]) - 1].float() for i, (r, f) in enumerate(zip(records, flat))}


def grpo_update(model, ref_model, optimizer, records: list[RolloutRecord], config: TrainConfig, pad_id: int,
                sampling: SamplingConfig, ref: dict[str, torch.Tensor] | None = None) -> dict:
    """``passes`` optimizer steps of the GRPO loss on admitted records; returns diagnostics (17.5).

    ``ref`` holds the records' reference log-probs from :func:`reference_logprobs` when they were computed
    ahead (while the verifier ran); without it they are computed here.
    """
    from rlvr_lab import grpo

    groups: dict[str, list[RolloutRecord]] = {}
    for r in records:
        groups.setdefault(r.group_id, []).append(r)
    advs, order = [], []
    for members in groups.values():
        a = grpo.group_advantages([m.reward for m in members], eps=1e-8, std=config.std)
        advs += [float(adv) for adv in a]
        order += members
    flat = [flatten(m) for m in order]  # (ids, score mask, behaviour log-probs) per record, once
    prefix = _prefix_lengths(order)
    device = next(model.parameters()).device
    width = max(len(f[0]) for f in flat)
    old = torch.tensor([f[2] + [0.0] * (width - len(f[2])) for f in flat], dtype=torch.float32,
                       device=device)[:, 1:]
    adv_t = torch.tensor(advs, dtype=torch.float32, device=device)
    if ref is None:
        ref = reference_logprobs(ref_model, order, sampling, pad_id, config.share_prompt)
    ref_logp = torch.zeros((len(order), width - 1), dtype=torch.float32, device=device)
    for i, m in enumerate(order):
        ref_logp[i, :ref[m.rollout_id].shape[0]] = ref[m.rollout_id].to(device)
    turns = 2 if config.multi_turn else 1
    constant = float(config.max_new_tokens * turns) if config.norm == "constant" else None
    diags: dict = {}
    model.train()
    for p in range(config.passes):
        logp, mask, logits, logits_mask = score(model, flat, prefix, sampling, pad_id, config.share_prompt)
        loss, d = grpo.grpo_loss(logp, old, ref_logp.float(), adv_t, mask, config.eps_low, config.eps_high,
                                 config.beta, norm=config.norm, constant=constant)
        if not torch.isfinite(loss):
            raise FloatingPointError(f"GRPO loss is not finite ({float(loss)}) at pass {p}")
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), config.max_grad_norm)
        optimizer.step()
        if p == 0:
            with torch.no_grad():
                diags["entropy"] = float(grpo.token_entropy(logits.float() / sampling.temperature, logits_mask))
                diags["replay_max_dev"] = float(((logp.detach() - old).abs() * mask).max())
        for k, v in d.items():
            diags[f"{k}" if p == config.passes - 1 else f"{k}_pass{p}"] = _scalar(v)
        diags["loss"] = loss.item()
        diags["grad_norm"] = float(grad_norm)
    model.eval()
    diags["scored_tokens"] = float(sum(sum(f[1]) for f in flat))
    return diags


def _scalar(value):
    if isinstance(value, torch.Tensor):
        return value.detach().float().tolist() if value.numel() > 1 else float(value)
    return value


def _lineage(config: TrainConfig, tok_digest: str, parent: str, pool) -> dict:
    return {
        "config": config.to_dict(), "seed": config.seed, "engine": config.engine,
        "task_generator": GENERATOR_VERSION, "fixture_version": f"{GENERATOR_VERSION}-s{config.seed}",
        "verifier": {"backend": config.verifier_backend, "resolved": getattr(pool, "backend", None),
                     "isolation": list(getattr(getattr(pool, "verifiers", [None])[0], "isolation", ())), "pool": type(pool).__module__ + "." + type(pool).__name__,
                     "workers": config.verifier_workers, "verdict_cache": config.verdict_cache},
        "tokenizer_sha256": tok_digest, "parent": parent,
        "objective": {"group_size": config.group_size, "eps_low": config.eps_low, "eps_high": config.eps_high,
                      "beta": config.beta, "norm": config.norm, "std": config.std, "passes": config.passes,
                      "max_lag": config.max_lag, "closure": config.closure},
    }


def train(config: TrainConfig, pool=None) -> TrainResult:
    """Run warm start, GRPO and evaluation; resumes from ``out_dir``'s latest checkpoint when one exists.

    ``pool`` defaults to a fresh :class:`rlvr_lab.verifier.VerifierPool` (closed at the end).
    """
    t_start = time.perf_counter()
    timing = {k: 0.0 for k in ("setup", "sft", "sample", "reference", "verify", "update", "eval", "checkpoint")}
    os.makedirs(config.out_dir, exist_ok=True)
    torch.manual_seed(config.seed)
    random.seed(config.seed)
    device = resolve_device(config.device)
    suite = make_suite(seed=config.seed, families=tuple(sorted(set(config.families) | set(config.sft_families))),
                       variants=config.variants, heldout_fraction=config.heldout_fraction,
                       problems_per_family=config.problems_per_family)
    train_tasks = split_tasks(suite, "train", config.families)
    heldout = heldout_subset(config, suite)
    by_id = {t.task_id: t for t in suite}
    own_pool = pool is None
    pool = open_pool(config) if own_pool else pool
    grader = Grader(pool, cache=config.verdict_cache, timeout_s=config.verify_timeout_s)
    sampling = sampling_of(config)
    records_path = os.path.join(config.out_dir, "records.jsonl")
    log = MetricsLog(config.out_dir)
    warm_dir = os.path.join(config.out_dir, "warmstart")
    bar = _progress(config)
    try:
        resume = ckpt.latest_checkpoint(config.out_dir)
        timing["setup"] = time.perf_counter() - t_start
        if os.path.exists(os.path.join(warm_dir, "lineage.json")):
            model, tok = load_policy(warm_dir, device=str(device), dtype=resolve_dtype(config.dtype, device))
            before = ckpt.read_lineage(warm_dir)["heldout"]
        else:
            t0 = time.perf_counter()
            model, tok = build_policy(config, suite, device)
            demos = split_tasks(suite, "train", config.sft_families)
            sft_losses = sft(model, tok, demos, config.sft_steps, config.sft_batch, config.sft_lr, config.seed,
                             progress=bar)
            timing["sft"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            handle = PolicyHandle(model, tok, 0, sampling, tokenizer_digest(tok))
            before, _ = evaluate(handle, heldout, config, grader, "warm")
            timing["eval"] += time.perf_counter() - t0
            save_policy(model, tok, warm_dir)
            lineage = _lineage(config, tokenizer_digest(tok), config.model or "config:" + config.model_size, pool)
            lineage.update({"heldout": before, "sft_final_nll": sft_losses[-1] if sft_losses else None,
                            "sft_demonstrations": len(demos)})
            _write_json(os.path.join(warm_dir, "lineage.json"), lineage)
        tok_digest = tokenizer_digest(tok)
        ref_model = copy.deepcopy(model).eval()
        for p in ref_model.parameters():
            p.requires_grad_(False)
        optimizer = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=0.0)
        generator = torch.Generator(device="cpu").manual_seed(config.seed + 1)
        sample_gen = _generator_for(model, config.seed + 1)
        start_step, version = 0, 0
        if resume is not None:
            state = ckpt.load_trainer_state(resume)
            model_r, _ = load_policy(resume, device=str(device), dtype=resolve_dtype(config.dtype, device))
            model.load_state_dict(model_r.state_dict())
            optimizer.load_state_dict(state["optimizer"])
            ckpt.restore_rng(state["rng"], generator)
            ckpt.truncate_to(records_path, state["records_size"])
            ckpt.truncate_to(log.jsonl, state["metrics_size"])
            start_step, version = state["step"] + 1, state["version"]
        else:
            ckpt.truncate_to(records_path, 0)
            ckpt.truncate_to(log.jsonl, 0)
        lineage = _lineage(config, tok_digest, warm_dir, pool)
        rollouts = 0
        stopped = False
        last_eval = dict(before)
        grpo_s = 0.0
        t_mark = time.perf_counter()
        waiting = None  # under overlap: a graded batch whose update runs while the next one is verified

        def evaluates(step: int) -> bool:
            return (step + 1) % config.eval_every == 0 or step + 1 == config.grpo_steps

        def checkpoints(step: int) -> bool:
            return (step + 1) % config.checkpoint_every == 0 or step + 1 == config.grpo_steps

        def update_and_log(step, records, times, retry_s, ref):
            nonlocal version, rollouts, last_eval, t_mark, grpo_s
            admitted = [r for r in records if r.admitted]
            t0 = time.perf_counter()
            diags = grpo_update(model, ref_model, optimizer, admitted, config, tok.pad_token_id, sampling, ref) \
                if admitted else {}
            version += config.passes if admitted else 0
            timing["update"] += time.perf_counter() - t0
            write_records(records_path, records)
            rollouts += len(records)
            step_s = time.perf_counter() - t_mark  # wall time since the previous step was done
            grpo_s += step_s
            row = _step_row(step, version, records, diags, times, step_s, retry_s)
            if evaluates(step):
                t0 = time.perf_counter()
                last_eval, _ = evaluate(PolicyHandle(model, tok, version, sampling, tok_digest), heldout, config,
                                        grader, f"s{step}")
                timing["eval"] += time.perf_counter() - t0
                row.update({f"heldout_{k}": v for k, v in last_eval.items()})
            log.append(row)
            if checkpoints(step):
                t0 = time.perf_counter()
                ckpt.save_checkpoint(config.out_dir, step, model, tok, optimizer, generator, version, records_path,
                                     log.jsonl, lineage)
                timing["checkpoint"] += time.perf_counter() - t0
            if bar is not None:
                bar.update(1)
                bar.set_postfix(reward=f"{row['reward_mean']:.2f}", heldout=f"{last_eval.get('pass1', 0):.2f}")
            t_mark = time.perf_counter()

        for step in range(start_step, config.grpo_steps):
            if config.stop_after_steps is not None and step - start_step >= config.stop_after_steps:
                stopped = True  # as if killed: a batch still waiting for its update is lost with the process
                break
            rng = random.Random(f"{config.seed}:step:{step}")
            tasks = rng.sample(train_tasks, min(config.tasks_per_step, len(train_tasks)))
            handle = PolicyHandle(model, tok, version, sampling, tok_digest)
            gen = sample_gen if sample_gen is not None else generator
            t_collect = time.perf_counter()
            batch = start_collect(handle, tasks, config.group_size, grader, step, gen, config.multi_turn)
            t0 = time.perf_counter()
            ref = reference_logprobs(ref_model, batch.records, sampling, tok.pad_token_id,
                                     config.share_prompt)  # while the verifier is busy
            timing["reference"] += time.perf_counter() - t0
            if waiting is not None:
                update_and_log(*waiting)  # the previous batch, while this one is verified
                waiting = None
            records, times = finish_collect(batch, grader)
            timing["sample"] += times["sample_s"]
            timing["verify"] += times["verify_s"]
            records, retry_s = _apply_closure(records, config, grader, version, by_id)
            for r in records:
                r.age_s = time.perf_counter() - t_collect
            timing["verify"] += retry_s
            if config.overlap and not (evaluates(step) or checkpoints(step)):  # the pipeline drains there
                waiting = (step, records, times, retry_s, ref)
            else:
                update_and_log(step, records, times, retry_s, ref)
        after = last_eval
        if not stopped and config.grpo_steps == 0:
            after = before
        wall = time.perf_counter() - t_start
        result = TrainResult(config.out_dir, before, after, wall, timing, config.grpo_steps, rollouts, log.rows(),
                             stopped, grpo_s)
        if not stopped:
            from rlvr_lab.train.report import write_report

            write_report(result, config, grader)
        return result
    finally:
        if bar is not None:
            bar.close()
        if own_pool:
            pool.close()


def _apply_closure(records: list[RolloutRecord], config: TrainConfig, grader: Grader, trainer_version: int,
                   tasks: dict[str, CodeTask]) -> tuple[list[RolloutRecord], float]:
    """Apply the declared complete-group rule; under ``wait`` resubmit unresolved members first."""
    spent = 0.0
    if config.closure == "wait":
        for _ in range(config.verify_retries):
            todo = [r for r in records if r.reward is None]
            if not todo:
                break
            t0 = time.perf_counter()
            verdicts = grader.grade([(tasks[r.task_id].candidate(r.completion_text), tasks[r.task_id].fixture)
                                     for r in todo])
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


def _step_row(step: int, version: int, records: list[RolloutRecord], diags: dict, times: dict, step_s: float,
              retry_s: float) -> dict:
    resolved = [r.reward for r in records if r.reward is not None]
    row = {"step": step, "policy_version": version, "rollouts": len(records),
           "reward_mean": sum(resolved) / len(resolved) if resolved else float("nan"),
           "unresolved": sum(r.reward is None for r in records),
           "admitted": sum(bool(r.admitted) for r in records),
           "excluded_groups": len({r.group_id for r in records if r.admitted is False}),
           "stop_length": sum(r.stop_reason == "length" for r in records),
           "step_s": step_s, "sample_s": times["sample_s"], "verify_s": times["verify_s"] + retry_s,
           "verifier_share": (times["verify_s"] + retry_s) / step_s if step_s > 0 else 0.0}
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
    import json

    with open(path, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2, sort_keys=True, default=str)
