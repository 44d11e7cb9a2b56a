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
    assert reward(prompts=["p", "p"], completions=["    return 1\n"] * 2, task_id=[suite[0].task_id] * 2) == [
        None,
        None,
    ]


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
        return [
            _FakeFuture(
                Verdict(
                    outcome=self.outcome(c, fixture),
                    candidate_digest=c.digest,
                    fixture=fixture.name,
                    fixture_version=fixture.version,
                    checker_version=fixture.checker_version,
                    backend="fake",
                )
            )
            for c in candidates
        ]


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


@pytest.mark.parametrize("flag, value", [("multi_turn", True), ("overlap", True), ("micro_batch", 4)])
def test_the_trl_engine_refuses_each_flag_it_cannot_honour_by_name(flag, value):
    with pytest.raises(ValueError, match=f"^{flag} must be .*engine='trl'"):
        TrainConfig(engine="trl", **{flag: value}, **({"max_lag": 2} if flag == "overlap" else {}))
    # a preset's own overlap yields to the engine; one asked for explicitly is refused
    assert TrainConfig.preset("cpu", engine="trl").overlap is False
    with pytest.raises(ValueError, match="overlap"):
        TrainConfig.preset("cpu", engine="trl", overlap=True)


class _FlakyPool(_RecordingPool):
    """The first verdict of each candidate in ``flaky`` is unknown (a lost sandbox); later ones are real."""

    def __init__(self, flaky):
        self.seen, self.flaky = set(), flaky
        super().__init__(self.answer)

    def answer(self, candidate, fixture):
        first = candidate.digest not in self.seen
        self.seen.add(candidate.digest)
        text = next(iter(candidate.files.values()))
        return "unknown" if first and any(f in text for f in self.flaky) else "pass" if "return" in text else "fail"


def test_the_trl_reward_applies_the_complete_group_rule():
    suite = make_suite(seed=0, problems_per_family=2)
    a, b = suite[0], suite[1]
    by_id = {t.task_id: t for t in suite}
    completions = ["    return 1\n", "    pass  # flaky\n", "    return 2\n", "    pass\n"]
    ids = [a.task_id, a.task_id, b.task_id, b.task_id]
    exclude = reward_function(VerdictCache(_FlakyPool(["flaky"])), by_id, group_size=2)
    assert exclude(prompts=[""] * 4, completions=completions, task_id=ids) == [None, None, 1.0, 0.0]
    wait = reward_function(VerdictCache(_FlakyPool(["flaky"])), by_id, closure="wait", retries=1, group_size=2)
    assert wait(prompts=[""] * 4, completions=completions, task_id=ids) == [1.0, 0.0, 1.0, 0.0]
    chat = [[{"role": "assistant", "content": f"```python\n{a.prompt}    return 1\n```"}]]
    from rlvr_lab.train.prompting import PromptFormat

    assert reward_function(VerdictCache(_FlakyPool([])), by_id, PromptFormat(chat=True))(
        prompts=[""], completions=chat, task_id=[a.task_id]
    ) == [1.0]


@pytest.mark.slow
def test_trl_engine_trains_a_local_instruct_model_with_lora_and_its_chat_template(tmp_path):
    from rlvr_lab.train.stand_in import save_stand_in

    corpus = [t.prompt + t.solution for t in make_suite(problems_per_family=6)] * 2
    model_dir = save_stand_in(str(tmp_path / "qwen2"), corpus, family="qwen2", chat=True, dropout=0.1)
    config = TrainConfig.preset(
        "ci",
        model=model_dir,
        out_dir=str(tmp_path / "run"),
        engine="trl",
        grpo_steps=1,
        lora_rank=4,
        lora_alpha=8,
        max_new_tokens=8,
        verifier_workers=1,
    )
    result = train(config)
    assert result.rollouts == config.tasks_per_step * config.group_size
    assert any("rewards/verifier_reward/mean" in r for r in result.metrics)
    summary = json.load(open(tmp_path / "run" / "summary.json"))
    assert summary["config"]["multi_turn"] is False and summary["config"]["lora_rank"] == 4


@pytest.mark.slow
def test_trl_engine_writes_rollout_records_that_replay(tmp_path):
    """Each completion TRL sampled is a rollout record: the delivered prompt ids, the sampled ids, their
    behaviour log-probs under the weights that sampled them, the verdict and the reward that entered the
    update. The first pass over each generation replays them (TRL's own numerator, logged), and the records of
    the first step replay independently against the warm-start weights that sampled them."""
    from rlvr_lab.policy import load_policy
    from rlvr_lab.records import read_records
    from rlvr_lab.train.rollout import replay_max_deviation

    config = TrainConfig.preset("ci", out_dir=str(tmp_path), engine="trl", grpo_steps=2)
    result = train(config)
    records = read_records(str(tmp_path / "records.jsonl"))
    assert len(records) == config.grpo_steps * config.tasks_per_step * config.group_size
    for r in records:
        (call,) = r.invocations
        assert len(call.behaviour_logprobs) == len(call.completion_ids) == r.completion_tokens > 0
        assert all(lp <= 0.0 for lp in call.behaviour_logprobs)
        assert r.verdict in ("pass", "fail", "pending", "unknown")
        assert r.reward == {"pass": 1.0, "fail": 0.0}.get(r.verdict) or (r.reward is None and not r.admitted)
    first = [r for r in records if r.step == 0]
    assert len({r.group_id for r in first}) == config.tasks_per_step
    assert all(len({r.task_id for r in first if r.group_id == g}) == 1 for g in {r.group_id for r in first})
    replays = [row["replay_max_dev"] for row in result.metrics if "replay_max_dev" in row]
    assert len(replays) == config.grpo_steps and max(replays) < config.replay_bound
    model, tok = load_policy(str(tmp_path / "warmstart"))
    assert replay_max_deviation(model, first, tok.pad_token_id) < 1e-4


