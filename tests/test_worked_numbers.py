"""Every worked number of chapter 17, reproduced by the library (napkin maths 17.1-17.6, tables 3 and 5,
and the figures quoted in the prose). The expected values are the chapter's, at the precision it prints.
"""

import math

import numpy as np
import pytest

from rlvr_lab import credit, cycle_time, rewards


# ---------------------------------------------------------------- napkin math 17.1 (17.3.2, eq 1)


def test_napkin_17_1_false_accepts():
    n, rho, alpha, beta = 8 * 1024, 0.10, 0.025, 1.0
    assert n == 8192
    share = rewards.false_accept_share(rho, alpha, beta)
    assert round(share * 100, 1) == 18.4
    true_acc, false_acc = n * rho * beta, n * (1 - rho) * alpha
    assert true_acc == pytest.approx(819.20) and false_acc == pytest.approx(184.32)
    assert true_acc + false_acc == pytest.approx(1003.52)
    assert share == pytest.approx(false_acc / (true_acc + false_acc))


# ---------------------------------------------------------------- 17.2.2 and 17.4.1 baselines


def test_fixed_baseline_examples():
    centered = np.array([1.0, 0.0]) - 0.25
    assert centered.tolist() == [0.75, -0.25]
    assert (credit.reward_to_go([0, 0, 0]) - 0.4).tolist() == pytest.approx([-0.4] * 3)


# ---------------------------------------------------------------- 17.4.3 fork example and napkin math 17.2


def test_fork_example_error_bounds():
    m = 20
    v_before, v_after = 1 / m, 12 / m
    assert (v_before, v_after) == (0.05, 0.60)
    assert round(v_after - v_before, 2) == 0.55
    assert round(credit.standard_error_bound(m), 2) == 0.11
    assert round(credit.difference_standard_error_bound(m), 2) == 0.16
    assert round(2 * credit.difference_standard_error_bound(m), 2) == 0.32
    assert credit.is_resolved(v_after - v_before, m)


@pytest.mark.parametrize(
    "forks, branches, tokens, multiple",
    [
        ("all", 232, 1_797_120, 117),
        ([10, 20], 16, 138_240, 9),
    ],
)
def test_table_3(forks, branches, tokens, multiple):
    h, n, m = 30, 512, 8
    assert credit.continuation_tokens(h, n, 0, []) == 15_360  # the base trajectory
    assert credit.continuation_branches(h, m, forks) == branches
    assert credit.continuation_tokens(h, n, m, forks) == tokens
    assert credit.continuation_multiple(h, m, forks) == multiple


def test_napkin_17_2_closed_form():
    assert credit.continuation_multiple(30, 8, "all") == 1 + 8 * (30 - 1) / 2
    # exhaustive forking is quadratic: doubling H roughly quadruples the extra tokens
    extra = [credit.continuation_tokens(h, 512, 8, "all") - h * 512 for h in (30, 60)]
    assert extra[1] / extra[0] == pytest.approx(4, rel=0.05)


# ---------------------------------------------------------------- napkin math 17.3 and eq 3 (17.5.1)


def test_napkin_17_3_three_rewards():
    from rlvr_lab import grpo

    r = np.array([0.0, 1.0, 0.0])
    assert round(r.mean(), 6) == 0.333333
    assert round(r.std(), 6) == 0.471405  # population std, divisor G
    a = grpo.group_advantages(r, eps=1e-8)
    assert a.round(6).tolist() == [-0.707107, 1.414214, -0.707107]
    assert abs(a.sum()) < 1e-12


def test_lone_pass_at_16():
    from rlvr_lab import grpo

    pass_c, fail_c = grpo.lone_pass_group_coefficients(16, eps=1e-8)
    assert round(pass_c, 2) == 3.87 and round(fail_c, 2) == -0.26
    assert 1 / 16 == 0.0625  # the group baseline
    assert pass_c < math.sqrt(15)  # slightly below the bound for positive eps
    assert grpo.lone_pass_coefficient(16) == pytest.approx(math.sqrt(15))
    # the easy-task mirror image: one failure among passes
    a = grpo.group_advantages([1.0] * 15 + [0.0])
    assert round(a[-1], 2) == -3.87 and round(a[0], 2) == 0.26


def test_lone_pass_takes_g_minus_1_of_g_units():
    from rlvr_lab import grpo

    a = grpo.group_advantages([1.0] + [0.0] * 15, eps=0.0)
    assert a[0] ** 2 == pytest.approx(15) and np.sum(a[1:] ** 2) == pytest.approx(1)
    even = grpo.group_advantages([1.0] * 8 + [0.0] * 8, eps=0.0)
    assert np.allclose(even**2, 1.0)


# ---------------------------------------------------------------- 17.5.3 length normalisation, 17.8.3 clip


def test_32x_per_token_ratio():
    from rlvr_lab import grpo

    w = grpo.per_token_weights([-0.5, -0.5], [128, 4096], "sequence")
    assert w[0] / w[1] == 32.0
    w_const = grpo.per_token_weights([-0.5, -0.5], [128, 4096], "constant")
    assert w_const[0] == w_const[1]


