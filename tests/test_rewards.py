"""rlvr_lab.rewards: behaviour, properties and bad input (sections 17.3, 17.5.4, 17.7.2, 17.9.6)."""

import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr_lab import rewards

probs = st.floats(0.0, 1.0, allow_nan=False)


def test_math_modules_do_not_import_torch():
    code = (
        "import sys; import rlvr_lab.rewards, rlvr_lab.credit, rlvr_lab.cycle_time, rlvr_lab.validation; "
        "print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_false_accept_share_rises_as_true_passes_get_rare():
    shares = [rewards.false_accept_share(rho, 0.025) for rho in (0.5, 0.1, 0.01, 0.001)]
    assert shares == sorted(shares) and shares[-1] > 0.95
    assert rewards.false_accept_share(1.0, 0.5) == 0.0


def test_false_accept_share_vectorised():
    out = rewards.false_accept_share(np.array([0.04, 0.40]), 0.02)
    assert isinstance(out, np.ndarray) and out.shape == (2,)
    assert out[0] == pytest.approx(0.96 * 0.02 / (0.04 + 0.96 * 0.02))


def test_composite_reward_and_ordering_bound():
    assert rewards.composite_reward(True, 0.5, 0.25, 0.2, 0.4) == pytest.approx(1.0)
    assert rewards.ordering_margin(0.3, 0.7) == pytest.approx(0.0)
    assert not rewards.pass_outranks_failure(0.3, 0.7)  # equality allows a tie
    # an unenforced cap (len > 1) breaks the order even when the bound holds
    assert rewards.pass_outranks_failure(0.2, 0.4)
    assert rewards.composite_reward(1, 0.0, 9000 / 4000, 0.2, 0.4) < rewards.composite_reward(0, 1.0, 0.0, 0.2, 0.4)


@settings(max_examples=60, deadline=None)
@given(st.floats(0, 0.49), st.floats(0, 0.49), probs, probs, probs, probs)
def test_bound_guarantees_order_inside_the_cap(wf, wl, f_pass, f_fail, len_pass, len_fail):
    assert rewards.pass_outranks_failure(wf, wl)
    assert rewards.composite_reward(1, f_pass, len_pass, wf, wl) > rewards.composite_reward(0, f_fail, len_fail, wf, wl)


def test_all_pass_and_expected_trials_edges():
    assert rewards.all_pass_probability(1.0, 5) == 1.0
    assert rewards.expected_trials(0.0, 5) == 1.0  # the first trial always runs
    assert rewards.expected_trials(1.0, 5) == 5.0
    assert rewards.expected_trials(0.5, 1) == 1.0


def test_expected_trials_mixture_is_weighted_mean():
    q = np.array([0.1, 0.97])
    w = np.array([0.6, 0.4])
    want = 0.6 * rewards.expected_trials(0.1, 3) + 0.4 * rewards.expected_trials(0.97, 3)
    assert rewards.expected_trials(q, 3, weights=w) == pytest.approx(want)
    assert rewards.expected_trials(q, 3, weights=w * 10) == pytest.approx(want)  # weights are normalised


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(probs, st.floats(0.01, 1.0)), min_size=1, max_size=6), st.integers(1, 8))
def test_expected_trials_convex_mixture_at_least_mean_plugin(pairs, k):
    q = np.array([a for a, _ in pairs])
    w = np.array([b for _, b in pairs])
    mean_q = float(np.sum(q * w) / np.sum(w))
    assert rewards.expected_trials(q, k, weights=w) >= rewards.expected_trials(mean_q, k) - 1e-12


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 64), probs)
def test_contrast_probability_symmetric(g, p):
    assert rewards.contrast_probability(g, p) == pytest.approx(rewards.contrast_probability(g, 1 - p), abs=1e-12)


