"""The verifier fleet on a Ray cluster: verifier slots beyond one machine, with faults (section 17.9.5).

:class:`RayVerifierPool` has the futures API of :class:`~rlvr_lab.verifier.pool.VerifierPool`
(``submit``, ``submit_many``, ``map``, a bounded queue with backpressure, ``close``); each slot is a Ray
actor owning one :class:`~rlvr_lab.verifier.verifier.Verifier` on whichever node Ray placed it, and each
verdict names its ``node``. The slots, the queue and the faults are :class:`rlvr_lab.ray_workers.RayWorkers`:
a ``submit_many`` is one batch that a slot verifies one candidate after another (its fixture's tests stay
collected between them); a candidate lost with its slot is *pending*, never pass or fail, and goes back
to the queue for another slot (logged in :attr:`RayVerifierPool.faults`, counted in the verdict's
``attempts``); after ``lost_retries`` losses its verdict is ``unknown`` with the reason, which the
trainer's complete-group rule (:func:`rlvr_lab.records.close_group`) sees like any unresolved member.
Ray is the optional ``fleet`` extra; importing :mod:`rlvr_lab.verifier` never needs it.
"""

from __future__ import annotations

import inspect
import os
import time
from concurrent.futures import Future
from dataclasses import dataclass, replace
from collections.abc import Iterable

from rlvr_lab.ray_workers import Call, QueueClosed, QueueFull, RayWorkers, node_name
from rlvr_lab.ray_workers import ray_module as fleet_ray_module
from rlvr_lab.verifier.meter import PoolMeter
from rlvr_lab.verifier.pool import PoolClosed, PoolFront, PoolFull, VerifierPool, request_candidates
from rlvr_lab.verifier.wire import verify_budget_s
from rlvr_lab.verifier.schema import Candidate, Fixture, Verdict
from rlvr_lab.verifier.verifier import START_TIMEOUT_S


def ray_module(who: str = "RayVerifierPool"):
    """``ray``, or an ImportError saying that ``who`` needs the ``fleet`` extra."""
    return fleet_ray_module(who)


_SLOT = None


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
                self.node = node_name()

            def info(self) -> dict:
                return {
                    "node": self.node,
                    "pid": os.getpid(),
                    "runner_pid": self.verifier.runner_pid,
                    "backend": self.verifier._backend_name,
                }

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


