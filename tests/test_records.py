"""Rollout records (table 6): JSONL round trip, flattening with masked observations, group closure."""
import pytest
from rlvr_lab.records import Invocation, RolloutRecord, close_group, file_digest, flatten, read_records, write_records

def _record(rid='s0-g0-r0', verdict='fail', version=0, calls=None):
    calls = calls or [Invocation(0, [1, 2, 3], [7, 8, 2], [-0.5, -0.25, -0.1], version, 'eos')]
    reward = {'pass': 1.0, 'fail': 0.0}.get(verdict)
    return RolloutRecord(rid, rid.rsplit('-', 1)[0], 'arith/add_1/v0', 'arith/add_1', 'train', 0, 'fx', 'v1', {'temperature': 1.0}, 'abc', calls, '    return x\n', verdict, reward, {'outcome': verdict}, calls[-1].stop_reason, len(calls[0].prefix_ids), sum((len(c.completion_ids) for c in calls)), version)

def test_jsonl_round_trip(tmp_path):
    pass

def test_flatten_masks_observations_and_checks_exact_prefix():
    pass

def test_group_closure_never_coerces_unresolved_members():
    pass