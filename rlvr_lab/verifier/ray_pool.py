"""The verifier fleet on a Ray cluster: verifier slots beyond one machine, with faults (section 17.9.5).

:class:`RayVerifierPool` has the futures API of :class:`~rlvr_lab.verifier.pool.VerifierPool`
(``submit``, ``submit_many``, ``map``, a bounded queue with backpressure, ``close``), but each slot is a
Ray actor that owns one :class:`~rlvr_lab.verifier.verifier.Verifier` (its trusted runner, zygote and
sandbox uid) on whichever node Ray placed it; slots are spread over the nodes. Verdicts and their
evidence are the slot's own, unchanged, with ``node`` recording where they were produced. Ray is an
optional extra (``pip install 'rlvr-lab[fleet]'``); importing :mod:`rlvr_lab.verifier` never needs it.

The queue lives with the caller (the trainer): one driver thread per slot takes an entry and sends its
candidates to its actor one at a time, so a slot keeps a fixture's tests collected between them.

Faults are the chapter's faults. A slot whose worker process or node dies mid-verification (the Ray
call raises ``RayActorError``, ``NodeDiedError``, ...), or that does not answer within the verification
budget, leaves the candidate *pending*: never pass, never fail. The candidate and the rest of its entry
go back to the head of the queue for a *different* slot (any slot after ``AVOID_S`` seconds), the lost
attempt is logged in :attr:`RayVerifierPool.faults` and counted in the verdict's ``attempts``, and the
dead slot is replaced by a fresh actor wherever Ray finds room. After ``lost_retries`` lost attempts the candidate's
verdict is ``unknown`` with the reason: a verdict is never silently dropped, and the trainer's
complete-group rule (:func:`rlvr_lab.records.close_group`) sees it like any unresolved member.

``pool.meter`` measures arrivals, service time, waits and backpressure (:mod:`rlvr_lab.verifier.meter`).
"""

from __future__ import annotations

import inspect
import os
import threading
import time
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass, replace
from typing import Iterable

from rlvr_lab.verifier.meter import PoolMeter
from rlvr_lab.verifier.pool import PoolClosed, PoolFront, PoolFull, VerifierPool, request_candidates
from rlvr_lab.verifier.wire import verify_budget_s
from rlvr_lab.verifier.schema import Candidate, Fixture, Verdict
from rlvr_lab.verifier.verifier import START_TIMEOUT_S


def ray_module(who: str = "RayVerifierPool"):
    """``ray``, or an ImportError saying that ``who`` needs the ``fleet`` extra."""
    try:
        import ray
    except ImportError as exc:  # depends on the environment
        raise ImportError(f"{who} needs Ray: pip install 'rlvr-lab[fleet]'") from exc
    return ray


_SLOT = None
#: Seconds a lost entry waits for a slot other than the one it was lost on before any slot may take it.
AVOID_S = 10.0


def _slot_class():
    """The actor class, defined on first use so that this module imports without Ray."""
    global _SLOT
    if _SLOT is None:
        ray = ray_module()

        class VerifierSlot:
            """One verifier slot on one node: a Verifier and the node's name."""

            def __init__(self, backend: str, retries: int, seed: int | None):
                from rlvr_lab.verifier.verifier import Verifier

                self.verifier = Verifier(backend=backend, retries=retries, seed=seed)
                node_id = ray.get_runtime_context().get_node_id()
                self.node = f"{ray.util.get_node_ip_address()}/{node_id[:12]}"

            def info(self) -> dict:
                return {"node": self.node, "pid": os.getpid(), "runner_pid": self.verifier.runner_pid,
                        "backend": self.verifier._backend_name}

            def verify(self, candidate: Candidate, fixture: Fixture, trials: int | None):
                started = time.perf_counter()
                verdict = self.verifier.verify(candidate, fixture, trials)
                return replace(verdict, node=self.node), time.perf_counter() - started

            def close(self) -> None:
                self.verifier.close()

        _SLOT = ray.remote(max_restarts=0, max_task_retries=0, max_concurrency=1)(VerifierSlot)
    return _SLOT


