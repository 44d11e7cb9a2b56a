"""The trainer's loss variants: DAPO's token-level loss and dynamic sampling, Dr. GRPO's unscaled advantages."""

import json

import pytest

from rlvr_lab.records import Invocation, RolloutRecord
from rlvr_lab.train import TrainConfig, train
from rlvr_lab.train import dynamic_sampling as ds


def _group(gid: str, task: str, rewards: list[float]) -> list[RolloutRecord]:
    inv = Invocation(0, [1], [2], [-0.5], 0, "eos")
    return [
        RolloutRecord(
            f"{gid}-r{i}",
            gid,
            task,
            "p",
            "train",
            0,
            "f",
            "v",
            {},
            "",
            [inv],
            "",
            "pass" if r else "fail",
            r,
            {},
            "eos",
            1,
            1,
            0,
            admitted=True,
        )  # fmt: skip
        for i, r in enumerate(rewards)
    ]


class _Task:
    def __init__(self, task_id):
        self.task_id = task_id


def test_refill_samples_unseen_tasks_until_enough_groups_have_contrast():
    first = _group("s0-g0", "a", [1.0, 1.0]) + _group("s0-g1", "b", [0.0, 1.0]) + _group("s0-g2", "c", [0.0, 0.0])
    tasks = [_Task(t) for t in "abcdefgh"]
    asked = []

    def sample_and_grade(batch, prefix):  # d, f, h have contrast; e, g are tied
        asked.append(([t.task_id for t in batch], prefix))
        return [
            r
            for i, t in enumerate(batch)
            for r in _group(f"{prefix}0-g{i}", t.task_id, [0.0, 1.0] if t.task_id in "dfh" else [1.0, 1.0])
        ]

    records, rounds = ds.refill(first, tasks, wanted=3, rounds=5, seed="0:step:0", sample_and_grade=sample_and_grade)
    seen = [t for batch, _ in asked for t in batch]
    assert not {"a", "b", "c"} & set(seen) and len(seen) == len(set(seen))  # only tasks not sampled this step
    assert [p for _, p in asked] == [f"d{i}-s" for i in range(1, rounds + 1)]
    assert len(ds.contrast_groups(records)) >= 3 or rounds == 5
    kept = ds.keep_informative(records, 3)
    assert kept[0] == "s0-g1" and len(kept) == 3
    out = {r.group_id: r for r in records if not r.admitted}
    assert out["s0-g0"].exclusion_reason == ds.NO_CONTRAST and out["s0-g2"].exclusion_reason == ds.NO_CONTRAST
    assert sum(r.admitted for r in records) == 3 * 2
    again, _ = ds.refill(first, tasks, 3, 5, "0:step:0", lambda b, p: [])  # deterministic task draws
    assert again == first


def test_refill_stops_when_no_unseen_task_is_left_and_keeps_what_it_has():
    first = _group("s0-g0", "a", [1.0, 1.0])
    records, rounds = ds.refill(first, [_Task("a")], 2, 3, "s", lambda b, p: pytest.fail("nothing to sample"))
    assert rounds == 0 and ds.keep_informative(records, 2) == [] and not any(r.admitted for r in records)


def test_the_loss_variants_are_config_choices_and_the_trl_engine_refuses_dynamic_sampling():
    assert TrainConfig(norm="token", scale="none", dynamic_sampling=True).scale == "none"
    with pytest.raises(ValueError, match="^scale must be"):
        TrainConfig(scale="std")
    with pytest.raises(ValueError, match="^dynamic_sampling must be False with engine='trl'"):
        TrainConfig(engine="trl", dynamic_sampling=True)
    with pytest.raises(ValueError, match="^dynamic_sampling_rounds must be >= 1"):
        TrainConfig(dynamic_sampling_rounds=0)


class _Future:
    def __init__(self, verdict):
        self.verdict = verdict

    def result(self, timeout=None):
        return self.verdict


class _HalfPool:
    """Passes about half the candidates, by digest: most groups of 4 have contrast, some do not."""

    def submit_many(self, candidates, fixture):
        from rlvr_lab.verifier.schema import Verdict

        return [
            _Future(
                Verdict(
                    outcome="pass" if int(c.digest[:2], 16) % 2 else "fail",
                    candidate_digest=c.digest,
                    fixture=fixture.name,
                    fixture_version=fixture.version,
                    checker_version=fixture.checker_version,
                    backend="fake",
                )
            )
            for c in candidates
        ]


@pytest.mark.slow
def test_dynamic_sampling_fills_each_update_with_groups_that_have_contrast(tmp_path):
    from rlvr_lab.records import read_records

    config = TrainConfig.preset(
        "ci", out_dir=str(tmp_path), grpo_steps=2, dynamic_sampling=True, norm="token", scale="none", temperature=2.0
    )
    result = train(config, pool=_HalfPool())
    records = read_records(str(tmp_path / "records.jsonl"))
    for step in range(config.grpo_steps):
        mine = [r for r in records if r.step == step]
        admitted = {r.group_id for r in mine if r.admitted}
        row = next(r for r in result.metrics if r["step"] == step)
        assert len(admitted) == row["informative_groups"] <= config.tasks_per_step
        assert all(len({r.reward for r in mine if r.group_id == g}) == 2 for g in admitted)
        assert len({r.rollout_id for r in mine}) == len(mine)  # refills have ids of their own
        tied = [r for r in mine if not r.admitted]
        assert all(r.exclusion_reason in (ds.NO_CONTRAST, ds.SURPLUS) for r in tied)
    assert any(row.get("refill_rounds", 0) > 0 for row in result.metrics)  # a step did refill (seeded)
    assert json.load(open(tmp_path / "summary.json"))["config"]["dynamic_sampling"] is True


@pytest.mark.slow
def test_the_trl_engine_maps_norm_and_scale_to_its_loss_type_and_reward_scaling(tmp_path, monkeypatch):
    import trl

    seen = {}
    real = trl.GRPOConfig

    def spy(*args, **kwargs):
        seen.update(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(trl, "GRPOConfig", spy)
    config = TrainConfig.preset("ci", out_dir=str(tmp_path), engine="trl", grpo_steps=1, norm="token", scale="none")
    train(config)
    assert seen["loss_type"] == "bnpo" and seen["scale_rewards"] == "none"
