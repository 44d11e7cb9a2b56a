"""The trusted runner: hidden tests in a trusted pytest, the candidate behind the proxy (section 17.7).

One runner process serves one verifier slot (``python -m rlvr_lab.verifier.runner``, started by
:class:`rlvr_lab.verifier.Verifier` with a scrubbed environment). It keeps pytest imported and a pytest
``Config`` prepared once, with everything the candidate could otherwise steer fixed by the runner:
``--rootdir`` and ``-c`` point at a runner-owned directory (mode 0700, hidden from every sandbox),
``--confcutdir`` stops conftest discovery at the hidden tests' own directory, plugin autoloading is off,
``-p no:cacheprovider``, and ``PYTEST_ADDOPTS``/``PYTEST_PLUGINS`` are removed. The candidate's tree is
never a pytest argument, never on ``sys.path`` and never imported here.

For each verification the runner admits the candidate (:mod:`~rlvr_lab.verifier.workspace`), writes
base + change into a fresh graded copy under the backend's ``workspace_root``, and runs up to K trials
(:mod:`~rlvr_lab.verifier.trials`). A trial launches a fresh sandbox, forks a pytest child from the
prepared process (so pytest's start-up is paid once per slot, not per trial;
:mod:`~rlvr_lab.verifier.pytest_child`), installs the proxy for ``fixture.modules``, shuffles the test
items with the trial's seed, runs the session, and sends the reports back over a pipe. The runner then
kills the sandbox and decides the trial (:mod:`~rlvr_lab.verifier.judging`):

* the sandbox ended from outside, or the pytest child died, hung or produced no report -> ``pending``;
* the candidate timed out, broke the output cap or another limit, or its process ended -> ``fail``;
* otherwise ``pass`` only if pytest exited 0, nothing failed or was skipped, nothing failed to collect,
  and every test function found in the hidden files (by a trusted ``ast`` scan) passed.
"""

from __future__ import annotations

import collections
import gc
import hashlib
import json
import os
import socket
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from rlvr_lab.verifier.backend import SandboxBackend, SandboxFault, SandboxUnavailable, SocketChannel
from rlvr_lab.verifier.backends import make_backend
from rlvr_lab.verifier.judging import DETAIL_CHARS, RecordPlugin, expected_tests, judge
from rlvr_lab.verifier.schema import Candidate, Fixture, TrialResult
from rlvr_lab.verifier import proxy_import
from rlvr_lab.verifier import pytest_child
from rlvr_lab.verifier import trials as trials_mod
from rlvr_lab.verifier import workspace
from rlvr_lab.verifier import wire
from rlvr_lab.verifier.wire import RunnerFailed, RunnerReady, VerifyReply, VerifyRequest

#: Environment variables that could steer pytest or Python and are removed from the runner.
SCRUBBED_ENV = ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME",
                "PYTHONUSERBASE", "PYTHONINSPECT", "PYTHONBREAKPOINT", "PYTEST_CURRENT_TEST",
                "PYTEST_DEBUG", "PY_COLORS", "PYTHONWARNINGS")
#: pytest plugins the trusted runner does not load: caches and reports it never reads, and per-test
#: machinery (log capture, warning capture) that costs time on every trial. Hidden tests may use
#: ``pytest.raises``/``pytest.warns``, markers, parametrize, ``tmp_path`` and ``monkeypatch``.
DISABLED_PLUGINS = ("cacheprovider", "terminal", "logging", "warnings", "stepwise", "legacypath", "setuponly",
                    "setupplan", "unraisableexception", "threadexception", "faulthandler", "pastebin",
                    "junitxml", "doctest", "nose", "recwarn", "capture", "debugging", "subtests")
#: Traceback style of failure reports: the verdict needs only the failing test and its exception line.
TB_STYLE = "line"
#: How many prepared hidden-test directories a runner keeps.
FIXTURE_CACHE = 64