def test_contrast_edges_and_informative_cost():
    assert rewards.contrast_probability(1, 0.3) == pytest.approx(0.0)
    assert rewards.contrast_probability(8, 0.0) == 0.0
    assert math.isinf(rewards.rollouts_per_informative_group(8, 0.0))
    assert math.isinf(rewards.rollouts_per_informative_group(1, 0.5))
    out = rewards.rollouts_per_informative_group(8, np.array([0.05, 0.5, 1.0]))
    assert out[1] == pytest.approx(8 / (1 - 2 * 0.5**8)) and math.isinf(out[2])


def test_pass_at_k_matches_brute_force():
    from itertools import combinations

    samples = [1, 0, 0, 1, 0, 0, 0]
    n, c = len(samples), sum(samples)
    for k in range(1, n + 1):
        subsets = list(combinations(samples, k))
        brute = sum(any(s) for s in subsets) / len(subsets)
        assert rewards.pass_at_k(n, c, k) == pytest.approx(brute, abs=1e-15)
    assert rewards.pass_at_k(5, 0, 3) == 0.0 and rewards.pass_at_k(5, 3, 3) == 1.0


def test_pass_hat_k():
    assert rewards.pass_hat_k(0.5, 2) == 0.25
    assert rewards.pass_hat_k(np.array([1.0, 0.0]), 3).tolist() == [1.0, 0.0]


@pytest.mark.parametrize(
    "call, needle",
    [
        (lambda: rewards.false_accept_share(1.5, 0.1), "rho must be in [0, 1]"),
        (lambda: rewards.false_accept_share(0.1, -0.1), "alpha must be in [0, 1]"),
        (lambda: rewards.false_accept_share(0.0, 0.0), "must be > 0"),
        (lambda: rewards.false_accept_share(0.5, float("nan")), "alpha must be in [0, 1]"),
        (lambda: rewards.composite_reward(0.5, 0.1, 0.1, 0.1, 0.1), "correct must be 0 or 1"),
        (lambda: rewards.composite_reward(1, 1.2, 0.1, 0.1, 0.1), "format_score must be in [0, 1]"),
        (lambda: rewards.composite_reward(1, 0.2, -0.1, 0.1, 0.1), "length_frac must be >= 0"),
        (lambda: rewards.composite_reward(1, 0.2, 0.1, -0.1, 0.1), "w_format must be >= 0"),
        (lambda: rewards.ordering_margin(0.1, -1), "w_length must be >= 0"),
        (lambda: rewards.all_pass_probability(-0.1, 3), "q must be in [0, 1]"),
        (lambda: rewards.all_pass_probability(0.5, 0), "trials must be an integer >= 1"),
        (lambda: rewards.expected_trials(0.5, 2.5), "trials must be an integer >= 1"),
        (lambda: rewards.expected_trials([0.5, 0.2], 3, weights=[1.0]), "weights must have the same shape"),
        (lambda: rewards.expected_trials([0.5, 0.2], 3, weights=[0.0, 0.0]), "positive sum"),
        (lambda: rewards.expected_trials([0.5, 0.2], 3, weights=[-1.0, 2.0]), "weights must be >= 0"),
        (lambda: rewards.contrast_probability(0, 0.5), "group_size must be an integer >= 1"),
        (lambda: rewards.contrast_probability(8, 1.01), "p must be in [0, 1]"),
        (lambda: rewards.rollouts_per_informative_group(True, 0.5), "group_size must be an integer >= 1"),
        (lambda: rewards.pass_at_k(0, 0, 1), "n must be an integer >= 1"),
        (lambda: rewards.pass_at_k(5, 6, 1), "c must be an integer in [0, 5]"),
        (lambda: rewards.pass_at_k(5, 2, 6), "k must be an integer in [1, 5]"),
        (lambda: rewards.pass_hat_k(2.0, 2), "p must be in [0, 1]"),
    ],
)
def test_bad_input_names_argument_and_range(call, needle):
    with pytest.raises(ValueError) as err:
        call()
    assert needle in str(err.value)
