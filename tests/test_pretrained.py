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
    assert (
        main(
            [
                "train",
                "--preset",
                "ci",
                "--model",
                gpt2_dir,
                "--steps",
                "2",
                "--out",
                str(out),
                "--verifier-workers",
                "1",
            ]
        )
        == 0
    )
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
            lambda m, i, out: out + 0.5 * torch.randn_like(out) if torch.is_grad_enabled() else out
        )
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


@pytest.fixture(scope="module")
def qwen_dir(tmp_path_factory):
    """Qwen2 (the preset's family) with attention dropout 0.1, ChatML template, <|im_end|> end of turn."""
    return save_stand_in(str(tmp_path_factory.mktemp("qwen2")), corpus(), family="qwen2", chat=True, dropout=0.1)


def records(out):
    from rlvr_lab.records import read_records

    return read_records(str(out / "records.jsonl"))


@pytest.mark.parametrize("lora", [0, 4])
def test_an_instruct_model_trains_end_to_end_with_its_chat_template_lora_on_and_off(qwen_dir, tmp_path, lora):
    from rlvr_lab.policy import load_policy
    from rlvr_lab.train import train

    out = tmp_path / "run"
    config = TrainConfig.preset(
        "ci",
        model=qwen_dir,
        out_dir=str(out),
        grpo_steps=2,
        lora_rank=lora,
        lora_alpha=8,
        verifier_workers=1,
        max_new_tokens=12,
        checkpoint_every=2,
    )
    assert config.sft_steps == 0 and config.lr == 1e-5  # pretrained defaults
    result = train(config)
    assert [r["step"] for r in result.metrics] == [0, 1]
    for row in result.metrics:
        assert row["replay_max_dev"] < 1e-3 and math.isfinite(row["loss"]) and math.isfinite(row["grad_norm"])
    model, tok = load_policy(qwen_dir)
    recs = records(out)
    prompt = tok.decode(recs[0].invocations[0].prefix_ids)
    assert prompt.startswith("<|im_start|>system\n") and prompt.endswith("<|im_start|>assistant\n")
    assert "```python\ndef " in prompt  # the task's code inside the user turn
    ends = {tok.eos_token_id, tok.convert_tokens_to_ids("<|endoftext|>")}
    for r in recs:
        done = r.invocations[0].completion_ids
        assert r.stop_reason in ("eos", "length") and (r.stop_reason == "length") == (done[-1] not in ends)
    ckpt = out / "checkpoints" / "step_00001"
    if lora:  # adapters only in the checkpoint; the base weights never moved
        assert (ckpt / "adapter_model.safetensors").exists() and not (ckpt / "model.safetensors").exists()
        from peft import PeftModel

        trained = PeftModel.from_pretrained(load_policy(qwen_dir)[0], str(ckpt))
        base = dict(model.named_parameters())
        for name, p in trained.get_base_model().named_parameters():
            if "lora_" not in name:
                assert torch.equal(p, base[name.replace(".base_layer", "")]), name
    else:
        assert (ckpt / "model.safetensors").exists()


def test_a_chat_reply_becomes_the_candidate_file_and_the_verifier_grades_it(qwen_dir):
    from rlvr_lab.policy import load_policy
    from rlvr_lab.train.prompting import PromptFormat, candidate_for, prompt_format
    from rlvr_lab.verifier import Verifier

    model, tok = load_policy(qwen_dir)
    fmt = prompt_format(TrainConfig(model=qwen_dir), tok, model)
    assert fmt.chat and fmt.stop_strings == () and fmt.stop_ids == (tok.convert_tokens_to_ids("<|endoftext|>"),)
    task = make_suite(problems_per_family=1)[0]
    good = f"Sure.\n```python\n{task.prompt}{task.solution}```\nIt returns the value."
    bad = f"```python\n{task.prompt}    return None\n```"
    verifier = Verifier(backend="process")
    assert verifier.verify(candidate_for(task, good, fmt), task.fixture).outcome == "pass"
    assert verifier.verify(candidate_for(task, bad, fmt), task.fixture).outcome == "fail"
    assert candidate_for(task, task.solution, PromptFormat()) == task.candidate(task.solution)
    with pytest.raises(ValueError, match="multi_turn"):
        prompt_format(TrainConfig(model=qwen_dir, multi_turn=True), tok, model)
    with pytest.raises(ValueError, match="chat_template"):
        prompt_format(TrainConfig(chat_template="on"), tok.__class__(tokenizer_object=tok.backend_tokenizer))


