"""The trusted runner: hidden tests in the trusted process, the candidate behind the proxy (section 17.7).

One runner process serves one verifier slot (``python -m rlvr_lab.verifier.runner``, started by
:class:`rlvr_lab.verifier.Verifier` with a scrubbed environment). The candidate's tree is never on
``sys.path`` and never imported here; its code runs only in the sandbox, reached through the proxy.

For each verification the runner admits the candidate (:mod:`~rlvr_lab.verifier.workspace`), writes
base + change into a fresh graded copy under the backend's ``workspace_root``, and runs up to K trials
(:mod:`~rlvr_lab.verifier.trials`). A trial launches a fresh sandbox, binds the proxy for
``fixture.modules`` to it, runs the hidden tests in the trial's seeded order, and judges the record
(:mod:`~rlvr_lab.verifier.judging`). How the hidden tests run is decided once per fixture:

* **direct** (:mod:`~rlvr_lab.verifier.direct`): plain ``def test_*():`` functions are compiled and
  called without pytest's collection and per-test protocol. Pure ones (stateless standard-library
  imports only) run in this process under a watchdog; others in a forked child.
* **pytest**: everything else. pytest is imported and its session started on the first such fixture,
  with everything the candidate could otherwise steer fixed by the runner (``--rootdir``/``-c`` in a
  runner-owned directory hidden from every sandbox, ``--confcutdir``, no plugin autoloading, no cache;
  ``PYTEST_ADDOPTS``/``PYTEST_PLUGINS`` removed; :func:`~.pytest_child.prepare_session`). The runner
  collects the fixture once and each trial forks a child from the prepared process
  (:class:`~rlvr_lab.verifier.pytest_child.TrialProcess`; forked ahead of time, off the trial's path).

The runner then kills the sandbox and decides the trial:

* the sandbox ended from outside, or the test process died, hung or produced no report -> ``pending``;
* the candidate timed out, broke the output cap or another limit, or its process ended -> ``fail``;
* otherwise ``pass`` only if the tests exited cleanly, nothing failed or was skipped, nothing failed to
  collect, and every test function found in the hidden files (by a trusted ``ast`` scan) passed.
"""

from __future__ import annotations

import collections
import hashlib
import json
import os
import socket
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, NamedTuple

from rlvr_lab.sandbox.backend import SandboxBackend, SandboxFault, SandboxUnavailable, SocketChannel
from rlvr_lab.sandbox.factory import make_backend
from rlvr_lab.verifier.direct import CACHED_FILES, direct_refusal, inprocess_refusal
from rlvr_lab.verifier.direct import compiled as direct_compiled
from rlvr_lab.verifier.judging import DETAIL_CHARS, RecordPlugin, expected_tests, judge
from rlvr_lab.verifier.schema import Candidate, Fixture, TrialResult
from rlvr_lab.verifier.proxy import SERVER_PATH
from rlvr_lab.verifier.proxy import imports as proxy_import
from rlvr_lab.verifier import pytest_child
from rlvr_lab.verifier.pytest_child import TrialJob, TrialProcess
from rlvr_lab.verifier import trials as trials_mod
from rlvr_lab.verifier import watch
from rlvr_lab.verifier import workspace
from rlvr_lab.verifier import wire
from rlvr_lab.verifier.wire import RunnerFailed, RunnerReady, VerifyReply, VerifyRequest

#: Environment variables that could steer pytest or Python and are removed from the runner.
SCRUBBED_ENV = (
    "PYTEST_ADDOPTS",
    "PYTEST_PLUGINS",
    "PYTHONPATH",
    "PYTHONSTARTUP",
    "PYTHONHOME",
    "PYTHONUSERBASE",
    "PYTHONINSPECT",
    "PYTHONBREAKPOINT",
    "PYTEST_CURRENT_TEST",
    "PYTEST_DEBUG",
    "PY_COLORS",
    "PYTHONWARNINGS",
)
#: How many prepared hidden-test directories a runner keeps (all of HumanEval's 164 problems fit; the
#: direct path keeps its scans and compiled tests for as many files).
FIXTURE_CACHE = CACHED_FILES


