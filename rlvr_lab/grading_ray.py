"""``rlvr-lab grade --ray-address``: a class's notebooks graded over a Ray cluster (section 17.14, spread
as section 17.9 spreads the verifier fleet, with its faults).

Each grading slot is a Ray actor (:class:`GradingActor`) on whichever machine Ray placed it (slots are
spread over the machines); it opens one warm :class:`~rlvr_lab.grading_worker.GradingSlot` there and runs
:func:`~rlvr_lab.grading_worker.grade_notebook` -- the very function the one-machine grader runs in its
threads -- for one notebook at a time: its own sandbox, the same isolation, the key shipped as data.
Every result names its ``node``.

Faults are the fleet's faults (17.9.5). A slot whose worker process or machine dies while it grades a
notebook (``RayActorError``, ``NodeDiedError``, ...), or that does not answer within the notebook's budget,
leaves that notebook *ungraded*, never a zero and never a pass: it goes back to the queue for a slot
on another machine (the lost machine is avoided for ``AVOID_S`` seconds; the lost slot is replaced by a
fresh actor wherever Ray finds room), and the loss is recorded (:class:`LostNotebook`, and the notebook's ``attempts``). After
``lost_retries`` losses the notebook's outcome is ``infra`` with the reason, and the report says so.
"""

from __future__ import annotations

import glob
import os
import shutil
import tempfile
import threading
import time
from collections import deque
from dataclasses import asdict, dataclass

from rlvr_lab.grading_sandbox import EXIT_GRACE_S
from rlvr_lab.grading_worker import GradeSettings, GradingSlot, KeyData, NotebookJob, grade_notebook
from rlvr_lab.verifier.ray_pool import ray_module as verifier_ray_module
from rlvr_lab.verifier.wire import trial_budget_s

#: Seconds a lost notebook waits for a slot on another machine before one on the machine it was lost on may take it.
AVOID_S = 10.0
#: Seconds a slot keeps trying to start a replacement actor before it gives up (the others go on).
REPLACE_S = 120.0
#: Seconds allowed for an actor to start and open its sandbox slot, over the notebook's own budget.
START_S = 90.0


def ray_module():
    """``ray``, or an ImportError naming the extra that installs it (the verifier fleet's check)."""
    return verifier_ray_module("grading with ray_address")


_ACTOR = None
#: Scratch folders of grading actors are named ``rlvr-grade-ray-<pid>-...`` on their machine.
SCRATCH_PREFIX = "rlvr-grade-ray-"


def sweep_orphans() -> list[str]:
    """Remove this machine's scratch folders of grading actors that died (killed with their slot open)."""
    removed = []
    for folder in glob.glob(os.path.join(tempfile.gettempdir(), SCRATCH_PREFIX + "*-*")):
        try:
            pid = int(os.path.basename(folder)[len(SCRATCH_PREFIX):].split("-", 1)[0])
            if os.stat(folder).st_uid != os.getuid() or pid == os.getpid():
                continue
            os.kill(pid, 0)  # alive (or a reused PID): keep
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
        except (ValueError, OSError):
            continue
    return removed


def _actor_class():
    """The Ray actor class, made on first use so that this module imports without Ray."""
    global _ACTOR
    if _ACTOR is None:
        ray = ray_module()

        class GradingActor:
            """One grading slot on one machine: the key (as data), the settings, a warm sandbox slot."""

            def __init__(self, key: KeyData, settings: GradeSettings):
                self.key, self.settings, self.slot = key, settings, None
                sweep_orphans()  # what an actor killed on this machine before left behind
                self.node = f"{ray.util.get_node_ip_address()}/{ray.get_runtime_context().get_node_id()[:12]}"

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

        _ACTOR = ray.remote(max_restarts=0, max_task_retries=0, max_concurrency=1)(GradingActor)
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


