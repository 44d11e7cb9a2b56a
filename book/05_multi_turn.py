# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
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
# # 5. Multi-turn agentic RL: recording what the policy actually saw
#
# (ch5-goals)=
# ## Goals
#
# After this chapter you can:
#
# - explain why an end-of-episode transcript cannot stand in for the record a policy-gradient update needs;
# - name the seven parts of a multi-turn rollout record ({ref}`the record table <ch5-table-record>`) and the training
#   question each answers;
# - separate **policy tokens** (sampled actions, scored by the loss) from **conditioning tokens**
#   (prompts, tool output, harness text), and say what each denominator counts;
# - replay a recorded rollout with `rlvr_lab` and check that the recomputed behaviour log-probabilities
#   match the recorded ones, and see what goes wrong when the prefix or the sampling distribution is not the
#   recorded one;
# - classify an interrupted rollout as a task failure, an observation, or a censored (pending / unknown)
#   outcome, and say why neither dropping nor zeroing censored rollouts is safe;
# - read the harness configuration as part of the decision process the policy learns.
#
# The chapter builds on the token ratio and the GRPO objective of the GRPO chapter
# ({doc}`04_grpo`), and prepares the verifier boundary of {doc}`06_verifier_isolation`.

# %% [markdown]
# ## Intuition: a transcript is not a record
#
# A coding agent does not answer once. It runs the tests, reads a failure, edits a file, runs the tests
# again. Each *invocation* of the model produces some tokens; between invocations the harness runs tools and
# pastes their output back into the context. Two things make the final transcript of such an episode a poor
# training record.
#
# First, **the context changes under the policy's feet.** Long episodes overflow the context window, so
# harnesses truncate tool output and summarise old turns. Take the chapter's running trial `rl_trial_01` on
# `pool_fixture_v1`: in turn 1 the agent runs the test suite and receives a truncated failure log; in turn 2
# it reads that log and proposes a patch; by turn 4 the harness has squeezed the early logs into a two-line
# summary. Read off the end of the episode, turn 2 *appears* to have been written after seeing the summary.
# It was not: it was written after seeing the log. Any probability we compute for the turn-2 tokens on the
# summarised context is a probability for a situation the policy never faced.
#
# Second, **text is not tokens.** A policy samples token ids. Turning the transcript back into ids by
# re-tokenising its text can land on different boundaries (a changed chat template, a different whitespace
# rule, a tool schema rendered differently), and then even the *number* of policy tokens changes. Only the
# ids that were actually drawn, with the distribution they were drawn from, describe the sample.
#
# So a multi-turn trainer keeps two sources of truth per invocation: the exact prefix that was delivered to
# the model, and the exact ids that came out, with their behaviour log-probabilities.

# %% [markdown]
# (ch5-policy-tokens)=
# ## Policy tokens and their prefixes
#
# The GRPO objective of {doc}`04_grpo` is written over a flat index $t = 1, \dots, |o_i|$ of the tokens
# that rollout $i$ sampled. A multi-turn rollout has invocations $k = 1, \dots, K_i$; invocation $k$ receives
# the delivered context $c_{i,k}$ and samples $n_{i,k}$ tokens $o_{i,k,1}, \dots, o_{i,k,n_{i,k}}$. If flat
# token $t$ is the $j$-th token of invocation $k$, the prefix that conditioned it is
#
# ```{math}
# :label: ch5-prefix
# \begin{gathered}
# x_{i,t} = \big(c_{i,k},\; o_{i,k,1}, \dots, o_{i,k,j-1}\big),\\
# |o_i| = \sum_{k=1}^{K_i} n_{i,k}.
# \end{gathered}
# ```
#
# Two consequences follow directly. The delivered context $c_{i,k}$ is whatever the harness really sent,
# compaction included, and it has to be stored, because nothing downstream can rebuild it. And the length
# $|o_i|$ that normalises the loss counts **only sampled tokens**: prompt text, tool output and harness
# scaffolding sit inside the prefixes but are never scored.
#
# The token ratio of the clipped surrogate {eq}`ch4-surrogate`, inherited from PPO {cite}`schulman2017ppo`, then
# reads
#
# ```{math}
# :label: ch5-ratio
# r_{i,t}(\theta) = \frac{\pi_\theta(o_{i,t} \mid x_{i,t})}{\pi_{\mathrm{old}}(o_{i,t} \mid x_{i,t})},
# ```
#
# where $\pi_{\mathrm{old}}$ is the distribution the token was *actually drawn from*: after temperature,
# top-$k$, top-$p$ or a grammar constraint, renormalised, with the weights version that served that
# invocation. Both numerator and denominator of {eq}`ch5-ratio` must be evaluated on the same recorded
# prefix {eq}`ch5-prefix`.

