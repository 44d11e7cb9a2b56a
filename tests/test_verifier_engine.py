"""The verifier engine on a small function task: verdicts, proxy semantics, admission, trials."""

from __future__ import annotations

import pytest

from rlvr_lab.verifier import Candidate, Verifier
from rlvr_lab.verifier.workspace import admission_error, apply, capture
from verifier_helpers import GOOD, function_fixture, candidate, needs_local_sandbox

pytestmark = needs_local_sandbox


@pytest.fixture(scope="module")
def verifier():
    v = Verifier(backend="local", retries=0, seed=1234)
    yield v
    v.close()


def test_correct_candidate_passes_with_evidence(verifier):
    fx = function_fixture(trials=2)
    cand = Candidate({"solution.py": GOOD})
    verdict = verifier.verify(cand, fx)
    assert verdict.outcome == "pass", verdict
    assert verdict.reward == 1.0
    assert verdict.candidate_digest == cand.digest
    assert (verdict.fixture, verdict.fixture_version, verdict.checker_version) == (
        "double_01",
        "double_fixture_v1",
        "double_accept_v1",
    )
    assert verdict.backend in ("local", "local-userns")  # root, or an ordinary user
    assert [t.outcome for t in verdict.trials] == ["pass", "pass"]
    assert verdict.trials[0].seed != verdict.trials[1].seed
    assert verdict.stop_reason == "all 2 trials passed"


def test_incorrect_candidate_fails_and_stops_at_first_rejection(verifier):
    verdict = verifier.verify(candidate("def double(x):\n    return x + 2\n"), function_fixture(), trials=3)
    assert verdict.outcome == "fail"
    assert len(verdict.trials) == 1
    assert verdict.stop_reason.startswith("rejected at trial 1 of 3")


def test_always_equal_object_is_not_a_value(verifier):
    body = (
        "class Yes:\n    def __eq__(self, other):\n        return True\n    def __bool__(self):\n        return True\n"
        "def double(x):\n    if x is None:\n        raise TypeError\n    return Yes()\n"
    )
    assert verifier.verify(candidate(body), function_fixture()).outcome == "fail"


def test_int_subclass_is_refused(verifier):
    body = (
        "class Sneaky(int):\n    def __eq__(self, other):\n        return True\n"
        "def double(x):\n    if x is None:\n        raise TypeError\n    return Sneaky(0)\n"
    )
    verdict = verifier.verify(candidate(body), function_fixture())
    assert verdict.outcome == "fail"
    assert "NonPlainValue" in verdict.trials[0].detail or "CandidateError" in verdict.trials[0].detail


def test_wrong_exception_type_fails(verifier):
    body = "def double(x):\n    if x is None:\n        raise KeyError('x')\n    return 2 * x\n"
    assert verifier.verify(candidate(body), function_fixture()).outcome == "fail"


def test_syntax_error_fails(verifier):
    verdict = verifier.verify(Candidate({"solution.py": "def double(:\n"}), function_fixture())
    assert verdict.outcome == "fail"
    # decided by parsing in the runner, before any sandbox: no trial, and the reason names file and line
    assert verdict.trials == () and verdict.stop_reason.startswith("does not compile: solution.py: SyntaxError")
    for text in ("def double(x):\nreturn 2 * x\n", "def double(x):\n    return 2 *\x00 x\n"):
        assert verifier.verify(Candidate({"solution.py": text}), function_fixture()).outcome == "fail"
    # a broken file that no test imports is not the gate's business: the trials decide (and pass)
    fine = verifier.verify(Candidate({"solution.py": GOOD, "helpers/unused.py": "def (\n"}), function_fixture())
    assert fine.outcome == "pass" and len(fine.trials) >= 1


def test_admission_refuses_non_permitted_path(verifier):
    cand = Candidate({"solution.py": GOOD, "conftest.py": "import pytest\n"})
    verdict = verifier.verify(cand, function_fixture())
    assert verdict.outcome == "fail"
    assert verdict.trials == ()
    assert verdict.stop_reason == "admission: path 'conftest.py' is not permitted (allowed: solution.py, helpers/*.py)"


def test_admission_refuses_escaping_paths():
    fx = function_fixture()
    assert "leaves the workspace" in admission_error(Candidate({"helpers/../../x.py": ""}), fx)
    assert "not a relative POSIX path" in admission_error(Candidate({"/etc/passwd": ""}), fx)
    assert admission_error(Candidate({}), fx) == "the candidate changes no file"


def test_capture_and_apply_round_trip(tmp_path):
    fx = function_fixture()
    tree = tmp_path / "explored"
    apply(fx, Candidate({"solution.py": GOOD}), tree)
    (tree / "__pycache__").mkdir()
    (tree / "__pycache__" / "x.pyc").write_text("junk")
    captured = capture(tree, fx)
    assert captured.files == {"solution.py": GOOD}  # README unchanged, caches skipped


def test_bad_arguments_raise_value_error(verifier):
    with pytest.raises(ValueError, match="trials must be an integer >= 1"):
        verifier.verify(Candidate({"solution.py": GOOD}), function_fixture(), trials=0)
    with pytest.raises(ValueError, match="backend must be one of"):
        Verifier(backend="ssh")
    with pytest.raises(ValueError, match="retries must be an integer in"):
        Verifier(retries=-1)


