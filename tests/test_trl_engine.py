"""``--engine trl``: TRL's GRPOTrainer trains the same model on the same tasks with the verifier reward."""

import json

import pytest

from rlvr_lab.train import TrainConfig, train
from rlvr_lab.train.rollout import VerdictCache
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
    reward = reward_function(VerdictCache(_FailingPool()), by_id)
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


class _RecordingPool:
    """Answers from a table and records each queue entry (candidates per fixture) it was given."""

    def __init__(self, outcome):
        self.outcome, self.entries = outcome, []

    def submit_many(self, candidates, fixture):
        from rlvr_lab.verifier.schema import Verdict

        self.entries.append((fixture.checker_version, len(candidates)))
        return [_FakeFuture(Verdict(outcome=self.outcome(c, fixture), candidate_digest=c.digest,
                                    fixture=fixture.name, fixture_version=fixture.version,
                                    checker_version=fixture.checker_version, backend="fake"))
                for c in candidates]


def test_grader_keeps_public_and_hidden_verdicts_apart_and_sends_one_entry_per_fixture():
    """A verdict from a task's public tests must never be reused as its hidden-test reward (same fixture
    name and version, different checker); and a group's candidates reach one slot as one entry."""
    from rlvr_lab.train.rollout import public_fixture

    task = make_suite(seed=0, problems_per_family=1)[0]
    pool = _RecordingPool(lambda c, fx: "pass" if fx.checker_version.endswith("-public") else "fail")
    grader = VerdictCache(pool)
    same = task.candidate("    return 1\n")
    public = grader.grade([(same, public_fixture(task.fixture))])
    hidden = grader.grade([(same, task.fixture)])
    assert [v.outcome for v, _ in public] == ["pass"] and [v.outcome for v, cached in hidden] == ["fail"]
    assert not hidden[0][1], "the hidden-test grade came from the public-test cache"
    others = [task.candidate(f"    return {i}\n") for i in range(2, 6)]
    graded = grader.grade([(c, task.fixture) for c in others + others[:2] + [same]])
    assert pool.entries[-1] == (task.fixture.checker_version, 4)  # duplicates and the cached one not resent
    assert [cached for _, cached in graded] == [False] * 6 + [True]