# %% [markdown]
# (ch5-table-record)=
# ## The rollout record
#
# The table below lists what a multi-turn record holds. The three middle rows (inputs, actions, behaviour)
# are what make {eq}`ch5-ratio` computable; the last three make the reward and its use auditable.
#
# | Part of the record | What it stores | The question it answers for training |
# | --- | --- | --- |
# | Trial and group identity | task, fixture and candidate versions; rollout and group ids; initial conditions; split | Which experiment and which reward comparison does this sample belong to? |
# | Invocation inputs | call id; delivered prefix token ids (or immutable, content-addressed references); template and tokenizer versions; attention and position settings | What could the policy condition on at this decision? |
# | Sampled actions | the output token ids as drawn; invocation boundaries; map from local positions to the flat policy-token index | Which tokens were sampled, as opposed to supplied by the harness or reconstructed later? |
# | Behaviour distribution | weights or adapter version; sampling configuration and constraints; log-probability of each chosen token | Which distribution produced each sampled token? |
# | Observation links | tool call and attempt ids; versions of delivered results; refusals; partial results; whether a result entered the next input | Which execution evidence reached which invocation? |
# | Bounds and ownership | resource limits and usage; stop reason; work still running and who owns it | Why did collection stop, and what cleanup is still owed? |
# | Assessment and use | grader and reward versions; component scores; pending or unavailable findings; group membership; update eligibility | Is a reward known, and how will the objective use this record? |
#
# Storing every prefix in full for millions of rollouts is expensive, which is why production systems keep
# prefixes as immutable content-addressed blobs or prefix-tree references: the *content* is recorded once,
# every invocation points at it. What must not be dropped is the link from each sampled token to the exact
# bytes it was conditioned on.
#
# `rlvr_lab.records.RolloutRecord` is a compact version of this table for the course's function tasks. Let
# us collect a real multi-turn group and look inside.

# %% [markdown]
# ### A two-invocation rollout, recorded
#
# The policy below is the course's tiny Llama model with a byte-level BPE tokenizer trained on the task
# corpus, built from a config with random weights, so its code is noise. That does not matter here: the
# bookkeeping is identical for a good policy. `collect(..., multi_turn=True)` runs the protocol of the
# trainer: the policy writes a function body, the harness runs the **public** test in the sandboxed
# verifier and, if it fails, appends that feedback to the context and asks again. The final candidate goes
# to the hidden tests.

# %%
import dataclasses
import torch
from rlvr_lab.tasks import make_suite
from rlvr_lab.policy import (
    SamplingConfig,
    build_model,
    completion_logprobs,
    train_tokenizer,
)
from rlvr_lab.records import close_group, flatten
from rlvr_lab.train import PolicyHandle, VerdictCache, collect, tokenizer_digest
from rlvr_lab.verifier import VerifierPool

suite = make_suite(seed=0, families=("arith",), problems_per_family=4)
tok = train_tokenizer([t.prompt + t.solution for t in suite], vocab_size=300)
model = build_model(tok, "tiny", seed=0).eval()
sampling = SamplingConfig(temperature=0.9, top_k=40, max_new_tokens=12)
policy = PolicyHandle(
    model, tok, version=0, sampling=sampling, tokenizer_digest=tokenizer_digest(tok)
)
task = suite[0]
print(task.prompt)

# %%
with VerifierPool(workers=2, backend="auto") as pool:
    records, timings = collect(
        policy,
        [task],
        group_size=4,
        grader=VerdictCache(pool),
        step=0,
        generator=torch.Generator().manual_seed(1),
        multi_turn=True,
    )
for r in records:
    print(
        f"{r.rollout_id}: {len(r.invocations)} invocation(s), prompt {r.prompt_tokens} tokens, "
        f"{r.completion_tokens} policy tokens, stop={r.stop_reason}, verdict={r.verdict}, reward={r.reward}"
    )

