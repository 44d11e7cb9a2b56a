"""Tiny policy: tokenizer, model round trip, sampling that records behaviour log-probs (17.5.2, 17.6.2)."""
import math
import pytest
import torch
from rlvr_lab.policy import SamplingConfig, build_model, completion_logprobs, load_policy, sample, save_policy, train_tokenizer, transformed_logprobs
from rlvr_lab.tasks import make_suite

@pytest.fixture(scope='module')
def tok_model():
    suite = make_suite(seed=0, problems_per_family=6)
    tok = train_tokenizer([t.prompt + t.solution for t in suite], vocab_size=320)
    return (tok, build_model(tok, 'tiny', seed=0), suite)

def _prompts(tok, suite, n=6):
    return [[tok.bos_token_id] + tok(t.prompt)['input_ids'] for t in suite[:n]]

def test_tokenizer_round_trips_code(tok_model):
    pass

def test_save_and_load_from_local_path(tok_model, tmp_path):
    pass

@pytest.mark.parametrize('cfg', [SamplingConfig(max_new_tokens=8), SamplingConfig(temperature=0.7, top_k=12, top_p=0.8, max_new_tokens=8)])
def test_recorded_logprobs_replay_exactly(tok_model, cfg):
    pass

def test_truncated_distribution_is_renormalised():
    pass

def test_top_k_sampling_never_leaves_the_kept_set(tok_model):
    pass

def test_bad_sampling_config_names_the_argument():
    pass