"""The tiny policy: tokenizer, causal LM, and sampling that records behaviour log-probs (17.2, 17.5.2, 17.6.2).

The tokenizer is a byte-level BPE trained with ``tokenizers`` on the task corpus and wrapped as a
``PreTrainedTokenizerFast``; the model is a small ``LlamaForCausalLM`` built from a config, so nothing is
downloaded. :func:`load_policy` accepts any local directory or hub id, so a Colab user can swap in a small
pretrained code model.

Sampling (:func:`sample`) applies temperature, then top-k, then top-p, renormalises, draws a token, and records
that token's log-probability under the transformed distribution it was actually drawn from: the denominator
``pi_old`` of the token ratio (section 17.5.2). :func:`completion_logprobs` recomputes the same quantity from
recorded token ids for the trainer's numerator and for the replay check. The trainer's transformed
distribution always keeps the recorded token in its support, so a ratio is never 0/positive by truncation.
"""

from __future__ import annotations

import functools
import math
from dataclasses import asdict, dataclass
from collections.abc import Iterable

import torch

from rlvr_lab.scoring_mode import scored

PAD, BOS, EOS = "<pad>", "<bos>", "<eos>"

#: Model sizes built from a config: name -> LlamaConfig keyword arguments.
MODEL_SIZES = {
    "tiny": dict(
        hidden_size=64, intermediate_size=192, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4
    ),
    "small": dict(
        hidden_size=128, intermediate_size=384, num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=4
    ),
    "base": dict(
        hidden_size=256, intermediate_size=768, num_hidden_layers=4, num_attention_heads=8, num_key_value_heads=8
    ),
}


@dataclass(frozen=True)
class SamplingConfig:
    """Decoding configuration; recorded with every rollout because it defines ``pi_old`` (17.6.2)."""

    temperature: float = 1.0
    """Logits are divided by this (> 0) before softmax."""
    top_k: int = 0
    """Keep only the k most likely tokens (0 keeps all)."""
    top_p: float = 1.0
    """Keep the smallest set of most likely tokens whose mass reaches p, in (0, 1] (1 keeps all)."""
    max_new_tokens: int = 32
    """Token budget per invocation; hitting it is stop reason ``length`` (a task failure, 17.6.3)."""

    def __post_init__(self) -> None:
        if not self.temperature > 0:
            raise ValueError(f"temperature must be > 0, got {self.temperature}")
        if self.top_k < 0:
            raise ValueError(f"top_k must be >= 0 (0 = off), got {self.top_k}")
        if not 0.0 < self.top_p <= 1.0:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")
        if self.max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be >= 1, got {self.max_new_tokens}")

    def to_dict(self) -> dict:
        """Plain dict for records."""
        return asdict(self)


@dataclass
class Sample:
    """One sampled completion of one prompt."""

    prompt_ids: list[int]
    """The exact delivered prefix (token ids)."""
    completion_ids: list[int]
    """Sampled token ids, including the final ``<eos>`` when the policy chose to stop."""
    behaviour_logprobs: list[float]
    """Per sampled token: log-prob under the transformed distribution it was drawn from (nats)."""
    stop_reason: str
    """``eos`` (the policy stopped) or ``length`` (the budget ran out)."""


