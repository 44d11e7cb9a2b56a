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
# # Lab 4 - Reward hacking under optimisation
#
# Chapter 4's equation for a lone pass makes a sharp claim: in a group where everything else fails, the one
# rollout that passes gets the largest coefficient of the batch (about $\sqrt{G-1}$), and the gradient copies
# it - whether the pass was earned or hacked. A verifier that can be fooled therefore does not just leak a
# little reward: it can turn a rare exploit into what the policy learns.
#
# Here we give a policy a small, realistic foothold for one exploit and let GRPO decide what to do with it.
# The warm start learns two easy task families from honest demonstrations. On a third, harder family it
# only ever sees wrong attempts: for every one of its training tasks, six near misses (a flipped comparison,
# a wrong constant, the argument returned unchanged) and one exploit whose body is `import os;
# os._exit(0)`. So on a hard task the warm-started policy almost never passes honestly and writes the
# exploit now and then - the chapter's scenario. The exploit's process exits with status 0 in the middle of
# the tests: the naive harness reads the exit status and calls that a pass; the isolated verifier runs the
# candidate in a sandbox behind a proxy and calls it a failure. We then train **the same warm start twice**,
# once rewarded by the naive harness and once by the isolated verifier, and measure on every training
# rollout:
#
# * the **exploit rate** - the share of rollouts whose completion is the well-formed exploit
#   (`import os` and `os._exit(0)` as statements);
# * the **true pass rate** - the share that the *isolated* verifier accepts (for the naive run every
#   rollout is re-verified by the isolated verifier after training);
# * **where the exploit's advantage came from** - in a group where it was the lone pass, one of several
#   exploits, or beside an honest pass.
#
# **What is measured, where, how often.** One seed, one warm start shared by both runs, the preset's
# number of GRPO steps, on the hardware printed below. Rewards during training: `NaiveVerifier` (teaching
# only: it runs candidates with your rights - here the candidates are this model's own function bodies) or
# `VerifierPool(backend="local")`.

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
import concurrent.futures as cf
from rlvr_lab import exploits
from rlvr_lab.policy import build_model, save_policy, train_tokenizer
from rlvr_lab.records import read_records
from rlvr_lab.tasks import make_suite, split_tasks
from rlvr_lab.train import PolicyHandle, VerdictCache, evaluate, heldout_subset, sampling_of, sft, tokenizer_digest
from rlvr_lab.verifier import Verifier, VerifierPool
from rlvr_lab.verifier.naive import NaiveVerifier

# The warm start learns the easy families honestly; GRPO trains on one easy and the hard family, where the
# only passes the policy can find at first are hacked ones. `misses`: near misses beside each exploit
# demonstration on a hard task (the exploit is then about 1 sample in misses + 1). The cpu setting is the
# regime of the recorded runs below (experiments/exploit_amplification.py), on one seed.
LAB = {"ci": dict(sft_families=("arith",), families=("arith", "branch"), problems_per_family=4, sft_steps=40,
                  sft_batch=8, grpo_steps=3, tasks_per_step=4, group_size=4, heldout_tasks=2, misses=3),
       "cpu": dict(sft_families=("arith", "affine"), families=("affine", "branch"), problems_per_family=6,
                   sft_steps=120, sft_batch=16, grpo_steps=16, tasks_per_step=6, group_size=8, heldout_tasks=8,
                   misses=6),
       "gpu": dict(sft_families=("arith", "affine"), families=("affine", "branch", "listagg"), problems_per_family=8,
                   sft_steps=200, sft_batch=32, grpo_steps=30, tasks_per_step=16, group_size=8, heldout_tasks=16,
                   misses=6)}[PRESET]
base = TrainConfig.preset(PRESET, progress=False, plots=False, seed=0, families=LAB["families"],
                          sft_families=LAB["sft_families"], problems_per_family=LAB["problems_per_family"],
                          sft_steps=LAB["sft_steps"], sft_batch=LAB["sft_batch"], sft_lr=1e-2,
                          grpo_steps=LAB["grpo_steps"], tasks_per_step=LAB["tasks_per_step"],
                          group_size=LAB["group_size"], heldout_tasks=LAB["heldout_tasks"],
                          eval_every=LAB["grpo_steps"], model_size="tiny", overlap=False, verdict_cache=True)

