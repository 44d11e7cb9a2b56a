"""Training a tiny code model with GRPO against the sandboxed verifier (sections 17.5, 17.10).

A small Python API for notebooks and scripts::

    from rlvr_lab.train import TrainConfig, train
    result = train(TrainConfig.preset("ci", out_dir="runs/demo"))
    result.before["pass1"], result.after["pass1"], result.wall_s

Presets: ``ci`` (seconds), ``cpu`` (minutes on a laptop), ``gpu`` (Colab). ``engine="trl"`` trains the same
model on the same tasks with TRL's GRPOTrainer.

The pieces a lab takes apart are public too, and this list is the whole public API (the labs and chapters
import nothing else from ``rlvr_lab.train``): :func:`setup` and :class:`Run` (a run's surroundings), the
step functions ``sample_step -> grade_step -> update_step -> log_step`` with their dataclasses, the
learner's :func:`grpo_update`, :func:`evaluate` and :func:`build_policy`, the :class:`Grader` in front of
the verifier pool, and the warm start's :func:`sft`. Importing this package does not import torch: each
name is loaded from the module in :data:`API` on first use.
"""

from __future__ import annotations

import importlib

from rlvr_lab.train.config import PRESETS, TrainConfig

#: Public name -> the module of ``rlvr_lab.train`` that defines it.
API = {
    "setup": "run", "Run": "run", "Timer": "run", "open_pool": "run", "heldout_subset": "run",
    "sampling_of": "run", "resolve_device": "run", "resolve_dtype": "run",
    "TrainResult": "grpo_loop", "Learner": "grpo_loop", "Sampled": "grpo_loop", "Graded": "grpo_loop",
    "warm_start": "grpo_loop", "make_learner": "grpo_loop", "sample_step": "grpo_loop", "grade_step": "grpo_loop",
    "update_step": "grpo_loop", "log_step": "grpo_loop",
    "build_policy": "learner", "reference_logprobs": "learner", "grpo_update": "learner", "evaluate": "learner",
    "Grader": "rollout", "PolicyHandle": "rollout", "collect": "rollout", "tokenizer_digest": "rollout",
    "prompt_ids": "rollout", "sft": "supervised", "format_report": "report", "write_report": "report",
    "read_lineage": "checkpoint", "save_checkpoint": "checkpoint",
}

__all__ = ["PRESETS", "TrainConfig", "train", *API]


def __getattr__(name: str):
    """``rlvr_lab.train.evaluate`` and the other names of :data:`API`, imported on first use."""
    if name in API:
        return getattr(importlib.import_module(f"rlvr_lab.train.{API[name]}"), name)
    raise AttributeError(f"module 'rlvr_lab.train' has no attribute {name!r}")


def train(config: TrainConfig, pool=None):
    """Run warm start, GRPO and held-out evaluation; returns a ``TrainResult`` (see :mod:`.grpo_loop`).

    ``pool`` is an optional :class:`rlvr_lab.verifier.VerifierPool` to share between runs.

    >>> TrainConfig.preset("ci").engine
    'ours'
    """
    if config.engine == "trl":
        from rlvr_lab.train.trl_engine import train_trl

        return train_trl(config, pool=pool)
    from rlvr_lab.train.grpo_loop import train as train_ours

    return train_ours(config, pool=pool)
