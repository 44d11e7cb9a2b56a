"""Shared in-memory fixtures and host checks for the verifier-engine tests (not a test module)."""

from __future__ import annotations

import fcntl
import os
import socket
import subprocess
import sys
import tempfile
import time
import threading
from pathlib import Path

import pytest

from rlvr_lab.sandbox.clock import STRETCH_MAX
from rlvr_lab.verifier.schema import Candidate, Fixture, Limits
from rlvr_lab.verifier.wire import GRACE_S

HIDDEN = """\
import threading

import pytest
from solution import Counter, double


def test_small():
    assert double(2) == 4


def test_negative():
    assert double(-3) == -6


def test_type_error():
    with pytest.raises(TypeError):
        double(None)


def test_counter_state_and_threads():
    counter = Counter()
    threads = [threading.Thread(target=counter.add, args=(1,)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert counter.total() == 8
    assert counter.name == "counter"
"""

GOOD = """\
import threading


def double(x):
    if x is None:
        raise TypeError("x must be a number")
    return 2 * x


class Counter:
    name = "counter"

    def __init__(self):
        self._n = 0
        self._lock = threading.Lock()

    def add(self, k):
        with self._lock:
            self._n += k

    def total(self):
        return self._n
"""

STUB = "def double(x):\n    raise NotImplementedError\n\n\nclass Counter:\n    pass\n"


def function_fixture(limits: Limits | None = None, trials: int = 1) -> Fixture:
    """The function-task shape the trainer uses (TEAM.md), with a small stateful class."""
    return Fixture(
        name="double_01",
        version="double_fixture_v1",
        files={"solution.py": STUB, "README.md": "Implement double(x) and Counter.\n"},
        hidden_tests={"test_hidden.py": HIDDEN},
        allowed_paths=("solution.py", "helpers/*.py"),
        modules=("solution",),
        limits=limits
        or Limits(wall_s=5.0, cpu_s=5, memory_mb=256, processes=16, file_mb=4, open_files=64, output_kb=64),
        trials=trials,
        checker_version="double_accept_v1",
    )


def candidate(body: str, prefix: str = "") -> Candidate:
    """GOOD with ``body`` appended (overriding definitions) and ``prefix`` prepended."""
    return Candidate({"solution.py": prefix + GOOD + "\n" + body})


