"""Slots on a Ray cluster, with the fleet's faults (section 17.9.5): the one worker pool under both the
verifier fleet (:class:`~rlvr_lab.verifier.ray_pool.RayVerifierPool`) and the Ray grader
(:class:`~rlvr_lab.grading.ray_grader.RayGrader`).

:class:`RayWorkers` keeps ``workers`` actors of one class spread over the cluster's machines; each is a
slot that runs one call at a time. Work waits in a bounded queue on the caller's side, as batches of
:class:`Call` s that one slot runs one after another; one driver thread per slot sends them to its actor.
A call lost with its actor, worker process or machine (or unanswered within its timeout) is never a
result: it and the rest of its batch go back to the queue for a slot on another machine, the loss is
recorded, the lost actor is replaced, and after ``lost_retries`` losses the call is given up, which it
reports itself. Ray is the optional ``fleet`` extra; this module imports without it.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable

#: Seconds a lost batch waits for a slot on another machine before any slot may take it.
AVOID_S = 10.0


def ray_module(who: str):
    """``ray``, or an ImportError saying that ``who`` needs the ``fleet`` extra."""
    try:
        import ray
    except ImportError as exc:  # depends on the environment
        raise ImportError(f"{who} needs Ray: pip install 'rlvr-lab[fleet]'") from exc
    return ray


def node_name() -> str:
    """How reports name the machine this actor runs on: ``IP/node id``."""
    ray = ray_module("node_name")
    return f"{ray.util.get_node_ip_address()}/{ray.get_runtime_context().get_node_id()[:12]}"


class QueueFull(RuntimeError):
    """:meth:`RayWorkers.put` found the queue full and was told not to wait."""


class QueueClosed(RuntimeError):
    """:meth:`RayWorkers.put` after :meth:`RayWorkers.close`."""


class Call:
    """One call to a slot's actor and where its answer goes; subclasses say what to send and report."""

    lost = 0
    """Times this call was lost with its slot so far (the pool counts)."""
    timeout_s = 60.0
    """Seconds without an answer after which the slot counts as lost."""

    def start(self) -> bool:
        """Called before each attempt; False skips the call (e.g. its future was cancelled)."""
        return True

    def send(self, actor):
        """Start the call on ``actor``; return its object reference."""
        raise NotImplementedError

    def done(self, result) -> None:
        """The actor answered ``result``."""

    def failed(self, error: BaseException, node: str) -> None:
        """The call itself raised ``error`` on the actor (on ``node``): the call's own outcome, not a loss."""

    def on_lost(self, slot: int, node: str, error: str, retried: bool):
        """The call was lost with slot ``slot``; return the fault record kept in :attr:`RayWorkers.faults`.
        ``retried`` False: the call is given up and must report its outcome now."""
        raise NotImplementedError

    def cancel(self) -> None:
        """The pool closed with the call still queued and was told to drop it."""


