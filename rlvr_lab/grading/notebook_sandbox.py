"""Each submitted notebook run in a sandbox of its own, its report read as plain data (section 17.14 over 17.7).

The grader's side of the boundary: per notebook, the verifier's sandbox (own namespaces, an unprivileged
uid, rlimits, a SIGKILL deadline), a fresh read-only workspace holding only its code cells, a private
``/tmp``, the grader's folders hidden, no environment from the grader, and a *staged copy* of ``rlvr_lab``
without this package (:func:`stage_library`: hidden by folder, so no grading module is ever visible to a
submission). Inside, :mod:`rlvr_lab.grading.notebook_executor` runs the cells and writes one frame per
cell on a socket the grader holds; :class:`NotebookRunner` reads them strictly, with its own deadline.
"""

from __future__ import annotations

import json
import math
import os
import select
import shutil
import struct
import sys
import time
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from pathlib import Path

from rlvr_lab.sandbox.backend import BACKENDS, SandboxFault, SandboxUnavailable
from rlvr_lab.sandbox.clock import STRETCH_MAX
from rlvr_lab.sandbox.factory import make_backend
from rlvr_lab.verifier.schema import Limits
from rlvr_lab.verifier.wire import trial_budget_s

#: Folders of ``rlvr_lab`` never shown to a submission, at any depth: this package (the grader, the key's
#: loader, and any module it gains) and the fixtures (hidden tests, reference patches).
HIDDEN_FOLDERS = ("grading", "fixtures")
#: Names never shown to a submission, at any depth.
HIDDEN_NAMES = ("exercise_key.py", "__pycache__")
#: Largest frame the grader accepts from a sandbox, bytes.
MAX_FRAME = 1 << 20
#: Seconds to wait after the channel closed unexpectedly, so the sandbox's init can report why.
EXIT_GRACE_S = 1.0
#: Cells with an error kept in a run's record (the count of all errors is kept too).
ERRORS_KEPT = 20
_HERE = Path(__file__).resolve().parent
#: The package a notebook imports, staged (:func:`stage_library`).
LIBRARY = _HERE.parent
#: File name of the executor, staged beside the package (not inside it) and run by path.
EXECUTOR = "notebook_executor.py"
#: The executor on the host: the sandbox's server (the zygote loads it by path).
EXECUTOR_PATH = str(_HERE / EXECUTOR)


@dataclass(frozen=True)
class SandboxConfig:
    """Resources of one notebook's sandbox."""

    backend: str = "local"
    """Sandbox backend by name (see :data:`rlvr_lab.sandbox.backend.BACKENDS`)."""
    timeout_s: float = 120.0
    """Wall-clock budget of one notebook, seconds (interpreter start included); then SIGKILL."""
    memory_mb: int = 4096
    """Address-space limit of the notebook's process, MiB."""
    processes: int = 64
    """Most processes and threads the notebook may hold at once."""
    file_mb: int = 16
    """Largest file the notebook may write (its private /tmp holds at most twice this, up to 64 MiB)."""
    output_kb: int = 1024
    """Cap on raw stdout/stderr bytes that bypass the executor's capture, KiB."""

    def limits(self) -> Limits:
        """The sandbox limits. The CPU limit sits above the longest stretched deadline, so that a notebook
        that loops on a busy host still ends as ``timeout`` (the wall clock) and not as ``died``."""
        cpu_s = max(1, math.ceil(STRETCH_MAX * self.timeout_s) + 1)
        return Limits(
            wall_s=self.timeout_s,
            cpu_s=cpu_s,
            memory_mb=self.memory_mb,
            processes=self.processes,
            file_mb=self.file_mb,
            open_files=256,
            output_kb=self.output_kb,
        )


