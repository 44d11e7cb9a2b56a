# ---
# jupyter:
#   accelerator: GPU
#   jupytext:
#     formats: ipynb,py:percent
#     notebook_metadata_filter: accelerator
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% tags=["remove-cell"]
# Colab only: install the course library (this cell is written by scripts/install_cells.py).
try:
    import google.colab  # noqa: F401  (importable on Colab only)
    ON_COLAB = True
except ImportError:
    ON_COLAB = False
if ON_COLAB:
    import os, subprocess, sys
    from pathlib import Path
    source = os.environ.get("RLVR_LAB_SOURCE", "git+https://github.com/rlvr-lab/rlvr-lab")  # a git URL or a wheel file
    if "://" not in source and not source.startswith("git+"):
        source = Path(source).absolute().as_uri()
    subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", f"rlvr-lab[runtime] @ {source}"])

# %% [markdown]
# # Lab 5 - Training pathologies: entropy collapse, length normalisation, pass@k
#
# Chapter 7 lists what goes wrong in a GRPO run that *looks* healthy. This lab measures three of them, each
# by changing one knob from a shared warm start:
#
# 1. **Entropy collapse.** As GRPO reinforces what passes, the policy stops hedging: token entropy falls and
#    the completions in a group become copies of each other. A symmetric clip (`eps_low = eps_high = 0.2`)
#    lets a token the policy already likes grow a lot before the clip binds, while a rare token can only
#    grow by a tiny absolute amount; clip-higher (`eps_high = 0.28 > eps_low`, DAPO) loosens the upper
#    bound. To watch a collapse there must be entropy to lose, so part 1 starts from a warm start that
#    *hedges*: it was shown, for each task, the reference solution and several near misses. We measure
#    **token entropy** and **action diversity** (distinct completions per group / G) under both clips.
# 2. **Length bias.** Averaging each rollout's token losses by its own length (`norm="sequence"`,
#    equation {eq}`ch4-objective`) gives a long failure a smaller per-token penalty than a short one (equation
#    {eq}`ch7-weight`); a constant
#    denominator (`norm="constant"`) removes that. We compare the **mean length of failing rollouts**.
# 3. **pass@1 versus pass@k** (Yue et al. 2025). RL sharpens the distribution: pass@1 tends to rise, while
#    pass@k at large k - what the policy can reach at all when sampled many times - need not, and may fall.
#    We measure **pass@1 and pass@16 on held-out tasks before and after** GRPO.
#
# **What is measured, where, how often.** One seed; per part one warm start shared by its runs, which differ
# only in the named knob; on the hardware printed below; rewards from the sandboxed verifier. The clipped
# fractions are printed so you can check how often each bound acts. Every number in the closing note is
# printed from this run. With one seed and a few steps (`ci`), differences are anecdotes, not findings: run
# `cpu` (and more seeds) before drawing conclusions.

# %% [markdown]
# **Running this lab.** On Colab: *Runtime → Change runtime type → GPU*, then run the first cell, which
# installs the course library there (from the repository, or from a wheel file you uploaded: set
# `RLVR_LAB_SOURCE` to its path first). On a laptop: `pip install ".[runtime]"` in the repository (or the
# wheel) and open this notebook.
#
# **Preset.** The lab sizes itself from the environment variable `RLVR_LAB_PRESET`: `ci` (seconds; what the
# test suite runs), `cpu` (minutes on a laptop) or `gpu` (a Colab GPU). Unset, it picks `gpu` when CUDA is
# available (as on a Colab GPU runtime) and `cpu` otherwise. The numbers quoted in the closing note are
# printed by the code from this run, so they always describe the preset and machine you ran.

# %%
from rlvr_lab.lab_setup import start_lab
PRESET, HARDWARE = start_lab()  # prints the preset (RLVR_LAB_PRESET, else gpu with CUDA, else cpu) and the machine

# %%
import json, os, shutil
import numpy as np
from rlvr_lab.figures.style import axes_row
from rlvr_lab.lab_setup import fresh_dir, series  # an emptied run folder of your own; a metric column as an array
from rlvr_lab.train import TrainConfig, train

