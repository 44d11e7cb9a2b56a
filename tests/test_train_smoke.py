"""A few GRPO steps end to end against the real VerifierPool: records complete, loss finite, resume exact.

The learning claim (held-out pass@1 rises) lives in experiments/learning_claim.py, not here.
"""

import json
import math
import os
import shutil

import pytest

from rlvr_lab.cli import main as cli_main
from rlvr_lab.records import file_digest, read_records
from rlvr_lab.train import TrainConfig, train
from rlvr_lab.verifier.schema import VERDICTS

pytestmark = pytest.mark.slow


def _assert_complete(rec, config):
    assert rec.verdict in VERDICTS
    assert rec.reward == {"pass": 1.0, "fail": 0.0}.get(rec.verdict)
    assert rec.evidence["outcome"] == rec.verdict and rec.evidence["candidate_digest"]
    assert rec.evidence["fixture_version"] == rec.fixture_version
    assert rec.sampling["max_new_tokens"] == config.max_new_tokens and rec.tokenizer_digest
    assert rec.stop_reason in ("eos", "length") and rec.prompt_tokens > 0
    calls = rec.invocations
    assert calls and calls[0].prefix_ids[:1] == [1]
    for call in calls:
        assert len(call.completion_ids) == len(call.behaviour_logprobs) > 0
        assert all(lp <= 0 and math.isfinite(lp) for lp in call.behaviour_logprobs)
        assert call.policy_version == rec.policy_version
    assert rec.completion_tokens == sum(len(c.completion_ids) for c in calls)
    assert rec.admitted in (True, False) and (rec.admitted or rec.exclusion_reason)


def _metrics(out) -> list[dict]:
    with open(os.path.join(out, "metrics.jsonl"), encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _lineage(out, step) -> dict:
    with open(os.path.join(out, "checkpoints", f"step_{step:05d}", "lineage.json"), encoding="utf-8") as fh:
        return json.load(fh)


def _sampled(rec) -> list:
    """What the policy produced in a rollout, without timings: per call (prefix, tokens, version)."""
    return [(c.prefix_ids, c.completion_ids, c.policy_version, c.stop_reason) for c in rec.invocations]


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory):
    """One uninterrupted ``rlvr-lab train --preset ci`` run shared by the tests below."""
    out = tmp_path_factory.mktemp("cli") / "run"
    assert cli_main(["train", "--preset", "ci", "--out", str(out), "--no-progress"]) == 0
    return out


def test_ci_run_via_cli_writes_complete_records_and_finite_loss(cli_run):
    config = TrainConfig.preset("ci")
    records = read_records(str(cli_run / "records.jsonl"))
    # every planned rollout is recorded exactly once, in complete groups of G
    assert len(records) == config.grpo_steps * config.tasks_per_step * config.group_size
    ids = [r.rollout_id for r in records]
    assert len(set(ids)) == len(ids)
    groups: dict[str, list] = {}
    for r in records:
        groups.setdefault(r.group_id, []).append(r)
        _assert_complete(r, config)
        assert r.split == "train" and r.rollout_id.startswith(r.group_id + "-r")
        assert r.sampling == {
            "max_new_tokens": config.max_new_tokens,
            "temperature": config.temperature,
            "top_k": config.top_k,
            "top_p": config.top_p,
        }
        assert len(r.invocations) == 1  # single-turn preset
        if r.admitted:
            assert r.exclusion_reason == "" and 0 <= r.version_lag <= config.max_lag
    assert len(groups) == config.grpo_steps * config.tasks_per_step
    assert all(len(members) == config.group_size for members in groups.values())
    assert len({r.tokenizer_digest for r in records}) == 1

    rows = _metrics(cli_run)
    assert [row["step"] for row in rows] == list(range(config.grpo_steps))
    version = 0
    for row in rows:
        step_records = [r for r in records if r.step == row["step"]]
        assert row["rollouts"] == len(step_records) and row["admitted"] == sum(r.admitted for r in step_records)
        # each step samples with the weights of the previous step's last update
        assert {r.policy_version for r in step_records} == {version}
        if row["admitted"]:
            assert math.isfinite(row["loss"]) and math.isfinite(row["grad_norm"])
            # pass 0 scores the recorded tokens with the weights that sampled them: the replay check
            assert 0.0 <= row["replay_max_dev"] < 1e-4
            assert row["policy_version"] == version + config.passes
        version = row["policy_version"]
    assert any(row["admitted"] for row in rows), "no group entered any update"

    # the last checkpoint binds the weights to the exact records and to its parent
    lineage = _lineage(cli_run, config.grpo_steps - 1)
    records_path = str(cli_run / "records.jsonl")
    assert lineage["records"]["bytes"] == os.path.getsize(records_path)
    assert lineage["records"]["sha256"] == file_digest(records_path)
    assert lineage["policy_version"] == version and lineage["tokenizer_sha256"] == records[0].tokenizer_digest
    assert lineage["parent"] == str(cli_run / "warmstart") and lineage["config"]["grpo_steps"] == config.grpo_steps
    summary = json.loads((cli_run / "summary.json").read_text())
    for when in ("before", "after"):
        assert 0.0 <= summary[when]["pass1"] <= 1.0 and summary[when]["tasks"] == config.heldout_tasks
    assert "pass@1 after GRPO" in (cli_run / "report.md").read_text()