class RayGrader:
    """``workers`` grading actors over a Ray cluster; :meth:`run` grades jobs and reports each one.

    ``address``: the cluster (``"auto"``, ``"HOST:6379"``, ``"ray://HOST:10001"``); when this process is
    already connected to Ray, that connection is used as it is. ``lost_retries``: times a notebook lost
    with its slot is sent again before its outcome is ``infra``. ``slot_cpus``: logical CPUs reserved per slot.
    """

    def __init__(self, key: KeyData, settings: GradeSettings, workers: int = 2, address: str | None = "auto",
                 lost_retries: int = 2, slot_cpus: float = 1.0):
        import rlvr_lab

        ray = self.ray = ray_module()
        self.key, self.settings, self.workers, self.lost_retries = key, settings, workers, lost_retries
        self.slot_cpus = slot_cpus
        self.budget = 2 * (trial_budget_s(settings.timeout_s) + EXIT_GRACE_S) + START_S  # NotebookRunner tries twice
        self.owns_ray = not ray.is_initialized()
        if self.owns_ray:
            ray.init(address=address, include_dashboard=False, log_to_driver=False, logging_level="WARNING")
        cpus = ray.cluster_resources().get("CPU", 0)
        if workers * slot_cpus > cpus:
            if self.owns_ray:
                ray.shutdown()
            raise ValueError(f"workers must fit the cluster: {workers} grading slots need {workers * slot_cpus:g} "
                             f"CPUs, the cluster at {address!r} has {cpus:g}")
        self.faults: list[LostNotebook] = []
        self.slots: list = [None] * workers
        self.info: list[dict] = [{} for _ in range(workers)]
        self.seen: set[str] = set()
        try:
            for i in range(workers):
                self._spawn(i)
            for i in range(workers):
                self.info[i] = ray.get(self.slots[i].info.remote(), timeout=START_S)
                self.seen.add(self.info[i]["node"])
        except BaseException:
            self.close()
            raise
        wrong = {i["version"] for i in self.info} - {rlvr_lab.__version__}
        if wrong:
            self.close()
            raise RuntimeError(f"grading nodes run rlvr-lab {sorted(wrong)}, this grader {rlvr_lab.__version__}: "
                               "install the same version on every machine")

    def _spawn(self, i: int) -> None:
        self.slots[i] = _actor_class().options(num_cpus=self.slot_cpus, scheduling_strategy="SPREAD").remote(
            self.key, self.settings)

    def _replace(self, i: int) -> bool:
        """Kill slot ``i`` and start a fresh actor until one answers (False after ``REPLACE_S`` seconds)."""
        ray, end, delay = self.ray, time.monotonic() + REPLACE_S, 0.5
        while True:
            try:
                ray.kill(self.slots[i], no_restart=True)
            except Exception:
                pass
            self._spawn(i)
            try:
                self.info[i] = ray.get(self.slots[i].info.remote(), timeout=START_S)
                self.seen.add(self.info[i]["node"])
                return True
            except Exception:
                if time.monotonic() + delay > end:
                    return False
                time.sleep(delay)
                delay = min(2 * delay, 10.0)

    def nodes(self) -> list[str]:
        """Every node a slot ran on during this grader's life (a lost slot's node included), sorted."""
        return sorted(self.seen)

    def run(self, jobs: list, on_done) -> None:
        """Grade every job; call ``on_done(job, result, error, attempts, node)`` once per job, from slot threads.

        ``result`` is :func:`grade_notebook`'s dict, or None with ``error`` the exception (the notebook's
        own grading raised, e.g. no sandbox on that machine) or a ``LostNotebook`` once retries ran out.
        """
        queue, retry, lost = deque(jobs), deque(), {job.index: 0 for job in jobs}
        cv = threading.Condition()
        state = {"busy": 0, "alive": self.workers}

        def take(i: int):
            with cv:
                while True:
                    for entry in retry:  # a lost notebook goes to another machine first
                        job, avoid, since = entry
                        if self.info[i].get("node") != avoid or time.monotonic() > since + AVOID_S:
                            retry.remove(entry)
                            state["busy"] += 1
                            return job
                    if queue:
                        state["busy"] += 1
                        return queue.popleft()
                    if not retry and state["busy"] == 0:
                        return None
                    cv.wait(1.0)

        def work(i: int) -> None:
            ray = self.ray
            while (job := take(i)) is not None:
                try:
                    try:
                        result = ray.get(self.slots[i].grade.remote(job), timeout=self.budget)
                    except ray.exceptions.RayTaskError as exc:  # grading itself raised on that machine
                        cause = getattr(exc, "cause", None)
                        on_done(job, None, cause if isinstance(cause, BaseException) else exc, lost[job.index] + 1,
                                self.info[i].get("node", ""))
                        continue
                    except (ray.exceptions.RayError, TimeoutError) as exc:  # slot, process or machine lost
                        lost[job.index] += 1
                        error = f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0]}"[:300]
                        fault = LostNotebook(job.path, i, self.info[i].get("node", ""), error,
                                             lost[job.index] <= self.lost_retries)
                        self.faults.append(fault)
                        if fault.retried:
                            with cv:
                                retry.append((job, fault.node, time.monotonic()))
                        else:
                            on_done(job, None, fault, lost[job.index], fault.node)
                        if not self._replace(i):
                            return
                        continue
                    on_done(job, result, None, lost[job.index] + 1, result["node"])
                finally:
                    with cv:
                        state["busy"] -= 1
                        cv.notify_all()

        def guarded(i: int) -> None:
            try:
                work(i)
            finally:
                with cv:
                    state["alive"] -= 1
                    if state["alive"] == 0:  # no slot left: nothing is dropped, each remaining job says so
                        while queue or retry:
                            job = queue.popleft() if queue else retry.popleft()[0]
                            fault = LostNotebook(job.path, i, "", "no grading slot could be started", False)
                            self.faults.append(fault)
                            on_done(job, None, fault, lost[job.index] + 1, "")
                    cv.notify_all()

        threads = [threading.Thread(target=guarded, args=(i,), name=f"ray-grading-slot-{i}", daemon=True)
                   for i in range(self.workers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    def faults_as_dicts(self) -> list[dict]:
        return [asdict(f) for f in self.faults]

    def close(self) -> None:
        """Close every slot's sandbox and end its actor; leave Ray if this grader joined it."""
        ray = self.ray
        for handle in self.slots:
            if handle is None:
                continue
            try:
                ray.get(handle.close.remote(), timeout=30)
            except Exception:
                pass
            try:
                ray.kill(handle, no_restart=True)
            except Exception:
                pass
        if self.owns_ray and ray.is_initialized():
            ray.shutdown()
