"""One function for every log-prob of the loss: eval mode while scoring (sections 17.5.2, 17.6.1).

GRPO's ratio pi_theta/pi_old compares the log-prob the update computes with the one recorded at sampling,
and the KL term compares it with the reference's. The three must be the same function of the weights, or
the ratio is noise (the replay check measures the difference, :func:`rlvr_lab.train.learner.check_replay`).
A model in train mode is a different function: dropout (0.1 in many pretrained configs, e.g. GPT-2's) and
any other train-time randomness. So every function that computes such a log-prob runs the model in eval
mode (:func:`scored`), the gradient pass included: eval mode keeps gradients, it only turns that off.
"""

from __future__ import annotations

import functools
from contextlib import contextmanager


@contextmanager
def scoring_mode(model):
    """``model`` in eval mode inside the block, its mode restored after."""
    was = model.training
    model.eval()
    try:
        yield model
    finally:
        model.train(was)


def scored(fn):
    """Run ``fn(model, ...)`` in :func:`scoring_mode` (the functions that compute log-probs)."""

    @functools.wraps(fn)
    def wrapper(model, *args, **kwargs):
        with scoring_mode(model):
            return fn(model, *args, **kwargs)

    return wrapper


def _is_dropout_name(name: str) -> bool:
    return "dropout" in name.lower() or name.lower().endswith("pdrop")


def without_dropout(model) -> list[str]:
    """Set every dropout probability of ``model`` to 0, in place, for a trainer that scores in train mode
    (TRL's ``GRPOTrainer`` runs its gradient pass, reference and old log-probs in train mode); returns what
    it changed. Three kinds: ``nn.Dropout`` modules (``p``); float attributes of modules whose names say
    dropout (functional dropout read at call time, e.g. the attention of Llama and Qwen2 models, which
    TRL's own ``disable_dropout`` misses); and such fields of the model's config.

    >>> import torch
    >>> m = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Dropout(0.1))
    >>> m[0].attention_dropout = 0.1
    >>> without_dropout(m)
    ['0.attention_dropout', '1.p']
    >>> m.train()(torch.ones(1, 2)).equal(m.eval()(torch.ones(1, 2)))
    True
    """
    import torch

    changed = []
    for prefix, module in model.named_modules():
        where = f"{prefix}." if prefix else ""
        if isinstance(module, torch.nn.modules.dropout._DropoutNd) and module.p:
            module.p = 0.0
            changed.append(f"{where}p")
        for name, value in list(vars(module).items()):
            if _is_dropout_name(name) and isinstance(value, float) and value:
                setattr(module, name, 0.0)
                changed.append(f"{where}{name}")
    config = getattr(model, "config", None)
    for name in list(getattr(config, "__dict__", {})):
        value = getattr(config, name)
        if _is_dropout_name(name) and isinstance(value, float) and value:
            setattr(config, name, 0.0)
            changed.append(f"config.{name}")
    return sorted(changed)
