"""The exercise key of section 17.14: every part's expected values, computed only in the grader.

This module is the grader's side of the course boundary (section 17.7 applied to grading). It lives in
the key folder, next to the reference solutions, not in the ``rlvr_lab`` package: students who install
the package never get it, ``rlvr-lab grade --key DIR`` loads it from ``DIR`` (see
:func:`rlvr_lab.grading.load_key_module`), and every grading sandbox has that folder hidden. It computes
each part's expected values from the library (:mod:`rlvr_lab.rewards`, :mod:`rlvr_lab.credit`,
:mod:`rlvr_lab.cycle_time`, :mod:`rlvr_lab.grpo`) with the exercise's givens, and :func:`verify`
compares a student's plain values with them. The student-side self-checks (:mod:`rlvr_lab.checks`) hold
only salted hashes built from it by :func:`self_check_table`; rebuild them after editing a given with
``python labs/exercises/solutions/exercise_key.py``.

Two answers are new computations that the library does not provide, and they are written out here:

* exercise 1(b): the largest false-acceptance rate that keeps the false-accept share (equation 1)
  at or below a target share ``s``: ``alpha_max = s * rho * beta / ((1 - s) * (1 - rho))``, obtained
  by solving equation 1 for alpha;
* exercise 8(a): at ratio 1 the per-token weight is ``A_i / |o_i|`` (equation 5), so two failures
  with the same advantage have per-token penalties in the inverse ratio of their lengths.

Whole-number answers (counts, equation 9's ``ceil``) are computed exactly with fractions, never with a
float ceiling. Answers are accepted as int, float, bool, :class:`fractions.Fraction`,
:class:`decimal.Decimal` and numpy scalars; a problem message is a hint and never holds the expected
value or its direction.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from numbers import Real

from rlvr_lab.checks import redesign_problems

__all__ = ["PARTS", "verify", "expectations", "self_check_table"]

#: Relative tolerance for numeric answers: 0.5 %, so three significant figures always pass.
REL_TOL = 5e-3
#: Absolute tolerance for numeric answers near zero.
ABS_TOL = 1e-6


@dataclass(frozen=True)
class Part:
    """One checked part of an exercise."""

    #: part identifier, e.g. ``"ex1.part_a"``
    id: str
    #: the notebook variables the checker reads, in call order
    names: tuple
    #: what the part asks, in one line (shown in grade tables)
    title: str


#: While :func:`expectations` runs, the list every comparison appends its expectation to.
_recording: list | None = None


def _record(name: str, kind: str, expected, hint: str, **extra) -> None:
    if _recording is not None:
        _recording.append(dict(name=name, kind=kind, expected=expected, hint=hint, **extra))


# ---------------------------------------------------------------- value helpers


def _is_missing(value) -> bool:
    return value is None or value is Ellipsis


def _numpy_item(value):
    """A numpy scalar or size-1 array as the Python value it holds; anything else unchanged."""
    if type(value).__module__ == "numpy" and hasattr(value, "item") and getattr(value, "size", 2) == 1:
        return value.item()
    return value


def _exact(name: str, value, problems: list):
    """``value`` as an exact number (int or Fraction), or append a problem and return None.

    >>> _exact("x", Decimal("0.25"), []), _exact("x", 3, []), _exact("x", True, ["?"])
    (Fraction(1, 4), 3, None)
    """
    value = _numpy_item(value)
    if _is_missing(value):
        problems.append(f"{name} is still unassigned: replace the placeholder in the TODO cell.")
        return None
    if isinstance(value, bool) or not isinstance(value, (Real, Decimal)):
        problems.append(f"{name} should be a single number, got {type(value).__name__}.")
        return None
    if isinstance(value, Decimal):
        if not value.is_finite():
            problems.append(f"{name} is {value}: a finite number is expected.")
            return None
        return Fraction(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, Fraction):
        return value
    number = float(value)
    if not math.isfinite(number):
        problems.append(f"{name} is {number}: a finite number is expected.")
        return None
    return Fraction(number)


def _close(given, expected) -> bool:
    return math.isclose(float(given), float(expected), rel_tol=REL_TOL, abs_tol=ABS_TOL)


def _number(name: str, value, expected, hint: str, problems: list, fraction: bool = False) -> None:
    """Compare a numeric answer with ``expected`` at :data:`REL_TOL`; a miss appends ``hint`` only."""
    _record(name, "number", float(expected), hint, fraction=fraction)
    given = _exact(name, value, problems)
    if given is None:
        return
    if _close(given, expected):
        return
    if fraction and _close(given / 100, expected):
        problems.append(f"{name} looks like a percentage: give it as a fraction in [0, 1].")
        return
    problems.append(f"{name} is not right. Hint: {hint}")


def _integer(name: str, value, expected: int, hint: str, problems: list) -> None:
    """Compare a count exactly (``expected`` is an exact int; 240.0 and Fraction(240) equal 240)."""
    _record(name, "integer", int(expected), hint)
    given = _exact(name, value, problems)
    if given is None:
        return
    if given != int(given):
        problems.append(f"{name} should be a whole number (a count), got {float(given)}.")
        return
    if int(given) != expected:
        problems.append(f"{name} is not right. Hint: {hint}")


def _boolean(name: str, value, expected: bool, hint: str, problems: list) -> None:
    _record(name, "boolean", bool(expected), hint)
    value = _numpy_item(value)
    if _is_missing(value):
        problems.append(f"{name} is still unassigned: set it to True or False.")
        return
    if not isinstance(value, bool):
        problems.append(f"{name} should be True or False, got {type(value).__name__}.")
        return
    if value is not expected:
        problems.append(f"{name} is not right. Hint: {hint}")


def _choice(name: str, value, expected: str, options: tuple, hint: str, problems: list) -> None:
    _record(name, "choice", expected, hint, options=list(options))
    if _is_missing(value):
        problems.append(f"{name} is still unassigned: pick one of {list(options)}.")
        return
    if not isinstance(value, str) or value not in options:
        problems.append(f"{name} must be one of {list(options)}, got {value!r}.")
        return
    if value != expected:
        problems.append(f"{name}: reconsider. Hint: {hint}")


def _ceil_exact(numerator: Fraction) -> int:
    """Ceiling of an exact fraction (equation 9 without float error: 256/40*3*10/0.8 is exactly 240)."""
    return -((-numerator.numerator) // numerator.denominator)


def _q(text: str) -> Fraction:
    """A given written in decimal, as an exact fraction (``_q("0.8") == Fraction(4, 5)``)."""
    return Fraction(text)


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
    """Any schedule within budget that resolves the difference passes; there is no single answer.

    The rule holds no expected value, so the student-side check and the grader share it
    (:func:`rlvr_lab.checks.redesign_problems`).
    """
    _record("redesign_forks", "custom", None, "")
    _record("redesign_m", "custom", None, "")
    return redesign_problems(redesign_forks, _numpy_item(redesign_m), _EX5["horizon"], _EX5["budget"],
                             _EX5["difference"])


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
    """Equation 9 for the three pools, exactly: W = ceil(lambda K t_v / rho) over fractions.

    >>> _ex7_workers()
    (240, 147, 132)
    """
    g = _EX7
    arrival = Fraction(g["per_step"]) / _q(str(g["step_s"]))
    trial_s, rho, k = _q(str(g["trial_s"])), _q(str(g["utilization"])), g["trials"]

    def mean_trials(q: Fraction) -> Fraction:  # E[N | q] = sum over j < K of q^j
        return sum((q ** j for j in range(k)), Fraction(0))

    classes = [(_q(str(w)), _q(str(q))) for w, q in (g["incorrect"], g["correct"])]
    mixture = sum((w * mean_trials(q) for w, q in classes), Fraction(0))
    mean_q = sum((w * q for w, q in classes), Fraction(0))
    return tuple(_ceil_exact(arrival * trials * trial_s / rho) for trials in (Fraction(k), mixture, mean_trials(mean_q)))


def _ex7_c(workers_all_trials, workers_stop_first):
    all_trials, stop, _ = _ex7_workers()
    p = []
    _integer("workers_all_trials", workers_all_trials, all_trials,
             "equation 9: W = ceil(lambda K t_v / rho_target) with lambda = 256 trajectories per 40 s step "
             "(a float product that should be whole can round up past it: compute it exactly).", p)
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


def expectations(part_id: str) -> list:
    """The comparisons ``part_id`` makes: ``[{"name", "kind", "expected", "hint", ...}]`` (grader only).

    >>> [(e["name"], e["kind"], e["expected"]) for e in expectations("ex7.part_c")]
    [('workers_all_trials', 'integer', 240), ('workers_stop_first', 'integer', 147)]
    """
    global _recording
    if part_id not in _REGISTRY:
        raise ValueError(f"part_id must be one of {sorted(_REGISTRY)}, got {part_id!r}")
    part, fn = _REGISTRY[part_id]
    _recording = []
    try:
        fn(**{name: None for name in part.names})
        return _recording
    finally:
        _recording = None


def self_check_table(salt_bytes: int = 16) -> dict:
    """The student-side self-check table: per part its names and, per name, a salted hash (no value).

    Each expectation becomes ``{"kind", "hint", "salt", "hash"}`` (plus ``options`` for a choice and
    ``fraction`` for a share) where ``hash`` is :func:`rlvr_lab.checks.answer_hash` of the expected
    value in the canonical form the self-check compares (3 significant figures for numbers).
    """
    import secrets

    from rlvr_lab.checks import HASH_ITERATIONS, answer_hash, canonical

    table = {"iterations": HASH_ITERATIONS, "parts": {}}
    for part_id, part in PARTS.items():
        entries = {}
        for e in expectations(part_id):
            entry = {"kind": e["kind"], "hint": e["hint"]}
            for extra in ("options", "fraction"):
                if extra in e:
                    entry[extra] = e[extra]
            if e["kind"] != "custom":
                entry["salt"] = secrets.token_hex(salt_bytes)
                entry["hash"] = answer_hash(part_id, e["name"], canonical(e["kind"], e["expected"]), entry["salt"])
            entries[e["name"]] = entry
        table["parts"][part_id] = {"names": list(part.names), "title": part.title, "checks": entries}
    return table


def table_matches(table: dict) -> bool:
    """True when every hash of ``table`` is the hash of this key's expected value (same parts and kinds)."""
    from rlvr_lab.checks import answer_hash, canonical

    if set(table.get("parts", {})) != set(PARTS):
        return False
    for part_id in PARTS:
        entries = table["parts"][part_id]["checks"]
        for e in expectations(part_id):
            entry = entries.get(e["name"], {})
            if entry.get("kind") != e["kind"] or entry.get("hint") != e["hint"]:
                return False
            if e["kind"] != "custom" and answer_hash(part_id, e["name"], canonical(e["kind"], e["expected"]),
                                                     entry.get("salt", "00"), table["iterations"]) != entry.get("hash"):
                return False
    return True


def write_self_check_table(path: str | None = None) -> str:
    """Write :func:`self_check_table` to ``path`` (default: the package's ``check_table.json``), unless
    the table there already matches this key (so rebuilding does not churn the salts)."""
    import json
    import os

    import rlvr_lab.checks

    path = path or os.path.join(os.path.dirname(os.path.abspath(rlvr_lab.checks.__file__)), "check_table.json")
    try:
        with open(path, encoding="utf-8") as handle:
            if table_matches(json.load(handle)):
                return path + " (unchanged)"
    except (OSError, ValueError, KeyError, TypeError):
        pass
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(self_check_table(), handle, indent=1, sort_keys=True)
        handle.write("\n")
    return path


if __name__ == "__main__":  # python labs/exercises/solutions/exercise_key.py: rebuild the self-check table
    print(write_self_check_table())
