"""``--engine trl``: TRL's GRPOTrainer trains the same model on the same tasks with the verifier reward."""

import json

import pytest

from rlvr_lab.train import TrainConfig, train
from rlvr_lab.train.rollout import Grader
from rlvr_lab.train.trl_engine import reward_function
from rlvr_lab.tasks import make_suite


class _FakeFuture:
    def __init__(self, verdict):
        self.verdict = verdict

    def result(self, timeout=None):
        if isinstance(self.verdict, Exception):
            raise self.verdict
        return self.verdict


class _FailingPool:
    """A pool whose verifier faults: every verdict is unavailable, which must stay None, never 0 or 1."""

    def submit(self, candidate, fixture):
        return _FakeFuture(RuntimeError("sandbox host lost"))


def test_reward_function_never_coerces_an_unavailable_verdict():
    suite = make_suite(seed=0, problems_per_family=1)
    by_id = {t.task_id: t for t in suite}
    reward = reward_function(Grader(_FailingPool()), by_id)
    assert reward(prompts=["p", "p"], completions=["    return 1\n"] * 2, task_id=[suite[0].task_id] * 2) == [None, None]


@pytest.mark.slow
def test_trl_engine_runs_steps_with_the_verifier_reward(tmp_path):
    config = TrainConfig.preset("ci", out_dir=str(tmp_path), engine="trl", grpo_steps=1)
    result = train(config)
    assert result.rollouts == config.tasks_per_step * config.group_size
    logged = [r for r in result.metrics if "rewards/verifier_reward/mean" in r]
    assert logged and all(0.0 <= r["rewards/verifier_reward/mean"] <= 1.0 for r in logged)
    assert all(r["loss"] == r["loss"] for r in result.metrics if "loss" in r)  # finite, not NaN
    summary = json.load(open(tmp_path / "summary.json"))
    assert 0.0 <= summary["after"]["pass1"] <= 1.0
