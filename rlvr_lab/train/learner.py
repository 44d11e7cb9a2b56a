"""The learner's side of a GRPO step (17.5, 17.9.6): the policy, one update, held-out evaluation.

:func:`make_batch` turns admitted records into a :class:`GRPOBatch` with group advantages (eq 2);
:func:`grpo_update` runs ``passes`` steps of the clipped, KL-penalised GRPO loss (eqs 4-5) on it and
changes the :class:`Learner` (weights, optimizer, policy version); :func:`evaluate` measures held-out
pass@1 and pass@k with a fixed sampling seed.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from types import SimpleNamespace

import torch

from rlvr_lab import grpo
from rlvr_lab.policy import SamplingConfig, build_model, completion_logprobs, load_policy, shared_prefix_logprobs
from rlvr_lab.records import RolloutRecord, flatten
from rlvr_lab.tasks import CodeTask
from rlvr_lab.train.config import TrainConfig
from rlvr_lab.train.lora import reference_view
from rlvr_lab.train.metrics import pass_at_k_summary, per_family_pass1
from rlvr_lab.train.precision import Precision, resolve_precision, weight_dtype
from rlvr_lab.train.prompting import PromptFormat
from rlvr_lab.train.rollout import PolicyHandle, VerdictCache, collect
from rlvr_lab.train.run import Run


def build_policy(config: TrainConfig, suite: list[CodeTask], device: torch.device):
    """(model, tokenizer): loaded from ``config.model`` or built from a config with a BPE tokenizer.

    The weights are float32 whatever ``config.dtype`` says: they are the optimizer's master copy, and the
    forward passes run in the compute dtype under autocast (:mod:`~rlvr_lab.train.precision`); only a
    LoRA run's frozen base may be 16-bit (:func:`~rlvr_lab.train.precision.weight_dtype`)."""
    from rlvr_lab.policy import train_tokenizer

    if config.model:
        model, tok = load_policy(
            config.model, device=str(device), dtype=weight_dtype(config, resolve_precision(config.dtype, device))
        )
        return model, tok
    corpus = [t.prompt + t.solution for t in suite if t.split == "train"]
    tok = train_tokenizer(corpus, config.vocab_size)
    model = build_model(tok, config.model_size, seed=config.seed).to(device=device, dtype=torch.float32)
    return model, tok


@dataclass
class Learner:
    """The state a GRPO update changes: weights, optimizer and policy version, with the frozen reference
    and the sampling generators."""

    model: torch.nn.Module
    tok: object
    """The tokenizer (its ``pad_token_id`` pads a batch)."""
    ref_model: torch.nn.Module | None
    """The frozen reference policy pi_ref of the KL term; None with LoRA (``model`` with its adapters off)."""
    optimizer: torch.optim.Optimizer
    generator: torch.Generator | None = None
    """CPU generator of the training samples (checkpointed with the run)."""
    sample_gen: torch.Generator | None = None
    """The same seed on the model's device when that is not the CPU (None on the CPU)."""
    tok_digest: str = ""
    version: int = 0
    """Policy version: optimizer steps taken so far (stamped on every sampled rollout)."""
    fmt: PromptFormat = PromptFormat()
    """Chat template or plain prompt, stop strings, end tokens."""
    precision: Precision = Precision()
    """Compute dtype of the forward passes (the weights stay float32)."""
    scaler: torch.amp.GradScaler | None = None
    """Loss scaler of float16 compute (None or disabled otherwise)."""

    def handle(self, run: Run) -> PolicyHandle:
        """The current weights as the sampler sees them (version-stamped)."""
        return PolicyHandle(self.model, self.tok, self.version, run.sampling, self.tok_digest, self.fmt, self.precision)

    def reference(
        self, records: list[RolloutRecord], sampling: SamplingConfig, share_prompt: bool = True
    ) -> dict[str, torch.Tensor]:
        """:func:`reference_logprobs` of ``records`` under pi_ref (the frozen copy, or the LoRA model with its
        adapters off), in the run's compute dtype."""
        model = self.model if self.ref_model is None else self.ref_model
        with reference_view(model), self.precision.autocast():
            return reference_logprobs(model, records, sampling, self.tok.pad_token_id, share_prompt)


