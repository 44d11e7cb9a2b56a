"""Training a tiny code model with GRPO against the sandboxed verifier (sections 17.5, 17.10).

    from rlvr_lab.train import TrainConfig, train
    result = train(TrainConfig.preset("ci", out_dir="runs/demo"))
    result.before["pass1"], result.after["pass1"], result.wall_s

Presets: ``ci`` (seconds), ``cpu`` (minutes on a laptop), ``gpu`` (Colab), ``t4`` (a pretrained 0.5B instruct
code model with LoRA on a Colab T4, MBPP and HumanEval); ``engine="trl"`` trains the same
model on TRL's GRPOTrainer. ``__all__`` is what the chapters, labs and experiments use. Importing this
package does not import torch: each name is loaded from its module in :data:`API` on first use.
"""

from __future__ import annotations

import importlib
import warnings

from rlvr_lab.train.config import TrainConfig

#: Public name -> the module of ``rlvr_lab.train`` that defines it.
API = {
    # one step taken apart (lab 1)
    "setup": "run",
    "Run": "run",
    "warm_start": "grpo_loop",
    "make_learner": "grpo_loop",
    "sample_step": "grpo_loop",
    "Sampled": "grpo_loop",
    "grade_step": "grpo_loop",
    "Graded": "grpo_loop",
    "update_step": "grpo_loop",
    # the update (chapter 9)
    "Learner": "learner",
    "GRPOBatch": "learner",
    "make_batch": "learner",
    "grpo_update": "learner",
    # collection, evaluation, warm start (chapters 5, 7, 9; lab 4; experiments)
    "VerdictCache": "rollout",
    "PolicyHandle": "rollout",
    "collect": "rollout",
    "tokenizer_digest": "rollout",
    "prompt_ids": "rollout",
    "evaluate": "learner",
    "heldout_subset": "run",
    "sampling_of": "run",
    "sft": "supervised",
    "open_pool": "run",
    "read_lineage": "checkpoint",
    "save_checkpoint": "checkpoint",
}

#: Names this package exported in 0.1 that nothing uses: (module, name there), importable with a
#: DeprecationWarning until 0.2.
DEPRECATED = {
    "PRESETS": ("config", "PRESETS"),
    "Timer": ("run", "Timer"),
    "resolve_device": ("run", "resolve_device"),
    "resolve_dtype": ("run", "resolve_dtype"),
    "TrainResult": ("grpo_loop", "TrainResult"),
    "log_step": ("grpo_loop", "log_step"),
    "build_policy": ("learner", "build_policy"),
    "reference_logprobs": ("learner", "reference_logprobs"),
    "Grader": ("rollout", "VerdictCache"),
    "format_report": ("report", "format_report"),
    "write_report": ("report", "write_report"),
}

__all__ = ["TrainConfig", "train", *API]


def __getattr__(name: str):
    """The names of :data:`API`, imported on first use; those of :data:`DEPRECATED` with a warning."""
    if name in API:
        return getattr(importlib.import_module(f"rlvr_lab.train.{API[name]}"), name)
    if name in DEPRECATED:
        module, new = DEPRECATED[name]
        warnings.warn(
            f"rlvr_lab.train.{name} is no longer exported: use rlvr_lab.train.{module}.{new} "
            "(the old name goes in 0.2)",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(f"rlvr_lab.train.{module}"), new)
    raise AttributeError(f"module 'rlvr_lab.train' has no attribute {name!r}")


def train(config: TrainConfig, pool=None):
    """Run warm start, GRPO and held-out evaluation; returns a ``TrainResult`` (see :mod:`.grpo_loop`).

    ``pool`` is an optional :class:`rlvr_lab.verifier.VerifierPool` to share between runs. When
    ``config.out_dir`` already holds this run, finished, its stored result is returned and nothing is
    trained or rewritten (:func:`rlvr_lab.train.finished.finished_result`); an unfinished one is resumed.

    >>> TrainConfig.preset("ci").engine
    'ours'
    """
    if config.env == "repair":  # whole episodes of the repair environment: a summary dict, not a TrainResult
        from rlvr_lab.train.repair_loop import train_repair

        return train_repair(config, pool=pool)
    if config.engine == "trl":
        from rlvr_lab.train.trl_engine import train_trl

        return train_trl(config, pool=pool)
    from rlvr_lab.train.grpo_loop import train as train_ours
    from rlvr_lab.train.finished import finished_result

    done = finished_result(config)
    return done if done is not None else train_ours(config, pool=pool)
