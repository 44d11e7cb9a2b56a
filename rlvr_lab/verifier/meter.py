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
* the number in the system itself, integrated over time.

Utilization and ``L`` computed from these sums agree with equation 9 and ``lambda * W`` by construction
(the same numbers enter both). An independent check needs an independent observer: a probe thread that
looks at the pool at random moments (exponential gaps, so the looks are a Poisson process) and counts
the slots busy and the verifications inside, as a monitoring agent scraping two gauges would. Its means,
with batch-means standard errors, are ``utilization_sampled`` and ``in_system_sampled``.

Both :class:`~rlvr_lab.verifier.pool.VerifierPool` and
:class:`~rlvr_lab.verifier.ray_pool.RayVerifierPool` carry one as ``pool.meter``; a pool marks a slot
busy with :meth:`PoolMeter.began` / :meth:`PoolMeter.ended` around each verification it runs.
"""

from __future__ import annotations

import math
import random
import threading
import time
from dataclasses import dataclass

#: Mean seconds between the probe's looks at the pool.
PROBE_GAP_S = 0.02
#: Batches of consecutive looks for the standard error of the probe's means.
PROBE_BATCHES = 20


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
    looks: int = 0
    """Times the probe looked at the pool."""
    utilization_sampled: float = 0.0
    """Mean share of slots the probe saw busy: ``rho`` observed apart from the service-time sums."""
    utilization_sampled_se: float = 0.0
    """Standard error of :attr:`utilization_sampled` (batch means of consecutive looks)."""
    in_system_sampled: float = 0.0
    """Mean verifications the probe saw queued or in service: ``L`` observed apart from ``lambda * W``."""
    in_system_sampled_se: float = 0.0
    """Standard error of :attr:`in_system_sampled`."""

    def as_dict(self) -> dict:
        """Plain dict for printing and JSON."""
        return dict(self.__dict__)


class PoolMeter:
    """Thread-safe counters of one pool (module docstring). ``reset()`` starts a new window."""

    def __init__(self, workers: int, probe_gap_s: float = PROBE_GAP_S, seed: int | None = None):
        self.workers = workers
        self._lock = threading.Lock()
        self._busy_now = 0
        self._gap_s, self._rng = probe_gap_s, random.Random(seed)
        self._stop = threading.Event()
        self.reset()
        self._probe = threading.Thread(target=self._look_until_closed, name="pool-meter-probe", daemon=True)
        self._probe.start()

    def reset(self) -> None:
        """Forget everything measured so far; the window starts now."""
        with self._lock:
            self._start = time.perf_counter()
            self._arrivals = self._completions = self._trials = 0
            self._busy = self._wait = self._blocked = 0.0
            self._inside, self._area, self._last = 0, 0.0, self._start
            self._looks: list[tuple[int, int]] = []

    def close(self) -> None:
        """Stop the probe (the counters stay readable). Idempotent."""
        self._stop.set()

    def began(self) -> None:
        """A slot started working on a verification."""
        with self._lock:
            self._busy_now += 1

    def ended(self) -> None:
        """A slot stopped working on a verification (done, failed or lost)."""
        with self._lock:
            self._busy_now = max(self._busy_now - 1, 0)

    def look(self) -> None:
        """One look of the probe: record the slots busy and the verifications inside right now."""
        with self._lock:
            self._looks.append((self._busy_now, self._inside))

    def _look_until_closed(self) -> None:
        while not self._stop.wait(self._rng.expovariate(1.0 / self._gap_s)):
            self.look()

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
            rho, rho_se = mean_and_se([busy / self.workers for busy, _ in self._looks])
            inside, inside_se = mean_and_se([float(n) for _, n in self._looks])
            wait = self._wait / done if done else 0.0
            return PoolLoad(
                workers=self.workers,
                elapsed_s=elapsed,
                arrivals=self._arrivals,
                completions=done,
                arrival_per_s=lam,
                service_s=self._busy / done if done else 0.0,
                trials=self._trials / done if done else 0.0,
                trial_s=self._busy / self._trials if self._trials else 0.0,
                utilization=self._busy / (self.workers * elapsed),
                wait_s=wait,
                in_system=lam * wait,
                in_system_measured=self._area / elapsed,
                blocked_s=self._blocked,
                looks=len(self._looks),
                utilization_sampled=rho,
                utilization_sampled_se=rho_se,
                in_system_sampled=inside,
                in_system_sampled_se=inside_se,
            )


def mean_and_se(values: list[float], batches: int = PROBE_BATCHES) -> tuple[float, float]:
    """Mean of ``values`` and its batch-means standard error: consecutive looks are correlated, so the
    looks are cut into ``batches`` runs whose means are nearly independent. ``(0, 0)`` for no values;
    the standard error is 0 with fewer looks than batches.

    >>> mean_and_se([1.0, 1.0, 0.0, 0.0], batches=2)
    (0.5, 0.5)
    """
    if not values:
        return 0.0, 0.0
    mean = sum(values) / len(values)
    if len(values) < batches or batches < 2:
        return mean, 0.0
    size = len(values) // batches
    means = [sum(values[i * size : (i + 1) * size]) / size for i in range(batches)]
    centre = sum(means) / batches
    var = sum((m - centre) ** 2 for m in means) / (batches - 1)
    return mean, math.sqrt(var / batches)
