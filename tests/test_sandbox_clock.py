"""The trial deadline stretches with host CPU contention, up to a cap (rlvr_lab.sandbox.clock, section 17.7).

The unit tests drive :class:`TrialClock` with a counter the test sets. The two sandbox tests load the
host with busy processes (three per CPU, for a few seconds): a candidate that needs more wall time than
``wall_s`` only because the host is busy passes, and one that blocks forever still times out, by the cap.
"""

from __future__ import annotations

import os
import time

import pytest

from rlvr_lab.verifier import Verifier
from rlvr_lab.sandbox.clock import STRETCH_MAX, ContentionMeter, TrialClock, busy_cpu_s, psi_some_s, stretched_deadline
from rlvr_lab.verifier.wire import GRACE_S, trial_budget_s
from verifier_helpers import check_busy_host, needs_local_sandbox

PSI = """some avg10=1.20 avg60=4.80 avg300=14.79 total=7207922523
full avg10=0.00 avg60=0.00 avg300=0.00 total=0
"""
STAT = """cpu  1000 20 300 5000 100 0 30 0 0 0
cpu0 500 10 150 2500 50 0 15 0 0 0
cpu1 500 10 150 2500 50 0 15 0 0 0
intr 12345
"""


class FakeMeter:
    """A contention counter the test moves by hand."""

    source = "fake"

    def __init__(self, value: float | None = 0.0) -> None:
        self.value = value

    def read_s(self) -> float | None:
        return self.value


def test_stretched_deadline_adds_contention_and_stops_at_the_cap():
    assert stretched_deadline(100.0, 5.0, 0.0) == 105.0
    assert stretched_deadline(100.0, 5.0, 2.5) == 107.5
    assert stretched_deadline(100.0, 5.0, 1e9) == 100.0 + STRETCH_MAX * 5.0
    assert stretched_deadline(100.0, 5.0, -3.0) == 105.0  # a counter that went backwards gives nothing


def test_counters_parse_the_kernel_formats():
    assert psi_some_s(PSI) == pytest.approx(7207.922523)
    ticks = os.sysconf("SC_CLK_TCK")
    assert busy_cpu_s(STAT) == pytest.approx((1000 + 20 + 300 + 30) / ticks / 2)  # idle and iowait excluded
    with pytest.raises(ValueError):
        psi_some_s("full avg10=0.00 total=0\n")


def test_the_host_meter_reads_a_counter_that_only_grows():
    meter = ContentionMeter()
    assert meter.source in ("psi", "stat")  # every Linux has /proc/stat
    first = meter.read_s()
    busy = time.process_time() + 0.05
    while time.process_time() < busy:
        pass
    assert first is not None and meter.read_s() >= first


def test_trial_clock_moves_only_later_and_names_the_extra_time():
    meter = FakeMeter(10.0)
    clock = TrialClock(2.0, meter)
    assert clock.deadline() == pytest.approx(clock.start + 2.0)
    meter.value = 11.5
    assert clock.deadline() == pytest.approx(clock.start + 3.5)
    meter.value = 10.5  # never earlier than a deadline already given
    assert clock.deadline() == pytest.approx(clock.start + 3.5)
    meter.value = 1000.0
    assert clock.deadline() == pytest.approx(clock.start + STRETCH_MAX * 2.0)
    assert "2 s + 4.0 s of host CPU contention" in clock.describe()


def test_without_a_counter_the_deadline_is_the_plain_wall_clock():
    clock = TrialClock(2.0, FakeMeter(None))
    assert clock.deadline() == pytest.approx(clock.start + 2.0)


def test_callers_wait_past_the_longest_stretched_trial():
    assert trial_budget_s(5.0) == STRETCH_MAX * 5.0 + GRACE_S


@pytest.mark.slow
@needs_local_sandbox
def test_a_busy_host_does_not_fail_a_correct_candidate_but_a_hang_still_ends():
    verifier = Verifier(backend="local", retries=0, seed=5)
    try:
        slow = check_busy_host(verifier, wall_s=3.0)
    finally:
        verifier.close()
    # with about a quarter of a CPU beside the busy processes, its CPU second took more than wall_s of wall
    # time (and less than the cap, 9 s): a fixed deadline would have failed it
    assert slow.trials[0].duration_s > 3.0
