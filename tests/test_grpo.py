"""rlvr_lab.grpo: advantages, clipped surrogate, k3 KL, loss normalisations, entropy (17.5, 17.8.1).

The central check: the vectorised grpo_loss equals a plain per-token Python loop, written straight from
equation 4, in value and in gradient (torch.autograd), for every normalisation.
"""

import math

import numpy as np
import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from rlvr_lab import grpo

rewards_lists = st.lists(st.floats(-10, 10, allow_nan=False), min_size=1, max_size=16)


# ------------------------------------------------------------------ advantages (eq 2, eq 3)


@settings(max_examples=100, deadline=None)
@given(rewards_lists, st.sampled_from(["population", "sample"]), st.sampled_from([0.0, 1e-8, 1e-4]))
def test_advantages_sum_to_zero_and_are_finite(r, std, eps):
    a = grpo.group_advantages(r, eps=eps, std=std)
    assert np.all(np.isfinite(a))
    assert abs(a.sum()) <= 1e-9 * max(1.0, np.abs(a).max())


@settings(max_examples=100, deadline=None)
@given(rewards_lists)
def test_untied_group_squares_sum_to_group_size(r):
    r = np.array(r)
    assume(r.max() - r.min() > 1e-3)
    a = grpo.group_advantages(r, eps=0.0)
    assert np.sum(a**2) == pytest.approx(len(r), rel=1e-9)
    a_small = grpo.group_advantages(r, eps=1e-12)
    assert np.sum(a_small**2) == pytest.approx(len(r), rel=1e-6)


@pytest.mark.parametrize("eps", [0.0, 1e-8])
@pytest.mark.parametrize("std", ["population", "sample"])
@pytest.mark.parametrize("scale", ["group", "batch", "none"])
def test_tied_group_is_exactly_zero(eps, std, scale):
    for tied in ([0.1, 0.1, 0.1], [1.0], [0.0] * 16, [7.3] * 5):
        a = grpo.group_advantages(tied, eps=eps, std=std, scale=scale)
        assert not np.any(np.isnan(a)) and np.all(a == 0.0)
    a = grpo.group_advantages(torch.full((2, 4), 0.3), eps=eps, std=std, scale=scale)
    assert torch.all(a == 0)


def test_batch_of_groups_and_return_types():
    r = [[1.0, 0.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0]]
    a = grpo.group_advantages(r)
    assert isinstance(a, np.ndarray) and a.shape == (2, 4)
    assert a[0].tolist() == pytest.approx(grpo.group_advantages(r[0]).tolist())
    t = grpo.group_advantages(torch.tensor(r, dtype=torch.float32))
    assert isinstance(t, torch.Tensor) and t.dtype == torch.float32 and t.shape == (2, 4)
    assert np.allclose(t.numpy(), a, atol=1e-6)
    ints = grpo.group_advantages(torch.tensor([1, 0]))
    assert ints.dtype == torch.float32


def test_sample_std_matches_torch_unbiased_and_batch_scale():
    r = torch.tensor([[0.0, 1.0, 0.0, 1.0, 1.0], [0.2, 0.4, 0.9, 0.0, 0.0]], dtype=torch.float64)
    centered = r - r.mean(dim=1, keepdim=True)
    want = centered / (r.std(dim=1, keepdim=True, unbiased=True) + 1e-4)
    assert torch.allclose(grpo.group_advantages(r, eps=1e-4, std="sample"), want)
    want_batch = centered / (r.std(unbiased=True) + 1e-4)
    assert torch.allclose(grpo.group_advantages(r, eps=1e-4, std="sample", scale="batch"), want_batch)
    assert torch.allclose(grpo.group_advantages(r, scale="none"), centered)


@pytest.mark.parametrize("g", [2, 3, 8, 16, 64])
@pytest.mark.parametrize("eps", [0.0, 1e-8, 0.1])
def test_lone_pass_matches_group_advantages(g, eps):
    r = [1.0] + [0.0] * (g - 1)
    a = grpo.group_advantages(r, eps=eps)
    pass_c, fail_c = grpo.lone_pass_group_coefficients(g, eps)
    assert a[0] == pytest.approx(pass_c) and a[1:] == pytest.approx([fail_c] * (g - 1))
    if eps == 0.0:
        assert pass_c == pytest.approx(math.sqrt(g - 1))


