"""Gradescope's autograder format for ``rlvr-lab grade`` (section 17.14): ``results.json`` and its folders.

Gradescope runs ``/autograder/run_autograder`` once per submission, with the student's files in
``/autograder/submission`` and their names in ``/autograder/submission_metadata.json``, and reads the grade
from ``/autograder/results/results.json`` (`Autograder Specifications
<https://gradescope-autograders.readthedocs.io/en/latest/specs/>`_). :func:`results_json` turns a grading
report into that file: one test per graded part (``score``, ``max_score``, ``status`` passed/failed, the
grader's finding and the part's hint as ``output``), the total as ``score``. :data:`RESULTS_SCHEMA` is the
documented format as a JSON schema. :class:`Layout` names the folders under a root, so the same entry runs
in a temporary folder laid out like Gradescope's. The orchestration is ``rlvr-lab grade --gradescope``
(:func:`rlvr_lab.grading.grader.run`); ``labs/exercises/gradescope/run_autograder`` calls it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from rlvr_lab.grading.feedback import part_hints
from rlvr_lab.grading.roster import counted

__all__ = ["VISIBILITY", "RESULTS_SCHEMA", "Layout", "results_json", "write_results", "submitter_names"]

#: Gradescope's visibility settings, least visible first.
VISIBILITY = ("hidden", "after_due_date", "after_published", "visible")
_FORMATS = ("text", "html", "simple_format", "md", "ansi")

_TEST = {
    "type": "object",
    "properties": {
        "score": {"type": "number", "minimum": 0},
        "max_score": {"type": "number", "minimum": 0},
        "status": {"enum": ["passed", "failed"]},
        "name": {"type": "string"},
        "name_format": {"enum": list(_FORMATS)},
        "number": {"type": "string"},
        "output": {"type": "string"},
        "output_format": {"enum": list(_FORMATS)},
        "tags": {"type": "array", "items": {"type": "string"}},
        "visibility": {"enum": list(VISIBILITY)},
        "extra_data": {"type": "object"},
    },
    "additionalProperties": False,
}
#: ``results.json`` as Gradescope documents it (draft-07 JSON schema): ``score`` is required unless every
#: test has one; ``execution_time`` is whole seconds.
RESULTS_SCHEMA = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {
        "score": {"type": "number", "minimum": 0},
        "execution_time": {"type": "integer", "minimum": 0},
        "output": {"type": "string"},
        "output_format": {"enum": list(_FORMATS)},
        "test_output_format": {"enum": list(_FORMATS)},
        "test_name_format": {"enum": list(_FORMATS)},
        "visibility": {"enum": list(VISIBILITY)},
        "stdout_visibility": {"enum": list(VISIBILITY)},
        "extra_data": {"type": "object"},
        "tests": {"type": "array", "items": _TEST},
        "leaderboard": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name", "value"],
                "properties": {
                    "name": {"type": "string"},
                    "value": {"type": ["number", "string"]},
                    "order": {"enum": ["asc", "desc"]},
                },
            },
        },
    },
    "anyOf": [
        {"required": ["score"]},
        {"required": ["tests"], "properties": {"tests": {"items": {"required": ["score"]}}}},
    ],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class Layout:
    """Gradescope's folders under one root (``/autograder`` there; a temporary folder in a rehearsal)."""

    root: str = "/autograder"
    """The autograder's folder."""

    @property
    def submission(self) -> str:
        """The student's uploaded files."""
        return os.path.join(self.root, "submission")

    @property
    def metadata(self) -> str:
        """``submission_metadata.json``: the submitters (``users``: ``name``, ``email``, ``id``)."""
        return os.path.join(self.root, "submission_metadata.json")

    @property
    def results(self) -> str:
        """Where Gradescope reads the grade."""
        return os.path.join(self.root, "results", "results.json")

    @property
    def source(self) -> str:
        """The unzipped autograder bundle (``run_autograder``, ``setup.sh`` and the key folder ``key/``)."""
        return os.path.join(self.root, "source")


