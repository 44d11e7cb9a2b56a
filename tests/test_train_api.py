"""The trainer's public API (issue 21): what ``rlvr_lab.train.__all__`` lists loads without a warning, the
names it dropped still load with a DeprecationWarning until 0.2, and the GRPO update's 0.1 loose-argument
form changes the weights exactly as the new ``grpo_update(learner, make_batch(...), ...)`` does."""

import math
import copy
import warnings

import pytest
import torch

import rlvr_lab.train as train
from rlvr_lab.policy import SamplingConfig, build_model, train_tokenizer
from rlvr_lab.records import Invocation, RolloutRecord


def test_every_public_name_loads_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert all(getattr(train, name) is not None for name in train.__all__)


@pytest.mark.parametrize("name", sorted(train.DEPRECATED))
def test_a_dropped_name_still_loads_with_a_deprecation_warning(name):
    import importlib

    module, new = train.DEPRECATED[name]
    with pytest.warns(DeprecationWarning, match=f"rlvr_lab.train.{module}.{new}"):
        value = getattr(train, name)
    assert value is getattr(importlib.import_module(f"rlvr_lab.train.{module}"), new)


def test_the_verdict_cache_keeps_its_old_name_in_rollout():
    from rlvr_lab.train import rollout

    with pytest.warns(DeprecationWarning, match="VerdictCache"):
        assert rollout.Grader is rollout.VerdictCache


def _records(tok) -> list[RolloutRecord]:
    """Two groups of two rollouts with contrast, on token ids the tiny tokenizer knows."""
    gen = torch.Generator().manual_seed(3)
    out = []
    for g, rewards in enumerate(([1.0, 0.0], [0.0, 1.0])):
        prompt = [tok.bos_token_id or 1] + torch.randint(5, 200, (4,), generator=gen).tolist()
        for r, reward in enumerate(rewards):
            ids = torch.randint(5, 200, (3 + r,), generator=gen).tolist()
            logps = (-torch.rand(len(ids), generator=gen) * 4).tolist()
            call = Invocation(0, prompt, ids, logps, 0, "eos")
            out.append(
                RolloutRecord(
                    f"s0-g{g}-r{r}",
                    f"s0-g{g}",
                    "t",
                    "p",
                    "train",
                    0,
                    "f",
                    "v",
                    {},
                    "",
                    [call],
                    "",
                    "pass" if reward else "fail",
                    reward,
                    {},
                    "eos",
                    len(prompt),
                    len(ids),
                    0,
                    admitted=True,
                )
            )
    return out


def test_the_loose_update_form_matches_the_learner_form_bit_for_bit():
    tok = train_tokenizer(["def f(x):\n    return x + 1\n"] * 5, vocab_size=270)
    model = build_model(tok, "tiny", seed=0)
    config = train.TrainConfig.preset("ci", passes=2, beta=0.04, lr=1e-3, replay_bound=100.0)  # made-up logps
    sampling = SamplingConfig()
    records = _records(tok)

    def fresh():
        m = copy.deepcopy(model)
        return m, copy.deepcopy(model).eval(), torch.optim.AdamW(m.parameters(), lr=config.lr, weight_decay=0.0)

    m1, ref1, opt1 = fresh()
    learner = train.Learner(m1, tok, ref1, opt1)
    batch = train.make_batch(learner, records, config, sampling)
    assert batch.advantages.shape == (4,) and batch.old_logp.shape == batch.ref_logp.shape == (4, 8)
    new = train.grpo_update(learner, batch, config, sampling)
    assert learner.version == config.passes and new["grad_norm"] > 0

    m2, ref2, opt2 = fresh()
    with pytest.warns(DeprecationWarning, match="loose form"):
        old = train.grpo_update(m2, ref2, opt2, records, config, tok.pad_token_id, sampling)
    assert old == new
    assert all(torch.equal(a, b) for a, b in zip(m1.state_dict().values(), m2.state_dict().values()))


@pytest.mark.parametrize("norm", ["constant", "sequence", "token"])
def test_micro_batches_accumulate_to_the_whole_batch_update(norm):
    """micro_batch splits the forward/backward (memory), not the objective: same gradient step and statistics,
    whatever the length normalisation (the token-level loss weighs a micro-batch by its tokens, not its rows:
    the rollouts here differ in length)."""
    tok = train_tokenizer(["def f(x):\n    return x + 1\n"] * 5, vocab_size=270)
    model = build_model(tok, "tiny", seed=0)
    sampling, records = SamplingConfig(), _records(tok)
    results = []
    for micro in (0, 1, 3):
        config = train.TrainConfig.preset(
            "ci", passes=2, beta=0.04, lr=1e-3, replay_bound=100.0, micro_batch=micro, norm=norm
        )
        m = copy.deepcopy(model)
        learner = train.Learner(m, tok, copy.deepcopy(model).eval(), torch.optim.AdamW(m.parameters(), lr=1e-3))
        diags = train.grpo_update(learner, train.make_batch(learner, records, config, sampling), config, sampling)
        results.append((diags, [p.detach().clone() for p in m.parameters()]))
    (whole, w0), *others = results
    for diags, weights in others:
        assert all(torch.allclose(a, b, atol=1e-5) for a, b in zip(w0, weights))  # Adam: ~1e-6 noise
        for key in ("loss", "grad_norm", "clip_fraction", "kl_mean", "tokens", "replay_max_dev", "entropy"):
            assert math.isclose(diags[key], whole[key], rel_tol=1e-5, abs_tol=1e-6), key


@pytest.mark.parametrize("scale", ["group", "batch", "none"])
def test_the_batch_advantages_follow_the_configured_scale(scale):
    """eq 2's divisor as the config names it: each group's std (GRPO), one std over the batch, or none
    (Dr. GRPO: centred rewards)."""
    from rlvr_lab.advantages import group_advantages

    tok = train_tokenizer(["def f(x):\n    return x + 1\n"] * 5, vocab_size=270)
    model = build_model(tok, "tiny", seed=0)
    records = _records(tok)
    records[1].reward = 0.5  # groups (1, 0.5) and (0, 1): different stds, so the three scales differ
    config = train.TrainConfig.preset("ci", scale=scale, replay_bound=100.0)
    learner = train.Learner(model, tok, copy.deepcopy(model).eval(), torch.optim.AdamW(model.parameters()))
    batch = train.make_batch(learner, records, config, SamplingConfig())
    want = group_advantages([[1.0, 0.5], [0.0, 1.0]], scale=scale).ravel().tolist()
    assert batch.advantages.tolist() == pytest.approx(want)
    if scale == "none":
        assert batch.advantages.tolist() == pytest.approx([0.25, -0.25, -0.5, 0.5])
