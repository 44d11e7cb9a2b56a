"""Sentences of the book that state a number or an ordering, checked against the library (issue 22's text
errors). Each test reads the chapter's source, finds the sentence, and recomputes what it says."""

from pathlib import Path

import pytest

from rlvr_lab import rewards

BOOK = Path(__file__).resolve().parents[1] / "book"


def text(chapter: str) -> str:
    """The chapter's jupytext source with comment markers and line breaks removed."""
    lines = (BOOK / f"{chapter}.py").read_text().splitlines()
    return " ".join(line.removeprefix("#").strip() for line in lines)


def test_ch1_cost_per_informative_group_never_falls_and_pairs_tie_with_triples():
    assert "pair and a triple cost exactly the same at every pass rate" in text("01_learning_from_a_check")
    for p in (0.01, 0.05, 0.3, 0.5, 0.9, 0.99):
        cost = [rewards.rollouts_per_informative_group(g, p) for g in range(2, 65)]
        assert cost[0] == pytest.approx(cost[1]) == pytest.approx(1 / (p * (1 - p)))
        assert all(later > earlier for earlier, later in zip(cost[1:], cost[2:]))


def test_ch2_partial_credit_example_holds_as_stated():
    assert "scores 3/10, more than an honest attempt whose one wrong edge case breaks eight of the tests (2/10)" \
        in text("02_verifiable_rewards")
    suite, special_cased, broken_by_edge_case = 10, 3, 8
    assert special_cased / suite > (suite - broken_by_edge_case) / suite


def test_ch2_process_rewards_may_shape_where_a_check_exists():
    assert "shaping; never the deciding score where a check exists" in text("02_verifiable_rewards")


def test_ch5_preemption_with_a_retry_left_is_pending():
    t = text("05_multi_turn")
    assert "or the node was reclaimed, and a retry is still possible | infrastructure | `pending`" in t
    assert "| The same, with no retry left | infrastructure | `unknown` |" in t


def test_ch9_pass_hat_k_is_the_unbiased_estimate():
    t = text("09_case_study")
    assert "rewards.pass_hat_k_unbiased(n, c, 5)" in t and "n, c = 20, 15" in t
    unbiased, plug_in = rewards.pass_hat_k_unbiased(20, 15, 5), rewards.pass_hat_k(15 / 20, 5)
    assert round(unbiased, 3) == 0.194 and round(plug_in, 3) == 0.237 and plug_in > unbiased


def test_ch9_names_the_acceptance_suite_the_fixture_ships():
    from rlvr_lab.verifier import load_fixture

    version = load_fixture("pool_repair_01").checker_version
    assert version == "repair_accept_v2" and f"acceptance suite, `{version}`" in text("09_case_study")
