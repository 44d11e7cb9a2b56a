"""Figures of single relations of chapter 17: one pure function per relation, each returning a Figure.

Each takes the quantities a reader would vary (the chapter's worked values as defaults), computes every
plotted number through the library and marks the worked point; :mod:`rlvr_lab.figures.widgets` redraws
the same figures when a slider moves. Sections: 17.2/17.5.4 contrast, 17.3.2 eq 1 false accepts, 17.3.3
composite score, 17.4.3 forks, 17.5.1 eqs 2-3, 17.5.2/17.8.3 clipping, 17.5.3 eq 5, 17.7.2 all-pass rule.

>>> fig = contrast_figure(8, 0.05)
>>> len(fig.axes)
2
"""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from rlvr_lab import validation as v
from rlvr_lab import advantages, credit, rewards
from rlvr_lab.equations import eq
from rlvr_lab.figures.style import ACCENT, FAIL_COLOR, FIG_WIDTH, MUTED, NEUTRAL, PASS_COLOR, BookFigure
from rlvr_lab.figures.style import axes_row as _figure
from rlvr_lab.figures.style import mark_point as _mark


def contrast_figure(group_size: int = 8, p: float = 0.05, group_sizes=(2, 8, 16)) -> Figure:
    """Contrast probability ``P_c(G, p)`` and rollouts per informative group ``G / P_c`` (17.5.4, table 5).

    Left: ``P_c`` against the per-attempt pass rate p for each group size in ``group_sizes`` and for
    ``group_size``; right: rollouts spent per group that carries contrast (log scale). The point
    (``group_size``, ``p``) is marked on both panels.

    >>> fig = contrast_figure(16, 0.05)
    >>> fig.axes[0].get_xlabel()
    'pass rate p per attempt'
    """
    ps = np.linspace(0.001, 0.999, 400)
    fig, (ax1, ax2) = _figure()
    sizes = sorted(set(int(g) for g in group_sizes) | {int(group_size)})
    colors = {g: c for g, c in zip(sizes, ["#8ecae6", "#219ebc", "#023047", "#fb8500", "#ffb703", MUTED])}
    for g in sizes:
        lw = 2.6 if g == group_size else 1.4
        ax1.plot(ps, rewards.contrast_probability(g, ps), lw=lw, color=colors.get(g, MUTED), label=f"G = {g}")
        ax2.plot(ps, rewards.rollouts_per_informative_group(g, ps), lw=lw, color=colors.get(g, MUTED), label=f"G = {g}")
    pc = rewards.contrast_probability(group_size, p)
    cost = rewards.rollouts_per_informative_group(group_size, p)
    _mark(ax1, p, pc, f"G={group_size}, p={p:.2f}: P_c={pc:.2f}")
    if np.isfinite(cost):
        _mark(ax2, p, cost, f"{cost:.1f} rollouts")
    ax1.set(
        xlabel="pass rate p per attempt",
        ylabel="P(group has a pass and a failure)",
        ylim=(0, 1.02),
        title=f"Contrast probability, {eq('ch1-contrast')}",
    )
    ax2.set(
        xlabel="pass rate p per attempt",
        ylabel="rollouts per informative group",
        yscale="log",
        title="Cost of contrast",
    )
    ax1.legend(fontsize=10, loc="lower center")
    ax2.legend(fontsize=10, loc="upper center")
    return fig


def false_accept_figure(
    rho: float = 0.10, alpha: float = 0.025, beta: float = 1.0, alphas=(0.005, 0.01, 0.025, 0.05, 0.1)
) -> Figure:
    """False-accept share of rewarded rollouts against the policy's pass rate (eq 1, 17.3.2).

    Left: ``Pr(fail | accepted)`` against ``rho`` (log axis) for each false-acceptance rate in ``alphas``
    and for ``alpha``, with (``rho``, share) marked. Right: expected true and false accepts per 8,192
    rollouts (napkin math 17.1's batch) at ``alpha`` as ``rho`` varies.

    >>> float(round(false_accept_figure().axes[0].get_ylim()[1], 2))
    1.02
    """
    rhos = np.logspace(-3, 0, 300)
    fig, (ax1, ax2) = _figure()
    for a in sorted(set(float(x) for x in alphas) | {float(alpha)}):
        lw = 2.6 if a == alpha else 1.2
        ax1.plot(
            rhos,
            rewards.false_accept_share(rhos, a, beta),
            lw=lw,
            label=f"alpha = {a:g}",
            color=FAIL_COLOR if a == alpha else None,
        )
    share = rewards.false_accept_share(rho, alpha, beta)
    _mark(ax1, rho, share, f"rho={rho:.3g}: {100 * share:.1f} % false", color=FAIL_COLOR)
    ax1.set(
        xscale="log",
        xlabel="policy pass rate rho (reference)",
        ylabel="Pr(fail | accepted)",
        ylim=(0, 1.02),
        title=f"False-accept share of rewards, {eq('ch2-false-share')}",
    )
    ax1.legend(fontsize=10)
    n = 8192
    ax2.plot(rhos, n * rhos * beta, color=PASS_COLOR, lw=2, label="true accepts")
    ax2.plot(rhos, n * (1 - rhos) * alpha, color=FAIL_COLOR, lw=2, label="false accepts")
    ax2.axvline(rho, color=NEUTRAL, ls=":", lw=1)
    ax2.set(
        xscale="log",
        yscale="log",
        xlabel="policy pass rate rho",
        ylabel=f"expected count in {n:,} rollouts",
        title=f"Accepts at alpha = {alpha:g}, beta = {beta:g}",
    )
    ax2.legend(fontsize=10)
    return fig


