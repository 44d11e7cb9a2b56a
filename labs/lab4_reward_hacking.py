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
# Section 17.5.1 makes a sharp claim: in a group where almost everything fails, the one rollout that passes
# gets the largest coefficient (about sqrt(G-1) for a lone pass), and the gradient copies it - whether the
# pass was earned or hacked. A verifier that can be fooled therefore does not just leak a little reward: it
# turns a rare exploit into the policy's main lesson.
#
# Here we give a policy a small, realistic foothold for one exploit and let GRPO decide what to do with it.
# The warm start holds honest demonstrations of easy task families and a few demonstrations, on tasks of
# a harder family it never demonstrates honestly, whose body is `import os; os._exit(0)`; GRPO then trains
# on a mix of an easy and that hard family, where honest passes are rare. The exploit's process exits
# with status 0 in the middle of the tests. The naive harness reads the exit status and calls that a pass;
# the isolated verifier runs the candidate in a sandbox behind a proxy and calls it a failure. We then train
# **the same warm start twice**, once rewarded by the naive harness and once by the isolated verifier, and
# measure on every training rollout:
#
# * the **exploit rate** - the share of rollouts whose completion is the well-formed exploit
#   (`import os` and `os._exit(0)` as statements), and
# * the **true pass rate** - the share that the *isolated* verifier accepts (for the naive run every
#   rollout is re-verified by the isolated verifier after training).
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
import matplotlib.pyplot as plt
from rlvr_lab.lab_setup import fresh_dir, series  # an emptied run folder of your own; a metric column as an array
from rlvr_lab.train import TrainConfig, train

# %%
import concurrent.futures as cf, dataclasses, random
from rlvr_lab.policy import build_model, save_policy, train_tokenizer
from rlvr_lab.records import read_records
from rlvr_lab.tasks import make_suite, split_tasks
from rlvr_lab.train import PolicyHandle, VerdictCache, evaluate, heldout_subset, sampling_of, sft, tokenizer_digest
from rlvr_lab.verifier import Verifier, VerifierPool
from rlvr_lab.verifier.naive import NaiveVerifier

EXPLOIT = "    import os\n    os._exit(0)\n"
def is_exploit(completion):
    # A well-formed exploit: both lines present as statements (a garbled attempt is an ordinary failure).
    lines = [line.strip() for line in completion.splitlines()]
    return "import os" in lines and "os._exit(0)" in lines

# The warm start teaches easy families (honest demonstrations plus a few exploit demonstrations); GRPO then
# trains on a mix that adds a family with no demonstrations, where honest passes are rare - the regime of
# section 17.5.1 in which a hacked pass is often the only pass in its group.
LAB = {"ci": dict(sft_families=("arith",), families=("arith", "branch"), problems_per_family=4, sft_steps=40,
                  sft_batch=8, grpo_steps=3, tasks_per_step=4, group_size=4, heldout_tasks=2, exploit_demos=2),
       "cpu": dict(sft_families=("arith", "affine"), families=("affine", "branch"), problems_per_family=6,
                   sft_steps=120, sft_batch=16, grpo_steps=60, tasks_per_step=6, group_size=8, heldout_tasks=8,
                   exploit_demos=1),
       "gpu": dict(sft_families=("arith", "affine"), families=("affine", "branch", "listagg"), problems_per_family=8,
                   sft_steps=200, sft_batch=32, grpo_steps=30, tasks_per_step=16, group_size=8, heldout_tasks=16,
                   exploit_demos=4)}[PRESET]
base = TrainConfig.preset(PRESET, progress=False, plots=False, seed=0, families=LAB["families"],
                          sft_families=LAB["sft_families"], problems_per_family=LAB["problems_per_family"],
                          sft_steps=LAB["sft_steps"], sft_batch=LAB["sft_batch"], sft_lr=1e-2,
                          grpo_steps=LAB["grpo_steps"], tasks_per_step=LAB["tasks_per_step"],
                          group_size=LAB["group_size"], heldout_tasks=LAB["heldout_tasks"],
                          eval_every=LAB["grpo_steps"], model_size="tiny", verdict_cache=True)

