"""Exercise checkers (section 17.14): right answers pass, wrong ones get a hint that hides the answer."""

import math

import pytest

from rlvr_lab import checks

# The answers worked by hand from the chapter's relations (EQUATIONS.md), independent of the library.
ANSWERS = {
    "ex1.part_a": {"share_early": 0.0192 / 0.0592, "share_late": 0.012 / 0.412},
    "ex1.part_b": {"alpha_max": 0.04 / (9 * 0.96)},
    "ex1.part_c": {"harden_when": "before"},
    "ex2.part_a": {"pass_score": 0.57, "fail_score": 0.365, "pair_keeps_order": True},
    "ex2.part_b": {"lowest_pass": 0.3, "highest_fail": 0.4, "every_pass_outranks": False},
    "ex2.part_c": {"w_length_upper": 0.6},
    "ex3.part_a": {"trials_needed": 4},
    "ex3.part_b": {"false_rejection": 1 - 0.95 ** 4, "trials_correct": 1 + 0.95 + 0.95 ** 2 + 0.95 ** 3,
                   "trials_incorrect": 1.417},
    "ex3.part_c": {"first_action": "repair_fixture"},
    "ex4.part_a": {"contrast_hard": 1 - 0.02 ** 8 - 0.98 ** 8, "contrast_easy": 1 - 0.6 ** 8 - 0.4 ** 8,
                   "informative_groups": 128 * (2 - 0.02 ** 8 - 0.98 ** 8 - 0.6 ** 8 - 0.4 ** 8),
                   "rollouts_per_informative": 2048 / (128 * (2 - 0.02 ** 8 - 0.98 ** 8 - 0.6 ** 8 - 0.4 ** 8))},
    "ex4.part_b": {"contrast_pooled": 1 - 0.31 ** 8 - 0.69 ** 8, "informative_pooled": 256 * (1 - 0.31 ** 8 - 0.69 ** 8)},
    "ex4.part_c": {"lone_pass_coefficient": math.sqrt(7), "drop_hard_family": False},
    "ex5.part_a": {"multiple_exhaustive": 313.0, "multiple_three_forks": 25.0},
    "ex5.part_b": {"m_for_target": 100, "multiple_for_target": 151.0},
    "ex5.part_c": {"m_budget": 19, "se_budget": 1 / (2 * math.sqrt(19)), "can_resolve": False},
    "ex5.part_d": {"redesign_forks": [20], "redesign_m": 50},
    "ex6.part_a": {"cycle_cold": 9.0, "cycle_snapshot": 3.3, "reset_share_cold": 6 / 9, "reset_share_snapshot": 0.3 / 3.3,
                   "capacity_cold": 25600.0, "capacity_snapshot": 64 * 3600 / 3.3},
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
    assert set(ANSWERS) == set(checks.PARTS)
    for part_id, values in ANSWERS.items():
        assert set(values) == set(checks.PARTS[part_id].names), part_id


@pytest.mark.parametrize("part_id", sorted(ANSWERS))
def test_hand_worked_answers_pass(part_id):
    assert checks.verify(part_id, ANSWERS[part_id]) == []


@pytest.mark.parametrize("part_id", sorted(ANSWERS))
def test_unassigned_answers_fail_with_a_placeholder_hint(part_id):
    problems = checks.verify(part_id, {name: None for name in checks.PARTS[part_id].names})
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
def test_each_wrong_value_is_caught_and_the_hint_hides_the_answer(part_id):
    for name, value in ANSWERS[part_id].items():
        values = dict(ANSWERS[part_id], **{name: _perturbed(value)})
        problems = checks.verify(part_id, values)
        assert problems, (part_id, name)
        assert any(name in p for p in problems)
        if isinstance(value, float) and not isinstance(value, bool):
            for text in (f"{value:.3f}", f"{value:.4g}", repr(value)):
                assert text not in " ".join(problems), (part_id, name, text)


def test_three_significant_figures_pass_and_percentages_get_their_own_hint():
    assert checks.verify("ex1.part_a", {"share_early": 0.324, "share_late": 0.0291}) == []
    problems = checks.verify("ex1.part_a", {"share_early": 32.43, "share_late": 0.0291})
    assert problems == ["share_early looks like a percentage: give it as a fraction in [0, 1]."]


def test_types_are_explained():
    assert "True or False" in checks.verify("ex2.part_a", dict(ANSWERS["ex2.part_a"], pair_keeps_order=1))[0]
    assert "whole number" in checks.verify("ex3.part_a", {"trials_needed": 4.5})[0]
    assert "one of" in checks.verify("ex3.part_c", {"first_action": "both"})[0]
    assert "single number" in checks.verify("ex1.part_b", {"alpha_max": "0.004"})[0]
    assert "finite" in checks.verify("ex1.part_b", {"alpha_max": float("inf")})[0]


def test_redesign_accepts_any_schedule_within_budget_that_resolves():
    assert checks.verify("ex5.part_d", {"redesign_forks": [30, 35], "redesign_m": 60}) == []
    over = checks.verify("ex5.part_d", {"redesign_forks": [5], "redesign_m": 50})
    assert over and "30x" in over[0]
    weak = checks.verify("ex5.part_d", {"redesign_forks": [35], "redesign_m": 20})
    assert weak and "cannot resolve" in weak[0]
    assert "ex5" not in " ".join(over + weak)


def test_checker_prints_on_success_and_raises_a_hint_on_failure(capsys):
    checks.ex3.part_a(4)
    assert capsys.readouterr().out.strip() == "ex3.part_a: correct."
    with pytest.raises(checks.CheckFailed) as err:
        checks.ex3.part_a(3)
    assert "too small" in str(err.value) and "4" not in str(err.value).split("Hint")[0]


def test_unknown_part_is_a_value_error():
    with pytest.raises(ValueError, match="part_id must be one of"):
        checks.verify("ex9.part_a", {})
