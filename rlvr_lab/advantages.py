"""Group-relative advantages: equations 2 and 3 of section 17.5.1, with numpy only.

``group_advantages`` standardizes each group's rewards (eq 2); ``lone_pass_coefficient`` is the weight the
one passing rollout of a binary group of G gets (eq 3), the number that makes a rare pass count. Nothing
here needs torch, so chapter 2 and exercise 4 run without it; :mod:`rlvr_lab.grpo` re-exports these
functions and accepts torch tensors as well.

>>> group_advantages([0.0, 1.0, 0.0]).round(6).tolist()      # napkin math 17.3
[-0.707107, 1.414214, -0.707107]
>>> round(lone_pass_coefficient(16), 2)                      # eq 3, G = 16
3.87
"""

from __future__ import annotations

import math

import numpy as np

from rlvr_lab import validation as v


def group_advantages(rewards, eps=1e-8, std="population", scale="group"):
    """Equation 2 (17.5.1): ``A_i = (R_i - mean) / (std + eps)`` within each group of G rollouts.

    ``rewards`` is (G,) or a batch of groups (B, G). ``std="population"`` divides by G (the chapter's
    convention, part of the objective); ``"sample"`` divides by G-1 (TRL's convention; a group of one then
    has zero advantage). ``scale="group"`` uses each group's std, ``"batch"`` one std over every reward in
    the batch (mean still per group), ``"none"`` centers only. A tied group (every reward equal) gets
    exactly zero advantages, never NaN, whatever ``eps`` >= 0. Dimensionless; same shape as ``rewards``.

    >>> group_advantages([[1, 1, 1], [1, 0, 0]]).round(4).tolist()
    [[0.0, 0.0, 0.0], [1.4142, -0.7071, -0.7071]]
    >>> group_advantages([0.0, 1.0, 0.0], std="sample").round(4).tolist()
    [-0.5774, 1.1547, -0.5774]
    """
    v.choice("std", std, ("population", "sample"))
    v.choice("scale", scale, ("group", "batch", "none"))
    eps = v.nonnegative("eps", eps)
    try:
        arr = np.asarray(rewards, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(
            "rewards must be a non-empty (G,) or (B, G) array of numbers; ragged groups are not "
            "allowed (every group in a batch has the same size G)"
        ) from None
    if arr.ndim not in (1, 2) or arr.size == 0:
        raise ValueError(f"rewards must be a non-empty (G,) or (B, G) array of numbers, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError("rewards must be finite numbers (an unresolved reward has no place in a group)")
    r = arr if arr.ndim == 2 else arr[None, :]
    g = r.shape[1]
    centered = r - r.mean(axis=1, keepdims=True)
    ddof = 0 if std == "population" else 1
    tied = (r.max(axis=1) == r.min(axis=1))[:, None]
    if scale == "none":
        out = centered
    else:
        if g - ddof <= 0:
            denom = np.zeros((r.shape[0], 1))
        elif scale == "group":
            denom = np.sqrt((centered**2).sum(axis=1, keepdims=True) / (g - ddof))
        else:
            flat = r.ravel()
            n = flat.size - ddof
            denom = np.full((r.shape[0], 1), np.sqrt(((flat - flat.mean()) ** 2).sum() / n) if n > 0 else 0.0)
        safe = np.where(denom + eps > 0, denom + eps, 1.0)
        out = np.where(denom + eps > 0, centered / safe, 0.0)
    out = np.where(tied, 0.0, out)
    return out if arr.ndim == 2 else out[0]


def lone_pass_coefficient(group_size, eps=0.0) -> float:
    """Equation 3 (17.5.1): the coefficient of the one passing rollout in a binary group of G.

    ``(1 - 1/G) / (sqrt(G-1)/G + eps)``, one number; as eps -> 0 it tends to ``sqrt(G-1)``. The failures'
    coefficient is in :func:`lone_pass_group_coefficients`. ``group_size`` >= 2.

    >>> round(lone_pass_coefficient(16), 4), round(lone_pass_coefficient(8), 4)
    (3.873, 2.6458)
    """
    return lone_pass_group_coefficients(group_size, eps)[0]


def lone_pass_group_coefficients(group_size, eps=0.0) -> tuple[float, float]:
    """The pair for a binary group of G with exactly one pass: ``(pass, each failure)`` (eq 3 and eq 2).

    ``((1 - 1/G), -1/G)`` divided by ``(sqrt(G-1)/G + eps)``. ``group_size`` >= 2 (a lone pass needs a
    failure beside it).

    >>> [round(c, 4) for c in lone_pass_group_coefficients(16)]
    [3.873, -0.2582]
    """
    g = v.integer("group_size", group_size, 2)
    eps = v.nonnegative("eps", eps)
    denom = math.sqrt(g - 1) / g + eps
    return (1.0 - 1.0 / g) / denom, (-1.0 / g) / denom
