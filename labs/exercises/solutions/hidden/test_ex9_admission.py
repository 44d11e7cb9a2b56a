"""Hidden tests of exercise 9(d), version-checked admission (17.9.4, eq 8); the library's ``version_lag``
and ``admit`` are the reference.

Fixed cases at lags exactly at a multiple of the step and just below, at the bound, at age 0, and bad
input; a property test over generated ages and steps on a quarter-second grid (exact in binary, so the
floor is never decided by rounding).
"""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rlvr_lab.cycle_time import admit as reference_admit
from rlvr_lab.cycle_time import version_lag as reference_lag
from solution import admit, version_lag


def _lag(age, step):
    got = version_lag(age, step)
    assert type(got) is int, f"version_lag({age}, {step}) returned {got!r}: an int is expected"
    assert got == reference_lag(age, step), (age, step, got)
    return got


def _admit(age, step, bound):
    got = admit(age, step, bound)
    assert type(got) is bool, f"admit({age}, {step}, {bound}) returned {got!r}: True or False is expected"
    assert got is reference_admit(age, step, bound), (age, step, bound, got)


def test_the_chapter_lags():
    assert [_lag(a, 40.0) for a in (30.0, 90.0, 200.0)] == [0, 2, 5]


def test_lag_exactly_at_a_multiple_of_the_step():
    for k in range(6):
        assert _lag(40.0 * k, 40.0) == k
        assert _lag(2.5 * k, 2.5) == k
    assert _lag(119.75, 40.0) == 2 and _lag(120.0, 40.0) == 3


def test_admission_at_the_bound():
    _admit(119.75, 40.0, 2)
    _admit(120.0, 40.0, 2)
    _admit(0.0, 40.0, 0)
    _admit(40.0, 40.0, 0)
    _admit(10_000.0, 40.0, 1_000)


def test_bad_input_raises_value_error():
    for age, step in ((10.0, 0.0), (10.0, -1.0), (-1.0, 40.0)):
        with pytest.raises(ValueError):
            version_lag(age, step)
    with pytest.raises(ValueError):
        admit(10.0, 40.0, -1)


def test_agrees_with_the_library_on_generated_ages():
    quarters = st.integers(0, 40_000).map(lambda i: i / 4)
    steps = st.integers(1, 4_000).map(lambda i: i / 4)

    @settings(max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(quarters, steps, st.integers(0, 12))
    def check(age, step, bound):
        _lag(age, step)
        _admit(age, step, bound)

    check()
