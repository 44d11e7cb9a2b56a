"""MBPP as verifier tasks: crowd-sourced Python problems graded through the sandbox (section 17.9.1).

MBPP (Austin et al., 2021) has 974 problems, each a ``text`` (one sentence), a reference ``code``, a
``test_list`` of three ``assert`` lines, ``test_setup_code`` and ``challenge_test_list``; the hub dataset
``google-research-datasets/mbpp`` (config ``full``) splits them into train (374), validation (90), test (500)
and prompt (10). They suit a 0.5B-class instruct code model: neither trivial nor impossible for it.

Each problem becomes a :class:`~rlvr_lab.tasks.CodeTask` whose prompt is the text and the first assert
(it fixes the function's name and signature, as in the MBPP paper's prompt) and whose whole reply is the
file ``solution.py``. The hidden test runs every assert of ``test_list`` (the challenge tests too when
asked) against the candidate behind the proxy::

    <test_setup_code>
    from solution import *
    def test_mbpp():
        <assert lines>
"""

from __future__ import annotations

import json
import os

from rlvr_lab.verifier.schema import Fixture, Limits

#: Version recorded in each MBPP fixture.
FIXTURE_VERSION = "mbpp_v1"
#: Version of the hidden-test wrapper (:func:`hidden_test`), recorded as the checker version.
CHECKER_VERSION = "mbpp_check_v1"
#: The hub dataset and config :func:`load_problems` reads when no local file is given.
HUB_DATASET = ("google-research-datasets/mbpp", "full")
#: Limits of one MBPP trial.
LIMITS = Limits(wall_s=10.0, cpu_s=10, memory_mb=512, processes=16, file_mb=4, open_files=64, output_kb=64)


def hidden_test(problem: dict, challenge: bool = False) -> str:
    """The hidden pytest file of one problem: setup code, star import, every assert in one test.

    >>> print(hidden_test({"test_list": ["assert f(1) == 2"], "test_setup_code": ""}))
    from solution import *
    <BLANKLINE>
    <BLANKLINE>
    def test_mbpp():
        assert f(1) == 2
    <BLANKLINE>
    """
    asserts = list(problem["test_list"]) + (list(problem.get("challenge_test_list") or []) if challenge else [])
    if not asserts or not all(isinstance(a, str) and a.strip().startswith("assert") for a in asserts):
        raise ValueError("problem must have a non-empty test_list of assert lines")
    setup = (problem.get("test_setup_code") or "").strip()
    body = "".join(f"    {a.strip()}\n" for a in asserts)
    return (f"{setup}\n" if setup else "") + f"from solution import *\n\n\ndef test_mbpp():\n{body}"


def prompt(problem: dict) -> str:
    """What the policy reads: the problem's text and its first assert.

    >>> print(prompt({"text": "Add one.", "test_list": ["assert f(1) == 2"]}))
    Add one.
    Your code should pass this test:
    assert f(1) == 2
    """
    return f"{problem['text'].strip()}\nYour code should pass this test:\n{problem['test_list'][0].strip()}"


def problem_fixture(problem: dict, challenge: bool = False) -> Fixture:
    """The in-memory fixture of one MBPP problem (``task_id``, ``text``, ``test_list`` at least)."""
    if not isinstance(problem.get("text"), str) or "task_id" not in problem:
        raise ValueError("problem must have a 'task_id' and a string 'text'")
    return Fixture(
        name=f"mbpp_{problem['task_id']}",
        version=FIXTURE_VERSION,
        files={"solution.py": ""},
        hidden_tests={"test_mbpp.py": hidden_test(problem, challenge)},
        public_tests={
            "test_public.py": hidden_test(
                {"test_list": problem["test_list"][:1], "test_setup_code": problem.get("test_setup_code")}
            )
        },
        allowed_paths=("solution.py",),
        modules=("solution",),
        limits=LIMITS,
        trials=1,
        checker_version=CHECKER_VERSION,
        description=problem["text"].strip(),
    )


def load_problems(source: str = "", split: str = "train") -> list[dict]:
    """MBPP problems: from a local ``.jsonl``/``.json`` file in the hub's format (``source``; its optional
    ``split`` field filters rows, rows without one belong to every split), or from the hub
    (:data:`HUB_DATASET`, needs ``datasets`` and a reachable hub) when ``source`` is empty."""
    if split not in ("train", "validation", "test", "prompt"):
        raise ValueError(f"split must be 'train', 'validation', 'test' or 'prompt', got {split!r}")
    if source:
        if not os.path.isfile(source):
            raise ValueError(f"source must be an MBPP-format .jsonl file, got {source!r} (not a file)")
        from datasets import load_dataset

        rows = list(load_dataset("json", data_files=source, split="train"))
        return [r for r in rows if r.get("split") in (None, split)]
    from datasets import load_dataset

    return list(load_dataset(*HUB_DATASET, split=split))


def write_problems(path: str, problems: list[dict]) -> None:
    """Write problems as MBPP-format JSON lines (the format :func:`load_problems` reads)."""
    with open(path, "w", encoding="utf-8") as fh:
        for p in problems:
            fh.write(json.dumps(p) + "\n")
