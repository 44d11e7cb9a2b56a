"""The learner's side of a GRPO step: the policy, scoring, the update and evaluation (17.5, 17.9.6).

:func:`build_policy` makes the tiny code model (or loads ``config.model``); :func:`reference_logprobs`
scores a batch under the frozen reference while the verifier works; :func:`grpo_update` turns admitted
records into group advantages (eq 2) and ``passes`` optimizer steps of the clipped, length-normalised GRPO
loss (eqs 4-5) against the recorded behaviour log-probs, on the lean :func:`rlvr_lab.grpo.grpo_loss_fast`
(same loss as the checked API, no per-call checks or quantiles, statistics synced once per update); :func:`evaluate` measures held-out pass@1 and
pass@k with a fixed sampling seed.
"""

from __future__ import annotations

import torch

from rlvr_lab.policy import SamplingConfig, build_model, completion_logprobs, load_policy, shared_prefix_logprobs
from rlvr_lab.records import RolloutRecord, flatten
from rlvr_lab.tasks import CodeTask
from rlvr_lab.train.config import TrainConfig
from rlvr_lab.train.metrics import pass_at_k_summary, per_family_pass1
from rlvr_lab.train.rollout import Grader, PolicyHandle, collect
from rlvr_lab.train.run import resolve_dtype


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
    constant = None
    if config.norm == "constant":
        constant = float(config.norm_constant or config.max_new_tokens * turns)
    diags: dict = {}  # 0-dim tensors until the end: one device sync per update, not one per statistic
    model.train()
    for p in range(config.passes):
        logp, mask, logits, logits_mask = score(model, flat, prefix, sampling, pad_id, config.share_prompt)
        loss, d = grpo.grpo_loss_fast(logp, old, ref_logp.float(), adv_t, mask, config.eps_low, config.eps_high,
                                      config.beta, norm=config.norm, constant=constant)
        if not torch.isfinite(loss):  # the one check kept per pass: a NaN must never reach the weights
            raise FloatingPointError(f"GRPO loss is not finite ({float(loss)}) at pass {p}")
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), config.max_grad_norm)
        optimizer.step()
        if p == 0:
            with torch.no_grad():
                diags["entropy"] = grpo.token_entropy(logits.float() / sampling.temperature, logits_mask)
                diags["replay_max_dev"] = ((logp.detach() - old).abs() * mask).max()
        for k, v in d.items():
            diags[f"{k}" if p == config.passes - 1 else f"{k}_pass{p}"] = v
        diags["loss"] = loss.detach()
        diags["grad_norm"] = grad_norm
    model.eval()
    diags = {k: _scalar(v) for k, v in diags.items()}
    diags["scored_tokens"] = float(sum(sum(f[1]) for f in flat))
    return diags


def _scalar(value):
    if isinstance(value, torch.Tensor):
        return value.detach().float().tolist() if value.numel() > 1 else float(value)
    return value


def evaluate(policy: PolicyHandle, tasks: list[CodeTask], config: TrainConfig, grader: Grader,
             label: str) -> tuple[dict, list[RolloutRecord]]:
    """Held-out pass@1 / pass@k with ``eval_samples`` samples per task and a fixed seed (17.9.6)."""
    gen = torch.Generator(device="cpu").manual_seed(config.eval_seed)
    device_gen = generator_for(policy.model, config.eval_seed) or gen
    records: list[RolloutRecord] = []
    chunk = max(1, 128 // config.eval_samples)
    for i in range(0, len(tasks), chunk):
        recs, _ = collect(policy, tasks[i:i + chunk], config.eval_samples, grader, step=i // chunk,
                          generator=device_gen, multi_turn=config.multi_turn, id_prefix=f"eval-{label}-")
        records += recs
    summary = pass_at_k_summary(records, config.eval_k)
    summary.update(per_family_pass1(records))
    return summary, records


def generator_for(model, seed: int) -> torch.Generator | None:
    """A generator on the model's device seeded with ``seed``; None on the CPU (the caller's CPU one)."""
    device = next(model.parameters()).device
    if device.type == "cpu":
        return None
    return torch.Generator(device=device).manual_seed(seed)