def train_tokenizer(corpus: Iterable[str], vocab_size: int = 384):
    """Train a byte-level BPE on ``corpus`` and wrap it as a ``PreTrainedTokenizerFast`` (17.6.1).

    >>> tok = train_tokenizer(["def f(x):\\n    return x + 1\\n"] * 20, vocab_size=300)
    >>> tok.decode(tok("return x")["input_ids"])
    'return x'
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    if vocab_size < 260:
        raise ValueError(f"vocab_size must be >= 260 (256 bytes + specials), got {vocab_size}")
    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tk.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[PAD, BOS, EOS],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tk.train_from_iterator(list(corpus), trainer=trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tk, pad_token=PAD, bos_token=BOS, eos_token=EOS, clean_up_tokenization_spaces=False
    )


def build_model(tokenizer, size: str = "small", seed: int = 0, max_positions: int = 512):
    """A randomly initialised ``LlamaForCausalLM`` of a named size (:data:`MODEL_SIZES`), nothing downloaded.

    >>> tok = train_tokenizer(["abc def"] * 5, vocab_size=270)
    >>> m = build_model(tok, "tiny")
    >>> m.config.vocab_size == len(tok)
    True
    """
    from transformers import LlamaConfig, LlamaForCausalLM

    if size not in MODEL_SIZES:
        raise ValueError(f"size must be one of {sorted(MODEL_SIZES)}, got {size!r}")
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        max_position_embeddings=max_positions,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        tie_word_embeddings=True,
        attn_implementation="eager",
        **MODEL_SIZES[size],
    )
    torch.manual_seed(seed)
    return LlamaForCausalLM(config)


def save_policy(model, tokenizer, path: str) -> None:
    """``save_pretrained`` both halves into one directory (a hub-style model folder).

    >>> import tempfile
    >>> tok = train_tokenizer(["abc def"] * 5, vocab_size=270)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     save_policy(build_model(tok, "tiny"), tok, d)
    ...     m, t = load_policy(d)
    >>> len(t) == len(tok)
    True
    """
    from transformers.utils import logging as hf_logging

    shown = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # a per-checkpoint "Writing model shards" bar would break the run's bar
    try:
        model.save_pretrained(path)
        tokenizer.save_pretrained(path)
    finally:
        if shown:
            hf_logging.enable_progress_bar()


def load_policy(name_or_path: str, device: str = "cpu", dtype: torch.dtype | None = None):
    """Load (model, tokenizer) from a local directory or a hub id (``from_pretrained``; offline in tests).

    A tokenizer without a pad token gets its eos token as pad.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(name_or_path)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    kwargs = {"dtype": dtype} if dtype is not None else {}
    model = AutoModelForCausalLM.from_pretrained(name_or_path, **kwargs).to(device)
    return model, tokenizer


def transformed_logprobs(logits: torch.Tensor, cfg: SamplingConfig, keep: torch.Tensor | None = None) -> torch.Tensor:
    """Log-probs of the sampling distribution: temperature, top-k, top-p, renormalised (17.6.2).

    ``logits`` has shape (..., V). Tokens outside the kept set get -inf. ``keep`` (shape (...), token ids)
    forces those tokens into the support; the trainer passes the recorded token so its numerator is finite.

    >>> lp = transformed_logprobs(torch.tensor([2.0, 1.0, 0.0]), SamplingConfig(top_k=2))
    >>> round(float(lp.exp().sum()), 6), bool(torch.isinf(lp[2]))
    (1.0, True)
    """
    scaled = logits.float() / cfg.temperature
    if cfg.top_k == 0 and cfg.top_p >= 1.0:
        return torch.log_softmax(scaled, dim=-1)
    remove = torch.zeros_like(scaled, dtype=torch.bool)
    if cfg.top_k > 0 and cfg.top_k < scaled.shape[-1]:
        kth = torch.topk(scaled, cfg.top_k, dim=-1).values[..., -1:]
        remove |= scaled < kth
    if cfg.top_p < 1.0:
        masked = scaled.masked_fill(remove, -math.inf)
        sorted_logits, order = torch.sort(masked, dim=-1, descending=True)
        probs = torch.softmax(sorted_logits, dim=-1)
        mass_before = torch.cumsum(probs, dim=-1) - probs
        drop_sorted = mass_before >= cfg.top_p
        remove |= torch.zeros_like(remove).scatter(-1, order, drop_sorted)
    if keep is not None:
        remove = remove.scatter(-1, keep.unsqueeze(-1), False)
    return torch.log_softmax(scaled.masked_fill(remove, -math.inf), dim=-1)