@dataclass
class GRPOBatch:
    """One update's rollouts, a group's members consecutive. B rollouts; T the longest token sequence."""

    records: list[RolloutRecord]
    """The B admitted rollout records."""
    ids: list[list[int]]
    """Token ids of each rollout (prompt, sampled tokens, observations): B lists, at most T long."""
    score_mask: list[list[int]]
    """Per token of ``ids``: 1 if the policy sampled it (counts toward |o_i|), 0 for context."""
    prefix_lens: list[int]
    """Length of each rollout's first prompt (a group's shared prefix, scored once)."""
    rewards: torch.Tensor
    """(B,) verifier reward r_i."""
    advantages: torch.Tensor
    """(B,) group-relative advantage A_i (eq 2)."""
    old_logp: torch.Tensor
    """(B, T-1) behaviour log-probs log pi_old of the sampled tokens, as recorded when sampled (0 elsewhere)."""
    ref_logp: torch.Tensor
    """(B, T-1) log-probs of the same tokens under the frozen reference pi_ref (0 elsewhere)."""


def score(
    model,
    ids: list[list[int]],
    score_mask: list[list[int]],
    prefix_lens: list[int],
    sampling: SamplingConfig,
    pad_id: int,
    share_prompt: bool,
):
    """Per-token log-probs of token sequences under ``model``; ``(logp, mask, logits, logits_mask)``.

    logp and mask have shape (B, T-1) as :func:`~rlvr_lab.policy.completion_logprobs` (gradients flow);
    logits come with their score mask for the entropy. With ``share_prompt`` a group's common prompt runs
    through the model once (:func:`~rlvr_lab.policy.shared_prefix_logprobs`, equal up to float rounding).
    """
    if share_prompt:
        return shared_prefix_logprobs(model, ids, score_mask, prefix_lens, sampling, pad_id)
    logp, mask, logits = completion_logprobs(model, ids, score_mask, sampling, pad_id, with_logits=True)
    return logp, mask, logits, mask


def reference_logprobs(
    ref_model, records: list[RolloutRecord], sampling: SamplingConfig, pad_id: int, share_prompt: bool = True
) -> dict[str, torch.Tensor]:
    """Log-probs of every record's tokens under the frozen reference model, keyed by rollout id.

    Each value has shape (len(ids) - 1,), aligned like :func:`~rlvr_lab.policy.completion_logprobs`
    (context positions are 0). They need no verdict, so the trainer computes them while the verifier runs.
    """
    if not records:
        return {}
    ids, score_mask, _ = zip(*(flatten(r) for r in records))
    prefix_lens = [len(r.invocations[0].prefix_ids) for r in records]
    with torch.no_grad():
        logp, *_ = score(ref_model, list(ids), list(score_mask), prefix_lens, sampling, pad_id, share_prompt)
    return {r.rollout_id: logp[i, : len(seq) - 1].float() for i, (r, seq) in enumerate(zip(records, ids))}


def make_batch(
    learner: Learner,
    records: list[RolloutRecord],
    config: TrainConfig,
    sampling: SamplingConfig,
    ref: dict[str, torch.Tensor] | None = None,
) -> GRPOBatch:
    """The :class:`GRPOBatch` of admitted ``records``: grouped, with each group's advantages (eq 2).

    ``ref`` holds the reference log-probs of :func:`reference_logprobs` when they were computed ahead
    (while the verifier ran); without it they are computed here.
    """
    groups: dict[str, list[RolloutRecord]] = {}
    for r in records:
        groups.setdefault(r.group_id, []).append(r)
    order = [m for members in groups.values() for m in members]
    # one (groups, G) array, so that scale="batch" takes one std over the whole batch (groups are complete)
    rewards = [[m.reward for m in members] for members in groups.values()]
    advantages = [
        float(a) for row in grpo.group_advantages(rewards, eps=1e-8, std=config.std, scale=config.scale) for a in row
    ]
    ids, score_mask, behaviour = (list(column) for column in zip(*(flatten(m) for m in order)))
    device = next(learner.model.parameters()).device
    width = max(len(seq) for seq in ids)
    old_logp = torch.tensor([lp + [0.0] * (width - len(lp)) for lp in behaviour], dtype=torch.float32, device=device)[
        :, 1:
    ]
    if ref is None:
        ref = learner.reference(order, sampling, config.share_prompt)
    ref_logp = torch.zeros((len(order), width - 1), dtype=torch.float32, device=device)
    for i, m in enumerate(order):
        ref_logp[i, : ref[m.rollout_id].shape[0]] = ref[m.rollout_id].to(device)
    return GRPOBatch(
        order,
        ids,
        score_mask,
        [len(m.invocations[0].prefix_ids) for m in order],
        torch.tensor([m.reward for m in order], dtype=torch.float32, device=device),
        torch.tensor(advantages, dtype=torch.float32, device=device),
        old_logp,
        ref_logp,
    )


