"""Supervised warm start on demonstrations: the chapter's ``trained_policy_v1`` (section 17.10).

The warm start imitates reference solutions of training tasks from some families. Only the demonstration's
completion tokens (and its ``<eos>``) carry loss; the prompt is context. The aim is a policy whose held-out
pass@1 is above zero and well below one, so that GRPO groups have contrast (17.5.4).
"""

from __future__ import annotations

import random

import torch

from rlvr_lab.policy import pad_batch
from rlvr_lab.tasks import CodeTask
from rlvr_lab.train.precision import Precision
from rlvr_lab.train.prompting import PromptFormat, prompt_text


def demonstration(tokenizer, task: CodeTask, fmt: PromptFormat = PromptFormat()) -> tuple[list[int], list[int]]:
    """(token ids, loss mask) of ``<bos>`` prompt completion ``<eos>``; prompt and completion are tokenized
    separately, exactly as sampling sees them. With a chat template the prompt is the user turn and the
    completion is the reply sampling expects: the whole function in a code block, then the end of turn.

    >>> from rlvr_lab.policy import train_tokenizer
    >>> from rlvr_lab.tasks import make_suite
    >>> t = make_suite(problems_per_family=1)[0]
    >>> tok = train_tokenizer([t.prompt + t.solution] * 5, vocab_size=280)
    >>> ids, mask = demonstration(tok, t)
    >>> ids[-1] == tok.eos_token_id and mask[-1] == 1 and mask[0] == 0
    True
    """
    if not task.solution:
        raise ValueError(f"task {task.task_id!r} has no demonstration (solution is empty)")
    from rlvr_lab.train.rollout import prompt_ids

    prompt = prompt_ids(tokenizer, prompt_text(tokenizer, task, fmt), bos=not fmt.chat)
    code = task.prompt + task.solution if task.keep_prompt else task.solution
    reply = f"```python\n{code}```" if fmt.chat else task.solution
    body = tokenizer(reply, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
    return prompt + body, [0] * len(prompt) + [1] * len(body)


def sft(
    model,
    tokenizer,
    tasks: list[CodeTask],
    steps: int,
    batch: int,
    lr: float,
    seed: int,
    progress=None,
    fmt: PromptFormat = PromptFormat(),
    precision: Precision = Precision(),
) -> list[float]:
    """Train on demonstrations for ``steps`` AdamW steps; returns the per-step mean token NLL (nats).

    Batches are drawn with a seeded shuffle; the learning rate decays linearly to 10 % of ``lr``. The
    forward pass runs in ``precision``'s compute dtype (float32 weights; float16 with loss scaling).
    """
    if steps and not tasks:
        raise ValueError("tasks must hold at least one demonstration when steps > 0")
    demos = [demonstration(tokenizer, t, fmt) for t in tasks]
    return sft_sequences(model, tokenizer, demos, steps, batch, lr, seed, progress, precision)


def sft_sequences(
    model,
    tokenizer,
    demos: list[tuple[list[int], list[int]]],
    steps: int,
    batch: int,
    lr: float,
    seed: int,
    progress=None,
    precision: Precision = Precision(),
) -> list[float]:
    """:func:`sft` on demonstrations given as (token ids, loss mask) pairs: a single-turn task's, or a whole
    episode's, where only the policy's own tokens carry loss (the observations are context)."""
    if steps < 0 or batch < 1:
        raise ValueError(f"steps must be >= 0 and batch >= 1, got steps={steps}, batch={batch}")
    if steps and not demos:
        raise ValueError("demos must hold at least one demonstration when steps > 0")
    device = next(model.parameters()).device
    scaler = precision.scaler()
    rng = random.Random(f"sft:{seed}")
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0 - 0.9 * s / max(steps, 1))
    model.train()
    losses, order = [], []
    for _ in range(steps):
        if len(order) < batch:
            fresh = list(range(len(demos)))
            rng.shuffle(fresh)
            order += fresh
        chosen, order = order[:batch], order[batch:]
        ids, attn = pad_batch([demos[i][0] for i in chosen], tokenizer.pad_token_id)
        mask, _ = pad_batch([demos[i][1] for i in chosen], 0)
        ids, attn, mask = ids.to(device), attn.to(device), mask.to(device)
        with precision.autocast():
            logits = model(input_ids=ids, attention_mask=attn).logits[:, :-1].float()
        nll = torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1), reduction="none"
        ).view(ids.shape[0], -1)
        m = mask[:, 1:].float()
        loss = (nll * m).sum() / m.sum()
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()  # a disabled scaler (not float16) leaves the loss as it is
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        sched.step()
        losses.append(loss.item())
        if progress is not None:
            progress.update(1)
            progress.set_postfix(sft_nll=f"{losses[-1]:.3f}")
    model.eval()
    return losses