class Verification(Call):
    """One candidate of a ``submit_many``: sent to a slot's actor, answered through its future."""

    def __init__(
        self,
        pool: RayVerifierPool,
        future: Future,
        candidate: Candidate,
        fixture: Fixture,
        trials: int | None,
        admitted: float,
    ):
        self.pool, self.future, self.candidate, self.fixture, self.trials = pool, future, candidate, fixture, trials
        self.admitted = admitted
        self.timeout_s = pool.call_budget(fixture, trials)
        self.in_slot = False

    def start(self) -> bool:
        return self.future.running() or self.future.set_running_or_notify_cancel()

    def send(self, actor):
        self.pool.meter.began()
        self.in_slot = True
        return actor.verify.remote(self.candidate, self.fixture, self.trials)

    def left_slot(self) -> None:
        """The slot is no longer busy with this call (the meter's probe counts busy slots)."""
        if self.in_slot:
            self.in_slot = False
            self.pool.meter.ended()

    def done(self, result) -> None:
        verdict, service_s = result
        self.left_slot()
        self.pool.meter.served(self.admitted, service_s, len(verdict.trials))
        self.future.set_result(replace(verdict, attempts=verdict.attempts + self.lost) if self.lost else verdict)

    def failed(self, error: BaseException, node: str) -> None:  # bad input and the like
        self.left_slot()
        self.pool.meter.served(self.admitted, 0.0, 0)
        self.future.set_exception(error)

    def on_lost(self, slot: int, node: str, error: str, retried: bool) -> LostAttempt:
        self.left_slot()
        if not retried:
            self.pool.meter.served(self.admitted, 0.0, 0)
            fx = self.fixture
            self.future.set_result(
                Verdict(
                    outcome="unknown",
                    candidate_digest=self.candidate.digest,
                    fixture=fx.name,
                    fixture_version=fx.version,
                    checker_version=fx.checker_version,
                    backend=self.pool.backend,
                    attempts=self.lost,
                    stop_reason=f"verifier slot lost {self.lost} times (last: {error})",
                    node=node,
                )
            )
        return LostAttempt(self.candidate.digest, self.fixture.name, slot, node, error, retried)

    def cancel(self) -> None:
        self.future.cancel()


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

    def __init__(
        self,
        workers: int = 2,
        backend: str | None = None,
        max_queue: int = 64,
        retries: int = 1,
        seed: int | None = None,
        address: str | None = None,
        lost_retries: int = 2,
        slot_cpus: float = 1.0,
        call_timeout_s: float | None = None,
    ):
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
        from rlvr_lab.sandbox.backend import BACKENDS, SandboxUnavailable

        if backend is None:  # whatever the one-machine pool defaults to
            backend = inspect.signature(VerifierPool).parameters["backend"].default
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
        ray = ray_module()
        self.workers, self.max_queue, self.lost_retries = workers, max_queue, lost_retries
        self._retries, self._call_timeout = retries, call_timeout_s
        self.meter = PoolMeter(workers)

        def actor_args(i: int, generation: int) -> tuple:
            return backend, retries, None if seed is None else seed + 1_000_003 * i + 7 * generation

        private = (
            {}
            if address is not None
            else dict(num_cpus=max(int(round(workers * slot_cpus)), 1), object_store_memory=80 * 2**20)
        )
        try:
            self._slots = RayWorkers(
                _slot_class(),
                actor_args,
                workers,
                address=address,
                init_kwargs=private,
                slot_cpus=slot_cpus,
                lost_retries=lost_retries,
                max_queue=max_queue,
                start_timeout_s=START_TIMEOUT_S + 60,
                name="ray-verifier-slot",
            )
        except ray.exceptions.RayActorError as exc:  # a slot failed to start without a cause: say why
            if "SandboxUnavailable" in str(exc):
                raise SandboxUnavailable(str(exc)) from None
            raise
        self.backend = self._slots.slot_info[0]["backend"]

    @property
    def faults(self) -> list[LostAttempt]:
        """Every verification lost with its slot, in order."""
        return self._slots.faults

    @property
    def slot_info(self) -> list[dict]:
        """Each slot's actor: ``node``, ``pid``, ``runner_pid``, ``backend``."""
        return self._slots.slot_info

    def call_budget(self, fixture: Fixture, trials: int | None) -> float:
        """Seconds a slot may take over one candidate before it counts as lost."""
        if self._call_timeout is not None:
            return self._call_timeout
        k = fixture.trials if trials is None else trials
        return (self._retries + 1) * verify_budget_s(k, fixture.limits.wall_s) + START_TIMEOUT_S

    # -- the futures API -----------------------------------------------------------------------------
    def submit_many(
        self,
        candidates: Iterable[Candidate],
        fixture: Fixture,
        trials: int | None = None,
        block: bool = True,
        timeout: float | None = None,
    ) -> list[Future[Verdict]]:
        """Queue several verifications against one fixture as one entry (as VerifierPool.submit_many)."""
        candidates = request_candidates(candidates, fixture)
        asked = time.perf_counter()

        def admit() -> list[Verification]:
            admitted = self.meter.arrived(len(candidates), time.perf_counter() - asked)
            return [Verification(self, Future(), c, fixture, trials, admitted) for c in candidates]

        try:
            calls = self._slots.put(admit, block, timeout)
        except QueueClosed as exc:
            raise PoolClosed(str(exc)) from None
        except QueueFull:
            raise PoolFull(f"the verification queue holds {self.max_queue} requests") from None
        return [call.future for call in calls]

    @property
    def queued(self) -> int:
        """Entries waiting for a slot, lost ones included."""
        return self._slots.queued

    def in_flight(self) -> dict[int, str]:
        """``{slot: candidate digest}`` for every slot inside a verification right now (a snapshot)."""
        return {i: call.candidate.digest for i, call in enumerate(list(self._slots.current)) if call is not None}

    def nodes(self) -> list[str]:
        """The node of each slot, in slot order."""
        return [info.get("node", "") for info in self.slot_info]

    def close(self, cancel_pending: bool = False) -> None:
        """Stop accepting work, finish (or cancel) what is queued, stop the actors. Idempotent."""
        self._slots.close(cancel_pending)
        self.meter.close()

    def __enter__(self) -> RayVerifierPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
