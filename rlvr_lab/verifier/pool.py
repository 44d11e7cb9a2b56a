"""A pool of verifier slots behind one bounded queue (sections 17.7 and 17.9.5, verification capacity).

:class:`VerifierPool` runs ``workers`` independent :class:`~rlvr_lab.verifier.verifier.Verifier` slots fed
from one FIFO queue of at most ``max_queue`` requests; ``submit`` returns a Future of a
:class:`~rlvr_lab.verifier.schema.Verdict`. A full queue applies backpressure: ``submit`` blocks (or raises
:class:`PoolFull` with ``block=False`` or after ``timeout``), so the producer slows to the pool's pace. Size
it with :func:`rlvr_lab.cycle_time.verifier_workers` (eq 9).

``submit_many`` queues a whole group for one fixture as one entry, so a slot collects the hidden tests once
per group. With no more slots than CPUs each slot runs on CPUs of its own (``pin_cpus``), so two slots'
request/reply exchanges do not queue behind each other's processes (``benchmarks/verifier.py`` measures it).
``pool.meter`` records arrivals, service and waits for Little's law (17.9.5). ``close()`` drains the queue
(or cancels it with ``cancel_pending=True``) and stops the slots.
"""

from __future__ import annotations

import queue
import threading
import time
from concurrent.futures import Future
from collections.abc import Iterable

from rlvr_lab.verifier.meter import PoolMeter
from rlvr_lab.verifier.schema import Candidate, Fixture, Verdict
from rlvr_lab.verifier.verifier import Verifier, usable_cpus

_STOP = object()


