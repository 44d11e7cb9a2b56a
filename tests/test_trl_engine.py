"""``--engine trl``: TRL's GRPOTrainer trains the same model on the same tasks with the verifier reward."""
import json
import pytest
from rlvr_lab.tasks import make_suite
from rlvr_lab.train import TrainConfig, train
from rlvr_lab.train.rollout import Grader
from rlvr_lab.train.trl_engine import reward_function

class _FailedFuture:

    def result(self, timeout=None):
        raise RuntimeError('sandbox host lost')

class _FailingPool:
    """A pool whose verifier faults: every verdict is unavailable, which must stay None, never 0 or 1."""

    def submit(self, candidate, fixture):
        return _FailedFuture()

def test_reward_function_never_coerces_an_unavailable_verdict():
    pass

@pytest.mark.slow
def test_trl_engine_runs_steps_with_the_verifier_reward(tmp_path):
    pass