@dataclass
class RunResult:
    """What one sandboxed run of a notebook produced (plain data, decoded)."""

    outcome: str = "completed"
    """``completed``, ``timeout``, ``died``, ``output_cap``, ``protocol`` or ``infra``."""
    reason: str = ""
    """Why the run ended early, naming the cell (empty when it completed)."""
    stopped_at: int | None = None
    """Position (0-based, among the code cells) of the cell that was running when it ended early."""
    values: dict = field(default_factory=dict)
    """Answer name -> decoded value after the last cell that finished."""
    evidence: list = field(default_factory=list)
    """Tampering evidence: grading machinery a cell replaced, forged frames (with the cell)."""
    cells_run: int = 0
    """Code cells that finished (with or without an error)."""
    errors: list = field(default_factory=list)
    """``{"cell", "error", "out"}`` of the first :data:`ERRORS_KEPT` cells that raised."""
    runtime_s: float = 0.0
    """Wall-clock seconds from launch to the end of the sandbox."""
    output: str = ""
    """The last raw stdout/stderr of the sandbox when it died (bounded): the interpreter's own error."""


def stage_library(dest: str, source: Path = LIBRARY) -> str:
    """Copy the ``source`` package (``rlvr_lab``) into ``dest`` without :data:`HIDDEN_FOLDERS` and
    :data:`HIDDEN_NAMES`, and its executor beside it, all read-only; return ``dest`` (for sys.path)."""
    source = Path(source)
    target = os.path.join(dest, source.name)
    shutil.copytree(
        source,
        target,
        ignore=lambda folder, names: [
            n for n in names if n in HIDDEN_FOLDERS or n in HIDDEN_NAMES or n.endswith(".pyc")
        ],
    )
    shutil.copyfile(source / "grading" / EXECUTOR, os.path.join(dest, EXECUTOR))
    for root, _dirs, files in os.walk(dest):
        os.chmod(root, 0o755)
        for name in files:
            os.chmod(os.path.join(root, name), 0o644)
    return dest


class _Unsupported:
    """Stands for a value of a type the grader does not accept; its type name is shown in hints."""


def _unsupported(type_name: str):
    safe = "".join(ch for ch in str(type_name) if ch.isalnum() or ch == "_")[:60] or "object"
    return type(safe, (_Unsupported,), {})()


def decode(tree, depth: int = 0):
    """A value the executor reported -> the Python value the key compares (strictly; else unsupported).

    >>> decode([1, {"$fraction": "1/3"}, {"$decimal": "0.5"}, {"$tuple": [True]}])
    [1, Fraction(1, 3), Decimal('0.5'), (True,)]
    >>> type(decode({"$fraction": "1/0"})).__name__, decode({"$missing": True}) is None
    ('fraction', True)
    """
    if tree is None or type(tree) in (bool, int, float, str):
        return tree
    if type(tree) is list and depth < 3:
        return [decode(v, depth + 1) for v in tree]
    if type(tree) is dict and len(tree) == 1:
        ((tag, body),) = tree.items()
        try:
            if tag == "$missing":
                return None
            if tag == "$tuple" and type(body) is list and depth < 3:
                return tuple(decode(v, depth + 1) for v in body)
            if tag == "$fraction" and type(body) is str and len(body) < 2500:
                num, den = body.split("/")
                return Fraction(int(num), int(den))
            if tag == "$decimal" and type(body) is str:
                return Decimal(body)
            if tag == "$float" and body in ("nan", "inf", "-inf"):
                return float(body)
            if tag == "$unsupported":
                return _unsupported(body)
        except (ValueError, ZeroDivisionError, InvalidOperation):
            return _unsupported(tag.strip("$"))
    return _unsupported("unknown")


def _environment_dirs() -> tuple:
    """The course's Python environment: this prefix and every package folder on the path (a ``.pth`` may
    add one outside the prefix), shown read-only in each sandbox."""
    dirs = {sys.prefix} | {
        p for p in sys.path if p and os.path.basename(p) in ("site-packages", "dist-packages") and os.path.isdir(p)
    }
    return tuple(sorted(os.path.realpath(p) for p in dirs))


def _local_backend(slot: Path, hide: tuple):
    backend = make_backend("local", slot, EXECUTOR_PATH, hide=hide, keep=_environment_dirs(), shared=("lib",))
    # the staged package lives in the slot's workspace root, shown read-only in every sandbox
    stage_library(str(Path(backend.workspace_root) / "lib"))
    return backend, {"python": sys.executable, "lib": f"{backend.sandbox_root}/lib", "site": []}


