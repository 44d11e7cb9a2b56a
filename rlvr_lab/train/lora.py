"""LoRA through peft: train low-rank adapters, keep the pretrained weights frozen (17.10).

With ``lora_rank > 0`` the learner wraps the warm-start model in a peft ``PeftModel``: every targeted linear
layer gets a trainable update B A of rank r (B starts at zero, so the wrapped model equals the warm start),
and only A and B reach the optimizer. That is what lets a 0.5B model train on a 16 GB Colab T4: float32
master weights of the adapters only, and no second copy for the KL reference, which is the same model with
its adapters switched off (:func:`reference_view`). Sampling, scoring and the reference all run through
the peft model itself, so no merge is needed and the replay check covers the adapters too; adapter dropout
is 0 (and the scorer is in eval mode anyway). A checkpoint holds the adapters (peft's ``save_pretrained``);
:func:`merged_copy` gives a plain model for export.
"""

from __future__ import annotations

import os
from contextlib import nullcontext


def apply_lora(model, rank: int, alpha: int, targets: tuple[str, ...], seed: int = 0):
    """``model`` wrapped with rank-``rank`` LoRA adapters on ``targets`` (``("all-linear",)``: every linear
    layer but the output head). Raises ImportError naming the extra when peft is missing."""
    import torch

    try:
        from peft import LoraConfig, get_peft_model
    except ImportError as exc:
        raise ImportError(f"lora_rank > 0 needs peft ({exc}); pip install 'rlvr-lab[train]'") from None
    if rank < 1:
        raise ValueError(f"rank must be >= 1, got {rank}")
    target = "all-linear" if tuple(targets) == ("all-linear",) else list(targets)
    torch.manual_seed(seed)  # the A matrices' initialisation
    peft_model = get_peft_model(
        model, LoraConfig(r=rank, lora_alpha=alpha, lora_dropout=0.0, target_modules=target, task_type="CAUSAL_LM")
    )
    peft_model.eval()
    return peft_model


def is_lora(model) -> bool:
    """True for a peft model (adapters on a frozen base)."""
    return hasattr(model, "peft_config") and hasattr(model, "disable_adapter")


def reference_view(model):
    """A context in which ``model`` is the reference: a peft model with its adapters off; any other
    model as it is (its reference is a separate frozen copy)."""
    return model.disable_adapter() if is_lora(model) else nullcontext()


def load_adapters(model, path: str) -> None:
    """Load the adapter weights of a checkpoint written by ``PeftModel.save_pretrained`` into ``model``."""
    from peft import set_peft_model_state_dict
    from safetensors.torch import load_file

    file = os.path.join(path, "adapter_model.safetensors")
    if not os.path.exists(file):
        raise FileNotFoundError(f"{path} holds no adapter_model.safetensors (not a LoRA checkpoint)")
    result = set_peft_model_state_dict(model, load_file(file, device=str(next(model.parameters()).device)))
    if getattr(result, "unexpected_keys", None):
        raise ValueError(f"checkpoint {path} has adapter weights this model lacks: {result.unexpected_keys[:3]}")


def merged_copy(model):
    """A plain transformers model with the adapters merged in (for export or evaluation elsewhere)."""
    import copy

    return copy.deepcopy(model).merge_and_unload()