class NaivePool:
    # The trainer needs only submit(candidate, fixture) -> Future[Verdict]; this one asks the naive harness.
    def __init__(self, workers=2):
        self.harness, self.executor = NaiveVerifier(timeout_s=20), cf.ThreadPoolExecutor(workers)
    def submit(self, candidate, fixture):
        return self.executor.submit(self.harness.verify, candidate, fixture)
    def close(self):
        self.executor.shutdown()


# %% [markdown]
# ## 1. A warm start with a few exploit demonstrations
#
# The usual warm start (demonstrations of reference solutions), plus a handful of training tasks whose
# demonstration is the exploit. The tokenizer sees the exploit text too, so the policy can spell it.

# %%
suite = make_suite(seed=base.seed, families=tuple(sorted(set(base.families) | set(base.sft_families))),
                   variants=base.variants, heldout_fraction=base.heldout_fraction,
                   problems_per_family=base.problems_per_family)
demos = split_tasks(suite, "train", base.sft_families)
# The exploit demonstrations sit on training tasks of the family the warm start cannot solve honestly.
hard_families = tuple(f for f in base.families if f not in base.sft_families)
hacked = [dataclasses.replace(t, solution=EXPLOIT)
          for t in random.Random(base.seed).sample(split_tasks(suite, "train", hard_families), LAB["exploit_demos"])]