def grpo_update(
    learner: Learner, batch: GRPOBatch, config: TrainConfig, sampling: SamplingConfig, *loose, ref=None
) -> dict:
    """``passes`` optimizer steps of the GRPO loss on ``batch`` (17.5); returns diagnostics as floats.

    Each pass: log-probs of the sampled tokens under the current weights -> token ratios against the
    behaviour log-probs -> clipped surrogate with the batch's advantages and k3 KL to the reference
    (eqs 4-5, :func:`rlvr_lab.grpo.grpo_loss`) -> loss -> gradient -> optimizer step. The learner's
    version advances by ``passes``. (The 0.1 form ``grpo_update(model, ref_model, optimizer, records,
    config, pad_id, sampling, ref)`` still works, with a DeprecationWarning, until 0.2.)
    """
    if isinstance(learner, torch.nn.Module):
        return _loose_grpo_update(learner, batch, config, sampling, *loose, ref=ref)
    model, pad_id = learner.model, learner.tok.pad_token_id
    constant = None
    if config.norm == "constant":
        constant = float(config.norm_constant or config.max_new_tokens * (2 if config.multi_turn else 1))
    diags: dict = {}  # 0-dim tensors until the end: one device sync per update, not one per statistic
    # Rows sampled by the weights held now: at pass 0 their recomputed log-probs must replay the recorded ones.
    fresh = torch.tensor([r.policy_version == learner.version for r in batch.records], device=batch.old_logp.device)
    model.eval()  # never train mode here: dropout would make the numerator a different function (score())
    scaler = learner.scaler if learner.scaler is not None and learner.scaler.is_enabled() else None
    params = [q for q in model.parameters() if q.requires_grad]
    rows = len(batch.records)
    size = min(config.micro_batch or rows, rows)
    tokens = [sum(m) for m in batch.score_mask]  # per row; norm="token" weighs a micro-batch by its tokens
    for p in range(config.passes):
        learner.optimizer.zero_grad(set_to_none=True)
        parts = []
        for start in range(0, rows, size):  # micro-batches: the loss is a mean over rows, so weight by rows
            rs = slice(start, start + size)
            with learner.precision.autocast():
                logp, mask, logits, logits_mask = score(
                    model,
                    batch.ids[rs],
                    batch.score_mask[rs],
                    batch.prefix_lens[rs],
                    sampling,
                    pad_id,
                    config.share_prompt,
                )
            width = logp.shape[1]
            old_logp = batch.old_logp[rs, :width]
            if p == 0 and bool(fresh[rs].any()):
                dev = ((logp.detach() - old_logp).abs() * mask)[fresh[rs]].max()
                diags["replay_max_dev"] = torch.maximum(diags.get("replay_max_dev", dev), dev)
                check_replay(float(dev), replay_limit(config.replay_bound, learner.precision))
            loss, stats = grpo.grpo_loss(
                logp,
                old_logp,
                batch.ref_logp[rs, :width],
                batch.advantages[rs],
                mask,
                config.eps_low,
                config.eps_high,
                config.beta,
                norm=config.norm,
                constant=constant,
                checked=False,
            )
            if not torch.isfinite(loss):  # the one check kept per pass: a NaN must never reach the weights
                raise FloatingPointError(f"GRPO loss is not finite ({float(loss)}) at pass {p}")
            if size < rows:  # the loss is a mean over rows (over tokens with norm="token"): weigh it so
                share = sum(tokens[rs]) / sum(tokens) if config.norm == "token" else len(batch.ids[rs]) / rows
                loss = loss * share
            (loss if scaler is None else scaler.scale(loss)).backward()
            if p == 0:
                with torch.no_grad():
                    stats["entropy"] = grpo.token_entropy(logits.float() / sampling.temperature, logits_mask)
            parts.append((loss.detach(), stats))
        loss, stats = parts[0] if len(parts) == 1 else _combine(parts)
        if scaler is None:
            grad_norm = torch.nn.utils.clip_grad_norm_(params, config.max_grad_norm)
            learner.optimizer.step()
        else:  # float16: the loss was scaled so small gradients survive; unscale before the clip
            scaler.unscale_(learner.optimizer)
            grad_norm = torch.nn.utils.clip_grad_norm_(params, config.max_grad_norm)
            scaler.step(learner.optimizer)  # skipped when a gradient is inf/NaN; the scale then drops
            scaler.update()
        if p == 0:
            diags["entropy"] = stats.pop("entropy")
        for k, v in stats.items():
            diags[k if p == config.passes - 1 else f"{k}_pass{p}"] = v
        diags["loss"] = loss.detach()
        diags["grad_norm"] = grad_norm
    model.eval()
    learner.version += config.passes
    diags = {k: _scalar(v) for k, v in diags.items()}
    diags["scored_tokens"] = float(sum(sum(m) for m in batch.score_mask))
    return diags


