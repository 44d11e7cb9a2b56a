"""``rlvr-lab grade --ray-address``: a class's notebooks graded over a Ray cluster (section 17.14, spread
as section 17.9.5 spreads the verifier fleet, with its faults).

Each grading slot is a Ray actor (:class:`GradingActor`) holding one warm
:class:`~rlvr_lab.grading.worker.GradingSlot` on its machine and running
:func:`~rlvr_lab.grading.worker.grade_notebook`, the function the one-machine grader runs in its threads:
the same sandbox per notebook, the key shipped as data, each result naming its ``node``. The slots, the
queue and the faults are :class:`rlvr_lab.ray_workers.RayWorkers`: a notebook lost with its slot is
*ungraded*, never a zero, and goes back to the queue for a slot on another machine (recorded as a
:class:`LostNotebook`); after ``lost_retries`` losses its outcome is ``infra`` with the reason.
"""

from __future__ import annotations

import glob
import os
import shutil
import tempfile
from dataclasses import asdict, dataclass

from rlvr_lab.grading.notebook_sandbox import EXIT_GRACE_S
from rlvr_lab.grading.worker import GradeSettings, GradingSlot, KeyData, NotebookJob, grade_notebook
from rlvr_lab.ray_workers import Call, RayWorkers, node_name
from rlvr_lab.ray_workers import ray_module as fleet_ray_module
from rlvr_lab.verifier.wire import trial_budget_s

#: Seconds a slot keeps trying to start a replacement actor before it gives up (the others go on).
REPLACE_S = 120.0
#: Seconds allowed for an actor to start and open its sandbox slot, over the notebook's own budget.
START_S = 90.0
#: Scratch folders of grading actors are named ``rlvr-grade-ray-<pid>-...`` on their machine.
SCRATCH_PREFIX = "rlvr-grade-ray-"


def ray_module():
    """``ray``, or an ImportError naming the extra that installs it."""
    return fleet_ray_module("grading with ray_address")


def sweep_orphans() -> list[str]:
    """Remove this machine's scratch folders of grading actors that died (killed with their slot open)."""
    removed = []
    for folder in glob.glob(os.path.join(tempfile.gettempdir(), SCRATCH_PREFIX + "*-*")):
        try:
            pid = int(os.path.basename(folder)[len(SCRATCH_PREFIX) :].split("-", 1)[0])
            if os.stat(folder).st_uid != os.getuid() or pid == os.getpid():
                continue
            os.kill(pid, 0)  # alive (or a reused PID): keep
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
        except (ValueError, OSError):
            continue
    return removed


class GradingActor:
    """One grading slot on one machine: the key (as data), the settings, a warm sandbox slot."""

    def __init__(self, key: KeyData, settings: GradeSettings):
        self.key, self.settings, self.slot = key, settings, None
        sweep_orphans()  # what an actor killed on this machine before left behind
        self.node = node_name()

    def info(self) -> dict:
        import rlvr_lab

        return {"node": self.node, "pid": os.getpid(), "version": rlvr_lab.__version__}

    def grade(self, job: NotebookJob) -> dict:
        if self.slot is None:
            self.slot = GradingSlot(self.key, self.settings, self.node, f"{SCRATCH_PREFIX}{os.getpid()}-")
        return grade_notebook(job, self.key, self.settings, self.slot)

    def close(self) -> None:
        if self.slot is not None:
            self.slot.close()
            self.slot = None


_ACTOR = None


def _actor_class():
    """:class:`GradingActor` as a Ray actor class, made on first use so that this module imports without Ray."""
    global _ACTOR
    if _ACTOR is None:
        _ACTOR = ray_module().remote(max_restarts=0, max_task_retries=0, max_concurrency=1)(GradingActor)
    return _ACTOR


@dataclass(frozen=True)
class LostNotebook:
    """One notebook lost with its slot (it was ungraded and went back to the queue, or gave up)."""

    path: str
    slot: int
    node: str
    error: str
    retried: bool
    """False when ``lost_retries`` was exhausted and the notebook's outcome became ``infra``."""


class NotebookCall(Call):
    """One notebook sent to a grading actor; ``on_done(job, result, error, attempts, node)`` hears its end."""

    def __init__(self, job: NotebookJob, on_done, timeout_s: float):
        self.job, self.on_done, self.timeout_s = job, on_done, timeout_s

    def send(self, actor):
        return actor.grade.remote(self.job)

    def done(self, result) -> None:
        self.on_done(self.job, result, None, self.lost + 1, result["node"])

    def failed(self, error: BaseException, node: str) -> None:  # grading itself raised on that machine
        self.on_done(self.job, None, error, self.lost + 1, node)

    def on_lost(self, slot: int, node: str, error: str, retried: bool) -> LostNotebook:
        fault = LostNotebook(self.job.path, slot, node, error, retried)
        if not retried:
            self.on_done(self.job, None, fault, self.lost, node)
        return fault


class RayGrader:
    """``workers`` grading actors over a Ray cluster; :meth:`run` grades jobs and reports each one.

    ``address``: the cluster (``"auto"``, ``"HOST:6379"``, ``"ray://HOST:10001"``); when this process is
    already connected to Ray, that connection is used as it is. ``lost_retries``: times a notebook lost
    with its slot is sent again before its outcome is ``infra``. ``slot_cpus``: logical CPUs reserved per slot.
    """

    def __init__(
        self,
        key: KeyData,
        settings: GradeSettings,
        workers: int = 2,
        address: str | None = "auto",
        lost_retries: int = 2,
        slot_cpus: float = 1.0,
    ):
        import rlvr_lab

        self.workers, self.lost_retries = workers, lost_retries
        self.budget = 2 * (trial_budget_s(settings.timeout_s) + EXIT_GRACE_S) + START_S  # NotebookRunner tries twice
        self.slots = RayWorkers(
            _actor_class(),
            lambda i, generation: (key, settings),
            workers,
            address=address,
            slot_cpus=slot_cpus,
            check_fit=True,
            lost_retries=lost_retries,
            start_timeout_s=START_S,
            replace_s=REPLACE_S,
            name="ray-grading-slot",
        )
        wrong = {i["version"] for i in self.slots.slot_info} - {rlvr_lab.__version__}
        if wrong:
            self.close()
            raise RuntimeError(
                f"grading nodes run rlvr-lab {sorted(wrong)}, this grader {rlvr_lab.__version__}: "
                "install the same version on every machine"
            )

    @property
    def faults(self) -> list[LostNotebook]:
        """Every notebook run lost with its slot, in order."""
        return self.slots.faults

    def nodes(self) -> list[str]:
        """Every node a slot ran on during this grader's life (a lost slot's node included), sorted."""
        return sorted(self.slots.seen)

    def run(self, jobs: list, on_done) -> None:
        """Grade every job; call ``on_done(job, result, error, attempts, node)`` once per job, from slot threads.

        ``result`` is :func:`grade_notebook`'s dict, or None with ``error`` the exception (the notebook's
        own grading raised, e.g. no sandbox on that machine) or a ``LostNotebook`` once retries ran out.
        """
        for job in jobs:
            self.slots.put(lambda job=job: [NotebookCall(job, on_done, self.budget)])
        self.slots.drain()

    def faults_as_dicts(self) -> list[dict]:
        return [asdict(f) for f in self.faults]

    def close(self) -> None:
        """Close every slot's sandbox and end its actor; leave Ray if this grader joined it."""
        self.slots.close()