# %% [markdown]
# Each record carries its invocations. For every call we keep the delivered prefix ids, the sampled ids, the
# per-token behaviour log-probs, the weights version and the stop reason; the observation the harness
# appended after the call is stored beside it, as ids and as text.

# %%
rec = max(records, key=lambda r: len(r.invocations))
for call in rec.invocations:
    print(
        f"call {call.call_id}: prefix {len(call.prefix_ids)} ids, sampled {len(call.completion_ids)} ids, "
        f"version {call.policy_version}, stop={call.stop_reason}, "
        f"first behaviour log-probs {[round(x, 2) for x in call.behaviour_logprobs[:3]]}"
    )
    if call.observation:
        print("   observation:", call.observation.splitlines()[0])
print("sampling config recorded:", rec.sampling)
print("tokenizer digest:", rec.tokenizer_digest[:16], "...")

# %% [markdown]
# (ch5-masks)=
# ## Conditioning tokens versus policy tokens
#
# `flatten` lays a record out as the single sequence the loss sees, with a score mask: 1 on tokens the
# policy sampled, 0 on everything the harness supplied. It also checks the record: every later call's
# prefix must be exactly the earlier prefix, plus the sampled tokens, plus the observation.

# %%
ids, mask, behaviour = flatten(rec)
print(
    f"{len(ids)} tokens in the sequence, {sum(mask)} scored policy tokens, "
    f"{len(ids) - sum(mask)} conditioning tokens"
)

# %% mystnb={"figure": {"caption": "The token roles of the recorded multi-turn rollout: the prompt, the tokens each model call sampled, and the observations the environment returned. Only the sampled stretches enter the loss and its denominator.", "name": "fig-ch5-rollout-roles"}, "image": {"alt": "A horizontal strip of token positions coloured by role: a grey prompt at the start, then alternating coloured stretches sampled by each model call and yellow observation stretches; the legend gives each stretch's token count."}} tags=["hide-input"]
from rlvr_lab.figures import chapter

chapter.rollout_roles_figure(rec)

# %% [markdown]
# The grey and yellow stretches are context: they shape the model's activations, so they sit inside every
# later prefix, but their log-probabilities never enter the loss and they are not counted in $|o_i|$. Runtime
# cost accounting is a separate ledger: prefill of the context and decoding of the policy tokens are both
# paid for, as different line items.
#
# This mask is **not** the loss mask of supervised fine-tuning. There, a curator masks out a malformed
# proposal because it should not be imitated. In reinforcement learning the mask marks the support of the
# exploration distribution, and every sampled action belongs to it, including an invalid tool call or a
# shell command the harness refuses to run. Masking such tokens out would let the mistake escape its
# negative update, and the failing rollout's negative coefficient would land entirely on its well-formed
# tokens. The same logic decides stop tokens: an end-of-turn token the policy emitted is an action that
# consumed probability; a terminator a data loader inserted when it cut an episode off is harness
# intervention and must not be scored.

# %% [markdown]
# ### Replay: the recorded ratio is 1 before any update
#
# Before the first optimizer step the trainer's weights equal the behaviour weights, so every ratio
# {eq}`ch5-ratio` must be exactly 1. That is a cheap, strong test of the record: recompute the
# log-probabilities of the recorded ids on the recorded prefixes under the recorded sampling configuration,
# and compare.

# %%
with torch.no_grad():
    logp, score = completion_logprobs(model, [ids], [mask], sampling, tok.pad_token_id)
recorded = torch.tensor(behaviour[1:])
dev = ((logp[0] - recorded).abs() * score[0]).max().item()
print(
    f"max |recomputed - recorded| over {int(score.sum())} policy tokens: {dev:.2e} nats"
)

# %% [markdown]
# ### A repair episode the course's agent sampled
#
# The rollout above comes from an untrained model on a one-function task, so its second call is the only
# multi-turn part. The course's repair agent plays longer episodes: it runs the public tests, edits the
# module, and submits, and every observation joins its context. {doc}`09_case_study` follows one group of
# eight such episodes, sampled by the warm-started agent, from its records to its update. Here is one
# failing member of that group, exactly as its record holds it.

# %%
from rlvr_lab import claims
from rlvr_lab.records import RolloutRecord