@dataclass(frozen=True)
class LostAttempt:
    """One verification lost with its slot (the candidate was pending and went back to the queue)."""

    candidate_digest: str
    fixture: str
    slot: int
    node: str
    error: str
    retried: bool
    """False when ``lost_retries`` was exhausted and the verdict became ``unknown``."""


class _Entry:
    """Candidates of one ``submit_many`` still to verify, with their futures and lost-attempt counts."""

    def __init__(self, futures, candidates, fixture, trials, admitted, lost=None, avoid=-1):
        self.futures, self.candidates, self.fixture, self.trials = futures, candidates, fixture, trials
        self.admitted, self.lost, self.avoid = admitted, lost or [0] * len(candidates), avoid
        self.avoid_until = time.monotonic() + AVOID_S


class RayVerifierPool(PoolFront):
    """``workers`` verifier slots as Ray actors over a cluster (module docstring).

    ``address``: a Ray cluster to join (``"auto"``: the one started on this machine with ``ray start``;
    ``"ray://host:10001"`` or ``"host:6379"``); None starts a private Ray on this machine. When Ray is
    already initialized in this process it is used as it is. ``backend``, ``retries``, ``seed``,
    ``max_queue``: as :class:`~rlvr_lab.verifier.pool.VerifierPool` (``backend`` None: VerifierPool's
    default; each slot resolves it on its own node, so ``auto`` picks what that machine has; ``retries``
    is the slot's own retries after a runner fault). ``lost_retries``: times a candidate lost with its
    slot is sent again before its verdict is ``unknown``. ``slot_cpus``: logical CPUs Ray reserves for each slot.
    ``call_timeout_s``: seconds without an answer after which a slot counts as lost (None: derived from
    the fixture's limits, like the slot's own budget).
    """

    def __init__(self, workers: int = 2, backend: str | None = None, max_queue: int = 64, retries: int = 1,
                 seed: int | None = None, address: str | None = None, lost_retries: int = 2,
                 slot_cpus: float = 1.0, call_timeout_s: float | None = None):
        if isinstance(workers, bool) or not isinstance(workers, int) or not 1 <= workers <= 1024:
            raise ValueError(f"workers must be an integer in [1, 1024], got {workers!r}")
        if isinstance(max_queue, bool) or not isinstance(max_queue, int) or max_queue < 1:
            raise ValueError(f"max_queue must be an integer >= 1, got {max_queue!r}")
        if isinstance(retries, bool) or not isinstance(retries, int) or not 0 <= retries <= 10:
            raise ValueError(f"retries must be an integer in [0, 10], got {retries!r}")
        if isinstance(lost_retries, bool) or not isinstance(lost_retries, int) or not 0 <= lost_retries <= 10:
            raise ValueError(f"lost_retries must be an integer in [0, 10], got {lost_retries!r}")
        if not isinstance(slot_cpus, (int, float)) or isinstance(slot_cpus, bool) or slot_cpus < 0:
            raise ValueError(f"slot_cpus must be a number >= 0, got {slot_cpus!r}")
        if call_timeout_s is not None and not call_timeout_s > 0:
            raise ValueError(f"call_timeout_s must be > 0 or None, got {call_timeout_s!r}")
        from rlvr_lab.sandbox.backend import BACKENDS

        if backend is None:  # whatever the one-machine pool defaults to
            backend = inspect.signature(VerifierPool).parameters["backend"].default
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
        ray = self._ray = ray_module()
        self.workers, self.max_queue, self.lost_retries = workers, max_queue, lost_retries
        self._backend_arg, self._retries, self._seed = backend, retries, seed
        self._slot_cpus, self._call_timeout = slot_cpus, call_timeout_s
        self._owns_ray = not ray.is_initialized()
        if self._owns_ray:
            kwargs = dict(include_dashboard=False, log_to_driver=False, logging_level="WARNING")
            if address is None:
                kwargs.update(num_cpus=max(int(round(workers * slot_cpus)), 1), object_store_memory=80 * 2**20)
            ray.init(address=address, **kwargs)
        self.meter = PoolMeter(workers)
        self.faults: list[LostAttempt] = []
        self._cv = threading.Condition()
        self._waiting: deque[_Entry] = deque()
        self._retry: deque[_Entry] = deque()
        self._closed = False
        self._busy = 0
        self._generation = [0] * workers
        self._current: list[str | None] = [None] * workers  # digest of the candidate each slot verifies
        self.slots: list = [None] * workers
        self.slot_info: list[dict] = [{}] * workers
        try:
            handles = [self._spawn(i) for i in range(workers)]
            infos = [self._info(h) for h in handles]
        except BaseException:
            for h in self.slots:
                if h is not None:
                    ray.kill(h)
            if self._owns_ray:
                ray.shutdown()
            raise
        self.slot_info = infos
        self.backend = infos[0]["backend"]
        self._threads = [threading.Thread(target=self._work, args=(i,), name=f"ray-verifier-slot-{i}", daemon=True)
                         for i in range(workers)]
        for t in self._threads:
            t.start()

    # -- slots ---------------------------------------------------------------------------------------
    def _spawn(self, i: int):
        seed = None if self._seed is None else self._seed + 1_000_003 * i + 7 * self._generation[i]
        handle = _slot_class().options(num_cpus=self._slot_cpus, scheduling_strategy="SPREAD").remote(
            self._backend_arg, self._retries, seed)
        self.slots[i] = handle
        return handle

    def _info(self, handle) -> dict:
        ray = self._ray
        try:
            return ray.get(handle.info.remote(), timeout=START_TIMEOUT_S + 60)
        except ray.exceptions.RayActorError as exc:  # the slot failed to start: say why
            cause = getattr(exc, "cause", None) or getattr(exc, "error_msg", "")
            if isinstance(cause, BaseException):
                raise cause from None
            if "SandboxUnavailable" in str(exc):
                from rlvr_lab.sandbox.backend import SandboxUnavailable

                raise SandboxUnavailable(str(exc)) from None
            raise

    def _replace(self, i: int) -> None:
        """Kill slot ``i`` (it may only be unresponsive) and start a fresh actor until one answers."""
        ray = self._ray
        try:
            ray.kill(self.slots[i], no_restart=True)
        except Exception:
            pass
        delay = 0.5
        while not self._closed:
            self._generation[i] += 1
            handle = self._spawn(i)
            try:
                self.slot_info[i] = self._info(handle)
                return
            except Exception:
                try:
                    ray.kill(handle, no_restart=True)
                except Exception:
                    pass
                time.sleep(delay)
                delay = min(delay * 2, 10.0)

    def _budget(self, fixture: Fixture, trials: int | None) -> float:
        if self._call_timeout is not None:
            return self._call_timeout
        k = fixture.trials if trials is None else trials
        return (self._retries + 1) * verify_budget_s(k, fixture.limits.wall_s) + START_TIMEOUT_S

    # -- the queue -----------------------------------------------------------------------------------
    def _take(self, i: int) -> _Entry | None:
        """Next entry for slot ``i``: a lost entry it did not lose (or lost over ``AVOID_S`` ago), else a new
        one; None to stop."""
        with self._cv:
            while True:
                for entry in self._retry:
                    if entry.avoid != i or self.workers == 1 or time.monotonic() > entry.avoid_until:
                        self._retry.remove(entry)
                        self._busy += 1
                        return entry
                if self._waiting:
                    self._busy += 1
                    entry = self._waiting.popleft()
                    self._cv.notify_all()  # room in the queue for a blocked producer
                    return entry
                if self._closed and not self._retry and self._busy == 0:
                    return None
                self._cv.wait(1.0 if self._retry else None)

    def _work(self, i: int) -> None:
        while True:
            entry = self._take(i)
            if entry is None:
                return
            try:
                self._run(i, entry)
            finally:
                with self._cv:
                    self._busy -= 1
                    self._cv.notify_all()

    def _run(self, i: int, entry: _Entry) -> None:
        ray = self._ray
        for j, (future, candidate) in enumerate(zip(entry.futures, entry.candidates)):
            if not future.running() and not future.set_running_or_notify_cancel():
                continue
            try:
                ref = self.slots[i].verify.remote(candidate, entry.fixture, entry.trials)
                self._current[i] = candidate.digest
                verdict, service_s = ray.get(ref, timeout=self._budget(entry.fixture, entry.trials))
            except ray.exceptions.RayTaskError as exc:  # the verification itself raised (bad input, ...)
                cause = getattr(exc, "cause", None)
                self.meter.served(entry.admitted, 0.0, 0)
                future.set_exception(cause if isinstance(cause, BaseException) else exc)
                continue
            except (ray.exceptions.RayError, TimeoutError) as exc:  # slot, worker or node lost: pending
                self._lost(i, entry, j, exc)
                return
            finally:
                self._current[i] = None
            self.meter.served(entry.admitted, service_s, len(verdict.trials))
            lost = entry.lost[j]
            future.set_result(replace(verdict, attempts=verdict.attempts + lost) if lost else verdict)

    def _lost(self, i: int, entry: _Entry, j: int, exc: BaseException) -> None:
        """Candidate ``j`` of ``entry`` was pending when slot ``i`` was lost: retry it elsewhere."""
        candidate, future = entry.candidates[j], entry.futures[j]
        entry.lost[j] += 1
        retried = entry.lost[j] <= self.lost_retries
        error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:300]
        self.faults.append(LostAttempt(candidate.digest, entry.fixture.name, i, self.slot_info[i].get("node", ""),
                                       error, retried))
        start = j
        if not retried:
            self.meter.served(entry.admitted, 0.0, 0)
            fx = entry.fixture
            future.set_result(Verdict(
                outcome="unknown", candidate_digest=candidate.digest, fixture=fx.name, fixture_version=fx.version,
                checker_version=fx.checker_version, backend=self.backend, attempts=entry.lost[j],
                stop_reason=f"verifier slot lost {entry.lost[j]} times (last: {error})",
                node=self.slot_info[i].get("node", "")))
            start = j + 1
        if start < len(entry.candidates):
            rest = _Entry(entry.futures[start:], entry.candidates[start:], entry.fixture, entry.trials,
                          entry.admitted, entry.lost[start:], avoid=i)
            with self._cv:
                self._retry.append(rest)
                self._cv.notify_all()
        self._replace(i)

    # -- the futures API -----------------------------------------------------------------------------
    def submit_many(self, candidates: Iterable[Candidate], fixture: Fixture, trials: int | None = None,
                    block: bool = True, timeout: float | None = None) -> "list[Future[Verdict]]":
        """Queue several verifications against one fixture as one entry (as VerifierPool.submit_many)."""
        candidates = request_candidates(candidates, fixture)
        asked = time.perf_counter()
        deadline = None if timeout is None else asked + timeout
        with self._cv:
            while True:
                if self._closed:
                    raise PoolClosed("submit after close()")
                if len(self._waiting) < self.max_queue:
                    break
                left = None if deadline is None else deadline - time.perf_counter()
                if not block or (left is not None and left <= 0):
                    raise PoolFull(f"the verification queue holds {self.max_queue} requests")
                self._cv.wait(left)
            futures: list[Future] = [Future() for _ in candidates]
            admitted = self.meter.arrived(len(candidates), time.perf_counter() - asked)
            self._waiting.append(_Entry(futures, candidates, fixture, trials, admitted))
            self._cv.notify_all()
        return futures

    @property
    def queued(self) -> int:
        """Entries waiting for a slot, lost ones included."""
        with self._cv:
            return len(self._waiting) + len(self._retry)

    def in_flight(self) -> dict[int, str]:
        """``{slot: candidate digest}`` for every slot inside a verification right now (a snapshot)."""
        return {i: digest for i, digest in enumerate(list(self._current)) if digest is not None}

    def nodes(self) -> list[str]:
        """The node of each slot, in slot order."""
        return [info.get("node", "") for info in self.slot_info]

    def close(self, cancel_pending: bool = False) -> None:
        """Stop accepting work, finish (or cancel) what is queued, stop the actors. Idempotent."""
        with self._cv:
            if self._closed:
                return
            self._closed = True
            if cancel_pending:
                for entry in self._waiting:
                    for future in entry.futures:
                        future.cancel()
                self._waiting.clear()
            self._cv.notify_all()
        for t in self._threads:
            t.join()
        ray = self._ray
        for handle in self.slots:
            try:
                ray.get(handle.close.remote(), timeout=30)
            except Exception:
                pass
            try:
                ray.kill(handle, no_restart=True)
            except Exception:
                pass
        if self._owns_ray:
            ray.shutdown()

    def __enter__(self) -> "RayVerifierPool":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
