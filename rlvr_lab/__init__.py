"""RLVR Lab: the companion library of the course on reinforcement learning with verifiable rewards.

The math modules (:mod:`rlvr_lab.rewards`, :mod:`rlvr_lab.credit`, :mod:`rlvr_lab.cycle_time`)
need only numpy; :mod:`rlvr_lab.grpo` and the trainer need torch.
"""

__version__ = "0.1.0"
