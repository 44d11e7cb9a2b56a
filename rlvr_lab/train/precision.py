"""Mixed precision done right: float32 master weights, 16-bit compute under autocast (17.10).

Updating bfloat16 weights directly with AdamW loses every step smaller than the weight's last bit (8 bits
of mantissa: an update below ~0.4 % of a weight vanishes), which is most of a fine-tuning step at lr 1e-5.
So the trainer keeps the weights, gradients and optimizer state in float32 and runs the forward passes
(sampling, scoring, reference, SFT) under ``torch.autocast`` in the compute dtype. float16 has the range
problem instead: small gradients underflow to zero, so its backward pass runs on a loss scaled by a
:class:`torch.amp.GradScaler` (unscaled before the gradient clip; a step with an inf or NaN gradient is
skipped and the scale lowered). ``dtype="auto"`` picks by device: bfloat16 on a GPU that has it (Ampere
and later), float16 with loss scaling on one that does not (a Colab T4), float32 on the CPU. Log-probs,
the loss and its statistics are always float32 (:func:`rlvr_lab.policy.transformed_logprobs` casts).
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass

import torch

#: Compute dtypes a run may ask for (``auto`` resolves to one of them).
DTYPES = ("float32", "bfloat16", "float16")


@dataclass(frozen=True)
class Precision:
    """The compute dtype of the forward passes and the device type autocast runs on."""

    dtype: str = "float32"
    """``float32`` (no autocast), ``bfloat16`` or ``float16`` (with loss scaling)."""
    device_type: str = "cpu"
    """``cpu`` or ``cuda``."""

    def __post_init__(self) -> None:
        if self.dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {DTYPES}, got {self.dtype!r}")

    @property
    def torch_dtype(self) -> torch.dtype:
        return getattr(torch, self.dtype)

    def autocast(self):
        """A context running forward passes in the compute dtype (nothing for float32).

        >>> with Precision("bfloat16").autocast():
        ...     (torch.ones(2, 2) @ torch.ones(2, 2)).dtype
        torch.bfloat16
        """
        if self.dtype == "float32":
            return nullcontext()
        return torch.autocast(self.device_type, dtype=self.torch_dtype)

    def scaler(self) -> torch.amp.GradScaler:
        """A loss scaler, enabled for float16 only (disabled it passes ``step`` straight through)."""
        return torch.amp.GradScaler(self.device_type, enabled=self.dtype == "float16")


def resolve_precision(name: str, device: torch.device) -> Precision:
    """The run's :class:`Precision` for a ``TrainConfig.dtype`` on ``device``.

    >>> resolve_precision("auto", torch.device("cpu"))
    Precision(dtype='float32', device_type='cpu')
    >>> resolve_precision("bfloat16", torch.device("cpu")).dtype
    'bfloat16'
    """
    if name == "auto":
        if device.type != "cuda":
            name = "float32"
        else:
            name = "bfloat16" if torch.cuda.is_bf16_supported(including_emulation=False) else "float16"
    return Precision(name, device.type)


def check_master_weights(model) -> None:
    """Raise unless every trainable parameter is float32 (the optimizer must never update 16-bit weights)."""
    low = sorted({str(p.dtype) for p in model.parameters() if p.requires_grad and p.dtype != torch.float32})
    if low:
        raise ValueError(
            f"trainable parameters must be float32 master weights, got {', '.join(low)}; "
            "load the model in float32 and set dtype for the compute (autocast)"
        )


def weight_dtype(config, precision: Precision) -> torch.dtype:
    """The dtype the policy's weights are loaded in: float32 master weights for everything the optimizer
    updates; a LoRA run without SFT updates only its adapters (peft keeps them float32), so its frozen base
    can be held in the compute dtype (half the memory, no per-step cast)."""
    if config.lora_rank and not config.sft_steps and precision.dtype != "float32":
        return precision.torch_dtype
    return torch.float32