def reward_weights_figure(w_format: float = 0.2, w_length: float = 0.3) -> Figure:
    """The ordering bound of the composite score ``R = C + λ_f F - λ_ℓ len`` (17.3.3, the book's eqs (4) and (5)).

    Left: the weight plane; the shaded triangle ``w_f + w_l < 1`` is where every pass outranks every
    failure, and (``w_format``, ``w_length``) is marked. Right: the score range of passes
    ``[1 - w_l, 1 + w_f]`` and of failures ``[-w_l, w_f]`` over F, len in [0, 1]; overlap means a
    failure can outrank a pass.

    >>> reward_weights_figure(0.4, 0.7).axes[1].get_title()
    'Score ranges: overlap of 0.10'
    """
    fig, (ax1, ax2) = _figure()
    tri = np.array([[0, 0], [1, 0], [0, 1]])
    ax1.fill(tri[:, 0], tri[:, 1], color=PASS_COLOR, alpha=0.2, label="λ_f + λ_ℓ < 1: order kept")
    ax1.plot([0, 1], [1, 0], color=PASS_COLOR, lw=1.5)
    ok = rewards.pass_outranks_failure(w_format, w_length)
    margin = rewards.ordering_margin(w_format, w_length)
    _mark(ax1, w_format, w_length, f"margin {margin:+.2f}", color=PASS_COLOR if ok else FAIL_COLOR)
    ax1.set(
        xlim=(0, 1.2),
        ylim=(0, 1.2),
        xlabel="format weight λ_f",
        ylabel="length weight λ_ℓ",
        title=f"Weights that keep every pass\nabove every failure, {eq('ch2-ordering')}",
    )
    ax1.legend(fontsize=10, loc="upper right")
    worst_pass = rewards.composite_reward(1, 0.0, 1.0, w_format, w_length)
    best_pass = rewards.composite_reward(1, 1.0, 0.0, w_format, w_length)
    worst_fail = rewards.composite_reward(0, 0.0, 1.0, w_format, w_length)
    best_fail = rewards.composite_reward(0, 1.0, 0.0, w_format, w_length)
    ax2.barh([1], [best_pass - worst_pass], left=[worst_pass], color=PASS_COLOR, height=0.5)
    ax2.barh([0], [best_fail - worst_fail], left=[worst_fail], color=FAIL_COLOR, height=0.5)
    ax2.set_yticks([0, 1], ["failures", "passes"])
    ax2.axvline(worst_pass, color=PASS_COLOR, ls="--", lw=1)
    ax2.axvline(best_fail, color=FAIL_COLOR, ls="--", lw=1)
    gap = worst_pass - best_fail
    if abs(gap) <= 1e-12:
        title = "Score ranges: touching (the worst pass ties the best failure)"
    else:
        title = f"Score ranges: gap of {gap:.2f}" if gap > 0 else f"Score ranges: overlap of {-gap:.2f}"
    ax2.set(xlabel="composite score R", title=title, xlim=(min(-1.1, worst_fail - 0.1), max(2.1, best_pass + 0.1)))
    return fig


