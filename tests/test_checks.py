"""Exercise key and self-checks (section 17.14): right answers pass, wrong ones get a hint that hides the
answer, the grader is fair to exact and numpy types, and the student-side table holds no expected value."""

import json
import math
import os
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

from rlvr_lab import checks
from rlvr_lab.grading import load_key_module

key = load_key_module(
    os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "labs", "exercises", "solutions")
)

# The answers worked by hand from the chapter's relations (EQUATIONS.md), independent of the library.
ANSWERS = {
    "ex1.part_a": {"share_early": 0.0192 / 0.0592, "share_late": 0.012 / 0.412},
    "ex1.part_b": {"alpha_max": 0.04 / (9 * 0.96)},
    "ex1.part_c": {"harden_when": "before"},
    "ex2.part_a": {"pass_score": 0.57, "fail_score": 0.365, "pair_keeps_order": True},
    "ex2.part_b": {"lowest_pass": 0.3, "highest_fail": 0.4, "every_pass_outranks": False},
    "ex2.part_c": {"w_length_upper": 0.6},
    "ex3.part_a": {"trials_needed": 4},
    "ex3.part_b": {
        "false_rejection": 1 - 0.95**4,
        "trials_correct": 1 + 0.95 + 0.95**2 + 0.95**3,
        "trials_incorrect": 1.417,
    },
    "ex3.part_c": {"first_action": "repair_fixture"},
    "ex4.part_a": {
        "contrast_hard": 1 - 0.02**8 - 0.98**8,
        "contrast_easy": 1 - 0.6**8 - 0.4**8,
        "informative_groups": 128 * (2 - 0.02**8 - 0.98**8 - 0.6**8 - 0.4**8),
        "rollouts_per_informative": 2048 / (128 * (2 - 0.02**8 - 0.98**8 - 0.6**8 - 0.4**8)),
    },
    "ex4.part_b": {"contrast_pooled": 1 - 0.31**8 - 0.69**8, "informative_pooled": 256 * (1 - 0.31**8 - 0.69**8)},
    "ex4.part_c": {"lone_pass_coefficient": math.sqrt(7), "drop_hard_family": False},
    "ex5.part_a": {"multiple_exhaustive": 313.0, "multiple_three_forks": 25.0},
    "ex5.part_b": {"m_for_target": 100, "multiple_for_target": 151.0},
    "ex5.part_c": {"m_budget": 19, "se_budget": 1 / (2 * math.sqrt(19)), "can_resolve": False},
    "ex5.part_d": {"redesign_forks": [20], "redesign_m": 50},
    "ex6.part_a": {
        "cycle_cold": 9.0,
        "cycle_snapshot": 3.3,
        "reset_share_cold": 6 / 9,
        "reset_share_snapshot": 0.3 / 3.3,
        "capacity_cold": 25600.0,
        "capacity_snapshot": 64 * 3600 / 3.3,
    },
    "ex6.part_b": {"permitted_gain": 40000 / 25600, "next_step": "snapshot"},
    "ex6.part_c": {"reset_is_lever": True, "snapshot_restores_external_refund": False},
    "ex7.part_a": {"lag_30": 0, "lag_90": 2, "lag_200": 5, "excluded_fraction": 0.05},
    "ex7.part_b": {"step_threshold_s": 200 / 3, "admit_below_s": 120.0},
    "ex7.part_c": {"workers_all_trials": 240, "workers_stop_first": 147},
    "ex7.part_d": {"workers_mean_q": 132, "underprovisioned": True},
    "ex8.part_a": {"penalty_ratio": 3.0},
    "ex8.part_b": {"pass_score": 0.1, "fail_score": 0.15, "pass_length_limit": 8000.0},
    "ex8.part_c": {"first_diagnostic": "loss_normalization", "runtime_enforces_cap": True, "w_length_upper": 0.8},
}


def test_every_part_has_an_answer_and_names_match():
    assert set(ANSWERS) == set(key.PARTS)
    for part_id, values in ANSWERS.items():
        assert set(values) == set(key.PARTS[part_id].names), part_id
        assert checks.part_names(part_id) == key.PARTS[part_id].names