class FixtureEntry(NamedTuple):
    """A fixture's hidden tests as the runner keeps them."""

    directory: Path
    """Runner-owned directory holding the hidden test files (content-addressed)."""
    expected: frozenset[str]
    """Test ids a trusted ``ast`` scan finds (:func:`~rlvr_lab.verifier.judging.expected_tests`)."""
    plain: tuple[str, ...]
    """The hidden files when they are plain tests (:mod:`~rlvr_lab.verifier.direct`), else empty."""
    here: bool
    """Plain tests that the runner may run in its own process, without a fork (pure imports only)."""


class SlotRunner:
    """Runs verifications for one slot: admission, graded copy, trials, each in a fresh sandbox."""

    def __init__(self, backend: str | SandboxBackend, slot_dir: Path):
        self.slot_dir = Path(slot_dir)
        self.slot_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(self.slot_dir, 0o700)
        self.secret = os.urandom(32)  # seeds the hidden tests' randomness; never sent to a sandbox
        self.backend = (
            backend
            if isinstance(backend, SandboxBackend)
            else make_backend(backend, self.slot_dir / "home", SERVER_PATH)
        )
        self._empty_workspace_root()
        self.runner_dir = self.slot_dir / "runner"
        self.runner_dir.mkdir(mode=0o700, exist_ok=True)
        self.tests_root = self.runner_dir / "tests"
        self.tests_root.mkdir(mode=0o700, exist_ok=True)
        ini = self.runner_dir / "pytest.ini"
        ini.write_text("[pytest]\n")
        for name in SCRUBBED_ENV:
            os.environ.pop(name, None)
        os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
        sys.dont_write_bytecode = True
        self.plugin = RecordPlugin()
        self.config: Any = None  # pytest's Config and Session, prepared on the first fixture that needs them
        self.session: Any = None
        self.binding = proxy_import.Binding()
        self.finder = proxy_import.install((), self.binding)
        self._collected: str | None = None  # hidden-test directory whose items the session holds
        self._uncollectable: str | None = None  # hidden-test directory that must be collected per trial
        self._state = 0  # bumped whenever the session's collected items or the proxied modules change
        self._standby: tuple[int, socket.socket, int] | None = None  # (pid, control, state it was forked in)
        self._test_modules: set[str] = set()
        self.fixtures: collections.OrderedDict[str, FixtureEntry] = collections.OrderedDict()
        self._star_names: dict[str, tuple[str, ...] | None] = {}  # test dir -> names a star import binds
        self.counter = 0
        self.last_child_pid: int | None = None
        self._last_here = False  # the last trial ran in this process (no standby needed)

    def _prepare_pytest(self) -> None:
        """Import pytest and start its session once, for the first fixture whose tests need pytest (a
        runner that only ever meets plain tests never pays for it, and forks from a smaller process)."""
        if self.session is None:
            self.config, self.session = pytest_child.prepare_session(self.plugin, self.runner_dir, self.tests_root)
            self._state += 1

    def _empty_workspace_root(self) -> None:
        """Remove every graded copy left under the backend's workspace root (e.g. by a runner that died)."""
        root = Path(self.backend.workspace_root)
        if root.is_dir():
            for entry in os.listdir(root):
                workspace.remove(root / entry)

    # -- hidden tests ------------------------------------------------------------------------------
    def _fixture_dir(self, fixture: Fixture) -> FixtureEntry:
        blob = json.dumps([sorted(fixture.hidden_tests.items()), list(fixture.modules), list(fixture.shared)]).encode()
        key = hashlib.sha256(blob).hexdigest()[:20]
        if key in self.fixtures:
            self.fixtures.move_to_end(key)
            return self.fixtures[key]
        directory = self.tests_root / key
        if not directory.exists():
            tmp = self.tests_root / f".{key}.tmp"
            workspace.remove(tmp)
            tmp.mkdir(mode=0o700)
            for rel, text in fixture.hidden_tests.items():
                problem = workspace.path_error(rel)
                if problem:
                    raise ValueError(f"fixture {fixture.name}: hidden test {problem}")
                target = tmp / rel
                target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
            os.rename(tmp, directory)
        shared_files = {f"{name}.py" for name in fixture.shared}
        plain = not direct_refusal(fixture.hidden_tests, tuple(fixture.shared))
        here = plain and not inprocess_refusal(fixture.hidden_tests, tuple(fixture.modules) + tuple(fixture.shared))
        entry = FixtureEntry(
            directory,
            expected_tests(fixture.hidden_tests),
            tuple(sorted(set(fixture.hidden_tests) - shared_files)) if plain else (),
            here,
        )
        for rel in entry.plain:  # compiled once: trials run here reuse it, processes forked later inherit it
            try:
                direct_compiled(f"{directory}/{rel}", fixture.hidden_tests[rel])
            except (SyntaxError, ValueError):
                pass  # each trial reports it as pytest's collection error
        self.fixtures[key] = entry
        while len(self.fixtures) > FIXTURE_CACHE:
            old, old_entry = self.fixtures.popitem(last=False)
            self._star_names.pop(str(old_entry.directory), None)
            workspace.remove(old_entry.directory)
        return entry

    def _precollect(self, test_dir: Path, modules: tuple[str, ...]) -> bool:
        """Collect ``test_dir`` once in the runner, candidate names late-bound; False if that failed.

        Every trial's fork then only runs the items. A hidden-test file that calls candidate code at
        import time cannot be collected without a sandbox; it falls back to collecting in each fork.
        """
        if self._collected == str(test_dir):
            return True
        if self._uncollectable == str(test_dir):
            return False
        self._prepare_pytest()
        self._drop_collection(modules)
        self.plugin.active_dir = os.path.abspath(test_dir)
        before = set(sys.modules)
        plugin, session = self.plugin, self.session
        plugin.seed, plugin.reports, plugin.collect_errors = 0, [], []
        self.config.args = [str(test_dir)]
        self.binding.star_names = self._star_names.get(str(test_dir))
        try:
            session.perform_collect()
            ok = not plugin.collect_errors and not session.testsfailed
        except Exception:
            ok = False
        self._test_modules = set(sys.modules) - before
        if not ok:
            self._drop_collection(modules)
        plugin.reports, plugin.collect_errors = [], []
        self._collected = str(test_dir) if ok else None
        self._uncollectable = None if ok else str(test_dir)
        return ok

    def _drop_collection(self, modules: tuple[str, ...]) -> None:
        """Forget the collected items and every imported test or candidate-name module; serve ``modules``."""
        for name in self._test_modules:
            sys.modules.pop(name, None)
        for name in list(sys.modules):
            if name.split(".")[0] in self.finder.modules or name.split(".")[0] in modules:
                del sys.modules[name]
        self._test_modules = set()
        self.finder.modules = frozenset(modules)
        self._collected = None
        self._state += 1
        session = self.session
        if session is None:
            return
        session.items = []
        session.testsfailed = 0
        session.testscollected = 0
        session.shouldfail = session.shouldstop = False

    # -- one trial ---------------------------------------------------------------------------------
    def _fork_standby(self) -> None:
        """Fork the next pytest process now, from the runner's current state, to wait for a job."""
        self._drop_standby()
        pid, control = self._trial_process().fork_standby()
        self._standby = (pid, control, self._state)

    def _drop_standby(self) -> None:
        if self._standby is not None:
            pid, control, _ = self._standby
            self._standby = None
            pytest_child.drop_standby(pid, control)

    def prepare_idle(self) -> None:
        """Between verifications: have a standby pytest process ready (for the fixture pytest collected
        last, if any: a direct-path job takes any standby), unless the last trial needed no process."""
        if self._last_here:
            return
        if self._standby is None or (self._collected is not None and self._standby[2] != self._state):
            self._fork_standby()

    def _trial_process(self) -> TrialProcess:
        """What a trial's test process needs of this runner (a fork takes its own copy)."""
        return TrialProcess(
            self.secret, self.runner_dir, self.finder, self.binding, self.plugin, self.config, self.session
        )

    def _start_child(self, session: Any, job: TrialJob, result_w: int, watch_r: int | None = None) -> int:
        """Hand the trial's ``job`` to the standby pytest process (fork one if it is missing, or stale for a
        pytest job); the child's pid."""
        if not isinstance(session.channel, SocketChannel):  # cannot be passed as a descriptor: fork now
            return self._trial_process().fork_now(session.channel, job, result_w, watch_r)
        if self._standby is None or (job.mode != "direct" and self._standby[2] != self._state):
            self._fork_standby()
        pid, control, _ = self._standby
        self._standby = None
        pytest_child.send_job(control, session.channel, job, result_w, watch_r)
        return pid

    def _job(self, fixture: Fixture, entry: FixtureEntry, seed: int, direct: bool) -> TrialJob:
        """What the trial's test process runs: plain tests directly, or pytest on the collected items."""
        job = (str(entry.directory), seed, tuple(fixture.modules))
        watches = any(watch.MODULE in text for text in fixture.hidden_tests.values())
        if direct and entry.plain:
            if any("pytest" in fixture.hidden_tests[rel] for rel in entry.plain):
                import pytest  # noqa: F401  (pytest.raises and friends, imported once, before any fork)
            here = entry.here and threading.current_thread() is threading.main_thread()  # SIGALRM watchdog
            return TrialJob(*job, "direct", tuple(entry.plain), here, tuple(fixture.shared), watch=watches)
        if str(entry.directory) not in self._star_names:  # what a star import binds while collecting
            sources = [text for rel, text in fixture.hidden_tests.items() if rel.endswith(".py")]
            star = proxy_import.star_imports(sources, tuple(fixture.modules))
            self._star_names[str(entry.directory)] = proxy_import.free_names(sources) if star else None
        precollected = self._precollect(entry.directory, tuple(fixture.modules))
        mode = "precollected" if precollected else "collect"
        return TrialJob(*job, mode, shared=tuple(fixture.shared), watch=watches)

    def run_trial(
        self, graded: Path, fixture: Fixture, entry: FixtureEntry, seed: int, direct: bool = True
    ) -> TrialResult:
        job = self._job(fixture, entry, seed, direct)
        self._last_here = job.here
        start = time.perf_counter()
        limits = fixture.limits
        try:
            session = self.backend.launch(graded, limits, seed)
        except SandboxFault as exc:
            return TrialResult(
                "pending", time.perf_counter() - start, seed, "sandbox did not start", str(exc)[:DETAIL_CHARS]
            )
        deadline = start + wire.trial_budget_s(limits.wall_s)
        # the proxy stops sending at the longest the sandbox may run, before the runner's own deadline:
        # an endless generator is then a failed test, not an overrun runner
        job = replace(job, deadline=start + wire.STRETCH_MAX * limits.wall_s)
        if job.here:
            watch_root = session.watch_root if job.watch else None
            data, runner_problem = self._trial_process().run_here(session.channel, job, deadline, watch_root)
        else:
            result_r, result_w = os.pipe()
            watch_r, watch_w = os.pipe() if job.watch else (None, None)
            try:
                pid = self._start_child(session, job, result_w, watch_r)
            except OSError as exc:
                for fd in (result_r, result_w, watch_r, watch_w):
                    if fd is not None:
                        os.close(fd)
                session.kill()
                return TrialResult("pending", time.perf_counter() - start, seed, "runner could not fork", str(exc))
            self.last_child_pid = pid
            os.close(result_w)
            if watch_r is not None:  # the tests count the candidate's wakeups: tell them where its processes are
                os.close(watch_r)
                watch.write_root(watch_w, session.watch_root())
            data, runner_problem = pytest_child.collect_report(pid, result_r, deadline)
        # A closed channel means the candidate's server ended by itself: let its own exit record arrive.
        exit_record = session.kill(grace_s=0.5 if session.channel.peer_closed() else 0.0)
        session.channel.close()
        duration = time.perf_counter() - start
        if exit_record.kind == "infra":
            return TrialResult("pending", duration, seed, "sandbox failed (infrastructure)", exit_record.detail)
        if exit_record.kind != "killed":  # the candidate's own end comes first, even if the runner overran
            reason = {
                "timeout": "timeout",
                "output_cap": "output cap",
                "limit": "resource limit",
                "exited": "candidate process ended",
            }[exit_record.kind]
            return TrialResult("fail", duration, seed, reason, exit_record.detail[:DETAIL_CHARS])
        if runner_problem:
            return TrialResult("pending", duration, seed, runner_problem, "")
        try:
            record = json.loads(data.decode())
        except ValueError:
            return TrialResult("pending", duration, seed, "runner report unreadable", "")
        prefix = entry.directory.relative_to(self.runner_dir).as_posix() + "/"
        ok, reason, detail = judge(record, entry.expected, prefix)
        return TrialResult("pass" if ok else "fail", duration, seed, reason, detail)

    # -- one verification --------------------------------------------------------------------------
    def verify(
        self, fixture: Fixture, candidate: Candidate, k: int, base_seed: int, direct: bool = True
    ) -> VerifyReply:
        """Admission, graded copy, up to ``k`` trials; the runner's :class:`~.wire.VerifyReply`.

        ``direct``: run plain hidden tests without pytest's machinery (:mod:`~rlvr_lab.verifier.direct`);
        False sends every fixture through pytest."""
        problem = workspace.admission_error(candidate, fixture)
        if problem:
            return VerifyReply("fail", (), f"admission: {problem}")
        problem = workspace.compile_error(candidate, fixture)
        if problem:  # deterministic: every trial would fail at the tests' import of this module
            return VerifyReply("fail", (), f"does not compile: {problem}")
        entry = self._fixture_dir(fixture)
        self.counter += 1
        graded = Path(self.backend.workspace_root) / f"c{os.getpid()}-{self.counter}"
        workspace.remove(graded)
        try:
            workspace.apply(fixture, candidate, graded)
            outcome, results, stop = trials_mod.all_pass(
                lambda index, seed: self.run_trial(graded, fixture, entry, seed, direct), k, base_seed
            )
        finally:  # also after an error: the next candidate in this slot must find nothing of this one
            workspace.remove(graded)
        return VerifyReply(outcome, tuple(results), stop, test_runner="direct" if direct and entry.plain else "pytest")

    def close(self) -> None:
        self._drop_standby()
        self.backend.close()


