"""Training configuration and presets (sections 17.5, 17.10).

One dataclass holds every choice the chapter says a run must record with its weights: group size, clip
widths (clip-higher when ``eps_high > eps_low``), length normalisation, KL weight, the complete-group rule,
the staleness bound, the sampling configuration and the task mixture. Presets: ``ci`` (seconds, for tests
and notebooks), ``cpu`` (a laptop or this 2-core box, minutes), ``gpu`` (a Colab GPU, selected
automatically when CUDA is present). This module imports no torch.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields, replace

PRESETS = ("ci", "cpu", "gpu")


@dataclass(frozen=True)
class TrainConfig:
    """Every knob of one run; saved into each checkpoint's lineage."""

    seed: int = 0
    """Seed of tasks, initial weights, sampling and task order."""
    out_dir: str = "runs/rlvr"
    """Directory for records, metrics, checkpoints, plots and the report."""
    device: str = "auto"
    """``auto`` (CUDA when available, else CPU), ``cpu`` or ``cuda``."""
    dtype: str = "float32"
    """Model dtype: ``float32``, ``bfloat16``, ``float16`` or ``auto`` (bfloat16 on a GPU that supports it,
    else float32). Log-probs and losses are always computed in float32."""
    engine: str = "ours"
    """``ours`` (this module's GRPO loop) or ``trl`` (TRL's GRPOTrainer with the same verifier reward)."""
    model: str = ""
    """Empty: build a tiny model from a config; otherwise a local path or hub id for ``from_pretrained``."""
    model_size: str = "small"
    """Size name of :data:`rlvr_lab.policy.MODEL_SIZES` when building from a config."""
    vocab_size: int = 384
    """BPE vocabulary size of the tokenizer trained on the task corpus."""

    families: tuple[str, ...] = ("arith", "affine", "listmap", "listagg", "branch")
    """Task families the GRPO loop trains on and the held-out evaluation covers."""
    sft_families: tuple[str, ...] = ("arith", "affine", "listmap", "listagg")
    """Families with demonstrations in the warm start (the rest are learned from verdicts only)."""
    variants: int = 2
    """Variants per problem (name, argument, visible example)."""
    heldout_fraction: float = 0.3
    """Share of problems held out (the split is drawn per problem)."""
    problems_per_family: int | None = None
    """Keep at most this many problems per family (None: all)."""
    heldout_tasks: int | None = None
    """Evaluate on at most this many held-out tasks (a fixed, seed-chosen subset; None: all)."""

    sft_steps: int = 100
    """Warm-start optimizer steps on demonstrations."""
    sft_batch: int = 32
    """Demonstrations per warm-start step."""
    sft_lr: float = 3e-3
    """Warm-start AdamW learning rate."""

    grpo_steps: int = 40
    """GRPO training steps (one batch of groups each)."""
    tasks_per_step: int = 16
    """Tasks (groups) per GRPO step."""
    group_size: int = 8
    """G: rollouts per task."""
    passes: int = 2
    """Optimizer passes over each batch against the recorded behaviour log-probs."""
    lr: float = 5e-4
    """GRPO AdamW learning rate."""
    eps_low: float = 0.2
    """Lower clip width of the token ratio."""
    eps_high: float = 0.28
    """Upper clip width (clip-higher when > eps_low)."""
    beta: float = 0.02
    """Weight of the k3 KL penalty to the frozen reference (the warm-start checkpoint)."""
    norm: str = "constant"
    """Length normalisation: ``sequence`` (1/|o_i|, eq 4) or ``constant`` (eq 5 variant)."""
    share_prompt: bool = True
    """Score each group's common prompt once and reuse its key/value cache for the G members (same loss
    and gradient up to float rounding, about half the tokens); off: every row runs in full."""
    std: str = "population"
    """Group dispersion: ``population`` (the chapter's) or ``sample``."""
    max_grad_norm: float = 1.0
    """Gradient clipping norm."""
    max_lag: int = 1
    """Version-lag bound checked at admission (equation 8)."""
    overlap: bool = False
    """Update on the previous batch while the verifier grades this one (17.9: keep the learner busy while
    verifying). Each batch then enters its update ``passes`` versions after it was sampled, so ``max_lag``
    must be >= ``passes``. The pipeline drains before evaluations and checkpoints."""
    closure: str = "exclude"
    """Complete-group rule for unresolved members: ``exclude`` the group (reason logged) or ``wait``
    (resubmit its unresolved members up to ``verify_retries`` times, then exclude)."""
    verify_retries: int = 1
    """Resubmissions of pending/unknown members under ``closure="wait"``."""
    multi_turn: bool = False
    """Second turn: on a failing public test the policy sees the feedback (masked) and may revise."""

    temperature: float = 1.0
    """Sampling temperature (training and evaluation)."""
    top_k: int = 0
    """Top-k filter (0 off)."""
    top_p: float = 1.0
    """Top-p filter (1.0 off)."""
    max_new_tokens: int = 24
    """Token budget per invocation."""

    eval_samples: int = 4
    """Samples per held-out task for pass@1 and pass@k."""
    eval_k: int = 4
    """k of the reported pass@k (<= eval_samples)."""
    eval_every: int = 10
    """Evaluate held-out pass@1 every this many steps (and always before and after)."""
    eval_seed: int = 12345
    """Fixed sampling seed of every evaluation, so evaluations differ only by the weights."""

    verifier_workers: int = 2
    """VerifierPool workers."""
    verifier_backend: str = "auto"
    """VerifierPool backend: ``auto`` (local namespaces where they work, else the weaker ``process``, named
    in the run's lineage), ``local``, ``process`` or ``docker``."""
    verify_timeout_s: float = 120.0
    """Seconds to wait for one verdict future before recording it as ``unknown``."""
    verdict_cache: bool = True
    """Reuse the verifier's resolved verdict for a byte-identical candidate on the same fixture version
    (the tests are deterministic, K=1); the record's evidence says so."""
    checkpoint_every: int = 10
    """Checkpoint every this many GRPO steps (and at the end)."""
    progress: bool = True
    """Show a tqdm progress bar."""
    plots: bool = True
    """Write matplotlib plots at the end."""
    stop_after_steps: int | None = None
    """Testing aid: stop the process-level run after this many GRPO steps, as if killed (resume with the
    same config)."""
    extra: dict = field(default_factory=dict)
    """Free-form notes stored with the lineage."""

    def __post_init__(self) -> None:
        checks = [
            (self.device in ("auto", "cpu", "cuda") or self.device.startswith("cuda:"), "device",
             "'auto', 'cpu' or 'cuda[:N]'"),
            (self.dtype in ("float32", "bfloat16", "float16", "auto"), "dtype",
             "'float32', 'bfloat16', 'float16' or 'auto'"),
            (self.engine in ("ours", "trl"), "engine", "'ours' or 'trl'"),
            (self.norm in ("sequence", "constant"), "norm", "'sequence' or 'constant'"),
            (self.std in ("population", "sample"), "std", "'population' or 'sample'"),
            (self.closure in ("exclude", "wait"), "closure", "'exclude' or 'wait'"),
            (self.group_size >= 2, "group_size", ">= 2"),
            (self.tasks_per_step >= 1, "tasks_per_step", ">= 1"),
            (self.passes >= 1, "passes", ">= 1"),
            (self.grpo_steps >= 0, "grpo_steps", ">= 0"),
            (self.sft_steps >= 0, "sft_steps", ">= 0"),
            (0 < self.eps_low < 1, "eps_low", "(0, 1)"),
            (self.eps_high >= self.eps_low, "eps_high", ">= eps_low"),
            (self.beta >= 0, "beta", ">= 0"),
            (self.lr > 0 and self.sft_lr > 0, "lr", "> 0"),
            (self.max_lag >= 0, "max_lag", ">= 0"),
            (not self.overlap or self.max_lag >= self.passes, "max_lag",
             ">= passes when overlap is on (a batch is admitted one update, passes versions, after sampling)"),
            (self.eval_samples >= 1, "eval_samples", ">= 1"),
            (1 <= self.eval_k <= self.eval_samples, "eval_k", "[1, eval_samples]"),
            (self.verifier_workers >= 1, "verifier_workers", ">= 1"),
            (self.checkpoint_every >= 1 and self.eval_every >= 1, "checkpoint_every/eval_every", ">= 1"),
        ]
        for ok, name, allowed in checks:
            if not ok:
                raise ValueError(f"{name} must be {allowed}, got {getattr(self, name.split('/')[0])!r}")

    @classmethod
    def preset(cls, name: str, **overrides) -> "TrainConfig":
        """A named preset with optional field overrides.

        >>> TrainConfig.preset("ci").grpo_steps
        3
        >>> TrainConfig.preset("cpu", seed=2).seed
        2
        """
        if name not in PRESETS:
            raise ValueError(f"preset must be one of {PRESETS}, got {name!r}")
        base = {
            "ci": dict(out_dir="runs/ci", model_size="tiny", vocab_size=320, problems_per_family=6,
                       heldout_tasks=8, sft_steps=20, sft_batch=16, grpo_steps=3, tasks_per_step=4,
                       group_size=4, eval_samples=2, eval_k=2, eval_every=3, checkpoint_every=1,
                       max_new_tokens=16, progress=False, plots=False),
            "cpu": dict(out_dir="runs/cpu", eval_every=20, overlap=True),
            "gpu": dict(out_dir="runs/gpu", device="auto", model_size="base", dtype="auto",
                        sft_steps=300, sft_batch=64, grpo_steps=80, tasks_per_step=32, eval_samples=8,
                        eval_k=8, verifier_workers=4, overlap=True),
        }[name]
        base.update(overrides)
        if base.get("overlap") and "max_lag" not in overrides:
            base["max_lag"] = base.get("passes", cls.passes)
        return cls(**base)

    def with_overrides(self, **overrides) -> "TrainConfig":
        """A copy with some fields replaced (validated again)."""
        return replace(self, **overrides)

    def to_dict(self) -> dict:
        """Plain JSON-ready dict."""
        return asdict(self)

    def digest_json(self) -> str:
        """Canonical JSON of the fields that define the run's trajectory (everything but I/O knobs)."""
        skip = {"out_dir", "progress", "plots", "stop_after_steps"}
        return json.dumps({f.name: getattr(self, f.name) for f in fields(self) if f.name not in skip},
                          sort_keys=True, default=list)
