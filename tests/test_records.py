"""Rollout records (table 6): JSONL round trip, flattening with masked observations, group closure."""

import pytest

from rlvr_lab.records import Invocation, RolloutRecord, close_group, file_digest, flatten, read_records, write_records


def _record(rid="s0-g0-r0", verdict="fail", version=0, calls=None):
    calls = calls or [Invocation(0, [1, 2, 3], [7, 8, 2], [-0.5, -0.25, -0.1], version, "eos")]
    reward = {"pass": 1.0, "fail": 0.0}.get(verdict)
    return RolloutRecord(
        rid,
        rid.rsplit("-", 1)[0],
        "arith/add_1/v0",
        "arith/add_1",
        "train",
        0,
        "fx",
        "v1",
        {"temperature": 1.0},
        "abc",
        calls,
        "    return x\n",
        verdict,
        reward,
        {"outcome": verdict},
        calls[-1].stop_reason,
        len(calls[0].prefix_ids),
        sum(len(c.completion_ids) for c in calls),
        version,
    )


def test_jsonl_round_trip(tmp_path):
    path = str(tmp_path / "r.jsonl")
    recs = [_record("s0-g0-r0"), _record("s0-g0-r1", "pass")]
    size = write_records(path, recs)
    assert size > 0 and file_digest(path) == file_digest(path, size)
    back = read_records(path)
    assert back == recs
    assert back[1].reward == 1.0 and back[0].invocations[0].behaviour_logprobs == [-0.5, -0.25, -0.1]


def test_flatten_masks_observations_and_checks_exact_prefix():
    first = Invocation(0, [1, 2], [5, 6], [-0.1, -0.2], 0, "eos", observation_ids=[9, 9], observation="fb")
    second = Invocation(1, [1, 2, 5, 6, 9, 9], [4, 2], [-0.3, -0.4], 0, "eos")
    ids, mask, logps = flatten(_record(calls=[first, second]))
    assert ids == [1, 2, 5, 6, 9, 9, 4, 2]
    assert mask == [0, 0, 1, 1, 0, 0, 1, 1]
    assert logps[6:] == [-0.3, -0.4]
    bad = Invocation(1, [1, 2, 5, 6, 9], [4], [-0.3], 0, "eos")  # prefix lost an observation token
    with pytest.raises(ValueError, match="prefix"):
        flatten(_record(calls=[first, bad]))


def test_group_closure_never_coerces_unresolved_members():
    ok = [_record("a", "pass"), _record("b", "fail")]
    assert close_group(ok, 2, trainer_version=0, max_lag=0) == (True, "")
    eligible, why = close_group([_record("a", "pass"), _record("b", "unknown")], 2, 0, 0)
    assert not eligible and "unresolved" in why and "unknown" in why
    eligible, why = close_group([_record("a", "pass"), _record("b", "pending")], 2, 0, 0, rule="wait")
    assert not eligible and why.startswith("waiting")
    eligible, why = close_group(ok[:1], 2, 0, 0)
    assert not eligible and "missing" in why
    eligible, why = close_group(ok, 2, trainer_version=3, max_lag=2)
    assert not eligible and "lag 3" in why
    with pytest.raises(ValueError, match="rule"):
        close_group(ok, 2, 0, 0, rule="coerce")
    with pytest.raises(ValueError, match="max_lag"):
        close_group(ok, 2, 0, -1)
