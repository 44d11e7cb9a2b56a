"""The book's explorers: one function per relation, each a :class:`~rlvr_lab.figures.dashboard.Dashboard`.

Every number shown comes from the library function the tests check, never from a copy of its formula, and
the figure below the sliders is the matching one of :mod:`rlvr_lab.figures.relations` or
:mod:`rlvr_lab.figures.fleet`. Needs no display (Agg into memory). Sections 17.3-17.9.

>>> d = contrast_explorer(group_size=8, p=0.05)
>>> round(d.numbers["contrast probability P_c"], 2), round(d.numbers["rollouts per informative group"], 1)
(0.34, 23.8)
>>> d.controls["p"].value = 0.5
>>> round(d.numbers["rollouts per informative group"], 1)
8.1
"""

from __future__ import annotations

import html

from rlvr_lab import credit, cycle_time, rewards
from rlvr_lab.figures import fleet, relations
from rlvr_lab.figures.dashboard import Dashboard
from rlvr_lab.figures.dashboard import float_slider as _float
from rlvr_lab.figures.dashboard import int_slider as _int
from rlvr_lab.figures.dashboard import log_slider as _log


def contrast_explorer(group_size: int = 8, p: float = 0.05) -> Dashboard:
    """Group size G and pass rate p -> contrast probability and rollouts per informative group (17.5.4).

    Numbers from :func:`rewards.contrast_probability` and :func:`rewards.rollouts_per_informative_group`.

    >>> contrast_explorer(16, 0.05).numbers["contrast probability P_c"] > 0.55
    True
    """

    def compute(group_size, p):
        return {
            "contrast probability P_c": rewards.contrast_probability(group_size, p),
            "zero-contrast share 1 - P_c": 1.0 - rewards.contrast_probability(group_size, p),
            "at least one pass 1-(1-p)^G": 1.0 - rewards.pass_hat_k(1.0 - p, group_size),
            "rollouts per informative group": rewards.rollouts_per_informative_group(group_size, p),
        }

    controls = {
        "group_size": _int("group_size", group_size, 1, 64, "group size G"),
        "p": _float("p", p, 0.0, 1.0, 0.01, "pass rate p", ".2f"),
    }
    return Dashboard(
        "Contrast: how often a group carries a gradient, {eq}",
        controls,
        compute,
        lambda group_size, p: relations.contrast_figure(group_size, p),
        formats={"rollouts per informative group": ".1f"},
        kind="contrast",
        equations=("ch1-contrast",),
    )


def clip_explorer(eps_low: float = 0.2, eps_high: float = 0.2, p: float = 0.01) -> Dashboard:
    """Clip widths (eps_low, eps_high) -> surrogate curves and the absolute-probability threshold (17.8.3).

    Numbers from :func:`grpo.clip_probability_bounds` and :func:`grpo.clipped_surrogate`.

    >>> d = clip_explorer(0.2, 0.2, 0.9)
    >>> round(d.numbers["positive clip at probability"], 2), d.numbers["clip binds below p = 1"]
    (1.08, False)
    """
    from rlvr_lab import grpo  # torch, imported only when this dashboard is built

    def compute(eps_low, eps_high, p):
        low, high = grpo.clip_probability_bounds(p, eps_low, eps_high)
        at = [1.0 + eps_high + 0.1, 1.0 - eps_low - 0.1]
        surrogate = grpo.clipped_surrogate(at, [1.0, -1.0], eps_low, eps_high).tolist()
        return {
            "ratio interval low": 1.0 - eps_low,
            "ratio interval high": 1.0 + eps_high,
            "positive clip at probability": high,
            "headroom above p": high - p,
            "clip binds below p = 1": bool(high < 1.0),
            "negative clip at probability": low,
            "surrogate, A=+1, r past the top": surrogate[0],
            "surrogate, A=-1, r past the bottom": surrogate[1],
        }

    controls = {
        "eps_low": _float("eps_low", eps_low, 0.01, 0.5, 0.01, "eps_low", ".2f"),
        "eps_high": _float("eps_high", eps_high, 0.0, 0.5, 0.01, "eps_high", ".2f"),
        "p": _log("p", p, -3, 0, "token probability p"),
    }
    return Dashboard(
        "Clipping: where the incentive stops, {eq}",
        controls,
        compute,
        lambda eps_low, eps_high, p: relations.clip_figure(eps_low, eps_high, p),
        kind="clip",
        equations=("ch4-surrogate", "ch7-headroom"),
    )


