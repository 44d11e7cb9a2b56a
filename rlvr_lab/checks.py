"""Exercise checkers for section 17.14 (the chapter's eight exercises).

A student notebook assigns named variables in its TODO cells and then calls one checker per part,
for example ``checks.ex1.part_a(share_early, share_late)``. A checker prints a short confirmation when
every value is right and otherwise raises :class:`CheckFailed` with a *hint* -- which relation to use,
what the units are, which sign or bound is off -- never the expected number.

The expected values are computed from the library (:mod:`rlvr_lab.rewards`, :mod:`rlvr_lab.credit`,
:mod:`rlvr_lab.cycle_time`, :mod:`rlvr_lab.grpo`) with the exercise's givens. Two answers are new
computations that the library does not provide, and they are written out here:

* exercise 1(b): the largest false-acceptance rate that keeps the false-accept share (equation 1)
  at or below a target share ``s``: ``alpha_max = s * rho * beta / ((1 - s) * (1 - rho))``, obtained
  by solving equation 1 for alpha;
* exercise 8(a): at ratio 1 the per-token weight is ``A_i / |o_i|`` (equation 5), so two failures
  with the same advantage have per-token penalties in the inverse ratio of their lengths.

The grader (:mod:`rlvr_lab.grading`) calls :func:`verify` in its own process on the values it
recorded from the student's kernel, so a notebook that patches these checkers changes nothing
but its own printout. :data:`PARTS` lists every part and the variable names it reads.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Real

__all__ = ["CheckFailed", "PARTS", "verify", "ex1", "ex2", "ex3", "ex4", "ex5", "ex6", "ex7", "ex8"]

#: Relative tolerance for numeric answers: 0.5 %, so three significant figures always pass.
REL_TOL = 5e-3
#: Absolute tolerance for numeric answers near zero.
ABS_TOL = 1e-6


class CheckFailed(AssertionError):
    """Raised by a checker when an answer is missing or wrong; the message is a hint, not the answer."""


@dataclass(frozen=True)
class Part:
    """One checked part of an exercise."""

    #: part identifier, e.g. ``"ex1.part_a"``
    id: str
    #: the notebook variables the checker reads, in call order
    names: tuple
    #: what the part asks, in one line (shown in grade tables)
    title: str


# ---------------------------------------------------------------- value helpers


def _is_missing(value) -> bool:
    return value is None or value is Ellipsis


def _real(name: str, value, problems: list) -> float | None:
    """Return ``value`` as a float, or append a problem and return None."""
    if _is_missing(value):
        problems.append(f"{name} is still unassigned: replace the placeholder in the TODO cell.")
        return None
    if isinstance(value, bool) or not isinstance(value, Real):
        try:
            import numpy as np

            if isinstance(value, np.ndarray) and value.size == 1:
                return float(value.reshape(()))
        except ImportError:  # pragma: no cover - numpy is a hard dependency
            pass
        problems.append(f"{name} should be a single number, got {type(value).__name__}.")
        return None
    number = float(value)
    if not math.isfinite(number):
        problems.append(f"{name} is {number}: a finite number is expected.")
        return None
    return number


def _close(given: float, expected: float) -> bool:
    return math.isclose(given, expected, rel_tol=REL_TOL, abs_tol=ABS_TOL)


def _number(name: str, value, expected: float, hint: str, problems: list, fraction: bool = False) -> None:
    """Compare a numeric answer with ``expected``; on a miss append ``hint`` (never ``expected``)."""
    given = _real(name, value, problems)
    if given is None:
        return
    if _close(given, expected):
        return
    if fraction and _close(given / 100.0, expected):
        problems.append(f"{name} looks like a percentage: give it as a fraction in [0, 1].")
        return
    direction = "too large" if given > expected else "too small"
    problems.append(f"{name} is {direction}. Hint: {hint}")


def _integer(name: str, value, expected: int, hint: str, problems: list) -> None:
    given = _real(name, value, problems)
    if given is None:
        return
    if given != int(given):
        problems.append(f"{name} should be a whole number (a count), got {given}.")
        return
    if int(given) != expected:
        direction = "too large" if given > expected else "too small"
        problems.append(f"{name} is {direction}. Hint: {hint}")


def _boolean(name: str, value, expected: bool, hint: str, problems: list) -> None:
    if _is_missing(value):
        problems.append(f"{name} is still unassigned: set it to True or False.")
        return
    if not isinstance(value, bool):
        problems.append(f"{name} should be True or False, got {type(value).__name__}.")
        return
    if value is not expected:
        problems.append(f"{name} is not right. Hint: {hint}")


def _choice(name: str, value, expected: str, options: tuple, hint: str, problems: list) -> None:
    if _is_missing(value):
        problems.append(f"{name} is still unassigned: pick one of {list(options)}.")
        return
    if not isinstance(value, str) or value not in options:
        problems.append(f"{name} must be one of {list(options)}, got {value!r}.")
        return
    if value != expected:
        problems.append(f"{name}: reconsider. Hint: {hint}")


# ---------------------------------------------------------------- exercise 1 (17.3.2, eq 1)

_EX1 = {"beta": 1.0, "alpha": 0.02, "rho_early": 0.04, "rho_late": 0.40, "target_share": 0.10}


def _ex1_a(share_early, share_late):
    from rlvr_lab.rewards import false_accept_share

    g, p = _EX1, []
    hint = "equation 1, Pr(fail | accepted) = (1-rho)*alpha / (rho*beta + (1-rho)*alpha)."
    _number("share_early", share_early, false_accept_share(g["rho_early"], g["alpha"], g["beta"]), hint, p, True)
    _number("share_late", share_late, false_accept_share(g["rho_late"], g["alpha"], g["beta"]), hint, p, True)
    return p


def _ex1_b(alpha_max):
    g, p = _EX1, []
    s, rho, beta = g["target_share"], g["rho_early"], g["beta"]
    expected = s * rho * beta / ((1.0 - s) * (1.0 - rho))
    _number("alpha_max", alpha_max, expected,
            "set equation 1 equal to 0.10 at rho = 0.04 and solve for alpha.", p, True)
    return p


def _ex1_c(harden_when):
    p = []
    _choice("harden_when", harden_when, "before", ("before", "after"),
            "compare the two shares from part (a): when does a 2 % false-accept rate claim most of the reward?",
            p)
    return p


# ---------------------------------------------------------------- exercise 2 (17.3.3)

_EX2 = {"w_format": 0.4, "w_length": 0.7, "cap": 8000,
        "pass_tokens": 7200, "pass_format": 0.5, "fail_tokens": 400, "fail_format": 1.0}


def _ex2_a(pass_score, fail_score, pair_keeps_order):
    from rlvr_lab.rewards import composite_reward

    g, p = _EX2, []
    hint = "R = C + w_format*F - w_length*len with len = tokens / cap and C = 1 for the pass, 0 for the failure."
    ps = composite_reward(1, g["pass_format"], g["pass_tokens"] / g["cap"], g["w_format"], g["w_length"])
    fs = composite_reward(0, g["fail_format"], g["fail_tokens"] / g["cap"], g["w_format"], g["w_length"])
    _number("pass_score", pass_score, float(ps), hint, p)
    _number("fail_score", fail_score, float(fs), hint, p)
    _boolean("pair_keeps_order", pair_keeps_order, bool(ps > fs),
             "the intended order is pass above failure; compare your two scores.", p)
    return p


def _ex2_b(lowest_pass, highest_fail, every_pass_outranks):
    from rlvr_lab.rewards import composite_reward, pass_outranks_failure

    g, p = _EX2, []
    low = composite_reward(1, 0.0, 1.0, g["w_format"], g["w_length"])
    high = composite_reward(0, 1.0, 0.0, g["w_format"], g["w_length"])
    _number("lowest_pass", lowest_pass, float(low),
            "push F and len to the ends of [0, 1] that hurt a pass the most.", p)
    _number("highest_fail", highest_fail, float(high),
            "push F and len to the ends of [0, 1] that help a failure the most.", p)
    _boolean("every_pass_outranks", every_pass_outranks, bool(pass_outranks_failure(g["w_format"], g["w_length"])),
             "every pass outranks every failure only if the worst pass beats the best failure.", p)
    return p


def _ex2_c(w_length_upper):
    g, p = _EX2, []
    _number("w_length_upper", w_length_upper, 1.0 - g["w_format"],
            "the sufficient condition is strict: w_format + w_length < 1; give the bound w_length must stay below.",
            p)
    return p


# ---------------------------------------------------------------- exercise 3 (17.7.2)

_EX3 = {"q_incorrect": 0.30, "q_correct": 0.95, "max_accept": 0.01}


def _ex3_smallest_trials() -> int:
    from rlvr_lab.rewards import all_pass_probability

    trials = 1
    while all_pass_probability(_EX3["q_incorrect"], trials) >= _EX3["max_accept"]:
        trials += 1
    return trials


def _ex3_a(trials_needed):
    p = []
    _integer("trials_needed", trials_needed, _ex3_smallest_trials(),
             "an incorrect patch is accepted with probability q^K; find the first K where that is below 0.01.", p)
    return p


def _ex3_b(false_rejection, trials_correct, trials_incorrect):
    from rlvr_lab.rewards import all_pass_probability, expected_trials

    g, p = _EX3, []
    k = _ex3_smallest_trials()
    _number("false_rejection", false_rejection, 1.0 - all_pass_probability(g["q_correct"], k),
            "the correct patch is rejected unless all K trials pass: 1 - q^K.", p, True)
    hint = "with stop-on-first-rejection E[N | q] = sum over j < K of q^j."
    _number("trials_correct", trials_correct, float(expected_trials(g["q_correct"], k)), hint, p)
    _number("trials_incorrect", trials_incorrect, float(expected_trials(g["q_incorrect"], k)), hint, p)
    return p


def _ex3_c(first_action):
    p = []
    _choice("first_action", first_action, "repair_fixture", ("add_trials", "repair_fixture"),
            "more trials multiply cost on every candidate and still falsely reject correct patches; "
            "what removes the cause of both errors?", p)
    return p


# ---------------------------------------------------------------- exercise 4 (17.5.1, 17.5.4)

_EX4 = {"group_size": 8, "tasks": 256, "p_hard": 0.02, "p_easy": 0.60}


def _ex4_a(contrast_hard, contrast_easy, informative_groups, rollouts_per_informative):
    from rlvr_lab.rewards import contrast_probability

    g, p = _EX4, []
    ch = contrast_probability(g["group_size"], g["p_hard"])
    ce = contrast_probability(g["group_size"], g["p_easy"])
    half = g["tasks"] / 2
    informative = half * ch + half * ce
    hint = "P_c(G, p) = 1 - p^G - (1-p)^G, one group per task."
    _number("contrast_hard", contrast_hard, float(ch), hint, p, True)
    _number("contrast_easy", contrast_easy, float(ce), hint, p, True)
    _number("informative_groups", informative_groups, float(informative),
            "each family has 128 tasks; add the expected informative groups of both families.", p)
    _number("rollouts_per_informative", rollouts_per_informative, g["tasks"] * g["group_size"] / informative,
            "divide all rollouts of the update (tasks x G) by the expected informative groups.", p)
    return p


def _ex4_b(contrast_pooled, informative_pooled):
    from rlvr_lab.rewards import contrast_probability

    g, p = _EX4, []
    pooled = contrast_probability(g["group_size"], (g["p_hard"] + g["p_easy"]) / 2)
    _number("contrast_pooled", contrast_pooled, float(pooled),
            "use the pool-average pass rate (the mean of the two families) in P_c.", p, True)
    _number("informative_pooled", informative_pooled, float(g["tasks"] * pooled),
            "all 256 groups with the pooled contrast probability.", p)
    return p


def _ex4_c(lone_pass_coefficient, drop_hard_family):
    from rlvr_lab.grpo import lone_pass_coefficient as coefficient

    g, p = _EX4, []
    _number("lone_pass_coefficient", lone_pass_coefficient, float(coefficient(g["group_size"], 0.0)),
            "equation 3 with eps -> 0: (1 - 1/G) / (sqrt(G-1)/G).", p)
    _boolean("drop_hard_family", drop_hard_family, False,
             "what would the policy then never be trained on, and what does a rare pass on it carry?", p)
    return p


# ---------------------------------------------------------------- exercise 5 (17.4.3)

_EX5 = {"horizon": 40, "tokens_per_turn": 400, "budget": 30.0, "forks": (10, 20, 30), "target_se": 0.05,
        "difference": 0.20}


def _ex5_a(multiple_exhaustive, multiple_three_forks):
    from rlvr_lab.credit import continuation_multiple

    g, p = _EX5, []
    hint = "the multiple of the base is 1 + (M/H) * sum over fork turns k of (H - k)."
    _number("multiple_exhaustive", multiple_exhaustive,
            float(continuation_multiple(g["horizon"], 16, "all")), hint, p)
    _number("multiple_three_forks", multiple_three_forks,
            float(continuation_multiple(g["horizon"], 16, list(g["forks"]))), hint, p)
    return p


def _ex5_b(m_for_target, multiple_for_target):
    from rlvr_lab.credit import continuation_multiple, standard_error_bound

    g, p = _EX5, []
    m = 1
    while standard_error_bound(m) > g["target_se"] + 1e-12:
        m += 1
    _integer("m_for_target", m_for_target, m, "solve 1 / (2 sqrt(M)) = 0.05 for M.", p)
    _number("multiple_for_target", multiple_for_target,
            float(continuation_multiple(g["horizon"], m, list(g["forks"]))),
            "the same multiple formula as part (a) at the forks after turns 10, 20 and 30.", p)
    return p


def _ex5_largest_m() -> int:
    from rlvr_lab.credit import continuation_multiple

    g = _EX5
    m = 0
    while continuation_multiple(g["horizon"], m + 1, list(g["forks"])) <= g["budget"] + 1e-12:
        m += 1
    return m


def _ex5_c(m_budget, se_budget, can_resolve):
    from rlvr_lab.credit import is_resolved, standard_error_bound

    g, p = _EX5, []
    m = _ex5_largest_m()
    _integer("m_budget", m_budget, m, "the largest whole M whose multiple at the three forks stays <= 30.", p)
    _number("se_budget", se_budget, float(standard_error_bound(m)), "the per-fork bound 1 / (2 sqrt(M)).", p)
    _boolean("can_resolve", can_resolve, bool(is_resolved(g["difference"], m)),
             "a difference is resolved only if it is at least twice sqrt(2) / (2 sqrt(M)).", p)
    return p


def _ex5_redesign(redesign_forks, redesign_m):
    """Any schedule within budget that resolves the difference passes; there is no single answer."""
    from rlvr_lab.credit import continuation_multiple, is_resolved

    g, p = _EX5, []
    m = _real("redesign_m", redesign_m, p)
    if _is_missing(redesign_forks):
        p.append("redesign_forks is still unassigned: give a list of completed-turn indices.")
    elif not isinstance(redesign_forks, (list, tuple)) or not redesign_forks or not all(
            isinstance(k, int) and not isinstance(k, bool) for k in redesign_forks):
        p.append("redesign_forks should be a non-empty list of whole turn indices, e.g. [12, 25].")
    elif any(k < 1 or k > g["horizon"] - 1 for k in redesign_forks) or len(set(redesign_forks)) != len(
            redesign_forks):
        p.append(f"redesign_forks must be distinct completed turns between 1 and {g['horizon'] - 1}.")
    if p or m is None:
        return p
    if m != int(m) or m < 1:
        return ["redesign_m should be a whole number of continuations >= 1."]
    cost = continuation_multiple(g["horizon"], int(m), list(redesign_forks))
    if cost > g["budget"] + 1e-9:
        p.append("redesign_forks with redesign_m costs more than 30x the base trajectory; fork later or at fewer turns.")
    if not is_resolved(g["difference"], int(m)):
        p.append("redesign_m still cannot resolve a 0.20 difference; find the M where twice the "
                 "difference bound drops to 0.20.")
    return p


# ---------------------------------------------------------------- exercise 6 (17.9.2, eq 6)

_EX6 = {"horizon": 4, "t_model": 0.6, "t_tool": 0.1, "t_assess": 0.2, "reset_cold": 6.0,
        "reset_snapshot": 0.3, "slots": 64, "service_cap_per_hour": 40_000.0}


def _ex6_cycles():
    from rlvr_lab.cycle_time import cycle_time, pool_capacity_per_hour

    g = _EX6
    out = {}
    for kind in ("cold", "snapshot"):
        reset = g["reset_" + kind]
        cycle = cycle_time(g["horizon"], g["t_model"], g["t_tool"], g["t_assess"], reset)
        out[kind] = (float(cycle), reset / float(cycle), float(pool_capacity_per_hour(g["slots"], cycle)))
    return out


def _ex6_a(cycle_cold, cycle_snapshot, reset_share_cold, reset_share_snapshot, capacity_cold,
           capacity_snapshot):
    c, p = _ex6_cycles(), []
    hint = "equation 6: T_cycle = H (t_model + t_tool) + t_assess + t_reset."
    _number("cycle_cold", cycle_cold, c["cold"][0], hint, p)
    _number("cycle_snapshot", cycle_snapshot, c["snapshot"][0], hint, p)
    share = "the reset share is t_reset / T_cycle."
    _number("reset_share_cold", reset_share_cold, c["cold"][1], share, p, True)
    _number("reset_share_snapshot", reset_share_snapshot, c["snapshot"][1], share, p, True)
    cap = "capacity is slots / T_cycle, converted to episodes per hour."
    _number("capacity_cold", capacity_cold, c["cold"][2], cap, p)
    _number("capacity_snapshot", capacity_snapshot, c["snapshot"][2], cap, p)
    return p


def _ex6_b(permitted_gain, next_step):
    c, p = _ex6_cycles(), []
    cap = _EX6["service_cap_per_hour"]
    gain = min(c["snapshot"][2], cap) / min(c["cold"][2], cap)
    _number("permitted_gain", permitted_gain, gain,
            "the pool cannot run faster than the model service allows: cap the snapshot capacity first.", p)
    _choice("next_step", next_step, "snapshot", ("snapshot", "model_service"),
            "which constraint binds today, at the cold-reset capacity?", p)
    return p


def _ex6_c(reset_is_lever, snapshot_restores_external_refund):
    p = []
    _boolean("reset_is_lever", reset_is_lever, True,
             "compare the reset share with the chapter's repair pool, where cold reset was under half.", p)
    _boolean("snapshot_restores_external_refund", snapshot_restores_external_refund, False,
             "a snapshot restores the local fixture; where does an issued payment live?", p)
    return p


# ---------------------------------------------------------------- exercise 7 (17.9.4-17.9.5, eqs 8-9)

_EX7 = {"step_s": 40.0, "max_lag": 2, "classes": ((0.70, 30.0), (0.25, 90.0), (0.05, 200.0)),
        "per_step": 256, "trials": 3, "trial_s": 10.0, "utilization": 0.8,
        "incorrect": (0.60, 0.10), "correct": (0.40, 0.97)}


def _ex7_a(lag_30, lag_90, lag_200, excluded_fraction):
    from rlvr_lab.cycle_time import admit, version_lag

    g, p = _EX7, []
    hint = "equation 8: the lag is floor(tau_admit / T_step)."
    for name, value, (_, age) in zip(("lag_30", "lag_90", "lag_200"), (lag_30, lag_90, lag_200), g["classes"]):
        _integer(name, value, int(version_lag(age, g["step_s"])), hint, p)
    excluded = sum(share for share, age in g["classes"] if not admit(age, g["step_s"], g["max_lag"]))
    _number("excluded_fraction", excluded_fraction, excluded,
            "add the shares of the duration classes whose lag exceeds 2.", p, True)
    return p


def _ex7_b(step_threshold_s, admit_below_s):
    g, p = _EX7, []
    slow = g["classes"][-1][1]
    _number("step_threshold_s", step_threshold_s, slow / (g["max_lag"] + 1),
            "floor(200 / T_step) <= 2 holds once 200 / T_step drops below 3.", p)
    _number("admit_below_s", admit_below_s, (g["max_lag"] + 1) * g["step_s"],
            "floor(tau / 40) <= 2 holds while tau stays below 3 steps.", p)
    return p


def _ex7_workers():
    from rlvr_lab.cycle_time import verifier_workers
    from rlvr_lab.rewards import expected_trials

    g = _EX7
    arrival = g["per_step"] / g["step_s"]
    all_trials = verifier_workers(arrival, g["trials"], g["trial_s"], g["utilization"])
    mixture = sum(w * float(expected_trials(q, g["trials"])) for w, q in (g["incorrect"], g["correct"]))
    stop = verifier_workers(arrival, mixture, g["trial_s"], g["utilization"])
    mean_q = sum(w * q for w, q in (g["incorrect"], g["correct"]))
    plugged = verifier_workers(arrival, float(expected_trials(mean_q, g["trials"])), g["trial_s"],
                               g["utilization"])
    return int(all_trials), int(stop), int(plugged)


def _ex7_c(workers_all_trials, workers_stop_first):
    all_trials, stop, _ = _ex7_workers()
    p = []
    _integer("workers_all_trials", workers_all_trials, all_trials,
             "equation 9: W = ceil(lambda K t_v / rho_target) with lambda = 256 trajectories per 40 s step.", p)
    _integer("workers_stop_first", workers_stop_first, stop,
             "replace K by the mixture average of E[N | q] = sum over j < K of q^j, each class with its q.", p)
    return p


def _ex7_d(workers_mean_q, underprovisioned):
    _, stop, plugged = _ex7_workers()
    p = []
    _integer("workers_mean_q", workers_mean_q, plugged,
             "plug the population's mean q (0.6 x 0.10 + 0.4 x 0.97) into E[N | q] and size as before.", p)
    _boolean("underprovisioned", underprovisioned, plugged < stop,
             "E[N | q] is convex in q; compare this pool with the one from part (c).", p)
    return p


# ---------------------------------------------------------------- exercise 8 (17.5.3, 17.8.2, eq 5)

_EX8 = {"short": 2000, "long": 6000, "w_length": 0.4, "w_format": 0.2, "nominal_cap": 4000,
        "pass_tokens": 9000, "fail_tokens": 500}


def _ex8_a(penalty_ratio):
    g, p = _EX8, []
    _number("penalty_ratio", penalty_ratio, g["long"] / g["short"],
            "equation 5 gives each token the weight A_i / |o_i|; divide the short failure's per-token "
            "weight by the long one's.", p)
    return p


def _ex8_b(pass_score, fail_score, pass_length_limit):
    from rlvr_lab.rewards import composite_reward

    g, p = _EX8, []
    cap, wf, wl = g["nominal_cap"], g["w_format"], g["w_length"]
    hint = "len = tokens / 4000 is not capped at 1 because the runtime does not enforce the cap."
    _number("pass_score", pass_score, float(composite_reward(1, 0.0, g["pass_tokens"] / cap, wf, wl)), hint, p)
    _number("fail_score", fail_score, float(composite_reward(0, 1.0, g["fail_tokens"] / cap, wf, wl)), hint, p)
    best_failure = wf  # F = 1 and len -> 0
    _number("pass_length_limit", pass_length_limit, (1.0 - best_failure) * cap / wl,
            "the best-scoring failure has F = 1 and len -> 0; solve 1 - w_length * L / 4000 = that score for L.",
            p)
    return p


def _ex8_c(first_diagnostic, runtime_enforces_cap, w_length_upper):
    g, p = _EX8, []
    _choice("first_diagnostic", first_diagnostic, "loss_normalization",
            ("loss_normalization", "length_penalty_sweep", "larger_group"),
            "part (a) names a cause of growing failures that lies in the loss, not in the reward.", p)
    _boolean("runtime_enforces_cap", runtime_enforces_cap, True,
             "the ordering bound assumes len stays in [0, 1].", p)
    _number("w_length_upper", w_length_upper, 1.0 - g["w_format"],
            "any surviving length term must keep w_format + w_length < 1; give the bound on w_length.", p)
    return p


# ---------------------------------------------------------------- registry


def _part(id_, fn, title):
    names = fn.__code__.co_varnames[: fn.__code__.co_argcount]
    return Part(id_, tuple(names), title), fn


_REGISTRY = dict(
    (part.id, (part, fn))
    for part, fn in (
        _part("ex1.part_a", _ex1_a, "false-accept share early and late"),
        _part("ex1.part_b", _ex1_b, "largest alpha for a 10 % share"),
        _part("ex1.part_c", _ex1_c, "when to harden the verifier"),
        _part("ex2.part_a", _ex2_a, "score the observed pair"),
        _part("ex2.part_b", _ex2_b, "worst pass and best failure"),
        _part("ex2.part_c", _ex2_c, "safe range of the length weight"),
        _part("ex3.part_a", _ex3_a, "smallest K"),
        _part("ex3.part_b", _ex3_b, "false rejection and expected trials"),
        _part("ex3.part_c", _ex3_c, "trials or fixture repair first"),
        _part("ex4.part_a", _ex4_a, "contrast per family and rollouts per informative group"),
        _part("ex4.part_b", _ex4_b, "contrast from the pooled pass rate"),
        _part("ex4.part_c", _ex4_c, "lone-pass coefficient and the drop proposal"),
        _part("ex5.part_a", _ex5_a, "multiples for exhaustive and three forks"),
        _part("ex5.part_b", _ex5_b, "M for a 0.05 bound and its cost"),
        _part("ex5.part_c", _ex5_c, "largest affordable M and resolution"),
        _part("ex5.part_d", _ex5_redesign, "a schedule that resolves 0.20 within budget"),
        _part("ex6.part_a", _ex6_a, "cycle, reset share and capacity"),
        _part("ex6.part_b", _ex6_b, "permitted gain and next step"),
        _part("ex6.part_c", _ex6_c, "reset as the lever; external state"),
        _part("ex7.part_a", _ex7_a, "version lags and excluded fraction"),
        _part("ex7.part_b", _ex7_b, "step-time and duration thresholds"),
        _part("ex7.part_c", _ex7_c, "verifier workers, all trials and stop-first"),
        _part("ex7.part_d", _ex7_d, "workers from the mean q"),
        _part("ex8.part_a", _ex8_a, "per-token penalty ratio"),
        _part("ex8.part_b", _ex8_b, "scores and the pass-length limit"),
        _part("ex8.part_c", _ex8_c, "diagnose, enforce, bound"),
    )
)

#: Every checked part, keyed by part id, in exercise order.
PARTS = {part_id: part for part_id, (part, _) in _REGISTRY.items()}


def verify(part_id: str, values: dict) -> list:
    """Return the problems with ``values`` for one part of section 17.14 (an empty list: all correct).

    ``values`` maps the part's variable names (``PARTS[part_id].names``) to the student's plain values
    (numbers, booleans, strings, lists). Each problem is a hint; none contains the expected value.

    >>> verify("ex1.part_c", {"harden_when": None})
    ["harden_when is still unassigned: pick one of ['before', 'after']."]
    >>> verify("ex1.part_c", {"harden_when": "whenever"})
    ["harden_when must be one of ['before', 'after'], got 'whenever'."]
    """
    if part_id not in _REGISTRY:
        raise ValueError(f"part_id must be one of {sorted(_REGISTRY)}, got {part_id!r}")
    part, fn = _REGISTRY[part_id]
    missing = [name for name in part.names if name not in values]
    if missing:
        return [f"no value recorded for {', '.join(missing)}."]
    return fn(**{name: values[name] for name in part.names})


def _report(part_id: str, *args) -> None:
    """Print a confirmation, or raise :class:`CheckFailed` whose message lists the hints."""
    values = dict(zip(PARTS[part_id].names, args))
    problems = verify(part_id, values)
    if problems:
        raise CheckFailed(f"{part_id} not yet right:\n  - " + "\n  - ".join(problems))
    print(f"{part_id}: correct.")


class ex1:
    """17.14 exercise 1, false accepts early and late in training (section 17.3.2, equation 1)."""

    @staticmethod
    def part_a(share_early, share_late):
        """Check the false-accept shares (fractions) at rho = 0.04 and rho = 0.40.

        >>> ex1.part_a(None, 0.5)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        rlvr_lab.checks.CheckFailed: ex1.part_a not yet right:
          - share_early is still unassigned: replace the placeholder in the TODO cell.
          - share_late is too large. Hint: equation 1, ...
        """
        _report("ex1.part_a", share_early, share_late)

    @staticmethod
    def part_b(alpha_max):
        """Check the largest false-acceptance rate (a fraction) that keeps the share <= 0.10.

        >>> ex1.part_b(2)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        rlvr_lab.checks.CheckFailed: ex1.part_b not yet right:
          - alpha_max is too large. Hint: set equation 1 equal to 0.10 ...
        """
        _report("ex1.part_b", alpha_max)

    @staticmethod
    def part_c(harden_when):
        """Check the decision: ``"before"`` or ``"after"`` the pass rate has risen.

        >>> ex1.part_c("later")
        Traceback (most recent call last):
        ...
        rlvr_lab.checks.CheckFailed: ex1.part_c not yet right:
          - harden_when must be one of ['before', 'after'], got 'later'.
        """
        _report("ex1.part_c", harden_when)


class ex2:
    """17.14 exercise 2, keeping the pass above the failure (section 17.3.3)."""

    @staticmethod
    def part_a(pass_score, fail_score, pair_keeps_order):
        """Check the two scores (reward units) and whether the pair keeps pass above failure.

        >>> ex2.part_a(None, None, None)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        rlvr_lab.checks.CheckFailed: ex2.part_a not yet right:
          - pass_score is still unassigned: ...
        """
        _report("ex2.part_a", pass_score, fail_score, pair_keeps_order)

    @staticmethod
    def part_b(lowest_pass, highest_fail, every_pass_outranks):
        """Check the lowest pass score, highest failure score and the ordering verdict.

        >>> ex2.part_b(None, None, "yes")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        rlvr_lab.checks.CheckFailed: ex2.part_b not yet right:
        ...
          - every_pass_outranks should be True or False, got str.
        """
        _report("ex2.part_b", lowest_pass, highest_fail, every_pass_outranks)

    @staticmethod
    def part_c(w_length_upper):
        """Check the (exclusive) upper bound on the length weight when w_format = 0.4.

        >>> ex2.part_c(float("nan"))
        Traceback (most recent call last):
        ...
        rlvr_lab.checks.CheckFailed: ex2.part_c not yet right:
          - w_length_upper is nan: a finite number is expected.
        """
        _report("ex2.part_c", w_length_upper)


class ex3:
    """17.14 exercise 3, sizing an all-pass rule (section 17.7.2)."""

    @staticmethod
    def part_a(trials_needed):
        """Check the smallest number of trials K (a count).

        >>> ex3.part_a(2.5)
        Traceback (most recent call last):
        ...
        rlvr_lab.checks.CheckFailed: ex3.part_a not yet right:
          - trials_needed should be a whole number (a count), got 2.5.
        """
        _report("ex3.part_a", trials_needed)

    @staticmethod
    def part_b(false_rejection, trials_correct, trials_incorrect):
        """Check the false-rejection probability and the expected trials (counts) of each patch.

        >>> ex3.part_b(None, None, None)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        rlvr_lab.checks.CheckFailed: ex3.part_b not yet right:
        ...
        """
        _report("ex3.part_b", false_rejection, trials_correct, trials_incorrect)

    @staticmethod
    def part_c(first_action):
        """Check the decision: ``"add_trials"`` or ``"repair_fixture"``.

        >>> ex3.part_c(None)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        rlvr_lab.checks.CheckFailed: ex3.part_c not yet right:
          - first_action is still unassigned: ...
        """
        _report("ex3.part_c", first_action)


class ex4:
    """17.14 exercise 4, a mixed task pool and its silent groups (sections 17.5.1 and 17.5.4)."""

    @staticmethod
    def part_a(contrast_hard, contrast_easy, informative_groups, rollouts_per_informative):
        """Check both contrast probabilities, informative groups per update and rollouts per informative group.

        >>> ex4.part_a(None, None, None, None)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        rlvr_lab.checks.CheckFailed: ex4.part_a not yet right:
        ...
        """
        _report("ex4.part_a", contrast_hard, contrast_easy, informative_groups, rollouts_per_informative)

    @staticmethod
    def part_b(contrast_pooled, informative_pooled):
        """Check the contrast probability from the pooled pass rate and its informative-group count.

        >>> ex4.part_b(None, None)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        rlvr_lab.checks.CheckFailed: ex4.part_b not yet right:
        ...
        """
        _report("ex4.part_b", contrast_pooled, informative_pooled)

    @staticmethod
    def part_c(lone_pass_coefficient, drop_hard_family):
        """Check the lone-pass coefficient (advantage units) and the verdict on dropping the hard family.

        >>> ex4.part_c(None, None)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        rlvr_lab.checks.CheckFailed: ex4.part_c not yet right:
        ...
        """
        _report("ex4.part_c", lone_pass_coefficient, drop_hard_family)


class ex5:
    """17.14 exercise 5, a continuation-sampling budget (section 17.4.3)."""

    @staticmethod
    def part_a(multiple_exhaustive, multiple_three_forks):
        """Check the generated-token multiples of the base trajectory.

        >>> ex5.part_a(None, None)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        rlvr_lab.checks.CheckFailed: ex5.part_a not yet right:
        ...
        """
        _report("ex5.part_a", multiple_exhaustive, multiple_three_forks)

    @staticmethod
    def part_b(m_for_target, multiple_for_target):
        """Check the continuations for a 0.05 bound and the multiple they cost at the three forks.

        >>> ex5.part_b(None, None)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        rlvr_lab.checks.CheckFailed: ex5.part_b not yet right:
        ...
        """
        _report("ex5.part_b", m_for_target, multiple_for_target)

    @staticmethod
    def part_c(m_budget, se_budget, can_resolve):
        """Check the largest affordable M, its standard-error bound and whether 0.20 is resolvable.

        >>> ex5.part_c(None, None, None)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        rlvr_lab.checks.CheckFailed: ex5.part_c not yet right:
        ...
        """
        _report("ex5.part_c", m_budget, se_budget, can_resolve)

    @staticmethod
    def part_d(redesign_forks, redesign_m):
        """Check a redesigned schedule: within 30x the base and able to resolve a 0.20 difference.

        >>> ex5.part_d([0], 10)
        Traceback (most recent call last):
        ...
        rlvr_lab.checks.CheckFailed: ex5.part_d not yet right:
          - redesign_forks must be distinct completed turns between 1 and 39.
        """
        _report("ex5.part_d", redesign_forks, redesign_m)


class ex6:
    """17.14 exercise 6, reset for a short-horizon support agent (section 17.9.2, equation 6)."""

    @staticmethod
    def part_a(cycle_cold, cycle_snapshot, reset_share_cold, reset_share_snapshot, capacity_cold,
               capacity_snapshot):
        """Check cycle times (s), reset shares (fractions) and capacities (episodes per hour).

        >>> ex6.part_a(None, None, None, None, None, None)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        rlvr_lab.checks.CheckFailed: ex6.part_a not yet right:
        ...
        """
        _report("ex6.part_a", cycle_cold, cycle_snapshot, reset_share_cold, reset_share_snapshot,
                capacity_cold, capacity_snapshot)

    @staticmethod
    def part_b(permitted_gain, next_step):
        """Check the capacity gain (a ratio) the model service permits and the next step.

        >>> ex6.part_b(None, None)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        rlvr_lab.checks.CheckFailed: ex6.part_b not yet right:
        ...
        """
        _report("ex6.part_b", permitted_gain, next_step)

    @staticmethod
    def part_c(reset_is_lever, snapshot_restores_external_refund):
        """Check the two judgements of part (c).

        >>> ex6.part_c(None, None)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        rlvr_lab.checks.CheckFailed: ex6.part_c not yet right:
        ...
        """
        _report("ex6.part_c", reset_is_lever, snapshot_restores_external_refund)


class ex7:
    """17.14 exercise 7, staleness bounds and verifier provisioning (sections 17.9.4-17.9.5, eqs 8-9)."""

    @staticmethod
    def part_a(lag_30, lag_90, lag_200, excluded_fraction):
        """Check the version lags (versions) of the three duration classes and the excluded fraction.

        >>> ex7.part_a(None, None, None, None)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        rlvr_lab.checks.CheckFailed: ex7.part_a not yet right:
        ...
        """
        _report("ex7.part_a", lag_30, lag_90, lag_200, excluded_fraction)

    @staticmethod
    def part_b(step_threshold_s, admit_below_s):
        """Check the step time (s) above which 200 s rollouts are admitted and the admitted duration bound (s).

        >>> ex7.part_b(None, None)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        rlvr_lab.checks.CheckFailed: ex7.part_b not yet right:
        ...
        """
        _report("ex7.part_b", step_threshold_s, admit_below_s)

    @staticmethod
    def part_c(workers_all_trials, workers_stop_first):
        """Check the verifier workers when all trials run and under stop-on-first-rejection.

        >>> ex7.part_c(None, None)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        rlvr_lab.checks.CheckFailed: ex7.part_c not yet right:
        ...
        """
        _report("ex7.part_c", workers_all_trials, workers_stop_first)

    @staticmethod
    def part_d(workers_mean_q, underprovisioned):
        """Check the pool sized from the mean q and whether it under-provisions.

        >>> ex7.part_d(None, None)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        rlvr_lab.checks.CheckFailed: ex7.part_d not yet right:
        ...
        """
        _report("ex7.part_d", workers_mean_q, underprovisioned)


class ex8:
    """17.14 exercise 8, diagnosing a lengthening policy (sections 17.5.3 and 17.8.2, equation 5)."""

    @staticmethod
    def part_a(penalty_ratio):
        """Check the per-token penalty ratio, short failure over long failure.

        >>> ex8.part_a(None)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        rlvr_lab.checks.CheckFailed: ex8.part_a not yet right:
        ...
        """
        _report("ex8.part_a", penalty_ratio)

    @staticmethod
    def part_b(pass_score, fail_score, pass_length_limit):
        """Check the two scores (reward units) and the pass length (tokens) beyond which a pass loses.

        >>> ex8.part_b(None, None, None)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        rlvr_lab.checks.CheckFailed: ex8.part_b not yet right:
        ...
        """
        _report("ex8.part_b", pass_score, fail_score, pass_length_limit)

    @staticmethod
    def part_c(first_diagnostic, runtime_enforces_cap, w_length_upper):
        """Check the redesign's three decisions.

        >>> ex8.part_c(None, None, None)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        rlvr_lab.checks.CheckFailed: ex8.part_c not yet right:
        ...
        """
        _report("ex8.part_c", first_diagnostic, runtime_enforces_cap, w_length_upper)