@pytest.mark.parametrize("part_id", sorted(ANSWERS))
def test_hand_worked_answers_pass_the_key_and_the_self_check(part_id):
    assert key.verify(part_id, ANSWERS[part_id]) == []
    assert checks.self_check(part_id, ANSWERS[part_id]) == []


@pytest.mark.parametrize("part_id", sorted(ANSWERS))
def test_unassigned_answers_fail_with_a_placeholder_hint(part_id):
    blank = {name: None for name in key.PARTS[part_id].names}
    for problems in (key.verify(part_id, blank), checks.self_check(part_id, blank)):
        assert problems and all("unassigned" in p for p in problems)


def _perturbed(value):
    if isinstance(value, bool):
        return not value
    if isinstance(value, str):
        return None
    if isinstance(value, list):
        return [1]
    if isinstance(value, int):
        return value - 1
    return value * 1.2 + 0.01


@pytest.mark.parametrize("part_id", sorted(ANSWERS))
def test_each_wrong_value_is_caught_and_no_hint_reveals_the_answer_or_its_direction(part_id):
    for name, value in ANSWERS[part_id].items():
        values = dict(ANSWERS[part_id], **{name: _perturbed(value)})
        for problems in (key.verify(part_id, values), checks.self_check(part_id, values)):
            assert problems and any(name in p for p in problems), (part_id, name)
            text = " ".join(problems)
            assert "too large" not in text and "too small" not in text
            if isinstance(value, float):
                for shown in (f"{value:.3f}", f"{value:.4g}", repr(value)):
                    assert shown not in text, (part_id, name, shown)


def test_the_self_check_table_holds_hashes_not_values_and_matches_the_key():
    table = checks._load_table()
    assert key.table_matches(table)
    raw = json.dumps(table)
    for part_id in key.PARTS:
        for e in key.expectations(part_id):
            entry = table["parts"][part_id]["checks"][e["name"]]
            if e["kind"] == "custom":
                assert "hash" not in entry
                continue
            assert (
                checks.answer_hash(part_id, e["name"], checks.canonical(e["kind"], e["expected"]), entry["salt"])
                == entry["hash"]
            ), (part_id, e["name"])
            assert set(entry) <= {"kind", "hint", "salt", "hash", "options", "fraction"}
            if e["kind"] == "number":
                for shown in (repr(e["expected"]), f"{e['expected']:.3g}", checks.canonical("number", e["expected"])):
                    assert shown not in entry["hint"], (part_id, e["name"])
                assert checks.canonical("number", e["expected"]) not in raw.replace(entry["hash"], "")


def test_three_significant_figures_pass_and_percentages_get_their_own_hint():
    good = {"share_early": 0.324, "share_late": 0.0291}
    assert key.verify("ex1.part_a", good) == [] and checks.self_check("ex1.part_a", good) == []
    pct = {"share_early": 32.43, "share_late": 0.0291}
    expected = ["share_early looks like a percentage: give it as a fraction in [0, 1]."]
    assert key.verify("ex1.part_a", pct) == expected and checks.self_check("ex1.part_a", pct) == expected


def test_exact_integers_and_every_reasonable_type_are_accepted_on_both_sides():
    exact = {"workers_all_trials": 240, "workers_stop_first": 147}
    assert key.verify("ex7.part_c", exact) == []
    float_ceil = math.ceil(256 / 40 * 3 * 10 / 0.8)
    assert float_ceil == 241  # the float-rounding trap: the key is exact, and says how to avoid it
    problems = key.verify("ex7.part_c", dict(exact, workers_all_trials=float_ceil))
    assert problems and "floating-point trap" in problems[0].lower()
    kinds = [
        {"workers_all_trials": Fraction(240), "workers_stop_first": Decimal("147")},
        {"workers_all_trials": np.int64(240), "workers_stop_first": 147.0},
    ]
    for values in kinds:
        assert key.verify("ex7.part_c", values) == [] and checks.self_check("ex7.part_c", values) == []
    numeric = [
        {"alpha_max": Fraction(1, 216)},
        {"alpha_max": Decimal("0.00463")},
        {"alpha_max": np.float32(1 / 216)},
        {"alpha_max": np.array([1 / 216])},
    ]
    for values in numeric:
        assert key.verify("ex1.part_b", values) == [] and checks.self_check("ex1.part_b", values) == [], values
    flags = dict(ANSWERS["ex7.part_d"], underprovisioned=np.bool_(True))
    assert key.verify("ex7.part_d", flags) == [] and checks.self_check("ex7.part_d", flags) == []