def test_killed_run_resumes_without_losing_or_duplicating_records(tmp_path, cli_run):
    out = tmp_path / "run"
    shutil.copytree(cli_run, out)
    for name in ("report.md", "summary.json"):
        os.remove(out / name)
    # the process dies after step 0's checkpoint: the later checkpoints never happened, but the records and
    # metrics of steps 1 and 2 reached the files, and the last line was torn mid-write
    for step in (1, 2):
        shutil.rmtree(out / "checkpoints" / f"step_{step:05d}")
    (out / "checkpoints" / "LATEST").write_text("step_00000")
    with open(out / "records.jsonl", "a", encoding="utf-8") as fh:
        fh.write('{"rollout_id": "s3-g0-r0", "torn')
    with open(out / "metrics.jsonl", "a", encoding="utf-8") as fh:
        fh.write('{"step": 3, ')

    config = TrainConfig.preset("ci", out_dir=str(out), progress=False)
    # first resume runs one step and is "killed" again (the config's testing aid)
    first = train(config.with_overrides(stop_after_steps=1))
    assert first.stopped_early and first.rollouts == config.tasks_per_step * config.group_size
    assert not (out / "summary.json").exists()
    partial = read_records(str(out / "records.jsonl"))
    assert sorted({r.step for r in partial}) == [0, 1]
    assert [r["step"] for r in _metrics(out)] == [0, 1]
    with open(out / "records.jsonl", "a", encoding="utf-8") as fh:
        fh.write('{"rollout_id": "s2-g0')
    # second resume finishes the run
    second = train(config)
    assert not second.stopped_early and (out / "summary.json").exists()

    original = {r.rollout_id: r for r in read_records(str(cli_run / "records.jsonl"))}
    resumed = read_records(str(out / "records.jsonl"))
    ids = [r.rollout_id for r in resumed]
    assert len(ids) == len(set(ids)), "duplicated records after resume"
    assert set(ids) == set(original), "records lost (or invented) by the resume"
    for rec in resumed:
        _assert_complete(rec, config)
        ref = original[rec.rollout_id]
        # exact resume: same weights, RNG and task order give the very same samples and verdicts
        assert _sampled(rec) == _sampled(ref), rec.rollout_id
        for a, b in zip(rec.invocations, ref.invocations):
            assert all(math.isclose(x, y, abs_tol=1e-5) for x, y in zip(a.behaviour_logprobs, b.behaviour_logprobs))
        assert (rec.verdict, rec.reward, rec.admitted) == (ref.verdict, ref.reward, ref.admitted)
    rows, ref_rows = _metrics(out), _metrics(cli_run)
    assert [r["step"] for r in rows] == [0, 1, 2]
    for row, ref in zip(rows, ref_rows):
        assert row["policy_version"] == ref["policy_version"]
        if "loss" in ref:
            assert math.isclose(row["loss"], ref["loss"], rel_tol=1e-4, abs_tol=1e-6)
    lineage = _lineage(out, config.grpo_steps - 1)
    assert lineage["records"]["sha256"] == file_digest(str(out / "records.jsonl"))
    assert lineage["records"]["bytes"] == os.path.getsize(out / "records.jsonl")