# ------------------------------------------------------------------ clipped surrogate and k3


@settings(max_examples=200, deadline=None)
@given(
    st.floats(0.01, 5.0), st.floats(-5, 5).filter(lambda a: abs(a) > 1e-6), st.floats(0.05, 0.5), st.floats(0.0, 0.5)
)
def test_clip_flat_only_in_the_advantage_direction(r, a, lo, extra):
    hi = lo + extra
    val = float(grpo.clipped_surrogate(torch.tensor([r]), torch.tensor([a]), lo, hi))
    if 1 - lo <= r <= 1 + hi:
        assert val == pytest.approx(r * a)
    elif r > 1 + hi:
        assert val == pytest.approx((1 + hi) * a if a > 0 else r * a)
    else:
        assert val == pytest.approx((1 - lo) * a if a < 0 else r * a)
    # flat means zero gradient in the ratio
    rt = torch.tensor([r], dtype=torch.float64, requires_grad=True)
    grpo.clipped_surrogate(rt, torch.tensor([a], dtype=torch.float64), lo, hi).sum().backward()
    flat = (a > 0 and r > 1 + hi) or (a < 0 and r < 1 - lo)
    assert float(rt.grad) == (0.0 if flat else pytest.approx(a))


def test_clip_symmetric_default_and_row_broadcast():
    r = torch.tensor([[0.5, 1.5], [0.5, 1.5]])
    out = grpo.clipped_surrogate(r, torch.tensor([1.0, -1.0]), 0.2)
    assert torch.allclose(out, torch.tensor([[0.5, 1.2], [-0.8, -1.5]]))


@settings(max_examples=200, deadline=None)
@given(st.floats(-20, 0), st.floats(-20, 0))
def test_k3_nonnegative_and_zero_iff_equal(lp, lr):
    d = float(grpo.kl_k3(torch.tensor([lp], dtype=torch.float64), torch.tensor([lr], dtype=torch.float64)))
    assert d >= 0.0
    if lp == lr:
        assert d == 0.0
    elif abs(lp - lr) > 1e-6:
        assert d > 0.0


def test_k3_expectation_is_kl():
    torch.manual_seed(0)
    p = torch.softmax(torch.randn(6, dtype=torch.float64), 0)
    q = torch.softmax(torch.randn(6, dtype=torch.float64), 0)
    expected_k3 = float((p * grpo.kl_k3(p.log(), q.log())).sum())
    assert expected_k3 == pytest.approx(float((p * (p.log() - q.log())).sum()), rel=1e-12)


# ------------------------------------------------------------------ the loss: vectorised vs per-token loop


def loop_loss(logp, old, ref, adv, mask, eps_low, eps_high, beta, norm, constant=None):
    """Equation 4 token by token, the way the chapter writes it."""
    b, t_max = logp.shape
    total = torch.zeros((), dtype=logp.dtype)
    tokens = 0
    for i in range(b):
        row = torch.zeros((), dtype=logp.dtype)
        count = 0
        for t in range(t_max):
            if mask[i, t] == 0:
                continue
            r = torch.exp(logp[i, t] - old[i, t])
            clipped = torch.clamp(r, 1 - eps_low, 1 + eps_high)
            term = torch.minimum(r * adv[i], clipped * adv[i])
            if beta > 0:
                rho = torch.exp(ref[i, t] - logp[i, t])
                term = term - beta * (rho - torch.log(rho) - 1)
            row = row + term
            count += 1
        tokens += count
        if norm == "sequence":
            total = total + row / count
        elif norm == "constant":
            total = total + row / (t_max if constant is None else constant)
        else:
            total = total + row
    objective = total / tokens if norm == "token" else total / b
    return -objective