def all_pass_figure(trials: int = 3, q_bad: float = 0.20, q_good: float = 0.98, max_trials: int = 8) -> Figure:
    """The all-pass rule and stop-on-first-rejection (17.7.2, napkin math 17.5) against K.

    Left: acceptance ``q**K`` of an incorrect patch (``q_bad``) and false rejection ``1 - q_good**K`` of a
    correct one; right: expected executed trials ``sum_{j<K} q**j`` for both. ``trials`` is marked.

    >>> len(all_pass_figure(3, 0.2, 0.98).axes[0].lines) >= 2
    True
    """
    v.probability("q_bad", q_bad)
    v.probability("q_good", q_good)
    trials = v.integer("trials", trials, 1)
    max_trials = v.integer("max_trials", max_trials, 1)
    ks = np.arange(1, max(max_trials, trials) + 1)
    accept_bad = [rewards.all_pass_probability(q_bad, k) for k in ks]
    reject_good = [1 - rewards.all_pass_probability(q_good, k) for k in ks]
    fig, (ax1, ax2) = _figure()
    ax1.plot(ks, accept_bad, "o-", color=FAIL_COLOR, label=f"incorrect patch accepted (q={q_bad:g})")
    ax1.plot(ks, reject_good, "s-", color=PASS_COLOR, label=f"correct patch rejected (q={q_good:g})")
    ab = rewards.all_pass_probability(q_bad, trials)
    rg = 1 - rewards.all_pass_probability(q_good, trials)
    _mark(ax1, trials, ab, f"K={trials}: accept {100 * ab:.2f} %", color=FAIL_COLOR, offset=(8, -18))
    _mark(ax1, trials, rg, f"reject {100 * rg:.2f} %", color=PASS_COLOR)
    ax1.set(
        yscale="log",
        xlabel="trials K (all must pass)",
        ylabel="probability",
        title=f"Accidental reward vs false rejection, {eq('ch6-allpass')}",
    )
    ax1.legend(fontsize=10, loc="lower left")
    ax2.plot(ks, [rewards.expected_trials(q_bad, k) for k in ks], "o-", color=FAIL_COLOR, label="incorrect patch")
    ax2.plot(ks, [rewards.expected_trials(q_good, k) for k in ks], "s-", color=PASS_COLOR, label="correct patch")
    ax2.plot(ks, ks, ":", color=MUTED, label="run every trial")
    _mark(
        ax2,
        trials,
        rewards.expected_trials(q_good, trials),
        f"{rewards.expected_trials(q_good, trials):.2f}",
        color=PASS_COLOR,
        offset=(-40, 10),
    )
    _mark(
        ax2,
        trials,
        rewards.expected_trials(q_bad, trials),
        f"{rewards.expected_trials(q_bad, trials):.2f}",
        color=FAIL_COLOR,
        offset=(8, -16),
    )
    ax2.set(
        xlabel="trials K",
        ylabel="expected trials executed",
        title=f"Verification work (stop on first rejection), {eq('ch6-trials')}",
    )
    ax2.legend(fontsize=10, loc="upper left")
    return fig


def fork_figure(horizon: int = 30, continuations: int = 8, forks=(10, 20)) -> Figure:
    """Continuation sampling: token cost of two fork schedules and the standard-error bound (17.4.3, table 3).

    Left: generated tokens as a multiple of the base trajectory against the horizon, forking at every
    boundary versus at ``len(forks)`` evenly placed boundaries, with the chosen ``horizon`` marked.
    Right: the bounds ``1/(2 sqrt M)`` and ``sqrt 2/(2 sqrt M)`` against the continuations M, with
    ``continuations`` marked and the "resolved" threshold (twice the difference bound) noted.

    >>> fork_figure(30, 8, [10, 20]).axes[0].get_yscale()
    'log'
    """
    v.integer("continuations", continuations, 1)
    chosen = credit.fork_set(horizon, forks)
    hs = np.arange(max(3, len(chosen) + 1), max(61, horizon + 1))
    n_forks = len(chosen)
    every = [credit.continuation_multiple(h, continuations, "all") for h in hs]
    spaced = [credit.continuation_multiple(h, continuations, even_forks(h, n_forks)) for h in hs]
    fig, (ax1, ax2) = _figure()
    ax1.plot(hs, every, color=FAIL_COLOR, lw=2, label="every boundary")
    ax1.plot(hs, spaced, color=PASS_COLOR, lw=2, label=f"{n_forks} evenly placed fork(s)")
    m_all = credit.continuation_multiple(horizon, continuations, "all")
    m_sel = credit.continuation_multiple(horizon, continuations, chosen)
    _mark(ax1, horizon, m_all, f"{m_all:.0f}x", color=FAIL_COLOR, offset=(-30, 10))
    _mark(ax1, horizon, m_sel, f"forks {chosen}: {m_sel:.1f}x", color=PASS_COLOR, offset=(8, -18))
    ax1.set(
        yscale="log",
        xlabel="horizon H (turns)",
        ylabel="generated tokens / base trajectory",
        title=f"Token multiple, {eq('ch3-fork-multiple')}, M = {continuations}",
    )
    ax1.legend(fontsize=10, loc="upper left")
    ms = np.arange(1, 201)
    se = [credit.standard_error_bound(m) for m in ms]
    sed = [credit.difference_standard_error_bound(m) for m in ms]
    ax2.plot(ms, se, color=NEUTRAL, lw=2, label="one fork mean")
    ax2.plot(ms, sed, color=ACCENT, lw=2, label="difference of two forks")
    ax2.plot(ms, 2 * np.asarray(sed), color=MUTED, ls="--", lw=1.2, label="resolved above (2x)")
    m = max(1, int(continuations))
    _mark(
        ax2,
        m,
        credit.difference_standard_error_bound(m),
        f"M={m}: {credit.standard_error_bound(m):.2f} / {credit.difference_standard_error_bound(m):.2f}",
        offset=(10, 12),
    )
    ax2.set(
        xscale="log",
        xlabel="continuations M per fork",
        ylabel="standard error bound",
        title=f"Sampling error of a fork value, {eq('ch3-se')}",
    )
    ax2.legend(fontsize=10)
    return fig


