"""The path a Colab student takes (issue 23): a pretrained model loaded through ``from_pretrained``.

No hub here: each model is a random-weight stand-in of a real family saved locally
(:mod:`rlvr_lab.train.stand_in`), loaded by the same ``--model DIR`` path a hub id takes.
"""

import json
import math

import pytest
import torch

from rlvr_lab.cli import main
from rlvr_lab.tasks import make_suite
from rlvr_lab.train import TrainConfig
from rlvr_lab.train.stand_in import save_stand_in


def corpus():
    return [t.prompt + t.solution for t in make_suite(problems_per_family=6)] * 2


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory):
    """GPT-2 with dropout 0.1 (residual, embedding, attention) and a byte-level BPE tokenizer."""
    return save_stand_in(str(tmp_path_factory.mktemp("gpt2")), corpus(), family="gpt2", chat=False, dropout=0.1)


def rows(out):
    return [json.loads(line) for line in open(out / "metrics.jsonl", encoding="utf-8")]


def test_a_model_with_dropout_trains_through_the_cli_with_replay_below_the_bound(gpt2_dir, tmp_path):
    from transformers import AutoConfig

    cfg = AutoConfig.from_pretrained(gpt2_dir)
    assert cfg.model_type == "gpt2" and cfg.resid_pdrop == cfg.attn_pdrop == cfg.embd_pdrop == 0.1
    out = tmp_path / "run"
    assert main(["train", "--preset", "ci", "--model", gpt2_dir, "--steps", "2", "--out", str(out),
                 "--verifier-workers", "1"]) == 0
    lineage = json.loads((out / "warmstart" / "lineage.json").read_text())
    assert lineage["config"]["sft_steps"] == 0  # a pretrained model gets no SFT warm start by default
    got = rows(out)
    assert [r["step"] for r in got] == [0, 1]
    for r in got:  # every batch was sampled by the weights that score it at pass 0
        assert 0.0 <= r["replay_max_dev"] < 1e-3 and math.isfinite(r["loss"])


def test_the_replay_bound_stops_a_run_whose_gradient_pass_scores_with_another_function(gpt2_dir, tmp_path):
    """A forward that differs when gradients are on (as train-mode dropout does) trips the bound before
    any weight changes, and the error names the cause."""
    from rlvr_lab.train import grade_step, make_learner, sample_step, setup, update_step, warm_start
    from rlvr_lab.train.learner import ReplayMismatch

    config = TrainConfig.preset("ci", model=gpt2_dir, out_dir=str(tmp_path / "run"), verifier_workers=1)
    run = setup(config)
    try:
        model, tok, _ = warm_start(run)
        learner, _ = make_learner(run, model, tok)
        noisy = learner.model.lm_head.register_forward_hook(
            lambda m, i, out: out + 0.5 * torch.randn_like(out) if torch.is_grad_enabled() else out)
        graded = grade_step(run, learner, sample_step(run, learner, 0))
        for r in graded.records:
            r.admitted = True  # whatever the verdicts: the update must refuse before using them
        weights = [p.detach().clone() for p in learner.model.parameters()]
        with pytest.raises(ReplayMismatch, match=r"replay deviation .* nats > replay_bound 0.001: .*dropout"):
            update_step(run, learner, graded)
        assert all(torch.equal(a, b) for a, b in zip(weights, learner.model.parameters()))
        noisy.remove()
        assert update_step(run, learner, graded)["replay_max_dev"] < 1e-3
    finally:
        run.close()


def test_replay_bound_is_validated():
    with pytest.raises(ValueError, match="replay_bound"):
        TrainConfig(replay_bound=0)