# -- the runner process's request loop (pickles between two trusted processes) ----------------------
def main(argv: list[str] | None = None) -> int:
    """``python -m rlvr_lab.verifier.runner BACKEND SLOT_DIR [CPUS]``: serve verification requests on
    stdin/stdout; with ``CPUS`` (``0,1``), this slot (the runner, its zygote and every sandbox) runs on
    those CPUs only."""
    argv = sys.argv[1:] if argv is None else argv
    backend_name, slot_dir = argv[0], Path(argv[1])
    if len(argv) > 2:  # before the zygote starts: it and its sandboxes inherit the affinity
        os.sched_setaffinity(0, {int(c) for c in argv[2].split(",")})
    rfd, wfd = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    try:
        runner = SlotRunner(backend_name, slot_dir)
    except SandboxUnavailable as exc:
        wire.send_message(wfd, RunnerFailed("unavailable", str(exc)))
        return 2
    except Exception as exc:
        wire.send_message(wfd, RunnerFailed("error", f"{type(exc).__name__}: {exc}"))
        return 2
    wire.send_message(
        wfd,
        RunnerReady(
            runner.backend.name, os.getpid(), getattr(runner.backend, "uid", None), tuple(runner.backend.isolation)
        ),
    )
    try:
        while True:
            try:
                request = wire.recv_message(rfd)
            except EOFError:
                return 0
            reply: VerifyReply | RunnerFailed
            try:
                if not isinstance(request, VerifyRequest):
                    raise TypeError(f"expected a VerifyRequest, got {type(request).__name__}")
                reply = replace(
                    runner.verify(request.fixture, request.candidate, request.k, request.seed, request.direct),
                    backend=runner.backend.name,
                    runner_child=runner.last_child_pid,
                )
            except Exception as exc:
                kind = (
                    "unavailable"
                    if isinstance(exc, SandboxUnavailable)
                    else "value"
                    if isinstance(exc, ValueError)
                    else "error"
                )
                reply = RunnerFailed(
                    kind, f"{type(exc).__name__}: {exc}"[:1000] if kind == "error" else str(exc)[:1000]
                )
            wire.send_message(wfd, reply)
            try:
                runner.prepare_idle()
            except OSError:
                pass  # no standby: the next trial forks its pytest process itself
    finally:
        runner.close()


if __name__ == "__main__":
    sys.exit(main())