# %%
from rlvr_lab.records import read_records
from rlvr_lab.policy import build_model, save_policy, train_tokenizer
from rlvr_lab.tasks import make_suite, split_tasks
from rlvr_lab.train import sft
from rlvr_lab.warm_starts import hedged_demos


def group_diversity(records):
    # Distinct completions per group / G, averaged over the groups of one step (action diversity).
    groups = {}
    for r in records:
        groups.setdefault(r.group_id, []).append(r)
    return float(np.mean([len({r.completion_text for r in g}) / len(g) for g in groups.values()]))


# %% [markdown]
# ## 1. Entropy collapse from a warm start that hedges
#
# A tiny model learns the `affine` and `branch` families from demonstrations in which each training task
# appears with its reference solution twice and each of its near misses once (a flipped comparison, a
# wrong constant, the argument returned unchanged). It then passes about 40 % of the time and spreads its
# first decisions over several bodies. GRPO runs twice from it, with a symmetric clip and with clip-higher;
# the `cpu` setting is the regime of the recorded runs at the end of this lab, on one seed.

# %%
HEDGE = {"ci": dict(problems_per_family=4, sft_steps=60, grpo_steps=3, tasks_per_step=4, group_size=4,
                    heldout_tasks=2),
         "cpu": dict(problems_per_family=6, sft_steps=400, grpo_steps=30, tasks_per_step=8, group_size=8,
                     heldout_tasks=8)}
hedge = TrainConfig.preset(PRESET, progress=False, plots=False, seed=0, families=("affine", "branch"),
                           sft_families=("affine", "branch"), model_size="tiny", sft_batch=16, sft_lr=1e-2, lr=1e-3,
                           passes=4, norm="sequence", overlap=False, **HEDGE.get(PRESET, HEDGE["cpu"]))
hedge = hedge.with_overrides(eval_every=hedge.grpo_steps, checkpoint_every=hedge.grpo_steps)
suite = make_suite(seed=hedge.seed, families=hedge.families, variants=hedge.variants,
                   heldout_fraction=hedge.heldout_fraction, problems_per_family=hedge.problems_per_family)
demos = hedged_demos(split_tasks(suite, "train", hedge.sft_families), 2, hedge.seed)
tok = train_tokenizer([t.prompt + t.solution for t in suite if t.split == "train"], hedge.vocab_size)
model = build_model(tok, hedge.model_size, seed=hedge.seed)
sft(model, tok, demos, hedge.sft_steps, hedge.sft_batch, hedge.sft_lr, hedge.seed)
hedged_warm = fresh_dir("lab5-hedged-warm", PRESET)
save_policy(model, tok, hedged_warm)
with open(os.path.join(hedged_warm, "lineage.json"), "w") as fh:
    json.dump({"heldout": {"pass1": float("nan")}, "demos": len(demos)}, fh)

collapse = {}
for name, eps_high in (("symmetric clip 0.2 / 0.2", 0.2), ("clip-higher 0.2 / 0.28", 0.28)):
    out = fresh_dir(f"lab5-collapse-{eps_high}", PRESET)
    shutil.copytree(hedged_warm, os.path.join(out, "warmstart"))
    result = train(hedge.with_overrides(out_dir=out, eps_low=0.2, eps_high=eps_high))
    records = [r for r in read_records(os.path.join(out, "records.jsonl")) if r.step >= 0]
    div = [group_diversity([r for r in records if r.step == s]) for s in range(result.steps)]
    collapse[name] = dict(rows=result.metrics, diversity=np.array(div))
    print(f"{name}: {result.wall_s:.0f} s, upper-clip fraction "
          f"{np.nanmean(series(result.metrics, 'clip_high_fraction')):.4f}")


