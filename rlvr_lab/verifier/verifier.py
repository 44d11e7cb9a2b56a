"""The verifier: candidate in, verdict with evidence out (section 17.7, the four-verdict rule).

:class:`Verifier` owns one slot: a trusted runner process (:mod:`rlvr_lab.verifier.runner`) started with a
scrubbed environment, which in turn owns the sandbox backend. ``verify`` sends the fixture, the candidate
and K to the runner and turns the reply into a :class:`~rlvr_lab.verifier.schema.Verdict`:

* ``pass``: every one of K trials passed; ``fail``: admission refused the change, or a trial was
  rejected (tests failed, timeout, limit breach, candidate crash);
* ``pending``: an infrastructure fault (the runner or the sandbox died, a report was lost) on the last
  attempt while the caller may still retry (``retries=0``);
* ``unknown``: infrastructure faults on every one of ``1 + retries`` attempts.

Nothing defaults to ``pass``: a missing or unreadable reply is an infrastructure fault, never a verdict.
The verdict's evidence names the candidate digest, fixture and checker versions, the backend, each
trial's outcome, duration, seed and reason, the stop reason and the attempts used.
"""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from rlvr_lab.verifier import wire
from rlvr_lab.sandbox.backend import SandboxUnavailable
from rlvr_lab.sandbox.factory import resolve_backend
from rlvr_lab.verifier.wire import RunnerFailed, RunnerReady, VerifyReply, VerifyRequest
from rlvr_lab.verifier.schema import Candidate, Fixture, Verdict
from rlvr_lab.verifier.trials import check_trials

#: Directory holding the ``rlvr_lab`` package (put first on the runner's ``sys.path``).
_PACKAGE_ROOT = Path(__file__).resolve().parents[2]
#: Seconds allowed for a runner process to start (pytest import, zygote start).
START_TIMEOUT_S = 60.0


def _runner_env() -> dict[str, str]:
    """The runner's environment: only what it needs; nothing that steers pytest or Python.

    >>> sorted(k for k in _runner_env() if k.startswith("PYTEST"))
    ['PYTEST_DISABLE_PLUGIN_AUTOLOAD']
    """
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "PYTHONHASHSEED": "0",
    }
    for key in ("DOCKER_HOST", "DOCKER_CERT_PATH", "DOCKER_TLS_VERIFY", "TMPDIR"):
        if key in os.environ:
            env[key] = os.environ[key]
    return env


#: Values of ``Verifier(test_runner=...)``.
TEST_RUNNERS = ("auto", "pytest")


#: Memory-backed directory preferred for a slot's scratch (graded copies, hidden tests), when writable.
RAM_DIR = "/dev/shm"


def scratch_root() -> str | None:
    """Where a slot keeps its graded copies and hidden tests: :data:`RAM_DIR` when it is a writable tmpfs
    (every verification writes and removes a directory there: microseconds in memory against a fraction of
    a millisecond on a disk), else the default temporary directory (None)."""
    try:
        with open("/proc/mounts") as mounts:
            ram = any(line.split()[1:3] == [RAM_DIR, "tmpfs"] for line in mounts)
    except OSError:
        return None
    return RAM_DIR if ram and os.access(RAM_DIR, os.W_OK | os.X_OK) else None


def usable_cpus() -> list[int]:
    """The CPUs this process may run on (all of them where affinity is not supported)."""
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return list(range(os.cpu_count() or 1))


#: Backends ``backend="auto"`` has already named in this process (one line each, not one per slot).
ANNOUNCED: set[str] = set()


def announce(name: str, isolation: tuple[str, ...]) -> None:
    """Print, once per process and backend, which backend ``auto`` chose and its isolation layers."""
    if name not in ANNOUNCED:
        ANNOUNCED.add(name)
        weaker = "" if name.startswith("local") else " (weaker: no namespaces)"
        print(
            f"rlvr-lab verifier: backend auto -> {name}{weaker}; isolation: {', '.join(isolation)}",
            file=sys.stderr,
            flush=True,
        )