class RayWorkers:
    """``workers`` actors of ``actor_class`` over a Ray cluster, fed from one queue (module docstring).

    ``actor_args(slot, generation)``: the actor's constructor arguments (``generation`` counts the
    replacements of that slot). Each actor answers ``info()`` with a dict naming its ``node`` and has a
    ``close()``. ``address`` and ``init_kwargs``: for ``ray.init`` when this process has not joined Ray
    (then :meth:`close` leaves it again). ``check_fit``: refuse more slots than the cluster has CPUs.
    ``max_queue``: most batches waiting (None: no bound). ``start_timeout_s``: seconds an actor may take
    to answer ``info()``. ``replace_s``: seconds a slot keeps trying to start a replacement actor before
    its driver stops (None: until the pool closes); when no driver is left, every queued call is given up.
    """

    def __init__(
        self,
        actor_class,
        actor_args: Callable[[int, int], tuple],
        workers: int,
        *,
        address: str | None = None,
        init_kwargs: dict | None = None,
        slot_cpus: float = 1.0,
        check_fit: bool = False,
        lost_retries: int = 2,
        max_queue: int | None = None,
        start_timeout_s: float = 60.0,
        replace_s: float | None = None,
        name: str = "ray-slot",
    ):
        ray = self.ray = ray_module(name)
        self.actor_class, self.actor_args, self.workers = actor_class, actor_args, workers
        self.slot_cpus, self.lost_retries, self.max_queue = slot_cpus, lost_retries, max_queue
        self.start_timeout_s, self.replace_s = start_timeout_s, replace_s
        self.owns_ray = not ray.is_initialized()
        if self.owns_ray:
            ray.init(
                address=address,
                include_dashboard=False,
                log_to_driver=False,
                logging_level="WARNING",
                **(init_kwargs or {}),
            )
        if check_fit and workers * slot_cpus > (cpus := ray.cluster_resources().get("CPU", 0)):
            self._leave()
            raise ValueError(
                f"workers must fit the cluster: {workers} slots need {workers * slot_cpus:g} "
                f"CPUs, the cluster at {address!r} has {cpus:g}"
            )
        self.faults: list = []
        """Fault records of lost calls (what :meth:`Call.on_lost` returned), in order."""
        self.seen: set[str] = set()
        """Every node a slot ran on (a lost slot's node included)."""
        self.current: list = [None] * workers
        """The call each slot is inside right now (None: idle)."""
        self.actors: list = [None] * workers
        self.slot_info: list[dict] = [{} for _ in range(workers)]
        self.generation = [0] * workers
        self.cv = threading.Condition()
        self.waiting: deque[list] = deque()
        self.retry: deque[tuple] = deque()  # (calls, lost slot, lost node, when)
        self.closed, self.busy, self.alive = False, 0, workers
        try:
            for i in range(workers):
                self._spawn(i)
            for i in range(workers):
                self.slot_info[i] = self._info(self.actors[i])
                self.seen.add(self.slot_info[i].get("node", ""))
        except BaseException:
            for handle in self.actors:
                self._kill(handle)
            self._leave()
            raise
        self.threads = [
            threading.Thread(target=self._drive, args=(i,), name=f"{name}-{i}", daemon=True) for i in range(workers)
        ]
        for t in self.threads:
            t.start()

    # -- actors ---------------------------------------------------------------------------------------
    def _spawn(self, i: int):
        self.actors[i] = self.actor_class.options(num_cpus=self.slot_cpus, scheduling_strategy="SPREAD").remote(
            *self.actor_args(i, self.generation[i])
        )
        return self.actors[i]

    def _info(self, handle) -> dict:
        """The actor's ``info()``; an actor that failed to start raises why, where Ray kept the cause."""
        ray = self.ray
        try:
            return ray.get(handle.info.remote(), timeout=self.start_timeout_s)
        except ray.exceptions.RayActorError as exc:
            cause = getattr(exc, "cause", None) or getattr(exc, "error_msg", "")
            if isinstance(cause, BaseException):
                raise cause from None
            raise

    def _kill(self, handle) -> None:
        if handle is not None:
            try:
                self.ray.kill(handle, no_restart=True)
            except Exception:
                pass

    def _replace(self, i: int) -> bool:
        """Kill slot ``i`` (it may only be unresponsive) and start fresh actors until one answers."""
        end = None if self.replace_s is None else time.monotonic() + self.replace_s
        delay = 0.5
        self._kill(self.actors[i])
        while not self.closed:
            self.generation[i] += 1
            handle = self._spawn(i)
            try:
                self.slot_info[i] = self._info(handle)
                self.seen.add(self.slot_info[i].get("node", ""))
                return True
            except Exception:
                self._kill(handle)
                if end is not None and time.monotonic() + delay > end:
                    return False
                time.sleep(delay)
                delay = min(2 * delay, 10.0)
        return False

    def node(self, i: int) -> str:
        return self.slot_info[i].get("node", "")

    # -- the queue ------------------------------------------------------------------------------------
    def put(self, make: Callable[[], list], block: bool = True, timeout: float | None = None) -> list:
        """Queue the batch ``make()`` returns, called once there is room (so that it may stamp its
        admission); return it. Raises :class:`QueueFull` when told not to wait, :class:`QueueClosed` after
        :meth:`close`."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self.cv:
            while True:
                if self.closed:
                    raise QueueClosed("submit after close()")
                if self.max_queue is None or len(self.waiting) < self.max_queue:
                    break
                left = None if deadline is None else deadline - time.monotonic()
                if not block or (left is not None and left <= 0):
                    raise QueueFull(f"the queue holds {self.max_queue} requests")
                self.cv.wait(left)
            calls = make()
            self.waiting.append(calls)
            if self.alive == 0:
                self._give_up_queued()
            self.cv.notify_all()
        return calls

    @property
    def queued(self) -> int:
        """Batches waiting for a slot, lost ones included."""
        with self.cv:
            return len(self.waiting) + len(self.retry)

    def drain(self) -> None:
        """Wait until every queued call has its answer (or was given up)."""
        with self.cv:
            while (self.waiting or self.retry or self.busy) and self.alive:
                self.cv.wait(1.0)

    def _take(self, i: int) -> list | None:
        """Next batch for slot ``i``: a lost one it may take (another slot and machine, or ``AVOID_S`` later),
        else a new one; None to stop."""
        with self.cv:
            while True:
                for entry in self.retry:
                    calls, slot, node, since = entry
                    if (slot != i and self.node(i) != node) or self.workers == 1 or time.monotonic() > since + AVOID_S:
                        self.retry.remove(entry)
                        self.busy += 1
                        return calls
                if self.waiting:
                    self.busy += 1
                    calls = self.waiting.popleft()
                    self.cv.notify_all()  # room in the queue for a blocked producer
                    return calls
                if self.closed and not self.retry and self.busy == 0:
                    return None
                self.cv.wait(1.0 if self.retry else None)

    def _drive(self, i: int) -> None:
        try:
            while (calls := self._take(i)) is not None:
                try:
                    if not self._run(i, calls):
                        return  # the slot was lost and no replacement started
                finally:
                    with self.cv:
                        self.busy -= 1
                        self.cv.notify_all()
        finally:
            with self.cv:
                self.alive -= 1
                if self.alive == 0:
                    self._give_up_queued(i)
                self.cv.notify_all()

    def _give_up_queued(self, slot: int = -1) -> None:
        """No slot is left: each queued call is given up and says so (never dropped). Holds ``cv``."""
        while self.waiting or self.retry:
            calls = self.waiting.popleft() if self.waiting else self.retry.popleft()[0]
            for call in calls:
                if call.start():
                    call.lost += 1
                    self.faults.append(call.on_lost(slot, "", "no slot could be started", False))

    def _run(self, i: int, calls: list) -> bool:
        """Run ``calls`` on slot ``i``; False when the slot was lost and could not be replaced."""
        ray = self.ray
        for j, call in enumerate(calls):
            if not call.start():
                continue
            self.current[i] = call
            try:
                result = ray.get(call.send(self.actors[i]), timeout=call.timeout_s)
            except ray.exceptions.RayTaskError as exc:  # the call itself raised on that machine
                cause = getattr(exc, "cause", None)
                call.failed(cause if isinstance(cause, BaseException) else exc, self.node(i))
                continue
            except (ray.exceptions.RayError, TimeoutError) as exc:  # actor, worker process or machine lost
                return self._lost(i, calls, j, exc)
            finally:
                self.current[i] = None
            call.done(result)
        return True

    def _lost(self, i: int, calls: list, j: int, exc: BaseException) -> bool:
        """Call ``j`` of ``calls`` was in flight when slot ``i`` was lost: requeue it and the rest, replace the slot."""
        call, node = calls[j], self.node(i)
        call.lost += 1
        retried = call.lost <= self.lost_retries
        error = f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0]}"[:300]
        self.faults.append(call.on_lost(i, node, error, retried))
        rest = calls[j if retried else j + 1 :]
        if rest:
            with self.cv:
                self.retry.append((rest, i, node, time.monotonic()))
                self.cv.notify_all()
        return self._replace(i)

    def close(self, cancel_pending: bool = False) -> None:
        """Stop taking work, finish (or cancel) what is queued, close and end the actors. Idempotent."""
        with self.cv:
            if self.closed:
                return
            self.closed = True
            if cancel_pending:
                for calls in self.waiting:
                    for call in calls:
                        call.cancel()
                self.waiting.clear()
            self.cv.notify_all()
        for t in self.threads:
            t.join()
        for handle in self.actors:
            if handle is None:
                continue
            try:
                self.ray.get(handle.close.remote(), timeout=30)
            except Exception:
                pass
            self._kill(handle)
        self._leave()

    def _leave(self) -> None:
        if self.owns_ray and self.ray.is_initialized():
            self.ray.shutdown()