def _cache_keyword(model) -> str:
    """transformers >= 5.2x names the KV cache argument ``cache``; older releases ``past_key_values``."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model  # a peft model: its base's
    return _cache_keyword_of(type(base))


@functools.cache
def _cache_keyword_of(model_class) -> str:
    import inspect

    params = inspect.signature(model_class.forward).parameters
    return "cache" if "cache" in params else "past_key_values"


def _cache_of(output):
    cache = getattr(output, "cache", None)
    return cache if cache is not None else output.past_key_values


@torch.no_grad()
@scored
def sample(
    model,
    prompts: list[list[int]],
    cfg: SamplingConfig,
    eos_id: int,
    pad_id: int,
    generator: torch.Generator | None = None,
    stop_ids: tuple[int, ...] = (),
    stop_strings: tuple[str, ...] = (),
    decode=None,
) -> list[Sample]:
    """Sample one completion per prompt with a KV cache, recording behaviour log-probs (17.5.2).

    Prompts of unequal length are left-padded; position ids skip the padding. Repeated prompts (a GRPO
    group) are prefilled once and their key/value cache copied to each row. Finished rows keep running
    on ``pad`` but record nothing. A row also ends at a token of ``stop_ids`` (stop reason ``eos``, as at
    ``eos_id``) or once ``decode`` of its last tokens contains one of ``stop_strings`` (stop reason
    ``stop``; the tokens up to it stay recorded). Returns one :class:`Sample` per prompt, in order.

    >>> tok = train_tokenizer(["abc def"] * 5, vocab_size=270)
    >>> m = build_model(tok, "tiny")
    >>> out = sample(m, [[1, 5, 6], [1, 7]], SamplingConfig(max_new_tokens=4), tok.eos_token_id, tok.pad_token_id)
    >>> [len(s.completion_ids) == len(s.behaviour_logprobs) for s in out]
    [True, True]
    """
    if not prompts or any(len(p) == 0 for p in prompts):
        raise ValueError("prompts must be a non-empty list of non-empty token id lists")
    if stop_strings and decode is None:
        raise ValueError("stop_strings need decode (the tokenizer's decode) to be read")
    ends = (eos_id, *stop_ids)
    device = next(model.parameters()).device
    n = len(prompts)
    width = max(len(p) for p in prompts)
    distinct: dict[tuple[int, ...], int] = {}  # a GRPO group repeats its prompt G times: prefill it once
    owner = torch.tensor([distinct.setdefault(tuple(p), len(distinct)) for p in prompts], device=device)
    ids = torch.full((len(distinct), width), pad_id, dtype=torch.long)
    attn = torch.zeros((len(distinct), width), dtype=torch.long)
    for i, p in enumerate(distinct):
        ids[i, width - len(p) :] = torch.tensor(p)
        attn[i, width - len(p) :] = 1
    ids, attn = ids.to(device), attn.to(device)
    positions = (attn.cumsum(-1) - 1).clamp(min=0)
    cache_arg = _cache_keyword(model)
    out = model(input_ids=ids, attention_mask=attn, position_ids=positions, use_cache=True)
    cache = _cache_of(out)
    cache.batch_select_indices(owner)  # one copy of the prompt's keys and values per row from here on
    logits = out.logits[owner, -1, :]
    attn, positions = attn[owner], positions[owner]
    next_pos = positions[:, -1] + 1
    done = torch.zeros(n, dtype=torch.bool, device=device)
    toks: list[list[int]] = [[] for _ in range(n)]
    lps: list[list[float]] = [[] for _ in range(n)]
    stopped = [False] * n
    end_ids = torch.tensor(ends, device=device)
    window = 1 + max((len(s) for s in stop_strings), default=0)  # tokens enough to hold any stop string
    for _ in range(cfg.max_new_tokens):
        logp = transformed_logprobs(logits, cfg)
        choice = torch.multinomial(logp.exp(), 1, generator=generator).squeeze(-1)
        chosen_lp = logp.gather(-1, choice.unsqueeze(-1)).squeeze(-1)
        ids_now, lps_now, done_now = choice.tolist(), chosen_lp.tolist(), done.tolist()  # one device sync
        for i in range(n):
            if not done_now[i]:
                toks[i].append(ids_now[i])
                lps[i].append(lps_now[i])
                if stop_strings and any(stop in decode(toks[i][-window:]) for stop in stop_strings):
                    stopped[i] = True
        done |= torch.isin(choice, end_ids)
        if stop_strings:
            done |= torch.tensor(stopped, device=device)
        if bool(done.all()):
            break
        step_ids = torch.where(done, torch.full_like(choice, pad_id), choice).unsqueeze(-1)
        attn = torch.cat([attn, torch.ones((n, 1), dtype=attn.dtype, device=device)], dim=-1)
        out = model(
            input_ids=step_ids,
            attention_mask=attn,
            position_ids=next_pos.unsqueeze(-1),
            use_cache=True,
            **{cache_arg: cache},
        )
        cache, logits = _cache_of(out), out.logits[:, -1, :]
        next_pos = next_pos + 1
    return [
        Sample(list(p), t, lp, "eos" if t and t[-1] in ends else "stop" if stop else "length")
        for p, t, lp, stop in zip(prompts, toks, lps, stopped)
    ]


def pad_batch(sequences: list[list[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-pad token id lists into (ids, attention_mask), both of shape (B, T_max).

    >>> ids, mask = pad_batch([[1, 2, 3], [4]], pad_id=0)
    >>> ids.tolist(), mask.tolist()
    ([[1, 2, 3], [4, 0, 0]], [[1, 1, 1], [1, 0, 0]])
    """
    width = max(len(s) for s in sequences)
    ids = torch.full((len(sequences), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(sequences), width), dtype=torch.long)
    for i, s in enumerate(sequences):
        ids[i, : len(s)] = torch.tensor(s, dtype=torch.long)
        mask[i, : len(s)] = 1
    return ids, mask