# %% mystnb={"figure": {"caption": "From the hedging warm start, this run's token entropy, action diversity (distinct completions per group over G) and training reward per GRPO step, under a symmetric clip and under clip-higher.", "name": "fig-lab5-collapse"}, "image": {"alt": "Three stacked line charts over GRPO steps, each with one line for the symmetric clip and one for clip-higher. Top: token entropy in nats. Middle: distinct completions per group divided by G. Bottom: mean training reward."}}
fig, axes = axes_row(3, height=2.6)
for name, run in collapse.items():
    steps = series(run["rows"], "step")
    axes[0].plot(steps, series(run["rows"], "entropy"), "o-", label=name)
    axes[1].plot(steps, run["diversity"], "o-", label=name)
    axes[2].plot(steps, series(run["rows"], "reward_mean"), "o-", label=name)
axes[0].set(title="token entropy (nats)", xlabel="GRPO step")
axes[1].set(title="distinct completions / G, all groups", xlabel="GRPO step")
axes[2].set(title="training reward", xlabel="GRPO step")
axes[0].legend()
fig.suptitle(f"the hedging warm start, two clips, preset {PRESET}")
fig

# %% [markdown]
# ## 2-3. Length normalisation and pass@k from the course's warm start
#
# The course's standard warm start (reference solutions only; pass@1 well above zero, so groups have
# contrast), trained twice with eight optimizer passes per batch (the default is two, with which the
# weights move too little in a few minutes for the normalisation to show): per-sequence and constant
# normalisation.

# %%
# ci: seconds, a smoke run of the code path. cpu/gpu: the course's standard warm start, then GRPO with eight
# optimizer passes per batch.
LAB = {"ci": dict(model_size="tiny", families=("arith",), sft_families=("arith",), problems_per_family=4,
                  sft_steps=30, sft_batch=8, sft_lr=1e-2, grpo_steps=2, tasks_per_step=3, group_size=4,
                  heldout_tasks=2),
       "cpu": dict(grpo_steps=20, heldout_tasks=40, passes=8),
       "gpu": dict(grpo_steps=40, heldout_tasks=64, passes=8)}[PRESET]
base = TrainConfig.preset(PRESET, progress=False, plots=False, seed=0, eval_samples=16, eval_k=16,
                          eval_every=LAB["grpo_steps"], checkpoint_every=LAB["grpo_steps"], **LAB)
SETTINGS = {
    "per-sequence norm": dict(eps_low=0.2, eps_high=0.2, norm="sequence"),
    "constant norm": dict(eps_low=0.2, eps_high=0.2, norm="constant"),
}
# The warm start once (GRPO steps = 0), shared by every run.
warm_run = train(base.with_overrides(out_dir=fresh_dir("lab5-warm", PRESET), grpo_steps=0))
warm = os.path.join(warm_run.out_dir, "warmstart")
print(f"warm start: held-out pass@1 {warm_run.before['pass1']:.3f}, pass@16 {warm_run.before['pass16']:.3f}")


# %%
runs = {}
for name, knobs in SETTINGS.items():
    out = fresh_dir("lab5-" + knobs["norm"] + "-" + str(knobs["eps_high"]), PRESET)
    shutil.copytree(warm, os.path.join(out, "warmstart"))
    result = train(base.with_overrides(out_dir=out, **knobs))
    records = [r for r in read_records(os.path.join(out, "records.jsonl")) if r.step >= 0]
    runs[name] = dict(result=result, rows=result.metrics)
    clipped = np.nanmean(series(result.metrics, "clip_fraction"))
    upper = np.nanmean(series(result.metrics, "clip_high_fraction"))
    print(f"{name}: {result.wall_s:.0f} s, held-out pass@1 {result.after['pass1']:.3f}, tokens clipped "
          f"{clipped:.3f} (at the upper bound {upper:.3f})")

# %% [markdown]
# ## 2. Failure length

# %% mystnb={"figure": {"caption": "Mean length in tokens of this run's failing rollouts per GRPO step, under per-sequence normalisation and under the constant denominator, from the same warm start.", "name": "fig-lab5-length"}, "image": {"alt": "One line chart over GRPO steps with two lines, per-sequence normalisation and constant normalisation, each the mean number of tokens in the failing rollouts of that step."}}
fig, (ax,) = axes_row(1, height=3.2)
for name, run in runs.items():
    ax.plot(series(run["rows"], "step"), series(run["rows"], "len_fail"), "o-", label=name)
