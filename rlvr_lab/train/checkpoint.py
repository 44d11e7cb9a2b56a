"""Checkpoints with lineage, and resuming a killed run (section 17.10).

A checkpoint binds weights to what produced them: the config, seed, task-generator and verifier versions,
the tokenizer digest, the parent checkpoint, and the SHA-256 of the rollout records and metrics up to the
checkpoint (with their byte sizes). Resuming truncates both files back to those sizes and continues from
the next step with the saved RNG states, so records written after the last checkpoint are regenerated once,
never duplicated and never lost. Each checkpoint is written to a temporary directory and renamed into
place, so a kill mid-write leaves the previous one intact.
"""

from __future__ import annotations

import json
import os
import platform
import random
import shutil

import torch

from rlvr_lab.policy import save_policy
from rlvr_lab.records import file_digest


def latest_checkpoint(out_dir: str) -> str | None:
    """Path of the newest complete checkpoint under ``out_dir/checkpoints`` (None if there is none)."""
    pointer = os.path.join(out_dir, "checkpoints", "LATEST")
    if not os.path.exists(pointer):
        return None
    with open(pointer, encoding="utf-8") as fh:
        path = os.path.join(out_dir, "checkpoints", fh.read().strip())
    return path if os.path.exists(os.path.join(path, "lineage.json")) else None


def rng_state(generator: torch.Generator) -> dict:
    """Python, torch and sampling-generator RNG states."""
    return {"python": random.getstate(), "torch": torch.get_rng_state(), "sampler": generator.get_state()}


def save_checkpoint(
    out_dir: str,
    step: int,
    model,
    tokenizer,
    optimizer,
    generator: torch.Generator,
    version: int,
    records_path: str,
    metrics_path: str,
    lineage: dict,
    scaler=None,
) -> str:
    """Write ``checkpoints/step_{step:05d}`` atomically and point ``LATEST`` at it; returns its path.

    A LoRA model (peft) writes its adapters only; a float16 run's loss ``scaler`` state is kept."""
    root = os.path.join(out_dir, "checkpoints")
    os.makedirs(root, exist_ok=True)
    name = f"step_{step:05d}"
    final, tmp = os.path.join(root, name), os.path.join(root, name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    save_policy(model, tokenizer, tmp)
    records_size = os.path.getsize(records_path) if os.path.exists(records_path) else 0
    metrics_size = os.path.getsize(metrics_path) if os.path.exists(metrics_path) else 0
    torch.save(
        {
            "step": step,
            "version": version,
            "optimizer": optimizer.state_dict(),
            "rng": rng_state(generator),
            "records_size": records_size,
            "metrics_size": metrics_size,
            "scaler": scaler.state_dict() if scaler is not None and scaler.is_enabled() else None,
        },
        os.path.join(tmp, "trainer_state.pt"),
    )
    full = dict(lineage)
    full.update(
        {
            "step": step,
            "policy_version": version,
            "records": {
                "path": os.path.basename(records_path),
                "bytes": records_size,
                "sha256": file_digest(records_path, records_size) if records_size else "",
            },
            "metrics": {"path": os.path.basename(metrics_path), "bytes": metrics_size},
            "software": {"python": platform.python_version(), "torch": torch.__version__},
        }
    )
    with open(os.path.join(tmp, "lineage.json"), "w", encoding="utf-8") as fh:
        json.dump(full, fh, indent=2, sort_keys=True, default=str)
    shutil.rmtree(final, ignore_errors=True)
    os.replace(tmp, final)
    with open(os.path.join(root, "LATEST.tmp"), "w", encoding="utf-8") as fh:
        fh.write(name)
    os.replace(os.path.join(root, "LATEST.tmp"), os.path.join(root, "LATEST"))
    return final


def load_trainer_state(path: str) -> dict:
    """The optimizer, RNG and bookkeeping state saved beside the weights."""
    return torch.load(os.path.join(path, "trainer_state.pt"), weights_only=False)


def restore_rng(state: dict, generator: torch.Generator) -> None:
    """Inverse of :func:`rng_state`."""
    random.setstate(state["python"])
    torch.set_rng_state(state["torch"])
    generator.set_state(state["sampler"])


def truncate_to(path: str, size: int) -> None:
    """Cut a file back to ``size`` bytes (records and metrics written after the checkpoint)."""
    if os.path.exists(path) and os.path.getsize(path) > size:
        with open(path, "r+b") as fh:
            fh.truncate(size)


def read_lineage(path: str) -> dict:
    """The lineage JSON of a checkpoint or warm-start directory."""
    with open(os.path.join(path, "lineage.json"), encoding="utf-8") as fh:
        return json.load(fh)
