"""Where a trial's hidden tests run: a fork of the prepared runner, or the runner itself (section 17.7).

A :class:`TrialProcess` runs one :class:`TrialJob` against the proxy: pytest's run loop on a session the
runner prepared once (:func:`prepare_session`), or plain tests directly
(:func:`rlvr_lab.verifier.direct.run_tests`). It is forked, ahead of the trial where it can be
(:meth:`TrialProcess.fork_standby`), and writes its record to a pipe the runner reads until a deadline
(:func:`collect_report`); pure plain tests run in the runner itself (:meth:`TrialProcess.run_here`).
"""

from __future__ import annotations

import ctypes
import gc
import importlib.util
import json
import os
import random
import select
import signal
import socket
import sys
import time
import types
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rlvr_lab.sandbox.backend import SocketChannel
from rlvr_lab.verifier.judging import RecordPlugin
from rlvr_lab.verifier.proxy.client import ProxyClient
from rlvr_lab.verifier.proxy.imports import Binding, RemoteFinder
from rlvr_lab.verifier.proxy.handles import CandidateError
from rlvr_lab.verifier import watch
from rlvr_lab.verifier.trials import secret_seed


#: pytest plugins the trusted runner does not load: caches and reports it never reads, and per-test
#: machinery (log capture, warning capture) that costs time on every trial. Hidden tests may use
#: ``pytest.raises``/``pytest.warns``, markers, parametrize, ``tmp_path`` and ``monkeypatch``.
DISABLED_PLUGINS = (
    "cacheprovider",
    "terminal",
    "logging",
    "warnings",
    "stepwise",
    "legacypath",
    "setuponly",
    "setupplan",
    "unraisableexception",
    "threadexception",
    "faulthandler",
    "pastebin",
    "junitxml",
    "doctest",
    "nose",
    "recwarn",
    "capture",
    "debugging",
    "subtests",
)
#: Traceback style of failure reports: the verdict needs only the failing test and its exception line.
TB_STYLE = "line"


def prepare_session(plugin: Any, runner_dir: Path, tests_root: Path) -> tuple[Any, Any]:
    """pytest imported, configured and its session started, once per runner: (config, session).

    ``--rootdir`` and ``-c`` point at the runner-owned ``runner_dir``, ``--confcutdir`` stops conftest
    discovery at ``tests_root``, and :data:`DISABLED_PLUGINS` are off; ``plugin`` (the runner's
    :class:`~rlvr_lab.verifier.judging.RecordPlugin`) records every report. Every trial forks from the
    process this ran in, so the objects are frozen for the garbage collector afterwards.
    """
    import pytest  # noqa: F401
    from _pytest.config import _prepareconfig
    from _pytest.main import Session

    args = [
        str(tests_root),
        "-c",
        str(runner_dir / "pytest.ini"),
        "--rootdir",
        str(runner_dir),
        "--confcutdir",
        str(tests_root),
    ]
    for name in DISABLED_PLUGINS:
        args += ["-p", f"no:{name}"]
    config = _prepareconfig(args, plugins=[plugin])
    config.option.tbstyle = TB_STYLE
    # Configure and start the session once; each trial's fork only collects and runs.
    config._do_configure()
    session = Session.from_config(config)
    session.exitstatus = 0
    config.hook.pytest_sessionstart(session=session)
    gc.collect()
    gc.freeze()  # fewer copy-on-write faults in every forked trial
    return config, session


def run_session(config: Any, session: Any, precollected: bool, seed: int) -> int:
    """Run the hidden tests on a session started before the fork; pytest's exit code.

    ``precollected``: the runner already collected the items (with late-bound candidate names), so
    only the run loop is left; the items are shuffled here with the trial's seed. Otherwise this is
    pytest's ``_main``: collect (the trusted plugin shuffles) and run.
    """
    from _pytest.main import _main
    from _pytest.outcomes import Exit

    try:
        if not precollected:
            return int(_main(config, session) or 0)
        items = list(session.items)
        random.Random(seed).shuffle(items)
        session.items = items
        config.hook.pytest_runtestloop(session=session)
        if session.testsfailed:
            return 1
        return 5 if session.testscollected == 0 else 0
    except session.Failed:
        return 1
    except (KeyboardInterrupt, Exit):
        return 2
    except BaseException:
        return 3