ax.set(title="mean length of failing rollouts (tokens)", xlabel="GRPO step")
ax.legend()
fig

# %% [markdown]
# ## 3. pass@1 versus pass@16, before and after
#
# Both are unbiased estimates from 16 samples per held-out task with a fixed sampling seed (chapter
# 8); *before* is the shared warm start.

# %% mystnb={"figure": {"caption": "Held-out pass@1 and pass@16 of this run's warm start and of the two trained policies, each estimated without bias from 16 samples per task.", "name": "fig-lab5-passk"}, "image": {"alt": "Grouped bars for three policies, the shared warm start, the per-sequence run and the constant-norm run, each with a pass@1 bar and a taller pass@16 bar."}}
labels = ["warm start"] + list(runs)
p1 = [warm_run.before["pass1"]] + [r["result"].after["pass1"] for r in runs.values()]
p16 = [warm_run.before["pass16"]] + [r["result"].after["pass16"] for r in runs.values()]
x = np.arange(len(labels))
fig, (ax,) = axes_row(1, height=3.4)
ax.bar(x - 0.2, p1, 0.4, label="pass@1")
ax.bar(x + 0.2, p16, 0.4, label="pass@16")
ax.set_xticks(x, labels, rotation=20, ha="right")
ax.set_ylabel("held-out")
ax.legend()
fig

# %% [markdown]
# ## Closing note
#
# What to look for (chapter 7): from the hedging warm start, GRPO should shrink token entropy and action
# diversity as the training reward rises, under either clip; whether clip-higher slows the collapse is
# the question the recorded runs answer on five seeds. The constant denominator should keep failing rollouts
# from growing longer than per-sequence normalisation does, and RL should raise pass@1 more than pass@16. A
# short `ci` run may show none of this clearly - with a handful of steps the knobs barely act - which is
# itself the lesson about how much evidence one short run carries.
#
# Before reading a difference between the two clips, check the fraction of tokens clipped *at the upper
# bound*: clip-higher only changes tokens whose ratio would pass `1 + eps_low`, and if that is under a
# percent of tokens, the two clip settings are nearly the same run and a gap between them is mostly noise.
# Values are means over the first and the last five GRPO steps (one step is one batch, too noisy alone);
# the entropy drop is `1 - last 5 / step 0`. Token entropy and pass@16 need not agree: entropy measures how
# spread each next-token distribution is, pass@16 whether any of sixteen samples solves the task. This
# run's numbers:

# %%
print(f"Measured on {HARDWARE}, preset {PRESET}, one seed ({base.seed}); part 1: {hedge.grpo_steps} GRPO "
      f"steps of {hedge.tasks_per_step} tasks x G = {hedge.group_size}; parts 2-3: {base.grpo_steps} steps of "
      f"{base.tasks_per_step} tasks x G = {base.group_size} per setting.")
def window(values, last):
    values = np.asarray(values, dtype=float)
    part = values[-5:] if last else values[:5]
    return float(np.nanmean(part)) if np.isfinite(part).any() else float("nan")

for name, run in collapse.items():
    rows = run["rows"]
    ent, rew = series(rows, "entropy"), series(rows, "reward_mean")
    print(f"- {name}: entropy {ent[0]:.3f} -> {window(ent, True):.3f} nats (drop {1 - window(ent, True) / ent[0]:.0%});"
          f" diversity {run['diversity'][0]:.2f} -> {window(run['diversity'], True):.2f}; training reward "
          f"{window(rew, False):.2f} -> {window(rew, True):.2f}; upper-clip fraction "
          f"{np.nanmean(series(rows, 'clip_high_fraction')):.4f}")
