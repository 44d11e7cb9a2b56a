"""Group Relative Policy Optimization: section 17.5 (eqs 2-5) and the entropy diagnostic of 17.8.1.

torch module. Shapes: B rollouts, T completion positions (padded), V vocabulary. ``logp``, ``old_logp`` and
``ref_logp`` are (B, T) log-probabilities in nats of the *sampled* tokens under the current, behaviour
(pi_old, as recorded at sampling time) and frozen reference policies; ``mask`` is (B, T), 1 for a policy
token that counts toward |o_i| and 0 for prompt, tool output or padding; ``advantages`` is (B,).

Equations 2 and 3 need only numpy and live in :mod:`rlvr_lab.advantages` (chapter 2 and exercise 4 import
them without torch); they are re-exported here. :func:`group_advantages` returns torch for torch input and
a float64 numpy array for lists or numpy input. The other tensor functions accept array-likes (converted
to float64 tensors) and return tensors. Bad input raises ValueError naming the argument and its range.

>>> group_advantages([0.0, 1.0, 0.0]).round(6).tolist()      # napkin math 17.3
[-0.707107, 1.414214, -0.707107]
>>> round(lone_pass_coefficient(16), 2)                      # eq 3, G = 16: the lone pass
3.87
>>> tuple(round(c, 2) for c in lone_pass_group_coefficients(16))   # the pass and each failure
(3.87, -0.26)
"""

from __future__ import annotations

import math  # noqa: F401 (the doctests use it)
import warnings

import numpy as np
import torch

from rlvr_lab import validation as v
from rlvr_lab import advantages
from rlvr_lab.advantages import lone_pass_coefficient, lone_pass_group_coefficients  # noqa: F401 (re-exported)

NORMS = ("sequence", "constant", "token")


def group_advantages(rewards, eps=1e-8, std="population", scale="group"):
    """Equation 2 for numpy *or torch* input: :func:`rlvr_lab.advantages.group_advantages`, and a tensor
    of ``rewards``' dtype and device back when ``rewards`` is a tensor.

    >>> a = group_advantages(torch.tensor([0.0, 1.0, 0.0]))
    >>> a.dtype, [round(x, 4) for x in a.tolist()]
    (torch.float32, [-0.7071, 1.4142, -0.7071])
    """
    if not isinstance(rewards, torch.Tensor):
        return advantages.group_advantages(rewards, eps, std, scale)
    out = advantages.group_advantages(rewards.detach().cpu().double().numpy(), eps, std, scale)
    return torch.as_tensor(
        out, dtype=rewards.dtype if rewards.is_floating_point() else torch.float32, device=rewards.device
    )