def all_pass_explorer(trials: int = 3, q_bad: float = 0.20, q_good: float = 0.98) -> Dashboard:
    """All-pass trials K with q_bad and q_good -> acceptance, false rejection, expected trials (17.7.2).

    Numbers from :func:`rewards.all_pass_probability` and :func:`rewards.expected_trials`.

    >>> d = all_pass_explorer(3, 0.2, 0.98)
    >>> round(d.numbers["incorrect patch accepted"], 3), round(d.numbers["expected trials, correct"], 4)
    (0.008, 2.9404)
    """

    def compute(trials, q_bad, q_good):
        return {
            "incorrect patch accepted": rewards.all_pass_probability(q_bad, trials),
            "correct patch rejected": 1.0 - rewards.all_pass_probability(q_good, trials),
            "expected trials, incorrect": rewards.expected_trials(q_bad, trials),
            "expected trials, correct": rewards.expected_trials(q_good, trials),
        }

    controls = {
        "trials": _int("trials", trials, 1, 10, "trials K"),
        "q_bad": _float("q_bad", q_bad, 0.0, 1.0, 0.01, "q incorrect patch", ".2f"),
        "q_good": _float("q_good", q_good, 0.0, 1.0, 0.01, "q correct patch", ".2f"),
    }
    return Dashboard(
        "All-pass rule: accidental reward against false rejection, {eq}",
        controls,
        compute,
        lambda trials, q_bad, q_good: relations.all_pass_figure(trials, q_bad, q_good),
        formats={"incorrect patch accepted": ".3%", "correct patch rejected": ".2%"},
        kind="all_pass",
        equations=("ch6-allpass", "ch6-trials"),
    )


def false_accept_explorer(
    rho: float = 0.10, alpha: float = 0.025, beta: float = 1.0, rollouts: int = 8192
) -> Dashboard:
    """Pass rate rho and false-acceptance rate alpha -> false-accept share of rewards (eq 1, 17.3.2).

    Numbers from :func:`rewards.false_accept_share`; the expected counts are for ``rollouts`` rollouts.

    >>> round(false_accept_explorer().numbers["false-accept share"], 4)
    0.1837
    """

    def compute(rho, alpha, beta):
        return {
            "false-accept share": rewards.false_accept_share(rho, alpha, beta),
            f"true accepts in {rollouts:,}": rollouts * rho * beta,
            f"false accepts in {rollouts:,}": rollouts * (1.0 - rho) * alpha,
        }

    controls = {
        "rho": _log("rho", rho, -3, 0, "pass rate rho"),
        "alpha": _log("alpha", alpha, -3, 0, "false accept alpha"),
        "beta": _float("beta", beta, 0.05, 1.0, 0.01, "true accept beta", ".2f"),
    }
    return Dashboard(
        "False accepts among rewarded rollouts, {eq}",
        controls,
        compute,
        lambda rho, alpha, beta: relations.false_accept_figure(rho, alpha, beta),
        formats={
            "false-accept share": ".1%",
            f"true accepts in {rollouts:,}": ",.2f",
            f"false accepts in {rollouts:,}": ",.2f",
        },
        kind="false_accept",
        equations=("ch2-false-share",),
        fixed={"rollouts": rollouts},
    )


SCORE_TABLE = (
    ("long pass, no format", 1, 0.0, 1.0),
    ("short pass, good format", 1, 1.0, 0.2),
    ("short failure, perfect format", 0, 1.0, 0.0),
    ("long failure, half format", 0, 0.5, 0.9),
)
"""Example rollouts for :func:`reward_weights_explorer`: (name, C, format score F, length fraction len)."""


