"""rlvr_lab.credit: returns, TD residuals, GAE and continuation sampling (section 17.4)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr_lab import credit


def test_terminal_reward_gives_same_reward_to_go_everywhere():
    assert credit.reward_to_go([0, 0, 0, 0, 1]).tolist() == [1.0] * 5
    assert credit.reward_to_go([1, 2, 3]).tolist() == [6.0, 5.0, 3.0]


def test_td_residual_terminal_value_is_zero():
    # values given without V(h_H) get a 0 appended; given with it, it is used as is
    assert credit.td_residuals([0, 1], [0.5, 0.5]).tolist() == [0.0, 0.5]
    assert credit.td_residuals([0, 1], [0.5, 0.5, 0.0]).tolist() == [0.0, 0.5]
    assert credit.td_residuals([0, 1], [0.5, 0.5, 0.2]).tolist() == pytest.approx([0.0, 0.7])


def test_debugger_fork_example():
    # 17.4.3: fork values 0.05 and 0.60 around the debugger turn; terminal failure afterwards
    deltas = credit.td_residuals([0.0, 0.0], [0.05, 0.60])
    assert deltas[0] == pytest.approx(0.55)
    assert deltas[1] == pytest.approx(-0.60)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1, 1), min_size=1, max_size=12), st.data())
def test_gae_limits(rs, data):
    vals = data.draw(st.lists(st.floats(-1, 1), min_size=len(rs), max_size=len(rs)))
    # lam = 0: one-step residuals; lam = 1: reward-to-go minus the value (17.4.2 footnote 5)
    assert np.allclose(credit.gae(rs, vals, 0.0), credit.td_residuals(rs, vals))
    assert np.allclose(credit.gae(rs, vals, 1.0), credit.reward_to_go(rs) - np.array(vals), atol=1e-9)


def test_gae_intermediate_lambda_by_hand():
    r, vals, lam = [0.0, 0.0, 1.0], [0.2, 0.4, 0.5], 0.5
    d = credit.td_residuals(r, vals)
    want = [d[0] + lam * d[1] + lam**2 * d[2], d[1] + lam * d[2], d[2]]
    assert credit.gae(r, vals, lam).tolist() == pytest.approx(want)


def test_continuation_cost_formula_matches_branch_count():
    for forks in ("all", [1], [29], [5, 17, 23]):
        ks = credit.fork_set(30, forks)
        branches_tokens = sum(8 * (30 - k) * 512 for k in ks)
        assert credit.continuation_tokens(30, 512, 8, forks) == 30 * 512 + branches_tokens
        assert credit.continuation_multiple(30, 8, forks) == pytest.approx(
            credit.continuation_tokens(30, 512, 8, forks) / (30 * 512)
        )


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 60), st.integers(0, 32))
def test_every_boundary_closed_form(h, m):
    assert credit.continuation_multiple(h, m, "all") == pytest.approx(1 + m * (h - 1) / 2)


def test_no_forks_costs_the_base():
    assert credit.continuation_tokens(30, 512, 8, []) == 15360
    assert credit.continuation_multiple(1, 8, "all") == 1.0


def test_error_bounds_quadruple_rule():
    # halving the bound takes four times the continuations
    assert credit.standard_error_bound(80) == pytest.approx(credit.standard_error_bound(20) / 2)
    assert credit.difference_standard_error_bound(20) == pytest.approx(math.sqrt(2) / (2 * math.sqrt(20)))
    assert credit.is_resolved(-0.55, 20)  # the sign does not matter
    assert not credit.is_resolved(0.55, 20, factor=4.0)


@pytest.mark.parametrize(
    "call, needle",
    [
        (lambda: credit.reward_to_go([]), "rewards must be a non-empty 1-D"),
        (lambda: credit.reward_to_go([[1, 2], [3, 4]]), "rewards must be a non-empty 1-D"),
        (lambda: credit.td_residuals([0, 1], [0.5]), "values must have H = 2"),
        (lambda: credit.gae([0, 1], [0.5, 0.5], 1.5), "lam must be in [0, 1]"),
        (lambda: credit.continuation_tokens(30, 512, 8, [0]), "forks must be an integer in [1, 29]"),
        (lambda: credit.continuation_tokens(30, 512, 8, [30]), "forks must be an integer in [1, 29]"),
        (lambda: credit.continuation_tokens(30, 512, 8, [10, 10]), "forks must be distinct"),
        (lambda: credit.continuation_tokens(30, 512, 8, "some"), "forks must be 'all'"),
        (lambda: credit.continuation_tokens(30, 512, 8, 10), "forks must be 'all'"),
        (lambda: credit.continuation_tokens(0, 512, 8, "all"), "horizon must be an integer >= 1"),
        (lambda: credit.continuation_tokens(30, -1, 8, "all"), "tokens_per_turn must be an integer >= 0"),
        (lambda: credit.continuation_multiple(30, -2, "all"), "continuations must be an integer >= 0"),
        (lambda: credit.standard_error_bound(0), "continuations must be an integer >= 1"),
        (lambda: credit.is_resolved(2.0, 20), "difference must be in [-1, 1]"),
    ],
)
def test_bad_input_names_argument_and_range(call, needle):
    with pytest.raises(ValueError) as err:
        call()
    assert needle in str(err.value)