def test_a_finished_run_asked_for_again_is_read_back_not_reported_as_untrained(tmp_path, cli_run, capsys):
    """Running the same command twice must not claim that GRPO changed nothing (it once did: the second
    call resumed at the end, took no step and reported the warm start as the result after GRPO)."""
    from rlvr_lab.train.finished import finished_result

    out = tmp_path / "run"
    shutil.copytree(cli_run, out)
    # the ci preset's tiny model ends where it starts (pass@1 0): mark the last evaluation, in the metrics
    # and the summary alike, so that a warm start reported as the result cannot pass for it
    summary = json.loads((out / "summary.json").read_text())
    rows = _metrics(out)
    rows[-1]["heldout_pass1"] = summary["after"]["pass1"] = 0.5
    (out / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (out / "summary.json").write_text(json.dumps(summary))
    assert summary["before"]["pass1"] != 0.5 and summary["rollouts"] > 0
    names = ("summary.json", "report.md", "metrics.jsonl", "records.jsonl")
    digests = {n: file_digest(str(out / n)) for n in names}
    config = TrainConfig.preset("ci", out_dir=str(out), progress=False)

    again = train(config)
    assert (again.before, again.after, again.rollouts) == (summary["before"], summary["after"], summary["rollouts"])
    assert again.wall_s == summary["wall_s"] and again.timing == summary["timing"]
    assert {n: file_digest(str(out / n)) for n in names} == digests, "a finished run's files were rewritten"

    assert cli_main(["train", "--preset", "ci", "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "already holds this run, finished" in printed
    assert f"pass@1 after GRPO: {summary['after']['pass1']:.3f}" in printed

    # killed between its last checkpoint and its report: the result comes from the metrics and the lineage
    for name in ("summary.json", "report.md"):
        os.remove(out / name)
    bare = finished_result(config)
    assert (bare.before, bare.after, bare.rollouts, bare.wall_s) == (summary["before"], summary["after"], 0, 0.0)
    # another trajectory, or a longer run, is not this finished one
    assert finished_result(config.with_overrides(seed=config.seed + 1)) is None
    assert finished_result(config.with_overrides(grpo_steps=config.grpo_steps + 1)) is None
    assert finished_result(TrainConfig.preset("ci", out_dir=str(tmp_path / "empty"))) is None


def test_replay_check_and_multi_turn_records(tmp_path, cli_run):
    from rlvr_lab.policy import load_policy
    from rlvr_lab.records import flatten
    from rlvr_lab.train.rollout import replay_max_deviation

    # start from the shared run's warm start (no second SFT), one multi-turn GRPO step
    out = tmp_path / "mt"
    out.mkdir()
    shutil.copytree(cli_run / "warmstart", out / "warmstart")
    config = TrainConfig.preset(
        "ci",
        out_dir=str(out),
        multi_turn=True,
        grpo_steps=1,
        tasks_per_step=2,
        heldout_tasks=2,
        eval_samples=1,
        eval_k=1,
        progress=False,
    )
    result = train(config)
    assert result.steps == 1 and result.rollouts == config.tasks_per_step * config.group_size
    records = read_records(str(out / "records.jsonl"))
    assert len(records) == result.rollouts
    revised = [r for r in records if len(r.invocations) == 2]
    assert revised, "no rollout reached the revision turn"
    for rec in records:
        _assert_complete(rec, config)
        first = rec.invocations[0]
        if len(rec.invocations) == 1:
            # only a rollout that passed the public test stops after one call
            assert not first.observation_ids
            continue
        second = rec.invocations[1]
        assert first.observation.startswith("# public test: ") and first.observation_ids
        # the second call's prefix is exactly what was delivered: prompt, first answer, feedback
        assert second.prefix_ids == first.prefix_ids + first.completion_ids + first.observation_ids
        assert [c.call_id for c in rec.invocations] == [0, 1] and rec.stop_reason == second.stop_reason
        ids, mask, logps = flatten(rec)
        # observation tokens are context: never scored
        start = len(first.prefix_ids) + len(first.completion_ids)
        assert mask[start : start + len(first.observation_ids)] == [0] * len(first.observation_ids)
        assert sum(mask) == rec.completion_tokens and len(ids) == len(mask) == len(logps)
    rows = _metrics(out)
    assert len(rows) == 1 and math.isfinite(rows[0]["loss"]) and rows[0]["replay_max_dev"] < 1e-4

    # replay: the warm-start weights sampled step 0, and rescoring the recorded ids reproduces the
    # recorded behaviour log-probs, across both turns
    model, tok = load_policy(str(out / "warmstart"))
    assert all(r.policy_version == 0 for r in records)
    assert replay_max_deviation(model, records, tok.pad_token_id) < 1e-4
    # the check can fail: a record whose log-probs were not the sampler's is caught
    tampered = read_records(str(out / "records.jsonl"))[:1]
    tampered[0].invocations[-1].behaviour_logprobs[0] -= 0.5
    assert replay_max_deviation(model, tampered, tok.pad_token_id) > 0.4
    # and a record whose second prefix was not the delivered context is refused
    broken = read_records(str(out / "records.jsonl"))
    broken = [r for r in broken if len(r.invocations) == 2][:1]
    broken[0].invocations[1].prefix_ids = broken[0].invocations[1].prefix_ids[:-1]
    with pytest.raises(ValueError, match="prefix"):
        replay_max_deviation(model, broken, tok.pad_token_id)


def test_bad_config_names_the_field(capsys):
    for overrides, field in [
        ({"group_size": 1}, "group_size"),
        ({"eps_low": 0.3, "eps_high": 0.2}, "eps_high"),
        ({"norm": "tokens"}, "norm"),
        ({"eval_samples": 2, "eval_k": 4}, "eval_k"),
        ({"closure": "drop"}, "closure"),
        ({"max_lag": -1}, "max_lag"),
        ({"device": "tpu"}, "device"),
    ]:
        with pytest.raises(ValueError) as err:
            TrainConfig.preset("ci", **overrides)
        message = str(err.value)
        assert message.split()[0] == field and "must be" in message, message
    with pytest.raises(ValueError, match="preset"):
        TrainConfig.preset("tiny")
    # the CLI rejects a bad value before any training starts, naming the field
    assert cli_main(["train", "--preset", "ci", "--steps", "-1", "--out", os.devnull, "--no-progress"]) == 2
    assert "error: grpo_steps must be >= 0" in capsys.readouterr().err


def test_overlap_pipeline_lags_one_update_and_resumes_exactly(tmp_path, cli_run):
    """With ``overlap`` the update of step t runs while step t+1 is verified: step t+1 was sampled by the
    weights step t saw, enters its update one update (``passes`` versions) late, and the lag is recorded
    and admitted under ``max_lag``. The pipeline drains at checkpoints, so a killed run resumes exactly."""

    def run(name, **overrides):
        out = tmp_path / name
        out.mkdir()
        shutil.copytree(cli_run / "warmstart", out / "warmstart")
        config = TrainConfig.preset(
            "ci",
            out_dir=str(out),
            overlap=True,
            grpo_steps=4,
            checkpoint_every=2,
            eval_every=4,
            progress=False,
            **overrides,
        )
        return config, train(config), out

    config, whole, out = run("whole")
    assert config.max_lag == config.passes
    records = read_records(str(out / "records.jsonl"))
    assert len(records) == 4 * config.tasks_per_step * config.group_size
    by_step = {s: [r for r in records if r.step == s] for s in range(4)}
    assert all(r.admitted for r in records)
    assert [by_step[s][0].version_lag for s in range(4)] == [0, config.passes, 0, config.passes]
    assert by_step[1][0].policy_version == by_step[0][0].policy_version
    assert [r["policy_version"] for r in _metrics(out)] == [2 * config.passes * k for k in (0.5, 1, 1.5, 2)]
    with pytest.raises(ValueError, match="max_lag"):
        TrainConfig.preset("ci", overlap=True, max_lag=1, passes=2)

    # killed at the top of step 3, with step 2 sampled and graded but not yet in an update
    stopped_cfg, first, out2 = run("killed", stop_after_steps=3)
    assert first.stopped_early
    finished = train(stopped_cfg.with_overrides(stop_after_steps=None))
    assert not finished.stopped_early
    resumed = read_records(str(out2 / "records.jsonl"))
    assert [r.rollout_id for r in resumed] == [r.rollout_id for r in records]
    for a, b in zip(resumed, records):
        assert _sampled(a) == _sampled(b) and (a.verdict, a.version_lag) == (b.verdict, b.version_lag)


def test_plot_metrics_writes_one_png_per_present_diagnostic(tmp_path):
    from rlvr_lab.train.report import plot_metrics

    rows = [
        {"step": 0, "reward_mean": 0.2, "entropy": 0.5},
        {
            "step": 1,
            "reward_mean": 0.4,
            "entropy": float("nan"),
            "heldout_pass1": 0.3,
            "heldout_pass1_lo": 0.2,
            "heldout_pass1_hi": 0.4,
        },
    ]
    written = plot_metrics(rows, str(tmp_path), before={"pass1": 0.1, "pass1_lo": 0.05, "pass1_hi": 0.15})
    names = sorted(os.path.basename(p) for p in written)
    assert names == ["entropy.png", "heldout_pass1.png", "reward_mean.png"]
    assert all(os.path.getsize(p) > 1000 for p in written)
