"""One notebook graded on any machine: the unit of work of ``rlvr-lab grade`` (section 17.14).

:func:`grade_notebook` takes plain data (a :class:`NotebookJob`, the key as :class:`KeyData`: the key
module's *text*, never a path, so no shared file system is assumed; :class:`GradeSettings`), runs the
notebook in its own sandbox and scores its final values (:func:`score_parts`), so the same function runs
in a grader thread or in a Ray actor on another machine. The key lives only in the grading process's
memory there; the sandbox cannot reach that process.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import sys
import tempfile
import threading
import types
from dataclasses import dataclass
from pathlib import Path

from rlvr_lab.grading.admission import KEY_MODULE
from rlvr_lab.grading.code_parts import score_code_parts

#: Name the key module is registered under (its dataclasses look their module up by name).
KEY_MODULE_NAME = "rlvr_exercise_key"
#: The key folder's folder of hidden tests (exercise 9's code parts).
HIDDEN_DIR = "hidden"
_KEYS: dict = {}
_KEYS_LOCK = threading.Lock()


@dataclass(frozen=True)
class KeyData:
    """The answer key as data, shipped to whichever machine grades a notebook."""

    source: str
    """Text of the key folder's ``exercise_key.py``."""
    digest: str
    """SHA-256 of ``source`` and ``hidden`` (names the key in reports and in each process's cache)."""
    hidden: tuple = ()
    """``(file name, text)`` of each hidden test of the code parts (the key folder's ``hidden/test_*.py``)."""

    @classmethod
    def from_dir(cls, key_dir: str) -> KeyData:
        """Read ``exercise_key.py`` and the hidden tests from the key folder (the grader's machine only)."""
        with open(os.path.join(key_dir, KEY_MODULE), encoding="utf-8") as handle:
            source = handle.read()
        hidden = []
        folder = os.path.join(key_dir, HIDDEN_DIR)
        for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else ():
            if name.startswith("test_") and name.endswith(".py"):
                with open(os.path.join(folder, name), encoding="utf-8") as handle:
                    hidden.append((name, handle.read()))
        digest = hashlib.sha256("\0".join([source] + [f"{n}\0{t}" for n, t in hidden]).encode()).hexdigest()
        return cls(source, digest, tuple(hidden))


@dataclass(frozen=True)
class GradeSettings:
    """How each notebook's sandbox is set up, the same on every machine."""

    backend: str = "auto"
    """Sandbox backend (``auto``, ``local`` or ``docker``), resolved on the machine that grades."""
    timeout_s: float = 120.0
    """Wall-clock budget of one notebook, seconds."""
    memory_mb: int = 4096
    """Address-space limit of the notebook's process, MiB."""
    hide: tuple = ()
    """The grader's folders (key, submissions) hidden from each sandbox wherever they exist on that machine."""


@dataclass(frozen=True)
class NotebookJob:
    """One admitted notebook: what the grader parsed, nothing read again on the worker."""

    index: int
    """Position of the notebook in the grader's list (results are matched back by it)."""
    path: str
    """The submission's path on the grader's machine (a label only; never opened on the worker)."""
    exercise: str
    """The exercise the notebook answers (``ex1`` ...)."""
    cells: tuple
    """``(cell number, source)`` of each code cell, in order."""


def key_module(key: KeyData):
    """The key module loaded from ``key.source`` in this process (once per digest; never from a file)."""
    with _KEYS_LOCK:
        module = _KEYS.get(key.digest)
        if module is None:
            module = types.ModuleType(KEY_MODULE_NAME)
            module.__file__ = f"<exercise key {key.digest[:12]}>"
            previous = sys.modules.get(KEY_MODULE_NAME)
            sys.modules[KEY_MODULE_NAME] = module
            try:
                exec(compile(key.source, module.__file__, "exec"), module.__dict__)
            except BaseException:
                if previous is None:
                    sys.modules.pop(KEY_MODULE_NAME, None)
                else:
                    sys.modules[KEY_MODULE_NAME] = previous
                raise
            _KEYS[key.digest] = module
    return module


def remember_key(key: KeyData, module) -> None:
    """Use ``module`` (already loaded from the same text) for ``key`` in this process."""
    with _KEYS_LOCK:
        _KEYS.setdefault(key.digest, module)


def answer_names(module, exercise: str) -> list:
    """Variables whose final values the parts of ``exercise`` are scored on."""
    return [n for pid, part in module.PARTS.items() if pid.startswith(exercise + ".") for n in part.names]


