"""Plain data that crosses the verifier boundary (section 17.7, table 7).

A :class:`Fixture` is a task frozen at a base revision: its source tree, the public tests a policy may
see, the hidden acceptance tests it never sees, the paths a candidate may change, resource limits
(:class:`~rlvr_lab.sandbox.backend.Limits`, re-exported here) and the trial policy K. A
:class:`Candidate` is untrusted material: a set of changed files, captured as a change against the
fixture's base revision. A :class:`Verdict` is one of four outcomes with its evidence.

These are frozen dataclasses of plain values so that they can be pickled to worker processes, written to
JSON Lines rollout records, and compared in tests.
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import asdict, dataclass, field
from collections.abc import Mapping

from rlvr_lab.sandbox.backend import Limits

__all__ = ["VERDICTS", "Limits", "Fixture", "Candidate", "TrialResult", "Verdict"]

#: The four-verdict rule (section 17.7): only ``pass`` earns reward. ``pending`` is an infrastructure
#: fault that may be retried; ``unknown`` means retries were exhausted. Neither is ever coerced to 0 or 1.
VERDICTS = ("pass", "fail", "pending", "unknown")


@dataclass(frozen=True)
class Fixture:
    """A task fixture at a fixed base revision (section 17.9.1). All paths are POSIX, relative."""

    name: str
    """Stable identifier, e.g. ``pool_repair_01``."""
    version: str
    """Fixture version recorded in every verdict, e.g. ``pool_fixture_v1``."""
    files: Mapping[str, str]
    """Base revision source tree the candidate starts from: relative path -> text."""
    hidden_tests: Mapping[str, str]
    """Acceptance tests the candidate never sees (relative path -> text), run by the trusted runner."""
    public_tests: Mapping[str, str] = field(default_factory=dict)
    """Tests a policy may see and run in its exploration workspace."""
    allowed_paths: tuple[str, ...] = ()
    """Glob patterns (fnmatch) of the paths a candidate may change; anything else is refused at admission."""
    modules: tuple[str, ...] = ()
    """Top-level module names the hidden tests import from the candidate; they are served by the proxy."""
    limits: Limits = field(default_factory=Limits)
    """Resource limits of one trial."""
    trials: int = 1
    """K of the all-pass rule: trials per verification, stopping at the first rejection."""
    checker_version: str = "accept_v1"
    """Version of the hidden acceptance suite (e.g. ``repair_accept_v1``), recorded in every verdict."""
    description: str = ""
    """What the task asks, as shown to the policy (prompt material, never the hidden tests)."""
    shared: tuple[str, ...] = ()
    """Test-helper modules (``<name>.py`` among ``hidden_tests``) whose classes cross the proxy by value,
    e.g. a ``ListNode``; the sandbox runs the fixture's copy, never a candidate file of that name
    (:mod:`~rlvr_lab.verifier.proxy.values`)."""

    def __post_init__(self) -> None:
        for name in self.shared:
            if type(name) is not str or not name.isidentifier() or name.startswith("test") or name.endswith("_test"):
                raise ValueError(f"shared must hold module names (identifiers, not test_* or *_test), got {name!r}")
            if name in self.modules or name in sys.stdlib_module_names:
                raise ValueError(f"shared module {name!r} must not be a candidate module or a standard-library name")
            if f"{name}.py" not in self.hidden_tests:
                raise ValueError(f"shared module {name!r} needs {name}.py among the hidden tests")


@dataclass(frozen=True)
class Candidate:
    """An untrusted candidate: the files it changes relative to the fixture's base revision."""

    files: Mapping[str, str]
    """Changed or added files: relative path -> full new text. Deleting a file is not supported."""
    problems: tuple[str, ...] = ()
    """What :func:`~rlvr_lab.verifier.workspace.capture` could not take from the explored tree (a FIFO,
    a symbolic link, a file that is not UTF-8 or too large, ...); a candidate with problems is refused at
    admission (verdict ``fail`` with the first problem as the reason), never an error of the verifier."""

    @property
    def digest(self) -> str:
        """SHA-256 of the canonical JSON of ``files`` (hex); identifies the candidate in evidence."""
        blob = json.dumps(dict(sorted(self.files.items())), sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()


@dataclass(frozen=True)
class TrialResult:
    """One trial of the hidden tests against the candidate."""

    outcome: str
    """``pass``, ``fail`` or ``pending`` (infrastructure fault during this trial)."""
    duration_s: float
    """Wall-clock seconds the trial took."""
    seed: int
    """Seed that ordered the tests in this trial; the hidden tests' and the candidate's RNG seeds are
    derived from it with a secret of the runner (:func:`rlvr_lab.verifier.trials.secret_seed`)."""
    reason: str = ""
    """Why it ended so: e.g. ``tests passed``, ``assertion failed``, ``timeout``, ``memory limit``."""
    detail: str = ""
    """Short excerpt of the runner's report (bounded), for a human reading the evidence."""


@dataclass(frozen=True)
class Verdict:
    """A verdict with its evidence (section 17.7, table 6's assessment status)."""

    outcome: str
    """One of :data:`VERDICTS`."""
    candidate_digest: str
    fixture: str
    fixture_version: str
    checker_version: str
    backend: str
    """``local`` (root: namespaces and a slot uid), ``local-userns`` (namespaces without root), ``process``
    (no namespaces), ``docker`` or ``naive``."""
    trials: tuple[TrialResult, ...] = ()
    stop_reason: str = ""
    """Why verification stopped: ``all trials passed``, ``rejected at trial 2``, ``admission: ...``, ..."""
    attempts: int = 1
    """Infrastructure attempts used (retries after ``pending``)."""
    isolation: tuple[str, ...] = ()
    """Isolation layers the backend had in force (e.g. ``user-ns``, ``slot-uid``, ``landlock-fs``)."""
    node: str = ""
    """Where a fleet verified it (``ip/node-id`` of the Ray node, 17.9.5); empty on a one-machine pool."""
    test_runner: str = ""
    """How the hidden tests ran: ``direct`` (plain test functions called without pytest's machinery,
    :mod:`~rlvr_lab.verifier.direct`) or ``pytest``; empty when no trial ran."""

    def __post_init__(self) -> None:
        if self.outcome not in VERDICTS:
            raise ValueError(f"outcome must be one of {VERDICTS}, got {self.outcome!r}")

    @property
    def resolved(self) -> bool:
        """True for ``pass`` or ``fail``: the only verdicts that may become a reward."""
        return self.outcome in ("pass", "fail")

    @property
    def reward(self) -> float | None:
        """1.0 for pass, 0.0 for fail, None while unresolved (never coerced)."""
        return {"pass": 1.0, "fail": 0.0}.get(self.outcome)

    def to_dict(self) -> dict:
        """Plain JSON-ready dict of the verdict and its evidence."""
        return asdict(self)
