"""A trial's deadline that does not charge the candidate for a busy host (section 17.7; standard library
only, loaded by the zygote by path).

On a host that is also training or grading, a fixed wall clock would turn the host's load into the
candidate's ``timeout``, a false ``fail``. :class:`TrialClock` extends the deadline by the CPU contention
the host reports (PSI ``/proc/pressure/cpu``, else ``/proc/stat``) while the trial runs:

    deadline = start + min(wall_s + contended_s, STRETCH_MAX * wall_s)

A hang on a quiet host still ends at ``wall_s``; a candidate that loads the CPU itself gains at most the
cap, and the outcome there is ``timeout`` (never ``pending``, which it could use to censor its group).
"""

import os
import time

#: The longest a trial may run, as a multiple of ``wall_s``, however busy the host is.
STRETCH_MAX = 3.0
#: Clock ticks per second of ``/proc/stat`` (USER_HZ).
_TICKS_S = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def stretched_deadline(start_s: float, wall_s: float, contended_s: float) -> float:
    """Monotonic time (s) at which a trial started at ``start_s`` times out, given ``contended_s`` seconds of
    host CPU contention since then: ``start_s + min(wall_s + contended_s, STRETCH_MAX * wall_s)``."""
    return start_s + min(wall_s + max(0.0, contended_s), STRETCH_MAX * wall_s)


def psi_some_s(text: str) -> float:
    """Seconds of ``some`` CPU pressure in the text of ``/proc/pressure/cpu`` (its ``total=`` is in µs)."""
    for line in text.splitlines():
        if line.startswith("some "):
            fields = dict(part.split("=", 1) for part in line.split()[1:])
            return int(fields["total"]) / 1e6
    raise ValueError("no 'some' line in the CPU pressure file")


def busy_cpu_s(text: str) -> float:
    """Seconds in which the average CPU was busy, from the text of ``/proc/stat`` (its first ``cpu`` line,
    in clock ticks summed over CPUs; idle and iowait are not busy; guest time is already in user)."""
    lines = text.splitlines()
    ticks = [int(x) for x in lines[0].split()[1:9]]
    cpus = sum(1 for line in lines[1:] if line.startswith("cpu"))
    busy = sum(ticks) - ticks[3] - ticks[4]
    return busy / _TICKS_S / max(1, cpus)


class ContentionMeter:
    """Reads the host's CPU contention counter (s, monotonic), from descriptors opened once, so it keeps
    working after the zygote hides directories or enters namespaces."""

    def __init__(self) -> None:
        self.fd, self.parse, self.source = None, None, "none"
        for path, parse, source in (("/proc/pressure/cpu", psi_some_s, "psi"), ("/proc/stat", busy_cpu_s, "stat")):
            try:
                fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                parse(os.pread(fd, 65536, 0).decode())
            except (OSError, ValueError, KeyError, IndexError):
                os.close(fd)
                continue
            self.fd, self.parse, self.source = fd, parse, source
            return

    def read_s(self) -> float | None:
        """The counter now, seconds; None when the host tells nothing."""
        if self.fd is None:
            return None
        try:
            return self.parse(os.pread(self.fd, 65536, 0).decode())
        except (OSError, ValueError, KeyError, IndexError):
            return None


class TrialClock:
    """The deadline of one trial: ``wall_s`` plus the host's CPU contention since :attr:`start`, capped."""

    def __init__(self, wall_s: float, meter: ContentionMeter) -> None:
        self.wall_s = float(wall_s)
        self.meter = meter
        self.start = time.monotonic()
        self.counter_at_start = meter.read_s()
        self.contended_s = 0.0

    def deadline(self) -> float:
        """The monotonic deadline as of now (it only moves later, and never past the cap)."""
        now = self.meter.read_s()
        if now is not None and self.counter_at_start is not None:
            self.contended_s = max(self.contended_s, now - self.counter_at_start)
        return stretched_deadline(self.start, self.wall_s, self.contended_s)

    def describe(self) -> str:
        """The timeout's detail, e.g. ``wall-clock deadline passed (5.0 s + 1.3 s of host CPU contention)``."""
        extra = min(self.contended_s, (STRETCH_MAX - 1.0) * self.wall_s)
        return f"wall-clock deadline passed ({self.wall_s:g} s + {extra:.1f} s of host CPU contention, {self.meter.source})"