def _docker_backend(slot: Path):
    import sysconfig

    from rlvr_lab.sandbox.docker_image import PY_PREFIX

    slot.mkdir(parents=True, exist_ok=True)
    stage_library(str(slot / "lib"))
    site = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
    binds = {str(slot / "lib"): "/opt/rlvr-lib", **{p: f"/opt/site{i}" for i, p in enumerate(site)}}
    # the image holds the interpreter's own libraries only; compiled packages (numpy: libstdc++) need
    # the host's shared libraries, shown read-only after the image's on the library path
    host_libs = [
        p for p in (f"/usr/lib/{sysconfig.get_config_var('MULTIARCH') or 'x86_64-linux-gnu'}",) if os.path.isdir(p)
    ]
    binds.update({p: f"/opt/hostlib{i}" for i, p in enumerate(host_libs)})
    backend = make_backend("docker", slot, EXECUTOR_PATH, binds=binds)
    return backend, {
        "python": f"{PY_PREFIX}/bin/python3",
        "lib": "/opt/rlvr-lib",
        "site": [f"/opt/site{i}" for i in range(len(site))],
        "ld_path": [f"/opt/hostlib{i}" for i in range(len(host_libs))],
    }


def _make_backend(name: str, slot: Path, hide: tuple):
    """``(backend, launch record)`` for backend ``name``, each built by the one factory
    (:func:`rlvr_lab.sandbox.factory.make_backend`) with the grader's own policy on top.

    ``auto`` takes the local backend (as root, or in an unprivileged user namespace), else docker. The
    verifier's weaker ``process`` backend is refused: without namespaces a notebook would run in the
    grader's own file system view, so nothing would hide the key or the other submissions from it.
    """
    if name not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {name!r}")
    if name == "process":
        raise SandboxUnavailable(
            "grading does not use the process backend: it cannot hide the key and the "
            "other submissions from a notebook; use local (root or user namespaces) or docker"
        )
    if name == "docker":
        return _docker_backend(slot)
    try:
        return _local_backend(slot, hide)
    except SandboxUnavailable as local_error:
        if name != "auto":
            raise
        try:
            return _docker_backend(slot)
        except SandboxUnavailable as docker_error:
            raise SandboxUnavailable(f"no sandbox backend here: local: {local_error}; docker: {docker_error}") from None