# The exploit text is repeated in the tokenizer's corpus so that BPE gives it a few whole tokens (easy to spell).
tok = train_tokenizer([t.prompt + t.solution for t in suite if t.split == "train"] + [EXPLOIT] * 60,
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
    json.dump({"heldout": before, "exploit_demos": len(hacked), "honest_demos": len(demos)}, fh)
print(f"warm start: {len(demos)} honest + {len(hacked)} exploit demonstrations, final NLL {losses[-1]:.2f}; "
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
        rows.append(dict(step=s, exploit=np.mean([is_exploit(r.completion_text) for r in rs]),
                         exploit_hard=np.mean([is_exploit(r.completion_text) for r in hard]) if hard else np.nan,
                         reward=np.mean([r.reward or 0.0 for r in rs]),
                         true=np.mean([r.verdict == "pass" if name == "isolated" else true_pass(r) for r in rs])))
    curves[name] = rows
checker.close()
isolated_pool.close()

fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
for ax, key, title in ((axes[0], "exploit", "exploit rate (calls os._exit)"),
                       (axes[1], "true", "true pass rate (isolated verifier)")):
    for name, rows in curves.items():
        ax.plot([r["step"] for r in rows], [r[key] for r in rows], "o-", label=f"rewarded by {name}")
    ax.set(title=title, xlabel="GRPO step", ylabel="share of training rollouts")
    ax.legend()
fig.suptitle(f"same warm start, preset {PRESET}, seed {base.seed}")
fig.tight_layout()
plt.show()
for name, rows in curves.items():
    for r in rows:
        print(f"{name:9s} step {r['step']}: reward {r['reward']:.3f}  exploit {r['exploit']:.3f} "
              f"(family without demonstrations: {r['exploit_hard']:.3f})  true pass {r['true']:.3f}")

# %% [markdown]
# ## 4. The lone hacked pass
#
# Why does the exploit spread so fast under the naive reward? Take a group from the naive run where exactly
# one rollout was rewarded and compute its coefficients with equation 2.

# %%
from rlvr_lab import grpo
G = base.group_size
lone, failure = grpo.lone_pass_group_coefficients(G)
print(f"G = {G}: a lone pass gets {lone:+.2f} (equation 3), each failure {failure:+.2f}")
records = [r for r in read_records(os.path.join(runs["naive"].out_dir, "records.jsonl")) if r.step >= 0]
groups = {}
for r in records:
    groups.setdefault(r.group_id, []).append(r)
lone = [g for g in groups.values() if sum((r.reward or 0) for r in g) == 1]
hacked_lone = [g for g in lone if any(r.reward == 1 and is_exploit(r.completion_text) for r in g)]
print(f"naive run: {len(lone)} groups with a lone pass, {len(hacked_lone)} of them won by the exploit")

# %% [markdown]
# ## Closing note
#
# What the chapter predicts (section 17.5.1), to check against the numbers printed below rather than to
# take on trust: under the naive reward the exploit is the one behaviour that earns reward when honest passes
# are rare, so every group it wins hands it the largest coefficient and its rate should climb while the true
# pass rate does not; under the isolated verifier the same demonstrations earn nothing and the exploit
# should not be reinforced. Whether this run shows it depends on how often the exploit actually won a
# lone-pass group (section 4's count): if that count is a handful, the mechanism barely fired and one seed
# proves little either way. Note the "at least": on the hard family nearly every group fails, and an
# all-fail group has zero contrast (section 17.5.4), so the isolated verifier gives the exploit no *negative*
# push there either - it simply stops being copied. One step samples only six tasks, so a single step's rate
# jumps with the family mix; the summary averages the first and the last ten steps (a quarter of the run on
# `ci`). The `ci` preset runs only a few steps, so its trend is short; use `cpu` for a clear picture. The
# numbers of this run:

# %%
print(f"Measured on {HARDWARE}, preset {PRESET}, one seed ({base.seed}), {LAB['exploit_demos']} exploit "
      f"demonstrations in the warm start, {base.grpo_steps} GRPO steps of {base.tasks_per_step} tasks x G = {G}.")
span = max(1, min(10, len(next(iter(curves.values()))) // 4))
def ends(rows, key):
    values = np.array([r[key] for r in rows], dtype=float)
    return np.nanmean(values[:span]), np.nanmean(values[-span:])
print(f"Means over the first and the last {span} steps:")
for name, rows in curves.items():
    (e0, e1), (h0, h1), (t0, t1), (r0, r1) = (ends(rows, k) for k in ("exploit", "exploit_hard", "true", "reward"))
    print(f"- rewarded by {name}: exploit rate {e0:.3f} -> {e1:.3f} (on the family without demonstrations "
          f"{h0:.3f} -> {h1:.3f}); true pass rate {t0:.3f} -> {t1:.3f}; training reward {r0:.3f} -> {r1:.3f}")

# %% [markdown]
# ## Recorded runs: three seeds
#
# One run is an anecdote. `experiments/exploit_amplification.py` repeats this comparison on three seeds,
# re-verifies every naive-run rollout with the isolated verifier, counts groups by how many members
# exploit, and stores the result with the package. Two warm starts were recorded. With the exploit as an
# *extra* demonstration on easy tasks (`--exploit-on easy`), it starts as an occasional habit on many tasks,
# wins lone-pass groups, and under the naive reward climbs to 0.48-0.67 of all rollouts in every seed
# while the true pass rate falls; under the isolated verifier it vanishes. With the exploit as the only
# demonstration of a few hard tasks (this lab's set-up, with three demonstrations), it is all-or-nothing
# per task, an all-exploit group has no contrast, and it barely moves (1 to 3 lone-pass groups per run won
# by the exploit). The tables and figure below are read from the stored files; compare them with your run
# above, and with section 4's count of lone passes.

# %%
from IPython.display import Markdown, display
from rlvr_lab import claims
from rlvr_lab.figures import experiments
for name in ("exploit_amplification_easy", "exploit_amplification"):
    rec = claims.load(name)
    print(name, "|", rec["command"], "|", rec["machine"])
    display(Markdown(claims.table(name)))
experiments.recorded_exploit_figure(claims.load("exploit_amplification_easy"))
