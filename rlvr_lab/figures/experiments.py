"""Figures of the claim experiments' stored results (:mod:`rlvr_lab.claims`, five seeds each): exploit
amplification (17.5.1), entropy collapse and clip-higher (17.8.3), length normalisation (17.5.3) and pass@k
(17.8.4).

Each draws the stored result, or a result dict given to it.
"""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from rlvr_lab.figures.style import ACCENT, FAIL_COLOR, MUTED, NEUTRAL, PASS_COLOR
from rlvr_lab.figures.style import axes_row as _figure
from rlvr_lab.claims import load


def _seed_band(ax, runs: list[dict], arm: str, key: str, color: str, label: str) -> None:
    """Each seed's per-step series thin, their mean thick."""
    curves = [np.asarray([np.nan if x is None else x for x in r[arm][key]], dtype=float) for r in runs]
    width = min(len(c) for c in curves)
    for c in curves:
        ax.plot(np.arange(width), c[:width], color=color, lw=0.7, alpha=0.35)
    ax.plot(
        np.arange(width),
        np.nanmean([c[:width] for c in curves], axis=0),
        color=color,
        lw=2,
        label=f"{label} (mean of {len(curves)} seeds)",
    )


def _interval_bars(ax, labels, cis: list[dict], colors) -> None:
    means = [c["mean"] for c in cis]
    err = np.array([[c["mean"] - c["lo"] for c in cis], [c["hi"] - c["mean"] for c in cis]])
    ax.bar(labels, means, yerr=err, capsize=4, color=colors)


def recorded_exploit_figure(result: dict | None = None) -> Figure:
    """Recorded exploit amplification (17.5.1): exploit rate per step, naive vs isolated; true pass rate;
    and, for the naive run, the exploit's positive advantage per step split by the group it was earned in
    (a lone pass, one of several exploits, beside an honest pass), summed over seeds.

    >>> recorded_exploit_figure().axes[0].get_xlabel()
    'GRPO step'
    """
    result = result or load("exploit_amplification")
    fig, (ax1, ax2, ax3) = _figure(3, width=12.0)
    for arm, color in (("naive", FAIL_COLOR), ("isolated", PASS_COLOR)):
        _seed_band(ax1, result["runs"], arm, "exploit", color, f"rewarded by {arm}")
        _seed_band(ax2, result["runs"], arm, "true_pass", color, f"rewarded by {arm}")
    ax1.set(xlabel="GRPO step", ylabel="share of training rollouts", title="exploit rate (os._exit(0))")
    ax2.set(xlabel="GRPO step", ylabel="share of training rollouts", title="true pass rate (isolated verdict)")
    ax1.legend(fontsize=10)
    runs = result["runs"]
    width = min(len(r["naive"]["advantage_by_step"]["lone"]) for r in runs)
    steps = np.arange(width)
    bottom = np.zeros(width)
    for kind, color, label in (
        ("lone", FAIL_COLOR, "lone pass"),
        ("several", ACCENT, "one of 2..G-1 exploits"),
        ("beside_honest", MUTED, "beside an honest pass"),
    ):
        total = np.sum([r["naive"]["advantage_by_step"][kind][:width] for r in runs], axis=0)
        ax3.bar(steps, total, bottom=bottom, color=color, label=label)
        bottom += total
    ax3.set(
        xlabel="GRPO step",
        ylabel=f"positive advantage (sum of {len(runs)} seeds)",
        title="naive run: where the exploit's advantage came from",
    )
    ax3.legend(fontsize=10)
    return fig


