"""Repair episodes on TRL's GRPOTrainer through its rollout hook (issue 24): the layout of an episode as one
completion, and a real TRL run whose loss scores the policy's tokens only and whose first pass replays the
recorded log-probs."""

from types import SimpleNamespace

import pytest

from rlvr_lab.envs.repair_tasks import make_repair_suite
from rlvr_lab.records import Invocation
from verifier_helpers import needs_local_sandbox


def _record(calls):
    """What the layout reads of a record: its id and its invocations."""
    return SimpleNamespace(rollout_id="e0-g0-r0", invocations=calls)


def test_an_episode_becomes_one_completion_with_observations_masked():
    """The prompt is the first context; the actions carry mask 1 and their log-probs, the observations
    between them mask 0 and log-prob 0; the last observation (read by no call) is left out; a prefix that is
    not the context so far is refused."""
    from rlvr_lab.train.trl_repair import episode_completion

    a = Invocation(0, [1, 2], [5, 6], [-0.1, -0.2], 0, "eos", observation_ids=[7, 8, 9])
    b = Invocation(1, [1, 2, 5, 6, 7, 8, 9], [10], [-0.3], 0, "eos", observation_ids=[11])
    prompt, ids, mask, logps = episode_completion(_record([a, b]))
    assert prompt == [1, 2]
    assert ids == [5, 6, 7, 8, 9, 10]
    assert mask == [1, 1, 0, 0, 0, 1]
    assert logps == [-0.1, -0.2, 0.0, 0.0, 0.0, -0.3]
    bad = Invocation(1, [1, 2, 5, 6], [10], [-0.3], 0, "eos")
    with pytest.raises(ValueError, match="not the exact delivered context"):
        episode_completion(_record([a, bad]))
    with pytest.raises(ValueError, match="no policy call"):
        episode_completion(_record([]))


def test_the_rollout_function_refuses_a_batch_that_is_not_whole_groups():
    """TRL hands each prompt num_generations times in a row; anything else is refused, not regrouped."""
    from rlvr_lab.train.config import TrainConfig
    from rlvr_lab.train.trl_repair import repair_rollout_func

    task = make_repair_suite(variants=1)[0]
    fn = repair_rollout_func({"a": task}, None, TrainConfig(), None, None, "d", None, "/dev/null", 512)
    trainer = SimpleNamespace(num_generations=2)
    with pytest.raises(ValueError, match="whole groups"):
        fn(["a", "a", "a"], trainer)
    with pytest.raises(ValueError, match="in a row"):
        fn(["a", "b"], trainer)
    with pytest.raises(KeyError, match="no task's first observation"):
        fn(["b", "b"], trainer)


@needs_local_sandbox
def test_trl_trains_whole_repair_episodes_through_its_rollout_hook(tmp_path):
    """``train_repair_trl`` on the ci preset: TRL's trainer takes two steps on whole episodes; the records are
    ours (one per episode, exact prefixes), every first pass replayed the records within 1e-4 nats, and the
    summary reads like our engine's (the CLI's closing lines format it)."""
    import json

    from rlvr_lab.records import read_records
    from rlvr_lab.train import TrainConfig
    from rlvr_lab.train.repair_loop import format_summary
    from rlvr_lab.train.trl_repair import train_repair_trl

    config = TrainConfig.preset("ci", env="repair", grpo_steps=2, out_dir=str(tmp_path / "trl"))
    summary = train_repair_trl(config)
    assert "held-out repair rate:" in format_summary(summary)
    assert json.load(open(tmp_path / "trl" / "summary.json"))["episodes"] == summary["episodes"]
    assert summary["engine"] == "trl" and summary["env"] == "repair"
    records = read_records(str(tmp_path / "trl" / "records.jsonl"))
    assert summary["episodes"] == len(records) == 2 * config.tasks_per_step * config.group_size
    assert len({c.policy_version for r in records for c in r.invocations}) == 2  # one per generation
    assert 0.0 <= summary["replay_max_dev"] < 1e-4 and len(summary["step_times"]) == 2 * config.passes
    for r in records:
        for a, b in zip(r.invocations, r.invocations[1:]):
            assert b.prefix_ids == a.prefix_ids + a.completion_ids + a.observation_ids