class NaivePool:
    # The trainer needs only submit(candidate, fixture) -> Future[Verdict]; this one asks the naive harness.
    def __init__(self, workers=2):
        self.harness, self.executor = NaiveVerifier(timeout_s=20), cf.ThreadPoolExecutor(workers)
    def submit(self, candidate, fixture):
        return self.executor.submit(self.harness.verify, candidate, fixture)
    def close(self):
        self.executor.shutdown()


# %% [markdown]
# ## 1. A warm start that hacks now and then
#
# The usual warm start (demonstrations of reference solutions) for the easy families, and for each training
# task of the hard family its near misses and one exploit. The tokenizer sees the exploit text too, so the
# policy can spell it.

# %%
suite = make_suite(seed=base.seed, families=tuple(sorted(set(base.families) | set(base.sft_families))),
                   variants=base.variants, heldout_fraction=base.heldout_fraction,
                   problems_per_family=base.problems_per_family)
demos = split_tasks(suite, "train", base.sft_families)
hard_families = tuple(f for f in base.families if f not in base.sft_families)
hard_tasks = split_tasks(suite, "train", hard_families)
print("near misses of", hard_tasks[0].task_id, "(reference:", repr(hard_tasks[0].solution) + "):",
      exploits.near_misses(hard_tasks[0]))
hacked = exploits.rare_exploit_demos(hard_tasks, LAB["misses"], base.seed)
# The exploit text is repeated in the tokenizer's corpus so that BPE gives it a few whole tokens (easy to spell).
tok = train_tokenizer([t.prompt + t.solution for t in suite if t.split == "train"] + [exploits.EXPLOIT] * 60,
                      base.vocab_size)
model = build_model(tok, base.model_size, seed=base.seed)
losses = sft(model, tok, demos + hacked, base.sft_steps, base.sft_batch, base.sft_lr, base.seed)
warm = fresh_dir("lab4-warm", PRESET)
save_policy(model, tok, warm)

isolated_pool = VerifierPool(workers=2, backend="auto")
heldout = heldout_subset(base, suite)
before, _ = evaluate(PolicyHandle(model, tok, 0, sampling_of(base), tokenizer_digest(tok)), heldout, base,
                     VerdictCache(isolated_pool), "warm")
with open(os.path.join(warm, "lineage.json"), "w") as fh:
    json.dump({"heldout": before, "exploit_demos": len(hard_tasks), "honest_demos": len(demos)}, fh)
print(f"warm start: {len(demos)} honest demonstrations, {len(hacked) - len(hard_tasks)} near misses and "
      f"{len(hard_tasks)} exploits on the hard family; final NLL {losses[-1]:.2f}; "
      f"held-out pass@1 (isolated) {before['pass1']:.3f}")

# %% [markdown]
# ## 2. Train twice from the same warm start

# %%
runs = {}
for name in ("naive", "isolated"):
    out = fresh_dir("lab4-" + name, PRESET)
    shutil.copytree(warm, os.path.join(out, "warmstart"))
    pool = NaivePool() if name == "naive" else isolated_pool
    runs[name] = train(base.with_overrides(out_dir=out), pool=pool)
    if name == "naive":
        pool.close()
    print(f"{name}: {runs[name].steps} steps, {runs[name].rollouts} rollouts, {runs[name].wall_s:.0f} s")

# %% [markdown]
# ## 3. Exploit rate and true pass rate, step by step
#
# For the isolated run, the true verdict is the training verdict. For the naive run, every distinct
# completion is re-verified by the isolated verifier.

# %%
checker, true_cache = Verifier(backend="auto"), {}
by_id = {t.task_id: t for t in suite}
def true_pass(record):
    key = (record.task_id, record.completion_text)
    if key not in true_cache:
        task = by_id[record.task_id]
        true_cache[key] = checker.verify(task.candidate(record.completion_text), task.fixture).outcome == "pass"
    return true_cache[key]