def _tensor(name: str, value) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        return value
    try:
        return torch.as_tensor(np.asarray(value, dtype=float), dtype=torch.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a numeric array or tensor, got {value!r}") from None


def _same_shape(**tensors: torch.Tensor) -> None:
    (first, ref), *rest = tensors.items()
    for name, t in rest:
        if tuple(t.shape) != tuple(ref.shape):
            raise ValueError(f"{name} must have the shape of {first} {tuple(ref.shape)}, got {tuple(t.shape)}")


def token_ratios(logp, old_logp) -> torch.Tensor:
    """Token probability ratio (17.5.2): ``r = pi_theta / pi_old = exp(logp - old_logp)``, same shape.

    >>> token_ratios([0.0, -1.0], [0.0, -2.0]).tolist() == [1.0, math.e]
    True
    """
    logp, old_logp = _tensor("logp", logp), _tensor("old_logp", old_logp)
    _same_shape(logp=logp, old_logp=old_logp)
    return torch.exp(logp - old_logp)


def _clip_widths(eps_low, eps_high) -> tuple[float, float]:
    lo = v.real("eps_low", eps_low, 0.0, 1.0, lo_open=True, hi_open=True)
    hi = lo if eps_high is None else v.nonnegative("eps_high", eps_high)
    return lo, hi


def clipped_surrogate(ratio, advantage, eps_low, eps_high=None) -> torch.Tensor:
    """Clipped surrogate (17.5.2): ``min(r*A, clip(r, 1-eps_low, 1+eps_high)*A)``.

    Symmetric when ``eps_high`` is None (= eps_low); clip-higher (DAPO) when eps_high > eps_low.
    ``advantage`` is broadcast against ``ratio``; a (B,) advantage with a (B, T) ratio applies per row.

    >>> clipped_surrogate([0.5, 1.1, 1.5], [2.0, 2.0, 2.0], 0.2).tolist()   # flat only above 1.2 for A > 0
    [1.0, 2.2, 2.4]
    >>> clipped_surrogate([0.5, 1.5], [-1.0, -1.0], 0.2).tolist()         # flat only below 0.8 for A < 0
    [-0.8, -1.5]
    """
    ratio, adv = _tensor("ratio", ratio), _tensor("advantage", advantage)
    lo, hi = _clip_widths(eps_low, eps_high)
    if adv.dim() == 1 and ratio.dim() == 2:
        if adv.shape[0] != ratio.shape[0]:
            raise ValueError(f"advantage must have one entry per row of ratio ({ratio.shape[0]}), got {adv.shape[0]}")
        adv = adv[:, None]
    try:
        torch.broadcast_shapes(ratio.shape, adv.shape)
    except RuntimeError:
        raise ValueError(
            f"advantage shape {tuple(adv.shape)} does not broadcast to ratio shape {tuple(ratio.shape)}"
        ) from None
    return torch.minimum(ratio * adv, torch.clamp(ratio, 1.0 - lo, 1.0 + hi) * adv)


def clip_probability_bounds(p, eps_low, eps_high=None) -> tuple[float, float]:
    """Absolute probabilities where the clip flattens the incentive for a token now at ``p`` (17.8.3).

    Returns ``(p*(1-eps_low), p*(1+eps_high))``: a negative-advantage token stops being pushed down below
    the first, a positive-advantage token stops being pushed up above the second. An upper value above 1
    can never be reached, so the clip never binds there.

    >>> [round(x, 4) for x in clip_probability_bounds(0.9, 0.2)]    # 1.08 > 1: never binds
    [0.72, 1.08]
    >>> round(clip_probability_bounds(0.01, 0.2)[1] - 0.01, 4)      # only +0.002 of headroom
    0.002
    """
    p = v.probability("p", p)
    lo, hi = _clip_widths(eps_low, eps_high)
    return p * (1.0 - lo), p * (1.0 + hi)


def kl_k3(logp, ref_logp) -> torch.Tensor:
    """Per-token KL penalty (17.5.2): ``D = rho - log(rho) - 1`` with ``rho = pi_ref / pi_theta``.

    Non-negative, zero iff the two probabilities agree; its expectation under pi_theta is
    KL(pi_theta || pi_ref). Computed as ``expm1(d) - d`` with ``d = ref_logp - logp`` for accuracy near 0.

    >>> kl_k3([math.log(0.5)], [math.log(0.5)]).tolist(), round(kl_k3([math.log(0.5)], [math.log(0.25)]).item(), 4)
    ([0.0], 0.1931)
    """
    logp, ref_logp = _tensor("logp", logp), _tensor("ref_logp", ref_logp)
    _same_shape(logp=logp, ref_logp=ref_logp)
    d = ref_logp - logp
    return torch.expm1(d) - d


def _check_loss_inputs(logp, old_logp, ref_logp, advantages, mask, beta):
    if logp.dim() != 2:
        raise ValueError(f"logp must be a (B, T) tensor, got shape {tuple(logp.shape)}")
    shapes = {"logp": logp, "old_logp": old_logp, "mask": mask}
    if ref_logp is not None:
        shapes["ref_logp"] = ref_logp
    elif beta > 0:
        raise ValueError("ref_logp must be given when beta > 0 (the KL term needs the reference policy)")
    _same_shape(**shapes)
    if tuple(advantages.shape) != (logp.shape[0],):
        raise ValueError(f"advantages must have shape (B,) = ({logp.shape[0]},), got {tuple(advantages.shape)}")
    if not bool(((mask == 0) | (mask == 1)).all()):
        raise ValueError("mask must hold only 0 and 1 (or booleans)")
    keep = mask.bool()
    if not bool(keep.any()):
        raise ValueError("mask must select at least one token")
    for name, t in shapes.items():
        if name != "mask" and not bool(torch.isfinite(t[keep]).all()):
            raise ValueError(f"{name} must be finite at every unmasked position")
    if not bool(torch.isfinite(advantages).all()):
        raise ValueError("advantages must be finite")
    return keep


def grpo_loss(
    logp, old_logp, ref_logp, advantages, mask, eps_low, eps_high, beta, norm="sequence", constant=None, *, checked=True
):
    """Equation 4 (17.5.2): the GRPO loss ``-J`` and a dict of diagnostics.

    Per token ``L - beta*D`` with L the clipped surrogate and D the k3 KL; then
    ``norm="sequence"``: mean over rollouts of the token sum / |o_i| (eq 4, TRL loss_type "grpo");
    ``"constant"``: mean over rollouts of the token sum / ``constant`` (eq 5's variant, TRL "dr_grpo");
    ``constant`` defaults to T, the padded width, which stands for the enforced cap when the batch is padded
    to it; ``"token"``: total over all tokens / number of unmasked tokens (TRL "bnpo"). ``ref_logp`` may be
    None when ``beta == 0``. Diagnostics: ``clip_fraction`` (and ``clip_low_fraction``/``clip_high_fraction``,
    the tokens whose incentive the clip removed), ``positive_fraction``, ``ratio_p05/p50/p95/max``,
    ``kl_mean`` (when ref_logp is given), ``surrogate_mean``, ``tokens``, as plain floats.

    ``checked=False`` is the trainer's path: the same loss bit for bit, but no argument checks (inputs must
    be valid tensors) and the diagnostics stay 0-dim tensors on the device, without the ratio quantiles,
    so nothing forces a GPU sync.

    >>> z = torch.zeros(2, 3)                        # at ratio 1 the surrogate is A on every token
    >>> loss, d = grpo_loss(z, z, z, torch.tensor([2.0, -1.0]), torch.ones(2, 3), 0.2, 0.28, 0.04)
    >>> float(loss), d["clip_fraction"], d["kl_mean"], d["tokens"]
    (-0.5, 0.0, 0.0, 6.0)
    >>> loss, d = grpo_loss(z, z, z, torch.tensor([2.0, -1.0]), torch.ones(2, 3), 0.2, 0.28, 0.04, checked=False)
    >>> float(loss), float(d["tokens"])
    (-0.5, 6.0)
    """
    if not checked:
        keep = mask.bool()
        loss, ratio, adv, surrogate, kl = _objective(
            logp, old_logp, ref_logp, advantages, keep, eps_low, eps_high, beta, norm, constant
        )
        return loss, _statistics(ratio, adv, keep, surrogate, kl, eps_low, eps_high)
    v.choice("norm", norm, NORMS)
    beta = v.nonnegative("beta", beta)
    lo, hi = _clip_widths(eps_low, eps_high)
    logp, old_logp = _tensor("logp", logp), _tensor("old_logp", old_logp)
    advantages, mask = _tensor("advantages", advantages), _tensor("mask", mask)
    ref_logp = None if ref_logp is None else _tensor("ref_logp", ref_logp)
    keep = _check_loss_inputs(logp, old_logp, ref_logp, advantages, mask, beta)
    if norm == "constant" and constant is not None:
        constant = v.positive("constant", constant)
    loss, ratio, adv, surrogate, kl = _objective(
        logp, old_logp, ref_logp, advantages, keep, lo, hi, beta, norm, constant
    )
    return loss, _diagnostics(ratio.detach(), adv.detach(), keep, surrogate.detach(), kl, lo, hi)


def grpo_loss_fast(*args, **kwargs):
    """Deprecated (until 0.2): ``grpo_loss(..., checked=False)``."""
    warnings.warn(
        "rlvr_lab.grpo.grpo_loss_fast is now grpo_loss(..., checked=False); the old name goes in 0.2",
        DeprecationWarning,
        stacklevel=2,
    )
    return grpo_loss(*args, **kwargs, checked=False)


def _objective(logp, old_logp, ref_logp, advantages, keep, lo, hi, beta, norm, constant):
    """Equation 4 on valid inputs: ``(loss, ratio, advantages, surrogate, kl)``."""
    m = keep.to(logp.dtype)
    # Padding content never matters: masked positions are replaced by 0 before any arithmetic.
    logp_k = torch.where(keep, logp, torch.zeros_like(logp))
    old_k = torch.where(keep, old_logp.to(logp.dtype), torch.zeros_like(logp))
    adv = advantages.to(logp.dtype)
    ratio = token_ratios(logp_k, old_k)  # r_{i,t}
    surrogate = clipped_surrogate(ratio, adv, lo, hi)  # L_{i,t}
    per_token = surrogate
    kl = None
    if ref_logp is not None:
        ref_k = torch.where(keep, ref_logp.to(logp.dtype), torch.zeros_like(logp))
        kl = kl_k3(logp_k, ref_k)  # D_{i,t}
        if beta > 0:
            per_token = surrogate - beta * kl  # L - beta_KL * D, summed per rollout below
    token_sums = (per_token * m).sum(dim=1)
    if norm == "sequence":
        objective = (token_sums / m.sum(dim=1).clamp(min=1.0)).mean()
    elif norm == "constant":
        c = float(logp.shape[1]) if constant is None else float(constant)
        objective = (token_sums / c).mean()
    else:
        objective = token_sums.sum() / m.sum()
    return -objective, ratio, adv, surrogate, kl


def _statistics(ratio, adv, keep, surrogate, kl, lo, hi) -> dict:
    """The loss's statistics over unmasked tokens as 0-dim tensors on the device (no sync): clip
    fractions (the tokens whose incentive the clip removed), the share the upper clip can act on, mean
    surrogate, token count and, with a reference, mean KL."""
    with torch.no_grad():
        a = adv[:, None].expand_as(ratio)[keep]
        r, s = ratio[keep].double(), surrogate[keep].double()
        low, high = (a < 0) & (r < 1.0 - lo), (a > 0) & (r > 1.0 + hi)
        stats = {
            "clip_fraction": (low | high).double().mean(),
            "clip_low_fraction": low.double().mean(),
            "clip_high_fraction": high.double().mean(),
            "positive_fraction": (a > 0).double().mean(),
            "surrogate_mean": s.mean(),
            "tokens": keep.sum().double(),
        }
        if kl is not None:
            stats["kl_mean"] = kl[keep].double().mean()
    return stats


def _diagnostics(ratio, adv, keep, surrogate, kl, lo, hi) -> dict:
    """:func:`_statistics` as plain floats, plus the ratio's 5/50/95 % quantiles and maximum."""
    out = {name: float(value) for name, value in _statistics(ratio, adv, keep, surrogate, kl, lo, hi).items()}
    r = ratio[keep].double()
    q = torch.quantile(r, torch.tensor([0.05, 0.5, 0.95], dtype=r.dtype, device=r.device)).tolist()
    out.update({"ratio_p05": q[0], "ratio_p50": q[1], "ratio_p95": q[2], "ratio_max": float(r.max())})
    return out


def per_token_weights(advantages, lengths, norm="sequence", constant=None):
    """Equation 5 (17.5.3): the weight each token of rollout i gets at ratio 1, per ``norm``.

    ``"sequence"``: ``A_i / |o_i|``; ``"constant"``: ``A_i / constant`` (default ``max(lengths)``, matching
    :func:`grpo_loss` on a batch padded to its longest completion); ``"token"``: ``A_i / mean(|o|)``, the
    same up to the batch-wide factor 1/B that eq 4 also has. ``lengths`` are token counts >= 1.
    Torch in gives torch out; anything else gives a numpy array.

    >>> w = per_token_weights([-1.0, -1.0], [128, 4096])
    >>> float(w[0] / w[1])                                  # the short failure is 32x heavier per token
    32.0
    >>> per_token_weights([-1.0, -1.0], [128, 4096], "constant").tolist()
    [-0.000244140625, -0.000244140625]
    """
    v.choice("norm", norm, NORMS)
    is_torch = isinstance(advantages, torch.Tensor)
    a = advantages.detach().cpu().double().numpy() if is_torch else np.asarray(v.real("advantages", advantages))
    n = (
        lengths.detach().cpu().double().numpy()
        if isinstance(lengths, torch.Tensor)
        else np.asarray(v.real("lengths", lengths, 1.0), dtype=float)
    )
    if a.ndim != 1 or a.shape != n.shape or a.size == 0:
        raise ValueError(f"advantages and lengths must be non-empty 1-D with equal shapes, got {a.shape} and {n.shape}")
    v.real("lengths", n, 1.0)
    if norm == "sequence":
        w = a / n
    elif norm == "constant":
        w = a / (n.max() if constant is None else v.positive("constant", constant))
    else:
        w = a / n.mean()
    return torch.as_tensor(w, dtype=advantages.dtype, device=advantages.device) if is_torch else w


def token_entropy(logits, mask=None, reduce="mean") -> torch.Tensor:
    """Token entropy (17.8.1): ``H = -sum_v pi(v|x) log pi(v|x)`` in nats, with 0 log 0 = 0.

    ``logits`` (..., V); ``mask`` the leading shape (1 = count the position). ``reduce="mean"`` returns the
    mean over unmasked positions (0-d tensor), ``"none"`` the per-position entropies with masked positions
    set to 0. Uses log_softmax, so large logits are safe. This is the entropy of the distribution the logits
    define: divide by the sampling temperature first for the post-transform distribution.

    >>> round(float(token_entropy(torch.zeros(1, 2, 4))), 4) == round(math.log(4), 4)
    True
    >>> token_entropy(torch.tensor([[[0.0, -float("inf")], [1e4, 0.0]]]), reduce="none").tolist()
    [[0.0, 0.0]]
    """
    v.choice("reduce", reduce, ("mean", "none"))
    logits = _tensor("logits", logits)
    if logits.dim() < 1 or logits.shape[-1] == 0:
        raise ValueError(f"logits must have a non-empty last (vocabulary) axis, got shape {tuple(logits.shape)}")
    logp = torch.log_softmax(logits, dim=-1)
    p = logp.exp()
    ent = torch.where(p > 0, -p * logp, torch.zeros_like(p)).sum(dim=-1) + 0.0  # + 0.0 turns -0.0 into 0.0
    if mask is None:
        keep = torch.ones_like(ent, dtype=torch.bool)
    else:
        mask = _tensor("mask", mask)
        _same_shape(**{"logits.shape[:-1]": ent, "mask": mask})
        keep = mask.bool()
    if reduce == "none":
        return torch.where(keep, ent, torch.zeros_like(ent))
    if not bool(keep.any()):
        raise ValueError("mask must select at least one position")
    return ent[keep].mean()
