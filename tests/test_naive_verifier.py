"""The teaching-only NaiveVerifier: it grades honestly-written candidates and really falls for exploits."""

import pytest

from rlvr_lab.verifier.fixtures import load_exploit, load_fixture, load_reference
from rlvr_lab.verifier.naive import NaiveVerifier, build_tree, junit_verdict, parse_env_file
from rlvr_lab.verifier.schema import Candidate


@pytest.fixture(scope="module")
def pool_fx():
    return load_fixture("pool_repair_01")


@pytest.fixture(scope="module")
def naive():
    return NaiveVerifier(timeout_s=60)


@pytest.fixture(autouse=True)
def scratch_cwd(tmp_path, monkeypatch):
    """Call the (unsafe) harness from an empty directory, never from the repository."""
    monkeypatch.chdir(tmp_path)


def test_good_patch_passes_and_base_fails(naive, pool_fx):
    good = naive.verify(load_reference("pool_repair_01", "good"), pool_fx)
    assert good.outcome == "pass", good.stop_reason
    assert good.backend == "naive"
    assert good.trials[0].reason.startswith("report: 13 tests, 0 failures")
    base = naive.verify(Candidate({"pool_fixture/pool.py": pool_fx.files["pool_fixture/pool.py"] + "\n"}), pool_fx)
    assert base.outcome == "fail"
    assert "failures" in base.trials[0].reason


def test_deterministic_bad_patch_fails(naive, pool_fx):
    verdict = naive.verify(load_reference("pool_repair_01", "bad_unlocked_notify"), pool_fx)
    assert verdict.outcome == "fail"


def test_it_really_runs_the_candidates_conftest(naive, pool_fx):
    verdict = naive.verify(load_exploit("conftest_report_patch"), pool_fx)
    assert verdict.outcome == "pass"
    assert verdict.trials[0].reason == "report: 13 tests, 0 failures, 0 errors"


def test_a_hang_is_a_fail_after_the_timeout(pool_fx):
    verdict = NaiveVerifier(timeout_s=3).verify(load_exploit("infinite_loop"), pool_fx)
    assert verdict.outcome == "fail"
    assert verdict.trials[0].reason == "timeout"


def test_tree_layout_puts_hidden_tests_next_to_the_candidate(tmp_path, pool_fx):
    build_tree(load_exploit("tests_replaced"), pool_fx, tmp_path)
    assert (tmp_path / "pool_fixture" / "pool.py").is_file()
    assert (tmp_path / "tests" / "conftest.py").is_file()
    assert (
        "def test_release_wakes_a_waiting_thread():\n    pass"
        in (tmp_path / "tests" / "test_pool_accept.py").read_text()
    )
    with pytest.raises(ValueError, match="leaves the workspace"):
        build_tree(Candidate({"../escape.py": ""}), pool_fx, tmp_path)


def test_helpers_and_arguments(tmp_path, pool_fx):
    assert parse_env_file("A=1\n#B=2\nexport C='x y'\n") == {"A": "1", "C": "x y"}
    report = tmp_path / "r.xml"
    report.write_text('<testsuites><testsuite tests="3" failures="1" errors="0"/></testsuites>')
    assert junit_verdict(report) == (False, "report: 3 tests, 1 failures, 0 errors")
    report.write_text("not xml")
    assert junit_verdict(report) is None
    with pytest.raises(ValueError, match="timeout_s"):
        NaiveVerifier(timeout_s=-1)
    with pytest.raises(ValueError, match="trials"):
        NaiveVerifier().verify(load_exploit("exit_os"), pool_fx, trials=0)
    with pytest.raises(ValueError, match="candidate"):
        NaiveVerifier().verify({"pool_fixture/pool.py": ""}, pool_fx)