def recorded_clip_figure(result: dict | None = None) -> Figure:
    """Recorded entropy collapse (17.8.3): token entropy and action diversity per step under a symmetric clip
    and clip-higher, each seed thin and the mean thick; clip shares with 95 % intervals.

    >>> recorded_clip_figure().axes[2].get_ylabel()
    'share of all policy tokens'
    """
    result = result or load("clip_higher")
    fig, (ax1, ax2, ax3) = _figure(3, width=12.0)
    for arm, color, label in (
        ("symmetric", NEUTRAL, "symmetric 0.2 / 0.2"),
        ("clip_higher", ACCENT, "clip-higher 0.2 / 0.28"),
    ):
        _seed_band(ax1, result["runs"], arm, "entropy", color, label)
        _seed_band(ax2, result["runs"], arm, "diversity", color, label)
    ax1.set(xlabel="GRPO step", ylabel="nats", title="token entropy")
    ax2.set(xlabel="GRPO step", ylabel="distinct completions / G", title="action diversity")
    ax1.legend(fontsize=10)
    s = result["summary"]
    _interval_bars(
        ax3,
        ["upper clip\nsymmetric", "upper clip\nclip-higher", "eligible\n(p < 1/1.2)", "any clip\nsymmetric"],
        [
            s["clip_high"]["symmetric"],
            s["clip_high"]["clip_higher"],
            s["eligible"]["symmetric"],
            s["clip_any"]["symmetric"],
        ],
        [NEUTRAL, ACCENT, MUTED, FAIL_COLOR],
    )
    ax3.set(ylabel="share of all policy tokens", title="where the clip can act (95 % t, seeds)")
    return fig


def recorded_length_figure(result: dict | None = None) -> Figure:
    """Recorded per-sequence vs constant normalisation (17.5.3): failing length per step and its change.

    >>> recorded_length_figure().axes[0].get_ylabel()
    'tokens'
    """
    result = result or load("length_norm")
    fig, (ax1, ax2) = _figure()
    for arm, color, label in (
        ("sequence", FAIL_COLOR, "per-sequence 1/|o_i|"),
        ("constant", NEUTRAL, "constant L = mean length"),
    ):
        _seed_band(ax1, result["runs"], arm, "len_fail", color, label)
    ax1.set(xlabel="GRPO step", ylabel="tokens", title="mean length of failing rollouts")
    ax1.legend(fontsize=10)
    s = result["summary"]["len_fail_change"]
    _interval_bars(
        ax2,
        ["per-sequence", "constant", "difference"],
        [s["sequence"], s["constant"], s["difference"]],
        [FAIL_COLOR, NEUTRAL, MUTED],
    )
    ax2.axhline(0, color="k", lw=0.8)
    ax2.set(ylabel="tokens (last 5 - first 5 steps)", title="change in failing length (95 % t, seeds)")
    return fig


def recorded_pass_at_k_figure(result: dict | None = None) -> Figure:
    """Recorded pass@k before and after GRPO over held-out tasks (17.8.4): curves and their difference.

    >>> recorded_pass_at_k_figure().axes[0].get_xscale()
    'log'
    """
    result = result or load("pass_at_k")
    ks = result["regime"]["ks"]
    s = result["summary"]
    fig, (ax1, ax2) = _figure()
    for arm, color, label in (("base", MUTED, "warm start (base)"), ("trained", PASS_COLOR, "after GRPO")):
        m = [s[str(k)][arm]["mean"] for k in ks]
        err = [
            [s[str(k)][arm]["mean"] - s[str(k)][arm]["lo"] for k in ks],
            [s[str(k)][arm]["hi"] - s[str(k)][arm]["mean"] for k in ks],
        ]
        ax1.errorbar(ks, m, yerr=err, marker="o", capsize=3, color=color, label=label)
    ax1.set(
        xscale="log",
        xticks=ks,
        xticklabels=[str(k) for k in ks],
        xlabel="k",
        ylabel="held-out pass@k",
        title=f"unbiased pass@k, n = {result['regime']['n']} samples per task",
    )
    ax1.legend(fontsize=10)
    d = [s[str(k)]["difference"] for k in ks]
    ax2.errorbar(
        ks,
        [x["mean"] for x in d],
        yerr=[[x["mean"] - x["lo"] for x in d], [x["hi"] - x["mean"] for x in d]],
        marker="o",
        capsize=3,
        color=NEUTRAL,
    )
    ax2.axhline(0, color="k", lw=0.8)
    ax2.set(
        xscale="log",
        xticks=ks,
        xticklabels=[str(k) for k in ks],
        xlabel="k",
        ylabel="trained - base",
        title="gain by k (95 % t over seeds)",
    )
    return fig