def test_stop_strings_end_sampling_and_cut_the_candidate(gpt2_dir):
    from rlvr_lab.policy import SamplingConfig, load_policy, sample
    from rlvr_lab.train.prompting import BASE_STOPS, PromptFormat, prompt_format
    from rlvr_lab.train.rollout import completion_text, prompt_ids

    model, tok = load_policy(gpt2_dir)
    assert prompt_format(TrainConfig(model=gpt2_dir), tok, model).stop_strings == BASE_STOPS  # a base model
    prompts = [prompt_ids(tok, t.prompt) for t in make_suite(problems_per_family=2)[:8]]
    out = sample(
        model,
        prompts,
        SamplingConfig(max_new_tokens=40),
        tok.eos_token_id,
        tok.pad_token_id,
        torch.Generator().manual_seed(0),
        stop_strings=("e",),
        decode=tok.decode,
    )
    stopped = [s for s in out if s.stop_reason == "stop"]
    assert len(stopped) >= 4
    for s in stopped:  # the row ended at the first token that completed a stop string
        assert "e" in tok.decode(s.completion_ids) and "e" not in tok.decode(s.completion_ids[:-1])
        assert "e" not in completion_text(tok, s.completion_ids, PromptFormat(stop_strings=("e",)))
    with pytest.raises(ValueError, match="decode"):
        sample(model, prompts, SamplingConfig(), tok.eos_token_id, tok.pad_token_id, stop_strings=("e",))


def test_a_lora_update_moves_the_adapters_only_and_a_checkpoint_restores_them(qwen_dir, tmp_path):
    """Random weights earn no reward, so the update is driven by rewards set on real sampled records: the
    plumbing under test is the adapters' gradient path, the reference with adapters off, and the resume."""
    from rlvr_lab.train import grade_step, make_learner, sample_step, setup, update_step, warm_start
    from rlvr_lab.train.checkpoint import save_checkpoint
    from rlvr_lab.train.lora import load_adapters

    config = TrainConfig.preset(
        "ci",
        model=qwen_dir,
        out_dir=str(tmp_path / "run"),
        lora_rank=4,
        lora_alpha=8,
        lr=1e-2,
        verifier_workers=1,
        max_new_tokens=8,
    )
    run = setup(config)
    try:
        model, tok, _ = warm_start(run)
        learner, _ = make_learner(run, model, tok)
        assert learner.ref_model is None
        trainable = {n for n, p in learner.model.named_parameters() if p.requires_grad}
        assert trainable and all("lora_" in n for n in trainable)
        before = {n: p.detach().clone() for n, p in learner.model.named_parameters()}
        sampled = sample_step(run, learner, 0)
        graded = grade_step(run, learner, sampled)
        for r in graded.records:
            r.reward, r.admitted = float(r.rollout_id.endswith("-r0")), True
        diags = update_step(run, learner, graded)
        assert diags["replay_max_dev"] < 1e-3 and diags["grad_norm"] > 0
        for name, p in learner.model.named_parameters():  # B starts at 0: every B moves; the base never
            if name not in trainable or "lora_B" in name:
                assert torch.equal(p, before[name]) == (name not in trainable), name
        # the reference (adapters off) is still the warm start: it scores the sampled tokens as sampling did
        ref = learner.reference(graded.records, run.sampling)
        rec = graded.records[0]
        n = len(rec.invocations[0].completion_ids)
        assert torch.allclose(ref[rec.rollout_id][-n:], torch.tensor(rec.invocations[0].behaviour_logprobs), atol=1e-4)
        path = save_checkpoint(
            config.out_dir,
            0,
            learner.model,
            tok,
            learner.optimizer,
            learner.generator,
            learner.version,
            run.records_path,
            str(tmp_path / "m.jsonl"),
            {},
        )
        fresh, _ = make_learner(run, warm_start(run)[0], tok)  # resumes from that checkpoint
        assert fresh.version == learner.version
        for (name, p), q in zip(learner.model.named_parameters(), fresh.model.parameters()):
            assert torch.equal(p, q), name
        with pytest.raises(FileNotFoundError, match="adapter"):
            load_adapters(learner.model, str(tmp_path))
        assert path.endswith("step_00000")
    finally:
        run.close()