@scored
def completion_logprobs(
    model,
    sequences: list[list[int]],
    score_mask: list[list[int]],
    cfg: SamplingConfig,
    pad_id: int,
    with_logits: bool = False,
):
    """Per-token log-probs of recorded ids under the transformed distribution (17.5.2 numerator, replay).

    ``sequences`` are full token lists (prefix + sampled tokens, observations included for multi-turn);
    ``score_mask[i][t]`` is 1 where token t was sampled by the policy. Returns ``(logp, mask)`` of shape
    (B, T-1) aligned to predicted positions 1..T-1 (plus the logits when ``with_logits``); gradients flow.

    >>> tok = train_tokenizer(["abc def"] * 5, vocab_size=270)
    >>> m = build_model(tok, "tiny")
    >>> lp, mask = completion_logprobs(m, [[1, 5, 6]], [[0, 1, 1]], SamplingConfig(), tok.pad_token_id)
    >>> tuple(lp.shape), mask.tolist()
    ((1, 2), [[1.0, 1.0]])
    """
    if len(sequences) != len(score_mask) or any(len(s) != len(m) for s, m in zip(sequences, score_mask)):
        raise ValueError("score_mask must have the same shape as sequences")
    device = next(model.parameters()).device
    ids, attn = pad_batch(sequences, pad_id)
    smask, _ = pad_batch(score_mask, 0)
    ids, attn = ids.to(device), attn.to(device)
    logits = model(input_ids=ids, attention_mask=attn).logits[:, :-1, :]
    targets = ids[:, 1:]
    logp_all = transformed_logprobs(logits, cfg, keep=targets)
    logp = logp_all.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    mask = smask[:, 1:].to(device=device, dtype=logp.dtype)
    logp = logp.masked_fill(mask == 0, 0.0)
    if with_logits:
        return logp, mask, logits
    return logp, mask


