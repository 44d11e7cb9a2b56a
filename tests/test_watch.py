"""rlvr_lab.verifier.watch: the candidate's wakeups as the trusted side counts them (issue 27).

Real processes, real kernel counters: a process whose thread is blocked on an event makes no context
switch, one whose thread wakes on a 10 ms timer makes many; a sandbox that is bound but cannot be located
makes every count raise instead of reading zero.
"""

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from rlvr_lab.verifier import watch
from rlvr_lab.verifier.fixtures import load_fixture, load_reference
from verifier_helpers import needs_local_sandbox

BLOCKED = "import sys, threading\nsys.stdout.write('up\\n'); sys.stdout.flush()\nthreading.Event().wait()\n"
POLLING = (
    "import sys, threading\nsys.stdout.write('up\\n'); sys.stdout.flush()\n"
    "e = threading.Event()\nwhile not e.wait(0.01):\n    pass\n"
)


def _wakeups_of(source: str, supervisor: bool, watch_s: float = 0.4) -> int:
    """Start ``source`` (under a shell when ``supervisor``, so the counted process is the shell's child),
    wait until it is up and blocked, and count its wakeups over ``watch_s``."""
    argv = [sys.executable, "-c", source]
    if supervisor:
        argv = ["sh", "-c", 'trap "" TERM; "$@"; exit 0', "sh", *argv]  # a shell that waits for its child
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert proc.stdout.readline() == "up\n"
        time.sleep(0.2)  # past the interpreter's start-up: the thread is in its wait now
        watch.bind(lambda: (proc.pid, supervisor))
        before = watch.wakeups()
        time.sleep(watch_s)
        return watch.wakeups() - before
    finally:
        watch.unbind()
        os.killpg(proc.pid, signal.SIGKILL)  # the shell and its child alike
        proc.wait()


@pytest.mark.parametrize("supervisor", [False, True])
def test_a_blocked_thread_makes_no_wakeup_and_a_timer_makes_many(supervisor):
    assert _wakeups_of(BLOCKED, supervisor) == 0
    assert _wakeups_of(POLLING, supervisor) >= 10


def test_the_tree_leaves_out_a_supervisor_and_takes_every_descendant():
    proc = subprocess.Popen(["sh", "-c", "sleep 30 & sleep 30 & wait"], start_new_session=True)
    try:
        for _ in range(100):
            below = watch.process_tree(proc.pid, supervisor=True)
            if len(below) == 2:
                break
            time.sleep(0.02)
        assert len(below) == 2 and proc.pid not in below
        assert sorted(watch.process_tree(proc.pid, supervisor=False)) == sorted([proc.pid, *below])
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def test_the_root_crosses_a_pipe_once_and_unknown_fails_closed():
    r, w = os.pipe()
    watch.write_root(w, (os.getpid(), False))
    watch.bind(r)
    try:
        assert watch.root() == (os.getpid(), False)
        assert watch.root() == (os.getpid(), False)  # read once, remembered
    finally:
        watch.unbind()
    r, w = os.pipe()
    watch.write_root(w, None)  # the backend could not tell
    watch.bind(r)
    try:
        for _ in range(2):
            with pytest.raises(RuntimeError, match="could not be located"):
                watch.wakeups()
    finally:
        watch.unbind()


def test_unbound_it_counts_this_process_without_the_caller():
    assert watch.root() is None
    stop = threading.Event()
    thread = threading.Thread(target=lambda: [stop.wait(0.01) for _ in range(1000) if not stop.is_set()])
    thread.start()
    try:
        before = watch.wakeups()
        time.sleep(0.3)
        assert watch.wakeups() - before >= 5
    finally:
        stop.set()
        thread.join()


@needs_local_sandbox
@pytest.mark.parametrize("backend", ["local", "process"])
def test_polling_hidden_in_the_standard_library_is_rejected(backend):
    """repair_accept_v3 on the local backends: the good repair passes all K trials, the two patches that
    make waiters poll by patching threading in their own process fail the first, for polling."""
    from rlvr_lab.verifier import Verifier

    fx = load_fixture("pool_repair_01")
    verifier = Verifier(backend=backend)
    try:
        good = verifier.verify(load_reference("pool_repair_01", "good"), fx)
        assert good.outcome == "pass" and len(good.trials) == fx.trials, good.stop_reason
        for patch in ("bad_patched_wait", "bad_patched_sleep", "bad_patched_lock"):
            verdict = verifier.verify(load_reference("pool_repair_01", patch), fx)
            assert verdict.outcome == "fail" and verdict.stop_reason.startswith("rejected at trial 1 "), patch
            assert "it polls instead of being notified" in verdict.trials[0].detail
    finally:
        verifier.close()
