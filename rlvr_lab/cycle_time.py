"""Fleet arithmetic: section 17.9 (eq 6 slot cycle, eq 7 group barrier, eq 8 version lag, eq 9 verifier pool).

numpy only; importing this module never imports torch. Times are in seconds, rates per second unless a
name says otherwise. The relations assume constant stage durations, serial slots and a steady trainer,
as the chapter does.

>>> cycle_time(20, 0.12, 0.08, 0.5, 3.5)
8.0
>>> verifier_workers(32, 3, 8, 0.8)
960
"""

from __future__ import annotations

import math

import numpy as np

from rlvr_lab import validation as v


def cycle_time(horizon, t_model, t_tool, t_assess, t_reset):
    """Equation 6 (17.9.2): serial slot cycle ``T_cycle = H*(t_model + t_tool) + t_assess + t_reset`` (s).

    ``horizon`` H in turns (>= 1); every time in seconds, >= 0. Arrays broadcast (e.g. a sweep of t_reset).

    >>> cycle_time(20, 0.12, 0.08, 0.5, 3.5), round(cycle_time(20, 0.12, 0.08, 0.5, 0.015), 3)
    (8.0, 4.515)
    """
    h = v.integer("horizon", horizon, 1)
    tm, tt = v.nonnegative("t_model", t_model), v.nonnegative("t_tool", t_tool)
    ta, tr = v.nonnegative("t_assess", t_assess), v.nonnegative("t_reset", t_reset)
    return v.scalar_out(h * (np.asarray(tm) + tt) + ta + tr)


def pool_capacity_per_hour(slots, cycle_s):
    """Idealised pool capacity (17.9.2): ``slots * 3600 / T_cycle`` episodes per hour.

    >>> pool_capacity_per_hour(256, 8.0)
    115200.0
    """
    s = v.integer("slots", slots, 1)
    c = v.positive("cycle_s", cycle_s)
    return v.scalar_out(s * 3600.0 / np.asarray(c))


def barrier_step_time(durations) -> float:
    """Equation 7 (17.9.3): a synchronous group step lasts as long as its slowest member, ``max_i T_i`` (s).

    >>> barrier_step_time([0.2, 3.0, 3.52, 16.8])
    16.8
    """
    return float(np.max(_durations(durations)))


def _durations(durations) -> np.ndarray:
    d = np.asarray(v.nonnegative("durations", durations), dtype=float)
    if d.ndim != 1 or d.size == 0:
        raise ValueError(f"durations must be a non-empty 1-D sequence of seconds >= 0, got shape {d.shape}")
    if d.max() <= 0:
        raise ValueError("durations must include at least one duration > 0")
    return d


def barrier_idle_fraction(durations) -> float:
    """Idle share of reserved slot time under a group barrier (eq 7): ``1 - sum T_i / (G * max T_i)``.

    Each of the G slots is held until the slowest member finishes. Dimensionless, in [0, 1).

    >>> round(barrier_idle_fraction([0.2, 3.0, 3.52, 16.8]), 2)   # 0.2 s .. 16.8 s strands 65 %
    0.65
    """
    d = _durations(durations)
    return float(1.0 - d.sum() / (d.size * d.max()))


def version_lag(age_s, step_s) -> int:
    """Equation 8 (17.9.4): trainer updates elapsed while a rollout aged, ``floor(tau_admit / T_step)``.

    ``age_s`` (>= 0) runs from the first prompt token to admission; ``step_s`` (> 0) is the training step.
    The quotient is rounded to 9 decimals before the floor, as in :func:`verifier_workers`: an age that is a
    whole number of steps gives that number (in floats 0.7 / 0.1 is 6.9999999999999991).

    >>> version_lag(30, 40), version_lag(90, 40), version_lag(200, 40)
    (0, 2, 5)
    >>> version_lag(0.7, 0.1), version_lag(0.3, 0.1)
    (7, 3)
    """
    a = v.nonnegative("age_s", age_s)
    s = v.positive("step_s", step_s)
    return int(math.floor(round(a / s, 9)))


def admit(age_s, step_s, max_lag) -> bool:
    """Version-checked admission (17.9.4): admit a record iff ``version_lag(age_s, step_s) <= max_lag``.

    >>> admit(90, 40, 2), admit(200, 40, 2)
    (True, False)
    """
    bound = v.integer("max_lag", max_lag, 0)
    return version_lag(age_s, step_s) <= bound


def verifier_demand(arrival_per_s, trials, trial_s) -> float:
    """Busy verifier workers by Little's law (17.9.5): ``lambda * K * t_v`` worker-seconds per second.

    ``trials`` may be fractional: the mixture-averaged E[N|q] under stop-on-first-rejection.

    >>> verifier_demand(32, 1, 8), verifier_demand(32, 3, 8)
    (256.0, 768.0)
    """
    lam = v.nonnegative("arrival_per_s", arrival_per_s)
    k = v.real("trials", trials, 1.0)
    t = v.positive("trial_s", trial_s)
    return float(lam * k * t)


def verifier_workers(arrival_per_s, trials, trial_s, target_utilization) -> int:
    """Equation 9 (17.9.5): workers to provision, ``W = ceil(lambda * K * t_v / rho_target)``.

    ``target_utilization`` in (0, 1). ``trials`` >= 1 may be a float (expected trials of a mixture).
    The division is rounded to 9 decimals before the ceiling so 768 / 0.8 gives 960, not 961.

    >>> verifier_workers(512 / 16, 3, 8.0, 0.8)
    960
    """
    rho = v.real("target_utilization", target_utilization, 0.0, 1.0, lo_open=True, hi_open=True)
    need = verifier_demand(arrival_per_s, trials, trial_s) / rho
    return int(math.ceil(round(need, 9)))


def verifier_utilization(arrival_per_s, trials, trial_s, workers) -> float:
    """Offered utilisation of a verifier pool (eq 9): ``rho = lambda * K * t_v / W``.

    A value >= 1 means the pool cannot keep up and its queue grows without bound.

    >>> verifier_utilization(32, 3, 8, 960)
    0.8
    """
    w = v.integer("workers", workers, 1)
    return verifier_demand(arrival_per_s, trials, trial_s) / w


def admitted_fraction(step_s: float, max_lag: int, ages, weights=None) -> float:
    """Share of rollouts admitted (eq 8): weighted fraction of ``ages`` with :func:`admit` true.

    >>> admitted_fraction(40, 2, [30, 90, 200], [0.7, 0.25, 0.05])
    0.95
    """
    ages_a = np.atleast_1d(np.asarray(ages, dtype=float))
    w = np.ones_like(ages_a) if weights is None else np.asarray(weights, dtype=float)
    if w.shape != ages_a.shape or np.any(w < 0) or w.sum() <= 0:
        raise ValueError("weights must be >= 0, one per age, with a positive sum")
    ok = np.array([admit(a, step_s, max_lag) for a in ages_a], dtype=float)
    return round(float(np.sum(w * ok) / w.sum()), 12)