def even_forks(horizon: int, count: int) -> list[int]:
    """``count`` distinct completed-turn indices spread evenly over 1..H-1 (30, 2 -> [10, 20])."""
    count = max(0, min(int(count), horizon - 1))
    picks = sorted({int(round(horizon * j / (count + 1))) for j in range(1, count + 1)})
    return [k for k in picks if 1 <= k <= horizon - 1]


def group_advantages_figure(group_rewards=(0.0, 1.0, 0.0), group_sizes=range(2, 33)) -> Figure:
    """Group-relative coefficients (eq 2) for one group, and the lone-pass coefficient against G (eq 3).

    Left: bars of ``advantages.group_advantages(group_rewards)``; right: the lone pass's and a failure's coefficient
    in a binary group of G with one pass, with sqrt(G-1) dotted and G = 16 marked (3.87 and -0.26).

    >>> group_advantages_figure().axes[1].get_xlabel()
    'group size G'
    """

    adv = advantages.group_advantages(list(group_rewards))
    fig, (ax1, ax2) = _figure()
    colors = [PASS_COLOR if a > 0 else FAIL_COLOR if a < 0 else MUTED for a in adv]
    idx = np.arange(len(adv))
    ax1.bar(idx, adv, color=colors)
    for i, (r, a) in enumerate(zip(group_rewards, adv)):
        ax1.annotate(
            f"R={r:g}\n{a:+.3f}",
            (i, a),
            textcoords="offset points",
            xytext=(0, 4 if a >= 0 else -26),
            ha="center",
            fontsize=10,
        )
    ax1.axhline(0, color="black", lw=0.8)
    ax1.margins(y=0.35)
    ax1.set(
        xticks=idx,
        xlabel="rollout i",
        ylabel="coefficient A_i",
        title=f"Group-relative coefficients, {eq('ch4-advantage')}",
    )
    gs = np.array(list(group_sizes))
    coeffs = np.array([advantages.lone_pass_group_coefficients(int(g)) for g in gs])
    ax2.plot(gs, coeffs[:, 0], "o-", color=PASS_COLOR, ms=3, label="lone pass")
    ax2.plot(gs, coeffs[:, 1], "o-", color=FAIL_COLOR, ms=3, label="each failure")
    ax2.plot(gs, np.sqrt(gs - 1), ":", color=NEUTRAL, label="sqrt(G - 1)")
    p16, f16 = advantages.lone_pass_group_coefficients(16)
    _mark(ax2, 16, p16, f"G=16: {p16:.2f}", color=PASS_COLOR, offset=(-70, 10))
    _mark(ax2, 16, f16, f"{f16:.2f}", color=FAIL_COLOR, offset=(8, -18))
    ax2.set(xlabel="group size G", ylabel="coefficient", title=f"One pass among G, {eq('ch4-lone-pass')}")
    ax2.legend(fontsize=10)
    return fig