def reward_weights_explorer(w_format: float = 0.2, w_length: float = 0.3) -> Dashboard:
    """Reward weights -> ordering margin and a pass/failure score table (17.3.3).

    Numbers from :func:`rewards.ordering_margin`, :func:`rewards.pass_outranks_failure` and
    :func:`rewards.composite_reward` for the rollouts of :data:`SCORE_TABLE`.

    >>> d = reward_weights_explorer(0.4, 0.7)
    >>> d.numbers["every pass outranks every failure"], round(d.numbers["ordering margin"], 2)
    (False, -0.1)
    """

    def compute(w_format, w_length):
        out = {
            "ordering margin": rewards.ordering_margin(w_format, w_length),
            "every pass outranks every failure": rewards.pass_outranks_failure(w_format, w_length),
        }
        for name, c, f, ln in SCORE_TABLE:
            out[f"R: {name}"] = rewards.composite_reward(c, f, ln, w_format, w_length)
        return out

    def table(w_format, w_length):
        rows = "".join(
            f"<tr><td>{html.escape(name)}</td><td>{'pass' if c else 'fail'}</td><td>{f:g}</td><td>{ln:g}</td></tr>"
            for name, c, f, ln in SCORE_TABLE
        )
        return (
            "<table class='rlvr-readout' style='margin-top:6px;font-size:90%'><tr><th>rollout</th><th>C</th>"
            f"<th>F</th><th>len</th></tr>{rows}</table>"
        )

    controls = {
        "w_format": _float("w_format", w_format, 0.0, 1.0, 0.01, "format weight λ_f", ".2f"),
        "w_length": _float("w_length", w_length, 0.0, 1.0, 0.01, "length weight λ_ℓ", ".2f"),
    }
    return Dashboard(
        "Reward composition, {eq}: does every pass still outrank every failure?",
        controls,
        compute,
        lambda w_format, w_length: relations.reward_weights_figure(w_format, w_length),
        formats={"ordering margin": "+.2f"},
        extra_html=table,
        kind="reward_weights",
        equations=("ch2-composite", "ch2-ordering"),
        fixed={"score_table": [list(row) for row in SCORE_TABLE]},
    )


def fork_explorer(horizon: int = 30, tokens_per_turn: int = 512, continuations: int = 8, forks: int = 2) -> Dashboard:
    """Fork schedule -> token multiple and standard error (17.4.3, table 3).

    ``forks`` evenly placed completed-turn boundaries (2 at H = 30 gives turns 10 and 20) are compared with
    forking at every boundary. Numbers from :func:`credit.continuation_tokens`,
    :func:`credit.continuation_multiple`, :func:`credit.standard_error_bound` and
    :func:`credit.difference_standard_error_bound`.

    >>> d = fork_explorer()
    >>> d.numbers["tokens, every boundary"], d.numbers["tokens, chosen forks"], d.numbers["multiple, chosen forks"]
    (1797120, 138240, 9.0)
    """

    def compute(horizon, tokens_per_turn, continuations, forks):
        chosen = relations.even_forks(horizon, forks)
        m = max(continuations, 1)
        return {
            "chosen fork turns": ", ".join(map(str, chosen)) or "none",
            "tokens, every boundary": credit.continuation_tokens(horizon, tokens_per_turn, continuations, "all"),
            "multiple, every boundary": credit.continuation_multiple(horizon, continuations, "all"),
            "tokens, chosen forks": credit.continuation_tokens(horizon, tokens_per_turn, continuations, chosen),
            "multiple, chosen forks": credit.continuation_multiple(horizon, continuations, chosen),
            "SE bound, one fork": credit.standard_error_bound(m),
            "SE bound, difference": credit.difference_standard_error_bound(m),
            "resolved if |difference| >=": 2.0 * credit.difference_standard_error_bound(m),
        }

    controls = {
        "horizon": _int("horizon", horizon, 2, 60, "horizon H (turns)"),
        "tokens_per_turn": _int("tokens_per_turn", tokens_per_turn, 1, 4096, "tokens per turn n"),
        "continuations": _int("continuations", continuations, 1, 64, "continuations M"),
        "forks": _int("forks", forks, 1, 10, "chosen forks |S|"),
    }

    def draw(horizon, tokens_per_turn, continuations, forks):
        return relations.fork_figure(horizon, continuations, relations.even_forks(horizon, forks))

    return Dashboard(
        "Continuation sampling, {eq}: what a fork schedule costs and resolves",
        controls,
        compute,
        draw,
        kind="fork",
        equations=("ch3-se", "ch3-fork-multiple"),
        formats={"multiple, every boundary": ".1f", "multiple, chosen forks": ".1f", "chosen fork turns": "s"},
    )


