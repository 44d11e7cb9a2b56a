"""Figures of the rollout fleet (17.9): slot cycle (eq 6), group barrier (eq 7), staleness admission
(eq 8) and verifier pool sizing by Little's law (eq 9); every number from :mod:`rlvr_lab.cycle_time`.

>>> len(cycle_figure().axes)
2
"""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from rlvr_lab import cycle_time
from rlvr_lab.cycle_time import admitted_fraction
from rlvr_lab.equations import eq
from rlvr_lab.figures.style import ACCENT, FAIL_COLOR, FIG_WIDTH, MUTED, NEUTRAL, PASS_COLOR, BookFigure
from rlvr_lab.figures.style import axes_row as _figure
from rlvr_lab.figures.style import mark_point as _mark
from rlvr_lab.rewards import mixture_trials


def cycle_figure(
    horizon: int = 20,
    t_model: float = 0.12,
    t_tool: float = 0.08,
    t_assess: float = 0.5,
    t_reset: float = 3.5,
    slots: int = 256,
) -> Figure:
    """Slot cycle and pool capacity (eq 6, 17.9.2, napkin math 17.6) against the reset time.

    Left: episodes per hour against ``t_reset`` (log axis) with the no-reset ceiling (Amdahl) and the
    chosen reset marked; right: the chosen cycle split into model, tool, assessment and reset time.

    >>> cycle_figure().axes[0].get_ylabel()
    'pool capacity (episodes / hour)'
    """
    resets = np.logspace(-3, 1.3, 200)
    caps = cycle_time.pool_capacity_per_hour(slots, cycle_time.cycle_time(horizon, t_model, t_tool, t_assess, resets))
    ceiling = cycle_time.pool_capacity_per_hour(slots, cycle_time.cycle_time(horizon, t_model, t_tool, t_assess, 0.0))
    fig, (ax1, ax2) = _figure()
    ax1.plot(resets, caps, color=NEUTRAL, lw=2, label=f"{slots} slots")
    ax1.axhline(ceiling, color=PASS_COLOR, ls="--", lw=1.2, label=f"zero-reset ceiling {ceiling:,.0f}/h")
    cyc = cycle_time.cycle_time(horizon, t_model, t_tool, t_assess, t_reset)
    cap = cycle_time.pool_capacity_per_hour(slots, cyc)
    _mark(ax1, t_reset, cap, f"reset {t_reset:g} s: {cap:,.0f}/h", offset=(10, -18))
    ax1.set(
        xscale="log",
        xlabel="reset time t_reset (s)",
        ylabel="pool capacity (episodes / hour)",
        title=f"Cycle, {eq('ch8-cycle')}: {cyc:.3f} s",
        ylim=(0, ceiling * 1.1),
    )
    ax1.legend(fontsize=10, loc="lower left")
    parts = [
        ("model", horizon * t_model, "#219ebc"),
        ("tool", horizon * t_tool, "#8ecae6"),
        ("assess", t_assess, ACCENT),
        ("reset", t_reset, FAIL_COLOR),
    ]
    left = 0.0
    for name, dur, color in parts:
        ax2.barh([0], [dur], left=[left], color=color, label=f"{name} {dur:.3g} s")
        left += dur
    ax2.set_yticks([])
    ax2.set(xlabel="seconds per episode", title=f"One slot cycle: reset share {100 * t_reset / cyc:.1f} %")
    ax2.legend(fontsize=10, loc="upper center", ncol=2, bbox_to_anchor=(0.5, -0.25))
    return fig


def barrier_figure(durations=(0.2, 3.0, 3.52, 16.8)) -> Figure:
    """A synchronous group barrier (eq 7, 17.9.3): busy and idle time of each slot until the slowest ends.

    >>> barrier_figure().axes[0].get_title()
    'Group barrier: 65 % of reserved slot time idle'
    """
    d = np.asarray(durations, dtype=float)
    step = cycle_time.barrier_step_time(d)
    idle = cycle_time.barrier_idle_fraction(d)
    fig = BookFigure(figsize=(FIG_WIDTH, 3.4), layout="constrained")
    ax = fig.add_subplot(1, 1, 1)
    y = np.arange(d.size)
    ax.barh(y, d, color=NEUTRAL, label="rollout running")
    ax.barh(y, step - d, left=d, color=ACCENT, alpha=0.6, label="slot held idle")
    ax.axvline(step, color=FAIL_COLOR, ls="--", lw=1.2)
    ax.set_yticks(y, [f"member {i + 1}" for i in y])
    ax.set(xlabel="seconds", title=f"Group barrier: {100 * idle:.0f} % of reserved slot time idle")
    ax.legend(fontsize=10, loc="lower right")
    return fig


