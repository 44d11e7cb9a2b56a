"""Figures of what a chapter measured, or of several worked numbers side by side (chapters 5-7, 9, 10).

Where :mod:`rlvr_lab.figures.relations` draws one closed-form relation, these draw a recorded rollout
(17.6), the exploit gallery (17.7.1), the all-pass rule measured (17.7.2), length bias (17.8.2),
clip-higher (17.8.3), the case study (17.10) and the chapter's key numbers (17.11). No pyplot.

>>> length_bias_figure().axes[0].get_xscale()
'log'
"""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from rlvr_lab import advantages, cycle_time, rewards
from rlvr_lab.equations import eq
from rlvr_lab.figures.style import FAIL_COLOR, FIG_WIDTH, MUTED, NEUTRAL, PASS_COLOR, BookFigure
from rlvr_lab.figures.style import axes_row as _figure

VERDICT_COLORS = {"pass": "#d62728", "fail": "#2ca02c", "pending": "#f2b134", "unknown": "#9467bd"}
"""Exploit-gallery colours: a pass is red here, because every exploit that passes is a paid hack."""


def rollout_roles_figure(record) -> Figure:
    """Token roles of one recorded multi-turn rollout (17.6): prompt, each call's sampled tokens, observations.

    ``record`` is a :class:`rlvr_lab.records.RolloutRecord`; only the sampled stretches enter the loss.
    """
    roles = [0] * len(record.invocations[0].prefix_ids)
    for call in record.invocations:
        roles += [1 + 2 * call.call_id] * len(call.completion_ids)
        roles += [2 + 2 * call.call_id] * len(call.observation_ids)
    role = np.array(roles)
    fig = BookFigure(figsize=(FIG_WIDTH, 3.0), layout="constrained")
    ax = fig.add_subplot()
    sampled = ["#1f77b4", "#2ca02c", "#9467bd", "#8c564b"]
    for value in range(int(role.max()) + 1):
        xs = np.flatnonzero(role == value)
        if not len(xs):
            continue
        if value == 0:
            name, color = "prompt (context)", "#c7c7c7"
        elif value % 2:
            name, color = f"call {(value - 1) // 2}: sampled", sampled[((value - 1) // 2) % len(sampled)]
        else:
            name, color = "observation (context)", "#f2b134"
        ax.bar(xs, np.ones_like(xs), width=1.0, color=color, label=f"{name}: {len(xs)}")
    handles, labels = ax.get_legend_handles_labels()
    unique = dict(zip(labels, handles))
    ax.set(yticks=[], xlim=(0, len(role)), xlabel="position in the flattened rollout (tokens)")
    ax.legend(
        unique.values(),
        unique.keys(),
        ncol=2,
        fontsize=10,
        loc="lower center",
        bbox_to_anchor=(0.5, 1.0),
        frameon=False,
    )
    fig.suptitle("Only the sampled tokens enter the loss\nand its denominator |o_i|", fontsize=11)
    return fig


def exploit_gallery_figure(exploits, naive, isolated) -> Figure:
    """The exploit gallery (17.7.1): each exploit's verdict under the naive harness and the isolated verifier.

    ``exploits`` names the rows; ``naive`` and ``isolated`` give each row's outcome (``pass``, ``fail``,
    ``pending``, ``unknown``, anything else is drawn as "not run"). Red is a reward paid for a hack.

    >>> exploit_gallery_figure(["a"], ["pass"], ["fail"]).axes[0].get_xticklabels()[1].get_text()
    'isolated verifier'
    """
    exploits, naive, isolated = list(exploits), list(naive), list(isolated)
    if not len(exploits) == len(naive) == len(isolated):
        raise ValueError(
            "exploits, naive and isolated must have the same length, "
            f"got {len(exploits)}, {len(naive)}, {len(isolated)}"
        )
    fig = BookFigure(figsize=(FIG_WIDTH, 0.34 * len(exploits) + 1.2), layout="constrained")
    ax = fig.add_subplot()
    for row, outcomes in enumerate(zip(naive, isolated)):
        for col, outcome in enumerate(outcomes):
            label = outcome if outcome in VERDICT_COLORS else "not run"
            ax.add_patch(Rectangle((col, row), 0.95, 0.9, color=VERDICT_COLORS.get(label, "#bbbbbb")))
            ax.text(col + 0.47, row + 0.45, label, ha="center", va="center", color="white", fontsize=10)
    ax.set(xlim=(0, 2), ylim=(len(exploits), 0), xticks=[0.47, 1.47], yticks=np.arange(len(exploits)) + 0.45)
    ax.set_xticklabels(["naive harness", "isolated verifier"])
    ax.set_yticklabels(exploits, fontsize=10)
    fig.suptitle("The exploit gallery:\nred is a reward paid for an unrepaired race", fontsize=11)
    for side in ("top", "right", "left", "bottom"):
        ax.spines[side].set_visible(False)
    return fig


def all_pass_measured_figure(
    measured, q_bad: float = 0.20, q_good: float = 0.98, rule_runs: int = 5, max_trials: int = 8
) -> Figure:
    """The all-pass rule (17.7.2) predicted for two hypothetical patches and measured for reference patches.

    ``measured`` is a list of dicts with keys ``candidate``, ``q_hat (single trials)``, ``accepted K=3,
    measured`` and ``trials used, measured`` (chapter 6's measurement, ``rule_runs`` runs at K = 3).
    """
    ks = np.arange(1, max_trials + 1)
    fig, (a1, a2) = _figure(height=4.4)
    for q, label, color in [
        (q_bad, f"wrong patch, q = {q_bad:.2f}", FAIL_COLOR),
        (q_good, f"right patch, q = {q_good:.2f}", PASS_COLOR),
    ]:
        a1.semilogy(ks, [rewards.all_pass_probability(q, int(k)) for k in ks], "o-", color=color, label=label)
        a2.plot(ks, [rewards.expected_trials(q, int(k)) for k in ks], "o-", color=color, label=label)
    for m, color in zip(measured, ["#1f77b4", "#ff7f0e", "#9467bd"]):
        q_hat, accepted = m["q_hat (single trials)"], m["accepted K=3, measured"]
        a1.semilogy(
            ks,
            [max(rewards.all_pass_probability(q_hat, int(k)), 1e-3) for k in ks],
            "--",
            color=color,
            lw=1,
            label=f"{m['candidate']}: q_hat = {q_hat:.2f}, predicted",
        )
        a1.scatter(
            [3],
            [max(accepted, 1e-3)],
            marker="*" if accepted > 0 else "v",
            s=130,
            color=color,
            zorder=5,
            label=f"{m['candidate']}: measured at K = 3 ({accepted:.0%} of {rule_runs})",
        )
        a2.scatter(
            [3],
            [m["trials used, measured"]],
            marker="*",
            s=130,
            color=color,
            zorder=5,
            label=f"{m['candidate']}: measured trials at K = 3",
        )
    a1.set(
        xlabel="K (trials, all must pass)",
        ylabel="P(accept) = q^K",
        ylim=(1e-3, 1.5),
        title="Acceptance under the all-pass rule",
    )
    a2.plot(ks, ks, ":", color=NEUTRAL, label="run every trial")
    a2.set(xlabel="K", ylabel="expected trials", title="Work with stop-on-first-rejection")
    for ax in (a1, a2):
        ax.legend(fontsize=10, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=1, frameon=False)
    return fig


def length_bias_figure(lengths=None, constant: int = 2048) -> Figure:
    """Length bias of the per-rollout divisor (17.8.2, the book's equation ``ch7-weight``): |per-token weight| against |o_i|.

    With the divisor |o_i| a failure's per-token penalty and a success's per-token reward both fall as
    1/|o_i|; a constant divisor (``constant`` tokens) weighs every length alike.
    """
    from rlvr_lab.grpo import per_token_weights  # torch, imported only when this figure is drawn

    L = np.arange(64, 4097, 32) if lengths is None else np.asarray(lengths)
    fig = BookFigure(figsize=(FIG_WIDTH, 3.8), layout="constrained")
    ax = fig.add_subplot()
    ax.grid(True, alpha=0.3)
    ax.loglog(
        L,
        -per_token_weights(-np.ones_like(L, float), L, "sequence"),
        color=FAIL_COLOR,
        label="failure, per-rollout divisor",
    )
    ax.loglog(
        L,
        per_token_weights(np.ones_like(L, float), L, "sequence"),
        "--",
        color=PASS_COLOR,
        label="success, per-rollout divisor",
    )
    ax.loglog(
        L,
        np.full_like(L, 1 / constant, dtype=float),
        ":",
        color=NEUTRAL,
        label=f"either, constant divisor L = {constant}",
    )
    ax.set(
        xlabel="rollout length |o_i| (policy tokens)",
        ylabel="|per-token weight| at ratio 1",
        title=f"Length bias, {eq('ch7-weight')}:\nlong failures are cheap, short successes are rich",
    )
    ax.legend(fontsize=10)
    return fig


def clip_higher_figure(settings=((0.2, 0.2), (0.2, 0.28))) -> Figure:
    """The clipped surrogate (17.8.3) for each (eps_low, eps_high) in ``settings``, for A = +1 and A = -1."""
    from rlvr_lab.grpo import clipped_surrogate  # torch, imported only when this figure is drawn

    r = np.linspace(0.5, 1.6, 221)
    fig, axes = _figure(height=3.0)
    for ax, a in zip(axes, [1.0, -1.0]):
        for (lo, hi), style in zip(settings, ["-", "--", "-.", ":"]):
            ax.plot(r, clipped_surrogate(r, a, lo, hi).numpy(), style, label=f"eps_low {lo}, eps_high {hi}")
        ax.plot(r, r * a, ":", color=MUTED, label="unclipped r·A")
        ax.axvline(1.0, color="k", lw=0.5)
        ax.set(xlabel="token ratio r", title=f"advantage A = {a:+.0f}")
        ax.legend(fontsize=10)
    axes[0].set_ylabel("surrogate L(r)")
    fig.suptitle(
        f"The clipped surrogate, {eq('ch4-surrogate')}, flattens\nonly in the advantage's direction", fontsize=11
    )
    return fig


def case_study_figure(
    names, trial_outcomes, advantages, rewards_, log_gap_growth, gap_labels=("vs rl_trial_01", "vs rl_trial_03")
) -> Figure:
    """One repair group through the loop (17.10): verdict trials, group coefficients, log-likelihood gaps.

    ``trial_outcomes[i]`` lists rollout i's trial outcomes (``pass``/``fail``; missing trials were not run);
    ``advantages`` and ``rewards_`` are the group's coefficients and rewards; ``log_gap_growth`` is the change
    of log p(pass) - log p(failure) after one GRPO step, one value per label of ``gap_labels``.
    """
    names = list(names)
    k = max((len(t) for t in trial_outcomes), default=1)
    grid = np.full((len(names), max(k, 1)), np.nan)
    for row, outcomes in enumerate(trial_outcomes):
        for col, outcome in enumerate(outcomes):
            grid[row, col] = 1.0 if outcome == "pass" else 0.0
    fig, axes = _figure(ncols=3, height=2.8)
    axes[0].imshow(grid, cmap="RdYlGn", vmin=0, vmax=1, aspect="auto")
    axes[0].grid(False)
    axes[0].set_xticks(range(grid.shape[1]))
    axes[0].set_xticklabels([f"trial {j + 1}" for j in range(grid.shape[1])], fontsize=10)
    axes[0].set_yticks(range(len(names)))
    axes[0].set_yticklabels(names, fontsize=10)
    axes[0].set_title("1 · verdict trials (grey: not run)", fontsize=10)
    axes[0].set_facecolor("#dddddd")
    axes[1].bar(names, advantages, color=[PASS_COLOR if r == 1.0 else FAIL_COLOR for r in rewards_])
    axes[1].axhline(0, color="k", lw=0.5)
    axes[1].set_title(f"3 · group coefficients, {eq('ch4-advantage')}", fontsize=10)
    axes[1].tick_params(axis="x", labelsize=10, rotation=20)
    axes[2].bar(list(gap_labels), log_gap_growth, color=PASS_COLOR)
    axes[2].axhline(0, color="k", lw=0.5)
    axes[2].set_title("4 · change of log p(pass) − log p(fail)", fontsize=10)
    axes[2].tick_params(axis="x", labelsize=10)
    fig.suptitle("One repair group through the loop", fontsize=11)
    return fig


def key_numbers_figure(
    rho: float = 0.10, alpha: float = 0.025, group_size: int = 16, t_reset: float = 3.5, t_fast: float = 0.015
) -> Figure:
    """Four of the chapter's worked numbers on the curves they come from (17.11).

    False-accept share (17.3.2), the lone-pass coefficient sqrt(G-1) (equation ``ch4-lone-pass``), rollouts per informative
    group G / P_c (17.5.4) and the slot-capacity gain of a faster reset (eq 6 of 17.9.2, Amdahl's law).
    """
    fig = BookFigure(figsize=(FIG_WIDTH, 10.8), layout="constrained")
    ax = [fig.add_subplot(4, 1, i + 1) for i in range(4)]
    for a in ax:
        a.grid(True, alpha=0.3)
    rhos = np.linspace(0.01, 0.9, 200)
    ax[0].plot(rhos, rewards.false_accept_share(rhos, alpha), color=FAIL_COLOR)
    ax[0].scatter([rho], [rewards.false_accept_share(rho, alpha)], color=NEUTRAL, zorder=3)
    ax[0].set(xlabel="policy pass rate ρ", title=f"false share of rewards (α = {alpha:.1%})")
    gs = np.arange(2, 33)
    ax[1].plot(gs, np.sqrt(gs - 1), color=PASS_COLOR, label=f"lone pass: √(G−1), {eq('ch4-lone-pass')}")
    ax[1].scatter([group_size], [advantages.lone_pass_coefficient(group_size)], color=NEUTRAL, zorder=3)
    ax[1].set(xlabel="group size G", title="coefficient of a lone (hacked) pass")
    ax[1].legend(fontsize=10)
    ps = np.linspace(0.01, 0.99, 197)
    for g in (8, 16):
        ax[2].semilogy(ps, rewards.rollouts_per_informative_group(g, ps), label=f"G = {g}")
    for g, pp in [(8, 0.05), (16, 0.05), (8, 0.5)]:
        ax[2].scatter([pp], [rewards.rollouts_per_informative_group(g, pp)], color=NEUTRAL, zorder=3)
    ax[2].set(xlabel="pass rate p", title="rollouts per informative group G / P_c")
    ax[2].legend(fontsize=10)
    cold = cycle_time.cycle_time(20, 0.12, 0.08, 0.5, t_reset)
    speedups = np.logspace(0, 3.7, 120)
    ax[3].semilogx(speedups, [cold / cycle_time.cycle_time(20, 0.12, 0.08, 0.5, t_reset / s) for s in speedups])
    ax[3].axhline(cold / cycle_time.cycle_time(20, 0.12, 0.08, 0.5, 0.0), color=MUTED, ls=":", label="no reset at all")
    ax[3].scatter(
        [t_reset / t_fast], [cold / cycle_time.cycle_time(20, 0.12, 0.08, 0.5, t_fast)], color=NEUTRAL, zorder=3
    )
    ax[3].set(xlabel="reset speed-up (×)", title="slot capacity gain (Amdahl)")
    ax[3].legend(fontsize=10)
    return fig


FIGURES = (
    rollout_roles_figure,
    exploit_gallery_figure,
    all_pass_measured_figure,
    length_bias_figure,
    clip_higher_figure,
    case_study_figure,
    key_numbers_figure,
)
"""Every figure of this module, in chapter order."""
