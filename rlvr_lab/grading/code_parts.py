"""Exercise 9's "implement it" parts graded by the course's own verifier (section 17.14 over 17.7).

A code part asks for a function. :func:`score_code_parts` takes its cell from the submitted notebook's
code cells (plain text the grader parsed: :func:`rlvr_lab.exercise_code.candidate_source`), refuses what
breaks the public rules (:func:`rlvr_lab.exercise_code.rule_problems`: imports beyond the standard
library's math helpers, ``open``/``eval``/dunders), and submits the rest to a
:class:`~rlvr_lab.verifier.Verifier` as a :class:`~rlvr_lab.verifier.Candidate` (``solution.py``) against
an in-memory :class:`~rlvr_lab.verifier.Fixture` (:func:`code_fixture`) whose hidden tests are the key's
(shipped as data in :class:`~rlvr_lab.grading.worker.KeyData`, never in a notebook or a sandbox). The
hidden tests run in the verifier's trusted runner and compare the function with the library on fixed
edge cases and generated inputs; the function runs in a sandbox holding the interpreter's standard library
only (no numpy, no torch, no ``rlvr_lab``: the library's answer cannot be imported), under the all-pass rule.

A part's status follows the verdict: ``pass`` -> ``correct`` (full points); ``fail`` -> ``wrong`` with the
first rejected trial's reason; a refusal by the rules -> ``refused``; no function or the untouched stub ->
``unanswered``. ``pending`` and ``unknown`` (the verifier's infrastructure failed, retries exhausted) are
*not grades*: the part keeps status ``pending``/``unknown`` with ``graded: False`` and 0 points so far,
the report lists it under ``ungraded``, and ``rlvr-lab grade`` exits with status 5 naming it (regrade).
"""

from __future__ import annotations

import re
import time

from rlvr_lab.exercise_code import borrowed, candidate_source, is_stub, rule_problems

#: The module the candidate's cell becomes in the fixture (the hidden tests import it).
MODULE = "solution"
#: Resources of one trial of a code part (hidden tests and the function's sandbox).
WALL_S, MEMORY_MB = 30.0, 512
#: Statuses of a code part that are not grades: the verifier could not decide.
UNRESOLVED = ("pending", "unknown")
_TEST_PATH = re.compile(r"tests/[0-9a-f]+/")


def code_fixture(part_id: str, part, test_file: str, test_text: str, trials: int):
    """The in-memory fixture of one code part: ``solution.py`` (the stub) and the key's hidden tests."""
    from rlvr_lab.verifier import Fixture, Limits

    stub = "\n\n".join(a.stub for a in part.answers) + "\n"
    return Fixture(
        name=part_id,
        version=f"{part_id}_v1",
        files={f"{MODULE}.py": stub},
        hidden_tests={test_file: test_text},
        allowed_paths=(f"{MODULE}.py",),
        modules=(MODULE,),
        limits=Limits(
            wall_s=WALL_S, cpu_s=int(WALL_S), memory_mb=MEMORY_MB, processes=16, file_mb=4, open_files=64, output_kb=64
        ),
        trials=trials,
        checker_version=f"{part_id}_hidden_v1",
        description=part.prompt,
    )


def _entry(title: str, status: str, detail: str, score: int = 0, **extra) -> dict:
    return {"score": score, "max": 1, "title": title, "status": status, "detail": detail[:600], "graded": True, **extra}


def grade_code_part(part_id: str, part, cells, test_file: str, test_text: str, trials: int, verifier) -> dict:
    """One code part of one notebook: its report entry (``score``, ``max``, ``status``, ``detail``, ``verdict``).

    ``cells``: the notebook's code-cell sources, in order; ``verifier``: a
    :class:`~rlvr_lab.verifier.Verifier` (or a callable returning one, called only when a verdict is needed).
    """
    from rlvr_lab.verifier import Candidate

    names = part.names
    source, missing = candidate_source(cells, names)
    if source is None:
        taken = borrowed(cells, names)
        if taken:
            return _entry(
                part.title,
                "refused",
                f"{', '.join(taken)} is imported or assigned, not written with "
                "def: the part asks you to write the function",
            )
        return _entry(part.title, "unanswered", missing)
    stubs = [n for n in names if is_stub(source, n)]
    if stubs:
        return _entry(part.title, "unanswered", f"{', '.join(stubs)}() still raises NotImplementedError")
    broken = rule_problems(source)
    if broken:
        return _entry(part.title, "refused", "refused before verification: " + "; ".join(broken[:3]))
    started = time.monotonic()
    try:
        if callable(verifier) and not hasattr(verifier, "verify"):
            verifier = verifier()
        verdict = verifier.verify(
            Candidate({f"{MODULE}.py": source}), code_fixture(part_id, part, test_file, test_text, trials)
        )
    except Exception as exc:  # no verifier here (no sandbox) or its runner broke: not a grade
        return _entry(
            part.title,
            "unknown",
            f"not graded: the verifier failed ({type(exc).__name__}: {exc}); regrade this notebook",
            graded=False,
        )
    if verdict.backend == "process":  # no namespaces: nothing would hide the library from the function
        return _entry(
            part.title,
            "unknown",
            "not graded: the verifier fell back to the process backend, which "
            "cannot hide rlvr_lab from the function; grade where local or docker sandboxes run",
            graded=False,
        )
    record = {
        "outcome": verdict.outcome,
        "stop_reason": verdict.stop_reason,
        "backend": verdict.backend,
        "trials": len(verdict.trials),
        "attempts": verdict.attempts,
        "seconds": round(time.monotonic() - started, 3),
        "candidate_digest": verdict.candidate_digest,
        "checker_version": verdict.checker_version,
    }
    if verdict.outcome == "pass":
        return _entry(part.title, "correct", "", score=1, verdict=record)
    if verdict.outcome in UNRESOLVED:
        return _entry(
            part.title,
            verdict.outcome,
            f"not graded: the verifier could not decide after "
            f"{verdict.attempts} attempt(s) ({verdict.stop_reason}); regrade this notebook",
            verdict=record,
            graded=False,
        )
    failed = next((t for t in verdict.trials if t.outcome != "pass"), None)
    why = f"{failed.reason}: {_TEST_PATH.sub('', failed.detail)}" if failed else ""
    return _entry(part.title, "wrong", f"verifier: {verdict.stop_reason}. {why}".strip(), verdict=record)


def score_code_parts(key_module, exercise: str, cells, hidden: dict, verifier) -> dict:
    """Every code part of ``exercise`` (none for exercises 1-8): part id -> report entry.

    ``hidden``: hidden test file name -> text (from the key folder); ``verifier``: see :func:`grade_code_part`.
    """
    out = {}
    trials = getattr(key_module, "CODE_TRIALS", 3)
    for part_id, (part, test_file) in getattr(key_module, "CODE_PARTS", {}).items():
        if not part_id.startswith(exercise + "."):
            continue
        if test_file not in hidden:
            out[part_id] = _entry(
                part.title, "unknown", f"not graded: the key has no hidden tests {test_file}", graded=False
            )
            continue
        out[part_id] = grade_code_part(part_id, part, cells, test_file, hidden[test_file], trials, verifier)
    return out


def ungraded(report: dict) -> list:
    """``"path part_id (status)"`` of every code part the verifier could not decide, across the report."""
    return [
        f"{sub['path']} {pid} ({entry['status']})"
        for sub in report.get("submissions", [])
        for pid, entry in sub.get("parts", {}).items()
        if entry.get("graded") is False
    ]
