"""How often the candidate's processes woke up, seen from the trusted side (section 17.7, isolation).

A thread blocked on a lock, a condition or an event wakes only when something wakes it. A waiter that
wakes again and again while nothing was released is polling, and polling is what a candidate falls back on
when it hides a missing notify by patching the standard library in its own process (``Condition.wait``,
``Event.wait``, ``Lock.acquire``, ``time.sleep`` or ``time.monotonic``): its waiters then meet any latency
bound a test can afford, but they wake on a timer. A hidden test can therefore block a waiter, let nothing
happen for a while, and count the candidate's wakeups meanwhile with :func:`wakeups`. The count is the
kernel's (voluntary and involuntary context switches of every thread of every process of the candidate's,
read from ``/proc``) and is read by the trusted test process, outside the sandbox: nothing the candidate
runs can change it. The candidate's processes are the sandbox's server and everything below it; a
supervisor above them (the sandbox's init, docker's init, which wake on timers of their own) is left out.

The runner hands the test process the sandbox's root process through :func:`bind` (a pipe it writes the
root to once the backend knows it, or a function returning it). With nothing bound the candidate runs in
this very process (a naive harness, or an in-process test): then every thread but the caller's is counted.

>>> bind(lambda: (os.getpid(), False)); wakeups() >= 0; unbind()
True
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

from rlvr_lab.sandbox.confine import children_of

#: Seconds :func:`root` waits for the runner to write the sandbox's root.
ROOT_WAIT_S = 5.0
#: The name hidden tests import: a fixture whose tests mention it gets its sandbox's root bound.
MODULE = __name__

_source: int | Callable[[], tuple[int, bool] | None] | None = None
_root: tuple[int, bool] | None = None
_unknown = False  # a sandbox was bound but its root could not be learnt
_lock = threading.Lock()


def bind(source: int | Callable[[], tuple[int, bool] | None]) -> None:
    """Where the sandbox's root comes from: a pipe's read end (the runner writes ``"PID SUPERVISOR\\n"``,
    SUPERVISOR 1 when the process at PID only supervises the candidate's processes below it), or a function
    returning ``(pid, supervisor)``. Read on the first :func:`root`, not before."""
    global _source, _root, _unknown
    with _lock:
        _source, _root, _unknown = source, None, False


def unbind() -> None:
    """Forget the bound sandbox (the candidate is then taken to run in this process)."""
    bind(None)


def write_root(fd: int, root: tuple[int, bool] | None) -> None:
    """The runner's side of the pipe: write ``root`` (or nothing known, ``"0 0"``) and close ``fd``."""
    pid, supervisor = root or (0, False)
    try:
        os.write(fd, f"{pid} {int(supervisor)}\n".encode())
    except OSError:
        pass  # the test process is gone
    finally:
        os.close(fd)


def _read_root(fd: int) -> tuple[int, bool] | None:
    import select

    data = b""
    while not data.endswith(b"\n"):
        ready, _, _ = select.select([fd], [], [], ROOT_WAIT_S)
        chunk = os.read(fd, 64) if ready else b""
        if not chunk:
            break
        data += chunk
    os.close(fd)
    parts = data.split()
    if len(parts) != 2 or not parts[0].isdigit() or int(parts[0]) <= 0:
        return None
    return int(parts[0]), parts[1] == b"1"


def root() -> tuple[int, bool] | None:
    """``(pid, supervisor)`` of the bound sandbox, or None when none is bound.

    Raises ``RuntimeError`` when a sandbox is bound but its root could not be learnt: a check that cannot
    see the candidate must not pass by default.
    """
    global _root, _source, _unknown
    with _lock:
        if _source is not None:
            source, _source = _source, None
            _root = _read_root(source) if isinstance(source, int) else source()
            _unknown = _root is None
        if _unknown:
            raise RuntimeError("the sandbox's processes could not be located")
        return _root


def process_tree(pid: int, supervisor: bool) -> list[int]:
    """The pids of the candidate's processes: ``pid`` and every process below it, less ``pid`` itself when
    it is a ``supervisor``."""
    found, frontier = [] if supervisor else [pid], {pid}
    while frontier:
        below = children_of(frontier)
        found += below
        frontier = set(below)
    return found


def context_switches(pids: list[int], skip_tids: frozenset[int] = frozenset()) -> int:
    """Voluntary plus involuntary context switches of every thread of ``pids`` (threads that ended are
    not counted; a process that ended is skipped)."""
    total = 0
    for pid in pids:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            if int(tid) in skip_tids:
                continue
            try:
                with open(f"/proc/{pid}/task/{tid}/status", encoding="ascii", errors="replace") as fh:
                    for line in fh:
                        if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                            total += int(line.split()[1])
            except (OSError, ValueError):
                continue
    return total


def wakeups() -> int:
    """The candidate's context switches so far: take it twice and subtract to count the wakeups between.

    In the bound sandbox's processes, or, with none bound, in this process's other threads.
    """
    found = root()
    if found is None:
        return context_switches([os.getpid()], frozenset({threading.get_native_id()}))
    return context_switches(process_tree(*found))
