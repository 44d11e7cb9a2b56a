"""Tiny policy: tokenizer, model round trip, sampling that records behaviour log-probs (17.5.2, 17.6.2)."""

import math

import pytest
import torch

from rlvr_lab.policy import (
    SamplingConfig,
    build_model,
    completion_logprobs,
    load_policy,
    sample,
    save_policy,
    train_tokenizer,
    transformed_logprobs,
)
from rlvr_lab.tasks import make_suite


@pytest.fixture(scope="module")
def tok_model():
    suite = make_suite(seed=0, problems_per_family=6)
    tok = train_tokenizer([t.prompt + t.solution for t in suite], vocab_size=320)
    return tok, build_model(tok, "tiny", seed=0), suite


def _prompts(tok, suite, n=6):
    return [[tok.bos_token_id] + tok(t.prompt)["input_ids"] for t in suite[:n]]


def test_tokenizer_round_trips_code(tok_model):
    tok, _, suite = tok_model
    text = suite[0].prompt + suite[0].solution
    assert tok.decode(tok(text)["input_ids"]) == text
    assert {tok.pad_token, tok.bos_token, tok.eos_token} == {"<pad>", "<bos>", "<eos>"}


def test_save_and_load_from_local_path(tok_model, tmp_path):
    tok, model, suite = tok_model
    save_policy(model, tok, str(tmp_path))
    loaded, tok2 = load_policy(str(tmp_path))
    assert tok2(suite[1].prompt)["input_ids"] == tok(suite[1].prompt)["input_ids"]
    ids = torch.tensor([_prompts(tok, suite, 1)[0]])
    with torch.no_grad():
        assert torch.allclose(model(ids).logits, loaded(ids).logits, atol=1e-5)


@pytest.mark.parametrize(
    "cfg", [SamplingConfig(max_new_tokens=8), SamplingConfig(temperature=0.7, top_k=12, top_p=0.8, max_new_tokens=8)]
)
def test_recorded_logprobs_replay_exactly(tok_model, cfg):
    tok, model, suite = tok_model
    gen = torch.Generator().manual_seed(1)
    samples = sample(model, _prompts(tok, suite), cfg, tok.eos_token_id, tok.pad_token_id, gen)
    seqs = [s.prompt_ids + s.completion_ids for s in samples]
    masks = [[0] * len(s.prompt_ids) + [1] * len(s.completion_ids) for s in samples]
    with torch.no_grad():
        logp, mask = completion_logprobs(model, seqs, masks, cfg, tok.pad_token_id)
    for i, s in enumerate(samples):
        assert len(s.completion_ids) == len(s.behaviour_logprobs) <= cfg.max_new_tokens
        assert s.stop_reason == ("eos" if s.completion_ids[-1] == tok.eos_token_id else "length")
        start = len(s.prompt_ids) - 1
        replay = logp[i, start : start + len(s.completion_ids)]
        assert torch.allclose(replay, torch.tensor(s.behaviour_logprobs), atol=1e-4)
        assert all(lp <= 0 and math.isfinite(lp) for lp in s.behaviour_logprobs)


def test_truncated_distribution_is_renormalised():
    logits = torch.tensor([[3.0, 2.0, 1.0, 0.0]])
    lp = transformed_logprobs(logits, SamplingConfig(top_k=2))
    assert torch.isinf(lp[0, 2:]).all() and abs(float(lp.exp().sum()) - 1) < 1e-6
    assert lp[0, 0] > torch.log_softmax(logits, -1)[0, 0]  # kept tokens gain the removed mass
    lp = transformed_logprobs(logits, SamplingConfig(top_p=0.5))
    assert torch.isfinite(lp).sum() == 1  # the top token alone holds >= 0.5 of the mass
    lp = transformed_logprobs(logits, SamplingConfig(top_k=1), keep=torch.tensor([3]))
    assert torch.isfinite(lp[0, 3]) and torch.isinf(lp[0, 1])
    hot = transformed_logprobs(logits, SamplingConfig(temperature=2.0))
    assert torch.allclose(hot, torch.log_softmax(logits / 2, -1))


def test_top_k_sampling_never_leaves_the_kept_set(tok_model):
    tok, model, suite = tok_model
    cfg = SamplingConfig(top_k=1, max_new_tokens=5)
    prompts = _prompts(tok, suite, 2)
    a = sample(model, prompts, cfg, tok.eos_token_id, tok.pad_token_id, torch.Generator().manual_seed(0))
    b = sample(model, prompts, cfg, tok.eos_token_id, tok.pad_token_id, torch.Generator().manual_seed(9))
    assert [s.completion_ids for s in a] == [s.completion_ids for s in b]  # top-1 is greedy
    assert all(lp == pytest.approx(0.0, abs=1e-6) for s in a for lp in s.behaviour_logprobs)