def test_clip_thresholds_in_probability():
    from rlvr_lab import grpo

    _, high = grpo.clip_probability_bounds(0.9, 0.2)
    assert round(high, 2) == 1.08 and high > 1.0  # never binds
    _, high_rare = grpo.clip_probability_bounds(0.01, 0.2)
    assert round(high_rare - 0.01, 3) == 0.002
    # clip-higher widens the rare token's headroom
    _, wider = grpo.clip_probability_bounds(0.01, 0.2, 0.28)
    assert round(wider - 0.01, 4) == 0.0028


# ---------------------------------------------------------------- 17.5.4, napkin math 17.4, table 5


def test_zero_contrast_prose():
    assert round(rewards.contrast_probability(2, 0.10), 2) == 0.18
    assert round(1 - rewards.contrast_probability(2, 0.10), 2) == 0.82
    assert round(1 - rewards.contrast_probability(8, 0.05), 2) == 0.66
    # at least one pass (17.2.3) is a weaker condition than contrast (17.5.4)
    assert 1 - (1 - 0.05) ** 8 > rewards.contrast_probability(8, 0.05)


def test_napkin_17_4_rollout_tokens():
    per_traj = credit.continuation_tokens(30, 512, 0, [])
    rollouts = 512 * 8
    assert per_traj == 15_360 and rollouts == 4_096
    assert round(per_traj * rollouts / 1e6, 1) == 62.9


@pytest.mark.parametrize(
    "g, p, contrast, per_informative",
    [
        (8, 0.05, 0.34, 23.8),
        (16, 0.05, 0.56, 28.6),
        (8, 0.50, 0.99, 8.1),
    ],
)
def test_table_5(g, p, contrast, per_informative):
    assert round(rewards.contrast_probability(g, p), 2) == contrast
    assert round(rewards.rollouts_per_informative_group(g, p), 1) == per_informative


def test_table_5_verdict():
    base = rewards.rollouts_per_informative_group(8, 0.05)
    assert round(base / rewards.rollouts_per_informative_group(8, 0.5), 1) == 2.9
    assert rewards.rollouts_per_informative_group(16, 0.05) > base  # doubling the group costs more


# ---------------------------------------------------------------- napkin math 17.5 (17.7.2)


def test_napkin_17_5_all_pass_rule():
    assert round(1 - (1 - 0.20) ** 16, 3) == 0.972
    assert round(1 - rewards.all_pass_probability(0.8, 16), 3) == 0.972
    assert round(rewards.all_pass_probability(0.20, 3), 3) == 0.008
    assert round(1 - rewards.all_pass_probability(0.98, 3), 4) == 0.0588
    assert rewards.all_pass_probability(0.98, 3 + 1) == pytest.approx(0.98**4)  # first pass + K reruns
    assert rewards.expected_trials(0.20, 3) == pytest.approx(1.24)
    assert rewards.expected_trials(0.98, 3) == pytest.approx(2.9404)


# ---------------------------------------------------------------- napkin math 17.6 (17.9.2, eq 6)


def test_napkin_17_6_reset_and_capacity():
    active = cycle_time.cycle_time(20, 0.12, 0.08, 0.5, 0.0)
    cold = cycle_time.cycle_time(20, 0.12, 0.08, 0.5, 3.5)
    snap = cycle_time.cycle_time(20, 0.12, 0.08, 0.5, 0.015)
    assert active == pytest.approx(4.5) and cold == pytest.approx(8.0) and snap == pytest.approx(4.515)
    assert round(active / cold * 100, 2) == 56.25
    assert round(active / snap * 100, 2) == 99.67
    cap_cold = cycle_time.pool_capacity_per_hour(256, cold)
    cap_snap = cycle_time.pool_capacity_per_hour(256, snap)
    assert cap_cold == pytest.approx(115_200)
    assert round(cap_snap, -1) == 204_120
    assert round(cap_snap / cap_cold, 2) == 1.77


# ---------------------------------------------------------------- 17.9.3-17.9.5 (eqs 7-9)


def test_barrier_65_percent():
    durations = [0.2, 3.0, 3.52, 16.8]  # from 0.2 s to 16.8 s, summing to 23.52 s
    assert cycle_time.barrier_step_time(durations) == 16.8
    assert round(cycle_time.barrier_idle_fraction(durations), 2) == 0.65


def test_verifier_pool_256_768_960():
    arrival = 512 / 16
    assert arrival == 32
    assert cycle_time.verifier_demand(arrival, 1, 8) == 256
    assert cycle_time.verifier_demand(arrival, 3, 8) == 768
    assert cycle_time.verifier_workers(arrival, 3, 8, 0.8) == 960
    assert cycle_time.verifier_utilization(arrival, 3, 8, 960) == pytest.approx(0.8)


def test_stop_on_first_rejection_pool_uses_mixture():
    q, w = np.array([0.20, 0.98]), np.array([0.5, 0.5])
    mixture = rewards.expected_trials(q, 3, weights=w)
    plugged = rewards.expected_trials(float(np.sum(q * w)), 3)
    assert mixture > plugged
    assert cycle_time.verifier_workers(32, mixture, 8, 0.8) > cycle_time.verifier_workers(32, plugged, 8, 0.8)
    assert cycle_time.verifier_workers(32, mixture, 8, 0.8) < 960  # early exit saves workers