def uid_processes(uid: int) -> list[int]:
    """PIDs of host processes whose real uid is ``uid``."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            status = Path(f"/proc/{name}/status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("Uid:") and int(line.split()[1]) == uid:
                found.append(int(name))
    return found


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return ""


def _descendants(pid: int) -> list[int]:
    found, frontier = [], [pid]
    while frontier:
        frontier = [c for p in frontier for c in children(p)]
        found += frontier
    return found


def sandbox_processes(verifier) -> list[int]:
    """PIDs of the candidate's processes that a verifier's sandboxes left running.

    As root every sandbox process runs as the slot's uid, so that uid's processes are the answer. In a
    user namespace (no slot uid) they are whatever lives below the zygote's PID-namespace init (the
    zygote's one child); on the process backend, whatever lives below the zygote. Either way the sandbox
    the zygote built ahead of the next trial is not counted: its server is confined (as the slot's uid)
    before its trial exists, and holds nothing of any candidate.
    """
    warm = ("rlvr-warm-init", "rlvr-warm-srv")
    if verifier.sandbox_uid is not None:
        return [p for p in uid_processes(verifier.sandbox_uid) if _comm(p) not in warm]
    runner = verifier.runner_pid
    if runner is None:
        return []
    zygotes = [p for p in _descendants(runner) if "sandbox/zygote.py" in _cmdline(p)]
    tops = [z for z in zygotes if "sandbox/zygote.py" not in _cmdline(_parent(z))]
    found = []
    for top in tops:
        below = children(top)
        if "user-ns" in verifier.isolation:  # the zygote's child is PID 1 of its namespace: not a sandbox
            below = [c for b in below for c in children(b)]
        for pid in below:
            found += [pid] + _descendants(pid)
    return [p for p in found if _comm(p) not in warm]


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def _parent(pid: int) -> int:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return int(stat[stat.rfind(")") + 2 :].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def children(pid: int) -> list[int]:
    """Direct children of ``pid`` (all threads)."""
    out = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            out += [int(c) for c in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
    except OSError:
        pass
    return out


def _local_backend_problem() -> str | None:
    from rlvr_lab.sandbox.backend import SandboxUnavailable
    from rlvr_lab.sandbox.local import check_available

    try:
        check_available()
    except SandboxUnavailable as exc:
        return str(exc)
    return None


#: Skip marker for tests that need the local namespace sandbox, with the reason it is unavailable.
_PROBLEM = _local_backend_problem()
needs_local_sandbox = pytest.mark.skipif(_PROBLEM is not None, reason=f"local sandbox unavailable: {_PROBLEM}")


#: The port the gallery's network_fetch exploit connects to (its "outside world").
ANSWER_PORT = 47811


def answer_port_lock() -> int:
    """Hold the answer port for this process: an exclusive lock (across xdist workers and checkouts) that
    tests/test_redteam.py and tests/test_backends.py take before they listen on :data:`ANSWER_PORT`.
    Returns the descriptor; closing it releases the lock."""
    path = os.path.join(tempfile.gettempdir(), f"rlvr-answer-port-{ANSWER_PORT}.lock")
    fd = os.open(path, os.O_RDONLY | os.O_CREAT, 0o644)  # read-only is enough for flock (shared /tmp)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


class AnswerServer:
    """127.0.0.1:ANSWER_PORT hands out ``payload`` (the network exploit's "outside world") and counts
    callers; it holds :func:`answer_port_lock` while it listens."""

    def __init__(self, payload: bytes):
        self.payload = payload
        self.connections = 0
        self._port_lock = answer_port_lock()  # another test file may be listening in another worker
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", ANSWER_PORT))
        self.sock.listen(8)
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            with conn:
                try:
                    conn.settimeout(2)
                    conn.recv(100)
                    conn.sendall(self.payload)
                except OSError:
                    pass

    def close(self) -> None:
        # shutdown first: close() alone leaves the thread blocked in accept() holding the port open
        # (listening, with no descriptor left) for as long as this process lives
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        os.close(self._port_lock)


class BusyHost:
    """Three busy processes per CPU, for the duration of a ``with`` block."""

    def __enter__(self):
        self.procs = [
            subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(3 * (os.cpu_count() or 1))
        ]
        time.sleep(0.5)
        return self

    def __exit__(self, *exc):
        for proc in self.procs:
            proc.kill()
        for proc in self.procs:
            proc.wait()


#: Burns one second of CPU time when the solution module is imported, then behaves as the good solution.
NEEDS_ONE_CPU_SECOND = "import time as _t\n_end = _t.process_time() + 1.0\nwhile _t.process_time() < _end:\n    pass\n"
BLOCKS_FOREVER = "import time as _t\n_t.sleep(3600)\n"


def check_busy_host(verifier, wall_s: float = 3.0):
    """On a busy host, a correct candidate passes; a blocked one times out between ``wall_s`` and the cap,
    and its detail names the contention. Returns the correct candidate's verdict."""
    limits = Limits(wall_s=wall_s, cpu_s=10, memory_mb=256, processes=16, file_mb=4, open_files=64, output_kb=64)
    fixture = function_fixture(limits=limits)
    with BusyHost():
        slow = verifier.verify(candidate("", prefix=NEEDS_ONE_CPU_SECOND), fixture)
        hang = verifier.verify(candidate("", prefix=BLOCKS_FOREVER), fixture)
    assert slow.outcome == "pass", slow.trials
    # the blocked one is still a timeout (a fail), no later than the cap, and the detail says why it ran long
    assert hang.outcome == "fail" and hang.trials[0].reason == "timeout", hang.trials
    assert wall_s < hang.trials[0].duration_s < STRETCH_MAX * wall_s + GRACE_S
    assert "host CPU contention" in hang.trials[0].detail
    return slow


def _rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def trusted_peak_rss_kb(verifier, work) -> tuple[object, int]:
    """Run ``work()`` while sampling, every 5 ms, the resident memory of the verifier's trusted processes:
    its runner and the runner's descendants in the runner's own PID namespace (a sandbox's processes live in
    namespaces of their own, a docker sandbox outside this tree). Returns work's result and the largest
    single-process RSS seen, in kB."""
    import threading

    runner = verifier.runner_pid
    own_ns = os.readlink(f"/proc/{runner}/ns/pid")
    peak, done = [0], threading.Event()

    def sample():
        while not done.is_set():
            for pid in [runner, *_descendants(runner)]:
                try:
                    if os.readlink(f"/proc/{pid}/ns/pid") != own_ns:
                        continue
                except OSError:
                    continue
                peak[0] = max(peak[0], _rss_kb(pid))
            time.sleep(0.005)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        result = work()
    finally:
        done.set()
        thread.join()
    return result, peak[0]


#: A candidate whose replies are tiny objects by the million: a few bytes of JSON each, 56 bytes or more
#: each once the trusted side decodes them, and the hidden test keeps every reply.
DECODE_BOMB = "def f(n):\n    return [[]] * n\n"
DECODE_BOMB_TEST = (
    "from solution import f\n\nKEPT = []\n\n\ndef test_keeps_every_reply():\n"
    "    for _ in range(30):\n        KEPT.append(f(1_000_000))\n    assert len(KEPT) == 30\n"
)


def decode_bomb_fixture() -> Fixture:
    """``function_fixture`` with :data:`DECODE_BOMB_TEST` as its hidden test and time for the bomb to go off
    (30 replies of a million empty lists: about 1.8 GB on the trusted side if nothing bounds it)."""
    from dataclasses import replace

    limits = Limits(wall_s=20.0, cpu_s=20, memory_mb=256, processes=16, file_mb=4, open_files=64, output_kb=64)
    return replace(
        function_fixture(limits=limits),
        files={"solution.py": "def f(n):\n    pass\n"},
        hidden_tests={"test_hidden.py": DECODE_BOMB_TEST},
    )


#: The cheap tells of a verifier's sandbox a candidate might look for (issue 27): a service uid, a telling
#: hostname, and any name it can see that mentions the verifier.
_TELLS = """
import os, socket, sys

WORDS = ("rlvr", "sandbox", "verif", "workspace", "chan", "grader", "zygote")
#: Where the sandbox mounts things (the host's own mounts elsewhere belong to the machine, not the check).
OURS = ("/home", "/opt", "/run", "/tmp", "/var/tmp", "/dev/shm")


def _read(path):
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _graded():
    seen = [os.getcwd(), socket.gethostname(), *os.environ, *os.environ.values(), *sys.path, *sys.orig_argv]
    seen += [_read(f"/proc/{p}/{f}") for p in ("self", "1") for f in ("cmdline", "comm")]
    for line in _read("/proc/self/mountinfo").splitlines():
        root, point = line.split()[3:5]  # the mount's source path in its filesystem, and where it is mounted
        if point.startswith(OURS):
            seen += [root, point]
    for folder in ("/", "/run", "/home", "/opt", "/tmp", "/var", ".."):
        try:
            seen += os.listdir(folder)
        except OSError:
            pass
    service_id = os.getuid() >= 60000 or os.getgid() >= 60000
    return service_id or socket.gethostname() in ("sandbox", "verifier") or any(
        w in str(s).lower() for s in seen for w in WORDS
    )
"""

#: Right only where it believes it is graded (a tell is present), wrong everywhere else.
TELL_SEEKER = _TELLS + "\n\ndef double(x):\n    return 2 * x if _graded() else 2 * x + 1\n"
#: The control: right only where it sees no tell (so its pass shows the check itself runs cleanly).
TELL_BLIND = _TELLS + "\n\ndef double(x):\n    return 2 * x + 1 if _graded() else 2 * x\n"