def _batch(seed, b=5, t=7, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    logp = -torch.rand(b, t, generator=g, dtype=dtype) * 3 - 0.05
    old = logp + 0.35 * torch.randn(b, t, generator=g, dtype=dtype)  # ratios well outside [0.8, 1.28]
    ref = logp + 0.5 * torch.randn(b, t, generator=g, dtype=dtype)
    adv = torch.randn(b, generator=g, dtype=dtype)
    lengths = torch.randint(1, t + 1, (b,), generator=g)
    mask = (torch.arange(t)[None, :] < lengths[:, None]).to(dtype)
    return logp, old, ref, adv, mask


@pytest.mark.parametrize(
    "norm, constant", [("sequence", None), ("constant", None), ("constant", 11.0), ("token", None)]
)
@pytest.mark.parametrize("beta", [0.0, 0.04])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_vectorised_loss_equals_per_token_loop(norm, constant, beta, seed):
    logp, old, ref, adv, mask = _batch(seed)
    lp1 = logp.clone().requires_grad_(True)
    lp2 = logp.clone().requires_grad_(True)
    loss, diag = grpo.grpo_loss(lp1, old, ref, adv, mask, 0.2, 0.28, beta, norm=norm, constant=constant)
    want = loop_loss(lp2, old, ref, adv, mask, 0.2, 0.28, beta, norm, constant)
    assert diag["clip_fraction"] > 0.0  # the batch really exercises the clip
    assert loss.item() == pytest.approx(want.item(), rel=1e-12, abs=1e-12)
    loss.backward()
    want.backward()
    assert torch.allclose(lp1.grad, lp2.grad, rtol=1e-10, atol=1e-12)
    assert torch.all(lp1.grad[mask == 0] == 0)


def test_loss_ignores_padding_content():
    logp, old, ref, adv, mask = _batch(3)
    base, _ = grpo.grpo_loss(logp, old, ref, adv, mask, 0.2, 0.28, 0.04)
    junk = mask == 0
    lp = logp.masked_fill(junk, float("nan")).requires_grad_(True)
    loss, _ = grpo.grpo_loss(
        lp, old.masked_fill(junk, float("-inf")), ref.masked_fill(junk, 1e30), adv, mask, 0.2, 0.28, 0.04
    )
    assert loss.item() == pytest.approx(base.item())
    loss.backward()
    assert torch.all(torch.isfinite(lp.grad))


def test_tied_group_leaves_only_the_kl_gradient():
    logp, old, ref, _, mask = _batch(4)
    adv = torch.as_tensor(grpo.group_advantages([1.0] * 5))
    lp = logp.clone().requires_grad_(True)
    grpo.grpo_loss(lp, old, ref, adv, mask, 0.2, 0.2, 0.0)[0].backward()
    assert torch.all(lp.grad == 0)
    lp.grad = None
    grpo.grpo_loss(lp, old, ref, adv, mask, 0.2, 0.2, 0.1)[0].backward()
    assert torch.any(lp.grad != 0)


def test_diagnostics_are_plain_floats_and_consistent():
    logp, old, ref, adv, mask = _batch(5)
    _, d = grpo.grpo_loss(logp, old, ref, adv, mask, 0.2, 0.28, 0.04)
    assert all(type(x) is float for x in d.values())
    assert d["clip_fraction"] == pytest.approx(d["clip_low_fraction"] + d["clip_high_fraction"])
    assert d["ratio_p05"] <= d["ratio_p50"] <= d["ratio_p95"] <= d["ratio_max"]
    assert d["kl_mean"] >= 0 and d["tokens"] == float(mask.sum())
    _, d0 = grpo.grpo_loss(logp, old, None, adv, mask, 0.2, 0.28, 0.0)
    assert "kl_mean" not in d0


def test_bool_mask_and_float32():
    logp, old, ref, adv, mask = _batch(6, dtype=torch.float32)
    a, _ = grpo.grpo_loss(logp, old, ref, adv, mask, 0.2, 0.28, 0.04)
    b, _ = grpo.grpo_loss(logp, old, ref, adv, mask.bool(), 0.2, 0.28, 0.04)
    assert a.dtype == torch.float32 and float(a) == float(b)


# ------------------------------------------------------------------ eq 5 weights and entropy


def test_per_token_weights_norms():
    a, n = np.array([2.0, -1.0, -1.0]), np.array([10, 20, 30])
    assert grpo.per_token_weights(a, n, "sequence").tolist() == pytest.approx([0.2, -0.05, -1 / 30])
    assert grpo.per_token_weights(a, n, "constant").tolist() == pytest.approx([2 / 30, -1 / 30, -1 / 30])
    assert grpo.per_token_weights(a, n, "constant", constant=4.0).tolist() == pytest.approx([0.5, -0.25, -0.25])
    assert grpo.per_token_weights(a, n, "token").tolist() == pytest.approx([0.1, -0.05, -0.05])
    t = grpo.per_token_weights(torch.tensor([1.0, -1.0]), torch.tensor([2, 4]))
    assert isinstance(t, torch.Tensor) and t.tolist() == [0.5, -0.25]


def test_per_token_weights_match_loss_gradient_at_ratio_one():
    # d(-loss)/d logp_{i,t} at ratio 1 (logp == old, beta 0) is weight_i / B for the per-rollout norms
    b, t = 3, 6
    lengths = torch.tensor([2, 6, 4])
    mask = (torch.arange(t)[None, :] < lengths[:, None]).double()
    adv = torch.tensor([1.5, -0.5, -1.0], dtype=torch.float64)
    for norm in ("sequence", "constant", "token"):
        lp = torch.zeros(b, t, dtype=torch.float64, requires_grad=True)
        grpo.grpo_loss(lp, torch.zeros(b, t, dtype=torch.float64), None, adv, mask, 0.2, 0.2, 0.0, norm=norm)[
            0
        ].backward()
        w = grpo.per_token_weights(adv.numpy(), lengths.numpy(), norm, constant=t if norm == "constant" else None)
        got = (-lp.grad * b)[mask.bool()]
        want = torch.repeat_interleave(torch.as_tensor(w), lengths)
        assert torch.allclose(got, want)


def test_token_entropy_values_and_stability():
    v = 5
    assert float(grpo.token_entropy(torch.zeros(2, 3, v))) == pytest.approx(math.log(v))
    one_hot = torch.full((1, 1, v), -1e9)
    one_hot[..., 0] = 0.0
    assert float(grpo.token_entropy(one_hot)) == 0.0
    big = torch.tensor([[[1e4, 1e4, -1e4]]])
    assert float(grpo.token_entropy(big)) == pytest.approx(math.log(2))
    logits = torch.randn(2, 4, v, dtype=torch.float64)
    p = torch.softmax(logits, -1)
    manual = -(p * p.log()).sum(-1)
    mask = torch.tensor([[1, 1, 0, 0], [1, 0, 0, 0]])
    per = grpo.token_entropy(logits, mask, reduce="none")
    assert torch.allclose(per, manual * mask)
    assert float(grpo.token_entropy(logits, mask)) == pytest.approx(float(manual[mask.bool()].mean()))


# ------------------------------------------------------------------ bad input


def _ok():
    logp, old, ref, adv, mask = _batch(7, b=2, t=3)
    return dict(logp=logp, old_logp=old, ref_logp=ref, advantages=adv, mask=mask, eps_low=0.2, eps_high=0.28, beta=0.04)


@pytest.mark.parametrize(
    "change, needle",
    [
        (dict(old_logp=torch.zeros(2, 4)), "old_logp must have the shape of logp (2, 3)"),
        (dict(ref_logp=torch.zeros(3, 3)), "ref_logp must have the shape of logp (2, 3)"),
        (dict(mask=torch.ones(2)), "mask must have the shape of logp (2, 3)"),
        (dict(advantages=torch.zeros(3)), "advantages must have shape (B,) = (2,)"),
        (dict(logp=torch.zeros(6)), "logp must be a (B, T) tensor"),
        (dict(mask=torch.full((2, 3), 0.5)), "mask must hold only 0 and 1"),
        (dict(mask=torch.zeros(2, 3)), "mask must select at least one token"),
        (dict(ref_logp=None), "ref_logp must be given when beta > 0"),
        (dict(logp=torch.full((2, 3), float("nan"))), "logp must be finite at every unmasked position"),
        (dict(advantages=torch.tensor([float("inf"), 0.0])), "advantages must be finite"),
        (dict(eps_low=1.0), "eps_low must be in (0, 1)"),
        (dict(eps_low=0.0), "eps_low must be in (0, 1)"),
        (dict(eps_high=-0.1), "eps_high must be >= 0"),
        (dict(beta=-0.1), "beta must be >= 0"),
        (dict(norm="mean"), "norm must be one of ['sequence', 'constant', 'token']"),
        (dict(norm="constant", constant=0.0), "constant must be > 0"),
    ],
)
def test_loss_bad_input(change, needle):
    kw = _ok()
    norm = change.pop("norm", "sequence") if "norm" in change else "sequence"
    constant = change.pop("constant", None)
    kw.update(change)
    with pytest.raises(ValueError) as err:
        grpo.grpo_loss(**kw, norm=norm, constant=constant)
    assert needle in str(err.value)


@pytest.mark.parametrize(
    "call, needle",
    [
        (lambda: grpo.group_advantages([]), "rewards must be a non-empty"),
        (lambda: grpo.group_advantages([[1.0, 0.0], [1.0]]), "ragged"),
        (lambda: grpo.group_advantages(np.zeros((2, 2, 2))), "rewards must be a non-empty (G,) or (B, G)"),
        (lambda: grpo.group_advantages([1.0, float("nan")]), "rewards must be finite"),
        (lambda: grpo.group_advantages([1.0, 0.0], eps=-1.0), "eps must be >= 0"),
        (lambda: grpo.group_advantages([1.0, 0.0], std="bessel"), "std must be one of"),
        (lambda: grpo.group_advantages([1.0, 0.0], scale="task"), "scale must be one of"),
        (lambda: grpo.lone_pass_coefficient(1), "group_size must be an integer >= 2"),
        (lambda: grpo.lone_pass_coefficient(0), "group_size must be an integer >= 2"),
        (lambda: grpo.token_ratios(torch.zeros(2), torch.zeros(3)), "old_logp must have the shape of logp"),
        (lambda: grpo.kl_k3(torch.zeros(2), torch.zeros(3)), "ref_logp must have the shape of logp"),
        (lambda: grpo.clipped_surrogate(torch.ones(2, 3), torch.ones(3), 0.2), "one entry per row"),
        (lambda: grpo.clipped_surrogate(torch.ones(2, 3), torch.ones(2, 2), 0.2), "does not broadcast"),
        (lambda: grpo.clip_probability_bounds(1.2, 0.2), "p must be in [0, 1]"),
        (lambda: grpo.per_token_weights([1.0], [0], "sequence"), "lengths must be >= 1"),
        (lambda: grpo.per_token_weights([1.0, 2.0], [3], "sequence"), "equal shapes"),
        (lambda: grpo.token_entropy(torch.zeros(2, 3, 4), torch.ones(2, 4)), "mask must have the shape"),
        (lambda: grpo.token_entropy(torch.zeros(2, 3, 4), torch.zeros(2, 3)), "mask must select at least one"),
    ],
)
def test_bad_input_names_argument_and_range(call, needle):
    with pytest.raises(ValueError) as err:
        call()
    assert needle in str(err.value)


@pytest.mark.parametrize("norm", ["sequence", "constant", "token"])
@pytest.mark.parametrize("beta", [0.0, 0.04])
def test_fast_loss_equals_the_checked_loss_bit_for_bit(norm, beta):
    """The trainer's unchecked path (grpo_loss(..., checked=False)) against the teaching API: same loss and
    gradient, bit for bit, and the same statistics (it only skips checks and the ratio quantiles)."""
    gen = torch.Generator().manual_seed(7)
    logp = (-torch.rand(6, 9, generator=gen) * 3).requires_grad_()
    old = logp.detach() + 0.3 * torch.randn(6, 9, generator=gen)
    ref = logp.detach() + 0.2 * torch.randn(6, 9, generator=gen)
    adv = torch.randn(6, generator=gen)
    mask = (torch.rand(6, 9, generator=gen) > 0.3).float()
    mask[:, 0] = 1.0
    loss_a, diag = grpo.grpo_loss(logp, old, ref, adv, mask, 0.2, 0.28, beta, norm=norm, constant=None)
    (grad_a,) = torch.autograd.grad(loss_a, logp)
    loss_b, stats = grpo.grpo_loss(logp, old, ref, adv, mask, 0.2, 0.28, beta, norm=norm, constant=None, checked=False)
    (grad_b,) = torch.autograd.grad(loss_b, logp)
    assert torch.equal(loss_a, loss_b) and torch.equal(grad_a, grad_b)
    assert all(isinstance(t, torch.Tensor) and t.dim() == 0 for t in stats.values())
    assert {k: float(t) for k, t in stats.items()} == {k: diag[k] for k in stats}
    with pytest.warns(DeprecationWarning, match="checked=False"):  # the old name, until 0.2
        loss_c, _ = grpo.grpo_loss_fast(logp, old, ref, adv, mask, 0.2, 0.28, beta, norm=norm, constant=None)
    assert torch.equal(loss_a, loss_c)
