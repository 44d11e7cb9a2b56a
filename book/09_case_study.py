# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.7
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
# # 9. Case study: one repair group through the whole loop
#
# (ch9-goals)=
# ## Goals
#
# This chapter follows a single GRPO group, the connection-pool repair with rewards $[0, 1, 0]$, through
# every stage of the loop, using the real `rlvr_lab` objects at each step. By the end you can:
#
# - say which question each stage answers, and why no other stage can answer it;
# - check that the lone pass is evidence: an isolated, repeated verdict on a fresh fixture;
# - check that the update can be computed on what the policy saw: records, versions, and the complete-group
#   rule;
# - compute the coefficients and the per-token weights the group produces, then take one real GRPO step and
#   see the probabilities move;
# - follow a group that the course's own repair agent sampled through the same stages, from its stored
#   records to the update;
# - distinguish promoting a checkpoint to the rollout fleet from releasing it.

# %% [markdown]
# ## The group
#
# Three fresh trials, `rl_trial_01` to `rl_trial_03`, attempt task `pool_repair_01` on fixture
# `pool_fixture_v1`. They were sampled from the supervised checkpoint `trained_policy_v1`, and each ends in a
# verdict under the fixture's acceptance suite, `repair_accept_v3` (the cells below load it from the manifest:
# it is the twice-hardened successor of `repair_accept_v1`: a first red team got four wrong repairs through
# v1, a second got a repair that patched the standard library through v2, as {doc}`06_verifier_isolation`
# tells). The bug is a lost wake-up: a thread waiting in
# `acquire` is not notified when another thread releases a connection, so it stalls until its timeout although
# a connection is free.
#
# The course's tiny model cannot write a concurrency fix, so the three candidates below are the fixture's own
# reference patches: one correct repair, and two plausible wrong ones that a policy could well produce. They
# play the roles of the three rollouts. Everything that happens to them from here on is what the trainer
# does to sampled rollouts.

# %%
import dataclasses, difflib, json, os, tempfile
import numpy as np
import torch
from rlvr_lab.verifier import Verifier
from rlvr_lab.verifier.fixtures import load_exploit, load_fixture, load_reference

fixture = load_fixture("pool_repair_01")
trials = {
    "rl_trial_01": load_reference("pool_repair_01", "bad_unlocked_notify"),
    "rl_trial_02": load_reference("pool_repair_01", "good"),
    "rl_trial_03": load_reference("pool_repair_01", "bad_racy_snapshot"),
}
base = fixture.files["pool_fixture/pool.py"]
for trial, cand in trials.items():
    new = cand.files["pool_fixture/pool.py"]
    diff = [
        l
        for l in difflib.unified_diff(
            base.splitlines(), new.splitlines(), lineterm="", n=0
        )
        if l[:1] in "+-" and not l.startswith(("+++", "---"))
    ]
    print(f"{trial}: {len(diff)} changed line(s)")
    for line in diff[:6]:
        print("   ", line)

# %% [markdown]
# (ch9-stage-verdict)=
# ## Stage 1 · Is the lone pass a pass?
#
# A $[0, 1, 0]$ group on a hard bug is exactly what tampering looks like, so the middle verdict counts only if
# it came from the assessment side of the two-workspace design ({doc}`06_verifier_isolation`). Each patch is
# admitted only as a change to `pool_fixture/*.py`, applied to a fresh copy of the fixture, and graded by a
# trusted runner the candidate cannot reach. The fixture is timing-sensitive, so its manifest declares $K$ trials
# under the all-pass rule with stop-on-first-rejection; the verifier reads $K$ from the fixture.

# %%
verifier = Verifier(backend="auto")
print(f"K = {fixture.trials} trials per verification, stopping at the first rejection")
verdicts = {trial: verifier.verify(cand, fixture) for trial, cand in trials.items()}
print(
    "\n".join(
        f"{trial}: {v.outcome:5s} after {len(v.trials)} trial(s); {v.stop_reason}; fixture "
        f"{v.fixture_version}, checker {v.checker_version}, backend {v.backend}"
        for trial, v in verdicts.items()
    )
)
print("rewards:", [verdicts[t].reward for t in trials])

