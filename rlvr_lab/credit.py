"""Credit across turns: section 17.4 (reward-to-go, TD residual, GAE, continuation sampling).

numpy only; importing this module never imports torch. Returns are undiscounted (gamma = 1) as in the
chapter, turns are indexed k = 0..H-1, and the terminal value V(h_H) is 0.

Continuation sampling (17.4.3, napkin math 17.2, table 3) forks M continuations after each completed
turn k in a fork set S, a subset of 1..H-1; each branch runs the remaining H-k turns (branches are not
themselves forked).

>>> continuation_tokens(30, 512, 8, "all"), continuation_tokens(30, 512, 8, [10, 20])
(1797120, 138240)
"""

from __future__ import annotations

import math

import numpy as np

from rlvr_lab import validation as v


def _vector(name: str, values) -> np.ndarray:
    arr = np.asarray(v.real(name, values), dtype=float)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D sequence of numbers, got shape {arr.shape}")
    return arr


def reward_to_go(rewards) -> np.ndarray:
    """Reward-to-go (17.4.1): ``G_k = sum_{j >= k} r_j`` for per-turn rewards ``r_0..r_{H-1}``.

    With only a terminal reward, every turn sees the same G_k = R. Reward units, shape (H,).

    >>> reward_to_go([0, 0, 1]).tolist()
    [1.0, 1.0, 1.0]
    >>> reward_to_go([0.5, 0, 1]).tolist()
    [1.5, 1.0, 1.0]
    """
    r = _vector("rewards", rewards)
    return np.cumsum(r[::-1])[::-1].copy()


def _values_with_terminal(values, horizon: int) -> np.ndarray:
    vals = _vector("values", values)
    if vals.size == horizon:
        return np.append(vals, 0.0)
    if vals.size == horizon + 1:
        return vals
    raise ValueError(
        f"values must have H = {horizon} entries (V(h_H) = 0 appended) or H + 1 = {horizon + 1}, got {vals.size}"
    )


def td_residuals(rewards, values) -> np.ndarray:
    """TD residuals (17.4.2): ``delta_k = r_k + V(h_{k+1}) - V(h_k)``, with ``V(h_H) = 0``.

    ``values`` holds V(h_0..h_{H-1}) (the terminal 0 is appended) or V(h_0..h_H). Reward units, shape (H,).

    >>> td_residuals([0, 0, 1], [0.05, 0.6, 0.6]).round(2).tolist()
    [0.55, 0.0, 0.4]
    """
    r = _vector("rewards", rewards)
    vals = _values_with_terminal(values, r.size)
    return r + vals[1:] - vals[:-1]


def gae(rewards, values, lam) -> np.ndarray:
    """Generalised advantage estimate (17.4.2, footnote 5), undiscounted: ``A_k = sum_j lam**j delta_{k+j}``.

    ``lam`` in [0, 1]: 0 gives the one-step residual, 1 gives reward-to-go minus V(h_k). Shape (H,).

    >>> gae([0, 0, 1], [0.05, 0.6, 0.6], 0.0).round(2).tolist()
    [0.55, 0.0, 0.4]
    >>> gae([0, 0, 1], [0.05, 0.6, 0.6], 1.0).round(2).tolist()
    [0.95, 0.4, 0.4]
    """
    deltas = td_residuals(rewards, values)
    lam = v.probability("lam", lam)
    out = np.empty_like(deltas)
    running = 0.0
    for k in range(deltas.size - 1, -1, -1):
        running = deltas[k] + lam * running
        out[k] = running
    return out


def fork_set(horizon, forks) -> list[int]:
    """Validate a fork schedule (17.4.3): distinct completed-turn indices in 1..H-1, or ``"all"``.

    >>> fork_set(5, "all")
    [1, 2, 3, 4]
    >>> fork_set(30, [20, 10])
    [10, 20]
    """
    h = v.integer("horizon", horizon, 1)
    if isinstance(forks, str):
        if forks != "all":
            raise ValueError(f"forks must be 'all' or an iterable of turn indices in [1, {h - 1}], got {forks!r}")
        return list(range(1, h))
    try:
        ks = [v.integer("forks", k, 1, h - 1) for k in forks]
    except TypeError:
        raise ValueError(f"forks must be 'all' or an iterable of turn indices in [1, {h - 1}], got {forks!r}") from None
    if len(set(ks)) != len(ks):
        raise ValueError(f"forks must be distinct turn indices in [1, {h - 1}], got {list(forks)!r}")
    return sorted(ks)


def continuation_branches(horizon, continuations, forks) -> int:
    """Continuation branches launched (table 3): ``M * |S|``.

    >>> continuation_branches(30, 8, "all"), continuation_branches(30, 8, [10, 20])
    (232, 16)
    """
    m = v.integer("continuations", continuations, 0)
    return m * len(fork_set(horizon, forks))


def continuation_tokens(horizon, tokens_per_turn, continuations, forks) -> int:
    """Generated tokens with continuation sampling (napkin math 17.2): ``H*n + M*n*sum_{k in S}(H - k)``.

    ``tokens_per_turn`` n, ``continuations`` M per fork, ``forks`` S (turn indices or ``"all"``).
    Counts generated output tokens only, the base trajectory included.

    >>> continuation_tokens(30, 512, 8, "all")
    1797120
    """
    h = v.integer("horizon", horizon, 1)
    n = v.integer("tokens_per_turn", tokens_per_turn, 0)
    m = v.integer("continuations", continuations, 0)
    remaining = sum(h - k for k in fork_set(h, forks))
    return h * n + m * n * remaining


def continuation_multiple(horizon, continuations, forks) -> float:
    """Generated tokens as a multiple of the base trajectory (table 3): ``1 + (M/H) * sum_{k in S}(H - k)``.

    Every boundary gives ``1 + M(H-1)/2``, which grows with H (quadratic total cost).

    >>> continuation_multiple(30, 8, "all"), continuation_multiple(30, 8, [10, 20])
    (117.0, 9.0)
    """
    h = v.integer("horizon", horizon, 1)
    m = v.integer("continuations", continuations, 0)
    remaining = sum(h - k for k in fork_set(h, forks))
    return 1.0 + m * remaining / h


def standard_error_bound(continuations) -> float:
    """Upper bound on the standard error of a mean of M returns in [0, 1] (17.4.3): ``1/(2 sqrt(M))``.

    >>> round(standard_error_bound(20), 2)
    0.11
    """
    m = v.integer("continuations", continuations, 1)
    return 1.0 / (2.0 * math.sqrt(m))


def difference_standard_error_bound(continuations) -> float:
    """Bound for the difference of two independent fork means (17.4.3): ``sqrt(2)/(2 sqrt(M))``.

    >>> round(difference_standard_error_bound(20), 2)
    0.16
    """
    return math.sqrt(2.0) * standard_error_bound(continuations)


def is_resolved(difference, continuations, factor: float = 2.0) -> bool:
    """Whether a fork-value difference clears ``factor`` (default 2) times its error bound (17.4.3).

    >>> is_resolved(0.55, 20), is_resolved(0.30, 20)   # threshold 0.32 at M = 20
    (True, False)
    """
    d = v.real("difference", difference, -1.0, 1.0)
    f = v.positive("factor", factor)
    return bool(abs(d) >= f * difference_standard_error_bound(continuations))
