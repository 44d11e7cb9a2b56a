"""Rewards and their error rates: sections 17.3 (eq 1, composite score), 17.5.4 (contrast), 17.7.2
(all-pass rule, stop-on-first-rejection), 17.9.6 (pass@k, pass^k).

numpy only; importing this module never imports torch. Scalars in give a float out; numpy arrays in give
arrays out (elementwise), so a notebook can sweep a parameter in one call. Bad input raises ValueError
naming the argument and its allowed range.

>>> round(false_accept_share(0.10, 0.025), 4)
0.1837
>>> round(expected_trials(0.98, 3), 4)
2.9404
"""

from __future__ import annotations

from fractions import Fraction
from math import comb, sqrt

import numpy as np

from rlvr_lab import validation as v


def false_accept_share(rho, alpha, beta=1.0):
    """Equation 1 (17.3.2): share of rewarded rollouts that fail the criterion, ``Pr(fail | accepted)``.

    ``(1-rho)*alpha / (rho*beta + (1-rho)*alpha)``. ``rho`` is the policy's true pass rate, ``alpha`` the
    verifier's false-acceptance rate and ``beta`` its true-acceptance rate; all probabilities in [0, 1].
    Dimensionless, in [0, 1]. Undefined (ValueError) when nothing is ever accepted.

    >>> round(false_accept_share(0.10, 0.025, 1.0), 4)   # napkin math 17.1: 18.4 %
    0.1837
    >>> false_accept_share(0.0, 0.025)                    # no true passes: every reward is false
    1.0
    """
    rho, alpha, beta = v.probability("rho", rho), v.probability("alpha", alpha), v.probability("beta", beta)
    true_acc = np.multiply(rho, beta)
    false_acc = np.multiply(np.subtract(1.0, rho), alpha)
    total = true_acc + false_acc
    if np.any(total <= 0):
        raise ValueError(
            "the acceptance probability rho*beta + (1-rho)*alpha must be > 0 "
            "(some of rho, alpha, beta must be positive)"
        )
    return v.scalar_out(false_acc / total)


def composite_reward(correct, format_score, length_frac, w_format, w_length):
    """Composite terminal score (17.3.3): ``R = C + w_format*F - w_length*len``.

    ``correct`` C in {0, 1} (bools accepted), ``format_score`` F in [0, 1], ``length_frac`` = generated
    tokens / enforced cap, >= 0; weights >= 0. Dimensionless score. A ``length_frac`` above 1 is accepted
    on purpose: it is what an *unenforced* cap produces, and it is exactly the case in which
    :func:`pass_outranks_failure` stops guaranteeing the order.

    >>> composite_reward(1, 0.0, 1.0, 0.2, 0.3)   # the worst possible pass
    0.7
    >>> composite_reward(0, 1.0, 0.0, 0.2, 0.3)   # the best possible failure
    0.2
    """
    c = np.asarray(correct, dtype=float)
    if not np.all((c == 0.0) | (c == 1.0)):
        raise ValueError(f"correct must be 0 or 1 (a binary outcome), got {v._show(correct)}")
    f = v.probability("format_score", format_score)
    ln = v.nonnegative("length_frac", length_frac)
    wf, wl = v.nonnegative("w_format", w_format), v.nonnegative("w_length", w_length)
    return v.scalar_out(c + wf * np.asarray(f) - wl * np.asarray(ln))


def ordering_margin(w_format, w_length):
    """Worst pass minus best failure (17.3.3): ``(1 - w_length) - w_format``, with len, F in [0, 1].

    Positive means every pass outranks every failure; zero allows a tie. Dimensionless (reward units).

    >>> round(ordering_margin(0.2, 0.3), 10)
    0.5
    """
    wf, wl = v.nonnegative("w_format", w_format), v.nonnegative("w_length", w_length)
    return v.scalar_out(1.0 - (np.asarray(wf) + np.asarray(wl)))


def pass_outranks_failure(w_format, w_length) -> bool:
    """The strict priority bound of 17.3.3: ``w_format + w_length < 1`` (holds only while len <= 1).

    The sum is rounded to 12 decimals first, so weights such as 0.3 and 0.7 count as the tie they are.

    >>> pass_outranks_failure(0.2, 0.3), pass_outranks_failure(0.4, 0.6), pass_outranks_failure(0.3, 0.7)
    (True, False, False)
    """
    wf, wl = v.nonnegative("w_format", w_format), v.nonnegative("w_length", w_length)
    return bool(np.all(np.round(np.asarray(wf) + np.asarray(wl), 12) < 1.0))


def all_pass_probability(q, trials):
    """All-pass rule (17.7.2): a candidate with per-trial pass probability ``q`` passes ``trials`` = K
    independent trials with probability ``q**K`` (K counts every trial, the first included).

    >>> round(all_pass_probability(0.20, 3), 6), round(1 - all_pass_probability(0.98, 3), 6)
    (0.008, 0.058808)
    """
    q = v.probability("q", q)
    k = v.integer("trials", trials, 1)
    return v.scalar_out(np.power(q, k))