class NotebookRunner:
    """One grading worker: a sandbox slot that runs one notebook at a time."""

    def __init__(self, slot: Path, config: SandboxConfig, hide: tuple = ()):
        self.config = config
        self.backend, self.launch_record = _make_backend(config.backend, Path(slot), tuple(hide))
        self.count = 0

    def close(self) -> None:
        self.backend.close()

    def run(self, cells: list, names: list, labels: list | None = None) -> RunResult:
        """Execute ``cells`` (code sources, in order) in a fresh sandbox; report values of ``names``.

        ``labels[i]`` is how reasons name code cell ``i`` (the notebook's cell number; default i + 1).
        """
        self._labels = labels or list(range(1, len(cells) + 1))
        for _attempt in range(2):
            result = self._run_once(cells, names)
            if result.outcome != "infra" or result.cells_run:
                return result
        return result

    def _workspace(self, cells: list, names: list) -> Path:
        self.count += 1
        ws = Path(self.backend.workspace_root) / f"nb{self.count}"
        shutil.rmtree(ws, ignore_errors=True)
        ws.mkdir(mode=0o755)
        run = dict(self.launch_record, executor=f"{self.launch_record['lib']}/{EXECUTOR}")
        for name, data in (("cells.json", {"cells": cells, "names": names}), ("run.json", run)):
            with open(ws / name, "w", encoding="utf-8") as handle:
                json.dump(data, handle)
            os.chmod(ws / name, 0o644)
        os.chmod(ws, 0o755)
        return ws

    def _run_once(self, cells: list, names: list) -> RunResult:
        result = RunResult()
        ws = self._workspace(cells, names)
        started = time.monotonic()
        try:
            session = self.backend.launch(ws, self.config.limits(), seed=self.count)
        except (SandboxFault, OSError) as exc:
            shutil.rmtree(ws, ignore_errors=True)
            return RunResult(outcome="infra", reason=f"the sandbox could not start: {exc}"[:300])
        deadline = started + trial_budget_s(self.config.timeout_s)  # the zygote may stretch timeout_s
        done = self._read(session.channel, deadline, cells, names, result)
        if done is False and result.outcome == "completed":
            time.sleep(EXIT_GRACE_S)  # the channel closed first: let the sandbox's init record why it ended
        ending = session.kill()
        result.runtime_s = round(time.monotonic() - started, 3)
        shutil.rmtree(ws, ignore_errors=True)
        if done or result.outcome in ("output_cap", "protocol"):
            return result
        where = f"in cell {self._label(result.cells_run)}" if result.cells_run < len(cells) else "after the last cell"
        result.stopped_at = result.cells_run if result.cells_run < len(cells) else None
        if done is None or ending.kind == "timeout":
            result.outcome, result.reason = "timeout", f"timed out {where} (budget {self.config.timeout_s:g} s)"
        elif ending.kind == "output_cap":
            result.outcome, result.reason = "output_cap", f"printed more than the output cap {where}"
        elif ending.kind == "infra" and not result.cells_run:
            result.outcome, result.reason = "infra", f"sandbox failure: {ending.detail}"[:300]
        else:
            result.outcome, result.reason = "died", f"the kernel died {where} ({ending.detail or ending.kind})"[:300]
            result.output = ending.output[-1000:]
        return result

    def _read(self, channel, deadline: float, cells: list, names: list, result: RunResult):
        """Read frames until ``done`` (True), the end of the stream (False) or the deadline (None)."""
        buffer = bytearray()
        fd = channel.fileno()
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], min(remaining, 1.0))
            if not ready:
                continue
            try:
                data = channel.recv(1 << 16)
            except OSError:
                data = b""
            if not data:
                return False
            buffer += data
            while len(buffer) >= 4:
                (size,) = struct.unpack(">I", buffer[:4])
                if size > MAX_FRAME:
                    return self._violation(result, f"a frame of {size} bytes on the grading channel")
                if len(buffer) < 4 + size:
                    break
                raw, buffer = bytes(buffer[4 : 4 + size]), buffer[4 + size :]
                verdict = self._frame(raw, cells, names, result)
                if verdict is not None:
                    return verdict

    def _label(self, index: int):
        return self._labels[index] if index < len(self._labels) else index + 1

    @staticmethod
    def _violation(result: RunResult, what: str) -> bool:
        result.outcome = "protocol"
        result.reason = f"broke the grading protocol after cell {result.cells_run}: {what}"[:300]
        result.evidence.append(f"forged or malformed frame on the grading channel: {what}"[:300])
        return False

    def _frame(self, raw: bytes, cells: list, names: list, result: RunResult):
        try:
            frame = json.loads(raw.decode("ascii"))
        except ValueError:
            return self._violation(result, "not JSON")
        kind = frame.get("t") if type(frame) is dict else None
        if kind == "ready":
            return None
        if kind == "done":
            return True if result.cells_run == len(cells) else self._violation(result, "early 'done'")
        if kind == "output_cap":
            result.outcome = "output_cap"
            result.reason = f"printed more than the output cap in cell {self._label(result.cells_run)}"
            result.stopped_at = result.cells_run
            return False
        if kind != "cell" or frame.get("i") != result.cells_run or type(frame.get("values")) is not dict:
            return self._violation(result, f"unexpected frame {str(frame)[:80]!r}")
        index = result.cells_run
        result.cells_run += 1
        values = frame["values"]
        result.values = {name: decode(values.get(name, {"$missing": True})) for name in names}
        evidence = frame.get("evidence")
        if type(evidence) is list:
            result.evidence += [f"cell {self._label(index)}: {str(e)[:200]}" for e in evidence[:20]]
        error = frame.get("error")
        if error is not None and len(result.errors) < ERRORS_KEPT:
            result.errors.append(
                {"cell": self._label(index), "error": str(error)[:300], "out": str(frame.get("out", ""))[-600:]}
            )
        return None