def test_bad_sampling_config_names_the_argument():
    with pytest.raises(ValueError, match="temperature"):
        SamplingConfig(temperature=0)
    with pytest.raises(ValueError, match="top_p"):
        SamplingConfig(top_p=0)
    with pytest.raises(ValueError, match="top_k"):
        SamplingConfig(top_k=-1)
    with pytest.raises(ValueError, match="max_new_tokens"):
        SamplingConfig(max_new_tokens=0)
    with pytest.raises(ValueError, match="size"):
        build_model(train_tokenizer(["ab"] * 3, 270), "huge")


def test_train_loads_a_locally_saved_model_through_the_model_option(tok_model, tmp_path):
    import torch as _torch

    from rlvr_lab.train import TrainConfig
    from rlvr_lab.train.learner import build_policy

    tok, model, suite = tok_model
    save_policy(model, tok, str(tmp_path / "my-model"))
    config = TrainConfig.preset("ci", model=str(tmp_path / "my-model"))
    loaded, tok2 = build_policy(config, suite, _torch.device("cpu"))
    assert len(tok2) == len(tok)
    assert all(_torch.equal(a, b) for a, b in zip(loaded.state_dict().values(), model.state_dict().values()))


def _assert_close_in_norm(a: torch.Tensor, b: torch.Tensor, rel: float = 2e-5) -> None:
    """||a - b|| <= rel * max(||a||, 1e-12): a norm-scaled bound that holds on any CPU (see the caller)."""
    diff, scale = float((a - b).norm()), max(float(a.norm()), 1e-12)
    assert diff <= rel * scale, f"differ by {diff:.3e} against norm {scale:.3e}"


@pytest.mark.parametrize(
    "cfg", [SamplingConfig(max_new_tokens=8), SamplingConfig(temperature=0.7, top_k=12, top_p=0.8, max_new_tokens=8)]
)
def test_shared_prefix_scoring_equals_the_plain_batch(tok_model, cfg):
    """Scoring each group's prompt once (cache repeated to the members) gives the log-probs and the gradient
    of the plain padded batch, for groups of unequal prompts and tails that hold an observation."""
    from rlvr_lab.policy import shared_prefix_logprobs

    tok, model, suite = tok_model
    prompts = [p for p in _prompts(tok, suite, n=3) for _ in range(3)]  # three groups of three
    samples = sample(model, prompts, cfg, tok.eos_token_id, tok.pad_token_id, torch.Generator().manual_seed(2))
    seqs, masks = [], []
    for i, s in enumerate(samples):
        obs = [5, 6, 7][: i % 3]  # some rows carry an unscored observation and a second scored answer
        second = [8, 9] if obs else []
        seqs.append(s.prompt_ids + s.completion_ids + obs + second)
        masks.append([0] * len(s.prompt_ids) + [1] * len(s.completion_ids) + [0] * len(obs) + [1] * len(second))
    prefix = [len(s.prompt_ids) for s in samples]
    weights = torch.randn(len(seqs), max(map(len, seqs)) - 1, generator=torch.Generator().manual_seed(3))
    # The two paths add the same terms in different orders (different batch shapes, so different BLAS
    # blocking, which also differs between CPUs), in float32. Rounding then moves single elements by more
    # than any element-wise tolerance can fairly allow (an element near zero has no useful relative error:
    # on one AMD EPYC an element of v_proj's gradient moved by 2.1e-6), so the bound is on the norm of the
    # difference. Float32 unit roundoff (6e-8) times the few hundred terms a gradient entry sums gives a
    # worst case near 1e-5 of the norm; measured: 2e-8 (this AMD EPYC) and 3e-7 (issue 11's).

    def value_and_grad(fn):
        model.zero_grad()
        logp, mask = fn()[:2]
        (logp * weights).sum().backward()
        return logp.detach(), mask, [p.grad.clone() for p in model.parameters()]

    plain = value_and_grad(lambda: completion_logprobs(model, seqs, masks, cfg, tok.pad_token_id))
    shared = value_and_grad(lambda: shared_prefix_logprobs(model, seqs, masks, prefix, cfg, tok.pad_token_id))
    assert torch.equal(plain[1], shared[1])
    _assert_close_in_norm(plain[0].masked_fill(~plain[1].bool(), 0), shared[0].masked_fill(~shared[1].bool(), 0))
    for a, b in zip(plain[2], shared[2]):
        _assert_close_in_norm(a, b)
    with pytest.raises(ValueError, match="prefix_lens"):
        shared_prefix_logprobs(model, seqs, masks, [p + 1 for p in prefix], cfg, tok.pad_token_id)