def score_parts(key_module, exercise: str, run, stopped: str) -> dict:
    """Score every part of ``exercise`` from a run's final values (``run`` None: nothing ran)."""
    PARTS, verify = key_module.PARTS, key_module.verify
    values = run.values if run is not None else {}
    evidence = run.evidence if run is not None else []
    out = {}
    for part_id, part in PARTS.items():
        if not part_id.startswith(exercise + "."):
            continue
        entry = {"score": 0, "max": 1, "title": part.title}
        given = {name: values.get(name) for name in part.names}
        unanswered = all(v is None for v in given.values())
        try:
            problems = verify(part_id, given)
        except Exception as exc:  # a value the key cannot handle is a wrong answer, not a crash
            problems = [f"the key could not evaluate the values ({type(exc).__name__})"]
        if not problems:
            entry.update(score=1, status="correct", detail="")
        elif evidence:
            entry.update(status="tampered", detail="; ".join(evidence[:3])[:400])
        elif unanswered and stopped:
            entry.update(status="not run", detail=stopped)
        else:
            entry.update(status="unanswered" if unanswered else "wrong", detail=" ".join(problems)[:600])
        out[part_id] = entry
    for part_id, (part, _) in getattr(key_module, "CODE_PARTS", {}).items():  # graded by the verifier, if it runs
        if part_id.startswith(exercise + "."):
            out[part_id] = {
                "score": 0,
                "max": 1,
                "title": part.title,
                "status": "not run",
                "detail": stopped or "not graded",
            }
    return out


def local_node() -> str:
    """How a report names this machine when no engine names it."""
    return socket.gethostname()


class GradingSlot:
    """A warm sandbox slot and the key on one machine, reused for one notebook after another.

    Opening a slot starts the sandbox machinery (a zygote, a staged copy of ``rlvr_lab``); each notebook
    still runs in a fresh sandbox of its own. A slot serves one notebook at a time.
    """

    def __init__(self, key: KeyData, settings: GradeSettings, node: str = "", prefix: str = "rlvr-grade-"):
        from rlvr_lab.grading.notebook_sandbox import NotebookRunner, SandboxConfig

        self.key, self.settings, self.node = key, settings, node or local_node()
        self.module = key_module(key)
        self._verifier = None
        self.scratch = tempfile.mkdtemp(prefix=prefix)
        config = SandboxConfig(
            backend=settings.backend, timeout_s=float(settings.timeout_s), memory_mb=settings.memory_mb
        )
        hide = tuple(p for p in settings.hide if os.path.isdir(p))  # the grader's folders present here
        try:
            self.runner = NotebookRunner(Path(self.scratch) / "slot", config, hide=hide)
        except BaseException:
            shutil.rmtree(self.scratch, ignore_errors=True)
            raise

    def verifier(self):
        """This slot's verifier for code parts (exercise 9), started on first use, closed with the slot."""
        if self._verifier is None:
            from rlvr_lab.verifier import Verifier

            self._verifier = Verifier(backend=self.settings.backend)
        return self._verifier

    @property
    def sandbox(self) -> str:
        """The backend this slot's sandboxes run on (``local``, ``local-userns``, ``docker``)."""
        return self.runner.backend.name

    def close(self) -> None:
        try:
            self.runner.close()
            if self._verifier is not None:
                self._verifier.close()
        finally:
            shutil.rmtree(self.scratch, ignore_errors=True)


def grade_notebook(
    job: NotebookJob, key: KeyData, settings: GradeSettings, slot: GradingSlot | None = None, node: str = ""
) -> dict:
    """Run ``job`` in a fresh sandbox and score it: plain data in, a plain dict out.

    ``slot``: a warm :class:`GradingSlot` for the same key and settings (None: one is opened for this
    notebook and closed after). Raises :class:`~rlvr_lab.sandbox.backend.SandboxUnavailable` where no
    sandbox can start on this machine; the caller reports that notebook as ``infra``.
    """
    own = slot is None
    if own:
        slot = GradingSlot(key, settings, node)
    try:
        names = answer_names(slot.module, job.exercise)
        run = slot.runner.run([src for _, src in job.cells], names, [n for n, _ in job.cells])
        stopped = run.reason if run.outcome != "completed" else ""
        parts = score_parts(slot.module, job.exercise, run, stopped)
        parts.update(
            score_code_parts(slot.module, job.exercise, [src for _, src in job.cells], dict(key.hidden), slot.verifier)
        )
        code_s = sum(e["verdict"]["seconds"] for e in parts.values() if "verdict" in e)
        return {
            "outcome": run.outcome,
            "reason": run.reason,
            "runtime_s": run.runtime_s,
            "code_s": round(code_s, 3),
            "tampering": list(run.evidence),
            "cells_run": run.cells_run,
            "cell_errors": list(run.errors),
            "parts": parts,
            "node": slot.node,
            "sandbox": slot.sandbox,
        }
    finally:
        if own:
            slot.close()