real = claims.load_measurement("repair_group")
episode = RolloutRecord.from_dict(real["records"][1])
for call, action in zip(episode.invocations, real["actions"][1]):
    first = call.observation.splitlines()[0] if call.observation else ""
    print(
        f"call {call.call_id}: prefix {len(call.prefix_ids)} ids, sampled {len(call.completion_ids)} "
        f"({action.splitlines()[0]!r}), tool {call.tool or 'none'} ok={call.tool_ok}, "
        f"observation {len(call.observation_ids)} ids: {first[:48]!r}"
    )
ep_ids, ep_mask, _ = flatten(episode)
print(
    f"verdict {episode.verdict}: {len(ep_ids)} tokens, {sum(ep_mask)} scored policy tokens, "
    f"{len(ep_ids) - sum(ep_mask)} conditioning tokens"
)

# %% [markdown]
# `flatten` accepted the record, so each call's prefix is the previous prefix, its tokens and the
# observation, to the token. The 118 tokens of test output after `RUN` sit in every later prefix and in no
# loss term. The malformed actions (`LINE RUN` names no line) are scored like any other: they were sampled,
# so the failure's negative coefficient reaches them. Before the update of {doc}`09_case_study`, the
# replay check over this group's scored tokens found the largest deviation below:

# %%
print(f"{real['update']['replay_max_dev']:.1e} nats")

# %% [markdown]
# ### What breaks when the record is reconstructed
#
# Now let us commit the two errors of the intuition section on purpose.
#
# **A compacted prefix.** Suppose the harness later replaced the first attempt and its feedback by a short
# summary line, and a trainer rebuilds the second call's context from that final transcript. The second call's
# tokens are then scored on a prefix the policy never saw. `flatten` refuses such a record outright, because
# the second prefix no longer continues the first; if we score the tokens anyway, their log-probabilities
# move even though the weights did not change.

# %%
first, second = rec.invocations[0], rec.invocations[-1]
summary = tok("# earlier attempt failed\n" + task.prompt, add_special_tokens=False)[
    "input_ids"
]
compacted_prefix = first.prefix_ids + summary
try:
    flatten(
        dataclasses.replace(
            rec,
            invocations=[
                first,
                dataclasses.replace(second, prefix_ids=compacted_prefix),
            ],
        )
    )
except ValueError as err:
    print("flatten refuses:", err)

seq = compacted_prefix + second.completion_ids
m = [0] * len(compacted_prefix) + [1] * len(second.completion_ids)
with torch.no_grad():
    lp_c, sc_c = completion_logprobs(model, [seq], [m], sampling, tok.pad_token_id)
ratio_c = torch.exp(lp_c[0][sc_c[0] > 0] - torch.tensor(second.behaviour_logprobs))
print(
    f"ratios on the compacted prefix at theta = theta_old: min {ratio_c.min():.3f}, max {ratio_c.max():.3f}"
    " (the correct value is 1 for every token)"
)

# %% [markdown]
# **The wrong behaviour distribution.** The sampler drew tokens from the temperature-0.9, top-40
# distribution. A trainer that skips the recorded configuration and evaluates a plain softmax at
# temperature 1 gets a different number for the same token on the same prefix.

# %%
with torch.no_grad():
    lp_raw, sc_raw = completion_logprobs(
        model, [ids], [mask], SamplingConfig(), tok.pad_token_id
    )
ratio_raw = torch.exp(lp_raw[0] - recorded)[sc_raw[0] > 0]
q = torch.quantile(ratio_raw, torch.tensor([0.05, 0.5, 0.95]))
print(
    "ratio quantiles (5 %, 50 %, 95 %) with an unconstrained softmax in the numerator:",
    [round(float(v), 3) for v in q],
)

# %% [markdown]
# Our model has random weights and barely attends to its context, so the compacted prefix moves its
# probabilities only a little; a trained policy that actually reads the failure log moves much further. The
# unconstrained softmax, on the other hand, is wrong by a large factor on every token, because the top-40
# renormalisation it ignores is applied to every draw.
#
# Both errors bias the estimator silently: nothing crashes, every ratio is finite, and the clipped surrogate
# happily trains on the wrong quantity. Some systems knowingly use unconstrained logits to avoid caching
# rollout probabilities; that is a legitimate choice only when the approximation is declared and tracked.
#
# **Versions per invocation.** The course's loop pins a rollout to one weights version, which keeps the
# accounting simple. An asynchronous system that swaps weights mid-episode, in the actor-learner style of
# IMPALA {cite}`espeholt2018impala`, must record the version (and the behaviour log-probs) **per invocation**; labelling the whole rollout with one version misattributes every
# token sampled after the swap. The same goes for credit: a trajectory-level coefficient is broadcast over
# all policy tokens, and if turn-level credit is used instead, turns are compared only through the estimators
# of the credit chapter ({doc}`03_credit_across_turns`), never by matching turn indices across rollouts whose histories
# differ.