@pytest.mark.slow
def test_the_trl_replay_check_stops_a_run_whose_gradient_pass_keeps_dropout_on(tmp_path, monkeypatch):
    """With both dropout switches turned off, TRL's gradient pass (train mode) scores the sampled tokens
    with dropout 0.1: a different function than sampling. The run stops at the first update, naming the
    cause. (Left on, the switches are what the instruct-model test above relies on: a Qwen2 model's attention
    dropout, which TRL's own switch misses, gave a replay deviation of 0.0175 nats.)"""
    import trl

    import rlvr_lab.scoring_mode
    from rlvr_lab.train.learner import ReplayMismatch
    from rlvr_lab.train.stand_in import save_stand_in

    real = trl.GRPOConfig

    def keeps_dropout(*args, **kwargs):
        return real(*args, **dict(kwargs, disable_dropout=False))

    monkeypatch.setattr(trl, "GRPOConfig", keeps_dropout)
    monkeypatch.setattr(rlvr_lab.scoring_mode, "without_dropout", lambda model: [])
    corpus = [t.prompt + t.solution for t in make_suite(problems_per_family=6)] * 2
    model_dir = save_stand_in(str(tmp_path / "gpt2"), corpus, family="gpt2", chat=False, dropout=0.1)
    config = TrainConfig.preset(
        "ci", model=model_dir, out_dir=str(tmp_path / "run"), engine="trl", grpo_steps=1, max_new_tokens=8
    )
    with pytest.raises(ReplayMismatch, match="dropout"):
        train(config)


@pytest.mark.parametrize("field, value", [("eval_every", 5), ("checkpoint_every", 2), ("share_prompt", False)])
def test_the_trl_engine_refuses_a_field_it_has_no_use_for_when_asked_by_name(field, value):
    with pytest.raises(ValueError, match=f"^{field} is not used by engine='trl'"):
        TrainConfig.preset("ci", engine="trl", **{field: value})
    assert TrainConfig.preset("ci", engine="trl").engine == "trl"  # the preset's own values are no request


def test_population_advantages_are_eq_2_per_group_and_zero_for_an_excluded_group():
    from rlvr_lab.advantages import group_advantages
    from rlvr_lab.train.trl_records import population_advantages

    rewards = [1.0, 0.0, 0.0, 1.0, None, None, None, None, 1.0, 1.0, 1.0, 1.0]
    got = population_advantages(rewards, 4).tolist()
    assert got[:4] == pytest.approx(group_advantages([1.0, 0.0, 0.0, 1.0]).tolist())
    assert got[4:] == [0.0] * 8  # excluded, and tied: no gradient either way
    with pytest.raises(ValueError, match="whole groups"):
        population_advantages(rewards[:5], 4)


@pytest.mark.slow
@pytest.mark.parametrize("std", ["population", "sample"])
def test_the_trl_engine_trains_with_the_advantages_its_std_names(tmp_path, monkeypatch, std):
    """``std`` is honoured: the advantages TRL's loss receives are eq 2's with that std."""
    from rlvr_lab.advantages import group_advantages
    from rlvr_lab.records import read_records
    from rlvr_lab.train import trl_records

    seen = []
    real = trl_records.recording_trainer

    def spying(base):
        cls = real(base)

        class Spy(cls):
            def _generate_and_score_completions(self, inputs):
                out = super()._generate_and_score_completions(inputs)
                seen.append(out["advantages"].tolist())
                return out

        return Spy

    monkeypatch.setattr(trl_records, "recording_trainer", spying)
    config = TrainConfig.preset("ci", out_dir=str(tmp_path), engine="trl", grpo_steps=1, std=std)
    # a verifier stand-in that passes about half the candidates (by digest), so groups have contrast
    train(config, pool=_RecordingPool(lambda c, fx: "pass" if int(c.digest[:2], 16) % 2 else "fail"))
    records = read_records(str(tmp_path / "records.jsonl"))
    G = config.group_size
    assert any(len({r.reward for r in records[s : s + G]}) == 2 for s in range(0, len(records), G))
    for start in range(0, len(records), G):
        group = records[start : start + G]
        rewards = [r.reward for r in group]
        got = seen[0][start : start + G]
        if any(r is None for r in rewards) or len(set(rewards)) == 1:
            assert got == pytest.approx([0.0] * G, abs=1e-6)
        else:
            scale = 1e-4 if std == "sample" else 1e-8  # TRL's stabiliser; eq 2's
            want = group_advantages(rewards, eps=scale, std=std).tolist()
            assert got == pytest.approx(want, rel=1e-4, abs=1e-5)
