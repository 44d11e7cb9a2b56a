"""Measuring a verifier pool while it works: Little's law in practice (section 17.9.5, equation 9).

Equation 9 sizes the pool from three numbers: the arrival rate of verifications ``lambda``, the
expected trials per verification ``K`` and the seconds of one trial ``t_v``; the offered load
``lambda * K * t_v`` divided by the workers is the utilization ``rho``. A :class:`PoolMeter` records
what a running pool actually saw, so the prediction of :func:`rlvr_lab.cycle_time.verifier_workers`
and :func:`~rlvr_lab.cycle_time.verifier_utilization` can be put beside the measurement:

* arrivals: candidates submitted (one per future), with the time the producer spent blocked by the
  bounded queue (backpressure);
* service: seconds a slot spent verifying each candidate, and the trials the verdict used;
* waits: seconds from submission to the verdict (queue wait plus service), whose mean ``W`` gives
  Little's ``L = lambda * W``, the verifications in the system on average;
* the number in the system itself, integrated over time, so that ``L`` is also measured directly and
  Little's law can be checked rather than assumed.

Both :class:`~rlvr_lab.verifier.pool.VerifierPool` and
:class:`~rlvr_lab.verifier.ray_pool.RayVerifierPool` carry one as ``pool.meter``.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class PoolLoad:
    """What a pool measured over ``elapsed_s`` seconds (see the module docstring)."""

    workers: int
    """Slots of the pool."""
    elapsed_s: float
    """Seconds from the meter's start (or reset) to the snapshot."""
    arrivals: int
    """Candidates submitted."""
    completions: int
    """Verdicts delivered (any outcome)."""
    arrival_per_s: float
    """Measured ``lambda``: arrivals over elapsed seconds."""
    service_s: float
    """Mean seconds a slot spent on one verification (``K * t_v`` of equation 9, measured)."""
    trials: float
    """Mean trials per delivered verdict (``K``)."""
    trial_s: float
    """Mean service seconds per trial (``t_v``)."""
    utilization: float
    """Busy slot-seconds over ``workers * elapsed_s``: the measured ``rho``."""
    wait_s: float
    """Mean seconds from submission to verdict (``W`` of Little's law)."""
    in_system: float
    """Little's ``L = lambda * W``: verifications queued or in service on average."""
    in_system_measured: float
    """Time-average of the verifications queued or in service, counted directly (compare ``in_system``)."""
    blocked_s: float
    """Seconds producers spent blocked in ``submit`` because the queue was full (backpressure)."""

    def as_dict(self) -> dict:
        """Plain dict for printing and JSON."""
        return dict(self.__dict__)


class PoolMeter:
    """Thread-safe counters of one pool (module docstring). ``reset()`` starts a new window."""

    def __init__(self, workers: int):
        self.workers = workers
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        """Forget everything measured so far; the window starts now."""
        with self._lock:
            self._start = time.perf_counter()
            self._arrivals = self._completions = self._trials = 0
            self._busy = self._wait = self._blocked = 0.0
            self._inside, self._area, self._last = 0, 0.0, self._start

    def arrived(self, n: int, blocked_s: float = 0.0) -> float:
        """``n`` candidates were submitted after ``blocked_s`` seconds of backpressure; returns the
        submission time to pass to :meth:`served`."""
        now = time.perf_counter()
        with self._lock:
            self._advance(now)
            self._inside += n
            self._arrivals += n
            self._blocked += blocked_s
        return now

    def served(self, submitted_at: float, service_s: float, trials: int) -> None:
        """One candidate left the pool (a verdict or an error): ``service_s`` seconds in a slot, ``trials``
        trials run."""
        now = time.perf_counter()
        with self._lock:
            self._advance(now)
            self._inside = max(self._inside - 1, 0)
            self._completions += 1
            self._busy += service_s
            self._trials += trials
            self._wait += now - submitted_at

    def _advance(self, now: float) -> None:
        self._area += self._inside * (now - self._last)
        self._last = now

    def snapshot(self) -> PoolLoad:
        """The measured load so far (zeros where nothing was delivered yet)."""
        with self._lock:
            now = time.perf_counter()
            self._advance(now)
            elapsed = max(now - self._start, 1e-9)
            done = self._completions
            lam = self._arrivals / elapsed
            wait = self._wait / done if done else 0.0
            return PoolLoad(
                workers=self.workers, elapsed_s=elapsed, arrivals=self._arrivals, completions=done,
                arrival_per_s=lam, service_s=self._busy / done if done else 0.0,
                trials=self._trials / done if done else 0.0,
                trial_s=self._busy / self._trials if self._trials else 0.0,
                utilization=self._busy / (self.workers * elapsed), wait_s=wait, in_system=lam * wait,
                in_system_measured=self._area / elapsed,
                blocked_s=self._blocked)
