"""rlvr_lab.cycle_time: slot cycle, barrier, staleness and verifier pool (section 17.9, eqs 6-9)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr_lab import cycle_time as ct


def test_cycle_time_broadcasts_over_reset_sweep():
    out = ct.cycle_time(20, 0.12, 0.08, 0.5, np.array([0.0, 3.5]))
    assert out.tolist() == pytest.approx([4.5, 8.0])
    assert ct.pool_capacity_per_hour(1, 3600.0) == 1.0


def test_amdahl_floor():
    # removing the reset entirely leaves the active work as the cycle floor
    floor = ct.cycle_time(20, 0.12, 0.08, 0.5, 0.0)
    assert ct.pool_capacity_per_hour(256, floor) / ct.pool_capacity_per_hour(256, 8.0) == pytest.approx(8 / 4.5)


def test_barrier():
    assert ct.barrier_idle_fraction([5.0, 5.0, 5.0]) == 0.0
    assert ct.barrier_idle_fraction([0.0, 10.0]) == pytest.approx(0.5)
    assert ct.barrier_step_time([1.0, 7.5, 2.0]) == 7.5


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.0, 100.0), min_size=1, max_size=16).filter(lambda d: max(d) > 0))
def test_idle_fraction_in_unit_interval(d):
    f = ct.barrier_idle_fraction(d)
    assert 0.0 <= f < 1.0 + 1e-12
    assert f <= 1 - 1 / len(d) + 1e-9  # the slowest slot is never idle


def test_version_lag_and_admission_boundaries():
    assert ct.version_lag(0, 40) == 0
    assert ct.version_lag(39.999, 40) == 0 and ct.version_lag(40, 40) == 1
    assert ct.admit(119.9, 40, 2) and not ct.admit(120, 40, 2)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 10_000), st.integers(0, 6))
def test_version_lag_is_exact_at_every_whole_number_of_steps(k, step_units, decimals):
    """An age of exactly ``k`` steps, both typed as decimals (0.7 and 0.1), is a lag of ``k``; a hair less is
    ``k - 1``. Plain float division gets the first wrong (0.7 / 0.1 = 6.9999999999999991)."""
    step = step_units / 10**decimals
    age = float(f"{k * step_units / 10**decimals:.{decimals}f}")
    assert ct.version_lag(age, step) == k
    if k > 0:
        assert ct.version_lag(age - step / 1000, step) == k - 1


@pytest.mark.parametrize(
    "age, step, lag",
    [(0.7, 0.1, 7), (0.3, 0.1, 3), (0.6, 0.2, 3), (1.1, 0.1, 11), (0.6999, 0.1, 6), (2.9999999, 1.0, 2)],
)
def test_version_lag_at_float_edges(age, step, lag):
    assert ct.version_lag(age, step) == lag


def test_verifier_pool_roundtrip():
    w = ct.verifier_workers(6.4, 2.1, 10.0, 0.75)
    assert ct.verifier_utilization(6.4, 2.1, 10.0, w) <= 0.75
    assert ct.verifier_utilization(6.4, 2.1, 10.0, w - 1) > 0.75
    assert ct.verifier_utilization(32, 3, 8, 700) > 1.0  # overloaded pool is reported, not hidden


@pytest.mark.parametrize(
    "call, needle",
    [
        (lambda: ct.cycle_time(20, -0.1, 0.08, 0.5, 3.5), "t_model must be >= 0"),
        (lambda: ct.cycle_time(20, 0.1, 0.08, 0.5, -3.5), "t_reset must be >= 0"),
        (lambda: ct.cycle_time(0, 0.1, 0.08, 0.5, 3.5), "horizon must be an integer >= 1"),
        (lambda: ct.pool_capacity_per_hour(256, 0.0), "cycle_s must be > 0"),
        (lambda: ct.pool_capacity_per_hour(0, 8.0), "slots must be an integer >= 1"),
        (lambda: ct.barrier_idle_fraction([]), "durations must be a non-empty"),
        (lambda: ct.barrier_idle_fraction([1.0, -2.0]), "durations must be >= 0"),
        (lambda: ct.barrier_idle_fraction([0.0, 0.0]), "at least one duration > 0"),
        (lambda: ct.version_lag(-1, 40), "age_s must be >= 0"),
        (lambda: ct.version_lag(10, 0), "step_s must be > 0"),
        (lambda: ct.admit(10, 40, -1), "max_lag must be an integer >= 0"),
        (lambda: ct.verifier_workers(32, 3, 8, 1.0), "target_utilization must be in (0, 1)"),
        (lambda: ct.verifier_workers(32, 3, 8, 0.0), "target_utilization must be in (0, 1)"),
        (lambda: ct.verifier_workers(32, 0.5, 8, 0.8), "trials must be >= 1"),
        (lambda: ct.verifier_workers(-32, 3, 8, 0.8), "arrival_per_s must be >= 0"),
        (lambda: ct.verifier_workers(32, 3, -8, 0.8), "trial_s must be > 0"),
        (lambda: ct.verifier_utilization(32, 3, 8, 0), "workers must be an integer >= 1"),
    ],
)
def test_bad_input_names_argument_and_range(call, needle):
    with pytest.raises(ValueError) as err:
        call()
    assert needle in str(err.value)