class Verifier:
    """Sandboxed verification of candidates against fixtures (one slot; see the module docstring).

    ``backend``: ``"local"`` (namespaces, default; as root or in a user namespace), ``"process"`` (the
    weaker backend without namespaces), ``"docker"``, or ``"auto"``: the strongest of local and process
    that works here, named in one printed line (:data:`ANNOUNCED`) and in every verdict. An unavailable
    backend raises :class:`~rlvr_lab.sandbox.backend.SandboxUnavailable` here, naming why. ``retries``: extra attempts
    after an infrastructure fault (0 returns ``pending`` at once). ``seed``: base seed of the trial seeds
    (None draws one per verification). ``test_runner``: ``"auto"`` runs hidden tests that are plain test
    functions without pytest's machinery (:mod:`~rlvr_lab.verifier.direct`; same verdicts, a fraction
    of the cost) and everything else under pytest; ``"pytest"`` runs every fixture under pytest. Each
    verdict says which ran (``Verdict.test_runner``). ``cpus``: run this slot (runner, zygote, sandboxes)
    on those CPUs only (:class:`~rlvr_lab.verifier.pool.VerifierPool` gives each slot CPUs of its own
    when there are enough). Not safe for concurrent ``verify`` calls from several threads (calls are serialized by a
    lock); use :class:`~rlvr_lab.verifier.pool.VerifierPool` for parallelism.
    """

    def __init__(
        self,
        backend: str = "local",
        retries: int = 1,
        seed: int | None = None,
        work_dir: str | os.PathLike | None = None,
        test_runner: str = "auto",
        cpus: tuple[int, ...] | None = None,
    ):
        requested = backend
        if test_runner not in TEST_RUNNERS:
            raise ValueError(f"test_runner must be one of {TEST_RUNNERS}, got {test_runner!r}")
        if cpus is not None:
            cpus = tuple(cpus)
            if not cpus or any(isinstance(c, bool) or not isinstance(c, int) or c not in usable_cpus() for c in cpus):
                raise ValueError(f"cpus must be some of this process's CPUs {usable_cpus()}, got {cpus!r}")
        self.test_runner = test_runner
        self.cpus = cpus
        """The CPUs this slot runs on (runner, zygote and sandboxes), or None: wherever the scheduler likes."""
        backend = resolve_backend(backend)  # ValueError for an unknown name
        if isinstance(retries, bool) or not isinstance(retries, int) or not 0 <= retries <= 10:
            raise ValueError(f"retries must be an integer in [0, 10], got {retries!r}")
        if backend == "local":
            from rlvr_lab.sandbox.local import check_available

            check_available()
        self.backend = backend
        self.isolation: tuple[str, ...] = ()
        """Isolation layers the backend has in force (also in every verdict)."""
        self.retries = retries
        self.seed = seed
        self._owns_dir = work_dir is None
        self.slot_dir = Path(
            # an ordinary name: the sandbox's /proc/self/mountinfo shows where its graded copy lives
            tempfile.mkdtemp(dir=scratch_root()) if work_dir is None else work_dir
        )
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._backend_name = backend
        self._calls = 0
        self.sandbox_uid: int | None = None
        """The slot's unprivileged uid on the local backend (None for other backends)."""
        self._start()
        if requested == "auto":
            announce(self._backend_name, self.isolation)

    # -- runner process ------------------------------------------------------------------------------
    def _start(self) -> None:
        # -I: no PYTHONPATH, no user site, no current directory; the package's own location is put
        # back explicitly so that an uninstalled checkout works too.
        bootstrap = (
            f"import sys; sys.path.insert(0, {str(_PACKAGE_ROOT)!r}); "
            "from rlvr_lab.verifier.runner import main; sys.exit(main())"
        )
        self._proc = subprocess.Popen(
            [sys.executable, "-I", "-B", "-c", bootstrap, self.backend, str(self.slot_dir / "run")]
            + ([] if self.cpus is None else [",".join(map(str, self.cpus))]),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=_runner_env(),
            cwd="/",
        )
        reply = self._read(time.monotonic() + START_TIMEOUT_S)
        if not isinstance(reply, RunnerReady):
            self._stop()
            error = "the runner process did not start" if reply is None else getattr(reply, "error", repr(reply))
            if isinstance(reply, RunnerFailed) and reply.kind == "unavailable":
                raise SandboxUnavailable(error)
            raise RuntimeError(f"verifier runner failed to start: {error}")
        self._backend_name = reply.backend
        self.isolation = reply.isolation
        self.sandbox_uid = reply.uid

    def _read(self, deadline: float) -> object | None:
        """The runner's next message, or None if it closed, broke the frame or missed ``deadline``."""
        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
            return None
        try:
            return wire.recv_message(fd)
        except (EOFError, OSError, ValueError):
            return None

    def _stop(self) -> None:
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.kill()
            self._proc.wait()
            for stream in (self._proc.stdin, self._proc.stdout):
                if stream is not None:
                    stream.close()
            self._proc = None

    @property
    def runner_pid(self) -> int | None:
        """PID of the trusted runner process (tests use it to simulate infrastructure faults)."""
        return None if self._proc is None else self._proc.pid

    # -- verification --------------------------------------------------------------------------------
    def _attempt(self, fixture: Fixture, candidate: Candidate, k: int, seed: int) -> VerifyReply:
        if self._proc is None or self._proc.poll() is not None:
            self._stop()
            self._start()
        assert self._proc is not None and self._proc.stdin is not None
        try:
            wire.send_message(
                self._proc.stdin.fileno(), VerifyRequest(fixture, candidate, k, seed, direct=self.test_runner == "auto")
            )
        except OSError as exc:
            self._stop()
            return wire.pending(f"runner unreachable: {exc}")
        budget = wire.verify_budget_s(k, fixture.limits.wall_s)
        reply = self._read(time.monotonic() + budget)
        if reply is None:
            self._stop()
            return wire.pending("runner died or did not answer")
        if isinstance(reply, RunnerFailed):
            if reply.kind == "unavailable":
                raise SandboxUnavailable(reply.error)
            if reply.kind == "value":
                raise ValueError(reply.error)
            return wire.pending(f"runner error: {reply.error}")
        if not isinstance(reply, VerifyReply):
            self._stop()
            return wire.pending(f"runner sent {type(reply).__name__}, not a VerifyReply")
        self._backend_name = reply.backend or self._backend_name
        return reply

    def verify(self, candidate: Candidate, fixture: Fixture, trials: int | None = None) -> Verdict:
        """Verify ``candidate`` against ``fixture`` with K = ``trials`` (None: ``fixture.trials``)."""
        if not isinstance(candidate, Candidate):
            raise ValueError(f"candidate must be a Candidate, got {type(candidate).__name__}")
        if not isinstance(fixture, Fixture):
            raise ValueError(f"fixture must be a Fixture, got {type(fixture).__name__}")
        k = check_trials(fixture.trials if trials is None else trials)
        with self._lock:
            self._calls += 1
            base_seed = self.seed + self._calls if self.seed is not None else int.from_bytes(os.urandom(4), "big")
            reply = wire.pending("not attempted")
            attempts = 0
            for attempts in range(1, self.retries + 2):
                reply = self._attempt(fixture, candidate, k, base_seed + 7919 * (attempts - 1))
                if reply.outcome != "pending":
                    break
            outcome = reply.outcome
            if outcome == "pending" and self.retries > 0:
                outcome = "unknown"
            return Verdict(
                outcome=outcome,
                candidate_digest=candidate.digest,
                fixture=fixture.name,
                fixture_version=fixture.version,
                checker_version=fixture.checker_version,
                backend=self._backend_name,
                trials=reply.trials,
                stop_reason=reply.stop_reason,
                attempts=attempts,
                isolation=self.isolation,
                test_runner=reply.test_runner if reply.trials else "",
            )

    def close(self) -> None:
        """Stop the runner (and with it the sandbox helpers); remove the scratch directory."""
        with self._lock:
            if self._proc is not None and self._proc.stdin is not None:
                try:
                    self._proc.stdin.close()
                    self._proc.wait(timeout=10)
                except (OSError, subprocess.TimeoutExpired):
                    pass
            self._stop()
            if self._owns_dir:
                shutil.rmtree(self.slot_dir, ignore_errors=True)

    def __enter__(self) -> Verifier:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            if self._proc is not None:
                self.close()
        except Exception:
            pass