@scored
def shared_prefix_logprobs(
    model,
    sequences: list[list[int]],
    score_mask: list[list[int]],
    prefix_lens: list[int],
    cfg: SamplingConfig,
    pad_id: int,
):
    """:func:`completion_logprobs` for groups that share a prompt, running each distinct prompt once.

    GRPO's G rollouts of a task start with the same prompt, which is most of every sequence here. Rows with
    equal ``sequences[i][:prefix_lens[i]]`` form one prefix group: the prompts go through the model once
    (batch = number of distinct prompts), their key/value cache is repeated for the members, and only the
    tails (completion, observation, revision) go through again. Gradients flow through the shared cache, so
    the loss and its gradient equal those of :func:`completion_logprobs` up to float rounding; only
    tokens after a row's prefix may be scored. Returns ``(logp, mask, tail_logits, tail_mask)``: logp and
    mask of shape (B, T-1) exactly as :func:`completion_logprobs`, and the logits of every predicted tail
    position (B, C, V) with their score mask (B, C) for entropy.

    >>> tok = train_tokenizer(["abc def"] * 5, vocab_size=270)
    >>> m = build_model(tok, "tiny").eval()
    >>> seqs, masks = [[1, 5, 6, 7], [1, 5, 8]], [[0, 0, 1, 1], [0, 0, 1]]
    >>> plain, _ = completion_logprobs(m, seqs, masks, SamplingConfig(), tok.pad_token_id)
    >>> shared, _, _, _ = shared_prefix_logprobs(m, seqs, masks, [2, 2], SamplingConfig(), tok.pad_token_id)
    >>> bool(torch.allclose(plain, shared, atol=1e-5))
    True
    """
    if not (len(sequences) == len(score_mask) == len(prefix_lens)) or any(
        len(s) != len(m) for s, m in zip(sequences, score_mask)
    ):
        raise ValueError("sequences, score_mask and prefix_lens must have matching shapes")
    for s, m, p in zip(sequences, score_mask, prefix_lens):
        if not 1 <= p < len(s) or any(m[:p]):
            raise ValueError(
                f"prefix_lens must be in [1, len(sequence)) with no scored token inside the prefix, "
                f"got {p} for a sequence of {len(s)}"
            )
    device = next(model.parameters()).device
    prompts: dict[tuple[int, ...], int] = {}
    owner = [prompts.setdefault(tuple(s[:p]), len(prompts)) for s, p in zip(sequences, prefix_lens)]
    p_ids, p_attn = pad_batch([list(k) for k in prompts], pad_id)
    p_ids, p_attn = p_ids.to(device), p_attn.to(device)
    out = model(input_ids=p_ids, attention_mask=p_attn, use_cache=True)
    index = torch.tensor(owner, dtype=torch.long, device=device)
    cache = _cache_of(out)
    cache.batch_select_indices(index)
    p_len = torch.tensor(prefix_lens, dtype=torch.long, device=device)
    last = out.logits[index, p_len - 1]  # (B, V): predicts each row's first tail token
    tails = [s[p:] for s, p in zip(sequences, prefix_lens)]
    t_ids, t_attn = pad_batch(tails, pad_id)
    t_mask, _ = pad_batch([m[p:] for m, p in zip(score_mask, prefix_lens)], 0)
    t_ids, t_attn = t_ids.to(device), t_attn.to(device)
    width = t_ids.shape[1]
    positions = p_len.unsqueeze(1) + torch.arange(width, device=device).unsqueeze(0)
    attn = torch.cat([p_attn[index], t_attn], dim=1)
    t_logits = model(
        input_ids=t_ids, attention_mask=attn, position_ids=positions, **{_cache_keyword(model): cache}
    ).logits
    logits = torch.cat([last.unsqueeze(1), t_logits[:, :-1]], dim=1)  # (B, C, V), row c predicts tail token c
    tail_logp = transformed_logprobs(logits, cfg, keep=t_ids).gather(-1, t_ids.unsqueeze(-1)).squeeze(-1)
    tail_mask = t_mask.to(device=device, dtype=tail_logp.dtype)
    tail_logp = tail_logp.masked_fill(tail_mask == 0, 0.0)
    full = max(len(s) for s in sequences) - 1
    cols = (p_len - 1).unsqueeze(1) + torch.arange(width, device=device).unsqueeze(0)  # predicted position - 1
    cols = torch.where(t_attn.bool(), cols, torch.full_like(cols, full))  # padding goes to a spare column
    logp = torch.zeros((len(sequences), full + 1), dtype=tail_logp.dtype, device=device)
    logp = logp.scatter(1, cols, tail_logp)[:, :full]
    mask = torch.zeros_like(logp[:, :1].expand(-1, full + 1)).scatter(1, cols, tail_mask)[:, :full]
    return logp, mask, logits, tail_mask
