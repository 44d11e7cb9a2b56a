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
# # Lab 1 - Training a tiny code model with GRPO
#
# Everything in the course at once, small enough to run here: a tiny Llama-style model is warm-started on
# demonstrations of function tasks (chapter 8), then trained with GRPO (chapter 4) on rewards from
# the sandboxed verifier (chapter 6), and evaluated on held-out problems it never trained on.
#
# You will plot the four curves chapter 7 tells you to watch: **reward** (mean verdict of the training
# rollouts), held-out **pass@1**, **token entropy** of the sampled tokens, and **length by outcome** (the
# mean completion length of passing and of failing rollouts, separately).
#
# **What is measured, where, how often.** One training run (seed 0) of `rlvr_lab.train` with the preset's
# configuration, printed below, on the hardware printed by the setup cell. Rewards come from the `local`
# sandbox verifier; pass@1 is estimated on a fixed held-out subset with a fixed sampling seed, with a 95 %
# interval. One seed is one seed: differences of a few points between runs are noise, so rerun with
# `seed=1, 2` before believing a small effect. The `ci` preset is tiny and mostly shows the machinery; the
# `cpu` preset (about half an hour on a laptop) and the `gpu` preset show learning.

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
config = TrainConfig.preset(PRESET, out_dir=fresh_dir("lab1", PRESET), progress=False, plots=False, seed=0)
print({k: getattr(config, k) for k in ("model_size", "sft_steps", "grpo_steps", "tasks_per_step", "group_size",
                                       "eps_low", "eps_high", "beta", "norm", "eval_samples", "device")})
result = train(config)
rows = result.metrics
print(f"trained {result.steps} GRPO steps, {result.rollouts} training rollouts in {result.wall_s:.0f} s")
print("seconds per phase:", {k: round(v, 1) for k, v in result.timing.items()})

# %% [markdown]
# ## The four curves
#
# Held-out pass@1 is measured before GRPO (on the warm start) and at every evaluation step; the shaded band
# is its 95 % interval. Length by outcome uses the verdict of each training rollout: a failing length that
# climbs while the reward stays flat is the length pathology of chapter 7.

# %% mystnb={"figure": {"caption": "This run's four training curves: training reward, held-out pass@1 with its 95 % interval, token entropy of the sampled tokens, and completion length split by verdict, per GRPO step.", "name": "fig-lab1-curves"}, "image": {"alt": "Four stacked line charts over GRPO steps: mean training reward, held-out pass@1 with a shaded interval band starting from the warm start at step -1, token entropy in nats, and the mean length of passing and of failing rollouts in tokens."}}
steps = series(rows, "step")
fig, axes = axes_row(4, height=2.4)
axes[0].plot(steps, series(rows, "reward_mean"), "o-")
axes[0].set(title="training reward (mean verdict)", xlabel="GRPO step", ylabel="reward")

ev = [(-1, result.before["pass1"], result.before["pass1_lo"], result.before["pass1_hi"])]
ev += [(r["step"], r["heldout_pass1"], r["heldout_pass1_lo"], r["heldout_pass1_hi"]) for r in rows
       if "heldout_pass1" in r]
ev = np.array(ev, dtype=float)
axes[1].plot(ev[:, 0], ev[:, 1], "o-")
axes[1].fill_between(ev[:, 0], ev[:, 2], ev[:, 3], alpha=0.25)
axes[1].set(title="held-out pass@1 (95% interval)", xlabel="GRPO step (-1 = warm start)", ylabel="pass@1")

axes[2].plot(steps, series(rows, "entropy"), "o-")
axes[2].set(title="token entropy of sampled tokens", xlabel="GRPO step", ylabel="nats")

for key, label in (("len_pass", "passing rollouts"), ("len_fail", "failing rollouts")):
    axes[3].plot(steps, series(rows, key), "o-", label=label)
axes[3].set(title="completion length by outcome", xlabel="GRPO step", ylabel="tokens")
axes[3].legend()
fig.suptitle(f"GRPO on function tasks, preset {PRESET}, seed {config.seed}")
fig

# %% [markdown]
# ## Where the time went
#
# Chapter 8 says rollout systems are paced by their slowest stage. The trainer timed each phase.