class SlotRunner:
    """Runs verifications for one slot: admission, graded copy, trials, each in a fresh sandbox."""

    def __init__(self, backend: str | SandboxBackend, slot_dir: Path):
        self.slot_dir = Path(slot_dir)
        self.slot_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(self.slot_dir, 0o700)
        self.secret = os.urandom(32)  # seeds the hidden tests' randomness; never sent to a sandbox
        self.backend = backend if isinstance(backend, SandboxBackend) else make_backend(backend, self.slot_dir / "sandbox")
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
        import pytest  # noqa: F401  (imported once here; every trial forks from this process)
        from _pytest.config import _prepareconfig

        self.plugin = RecordPlugin()
        args = [str(self.tests_root), "-c", str(ini), "--rootdir", str(self.runner_dir), "--confcutdir",
                str(self.tests_root)]
        for plugin in DISABLED_PLUGINS:
            args += ["-p", f"no:{plugin}"]
        self.config = _prepareconfig(args, plugins=[self.plugin])
        self.config.option.tbstyle = TB_STYLE
        # Configure and start the session once; each trial's fork only collects and runs.
        from _pytest.main import Session

        self.config._do_configure()
        self.session = Session.from_config(self.config)
        self.session.exitstatus = 0
        self.config.hook.pytest_sessionstart(session=self.session)
        gc.collect()
        gc.freeze()  # fewer copy-on-write faults in every forked trial
        self.binding = proxy_import.Binding()
        self.finder = proxy_import.install((), self.binding)
        self._collected: str | None = None  # hidden-test directory whose items the session holds
        self._uncollectable: str | None = None  # hidden-test directory that must be collected per trial
        self._state = 0  # bumped whenever the session's collected items or the proxied modules change
        self._standby: tuple[int, socket.socket, int] | None = None  # (pid, control, state it was forked in)
        self._test_modules: set[str] = set()
        self.fixtures: collections.OrderedDict[str, tuple[Path, frozenset[str]]] = collections.OrderedDict()
        self._star_names: dict[str, tuple[str, ...] | None] = {}  # test dir -> names a star import binds
        self.counter = 0
        self.last_child_pid: int | None = None

    def _empty_workspace_root(self) -> None:
        """Remove every graded copy left under the backend's workspace root (e.g. by a runner that died)."""
        root = Path(self.backend.workspace_root)
        if root.is_dir():
            for entry in os.listdir(root):
                workspace.remove(root / entry)

    # -- hidden tests ------------------------------------------------------------------------------
    def _fixture_dir(self, fixture: Fixture) -> tuple[Path, frozenset[str]]:
        blob = json.dumps([sorted(fixture.hidden_tests.items()), list(fixture.modules)]).encode()
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
        entry = (directory, expected_tests(fixture.hidden_tests))
        sources = [text for rel, text in fixture.hidden_tests.items() if rel.endswith(".py")]
        star = proxy_import.star_imports(sources, tuple(fixture.modules))
        self._star_names[str(directory)] = proxy_import.free_names(sources) if star else None
        self.fixtures[key] = entry
        while len(self.fixtures) > FIXTURE_CACHE:
            old, (old_dir, _) = self.fixtures.popitem(last=False)
            self._star_names.pop(str(old_dir), None)
            workspace.remove(old_dir)
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
        session.items = []
        session.testsfailed = 0
        session.testscollected = 0
        session.shouldfail = session.shouldstop = False

    # -- one trial ---------------------------------------------------------------------------------
    def _fork_standby(self) -> None:
        """Fork the next pytest process now, from the runner's current state, to wait for a job."""
        self._drop_standby()
        pid, control = pytest_child.fork_standby(self)
        self._standby = (pid, control, self._state)

    def _drop_standby(self) -> None:
        if self._standby is not None:
            pid, control, _ = self._standby
            self._standby = None
            pytest_child.drop_standby(pid, control)

    def prepare_idle(self) -> None:
        """Between verifications: have a standby pytest process ready for the current fixture."""
        if self._standby is None or self._standby[2] != self._state:
            self._fork_standby()

    def _start_child(self, session: Any, test_dir: Path, seed: int, precollected: bool, result_w: int) -> int:
        """Hand the trial to the standby pytest process (fork one if it is missing or stale); its pid."""
        if not isinstance(session.channel, SocketChannel):  # cannot be passed as a descriptor: fork now
            return pytest_child.fork_child(self, session.channel, test_dir, seed, precollected, result_w)
        if self._standby is None or self._standby[2] != self._state:
            self._fork_standby()
        pid, control, _ = self._standby
        self._standby = None
        pytest_child.send_job(control, session.channel, test_dir, seed, precollected, result_w)
        return pid

    def run_trial(self, graded: Path, fixture: Fixture, test_dir: Path, expected: frozenset[str],
                  seed: int) -> TrialResult:
        precollected = self._precollect(test_dir, tuple(fixture.modules))
        start = time.perf_counter()
        limits = fixture.limits
        try:
            session = self.backend.launch(graded, limits, seed)
        except SandboxFault as exc:
            return TrialResult("pending", time.perf_counter() - start, seed, "sandbox did not start", str(exc)[:DETAIL_CHARS])
        result_r, result_w = os.pipe()
        try:
            pid = self._start_child(session, test_dir, seed, precollected, result_w)
        except OSError as exc:
            os.close(result_r)
            os.close(result_w)
            session.kill()
            return TrialResult("pending", time.perf_counter() - start, seed, "runner could not fork", str(exc))
        self.last_child_pid = pid
        os.close(result_w)
        data, runner_problem = pytest_child.collect_report(pid, result_r, start + wire.trial_budget_s(limits.wall_s))
        # A closed channel means the candidate's server ended by itself: let its own exit record arrive.
        exit_record = session.kill(grace_s=0.5 if session.channel.peer_closed() else 0.0)
        session.channel.close()
        duration = time.perf_counter() - start
        if exit_record.kind == "infra":
            return TrialResult("pending", duration, seed, "sandbox failed (infrastructure)", exit_record.detail)
        if exit_record.kind != "killed":  # the candidate's own end comes first, even if the runner overran
            reason = {"timeout": "timeout", "output_cap": "output cap", "limit": "resource limit",
                      "exited": "candidate process ended"}[exit_record.kind]
            return TrialResult("fail", duration, seed, reason, exit_record.detail[:DETAIL_CHARS])
        if runner_problem:
            return TrialResult("pending", duration, seed, runner_problem, "")
        try:
            record = json.loads(data.decode())
        except ValueError:
            return TrialResult("pending", duration, seed, "runner report unreadable", "")
        prefix = test_dir.relative_to(self.runner_dir).as_posix() + "/"
        ok, reason, detail = judge(record, expected, prefix)
        return TrialResult("pass" if ok else "fail", duration, seed, reason, detail)

    # -- one verification --------------------------------------------------------------------------
    def verify(self, fixture: Fixture, candidate: Candidate, k: int, base_seed: int) -> VerifyReply:
        """Admission, graded copy, up to ``k`` trials; the runner's :class:`~.wire.VerifyReply`."""
        problem = workspace.admission_error(candidate, fixture)
        if problem:
            return VerifyReply("fail", (), f"admission: {problem}")
        problem = workspace.compile_error(candidate, fixture)
        if problem:  # deterministic: every trial would fail at the tests' import of this module
            return VerifyReply("fail", (), f"does not compile: {problem}")
        test_dir, expected = self._fixture_dir(fixture)
        self.counter += 1
        graded = Path(self.backend.workspace_root) / f"c{os.getpid()}-{self.counter}"
        workspace.remove(graded)
        try:
            workspace.apply(fixture, candidate, graded)
            outcome, results, stop = trials_mod.all_pass(
                lambda index, seed: self.run_trial(graded, fixture, test_dir, expected, seed), k, base_seed)
        finally:  # also after an error: the next candidate in this slot must find nothing of this one
            workspace.remove(graded)
        return VerifyReply(outcome, tuple(results), stop)

    def close(self) -> None:
        self._drop_standby()
        self.backend.close()


# -- the runner process's request loop (pickles between two trusted processes) ----------------------
def main(argv: list[str] | None = None) -> int:
    """``python -m rlvr_lab.verifier.runner BACKEND SLOT_DIR``: serve verification requests on stdin/stdout."""
    argv = sys.argv[1:] if argv is None else argv
    backend_name, slot_dir = argv[0], Path(argv[1])
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
    wire.send_message(wfd, RunnerReady(runner.backend.name, os.getpid(), getattr(runner.backend, "uid", None),
                                       tuple(runner.backend.isolation)))
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
                reply = replace(runner.verify(request.fixture, request.candidate, request.k, request.seed),
                                backend=runner.backend.name, runner_child=runner.last_child_pid)
            except Exception as exc:
                kind = ("unavailable" if isinstance(exc, SandboxUnavailable) else
                        "value" if isinstance(exc, ValueError) else "error")
                reply = RunnerFailed(kind, f"{type(exc).__name__}: {exc}"[:1000] if kind == "error" else str(exc)[:1000])
            wire.send_message(wfd, reply)
            try:
                runner.prepare_idle()
            except OSError:
                pass  # no standby: the next trial forks its pytest process itself
    finally:
        runner.close()


if __name__ == "__main__":
    sys.exit(main())