# %% [markdown]
# With the chapter's hypothetical rates, a wrong patch that passes one trial with probability 0.20 is accepted
# by three trials with probability 0.8 %, and a right patch with per-trial rate 0.98 is rejected 5.88 % of the
# time, by equation {eq}`ch6-allpass`. Had a trial's verifier crashed or its container been preempted, the verdict
# would be `pending` or `unknown` and the reward `None`: coercing it to 0 would punish the policy for the
# cluster and shift the group's baseline ({ref}`ch5-censored`).
#
# What would a naive harness have said about a tampered middle rollout? The gallery's report-rewriting
# `conftest.py` answers:

# %%
from rlvr_lab.verifier.naive import NaiveVerifier

tampered = load_exploit("conftest_report_patch")
print(
    f"conftest_report_patch: naive -> {NaiveVerifier().verify(tampered, fixture).outcome}, "
    f"isolated -> {verifier.verify(tampered, fixture, trials=1).outcome}"
)

# %% [markdown]
# (ch9-stage-record)=
# ## Stage 2 · Can the update be computed on what the policy saw?
#
# The update needs, for each rollout, the delivered prefix, the sampled token ids, the behaviour log-probs
# under the recorded sampling configuration, and the weights version ({doc}`05_multi_turn`). We build those
# records with the course's policy and tokenizer. The prompt is the fixture as the policy sees it (the task
# description and the editable file, never the hidden tests); the completion is the candidate's new file.
# Because the tiny model did not actually write these patches, we *score* each one under the behaviour
# policy to obtain the log-probabilities a sampler would have recorded; from here on the arithmetic is exactly
# the trainer's.

# %%
from rlvr_lab.policy import (
    SamplingConfig,
    build_model,
    completion_logprobs,
    train_tokenizer,
)
from rlvr_lab.records import Invocation, RolloutRecord, close_group
from rlvr_lab.tasks import fixture_task
from rlvr_lab.train import prompt_ids, tokenizer_digest

task = fixture_task(fixture, split="train")
texts = {t: c.files["pool_fixture/pool.py"] for t, c in trials.items()}
tok = train_tokenizer([task.prompt] + list(texts.values()), vocab_size=1024)
policy = build_model(
    tok, "tiny", seed=0, max_positions=4096
).eval()  # plays trained_policy_v1
sampling = SamplingConfig(temperature=1.0, max_new_tokens=2048)
prefix = prompt_ids(tok, task.prompt)