# %% mystnb={"figure": {"caption": "Where this run's wall-clock time went: seconds spent in each phase of training, as the trainer timed them, one bar per phase.", "name": "fig-lab1-phases"}, "image": {"alt": "A horizontal bar chart with one bar per training phase, such as sampling, reference scoring, verification, the update and the warm start, each bar as long as the seconds that phase took in this run."}}
phases = {k: v for k, v in result.timing.items() if v > 0}
share = float(np.nanmean(series(rows, "verifier_share")))
print(f"verification took {share:.0%} of an average GRPO step")
fig, (ax,) = axes_row(1, height=0.35 * len(phases) + 1.2)
ax.barh(list(phases), list(phases.values()))
ax.set(xlabel="seconds", title="wall-clock by phase")
fig

# %% [markdown]
# ## One step, taken apart
#
# `train` repeats four functions, each handing the next a plain dataclass. The cells below run them once
# more by hand, from the run's last checkpoint: `sample_step` draws G completions per task and scores them
# under the frozen reference while the verifier works; `grade_step` waits for the verdicts and applies the
# complete-group rule; `update_step` builds the batch (the group-relative advantages, equation
# {eq}`ch4-advantage`) and takes `passes` optimizer steps of the GRPO loss (chapter 4's clipped surrogate and
# objective). Nothing here is
# written to the run's folder. On the `ci` preset expect all-fail groups: every advantage is 0 and the step
# leaves the weights as they were (chapter 4).

# %%
from rlvr_lab.train import grade_step, make_batch, make_learner, sample_step, setup, update_step, warm_start

run = setup(config)                             # the same seeds, tasks, verifier pool and sampling as above
model, tok, _ = warm_start(run)                 # the run's warm start, loaded from its folder
learner, step = make_learner(run, model, tok)   # resumed from the last checkpoint: `step` is the next one
sampled = sample_step(run, learner, step)
first = sampled.collection.records[0]
print(f"step {step}: {len(sampled.collection.records)} rollouts sampled by policy version {learner.version}; "
      f"reference log-probs for {len(sampled.ref)} of them, first: {tuple(sampled.ref[first.rollout_id].shape)}")
print(f"{first.rollout_id}: {first.completion_tokens} tokens, verdict so far {first.verdict!r}")

# %%
graded = grade_step(run, learner, sampled)
for group in sorted({r.group_id for r in graded.records}):
    members = [r for r in graded.records if r.group_id == group]
    print(group, [r.reward for r in members], "admitted" if members[0].admitted else members[0].exclusion_reason)

# %%
admitted = [r for r in graded.records if r.admitted]
if admitted:
    batch = make_batch(learner, admitted, config, run.sampling, graded.ref)   # what update_step builds first
    print("group-relative advantages:", [round(a, 3) for a in batch.advantages.tolist()])
version = learner.version
diags = update_step(run, learner, graded)
run.close()
print(f"policy version {version} -> {learner.version};",
      {k: round(diags[k], 4) for k in ("loss", "clip_fraction", "kl_mean", "entropy", "grad_norm") if k in diags})

# %% [markdown]
# ## Closing note
#
# The cell below prints this run's numbers. On the `ci` preset expect pass@1 near zero: twenty warm-start
# steps do not teach a model to code, and three GRPO steps cannot find contrast where nothing passes (every
# group all-fail is a zero-contrast group, chapter 4). Run `cpu` to watch the reward and held-out
# pass@1 rise while entropy falls.

# %%
b, a = result.before, result.after
k = config.eval_k
print(f"Measured on {HARDWARE}, preset {PRESET}, one seed ({config.seed}), {result.steps} GRPO steps of "
      f"{config.tasks_per_step} tasks x G = {config.group_size}, {result.wall_s:.0f} s in total.")
print(f"- held-out pass@1: {b['pass1']:.3f} [{b['pass1_lo']:.2f}, {b['pass1_hi']:.2f}] before GRPO -> "
      f"{a['pass1']:.3f} [{a['pass1_lo']:.2f}, {a['pass1_hi']:.2f}] after, on {a['tasks']} tasks x "
      f"{config.eval_samples} samples; pass@{k}: {b[f'pass{k}']:.3f} -> {a[f'pass{k}']:.3f}")
print(f"- training reward: {rows[0]['reward_mean']:.3f} at the first step, {rows[-1]['reward_mean']:.3f} at the last")
print(f"- token entropy: {rows[0]['entropy']:.2f} -> {rows[-1]['entropy']:.2f} nats")
print(f"- failing length: {rows[0].get('len_fail', float('nan')):.1f} -> {rows[-1].get('len_fail', float('nan')):.1f} "
      f"tokens; passing length: {rows[0].get('len_pass', float('nan')):.1f} -> {rows[-1].get('len_pass', float('nan')):.1f}")