SAMPLE = str(__import__("pathlib").Path(__file__).parents[1] / "rlvr_lab" / "fixtures" / "mbpp" / "sample.jsonl")


def test_the_mbpp_loader_reads_a_local_file_in_the_hub_format_and_the_verifier_grades_its_tasks():
    from rlvr_lab.mbpp import load_problems
    from rlvr_lab.tasks import mbpp
    from rlvr_lab.verifier import Verifier

    train_tasks, test_tasks = mbpp(SAMPLE, "train"), mbpp(SAMPLE, "test")
    assert (len(train_tasks), len(test_tasks)) == (6, 3) and len(mbpp(SAMPLE, "train", limit=2)) == 2
    assert {t.split for t in train_tasks} == {"train"} and {t.split for t in test_tasks} == {"heldout"}
    task = test_tasks[-1]  # setup code and three asserts; only the first assert is in the prompt
    assert task.prompt.endswith("assert my_gcd(12, 18) == HELPER_SIX") and "my_gcd(7, 5)" not in task.prompt
    hidden = task.fixture.hidden_tests["test_mbpp.py"]
    assert hidden.startswith("HELPER_SIX = 6\nfrom solution import *") and hidden.count("assert") == 3
    verifier = Verifier(backend="process")
    for t in train_tasks + test_tasks:  # the reference code passes; a wrong body fails on the hidden asserts
        assert verifier.verify(t.candidate(t.solution), t.fixture).outcome == "pass", t.task_id
    wrong = task.solution.replace("return a", "return a + 1")
    assert verifier.verify(task.candidate(wrong), task.fixture).outcome == "fail"
    with pytest.raises(ValueError, match="source"):
        load_problems("/nonexistent/mbpp.jsonl")
    with pytest.raises(ValueError, match="split"):
        load_problems(SAMPLE, "dev")


def test_the_t4_preset_names_a_public_instruct_model_with_lora_and_fits_the_card():
    config = TrainConfig.preset("t4")
    assert config.model == "Qwen/Qwen2.5-Coder-0.5B-Instruct" and config.lora_rank == 16 and config.dtype == "auto"
    assert config.tasks == "mbpp" and config.heldout_set == "humaneval" and config.sft_steps == 0
    assert config.micro_batch and config.lr == 2e-5  # its own lr, not the generic pretrained default
    assert TrainConfig.preset("ci", model="x").lr == 1e-5 and TrainConfig.preset("ci", model="x", lr=3e-6).lr == 3e-6


@pytest.mark.slow
def test_the_t4_preset_trains_end_to_end_on_a_local_qwen2_with_mbpp_and_humaneval_held_out(qwen_dir, tmp_path):
    """The preset as a Colab student runs it, with the hub model swapped for a local Qwen2 stand-in and the
    MBPP hub dataset for the local sample; float16 compute with loss scaling and a float16 frozen base."""
    from rlvr_lab.train import train

    config = TrainConfig.preset(
        "t4",
        model=qwen_dir,
        mbpp_source=SAMPLE,
        device="cpu",
        dtype="float16",
        out_dir=str(tmp_path / "t4"),
        grpo_steps=1,
        tasks_per_step=2,
        group_size=2,
        max_new_tokens=8,
        heldout_tasks=2,
        eval_samples=1,
        eval_k=1,
        verifier_workers=1,
        progress=False,
        plots=False,
        lora_alpha=8,
    )
    result = train(config)
    for heldout in (result.before, result.after):  # two HumanEval problems, graded by the sandboxed verifier
        assert heldout["tasks"] == 2 and "pass1_HumanEval" in heldout
    row = result.metrics[0]
    assert row["rollouts"] == 4 and row["replay_max_dev"] < 0.05 and math.isfinite(row["loss"])
    recs = records(tmp_path / "t4")
    assert {r.task_id.split("/")[0] for r in recs} == {"mbpp"}
    evals = [json.loads(line) for line in open(tmp_path / "t4" / "metrics.jsonl")]
    assert evals and "heldout_pass1" in evals[-1]
    lineage = json.loads((tmp_path / "t4" / "warmstart" / "lineage.json").read_text())
    assert lineage["config"]["heldout_set"] == "humaneval"