#: Smallest replay bound under 16-bit compute: sampling (one token at a time, with a cache) and scoring (whole
#: sequences) round differently in bfloat16/float16 (measured on the CPU with the tiny model: 2.4e-4 nats in
#: bfloat16, 9.8e-4 in float16; GPU kernels differ more), while dropout 0.1 moves log-probs by ~0.5 nats.
REPLAY_FLOOR_16BIT = 0.05


def replay_limit(bound: float, precision: Precision) -> float:
    """The replay bound in force: ``bound`` in float32, at least :data:`REPLAY_FLOOR_16BIT` in 16-bit compute.

    >>> replay_limit(1e-3, Precision("float32")), replay_limit(1e-3, Precision("bfloat16"))
    (0.001, 0.05)
    """
    return bound if precision.dtype == "float32" else max(bound, REPLAY_FLOOR_16BIT)


def _combine(parts: list) -> tuple[torch.Tensor, dict]:
    """One pass's loss (the sum of the row-weighted micro-batch losses) and its statistics: token means
    weighted by each micro-batch's tokens, the token count summed."""
    tokens = torch.stack([stats["tokens"] for _, stats in parts])
    combined = {}
    for key in parts[0][1]:
        values = torch.stack([stats[key].double() for _, stats in parts])
        combined[key] = values.sum() if key == "tokens" else (values * tokens).sum() / tokens.sum().clamp(min=1)
    return torch.stack([loss for loss, _ in parts]).sum(), combined


class ReplayMismatch(RuntimeError):
    """The update's log-probs of freshly sampled tokens differ from the recorded ones by more than the bound."""


def check_replay(deviation: float, bound: float) -> None:
    """Raise :class:`ReplayMismatch` naming the likely causes when ``deviation`` (nats) exceeds ``bound``.

    >>> check_replay(2e-6, 1e-3)
    >>> check_replay(0.8, 1e-3)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    rlvr_lab.train.learner.ReplayMismatch: replay deviation 0.8 nats > replay_bound 0.001: ...
    """
    if not deviation <= bound:  # NaN trips it too
        raise ReplayMismatch(
            f"replay deviation {deviation:.3g} nats > replay_bound {bound:.3g}: the update scores the sampled "
            "tokens with a different function than sampling did (dropout or another train-mode layer on in "
            "the gradient pass? a model whose forward depends on torch.is_grad_enabled()? a changed tokenizer "
            "or sampling config?), so every ratio pi_theta/pi_old would be noise. Fix the cause, or raise "
            "replay_bound if a 16-bit dtype's rounding alone explains it"
        )


def _loose_grpo_update(
    model,
    ref_model,
    optimizer,
    records: list[RolloutRecord],
    config: TrainConfig,
    pad_id: int,
    sampling: SamplingConfig,
    ref: dict[str, torch.Tensor] | None = None,
) -> dict:
    """The 0.1 loose-argument form of :func:`grpo_update`, until 0.2."""
    warnings.warn(
        "grpo_update(model, ref_model, optimizer, records, config, pad_id, sampling) is now "
        "grpo_update(learner, make_batch(learner, records, config, sampling), config, sampling); "
        "the loose form goes in 0.2",
        DeprecationWarning,
        stacklevel=3,
    )
    learner = Learner(model, SimpleNamespace(pad_token_id=pad_id), ref_model, optimizer)  # float32, no LoRA
    return grpo_update(learner, make_batch(learner, records, config, sampling, ref), config, sampling)


def _scalar(value):
    if isinstance(value, torch.Tensor):
        return value.detach().float().tolist() if value.numel() > 1 else float(value)
    return value


def evaluate(
    policy: PolicyHandle, tasks: list[CodeTask], config: TrainConfig, grader: VerdictCache, label: str
) -> tuple[dict, list[RolloutRecord]]:
    """Held-out pass@1 / pass@k with ``eval_samples`` samples per task and a fixed seed (17.9.6)."""
    gen = torch.Generator(device="cpu").manual_seed(config.eval_seed)
    device_gen = generator_for(policy.model, config.eval_seed) or gen
    records: list[RolloutRecord] = []
    chunk = max(1, 128 // config.eval_samples)
    for i in range(0, len(tasks), chunk):
        recs, _ = collect(
            policy,
            tasks[i : i + chunk],
            config.eval_samples,
            grader,
            step=i // chunk,
            generator=device_gen,
            multi_turn=config.multi_turn,
            id_prefix=f"eval-{label}-",
        )
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