def test_module_level_names_and_import_time_calls(verifier):
    """Names imported at module level are late-bound; a module that calls the candidate at import time
    is collected in every trial instead (same verdicts either way)."""
    import dataclasses

    late = (
        "from solution import double, LIMIT\n\n"
        "def test_constant():\n    assert double(LIMIT) == 2 * LIMIT\n    assert LIMIT > 3 and f'{LIMIT}' == '7'\n"
    )
    eager = "from solution import double\n\nEXPECTED = double(21)\n\ndef test_eager():\n    assert EXPECTED == 42\n"
    for hidden in (late, eager):
        fx = dataclasses.replace(function_fixture(), hidden_tests={"test_hidden.py": hidden})
        assert verifier.verify(candidate("LIMIT = 7\n"), fx).outcome == "pass"
        assert verifier.verify(candidate("LIMIT = 7\ndef double(x):\n    return x\n"), fx).outcome == "fail"


def test_remote_objects_compare_by_identity_and_refuse_truth(verifier):
    import dataclasses

    hidden = (
        "import pytest\nfrom solution import Counter\n\n"
        "def test_handles():\n    a, b = Counter(), Counter()\n    assert a == a and a != b\n"
        "    with pytest.raises(Exception, match='truth value'):\n        bool(a)\n"
        "    assert a.name == 'counter' and a.total() == 0\n"
    )
    fx = dataclasses.replace(function_fixture(), hidden_tests={"test_hidden.py": hidden})
    assert verifier.verify(candidate(""), fx).outcome == "pass"


def test_unavailable_namespaces_raise_a_clear_error(monkeypatch):
    """Neither root nor a user namespace can build the sandbox: ``local`` refuses, naming both causes and
    the alternatives; ``auto`` falls back to the weaker ``process`` backend (never silently: see
    tests/test_backends.py)."""
    from rlvr_lab.sandbox import local
    from rlvr_lab.sandbox.factory import resolve_backend
    from rlvr_lab.verifier import SandboxUnavailable

    monkeypatch.setattr(local, "_mode", None)
    monkeypatch.setattr(local, "_mode_error", "")
    monkeypatch.setattr(local, "_probe", lambda mode: f"{mode} refused (test)")
    with pytest.raises(SandboxUnavailable, match="user namespace: userns refused.*backend='process'"):
        Verifier(backend="local")
    assert resolve_backend("auto") == "process"


def test_no_tests_is_not_a_pass(verifier):
    import dataclasses

    fx = dataclasses.replace(function_fixture(), hidden_tests={"test_hidden.py": "from solution import double\n"})
    verdict = verifier.verify(Candidate({"solution.py": GOOD}), fx)
    assert verdict.outcome == "fail"
    assert verdict.trials[0].reason in ("no test ran", "pytest exit code 5")


def test_test_order_is_shuffled_per_trial(verifier):
    """Six tests pass only if run in file order; a seeded shuffle makes that (almost) never happen."""
    import dataclasses

    hidden = "from solution import note\n" + "".join(
        f"\ndef test_{k}():\n    assert note({k}) == list(range({k + 1}))\n" for k in range(6)
    )
    fx = dataclasses.replace(function_fixture(), hidden_tests={"test_hidden.py": hidden})
    body = "_seen = []\ndef note(k):\n    _seen.append(k)\n    return list(_seen)\n"
    verdicts = [verifier.verify(candidate(body), fx) for _ in range(3)]
    assert [v.outcome for v in verdicts] == ["fail"] * 3
    assert len({v.trials[0].seed for v in verdicts}) == 3


@needs_local_sandbox
def test_collection_stays_inside_the_active_fixture(tmp_path):
    """The runner keeps many fixtures' hidden tests side by side; collecting one must not walk the others
    (pytest would list and match every sibling), and each fixture's verdicts stay what they were."""
    from dataclasses import replace

    from rlvr_lab.verifier.runner import SlotRunner

    class DirSpy:
        def __init__(self) -> None:
            self.seen: list[str] = []

        def pytest_collect_directory(self, path, parent):
            self.seen.append(str(path))

    runner = SlotRunner("auto", tmp_path / "slot")
    try:
        spy = DirSpy()
        runner._prepare_pytest()
        runner.config.pluginmanager.register(spy)
        fixtures = [
            replace(
                function_fixture(),
                name=f"double_{i}",
                hidden_tests={
                    "test_hidden.py": function_fixture().hidden_tests["test_hidden.py"]
                    + f"\n\ndef test_marker_{i}():\n    pass\n"
                },
            )
            for i in range(4)
        ]
        outcomes = []
        for fx in fixtures:
            spy.seen.clear()
            outcomes.append(runner.verify(fx, candidate(""), 1, 7, direct=False).outcome)
            test_dir = str(runner._fixture_dir(fx)[0])
            assert spy.seen and all(
                not p.startswith(str(runner.tests_root) + "/") or p.startswith(test_dir) for p in spy.seen
            ), spy.seen
        assert outcomes == ["pass"] * 4
        assert (
            runner.verify(fixtures[0], candidate("def double(x):\n    return x\n"), 1, 7, direct=False).outcome
            == "fail"
        )
    finally:
        runner.close()
