"""Hidden tests of exercise 9(c), the unbiased pass@k (17.9.6); the library's ``pass_at_k`` is the reference.

Fixed cases at probabilities 0 and 1 (no pass, all passes, fewer failures than k), k = n, k > n and
other bad input; a property test over generated (n, c, k).
"""

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rlvr_lab.rewards import pass_at_k as reference
from solution import pass_at_k

TOL = dict(rel_tol=1e-9, abs_tol=1e-12)


def _agrees(n, c, k):
    got = pass_at_k(n, c, k)
    assert type(got) in (int, float) and not isinstance(got, bool), f"pass_at_k({n}, {c}, {k}) returned {got!r}"
    assert math.isclose(got, reference(n, c, k), **TOL), (n, c, k, got)


def test_the_chapter_values():
    _agrees(10, 3, 1)
    _agrees(10, 3, 5)


def test_probabilities_zero_and_one():
    assert pass_at_k(8, 0, 3) == 0.0
    assert pass_at_k(8, 8, 3) == 1.0
    assert pass_at_k(10, 8, 3) == 1.0  # 2 failures cannot fill a 3-subset


def test_k_equal_to_n_and_k_of_one():
    _agrees(6, 1, 6)
    _agrees(50, 7, 1)


def test_k_above_n_and_other_bad_input_raise_value_error():
    for n, c, k in ((3, 1, 4), (5, 6, 2), (5, -1, 2), (5, 2, 0), (0, 0, 1)):
        with pytest.raises(ValueError):
            pass_at_k(n, c, k)


def test_agrees_with_the_library_on_generated_counts():
    @st.composite
    def counts(draw):
        n = draw(st.integers(1, 300))
        return n, draw(st.integers(0, n)), draw(st.integers(1, n))

    @settings(max_examples=80, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(counts())
    def check(nck):
        _agrees(*nck)

    check()