_libc = ctypes.CDLL(None, use_errno=True)
PR_SET_PDEATHSIG = 1


def _prctl_pdeathsig() -> None:
    """Have the kernel SIGKILL this process when the runner (its parent) dies."""
    if _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG)")


def child_setup() -> None:
    """First steps of a forked pytest process: die with the runner, no GC, no terminal."""
    gc.disable()
    _prctl_pdeathsig()
    # The hidden-test directory is runner-owned and content-addressed, so caching the
    # assertion-rewritten bytecode there is safe and saves a parse per trial.
    sys.dont_write_bytecode = False
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)


def drop_modules(names: frozenset[str]) -> None:
    """Forget every cached module under the top-level ``names`` (candidate modules of an earlier fixture)."""
    for name in list(sys.modules):
        if name.split(".")[0] in names:
            del sys.modules[name]


@dataclass(frozen=True)
class TrialJob:
    """One trial's hidden tests, as the runner hands them to a :class:`TrialProcess` (as JSON to a standby).

    >>> job = TrialJob("/r/tests/ab", 7, ("pool",), "direct", ("test_pool.py",), here=True)
    >>> TrialJob.from_bytes(job.to_bytes()) == job
    True
    """

    test_dir: str
    """Runner-owned directory of the fixture's hidden tests."""
    seed: int
    """The trial's seed: orders the tests; the tests' and the sandbox's RNG seeds derive from it."""
    modules: tuple[str, ...]
    """Top-level candidate modules the proxy serves."""
    mode: str
    """``direct`` (plain tests without pytest), ``precollected`` (the runner collected the items before
    the fork) or ``collect`` (pytest collects in the test process)."""
    files: tuple[str, ...] = ()
    """``direct``: the hidden test files, relative to ``test_dir``."""
    here: bool = False
    """``direct``: run in the runner process itself, under a watchdog (no fork)."""
    shared: tuple[str, ...] = ()
    """The fixture's shared modules (``<name>.py`` in ``test_dir``), whose classes cross by value."""
    deadline: float = 0.0
    """``time.perf_counter()`` after which the proxy sends no request (0: none)."""
    watch: bool = False
    """The hidden tests count the candidate's wakeups (:mod:`rlvr_lab.verifier.watch`): the test process
    gets a pipe on which the runner writes where the sandbox's processes are."""

    def to_bytes(self) -> bytes:
        return json.dumps(asdict(self)).encode()

    @classmethod
    def from_bytes(cls, data: bytes) -> TrialJob:
        fields = json.loads(data.decode())
        return cls(
            str(fields["test_dir"]),
            int(fields["seed"]),
            tuple(fields["modules"]),
            str(fields["mode"]),
            tuple(fields["files"]),
            bool(fields["here"]),
            tuple(fields["shared"]),
            float(fields["deadline"]),
            bool(fields.get("watch", False)),
        )


def shared_modules(test_dir: str, names: tuple[str, ...]) -> dict[str, types.ModuleType]:
    """The fixture's shared modules as the hidden tests see them: the module already imported from
    ``test_dir`` (by pytest's collection), else loaded from its file there into ``sys.modules``. Always
    the runner's own copy: the candidate's files are never on this process's path."""
    modules = {}
    for name in names:
        path = os.path.realpath(os.path.join(test_dir, f"{name}.py"))
        module = sys.modules.get(name)
        loaded = getattr(module, "__file__", None)
        if module is None or not loaded or os.path.realpath(loaded) != path:
            spec = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
        modules[name] = module
    return modules