# %% [markdown]
# (ch5-censored)=
# ## Stopping and censored rollouts
#
# A harness enforces limits on wall time, turns and tokens. What a stop *means* depends on the task contract,
# and a record must distinguish four cases that look alike in a log file:
#
# | What happened | Whose doing | Verdict | Reward |
# | --- | --- | --- | --- |
# | The declared budget ran out (turns, tokens, episode time) before a solution | the policy's | `fail` | 0 |
# | One tool call hit its own deadline (say a 30 s sandbox limit) and returned an error | an observation the policy can react to | the episode continues | decided later |
# | The verifier crashed or was unreachable, or the node was reclaimed, and a retry is still possible | infrastructure | `pending` | none yet |
# | The same, with no retry left | infrastructure | `unknown` | none |
#
# The last two are **censored** rollouts: their reward is missing because of the cluster, not because of the
# policy. `rlvr_lab` keeps them as `None` and never coerces them. The group rule of the trainer then decides
# what to do with the group as a whole.

# %%
resolved = [
    dataclasses.replace(r, verdict=v, reward={"pass": 1.0, "fail": 0.0}[v])
    for r, v in zip(records, ["fail", "pass", "fail", "pass"])
]
censored = resolved[:3] + [
    dataclasses.replace(resolved[3], verdict="pending", reward=None)
]
print(
    "fully resolved group:",
    close_group(resolved, planned=4, trainer_version=0, max_lag=1),
)
print(
    "one pending member:  ",
    close_group(censored, planned=4, trainer_version=0, max_lag=1),
)
print(
    "three members only:  ",
    close_group(resolved[:3], planned=4, trainer_version=0, max_lag=1),
)

# %% [markdown]
# Why not just pick a number? Each shortcut biases learning in a predictable direction:
#
# - **Dropping** incomplete rollouts is survivorship bias. Long, multi-step episodes are the ones most
#   exposed to preemption and verifier timeouts, so they vanish from the data and the update tilts towards
#   short, easy tasks.
# - **Zeroing** them punishes the policy for the cluster. A rollout that would have passed is scored as a
#   failure, its group baseline drops, and the policy learns to avoid the long trajectories that happened to
#   meet outages.
#
# The coefficient arithmetic {eq}`ch4-advantage` shows the size of the second error on the group above: if the
# censored member would have passed, coercing it to 0 flips the sign of its coefficient and moves every other
# member's coefficient too.

# %%
import numpy as np
from rlvr_lab.grpo import group_advantages

true_rewards = [0.0, 1.0, 0.0, 1.0]  # what a recovered verifier would have said
coerced = [0.0, 1.0, 0.0, 0.0]  # the censored member coerced to a failure
print("true coefficients:   ", np.round(np.asarray(group_advantages(true_rewards)), 3))
print("coerced coefficients:", np.round(np.asarray(group_advantages(coerced)), 3))

# %% [markdown]
# A pipeline must therefore *declare* its rule for censored episodes: wait for the verifier to recover,
# retry idempotently within a bound, exclude the whole group with the reason logged, or use an imputation
# method whose effect on the coefficients is analysed. `rlvr_lab`'s trainer offers the second and third:
# `closure="wait"` resubmits the unresolved members a bounded number of times, and `closure="exclude"` leaves the
# group out whole and records why.
#
# Finally, stopping the sampler does not stop the world. Shell subprocesses, containers and remote API calls
# that the rollout started keep running until someone cancels them. The record's *bounds and ownership* row
# exists so that a censored or abandoned rollout still gets its processes and volumes cleaned up, whether or
# not it ever enters a batch.