def submitter_names(layout: Layout) -> str:
    """The submitters' names from the metadata file ("" when it is absent or unreadable)."""
    try:
        with open(layout.metadata, encoding="utf-8") as handle:
            users = json.load(handle).get("users") or []
        return ", ".join(str(u.get("name") or u.get("email") or u.get("id")) for u in users if isinstance(u, dict))
    except (OSError, ValueError, AttributeError):
        return ""


def _number(part_id: str) -> str:
    """``ex7.part_c`` -> ``7.c``; ``ex7.part_c.rubric`` -> ``7.c.argument``."""
    return part_id.removeprefix("ex").replace(".part_", ".").replace(".rubric", ".argument")


def _test(part_id: str, entry: dict, part, exercise_title: str) -> dict:
    full = entry["max"] > 0 and entry["score"] >= entry["max"]
    lines = [f"{entry['status']}" + (f": {entry['detail']}" if entry.get("detail") else "")]
    hint = part_hints(part, entry.get("detail", "")) if entry["status"] not in ("not submitted", "correct") else ""
    if not full and entry.get("kind") != "rubric" and hint:
        lines.append("Hint: " + hint)
    return {
        "name": f"{exercise_title} ({part_id.split('.')[1].removeprefix('part_')}) {entry.get('title', '')}".strip(),
        "number": _number(part_id),
        "score": float(entry["score"]),
        "max_score": float(entry["max"]),
        "status": "passed" if full else "failed",
        "output": "\n".join(lines),
        "visibility": "visible",
    }


def results_json(report: dict, key_module, expect=(), submitter: str = "") -> dict:
    """Gradescope's ``results.json`` for a report of one student's notebooks.

    ``expect``: exercise ids the assignment asks for; each one with no notebook gets its parts as failed
    tests ("not submitted"), so a missing notebook shows. Written arguments appear as tests only when
    marks were merged (:func:`rlvr_lab.grading.manual.merge_marks`); otherwise the output says they are
    graded by hand.
    """
    from rlvr_lab import exercises

    titles = {e.id: e.title.split(" (")[0] for e in exercises.EXERCISES}
    parts, tests, notes = dict(key_module.PARTS), [], []
    subs = [s for s in report["submissions"] if counted(s)]
    for sub in sorted(subs, key=lambda s: (s.get("exercise") or "~", s["path"])):
        name = os.path.basename(sub["path"])
        if sub["outcome"] != "completed" or sub.get("reason"):
            notes.append(f"{name}: {sub['outcome']}" + (f" ({sub['reason']})" if sub.get("reason") else ""))
        for pid, entry in sub["parts"].items():
            base = pid.removesuffix(".rubric")
            tests.append(_test(pid, entry, parts.get(base), titles.get(pid.split(".")[0], pid.split(".")[0])))
    submitted = {s.get("exercise") for s in subs}
    for exercise in expect:
        if exercise in submitted:
            continue
        notes.append(f"{exercise}: no notebook submitted")
        for pid, part in parts.items():
            if pid.startswith(exercise + "."):
                blank = {
                    "score": 0,
                    "max": 1,
                    "status": "not submitted",
                    "title": part.title,
                    "detail": f"no notebook for {exercise} in the submission",
                }
                tests.append(_test(pid, blank, part, titles.get(exercise, exercise)))
    score = sum(t["score"] for t in tests)
    most = sum(t["max_score"] for t in tests)
    head = (
        f"RLVR Lab exercises{' for ' + submitter if submitter else ''}: {score:g}/{most:g} points over "
        f"{len(subs)} notebook(s), each run in its own sandbox."
    )
    if "manual" not in report and any(getattr(p, "argued", False) for p in parts.values()):
        head += " Written arguments of decision parts are graded by hand against the rubric."
    return {
        "score": float(score),
        "execution_time": int(round(report.get("elapsed_s") or 0)),
        "output": "\n".join([head] + notes),
        "output_format": "text",
        "test_output_format": "text",
        "test_name_format": "text",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
        "extra_data": {
            "rlvr_lab": {
                "sandboxes": report.get("sandboxes", []),
                "notebooks": [os.path.basename(s["path"]) for s in subs],
            }
        },
    }


def write_results(results: dict, path: str) -> str:
    """Write ``results`` as JSON to ``path`` (its folder created); return ``path``."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(results, handle, indent=2)
        handle.write("\n")
    return path
