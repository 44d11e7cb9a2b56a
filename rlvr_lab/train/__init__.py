"""Training a tiny code model with GRPO against the sandboxed verifier (sections 17.5, 17.10).

A small Python API for notebooks and scripts::

    from rlvr_lab.train import TrainConfig, train
    result = train(TrainConfig.preset("ci", out_dir="runs/demo"))
    result.before["pass1"], result.after["pass1"], result.wall_s

Presets: ``ci`` (seconds), ``cpu`` (minutes on a laptop), ``gpu`` (Colab). ``engine="trl"`` trains the same
model on the same tasks with TRL's GRPOTrainer. Importing this package does not import torch.
"""

from __future__ import annotations

from rlvr_lab.train.config import PRESETS, TrainConfig

__all__ = ["PRESETS", "TrainConfig", "train"]


def train(config: TrainConfig, pool=None):
    """Run warm start, GRPO and held-out evaluation; returns a ``TrainResult`` (see :mod:`.grpo_loop`).

    ``pool`` is an optional :class:`rlvr_lab.verifier.VerifierPool` to share between runs.

    >>> TrainConfig.preset("ci").engine
    'ours'
    """
    if config.engine == "trl":
        from rlvr_lab.train.trl_engine import train_trl

        return train_trl(config, pool=pool)
    from rlvr_lab.train.grpo_loop import train as _train

    return _train(config, pool=pool)