for name, run in runs.items():
    rows = run["rows"]
    fail_len = series(rows, "len_fail")
    print(f"- {name}: failing length {window(fail_len, False):.1f} -> {window(fail_len, True):.1f} tokens; "
          f"held-out pass@1 {warm_run.before['pass1']:.3f} -> {run['result'].after['pass1']:.3f}, pass@16 "
          f"{warm_run.before['pass16']:.3f} -> {run['result'].after['pass16']:.3f}")

# %% [markdown]
# ## Recorded runs: five seeds per claim
#
# Each of this lab's three comparisons also exists as an experiment with five seeds and 95 % intervals over
# seeds, in a regime where its mechanism can act (`experiments/clip_higher.py`, `experiments/length_norm.py`,
# `experiments/pass_at_k.py`; results and commands in `experiments/RESULTS.md`; each stored result names the
# code that made it). The tables and figures below are read from the stored results, and the line under each
# table prints the interval the claim rests on. In short: from the hedging warm start GRPO cut entropy by
# about two thirds and action diversity from about 0.40 to 0.20 distinct completions per group over G, and
# clip-higher made no difference the
# intervals can detect (its bound acts on well under 1 % of tokens); length normalisation pointed the
# predicted way in four seeds of five, with intervals that include zero; and the base policy catches up with
# the trained one at large k.

# %%
from IPython.display import Markdown, display
from rlvr_lab import claims
from rlvr_lab.figures import experiments


def recorded(name: str) -> dict:
    """Load one stored result, say how it was made and show its table."""
    rec = claims.load(name)
    print(f"{name}: made by", rec["command"].split("python ", 1)[-1], f"on {rec['machine']['cpus']} CPU cores")
    display(Markdown(claims.table(name)))
    return rec


rec = recorded("clip_higher")
s = rec["summary"]
print("entropy drop, symmetric clip:", claims.ci(s["entropy_drop"]["symmetric"]),
      "| clip-higher - symmetric:", claims.ci(s["entropy_drop"]["difference"]))

# %% mystnb={"figure": {"caption": "The recorded clip comparison on five seeds from the hedging warm start: token entropy and action diversity per step under the symmetric clip and under clip-higher, and the share of tokens each clip can act on.", "name": "fig-lab5-recorded-clip"}, "image": {"alt": "Three stacked charts from the stored five-seed result. Top and middle: token entropy and distinct completions per group over training steps, a thin line per seed and a thick mean per clip setting, both falling under either clip. Bottom: interval bars for the shares of tokens at the upper clip, eligible for it, and clipped at all."}}
experiments.recorded_clip_figure(rec)

# %%
rec = recorded("length_norm")
print("growth of failing length, per-sequence - constant:",
      claims.ci(rec["summary"]["len_fail_change"]["difference"], 2))

# %% mystnb={"figure": {"caption": "The recorded length comparison on five seeds: mean length of failing rollouts per step under per-sequence normalisation and under the constant denominator, and its change over the run with 95 % intervals.", "name": "fig-lab5-recorded-length"}, "image": {"alt": "Two stacked charts from the stored five-seed result. Top: mean token count of failing rollouts per training step, thin lines per seed and a thick mean per normalisation. Bottom: interval bars for the change in that length under each normalisation and their difference."}}
experiments.recorded_length_figure(rec)

# %%
rec = recorded("pass_at_k")
print("pass@1 gain:", claims.ci(rec["summary"]["1"]["difference"]), "| pass@32, trained - base:",
      claims.ci(rec["summary"]["32"]["difference"]))

# %% mystnb={"figure": {"caption": "The recorded pass@k comparison on five seeds: held-out pass@k of the base and the trained policy for k from 1 to 32, and their difference with its interval.", "name": "fig-lab5-recorded-passk"}, "image": {"alt": "Two stacked charts against k on a logarithmic axis from the stored five-seed result. Top: pass@k with error bars for the warm start and the trained policy, the trained one ahead at k = 1 and the base catching up by k = 32. Bottom: trained minus base with its interval, falling towards zero as k grows."}}
experiments.recorded_pass_at_k_figure(rec)