def clip_figure(eps_low: float = 0.2, eps_high: float = 0.2, p: float = 0.01) -> Figure:
    """The clipped surrogate and its absolute-probability threshold (17.5.2, 17.8.3).

    Left: ``min(r A, clip(r, 1-eps_low, 1+eps_high) A)`` against the ratio r for A = +1 and A = -1.
    Right: the probability ``p (1 + eps_high)`` above which a positive-advantage token's incentive stops,
    against its current probability p (log axis); above the line y = 1 the clip never binds. The token at
    ``p`` is marked with its headroom.

    >>> clip_figure(0.2, 0.28).axes[0].get_xlabel()
    'probability ratio r = pi / pi_old'
    """
    from rlvr_lab import grpo  # torch, imported only when this figure is drawn

    r = np.linspace(0.0, 2.0, 401)
    pos = grpo.clipped_surrogate(r, np.ones_like(r), eps_low, eps_high).numpy()
    neg = grpo.clipped_surrogate(r, -np.ones_like(r), eps_low, eps_high).numpy()
    fig, (ax1, ax2) = _figure()
    ax1.plot(r, r, ":", color=MUTED, lw=1, label="unclipped r A")
    ax1.plot(r, -r, ":", color=MUTED, lw=1)
    ax1.plot(r, pos, color=PASS_COLOR, lw=2.4, label="A = +1")
    ax1.plot(r, neg, color=FAIL_COLOR, lw=2.4, label="A = -1")
    ax1.axvline(1 - eps_low, color=FAIL_COLOR, ls="--", lw=1)
    ax1.axvline(1 + eps_high, color=PASS_COLOR, ls="--", lw=1)
    ax1.set(
        xlabel="probability ratio r = pi / pi_old",
        ylabel="surrogate per unit |A|",
        title=f"Clipped surrogate, {eq('ch4-surrogate')},\neps_low={eps_low:g}, eps_high={eps_high:g}",
    )
    ax1.legend(fontsize=10, loc="upper left")
    ps = np.logspace(-3, 0, 300)
    upper = np.array([grpo.clip_probability_bounds(x, eps_low, eps_high)[1] for x in ps])
    ax2.plot(ps, upper, color=PASS_COLOR, lw=2, label="incentive stops at p (1 + eps_high)")
    ax2.plot(ps, ps, ":", color=MUTED, lw=1, label="current p")
    ax2.axhline(1.0, color=NEUTRAL, lw=1)
    ax2.fill_between(ps, 1.0, np.maximum(upper, 1.0), color=ACCENT, alpha=0.3, label="never binds (> 1)")
    top = grpo.clip_probability_bounds(p, eps_low, eps_high)[1]
    _mark(ax2, p, top, f"p={p:g}: +{top - p:.3g} headroom", offset=(10, -16))
    ax2.set(
        xscale="log",
        yscale="log",
        xlabel="current token probability p",
        ylabel="absolute probability",
        title=f"Where the positive clip binds, {eq('ch7-headroom')}",
    )
    ax2.legend(fontsize=10, loc="upper left")
    return fig


def length_weights_figure(
    advantage: float = -1.0, lengths=(128, 512, 1024, 2048, 4096), constant: float | None = None
) -> Figure:
    """Per-token weights of eq 5 (17.5.3) for failures of different lengths, per normalisation.

    Bars of ``|grpo.per_token_weights|`` for rollouts sharing ``advantage`` under ``"sequence"`` (A/|o_i|) and
    ``"constant"`` (A/constant, default the longest length) on a log axis.

    >>> length_weights_figure().axes[0].get_yscale()
    'log'
    """
    from rlvr_lab import grpo  # torch, imported only when this figure is drawn

    adv = [float(advantage)] * len(lengths)
    seq = np.abs(grpo.per_token_weights(adv, list(lengths), "sequence"))
    const = np.abs(grpo.per_token_weights(adv, list(lengths), "constant", constant))
    fig = BookFigure(figsize=(FIG_WIDTH, 3.6), layout="constrained")
    ax = fig.add_subplot(1, 1, 1)
    ax.grid(True, alpha=0.3, axis="y")
    x = np.arange(len(lengths))
    ax.bar(x - 0.2, seq, width=0.4, color=FAIL_COLOR, label=f"per-sequence |A| / |o_i|, {eq('ch4-token-weight')}")
    ax.bar(x + 0.2, const, width=0.4, color=NEUTRAL, label="constant denominator")
    ax.set_xticks(x, [f"{n:,}" for n in lengths])
    ratio = seq[0] / seq[-1]
    ax.set(
        yscale="log",
        xlabel="failure length |o_i| (tokens)",
        ylabel="|per-token weight|",
        title=f"Same coefficient A = {advantage:g}:\nshortest is {ratio:.0f}x heavier per token",
    )
    ax.legend(fontsize=10)
    return fig
