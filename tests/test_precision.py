"""Mixed precision (issue 23): float32 master weights, 16-bit compute under autocast, loss scaling for float16.

The CPU runs bfloat16 and float16 autocast, so the GPU code path's logic runs here; only the kernels differ.
"""

import pytest
import torch

from rlvr_lab.train import TrainConfig
from rlvr_lab.train.precision import Precision, check_master_weights, resolve_precision


def test_auto_picks_by_device_capability(monkeypatch):
    assert resolve_precision("auto", torch.device("cpu")) == Precision("float32", "cpu")
    monkeypatch.setattr(
        torch.cuda, "is_bf16_supported", lambda including_emulation=True: not including_emulation and ampere
    )
    ampere = True
    assert resolve_precision("auto", torch.device("cuda")) == Precision("bfloat16", "cuda")
    ampere = False  # a T4: bfloat16 only emulated, so float16 with loss scaling
    got = resolve_precision("auto", torch.device("cuda"))
    assert got == Precision("float16", "cuda") and Precision("float16", "cpu").scaler().is_enabled()
    assert not Precision("bfloat16").scaler().is_enabled() and not Precision().scaler().is_enabled()
    with pytest.raises(ValueError, match="dtype"):
        Precision("int8")


def test_master_weights_must_be_float32():
    layer = torch.nn.Linear(2, 2)
    check_master_weights(layer)
    with pytest.raises(ValueError, match="float32 master weights, got torch.bfloat16"):
        check_master_weights(layer.to(torch.bfloat16))


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_a_16bit_step_computes_in_16_bits_and_updates_float32_weights(dtype, tmp_path):
    from rlvr_lab.train import grade_step, make_learner, sample_step, setup, update_step, warm_start

    config = TrainConfig.preset(
        "ci",
        out_dir=str(tmp_path / "run"),
        dtype=dtype,
        sft_steps=2,
        heldout_tasks=2,
        eval_samples=1,
        eval_k=1,
        verifier_workers=1,
        max_new_tokens=8,
        lr=1e-2,
    )
    run = setup(config)
    try:
        model, tok, _ = warm_start(run)
        learner, _ = make_learner(run, model, tok)
        seen = []
        learner.model.lm_head.register_forward_hook(lambda m, i, out: seen.append(out.dtype))
        graded = grade_step(run, learner, sample_step(run, learner, 0))
        assert set(seen) == {getattr(torch, dtype)}  # sampling and the reference ran under autocast
        for r in graded.records:  # contrast in every group, so the update has a gradient
            r.reward, r.admitted = float(r.rollout_id.endswith("-r0")), True
        before = [p.detach().clone() for p in learner.model.parameters()]
        seen.clear()
        diags = update_step(run, learner, graded)
        assert set(seen) == {getattr(torch, dtype)}  # the gradient pass too
        assert 0 <= diags["replay_max_dev"] < 0.05 and diags["grad_norm"] > 0
        assert all(p.dtype == torch.float32 for p in learner.model.parameters())
        assert any(not torch.equal(a, b) for a, b in zip(before, learner.model.parameters()))
        state = learner.optimizer.state_dict()["state"]
        assert state and all(s["exp_avg"].dtype == torch.float32 for s in state.values())
        assert learner.scaler.is_enabled() == (dtype == "float16")
        if dtype == "float16":
            assert learner.scaler.get_scale() > 1  # the loss was scaled and the step taken
    finally:
        run.close()