def test_types_are_explained():
    for verify in (key.verify, checks.self_check):
        assert "True or False" in verify("ex2.part_a", dict(ANSWERS["ex2.part_a"], pair_keeps_order=1))[0]
        assert "whole number" in verify("ex3.part_a", {"trials_needed": 4.5})[0]
        assert "one of" in verify("ex3.part_c", {"first_action": "both"})[0]
        assert "single number" in verify("ex1.part_b", {"alpha_max": "0.004"})[0]
        assert "finite" in verify("ex1.part_b", {"alpha_max": float("inf")})[0]


def test_redesign_accepts_any_schedule_within_budget_that_resolves():
    for verify in (key.verify, checks.self_check):
        assert verify("ex5.part_d", {"redesign_forks": [30, 35], "redesign_m": 60}) == []
        over = verify("ex5.part_d", {"redesign_forks": [5], "redesign_m": 50})
        assert over and "30x" in over[0]
        weak = verify("ex5.part_d", {"redesign_forks": [35], "redesign_m": 20})
        assert weak and "cannot resolve" in weak[0]


def test_checker_prints_on_success_and_raises_a_hint_on_failure(capsys):
    checks.ex3.part_a(4)
    assert capsys.readouterr().out.strip() == "ex3.part_a: correct."
    with pytest.raises(checks.CheckFailed) as err:
        checks.ex3.part_a(3)
    assert "not right" in str(err.value) and "4" not in str(err.value).split("Hint")[0]
    with pytest.raises(TypeError, match="takes 1 values"):
        checks.ex3.part_a(3, 4)


def test_unknown_part_is_a_value_error():
    with pytest.raises(ValueError, match="part_id must be one of"):
        key.verify("ex10.part_a", {})
    with pytest.raises(ValueError, match="part_id must be one of"):
        checks.part_names("ex10.part_a")
    with pytest.raises(ValueError, match="graded by the verifier"):
        key.verify("ex9.part_a", {"group_advantages": None})


def test_exercise_7_hint_names_the_floating_point_trap_and_the_checked_answer_is_240():
    """ceil(256/40*3*10/0.8) is 241 in floats (the product is 240.00000000000003): the hint a student gets for
    that value names the trap and both ways out, and the key and the self-check accept exactly 240."""
    assert 256 / 40 * 3 * 10 / 0.8 == 240.00000000000003 and math.ceil(256 / 40 * 3 * 10 / 0.8) == 241
    assert [e["expected"] for e in key.expectations("ex7.part_c") if e["name"] == "workers_all_trials"] == [240]
    right = {"workers_all_trials": 240, "workers_stop_first": 147}
    assert key.verify("ex7.part_c", right) == [] and checks.self_check("ex7.part_c", right) == []
    trap = dict(right, workers_all_trials=math.ceil(256 / 40 * 3 * 10 / 0.8))
    for problems in (key.verify("ex7.part_c", trap), checks.self_check("ex7.part_c", trap)):
        assert len(problems) == 1 and problems[0].startswith("workers_all_trials is not right")
        hint = problems[0].lower()
        assert "floating-point" in hint and "round before the ceiling" in hint
        assert "integers" in hint and "fraction" in hint
        assert "240" not in hint and "241" not in hint  # the trap is named, the answer is not
    assert checks.self_check("ex7.part_c", {"workers_all_trials": 241, "workers_stop_first": 147})
