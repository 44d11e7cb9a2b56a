"""The verifier engine on a small function task: verdicts, proxy semantics, admission, trials."""
from __future__ import annotations
import pytest
from rlvr_lab.verifier import Candidate, Verifier
from rlvr_lab.verifier.workspace import admission_error, apply, capture
from verifier_helpers import GOOD, function_fixture, candidate

@pytest.fixture(scope='module')
def verifier():
    v = Verifier(backend='local', retries=0, seed=1234)
    yield v
    v.close()

def test_correct_candidate_passes_with_evidence(verifier):
    pass

def test_incorrect_candidate_fails_and_stops_at_first_rejection(verifier):
    pass

def test_always_equal_object_is_not_a_value(verifier):
    pass

def test_int_subclass_is_refused(verifier):
    pass

def test_wrong_exception_type_fails(verifier):
    pass

def test_syntax_error_fails(verifier):
    pass

def test_admission_refuses_non_permitted_path(verifier):
    pass

def test_admission_refuses_escaping_paths():
    pass

def test_capture_and_apply_round_trip(tmp_path):
    pass

def test_bad_arguments_raise_value_error(verifier):
    pass

def test_module_level_names_and_import_time_calls(verifier):
    """Names imported at module level are late-bound; a module that calls the candidate at import time
    is collected in every trial instead (same verdicts either way)."""
    import dataclasses

    late = ("from solution import double, LIMIT\n\n"
            "def test_constant():\n    assert double(LIMIT) == 2 * LIMIT\n    assert LIMIT > 3 and f'{LIMIT}' == '7'\n")
    eager = "from solution import double\n\nEXPECTED = double(21)\n\ndef test_eager():\n    assert EXPECTED == 42\n"
    for hidden in (late, eager):
        fx = dataclasses.replace(function_fixture(), hidden_tests={"test_hidden.py": hidden})
        assert verifier.verify(candidate("LIMIT = 7\n"), fx).outcome == "pass"
        assert verifier.verify(candidate("LIMIT = 7\ndef double(x):\n    return x\n"), fx).outcome == "fail"


def test_remote_objects_compare_by_identity_and_refuse_truth(verifier):
    import dataclasses

    hidden = ("import pytest\nfrom solution import Counter\n\n"
              "def test_handles():\n    a, b = Counter(), Counter()\n    assert a == a and a != b\n"
              "    with pytest.raises(Exception, match='truth value'):\n        bool(a)\n"
              "    assert a.name == 'counter' and a.total() == 0\n")
    fx = dataclasses.replace(function_fixture(), hidden_tests={"test_hidden.py": hidden})
    assert verifier.verify(candidate(""), fx).outcome == "pass"


def test_unavailable_namespaces_raise_a_clear_error(monkeypatch):
    from rlvr_lab.verifier import SandboxUnavailable, sandbox

    monkeypatch.setattr(sandbox, "_available", None)
    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 1000)
    with pytest.raises(SandboxUnavailable, match="needs root"):
        Verifier(backend="local")
