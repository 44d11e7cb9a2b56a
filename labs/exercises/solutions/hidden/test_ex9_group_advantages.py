"""Hidden tests of exercise 9(a), equation 2 (17.5.1): never shown to the student, run by the verifier's runner.

``solution`` is the student's cell, served from the sandbox; the library's ``group_advantages`` is the
reference. Fixed edge cases (tied groups with and without eps, G = 1, bad input) and a property test on
generated groups.
"""

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rlvr_lab.advantages import group_advantages as reference
from solution import group_advantages

TOL = dict(rel_tol=1e-6, abs_tol=1e-6)


def _floats(values):
    got = list(values)
    assert all(type(x) in (int, float) for x in got), f"returned {got!r}: a list of floats is expected"
    assert all(math.isfinite(x) for x in got), f"returned {got!r}: NaN or inf"
    return got


def _agrees(rewards, eps):
    got = _floats(group_advantages(list(rewards), eps))
    want = reference(rewards, eps).tolist()
    assert len(got) == len(want), f"{len(got)} advantages for a group of {len(want)}"
    assert all(math.isclose(g, w, **TOL) for g, w in zip(got, want)), (rewards, eps, got)


def test_the_chapter_check_value():
    _agrees([0.0, 1.0, 0.0], 1e-8)


def test_tied_groups_are_zero_never_nan_whatever_eps():
    for rewards in ([1.0, 1.0, 1.0], [0.0] * 8, [0.1, 0.1, 0.1], [0.7] * 5, [-2.5, -2.5]):
        for eps in (0.0, 1e-8, 0.5):
            assert _floats(group_advantages(rewards, eps)) == [0.0] * len(rewards), (rewards, eps)


def test_a_group_of_one_has_zero_advantage():
    for eps in (0.0, 1e-8):
        assert _floats(group_advantages([1.0], eps)) == [0.0]


def test_eps_zero_and_large_eps():
    _agrees([1.0, 0.0, 0.0, 0.0], 0.0)
    _agrees([1.0, 0.0, 0.0, 0.0], 10.0)


def test_lone_pass_of_equation_3():
    got = _floats(group_advantages([1.0] + [0.0] * 15, 0.0))
    assert math.isclose(got[0], math.sqrt(15), **TOL) and math.isclose(sum(a * a for a in got), 16.0, **TOL)


def test_bad_input_raises_value_error():
    with pytest.raises(ValueError):
        group_advantages([], 1e-8)
    with pytest.raises(ValueError):
        group_advantages([1.0, 0.0], -1e-3)


def test_agrees_with_the_library_on_generated_groups():
    rewards = st.lists(st.integers(-400, 400).map(lambda i: i / 8), min_size=1, max_size=24)

    @settings(max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(rewards, st.sampled_from([0.0, 1e-8, 1e-6, 0.1, 1.0]))
    def check(values, eps):
        _agrees(values, eps)

    check()


def test_binary_groups_agree_with_the_library():
    @settings(max_examples=40, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(st.sampled_from([0.0, 1.0]), min_size=1, max_size=32))
    def check(values):
        _agrees(values, 1e-8)

    check()