completions = {
    t: tok(text, add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
    for t, text in texts.items()
}
seqs = [prefix + c for c in completions.values()]
masks = [[0] * len(prefix) + [1] * len(c) for c in completions.values()]
with torch.no_grad():  # one batched pass scores all three rollouts
    lp, m = completion_logprobs(policy, seqs, masks, sampling, tok.pad_token_id)

records = []
for k, (trial, completion) in enumerate(completions.items()):
    behaviour = lp[k][m[k] > 0].tolist()
    v = verdicts[trial]
    records.append(
        RolloutRecord(
            rollout_id=trial,
            group_id="pool_repair_01-g0",
            task_id=task.task_id,
            problem_id=task.problem_id,
            split=task.split,
            step=0,
            fixture=fixture.name,
            fixture_version=fixture.version,
            sampling=sampling.to_dict(),
            tokenizer_digest=tokenizer_digest(tok),
            invocations=[
                Invocation(
                    0,
                    prefix,
                    completion,
                    behaviour,
                    policy_version=0,
                    stop_reason="eos",
                )
            ],
            completion_text=texts[trial],
            verdict=v.outcome,
            reward=v.reward,
            evidence=v.to_dict(),
            stop_reason="eos",
            prompt_tokens=len(prefix),
            completion_tokens=len(completion),
            policy_version=0,
        )
    )
for r in records:
    print(
        f"{r.rollout_id}: {r.prompt_tokens} prompt tokens, {r.completion_tokens} policy tokens, "
        f"verdict {r.verdict}, version {r.policy_version}"
    )

# %% [markdown]
# Before admission the trainer checks each record's **version lag** against its bound. For a steady trainer
# the lag is the number of training steps that finished while the rollout was in flight,
# $\Delta\mathrm{ver} = \lfloor \tau_{\mathrm{admit}} / T_{\mathrm{step}} \rfloor$, equation {eq}`ch8-lag`. Say the
# trainer steps every 40 s, the bound is one version, and the three trials took 25 s, 38 s and 52 s from
# first prompt token to admission:

# %%
from rlvr_lab.cycle_time import admit, version_lag

ages = {"rl_trial_01": 25.0, "rl_trial_02": 38.0, "rl_trial_03": 52.0}
for trial, age in ages.items():
    print(
        f"{trial}: lag {version_lag(age, 40.0)} version(s), admitted: {admit(age, 40.0, max_lag=1)}"
    )
print(
    "complete-group rule:",
    close_group(records, planned=3, trainer_version=0, max_lag=1),
)

# %% [markdown]
# All three rewards are resolved and all three records are within the bound, so the **planned** group is
# eligible. Under the declared complete-group rule an unresolved or stale member would have kept the whole
# group out; dropping that member and re-normalising over the other two would be a different objective that
# needs its own declaration and its own selection analysis. The widget shows how the admitted share reacts
# to the staleness bound and the step time, for our three trials plus a tenth of slow rollouts that take 95 s.

# %%
from rlvr_lab.figures.widgets import staleness_explorer

staleness_explorer(
    step_s=40.0, max_lag=1, ages=(25.0, 38.0, 52.0, 95.0), weights=(0.3, 0.3, 0.3, 0.1)
)

# %% [markdown]
# (ch9-stage-coefficients)=
# ## Stage 3 · How hard does the evidence push?
#
# Only now does GRPO {cite}`shao2024deepseekmath` compute coefficients. The group $[0, 1, 0]$ gives $+1.414214$ to the pass and
# $-0.707107$ to each failure, by equation {eq}`ch4-advantage`. Under per-rollout averaging every token of rollout
# $i$ carries $\hat A_i/|o_i|$, equation {eq}`ch7-weight`, so the *length* of each failure decides how hard its
# tokens are pushed down:

# %%
from rlvr_lab.grpo import group_advantages, per_token_weights

adv = group_advantages([r.reward for r in records])
lengths = [r.completion_tokens for r in records]
w_seq = per_token_weights(adv, lengths, norm="sequence")
w_const = per_token_weights(adv, lengths, norm="constant")
for r, a, ws, wc in zip(records, adv, w_seq, w_const):
    print(
        f"{r.rollout_id}: A = {a:+.6f}, |o| = {r.completion_tokens}, per-token weight "
        f"{ws:+.2e} (per-rollout) / {wc:+.2e} (constant)"
    )

# %% [markdown]
# The reward scores only the outcome, so every token of `rl_trial_02` gets the same coefficient: the one
# line that adds the missing notification and the hundred unchanged lines around it are reinforced alike.
# Only many such groups, where the notification line is the consistent difference between passes and
# failures, separate them statistically. The frozen reference policy stays a separate object from the
# behaviour policy and contributes only the KL penalty.

# %% [markdown]
# (ch9-stage-update)=
# ## Stage 4 · The update
#
# The trainer's update has two parts. `rlvr_lab.train.make_batch` flattens the admitted records into a
# `GRPOBatch`: token ids, the recorded behaviour log-probs, the frozen reference's log-probs and each
# rollout's group advantage {eq}`ch4-advantage`. `rlvr_lab.train.grpo_update` takes the `Learner` (weights, optimizer,
# frozen reference copy) and that batch: it recomputes the log-probs under the current weights on the
# recorded prefixes and minimises the negative GRPO objective {eq}`ch4-objective` against the behaviour log-probs. The
# configuration is the record of the objective: clip widths, normalisation, dispersion convention and KL
# weight travel with the update.

# %%
import copy
from rlvr_lab.train import Learner, TrainConfig
from rlvr_lab.train import grpo_update, make_batch

config = TrainConfig.preset(
    "ci",
    group_size=3,
    passes=1,
    lr=1e-3,
    eps_low=0.2,
    eps_high=0.28,
    beta=0.02,
    norm="sequence",
    std="population",
    max_new_tokens=2048,
)
reference = copy.deepcopy(policy).eval()
optimizer = torch.optim.AdamW(policy.parameters(), lr=config.lr, weight_decay=0.0)


def sequence_logp(model):
    # total log-probability (nats) of each rollout's policy tokens on its recorded prefix
    with torch.no_grad():
        lp, m = completion_logprobs(model, seqs, masks, sampling, tok.pad_token_id)
    return (lp * m).sum(dim=1).numpy()


before = sequence_logp(policy)
learner = Learner(policy, tok, reference, optimizer)
batch = make_batch(learner, records, config, sampling)
diags = grpo_update(learner, batch, config, sampling)
after = sequence_logp(policy)
print(
    {
        k: round(diags[k], 6)
        for k in ("loss", "replay_max_dev", "kl_mean", "entropy")
        if k in diags
    }
)
for r, b, a in zip(records, before, after):
    print(
        f"{r.rollout_id} ({r.verdict}): log-prob of the whole completion {b:9.2f} -> {a:9.2f} nats"
    )
gap_before, gap_after = before[1] - before[[0, 2]], after[1] - after[[0, 2]]
for other, gb, ga in zip(["rl_trial_01", "rl_trial_03"], gap_before, gap_after):
    print(f"log p(pass) - log p({other}): {gb:8.3f} -> {ga:8.3f} nats ({ga - gb:+.3f})")

# %% [markdown]
# `replay_max_dev` is the replay check of {doc}`05_multi_turn`: before the step the recomputed log-probs
# equal the recorded ones, so every ratio starts at 1 and the clip is inactive.
#
# Look at the last line first: the log-likelihood ratio of the pass against each failure grows, so after one
# step the policy prefers the repair to both wrong patches by more than before. That is the whole intent of
# the update. The absolute log-probabilities tell a subtler story. The three files share almost every token,
# and on a shared token the three pushes nearly cancel, but not exactly: with per-rollout normalisation the
# weights are $\hat A_i/|o_i|$, and because the racy failure is longer its negative weight is smaller, so the
# shared tokens receive a small net *positive* push. AdamW's first step scales every parameter's move to
# roughly the learning rate however small its gradient, so even that residue can lift all three completions.
# A failure becoming more likely in absolute terms is therefore not a bug in the loop; it is equation
# {eq}`ch7-weight` at work on near-identical rollouts, and it is why outcome rewards need many groups to
# isolate the one line that matters.

# %% mystnb={"figure": {"caption": "One repair group through the loop: the verdict of each trial (grey where a trial was not run), the group coefficients of the rollouts, and the change of the log-likelihood gap between the pass and two failures after one GRPO step.", "name": "fig-ch9-case-study"}, "image": {"alt": "Three stacked panels. Top: a grid of rollouts against trials coloured green for a pass and red for a failure. Middle: one bar per rollout, positive for the passing one and negative for the failures. Bottom: two bars for the change of the log-probability gap after one step."}} tags=["hide-input"]
from rlvr_lab.figures import chapter

chapter.case_study_figure(
    names=list(trials),
    trial_outcomes=[[t.outcome for t in verdicts[name].trials] for name in trials],
    advantages=adv,
    rewards_=[r.reward for r in records],
    log_gap_growth=gap_after - gap_before,
)

# %% [markdown]
# (ch9-real-group)=
# ## The same stages on a group the course's agent sampled
#
# The three trials above are reference patches, scored as if the policy had written them, because the
# course's model cannot write a concurrency fix. It can repair the small modules of the repair environment
# ({doc}`05_multi_turn`), so the stages can also run on a group it really sampled.
# `experiments/repair_group.py` warm-starts the model on scripted repairs exactly as `rlvr-lab train --env
# repair` does (seed 0). It then draws training tasks in a seeded order and samples a group of G = 8
# episodes for each, until a group holds both a pass and a failure. That group goes through the trainer's own
# admission and update. The stored result holds the records whole, with the fingerprint of the code that
# made them; the cells below read it and recompute what can be recomputed without the weights.

# %%
from rlvr_lab import claims
from rlvr_lab.records import RolloutRecord, flatten

real = claims.load_measurement("repair_group")
group = [RolloutRecord.from_dict(r) for r in real["records"]]
print(
    f"task {real['task']}, bug kind {real['bug_kind']} (a kind the warm start demonstrated: "
    f"{real['demonstrated_kind']}); groups drawn until one was mixed: {len(real['draws'])}"
)
for k, (r, actions) in enumerate(zip(group, real["actions"])):
    turns = " | ".join(a.replace("\n", " / ").strip() for a in actions)
    print(f"member {k} ({r.verdict}, {len(r.invocations)} turns): {turns}")

# %% [markdown]
# Five members run the public tests, replace line 6 with the correct comparison and submit. The other three
# write malformed actions (`LINE RUN`, an unknown tool, a line number the module does not have), and one of
# them breaks the module's indentation with its only edit that applied. Stage 1 asks whether each verdict is
# evidence: it came from the hidden tests in a fresh sandbox, and it says why.

# %%
for k, r in enumerate(group):
    e = r.evidence
    why = e["trials"][-1]["reason"] if e["trials"] else e["stop_reason"]
    detail = e["trials"][-1]["detail"].split("::")[-1] if e["trials"] else ""
    print(
        f"member {k}: {r.verdict} (reward {r.reward}) by {e['checker_version']} on {e['backend']}: "
        f"{why} {detail[:60]}"
    )

# %% [markdown]
# Stage 2 asks whether the update can be computed on what the policy saw. Every member reported, every verdict
# is resolved and every record was sampled by the version being updated, so the complete-group rule admits
# the group. `flatten` checks each record's prefixes: each call saw exactly the earlier prefix, its own
# tokens and the observation. Only the actions are scored; the task and the test output are context.

# %%
print(
    "complete-group rule:",
    close_group(group, planned=real["group_size"], trainer_version=0, max_lag=real["config"]["max_lag"]),
)
for k, r in enumerate(group):
    ids, mask, _ = flatten(r)
    print(
        f"member {k}: {len(ids)} tokens in the sequence, {sum(mask)} scored action tokens, "
        f"{len(ids) - sum(mask)} context tokens"
    )
print(f"replay check before the update: {real['update']['replay_max_dev']:.1e} nats")

# %% [markdown]
# Stage 3 computes the coefficients. Five passes in eight give $+0.775$ to each pass and $-1.291$ to each
# failure, by equation {eq}`ch4-advantage`. The repair run divides every action token by one constant, the
# episode's whole token budget (equation {eq}`ch7-weight` with constant normalisation), so a token's weight
# does not depend on how long its episode was.

# %%
adv = group_advantages([r.reward for r in group])
assert np.allclose(adv, real["advantages"])  # the coefficients the update used
w = per_token_weights(adv, [r.completion_tokens for r in group], norm="constant", constant=real["norm_constant"])
for k, (r, a, wk) in enumerate(zip(group, adv, w)):
    print(f"member {k} ({r.verdict}): A = {a:+.3f}, {r.completion_tokens} action tokens, weight per token {wk:+.4f}")

# %% [markdown]
# Stage 4 is the update itself: one `grpo_update` with the preset's two passes over this group, then every
# member's action tokens scored again.

# %%
lp_before, lp_after = np.array(real["action_logprob_before"]), np.array(real["action_logprob_after"])
for k, r in enumerate(group):
    print(f"member {k} ({r.verdict}): log-prob of its actions {lp_before[k]:7.2f} -> {lp_after[k]:7.2f} nats")
passed = np.array([r.verdict == "pass" for r in group])
gap_before = lp_before[passed].mean() - lp_before[~passed]
gap_after = lp_after[passed].mean() - lp_after[~passed]
print("log p(pass) - log p(failure), per failure:", np.round(gap_before, 2), "->", np.round(gap_after, 2))
u = real["update"]
print(f"second pass: KL to the reference {u['kl_mean']:.1f} nats per token, {u['clip_low_fraction']:.0%} of tokens clipped low")

# %% [markdown]
# Every member became less likely, the passes included: their actions fell from $-0.37$ to $-1.32$ nats. What
# the update did grow is the gap: the passing repair gained 8.6 to 21.0 nats on each failure. This is
# the pattern of the pool group above, on a policy that sampled its own group. A single group at the
# trainer's learning rate is also a large step for a small model: after one AdamW step the KL to the reference
# is 13.6 nats per token, and the second pass clips a tenth of the tokens at the lower bound, the failures'
# ratios having already fallen below $1 - \epsilon$. The trainer's update takes sixteen groups at a time;
# one step on one group is a thing to look at, not a way to train.

# %% [markdown]
# Twenty steps are not a way to train this agent either, not yet. `experiments/repair_learning.py` warm-starts
# it three times (seeds 0, 1 and 2) and gives three training tasks 20 of the trainer's own steps, 16 episodes
# per task per step. The trained tasks end where they began: their repair rate changes by +0.010 on average,
# with a 95 % interval of -0.093 to +0.114 over the seeds. Their renamed copies, the same modules under another
# function name with other tests, lose 0.260 (-0.329 to -0.192). Raising the learning rate over the first eight
# steps avoids the first step's jump, a KL of up to 2.43 nats per token, but gains nothing either (+0.000 on the
# trained tasks). What does move them is to stop pushing on the failures. With the same warmup and every
# negative advantage set to zero, so that the update only raises the passes, the trained tasks gain +0.108
# (-0.015 to +0.230) and the renamed copies +0.104 (+0.036 to +0.173). The group above suggests why: pushing
# the failures down made every member less likely, the passes too, and a failure is usually a garbled copy of
# the very line a pass writes correctly, so the push lands on tokens the two share. The probe's copies were in the warm start's
# demonstrations, though. On tasks the agent never saw, the trainer's own figure (below) is the one to read.
# The per-seed table is in `experiments/RESULTS.md`.

# %% [markdown]
# The trainer holds out two kinds of task. Held-out *problems* are template and bug pairs it never sees;
# held-out *tasks* are the third variant of every training problem, left out of both the demonstrations and
# the training. `experiments/repair_heldout.py` runs `rlvr-lab train --env repair --steps 20` for seeds 0, 1
# and 2, each in under eight minutes, once with the advantages of equation {eq}`ch4-advantage` and once
# reinforcing the passes only. The warm start repairs 8 to 21 % of the held-out tasks. After training, the
# change is -0.042 (95 % interval -0.112 to +0.028) with the advantages of equation {eq}`ch4-advantage` and
# -0.019 (-0.261 to +0.223) with the passes only; the held-out problems stay at zero in every run. What helped three tasks does not yet carry over
# when twenty steps are spread across thirty: each training task sees 75 to 100 episodes. This is the honest
# state of the chapter's agent on a laptop: its records, verdicts and updates are real, and its held-out
# repair rate has not yet risen.
#
# Where does the gain stop? `experiments/repair_demo_split.py` repeats that run with the warm start shown
# only the first variant of each problem, so the second variant is trained on but never demonstrated: a held-out
# task in every way but the training. Over seeds 0, 1 and 2, reinforcing the passes only, the undemonstrated
# variants gain +0.359 (95 % interval +0.198 to +0.520), the demonstrated ones +0.072 (+0.005 to +0.140), and
# the held-out variant +0.019 (-0.141 to +0.178). GRPO over whole episodes does teach the agent repairs it was
# never shown; in twenty steps the course's model does not carry them to a function name and tests it never
# trained on.
#
# Why not? Each template has three names of its own, so the model can tie a repair to the function's name
# rather than to the body it must fix. `experiments/repair_many_names.py` takes that away. Every training
# problem gets eight variants named from one pool of generic names shared by all templates (`find_value`,
# `get_total` and so on) and two held-out variants named from a disjoint pool. The run reinforces the passes
# only, takes forty steps and allows 32 tokens per action, enough for the longest scripted repair. Over seeds
# 0, 1 and 2 the warm start already repairs 28 to 44 % of the held-out names, and the held-out change now
# follows the trained one seed by seed: trained tasks +0.121 (95 % interval -0.306 to +0.547), held-out names
# +0.057 (-0.154 to +0.268). The names were the wall. What limits the figure now is how much GRPO itself gains
# in forty steps: on seed 2 training stalls and both sets fall. The held-out problems stay at zero. The trainer
# still uses the three names per template, so the figure above remains its own.
#
# Can GRPO gain more per step? A sharp policy returns most groups all passed or all failed, and such a group
# gives every member zero advantage (equation {eq}`ch4-advantage`): the update rests on the few groups with
# contrast.
# `experiments/repair_dynamic.py` repeats the many-names run from the same warm starts with DAPO's dynamic
# sampling: a step draws up to three more rounds of fresh training tasks until sixteen groups have contrast, and
# updates on those only. On average a step sampled 32 to 39 groups to find 12 to 15 with contrast, and forty
# steps took 449 to 573 s of GRPO per seed. Over seeds 0, 1 and 2 the held-out names gain +0.081 (95 % interval
# +0.009 to +0.153) and the trained tasks +0.149 (-0.100 to +0.398). Set seed by seed against the run without
# it, dynamic sampling adds +0.024 (-0.115 to +0.163) on the held-out names: it lifted the stalled seed 2 by
# +0.087 and left the other two about where they were, so three seeds do not show that it is the cause. Eight
# points is short of the ten the course aims for, and the held-out problems still stay at zero.

# %% [markdown]
# (ch9-stage-release)=
# ## Stage 5 · Lineage, promotion and release
#
# An update over eligible groups produces a candidate checkpoint, call it `rl_policy_v1`. Its **lineage** binds
# the weights and the sampling configuration to the records, the fixture and the verifier versions that
# produced them, so that any later question (which data, which grader, which objective?) has an answer.

# %%
from transformers.utils import logging as hf_logging
from rlvr_lab.records import write_records
from rlvr_lab.train import read_lineage, save_checkpoint

hf_logging.disable_progress_bar()

out = tempfile.mkdtemp(prefix="rl_policy_v1-")
records_path, metrics_path = os.path.join(out, "records.jsonl"), os.path.join(
    out, "metrics.jsonl"
)
write_records(records_path, records)
lineage = {
    "name": "rl_policy_v1",
    "parent": "trained_policy_v1",
    "fixture": fixture.version,
    "checker": fixture.checker_version,
    "verifier_backend": verdicts["rl_trial_02"].backend,
    "objective": {
        k: getattr(config, k)
        for k in ("group_size", "eps_low", "eps_high", "beta", "norm", "std")
    },
}
path = save_checkpoint(
    out,
    0,
    policy,
    tok,
    optimizer,
    torch.Generator().manual_seed(0),
    version=1,
    records_path=records_path,
    metrics_path=metrics_path,
    lineage=lineage,
)
saved = read_lineage(path)
print(
    json.dumps(
        {
            k: saved[k]
            for k in (
                "name",
                "parent",
                "policy_version",
                "fixture",
                "checker",
                "records",
                "objective",
            )
        },
        indent=1,
    )
)

# %% [markdown]
# Two decisions can follow, and they are not the same decision.
#
# **Promotion to the rollout fleet** is an internal training decision: the controller may let `rl_policy_v1`
# collect the next batch once it passes cheap collection gates (template compatibility, tool-call syntax,
# entropy bounds against collapse, memory), and every episode it samples records the promoted artefact's
# digest and version.
#
# **Release to users** needs independent evidence. A higher training reward on a known fixture can coexist with
# regressions on failure modes nobody sampled, and higher pass@1 can coexist with unchanged pass@$k$ at large
# $k$ ({doc}`07_training_pathologies`). The release case rests on held-out recovery fixtures measured three
# ways: pass@1, pass@$k$ at large $k$, and pass$^k$, the chance that $k$ independent runs *all* pass, which is
# what a user who relies on the agent repeatedly experiences. Both are estimated without bias from $n \ge k$
# samples with $c$ passes: pass@$k$ as $1 - \binom{n-c}{k} / \binom{n}{k}$ {cite}`chen2021codex`, pass$^k$ as
# $\binom{c}{k} / \binom{n}{k}$. Plugging $\hat p = c/n$ into $p^k$ overestimates pass$^k$ (it is convex in $p$),
# the warning of {doc}`08_environments_and_rollouts`. The gap between pass@1 and pass@$k$ is the
# reliability-versus-reach question of {cite}`yue2025rlreasoning`.

# %%
from rlvr_lab import rewards

n, c = 20, 15  # a held-out fixture sampled 20 times, 15 passes
print(
    f"pass@1 = {rewards.pass_at_k(n, c, 1):.2f}, pass@10 = {rewards.pass_at_k(n, c, 10):.3f}, "
    f"pass^5 = {rewards.pass_hat_k_unbiased(n, c, 5):.3f} (the plug-in (c/n)^5 would say "
    f"{rewards.pass_hat_k(c / n, 5):.3f})"
)

# %% [markdown]
# A 75 % single-run success rate looks like a solved task at pass@10 and like an unreliable one at pass$^5$:
# the three numbers answer different questions, and a release decision needs all three.
#
# (ch9-summary)=
# ## Summary
#
# Each stage answered one question that no other stage could:
#
# | Stage | Question | Evidence in this chapter |
# | --- | --- | --- |
# | Isolated verification | Is the reward evidence? | $K$ trials on a fresh fixture by a trusted runner; the naive harness would have paid a tampered pass |
# | Records and admission | Is the update faithful to what the policy saw? | recorded prefixes, ids, behaviour log-probs and versions; lag within bound; complete group |
# | Coefficients | How hard does the evidence push? | $+1.41 / -0.71$, divided per token by each rollout's length |
# | Update and lineage | What changed, and from what? | replay deviation 0 before the step; the pass gained on both failures; lineage bound to records and versions |
# | The same stages on a sampled group | Do they hold on a policy's own episodes? | eight repair episodes, five passes; admitted whole; $+0.775 / -1.291$; the pass gained 8.6 to 21.0 nats on each failure |
# | Independent evaluation | Does the result belong in production? | pass@1, pass@$k$ and pass$^k$ on held-out fixtures, not training reward |
#
# (ch9-practice)=
# ## Exercises and labs
#
# - Exercise 3, *Sizing an all-pass rule*: [student notebook](https://github.com/rlvr-lab/rlvr-lab/blob/main/labs/exercises/student/ex3_all_pass_rule.ipynb) ([Colab](https://colab.research.google.com/github/rlvr-lab/rlvr-lab/blob/main/labs/exercises/student/ex3_all_pass_rule.ipynb)). Revisits stage 1 with numbers.
# - Exercise 7, *Staleness bounds and verifier provisioning*: [student notebook](https://github.com/rlvr-lab/rlvr-lab/blob/main/labs/exercises/student/ex7_staleness_provisioning.ipynb) ([Colab](https://colab.research.google.com/github/rlvr-lab/rlvr-lab/blob/main/labs/exercises/student/ex7_staleness_provisioning.ipynb)). Revisits stage 2 with numbers.
# - Lab 1, *GRPO training*: [notebook](https://github.com/rlvr-lab/rlvr-lab/blob/main/labs/lab1_grpo_training.ipynb) ([Colab](https://colab.research.google.com/github/rlvr-lab/rlvr-lab/blob/main/labs/lab1_grpo_training.ipynb)). Runs this loop for many groups and steps on the course's function tasks, with sampled rollouts.
# - Lab 4, *Reward hacking under optimisation*: [notebook](https://github.com/rlvr-lab/rlvr-lab/blob/main/labs/lab4_reward_hacking.ipynb) ([Colab](https://colab.research.google.com/github/rlvr-lab/rlvr-lab/blob/main/labs/lab4_reward_hacking.ipynb)). Shows what happens to the gradient when stage 1 is skipped.