def slot_cpus(cpus: list[int], workers: int) -> list[tuple[int, ...]]:
    """``cpus`` split into ``workers`` contiguous groups, one per slot (needs ``workers <= len(cpus)``).

    >>> slot_cpus([0, 1], 2), slot_cpus([0, 1, 2, 3, 4], 2), slot_cpus([0, 1, 2], 1)
    ([(0,), (1,)], [(0, 1), (2, 3, 4)], [(0, 1, 2)])
    """
    n = len(cpus)
    return [tuple(cpus[i * n // workers : (i + 1) * n // workers]) for i in range(workers)]


class PoolFull(RuntimeError):
    """``submit`` found the queue full and was told not to wait (``block=False`` or a timeout)."""


class PoolClosed(RuntimeError):
    """``submit`` after ``close``."""


def request_candidates(candidates: Iterable[Candidate], fixture: Fixture) -> list[Candidate]:
    """The candidates of one ``submit_many`` as a list, after the checks every pool makes before queueing:
    at least one candidate, each a :class:`Candidate`, and a :class:`Fixture` (ValueError otherwise)."""
    candidates = list(candidates)
    if not candidates:
        raise ValueError("candidates must hold at least one candidate")
    for c in candidates:
        if not isinstance(c, Candidate):
            raise ValueError(f"candidates must be Candidate objects, got {type(c).__name__}")
    if not isinstance(fixture, Fixture):
        raise ValueError(f"fixture must be a Fixture, got {type(fixture).__name__}")
    return candidates


class PoolFront:
    """``submit`` (one candidate) and ``map`` for a pool class that defines ``submit_many(candidates,
    fixture, trials, block, timeout)`` (:class:`VerifierPool`, :class:`~.ray_pool.RayVerifierPool`)."""

    def submit(
        self,
        candidate: Candidate,
        fixture: Fixture,
        trials: int | None = None,
        block: bool = True,
        timeout: float | None = None,
    ) -> Future[Verdict]:
        """Queue one verification; blocks while the queue is full (see the module docstring)."""
        return self.submit_many([candidate], fixture, trials, block, timeout)[0]

    def map(self, candidates: Iterable[Candidate], fixture: Fixture, trials: int | None = None) -> list[Verdict]:
        """Verify many candidates against one fixture; verdicts in input order."""
        futures = [self.submit(c, fixture, trials) for c in candidates]
        return [f.result() for f in futures]


class VerifierPool(PoolFront):
    """N verifier slots, a bounded FIFO queue with backpressure, a futures API (module docstring)."""

    def __init__(
        self,
        workers: int = 2,
        backend: str = "local",
        max_queue: int = 64,
        retries: int = 1,
        seed: int | None = None,
        test_runner: str = "auto",
        pin_cpus: bool | None = None,
    ):
        if isinstance(workers, bool) or not isinstance(workers, int) or not 1 <= workers <= 64:
            raise ValueError(f"workers must be an integer in [1, 64], got {workers!r}")
        if isinstance(max_queue, bool) or not isinstance(max_queue, int) or max_queue < 1:
            raise ValueError(f"max_queue must be an integer >= 1, got {max_queue!r}")
        self.workers = workers
        self.max_queue = max_queue
        self._queue: queue.Queue = queue.Queue(maxsize=max_queue)
        self._closed = False
        self._close_lock = threading.Lock()
        self.meter = PoolMeter(workers)
        usable = usable_cpus()
        if pin_cpus and workers > len(usable):
            raise ValueError(f"pin_cpus needs at most one slot per CPU ({len(usable)}), got {workers} workers")
        pin = 1 < workers <= len(usable) if pin_cpus is None else bool(pin_cpus)
        cpus = slot_cpus(usable, workers) if pin and backend != "docker" else None
        self.verifiers: list[Verifier] = [None] * workers  # type: ignore[list-item]
        errors: list[BaseException] = []

        def start(i: int) -> None:
            try:
                self.verifiers[i] = Verifier(
                    backend=backend,
                    retries=retries,
                    test_runner=test_runner,
                    seed=None if seed is None else seed + 1_000_003 * i,
                    cpus=cpus[i] if cpus else None,
                )
            except BaseException as exc:  # reported below, after every slot had its chance
                errors.append(exc)

        starters = [threading.Thread(target=start, args=(i,)) for i in range(workers)]
        for t in starters:
            t.start()
        for t in starters:
            t.join()
        if errors:
            for v in self.verifiers:
                if v is not None:
                    v.close()
            raise errors[0]
        self.backend = self.verifiers[0]._backend_name
        self._threads = [
            threading.Thread(target=self._work, args=(v,), name=f"verifier-slot-{i}", daemon=True)
            for i, v in enumerate(self.verifiers)
        ]
        for t in self._threads:
            t.start()

    def _work(self, verifier: Verifier) -> None:
        while True:
            item = self._queue.get()
            if item is _STOP:
                return
            futures, candidates, fixture, trials, admitted = item
            for future, candidate in zip(futures, candidates):
                if not future.set_running_or_notify_cancel():
                    continue
                try:
                    started = time.perf_counter()
                    self.meter.began()
                    try:
                        verdict = verifier.verify(candidate, fixture, trials)
                    finally:
                        self.meter.ended()  # once per verification, whatever happens after
                    self.meter.served(admitted[0], time.perf_counter() - started, len(verdict.trials))
                    future.set_result(verdict)
                except BaseException as exc:  # ValueError for bad input, SandboxUnavailable, ...
                    self.meter.served(admitted[0], time.perf_counter() - started, 0)
                    future.set_exception(exc)

    def submit_many(
        self,
        candidates: Iterable[Candidate],
        fixture: Fixture,
        trials: int | None = None,
        block: bool = True,
        timeout: float | None = None,
    ) -> list[Future[Verdict]]:
        """Queue several verifications against one fixture as one entry, verified in a row by one slot;
        one future per candidate, in order. Backpressure as :meth:`submit` (the entry counts once)."""
        if self._closed:
            raise PoolClosed("submit after close()")
        candidates = request_candidates(candidates, fixture)
        futures: list[Future] = [Future() for _ in candidates]
        asked = time.perf_counter()
        admitted = [asked]  # set again once the entry is in the queue: waits count from admission
        try:
            self._queue.put((futures, candidates, fixture, trials, admitted), block=block, timeout=timeout)
        except queue.Full:
            raise PoolFull(f"the verification queue holds {self.max_queue} requests") from None
        admitted[0] = self.meter.arrived(len(candidates), time.perf_counter() - asked)
        return futures

    @property
    def queued(self) -> int:
        """Requests waiting for a slot (approximate)."""
        return self._queue.qsize()

    def close(self, cancel_pending: bool = False) -> None:
        """Stop accepting work, finish (or cancel) what is queued, stop the slots. Idempotent."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        if cancel_pending:
            while True:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is not _STOP:
                    for future in item[0]:
                        future.cancel()
        for _ in self._threads:
            self._queue.put(_STOP)
        for t in self._threads:
            t.join()
        for v in self.verifiers:
            v.close()
        self.meter.close()

    def __enter__(self) -> VerifierPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