def cycle_explorer(
    horizon: int = 20,
    t_model: float = 0.12,
    t_tool: float = 0.08,
    t_assess: float = 0.5,
    t_reset: float = 3.5,
    slots: int = 256,
) -> Dashboard:
    """Cycle time and reset -> pool capacity (eq 6, 17.9.2, napkin math 17.6).

    Numbers from :func:`cycle_time.cycle_time` and :func:`cycle_time.pool_capacity_per_hour`.

    >>> d = cycle_explorer()
    >>> d.numbers["cycle time (s)"], d.numbers["capacity (episodes/h)"]
    (8.0, 115200.0)
    """

    def compute(horizon, t_model, t_tool, t_assess, t_reset, slots):
        cyc = cycle_time.cycle_time(horizon, t_model, t_tool, t_assess, t_reset)
        floor = cycle_time.cycle_time(horizon, t_model, t_tool, t_assess, 0.0)
        return {
            "cycle time (s)": cyc,
            "reset share of cycle": t_reset / cyc,
            "capacity (episodes/h)": cycle_time.pool_capacity_per_hour(slots, cyc),
            "zero-reset ceiling (episodes/h)": cycle_time.pool_capacity_per_hour(slots, floor),
        }

    controls = {
        "horizon": _int("horizon", horizon, 1, 60, "turns H"),
        "t_model": _float("t_model", t_model, 0.0, 2.0, 0.01, "model s / turn", ".2f"),
        "t_tool": _float("t_tool", t_tool, 0.0, 2.0, 0.01, "tool s / turn", ".2f"),
        "t_assess": _float("t_assess", t_assess, 0.0, 10.0, 0.1, "assess s", ".1f"),
        "t_reset": _log("t_reset", t_reset, -3, 1.3, "reset s"),
        "slots": _int("slots", slots, 1, 1024, "slots"),
    }
    return Dashboard(
        "Environment cycle, {eq}: what a faster reset buys",
        controls,
        compute,
        lambda **kw: fleet.cycle_figure(**kw),
        kind="cycle",
        equations=("ch8-cycle",),
        formats={
            "cycle time (s)": ".3f",
            "reset share of cycle": ".1%",
            "capacity (episodes/h)": ",.0f",
            "zero-reset ceiling (episodes/h)": ",.0f",
        },
    )


def staleness_explorer(
    step_s: float = 30.0, max_lag: int = 2, ages=(20.0, 60.0, 150.0), weights=(0.60, 0.30, 0.10)
) -> Dashboard:
    """Staleness bound -> admitted fraction (eq 8, 17.9.4) for rollouts of the given ages and shares.

    Numbers from :func:`cycle_time.version_lag` and :func:`cycle_time.admit` (via
    :func:`cycle_time.admitted_fraction`).

    >>> d = staleness_explorer()
    >>> d.numbers["admitted fraction"], d.numbers["lag of a 150 s rollout"]
    (0.9, 5)
    """
    ages, weights = tuple(float(a) for a in ages), tuple(float(x) for x in weights)

    def compute(step_s, max_lag):
        out = {"admitted fraction": cycle_time.admitted_fraction(step_s, max_lag, ages, weights)}
        for a in ages:
            out[f"lag of a {a:g} s rollout"] = cycle_time.version_lag(a, step_s)
        return out

    controls = {
        "step_s": _float("step_s", step_s, 5.0, 250.0, 1.0, "trainer step s", ".0f"),
        "max_lag": _int("max_lag", max_lag, 0, 8, "lag bound"),
    }
    return Dashboard(
        "Staleness, {eq}: which rollouts a lag bound admits",
        controls,
        compute,
        lambda step_s, max_lag: fleet.staleness_figure(step_s, max_lag, ages, weights),
        kind="staleness",
        equations=("ch8-lag",),
        fixed={"ages": list(ages), "weights": list(weights)},
        formats={"admitted fraction": ".1%"},
    )