def staleness_figure(
    step_s: float = 30.0, max_lag: int = 2, ages=(20.0, 60.0, 150.0), weights=(0.60, 0.30, 0.10)
) -> Figure:
    """Version-checked admission (eq 8, 17.9.4) for a mix of rollout ages.

    Left: the admitted fraction of rollouts (ages ``ages`` s with shares ``weights``) against the trainer
    step time, for lag bounds 0..4, the chosen (``step_s``, ``max_lag``) marked. Right: each age class's
    version lag at ``step_s`` against the bound.

    >>> staleness_figure().axes[1].get_xlabel()
    'rollout age at admission (s)'
    """
    ages_a = np.asarray(ages, dtype=float)
    w = np.asarray(weights, dtype=float)
    steps = np.linspace(5, 250, 246)
    fig, (ax1, ax2) = _figure()
    for bound in range(0, 5):
        frac = [admitted_fraction(s, bound, ages_a, w) for s in steps]
        ax1.plot(steps, frac, lw=2.4 if bound == max_lag else 1.0, label=f"lag <= {bound}")
    f = admitted_fraction(step_s, max_lag, ages_a, w)
    _mark(ax1, step_s, f, f"{100 * f:.0f} % admitted", offset=(10, -18))
    ax1.set(
        xlabel="trainer step time T_step (s)",
        ylabel="admitted fraction",
        ylim=(0, 1.05),
        title=f"Admission under a staleness bound, {eq('ch8-lag')}",
    )
    ax1.legend(fontsize=10, loc="lower right")
    lags = [cycle_time.version_lag(a, step_s) for a in ages_a]
    colors = [PASS_COLOR if cycle_time.admit(a, step_s, max_lag) else FAIL_COLOR for a in ages_a]
    ax2.bar([f"{a:g}" for a in ages_a], lags, color=colors)
    ax2.axhline(max_lag + 0.5, color=NEUTRAL, ls="--", lw=1.2, label=f"bound {max_lag}")
    for i, (lag, share) in enumerate(zip(lags, w)):
        ax2.annotate(
            f"lag {lag}\n{100 * share / w.sum():.0f} %",
            (i, lag),
            textcoords="offset points",
            xytext=(0, 3),
            ha="center",
            fontsize=10,
        )
    ax2.set(
        xlabel="rollout age at admission (s)",
        ylabel="version lag (updates)",
        title=f"T_step = {step_s:g} s",
        ylim=(0, max(max(lags), max_lag) + 1.8),
    )
    ax2.legend(fontsize=10, loc="upper left")
    return fig


def verifier_pool_figure(
    arrival_per_s: float = 32.0,
    trials: int = 3,
    trial_s: float = 8.0,
    target_utilization: float = 0.8,
    incorrect_share: float = 0.5,
    q_incorrect: float = 0.2,
    q_correct: float = 0.98,
) -> Figure:
    """Verifier pool sizing (eq 9, 17.9.5): workers against target utilisation.

    Curves: every trial run (K per trajectory), stop-on-first-rejection over the candidate mixture
    (``incorrect_share`` at ``q_incorrect``, the rest at ``q_correct``), and the mistaken plug-in of the
    mean q. The chosen target is marked on the all-trials curve.

    >>> verifier_pool_figure().axes[0].get_xlabel()
    'target utilisation'
    """
    expected, plugin = mixture_trials(trials, incorrect_share, q_incorrect, q_correct)
    targets = np.linspace(0.3, 0.98, 200)
    fig, (ax1, ax2) = _figure()
    for label, k, color, ls in [
        (f"all {trials} trials", trials, NEUTRAL, "-"),
        (f"stop on first rejection ({expected:.2f})", expected, PASS_COLOR, "-"),
        (f"mean-q plug-in ({plugin:.2f}, too few)", plugin, FAIL_COLOR, ":"),
    ]:
        ax1.plot(
            targets,
            [cycle_time.verifier_workers(arrival_per_s, k, trial_s, t) for t in targets],
            color=color,
            ls=ls,
            lw=2,
            label=label,
        )
    w = cycle_time.verifier_workers(arrival_per_s, trials, trial_s, target_utilization)
    _mark(ax1, target_utilization, w, f"{w:,} workers")
    ax1.set(
        xlabel="target utilisation",
        ylabel="workers to provision",
        title=f"{eq('ch8-workers').capitalize()}: lambda = {arrival_per_s:g}/s, t_v = {trial_s:g} s",
    )
    ax1.legend(fontsize=10)
    names = ["1 trial", f"{trials} trials", "stop-first", f"/ {target_utilization:g}"]
    vals = [
        cycle_time.verifier_demand(arrival_per_s, 1, trial_s),
        cycle_time.verifier_demand(arrival_per_s, trials, trial_s),
        cycle_time.verifier_demand(arrival_per_s, expected, trial_s),
        w,
    ]
    ax2.bar(names, vals, color=[MUTED, NEUTRAL, PASS_COLOR, ACCENT])
    for i, val in enumerate(vals):
        ax2.annotate(f"{val:,.0f}", (i, val), textcoords="offset points", xytext=(0, 3), ha="center", fontsize=10)
    ax2.set(ylabel="busy / provisioned workers", title="Little's law: demand = lambda K t_v")
    return fig
