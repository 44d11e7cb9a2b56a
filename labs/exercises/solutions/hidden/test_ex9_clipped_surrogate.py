"""Hidden tests of exercise 9(b), the clipped surrogate with clip-higher (17.5.2, eqs 4-5).

The reference is :func:`reference`, equation 4's per-token term in float64; ``tests/test_code_parts.py``
checks it against the library's torch ``rlvr_lab.grpo.clipped_surrogate`` on generated inputs, so these
tests run without importing torch (a second per trial). Fixed cases at the clip edges, at ratio 0 (a token
the new policy no longer samples) and with eps_high > eps_low; a property test on generated tokens.
"""

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solution import clipped_surrogate

TOL = dict(rel_tol=1e-9, abs_tol=1e-9)


def reference(ratios, advantages, eps_low, eps_high):
    """min(r A, clip(r, 1 - eps_low, 1 + eps_high) A) per token, as rlvr_lab.grpo.clipped_surrogate."""
    return [min(r * a, min(max(r, 1.0 - eps_low), 1.0 + eps_high) * a) for r, a in zip(ratios, advantages)]


def _agrees(ratios, advantages, eps_low, eps_high):
    got = list(clipped_surrogate(list(ratios), list(advantages), eps_low, eps_high))
    assert all(type(x) in (int, float) for x in got), f"returned {got!r}: a list of floats is expected"
    want = reference(ratios, advantages, eps_low, eps_high)
    assert len(got) == len(want), f"{len(got)} terms for {len(want)} tokens"
    assert all(math.isclose(g, w, **TOL) for g, w in zip(got, want)), (ratios, advantages, eps_low, eps_high, got)


def test_symmetric_clip():
    _agrees([0.5, 1.1, 1.5], [2.0, 2.0, 2.0], 0.2, 0.2)
    _agrees([0.5, 1.5], [-1.0, -1.0], 0.2, 0.2)


def test_clip_higher_moves_only_the_upper_edge():
    ratios = [0.7, 0.8, 1.0, 1.2, 1.25, 1.28, 1.3, 2.0]
    for adv in (1.0, -1.0, 0.5):
        _agrees(ratios, [adv] * len(ratios), 0.2, 0.28)


def test_ratio_zero_and_exact_edges():
    _agrees([0.0, 0.0], [1.5, -1.5], 0.2, 0.28)  # new probability 0
    _agrees([0.8, 1.28], [-2.0, 3.0], 0.2, 0.28)
    _agrees([1.0, 1.0], [0.0, 0.0], 0.2, 0.28)


def test_zero_width_upper_clip_and_empty_input():
    _agrees([0.9, 1.0, 1.1], [1.0, 1.0, 1.0], 0.2, 0.0)
    assert list(clipped_surrogate([], [], 0.2, 0.28)) == []


def test_bad_input_raises_value_error():
    with pytest.raises(ValueError):
        clipped_surrogate([1.0], [1.0, 2.0], 0.2, 0.28)
    for low, high in ((0.0, 0.2), (1.0, 0.2), (-0.1, 0.2), (0.2, -0.1)):
        with pytest.raises(ValueError):
            clipped_surrogate([1.0], [1.0], low, high)


def test_agrees_with_the_reference_on_generated_tokens():
    pair = st.tuples(st.floats(0.0, 4.0), st.floats(-5.0, 5.0))

    @settings(max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(pair, max_size=20), st.floats(0.01, 0.5), st.floats(0.0, 0.6))
    def check(tokens, eps_low, eps_high):
        _agrees([r for r, _ in tokens], [a for _, a in tokens], eps_low, eps_high)

    check()