def expected_trials(q, trials, weights=None):
    """Expected executed trials under stop-on-first-rejection (17.7.2): ``E[N|q] = sum_{j<K} q**j``.

    Trial j+1 runs only if the first j passed. With ``weights`` (same shape as ``q``, >= 0, not all 0),
    ``q`` is a population mixture and the result is the weighted mean of ``E[N|q]`` over it, the
    quantity a verifier pool must be sized for; it is never below ``E[N|mean q]`` because E is convex.
    Units: trials per candidate.

    >>> round(expected_trials(0.20, 3), 6), round(expected_trials(0.98, 3), 6)
    (1.24, 2.9404)
    >>> round(expected_trials([0.2, 0.98], 3, weights=[0.5, 0.5]), 4)   # mixture, not E[N | 0.59]
    2.0902
    """
    q = v.probability("q", q)
    k = v.integer("trials", trials, 1)
    qa = np.asarray(q, dtype=float)
    per_q = sum(np.power(qa, j) for j in range(k))
    if weights is None:
        return v.scalar_out(per_q)
    w = np.asarray(v.nonnegative("weights", weights), dtype=float)
    if w.shape != qa.shape:
        raise ValueError(f"weights must have the same shape as q {qa.shape}, got {w.shape}")
    if w.sum() <= 0:
        raise ValueError("weights must be >= 0 with a positive sum")
    return float(np.sum(w * per_q) / w.sum())


def contrast_probability(group_size, p):
    """Contrast probability (17.5.4): ``P_c(G, p) = 1 - p**G - (1-p)**G``, the chance that a group of G
    independent attempts holds at least one pass and one failure. Dimensionless.

    >>> round(contrast_probability(2, 0.10), 2), round(1 - contrast_probability(8, 0.05), 2)
    (0.18, 0.66)
    """
    g = v.integer("group_size", group_size, 1)
    p = v.probability("p", p)
    pa = np.asarray(p, dtype=float)
    return v.scalar_out(1.0 - np.power(pa, g) - np.power(1.0 - pa, g))


def rollouts_per_informative_group(group_size, p):
    """Rollouts spent per group that carries contrast (17.5.4, table 5): ``G / P_c(G, p)``.

    Returns ``inf`` when no group can carry contrast (p in {0, 1} or G = 1): no finite spend buys one.

    >>> round(rollouts_per_informative_group(8, 0.05), 1), round(rollouts_per_informative_group(8, 0.5), 1)
    (23.8, 8.1)
    """
    g = v.integer("group_size", group_size, 1)
    pc = np.asarray(contrast_probability(g, p), dtype=float)
    with np.errstate(divide="ignore"):
        out = np.where(pc > 0, g / np.where(pc > 0, pc, 1.0), np.inf)
    return v.scalar_out(out)


def pass_at_k(n, c, k) -> float:
    """Unbiased pass@k (17.9.6) from ``n`` samples of which ``c`` passed: ``1 - C(n-c, k) / C(n, k)``.

    The probability that a random k-subset of the n samples holds at least one pass. Exact (rational
    arithmetic), then converted to float. Requires 0 <= c <= n and 1 <= k <= n.

    >>> pass_at_k(10, 3, 1), round(pass_at_k(10, 3, 5), 6)
    (0.3, 0.916667)
    """
    n = v.integer("n", n, 1)
    c = v.integer("c", c, 0, n)
    k = v.integer("k", k, 1, n)
    return float(1 - Fraction(comb(n - c, k), comb(n, k)))


def pass_hat_k_unbiased(n, c, k) -> float:
    """Unbiased pass^k (17.9.6) from ``n`` samples with ``c`` passes: ``C(c, k) / C(n, k)``.

    The probability that a random k-subset of the n samples passes entirely; its expectation over the
    samples is exactly ``p**k``, whereas the plug-in ``(c/n)**k`` is biased upwards (Jensen). Exact
    rational arithmetic, then float. Requires 0 <= c <= n and 1 <= k <= n.

    >>> pass_hat_k_unbiased(16, 4, 8), round(pass_hat_k_unbiased(10, 8, 3), 6)
    (0.0, 0.466667)
    """
    n = v.integer("n", n, 1)
    c = v.integer("c", c, 0, n)
    k = v.integer("k", k, 1, n)
    return float(Fraction(comb(c, k), comb(n, k)))


def pass_hat_k(p, k):
    """pass^k (17.9.6): the chance that all k independent runs of a task pass, ``p**k`` for a *known* p.

    From samples, use :func:`pass_hat_k_unbiased` (plugging ``c/n`` in here overestimates it).

    >>> round(pass_hat_k(0.9, 3), 3)
    0.729
    """
    p = v.probability("p", p)
    k = v.integer("k", k, 1)
    return v.scalar_out(np.power(p, k))


def mixture_trials(trials: int, incorrect_share: float, q_incorrect: float, q_correct: float) -> tuple[float, float]:
    """Expected trials of a two-class candidate mixture and the (wrong) mean-q plug-in (17.7.2, 17.9.5).

    Returns ``(E over the mixture, E at the mixture's mean q)``; the first is never smaller (convexity).

    >>> [round(x, 4) for x in mixture_trials(3, 0.5, 0.2, 0.98)]
    [2.0902, 1.9381]
    """
    share = v.probability("incorrect_share", incorrect_share)
    q = [q_incorrect, q_correct]
    wts = [share, 1.0 - share]
    mix = expected_trials(q, trials, weights=wts)
    mean_q = share * q_incorrect + (1.0 - share) * q_correct
    return mix, expected_trials(mean_q, trials)


def wilson_interval(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval (95 % at ``z = 1.96``) of a pass rate measured as ``successes`` of ``n``.

    The calibration of 17.7.2 and the pass@k estimates of 17.9.6 report it; unlike ``p +- z se`` it stays
    inside [0, 1] and is not empty at 0 or n successes.

    >>> [round(x, 3) for x in wilson_interval(8, 10)]
    [0.49, 0.943]
    """
    n = v.integer("n", n, 1)
    successes = v.integer("successes", successes, 0)
    if successes > n:
        raise ValueError(f"successes must be <= n ({n}), got {successes}")
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)