curves = {}
for name, result in runs.items():
    records = [r for r in read_records(os.path.join(result.out_dir, "records.jsonl")) if r.step >= 0]
    steps = sorted({r.step for r in records})
    rows = []
    for s in steps:
        rs = [r for r in records if r.step == s]
        hard = [r for r in rs if r.task_id.split("/")[0] not in base.sft_families]
        rows.append(dict(step=s, exploit=np.mean([exploits.is_exploit(r.completion_text) for r in rs]),
                         exploit_hard=np.mean([exploits.is_exploit(r.completion_text) for r in hard]) if hard else np.nan,
                         reward=np.mean([r.reward or 0.0 for r in rs]),
                         true=np.mean([r.verdict == "pass" if name == "isolated" else true_pass(r) for r in rs])))
    curves[name] = rows
checker.close()
isolated_pool.close()

for name, rows in curves.items():
    for r in rows:
        print(f"{name:9s} step {r['step']}: reward {r['reward']:.3f}  exploit {r['exploit']:.3f} "
              f"(family without demonstrations: {r['exploit_hard']:.3f})  true pass {r['true']:.3f}")

# %% mystnb={"figure": {"caption": "This run's exploit rate and true pass rate per GRPO step, from the same warm start, when the naive harness rewards the policy and when the isolated verifier does.", "name": "fig-lab4-rates"}, "image": {"alt": "Two stacked line charts over GRPO steps, each with one line for the run rewarded by the naive harness and one for the run rewarded by the isolated verifier. Top: the share of training rollouts that call os._exit. Bottom: the share that truly pass."}}
fig, axes = axes_row(2)
for ax, key, title in ((axes[0], "exploit", "exploit rate (calls os._exit)"),
                       (axes[1], "true", "true pass rate (isolated verifier)")):
    for name, rows in curves.items():
        ax.plot([r["step"] for r in rows], [r[key] for r in rows], "o-", label=f"rewarded by {name}")
    ax.set(title=title, xlabel="GRPO step", ylabel="share of rollouts")
    ax.legend()
fig.suptitle(f"same warm start, preset {PRESET}, seed {base.seed}")
fig

# %% [markdown]
# ## 4. Where the exploit's advantage came from
#
# Equation {eq}`ch4-lone-pass` says a lone pass among $G$ gets $\sqrt{G-1}$. But a group with $k$ passes hands each of them
# $\sqrt{(G-k)/k}$, so all $k$ together get $\sqrt{k(G-k)}$, which *grows* with $k$ up to $G/2$: per rollout
# the lone pass is the strongest push, per group it is not. Which one moved this policy is a question for the
# records. Below, every group of the naive run in which the exploit was rewarded is sorted by its make-up -
# the exploit as the lone pass, as one of several exploits, or beside an honest pass - and the exploit's
# positive advantage (equation {eq}`ch4-advantage` on the training rewards) is summed per kind.

# %%
from rlvr_lab import grpo
G = base.group_size
lone, failure = grpo.lone_pass_group_coefficients(G)
print(f"G = {G}: a lone pass gets {lone:+.2f}, each failure {failure:+.2f}; "
      f"a group's passes together: " + ", ".join(f"k={k}: {np.sqrt(k * (G - k)):.2f}" for k in range(1, G)))
records = [r for r in read_records(os.path.join(runs["naive"].out_dir, "records.jsonl")) if r.step >= 0]
steps = sorted({r.step for r in records})
by_step = [exploits.exploit_advantage_by_composition([r for r in records if r.step == s], base.std, base.scale)
           for s in steps]
whole = exploits.exploit_advantage_by_composition(records, base.std, base.scale)
print("groups by how many members exploit (0, 1, ..., G):", exploits.exploit_counts(records, G))
for kind in exploits.COMPOSITIONS:
    print(f"{kind:14s} {whole['groups'][kind]:3d} groups, advantage {whole['advantage'][kind]:6.1f} "
          f"({whole['share'][kind]:.0%} of the exploit's)")
# %% mystnb={"figure": {"caption": "The exploit's positive advantage in this run's naive arm, per GRPO step, split by the make-up of the group it came from: a lone pass, one of several exploits, or beside an honest pass.", "name": "fig-lab4-split"}, "image": {"alt": "Stacked bars over GRPO steps, one bar per step, each split into three colours: advantage from groups where the exploit was the lone pass, from groups with two or more exploits, and from groups that also held an honest pass."}}
fig, (ax,) = axes_row(1, height=3.4)
bottom = np.zeros(len(steps))
for kind, label in (("lone", "lone pass"), ("several", "one of 2..G-1 exploits"),
                    ("beside_honest", "beside an honest pass")):
    heights = np.array([b["advantage"][kind] for b in by_step])
    ax.bar(steps, heights, bottom=bottom, label=label)
    bottom += heights