class TrialProcess:
    """The trusted process that runs a trial's hidden tests against the proxy.

    It is given what it needs of its :class:`~rlvr_lab.verifier.runner.SlotRunner` and changes only its own
    state: the proxy's binding and served modules and pytest's arguments, in a forked process (the
    runner's copy is untouched), or in the runner itself for :meth:`run_here`, which puts them back.
    """

    def __init__(
        self,
        secret: bytes,
        runner_dir: Path,
        finder: RemoteFinder,
        binding: Binding,
        plugin: RecordPlugin,
        config: Any = None,
        session: Any = None,
    ):
        self.secret = secret
        """The runner's secret, from which the trial's RNG seeds derive (never sent to a sandbox)."""
        self.runner_dir = runner_dir
        self.finder = finder
        """The import hook that serves the candidate's modules through the proxy."""
        self.binding = binding
        """Which proxy client the candidate's modules talk to."""
        self.plugin = plugin
        self.config = config
        """pytest's Config and started Session (None until the runner prepared pytest)."""
        self.session = session

    def run(self, job: TrialJob) -> dict:
        """Run ``job``'s hidden tests (the proxy is bound); the record for the judge."""
        test_dir = Path(job.test_dir)
        prefix = test_dir.relative_to(self.runner_dir).as_posix() + "/"
        if job.mode == "direct":
            from rlvr_lab.verifier.direct import run_tests

            modules = frozenset(job.modules)
            drop_modules(self.finder.modules | modules)
            self.finder.modules = modules
            files = {rel: (test_dir / rel).read_text(encoding="utf-8") for rel in job.files}
            return run_tests(files, str(test_dir), prefix, job.seed)
        self.plugin.seed = job.seed
        self.config.args = [str(test_dir)]
        exit_code = run_session(self.config, self.session, job.mode == "precollected", job.seed)
        return {"exit": int(exit_code), "reports": self.plugin.reports, "collect_errors": self.plugin.collect_errors}

    def bind_and_run(self, channel: Any, job: TrialJob) -> dict:
        """Seed the hidden tests' ``random`` from the secret, bind the proxy to this trial's sandbox (whose
        own seed is derived the same way) and run the job; the record for the judge."""
        random.seed(secret_seed(self.secret, job.seed, "tests"))
        shared = shared_modules(job.test_dir, job.shared)
        client = ProxyClient(channel, shared, job.deadline or None)
        sources = {name: Path(module.__file__).read_text(encoding="utf-8") for name, module in shared.items()}
        try:
            client.init(secret_seed(self.secret, job.seed, "sandbox"), sources)
        except CandidateError:
            pass  # the tests will meet the dead sandbox and fail; the runner reads the sandbox's record
        self.binding.client = client
        return self.run(job)

    def run_and_exit(self, channel: Any, job: TrialJob, result_w: int, watch_r: int | None = None) -> None:
        """In a forked process: run the job, write its record to ``result_w``; never returns. ``watch_r``:
        the pipe that brings the sandbox's root to :mod:`~rlvr_lab.verifier.watch`."""
        code = 0
        try:
            if watch_r is not None:
                watch.bind(watch_r)
            data = json.dumps(self.bind_and_run(channel, job)).encode()
            view = memoryview(data)
            while view:
                view = view[os.write(result_w, view) :]
        except BaseException:
            code = 1
        os._exit(code)

    def run_here(self, channel: Any, job: TrialJob, deadline: float, watch_root: Any = None) -> tuple[bytes, str]:
        """Run a ``direct`` job of pure plain tests in the runner process itself (no fork; see
        :func:`rlvr_lab.verifier.direct.inprocess_refusal`); returns (record as JSON, problem) like
        :func:`collect_report`. A watchdog (``SIGALRM``) ends the tests at ``deadline`` (``perf_counter``
        time): "runner overran its deadline". The proxy's state is restored afterwards. ``watch_root``:
        the session's ``watch_root``, bound for :mod:`~rlvr_lab.verifier.watch` while the tests run."""
        from rlvr_lab.verifier.direct import RunnerOverrun

        armed = [True]

        def overrun(signum: int, frame: Any) -> None:
            if armed[0]:
                raise RunnerOverrun()

        finder, binding = self.finder, self.binding
        saved = (finder.modules, binding.client, binding.star_names, random.getstate())
        had_shared = frozenset(name for name in job.shared if name in sys.modules)  # e.g. pytest collected them
        kept = {name: sys.modules.pop(name) for name in list(sys.modules) if name.split(".")[0] in finder.modules}
        previous = signal.signal(signal.SIGALRM, overrun)
        try:
            signal.setitimer(signal.ITIMER_REAL, max(deadline - time.perf_counter(), 0.001))
            binding.star_names = None
            if watch_root is not None:
                watch.bind(watch_root)
            return json.dumps(self.bind_and_run(channel, job)).encode(), ""
        except RunnerOverrun:
            return b"", "runner overran its deadline"
        finally:
            armed[0] = False
            signal.setitimer(signal.ITIMER_REAL, 0)
            if watch_root is not None:
                watch.unbind()
            signal.signal(signal.SIGALRM, previous)
            drop_modules(finder.modules | frozenset(job.modules) | (frozenset(job.shared) - had_shared))
            finder.modules, binding.client, binding.star_names, state = saved
            random.setstate(state)
            sys.modules.update(kept)

    def standby(self, control: socket.socket) -> None:
        """A process forked ahead of time: wait for one job (with the channel and the result pipe as
        descriptors), run it, exit. Never returns."""
        try:
            child_setup()
            message, fds, _, _ = socket.recv_fds(control, 65536, 3)
            if not message or len(fds) not in (2, 3):
                os._exit(0)
            job = TrialJob.from_bytes(message)
            channel = SocketChannel(socket.socket(fileno=fds[0]))
        except BaseException:
            os._exit(1)
        self.run_and_exit(channel, job, fds[1], fds[2] if len(fds) == 3 else None)

    def fork_now(self, channel: Any, job: TrialJob, result_w: int, watch_r: int | None = None) -> int:
        """Fork a process for one trial now (for a channel that cannot be passed as a descriptor); its pid."""
        pid = os.fork()
        if pid == 0:
            child_setup()
            self.run_and_exit(channel, job, result_w, watch_r)
        return pid

    def fork_standby(self) -> tuple[int, socket.socket]:
        """Fork a process now, from the current state, to wait for a job; (pid, control socket)."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        pid = os.fork()
        if pid == 0:
            ours.close()
            self.standby(theirs)
        theirs.close()
        return pid, ours


def drop_standby(pid: int, control: socket.socket) -> None:
    """End a standby pytest process that will get no job, and reap it."""
    control.close()  # the standby sees end of stream and exits
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    os.waitpid(pid, 0)


def send_job(
    control: socket.socket, channel: SocketChannel, job: TrialJob, result_w: int, watch_r: int | None = None
) -> None:
    """Hand one trial to a standby process: the job, the channel, the result pipe's write end and, for a
    job that watches the candidate, the read end of the pipe that brings the sandbox's root."""
    fds = [channel.fileno(), result_w] + ([] if watch_r is None else [watch_r])
    try:
        socket.send_fds(control, [job.to_bytes()], fds)
    except OSError:
        pass  # the standby died: the runner reports a missing report (pending)
    finally:
        control.close()


def collect_report(pid: int, result_r: int, deadline: float) -> tuple[bytes, str]:
    """Read the child's report until EOF or the deadline, then reap it; returns (data, problem)."""
    chunks = []
    problem = ""
    try:
        while True:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                problem = "runner overran its deadline"
                os.kill(pid, signal.SIGKILL)
                break
            ready, _, _ = select.select([result_r], [], [], remaining)
            if ready:
                chunk = os.read(result_r, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
    finally:
        os.close(result_r)
    _, status = os.waitpid(pid, 0)
    if not problem and not (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0):
        problem = f"runner process ended abnormally (status {status})"
    if not problem and not chunks:
        problem = "runner produced no report"
    return b"".join(chunks), problem
