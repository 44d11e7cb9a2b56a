"""Infrastructure faults mid-run give pending (retry possible) or unknown (retries exhausted), never
pass or fail: the trusted pytest process, the whole runner, the sandbox's init and the zygote are
killed from outside while a trial is running."""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path

import pytest

from rlvr_lab.verifier import Verifier
from verifier_helpers import _comm, candidate, children, function_fixture, needs_local_sandbox, sandbox_processes

pytestmark = needs_local_sandbox

SLOW = "import time\n_real = double\ndef double(x):\n    time.sleep(0.8)\n    return _real(x)\n"


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return ""


def zygote_of(v: Verifier) -> int | None:
    for pid in children(v.runner_pid):
        if "sandbox/zygote.py" in cmdline(pid):
            return pid
    return None


def kill_when(find, sig=signal.SIGKILL, timeout=10.0) -> threading.Thread:
    """Kill the first pid ``find()`` returns (polling), from a background thread."""
    import os

    def loop():
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pid = find()
            if pid:
                time.sleep(0.2)  # let the trial reach the slow call
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
                return
            time.sleep(0.01)

    thread = threading.Thread(target=loop)
    thread.start()
    return thread


@pytest.fixture()
def verifier():
    v = Verifier(backend="local", retries=0, seed=5)
    v.verify(candidate(""), function_fixture())  # warm: zygote and hidden tests in place
    yield v
    v.close()


def test_killing_the_pytest_process_gives_pending(verifier):
    def pytest_child():
        zygote = zygote_of(verifier)
        others = [p for p in children(verifier.runner_pid) if p != zygote]
        return others[0] if others else None

    killer = kill_when(pytest_child)
    verdict = verifier.verify(candidate(SLOW), function_fixture())
    killer.join()
    assert verdict.outcome == "pending"
    assert verdict.reward is None
    assert "runner process ended abnormally" in verdict.stop_reason
    # the killed sandbox is reaped behind the verdict, before the slot's next trial starts
    deadline = time.monotonic() + 2.0
    while sandbox_processes(verifier) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sandbox_processes(verifier) == []


def test_killing_the_sandbox_init_gives_pending(verifier):
    # the running trial's init, not the one the zygote built for the next trial
    zygote = zygote_of(verifier)
    if "user-ns" in verifier.isolation:  # the inits are children of the zygote's PID 1 (its one child)
        zygote = children(zygote)[0]
    stale = {k for k in children(zygote) if _comm(k) != "rlvr-warm-init"}

    def sandbox_init():
        kids = [k for k in children(zygote) if _comm(k) != "rlvr-warm-init" and k not in stale]
        return kids[0] if kids else None

    killer = kill_when(sandbox_init)
    verdict = verifier.verify(candidate(SLOW), function_fixture())
    killer.join()
    assert verdict.outcome == "pending"
    assert "sandbox failed (infrastructure)" in verdict.stop_reason
    assert sandbox_processes(verifier) == []
    assert verifier.verify(candidate(""), function_fixture()).outcome == "pass"  # the slot recovers


def test_killing_the_zygote_gives_pending_and_recovers(verifier):
    def zygote_in_use():
        zygote = zygote_of(verifier)
        return zygote if zygote and children(zygote) else None

    killer = kill_when(zygote_in_use)
    verdict = verifier.verify(candidate(SLOW), function_fixture())
    killer.join()
    assert verdict.outcome == "pending"
    assert sandbox_processes(verifier) == []
    assert verifier.verify(candidate(""), function_fixture()).outcome == "pass"


def test_killing_the_runner_every_attempt_gives_unknown():
    v = Verifier(backend="local", retries=1, seed=6)
    try:
        v.verify(candidate(""), function_fixture())
        stop = threading.Event()
        killed = []

        def assassin():
            import os

            while not stop.is_set():
                pid = v.runner_pid
                if pid and children(pid) and len(children(pid)) >= 2:  # zygote + a pytest child: mid-trial
                    time.sleep(0.2)
                    try:
                        os.kill(pid, signal.SIGKILL)
                        killed.append(pid)
                    except ProcessLookupError:
                        pass
                    while v.runner_pid == pid and not stop.is_set():
                        time.sleep(0.01)
                time.sleep(0.01)

        thread = threading.Thread(target=assassin)
        thread.start()
        verdict = v.verify(candidate(SLOW), function_fixture())
        stop.set()
        thread.join()
        assert verdict.outcome == "unknown"
        assert verdict.attempts == 2
        assert len(killed) == 2
        assert verdict.reward is None
        deadline = time.monotonic() + 3
        while sandbox_processes(v) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sandbox_processes(v) == []
    finally:
        v.close()
