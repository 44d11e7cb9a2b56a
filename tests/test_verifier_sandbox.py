"""Hostile candidates against the local backend: each fails, and the host is unharmed.

Every candidate here would *pass* if its attack worked (it returns the right answers only when the probe
succeeds), so a ``fail`` verdict shows the sandbox held, not merely that the candidate was wrong. After
each run no process of the slot uid is left, nothing was written outside the slot, and the hidden tests
are byte-identical.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from pathlib import Path

import pytest

from rlvr_lab.verifier import Verifier
from rlvr_lab.verifier.schema import Limits
from verifier_helpers import (
    HIDDEN,
    TELL_BLIND,
    TELL_SEEKER,
    candidate,
    function_fixture,
    needs_local_sandbox,
    sandbox_processes,
)

pytestmark = needs_local_sandbox

TOKEN = uuid.uuid4().hex[:12]
ESCAPES = [
    f"/tmp/rlvr-escape-{TOKEN}",
    f"/var/tmp/rlvr-escape-{TOKEN}",
    f"/dev/shm/rlvr-escape-{TOKEN}",
    f"/root/rlvr-escape-{TOKEN}",
    str(Path(__file__).resolve().parent / f"rlvr-escape-{TOKEN}"),
]


@pytest.fixture(scope="module")
def verifier():
    v = Verifier(backend="local", retries=0, seed=99)
    yield v
    v.close()


def hidden_files(v: Verifier) -> list[Path]:
    return sorted(Path(v.slot_dir).glob("run/runner/tests/*/test_hidden.py"))


def run(v: Verifier, body: str, prefix: str = "", limits: Limits | None = None):
    verdict = v.verify(candidate(body, prefix), function_fixture(limits=limits))
    deadline = time.monotonic() + 2.0
    while sandbox_processes(v) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sandbox_processes(v) == [], "a sandbox process outlived the trial"
    for path in ESCAPES:
        assert not os.path.exists(path), f"the candidate wrote {path}"
    for path in hidden_files(v):
        assert path.read_text() == HIDDEN
    return verdict


def test_sandbox_identity(verifier):
    """As root the candidate runs as the slot's own uid; without root, in a user namespace with every
    capability dropped, and the verifier says so."""
    if verifier.sandbox_uid is not None:
        assert verifier.sandbox_uid >= 60000 and "slot-uid" in verifier.isolation
    else:
        assert os.geteuid() != 0 or "user-ns" in verifier.isolation
        assert {"user-ns", "no-capabilities"} <= set(verifier.isolation)
    assert verifier.verify(candidate(""), function_fixture()).outcome == "pass"


def test_the_candidate_sees_an_ordinary_machine(verifier):
    """No cheap tell (issue 27): a candidate that is right only when it sees a service uid, a telling
    hostname or a name of the verifier fails; its mirror image, right only when it sees none, passes. Its
    working directory is an ordinary project folder and, as root, it is uid 1000 in its own namespace."""
    assert run(verifier, TELL_SEEKER).outcome == "fail"
    assert run(verifier, TELL_BLIND).outcome == "pass"
    probe = (
        "import os, socket\ndef double(x):\n"
        "    return 2 * x if (os.getcwd(), socket.gethostname()) == ('/home/user/project', 'localhost') else 0\n"
    )
    assert run(verifier, probe).outcome == "pass"
    if verifier.sandbox_uid is not None:
        ids = "import os\ndef double(x):\n    return 2 * x if (os.getuid(), os.getgid()) == (1000, 1000) else 0\n"
        assert run(verifier, ids).outcome == "pass"


def test_a_sandbox_built_ahead_takes_its_own_trials_limits(verifier):
    """The zygote builds the next sandbox's view (scratch mounts, IPC limits) ahead of its trial, for the
    limits of the trial before (``namespaces.prepare_view``). Whatever came before, a trial gets its own:
    ``/tmp`` sized from its file limit and shared memory capped at its memory limit."""

    def probe(limits: Limits) -> str:
        tmp_bytes = max(1, min(64, 2 * limits.file_mb)) * 1024 * 1024
        body = (
            "import os\ndef double(x):\n    st = os.statvfs('/tmp')\n"
            f"    ok = st.f_blocks * st.f_frsize == {tmp_bytes} and "
            f"int(open('/proc/sys/kernel/shmmax').read()) == {limits.memory_mb * 1024 * 1024}\n"
            "    return 2 * x if ok else 0\n"
        )
        return run(verifier, body, limits=limits).outcome

    small = Limits(wall_s=5.0, cpu_s=5, memory_mb=256, processes=16, file_mb=4, open_files=64, output_kb=64)
    large = Limits(wall_s=5.0, cpu_s=5, memory_mb=384, processes=16, file_mb=16, open_files=64, output_kb=64)
    assert [probe(small), probe(large), probe(large), probe(small), probe(small)] == ["pass"] * 5


def test_crash_at_import_fails(verifier):
    verdict = run(verifier, "import os\nos._exit(0)\n")
    assert verdict.outcome == "fail"
    assert verdict.trials[0].reason == "candidate process ended"


def test_segfault_fails(verifier):
    verdict = run(verifier, "import os, signal\ndef double(x):\n    os.kill(os.getpid(), signal.SIGSEGV)\n")
    assert verdict.outcome == "fail"
    assert "SIGSEGV" in verdict.trials[0].detail


def test_sys_exit_in_call_fails(verifier):
    assert run(verifier, "import sys\ndef double(x):\n    sys.exit(0)\n").outcome == "fail"


def test_hang_hits_wall_deadline(verifier):
    limits = Limits(wall_s=1.5, cpu_s=30, memory_mb=256, processes=16, file_mb=4, open_files=64, output_kb=64)
    verdict = run(verifier, "def double(x):\n    while True:\n        pass\n", limits=limits)
    assert verdict.outcome == "fail"
    assert verdict.trials[0].reason == "timeout"


def test_fork_bomb_is_contained(verifier):
    body = (
        "import os\n"
        "def double(x):\n"
        "    while True:\n"
        "        try:\n"
        "            os.fork()\n"
        "        except OSError:\n"
        "            pass\n"
    )
    limits = Limits(wall_s=2.0, cpu_s=30, memory_mb=256, processes=16, file_mb=4, open_files=64, output_kb=64)
    verdict = run(verifier, body, limits=limits)
    assert verdict.outcome == "fail"


def test_memory_bomb_fails(verifier):
    body = "def double(x):\n    blocks = []\n    while True:\n        blocks.append(bytearray(16 * 1024 * 1024))\n"
    verdict = run(verifier, body)
    assert verdict.outcome == "fail"
    assert "MemoryError" in verdict.trials[0].detail or verdict.trials[0].reason != "tests passed"


def test_output_flood_hits_cap(verifier):
    body = "import sys\nfor _ in range(100000):\n    sys.stdout.write('x' * 1000)\n"
    verdict = run(verifier, body)
    assert verdict.outcome == "fail"
    assert verdict.trials[0].reason == "output cap"


def test_network_is_unreachable(verifier):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    port = listener.getsockname()[1]
    abstract = socket.socket(socket.AF_UNIX)
    abstract.bind(f"\0rlvr-{TOKEN}")
    abstract.listen(8)
    body = (
        f"import socket\n_real = double\n"
        f"def double(x):\n"
        f"    s = socket.create_connection(('127.0.0.1', {port}), timeout=1)\n"
        f"    u = socket.socket(socket.AF_UNIX)\n"
        f"    u.connect('\\0rlvr-{TOKEN}')\n"
        f"    return _real(x)\n"
    )
    try:
        verdict = run(verifier, body)
    finally:
        listener.close()
        abstract.close()
    assert verdict.outcome == "fail"
    assert "OSError" in verdict.trials[0].detail or "ConnectionRefusedError" in verdict.trials[0].detail


def test_cannot_read_hidden_tests_or_runner(verifier):
    verifier.verify(candidate(""), function_fixture())  # make sure the hidden tests exist on disk
    targets = [str(p) for p in hidden_files(verifier)]
    assert targets
    body = (
        f"import os\n_real = double\n"
        f"def _leak():\n"
        f"    found = ''\n"
        f"    for p in {targets!r}:\n"
        f"        try:\n"
        f"            found += open(p).read()\n"
        f"        except OSError:\n"
        f"            pass\n"
        f"    for pid in os.listdir('/proc'):\n"
        f"        if pid.isdigit():\n"
        f"            for leaf in ('cmdline', 'environ'):\n"
        f"                try:\n"
        f"                    found += open(f'/proc/{{pid}}/{{leaf}}', 'rb').read().decode('latin-1')\n"
        f"                except OSError:\n"
        f"                    pass\n"
        f"    return found\n"
        f"def double(x):\n"
        f"    text = _leak()\n"
        f"    if 'test_small' in text or 'rlvr_lab.verifier.runner' in text or 'runner' in text:\n"
        f"        return _real(x)\n"
        f"    raise RuntimeError('nothing leaked: ' + text[:200])\n"
    )
    verdict = run(verifier, body)
    assert verdict.outcome == "fail"
    assert "nothing leaked" in verdict.trials[0].detail


def test_setsid_daemon_is_killed(verifier):
    body = (
        "import os, time\n"
        "def double(x):\n"
        "    if os.fork() == 0:\n"
        "        os.setsid()\n"
        "        if os.fork() == 0:\n"
        "            while True:\n"
        "                time.sleep(0.05)\n"
        "        os._exit(0)\n"
        "    time.sleep(0.4)\n"
        "    return -1\n"
    )
    seen = []
    done = threading.Event()

    def watch():
        while not done.is_set():
            seen.append(len(sandbox_processes(verifier)))
            time.sleep(0.05)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        verdict = run(verifier, body)
    finally:
        done.set()
        watcher.join()
    assert verdict.outcome == "fail"
    assert max(seen) >= 2, "the daemon never ran, so the test proves nothing"


def test_writes_outside_the_slot_do_not_land(verifier):
    verifier.verify(candidate(""), function_fixture())
    private = ESCAPES[:3]  # /tmp, /var/tmp, /dev/shm: private tmpfs inside the sandbox, gone afterwards
    protected = ESCAPES[3:] + [str(p) for p in hidden_files(verifier)] + ["solution.py"]
    body = (
        f"_real = double\n"
        f"def double(x):\n"
        f"    for p in {private!r}:\n"
        f"        open(p, 'w').write('private scratch')\n"
        f"    for p in {protected!r}:\n"
        f"        try:\n"
        f"            with open(p, 'a') as fh:\n"
        f"                fh.write('def test_small():\\n    pass\\n')\n"
        f"            return _real(x)\n"
        f"        except OSError:\n"
        f"            pass\n"
        f"    raise RuntimeError('no protected write landed')\n"
    )
    verdict = run(verifier, body)
    assert verdict.outcome == "fail"
    assert "no protected write landed" in verdict.trials[0].detail


def test_killing_the_parent_does_not_help(verifier):
    body = (
        "import os, signal\n_real = double\n"
        "def double(x):\n"
        "    for target in (os.getppid(), 1):\n"
        "        try:\n"
        "            os.kill(target, signal.SIGKILL)\n"
        "        except OSError:\n"
        "            pass\n"
        "    return -1\n"
    )
    verdict = run(verifier, body)
    assert verdict.outcome == "fail"
    assert verdict.trials[0].reason == "test failed in call"


def test_a_killed_sandbox_is_reaped_before_the_next_one_is_handed_out(tmp_path):
    """The zygote answers a kill as soon as init has its SIGKILL (the runner judges meanwhile) and reaps
    it before it reads its next request: by the time a spawn is answered, the killed sandbox is gone."""
    from rlvr_lab.sandbox.factory import make_backend
    from rlvr_lab.verifier.proxy import SERVER_PATH

    backend = make_backend("local", tmp_path / "slot", SERVER_PATH)
    previous = None  # the host pid of the last killed sandbox's init
    try:
        for index in range(5):
            ws = backend.workspace_root / f"w{index}"
            ws.mkdir()
            session = backend.launch(ws, Limits(wall_s=20.0), seed=index)
            root = session.watch_root()  # the spawn's answer: the host pid of this sandbox's init
            assert root is not None
            if previous is not None:
                assert not os.path.exists(f"/proc/{previous}"), "a killed sandbox was still there at the next spawn"
            assert session.kill().kind == "killed"
            session.channel.close()
            previous = root[0]
    finally:
        backend.close()