def verifier_pool_explorer(
    arrival_per_s: float = 32.0,
    trials: int = 3,
    trial_s: float = 8.0,
    target_utilization: float = 0.8,
    incorrect_share: float = 0.5,
    q_incorrect: float = 0.2,
    q_correct: float = 0.98,
) -> Dashboard:
    """Verifier pool sizing (eq 9, 17.9.5): workers for all K trials and for stop-on-first-rejection.

    Numbers from :func:`cycle_time.verifier_demand`, :func:`cycle_time.verifier_workers` and
    :func:`rewards.expected_trials` over the candidate mixture (via :func:`rewards.mixture_trials`).

    >>> d = verifier_pool_explorer()
    >>> d.numbers["busy workers, 1 trial"], d.numbers["busy workers, all K"], d.numbers["workers, all K"]
    (256.0, 768.0, 960)
    """

    def compute(arrival_per_s, trials, trial_s, target_utilization, incorrect_share):
        expected, plugin = rewards.mixture_trials(trials, incorrect_share, q_incorrect, q_correct)
        return {
            "busy workers, 1 trial": cycle_time.verifier_demand(arrival_per_s, 1, trial_s),
            "busy workers, all K": cycle_time.verifier_demand(arrival_per_s, trials, trial_s),
            "workers, all K": cycle_time.verifier_workers(arrival_per_s, trials, trial_s, target_utilization),
            "expected trials (mixture)": expected,
            "workers, stop on first rejection": cycle_time.verifier_workers(
                arrival_per_s, expected, trial_s, target_utilization
            ),
            "workers, mean-q plug-in (wrong)": cycle_time.verifier_workers(
                arrival_per_s, plugin, trial_s, target_utilization
            ),
        }

    controls = {
        "arrival_per_s": _float("arrival_per_s", arrival_per_s, 1.0, 128.0, 1.0, "arrivals / s", ".0f"),
        "trials": _int("trials", trials, 1, 8, "trials K"),
        "trial_s": _float("trial_s", trial_s, 0.5, 30.0, 0.5, "seconds / trial", ".1f"),
        "target_utilization": _float(
            "target_utilization", target_utilization, 0.3, 0.98, 0.01, "target utilisation", ".2f"
        ),
        "incorrect_share": _float("incorrect_share", incorrect_share, 0.0, 1.0, 0.05, "incorrect share", ".2f"),
    }
    return Dashboard(
        "Verifier pool, {eq}: workers to provision",
        controls,
        compute,
        lambda **kw: fleet.verifier_pool_figure(**kw, q_incorrect=q_incorrect, q_correct=q_correct),
        formats={"busy workers, 1 trial": ",.0f", "busy workers, all K": ",.0f", "expected trials (mixture)": ".3f"},
        kind="verifier_pool",
        equations=("ch8-workers",),
        fixed={"q_incorrect": float(q_incorrect), "q_correct": float(q_correct)},
    )


ALL = (
    contrast_explorer,
    clip_explorer,
    all_pass_explorer,
    false_accept_explorer,
    reward_weights_explorer,
    fork_explorer,
    cycle_explorer,
    staleness_explorer,
    verifier_pool_explorer,
)
"""Every dashboard of the book, in chapter order of their relations."""