# %% [markdown]
# (ch5-contracts)=
# ## Collection contracts and deployment contracts
#
# Everything the harness does, from how it compacts context, how much tool output it keeps, how it refuses a
# malformed call, to which resource caps it enforces, is part of the decision process the policy explores.
# The policy learns *that* process. If training allows 50 turns and production allows 10, the policy can
# learn a leisurely trial-and-error style that simply runs out of turns in production. Training budgets can
# deliberately be looser than deployment budgets, as a curriculum for sparse rewards, but then the transfer
# penalty under the tighter budget has to be measured, not assumed away.
#
# A second contract concerns the hardware. A tool-heavy rollout spends most of its life waiting: the policy
# may write a tool request in 200 ms and then wait 45 s for a build and a test run. An accelerator reserved
# for that one episode would compute for a tiny fraction of the time, and the cycle-time model of
# {doc}`08_environments_and_rollouts` makes the fraction explicit.

# %%
from rlvr_lab.cycle_time import cycle_time

cycle = cycle_time(horizon=1, t_model=0.2, t_tool=45.0, t_assess=0.0, t_reset=0.0)
print(
    f"one 200 ms invocation then a 45 s tool wait: the model is busy {0.2 / cycle:.2%} of the episode"
)

# %% [markdown]
# Collection engines therefore decouple invocations from episodes: while one rollout waits on its tool, the
# accelerator serves the ready invocations of other rollouts. Each rollout still sees exactly its own
# stream of observations, so the interleaving changes utilisation, not the causal record. The widget below
# uses the slot model {eq}`ch8-cycle` of {doc}`08_environments_and_rollouts` to show how model time, tool time,
# assessment and reset share one slot's cycle, and what that does to a pool's capacity.

# %%
from rlvr_lab.figures.widgets import cycle_explorer

cycle_explorer(
    horizon=10, t_model=0.2, t_tool=2.0, t_assess=0.5, t_reset=3.5, slots=256
)

# %% [markdown]
# A faithful record of what the policy saw, what it sampled and how the environment answered is necessary
# for a correct update, but it is not sufficient: the reward attached to the record is only evidence if the
# candidate could not reach the machinery that produced it. That is the subject of
# {doc}`06_verifier_isolation`.
#
# (ch5-summary)=
# ## Summary
#
# - A multi-turn update needs, per invocation, the **delivered prefix**, the **sampled token ids** and the
#   **behaviour log-probabilities** under the recorded sampling configuration and weights version
#   equations {eq}`ch5-prefix` and {eq}`ch5-ratio`. A final transcript cannot supply them: compaction rewrites
#   contexts and re-tokenisation moves boundaries.
# - Observations and prompts are conditioning; only sampled tokens are scored and counted in $|o_i|$.
#   Malformed actions are still actions; harness-inserted terminators are not.
# - Replaying a record at $\theta = \theta_{\mathrm{old}}$ must give ratios of exactly 1; a compacted prefix
#   or an unconstrained softmax breaks this without any error message.
# - Budget exhaustion is a failure; infrastructure interruptions leave the outcome **pending** or
#   **unknown**. Dropping censored rollouts favours easy tasks; zeroing them punishes the policy for the
#   cluster. Declare a rule, and clean up what the rollout started either way.
# - The harness's limits define the process the policy learns; measure the transfer penalty when training
#   and deployment budgets differ.
#
# (ch5-practice)=
# ## Exercises and labs
#
# - Exercise 7, *Staleness bounds and verifier provisioning*: [student notebook](https://github.com/rlvr-lab/rlvr-lab/blob/main/labs/exercises/student/ex7_staleness_provisioning.ipynb) ([Colab](https://colab.research.google.com/github/rlvr-lab/rlvr-lab/blob/main/labs/exercises/student/ex7_staleness_provisioning.ipynb)). Version lag is computed from the versions that records carry.
# - Exercise 8, *Diagnosing a lengthening policy*: [student notebook](https://github.com/rlvr-lab/rlvr-lab/blob/main/labs/exercises/student/ex8_lengthening_policy.ipynb) ([Colab](https://colab.research.google.com/github/rlvr-lab/rlvr-lab/blob/main/labs/exercises/student/ex8_lengthening_policy.ipynb)). The denominator $|o_i|$ counts policy tokens only.
# - Lab 1, *GRPO training*: [notebook](https://github.com/rlvr-lab/rlvr-lab/blob/main/labs/lab1_grpo_training.ipynb) ([Colab](https://colab.research.google.com/github/rlvr-lab/rlvr-lab/blob/main/labs/lab1_grpo_training.ipynb)). Set `multi_turn=True` in the training configuration to train on two-invocation rollouts like the ones above, with their observations masked.