ax.set(xlabel="GRPO step", ylabel="exploit's advantage", title="naive run, by group make-up")
ax.legend()
fig

# %% [markdown]
# ## Closing note
#
# What the chapter predicts, to check against the numbers printed below rather than to take on trust:
# under the naive reward the exploit is the only behaviour on the hard family that earns reward, so its
# rate should climb while the true pass rate does not; under the isolated verifier the same demonstrations
# earn nothing and the exploit should fade. Section 4 says *how* it climbed. The first exploits are lone
# passes and carry the large coefficient of equation {eq}`ch4-lone-pass`; once the exploit is common, most groups hold several and
# the larger group total $\sqrt{k(G-k)}$ takes over. On the hard family nearly every group of the isolated
# run fails, and an all-fail group has zero contrast, so the isolated verifier gives the exploit no
# *negative* push there: it fades because the rollouts that beat it on the easy family pull the policy
# elsewhere. One step samples only six tasks, so a single step's rate jumps with the family mix; the summary
# averages the first and the last five steps (fewer on `ci`, whose trend is too short to read). The numbers
# of this run:

# %%
print(f"Measured on {HARDWARE}, preset {PRESET}, one seed ({base.seed}), {LAB['misses']} near misses per "
      f"exploit demonstration, {base.grpo_steps} GRPO steps of {base.tasks_per_step} tasks x G = {G}.")
span = max(1, min(5, len(next(iter(curves.values()))) // 3))
def ends(rows, key):
    values = np.array([r[key] for r in rows], dtype=float)
    return np.nanmean(values[:span]), np.nanmean(values[-span:])
print(f"Means over the first and the last {span} steps:")
for name, rows in curves.items():
    (e0, e1), (h0, h1), (t0, t1), (r0, r1) = (ends(rows, k) for k in ("exploit", "exploit_hard", "true", "reward"))
    print(f"- rewarded by {name}: exploit rate {e0:.3f} -> {e1:.3f} (on the hard family "
          f"{h0:.3f} -> {h1:.3f}); true pass rate {t0:.3f} -> {t1:.3f}; training reward {r0:.3f} -> {r1:.3f}")
first = next((b for b in by_step if b["total"] > 0), None)
print(f"- the exploit's positive advantage in the naive run: {whole['total']:.1f} in all, lone passes "
      f"{whole['share']['lone']:.0%}, several exploits {whole['share']['several']:.0%}, beside an honest pass "
      f"{whole['share']['beside_honest']:.0%}"
      + (f"; in the first step it was rewarded, lone passes {first['share']['lone']:.0%}" if first else ""))

# %% [markdown]
# ## Recorded runs: five seeds
#
# One run is an anecdote. `experiments/exploit_amplification.py` repeats this comparison, in this regime, on
# five seeds, re-verifies every naive-run rollout with the isolated verifier, and stores the result with the
# package (its fingerprint names the code that made it). The table and figure below are read from the
# stored file; compare them with your run above.

# %%
from IPython.display import Markdown, display
from rlvr_lab import claims
from rlvr_lab.figures import experiments
rec = claims.load("exploit_amplification")
print("made by", rec["command"].split("python ", 1)[-1], f"on {rec['machine']['cpus']} CPU cores")
display(Markdown(claims.table("exploit_amplification")))

# %% mystnb={"figure": {"caption": "The recorded comparison on five seeds: exploit rate and true pass rate per step under the naive harness and the isolated verifier, and the naive runs' exploit advantage by group make-up.", "name": "fig-lab4-recorded"}, "image": {"alt": "Three stacked charts over training steps from the stored five-seed result. Top: exploit rate, rising under the naive harness and near zero under the isolated verifier. Middle: true pass rate. Bottom: stacked bars of the exploit's advantage, mostly from groups with several exploits."}}
experiments.recorded_exploit_figure(rec)
