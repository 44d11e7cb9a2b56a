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
