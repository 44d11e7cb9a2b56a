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
# # 10. Fallacies, summary and further reading
#
# (ch10-goals)=
# ## Goals
#
# This closing chapter
#
# - takes five tempting conclusions apart with the course's own numbers, each computed by `rlvr_lab`;
# - condenses the course into seven takeaways and one table of its key relations, each linked to the chapter
#   that derives it;
# - traces where the ideas came from, and recommends a short reading list.

# %% [markdown]
# (ch10-fallacies)=
# ## Fallacies and pitfalls
#
# Each item below turns a measurement that is true in its scope into a conclusion that is not, and each has a
# concrete cost in a training system.

# %%
import numpy as np
from rlvr_lab import cycle_time, grpo, rewards
from rlvr_lab.figures import chapter

# %% [markdown]
# ### Fallacy: an automated reward is a complete specification of the task
#
# Tests check what their authors thought of, and RL is a search procedure that is very good at finding what
# they did not. Base rates make it worse while the policy is weak. With the false-accept share of
# {eq}`ch2-false-share`, a verifier that wrongly accepts only 2.5 % of failing attempts still makes
# almost a fifth of all rewarded rollouts failures when the policy solves 10 % of tasks:

# %%
share = rewards.false_accept_share(rho=0.10, alpha=0.025)
print(
    f"false share of rewarded rollouts: {share:.1%}; of 8,192 rollouts, "
    f"{8192 * 0.10:.1f} true and {8192 * 0.90 * 0.025:.2f} false accepts"
)

# %% [markdown]
# Every rewarded rollout is reinforced as a success, so the tokens that produced the false accepts gain
# probability too. Test the verifier against suites of known-wrong solutions, compare its false-acceptance rate
# with the policy's *current* pass rate, and gate deployment on held-out criteria rather than training reward.
#
# ### Pitfall: leaving the scorer, the runner or its configuration within the candidate's reach
#
# If the agent can read or write its evaluation harness, editing the harness is the easiest path to reward.
# METR's evaluations found that when a task exposed an editable scoring script, the model tampered with it in
# 21 of 21 runs {cite}`vonarx2025hacking`. In training the damage is amplified by the group statistics: on a hard task where honest
# attempts fail, the first rollout that finds the exploit is the group's lone pass.

# %%
hack, honest = grpo.lone_pass_group_coefficients(16)
print(
    f"group of 16, one hacked pass: coefficient {hack:+.2f} for the hack, {honest:+.2f} for each honest failure"
)

# %% [markdown]
# Evaluate candidates in a fresh workspace behind a controller that alone owns the tests, the runner and the
# result path ({doc}`06_verifier_isolation`), and treat the candidate's code as untrusted inside that sandbox
# too.
#
# ### Fallacy: a bigger group is the way to get signal out of hard tasks
#
# Larger groups make it likelier that a group contains both a pass and a failure, but that probability is
# not the information per rollout spent. With the contrast probability {eq}`ch1-contrast`:

# %%
for G, p, lever in [
    (8, 0.05, "current mix"),
    (16, 0.05, "double the group"),
    (8, 0.50, "target difficulty"),
]:
    print(
        f"{lever:>17}: G = {G:2d}, p = {p:.2f} -> P_c = {rewards.contrast_probability(G, p):.2f}, "
        f"{rewards.rollouts_per_informative_group(G, p):.1f} rollouts per informative group"
    )

# %% [markdown]
# Doubling the group costs *more* rollouts per informative group; steering the curriculum towards tasks near a
# 50 % pass rate costs about a third as many. Where getting any contrast is the binding constraint and the
# change of task mix is acceptable, target difficulty. Group size still matters for the precision of the
# baseline and for coverage, so choose it on those grounds and log the sampling distribution either way.
#
# ### Pitfall: reading longer self-correction text as better reasoning
#
# Long monologues and self-critiques look like deliberation, but output length also grows as a side effect of
# the loss normalisation. Under per-rollout averaging, equation {eq}`ch7-weight`, a 128-token failure's tokens are
# penalised 32 times harder than a 4,096-token failure's:

# %%
w = grpo.per_token_weights([-1.0, -1.0], [128, 4096], norm="sequence")
print(f"per-token penalty ratio, short failure / long failure: {w[0] / w[1]:.0f}x")

# %% [markdown]
# So the objective can favour longer failures even when the extra text checks nothing. Compare lengths by
# outcome, train a constant-denominator variant, and judge revisions by the tool actions and verified
# completions they deliver under a matched budget, not by the narration of reconsidering
# ({doc}`07_training_pathologies`).
#
# ### Fallacy: a faster environment reset speeds training up proportionally
#
# Reset is one slice of a slot's cycle in equation {eq}`ch8-cycle`. Cutting it from 3.5 s to 15 ms is a 233×
# faster reset, but the 4.5 s of model service, tool execution and assessment remain:

# %%
cold = cycle_time.cycle_time(
    horizon=20, t_model=0.12, t_tool=0.08, t_assess=0.5, t_reset=3.5
)
snap = cycle_time.cycle_time(
    horizon=20, t_model=0.12, t_tool=0.08, t_assess=0.5, t_reset=0.015
)
print(
    f"reset speed-up {3.5 / 0.015:.0f}x; slot capacity {cycle_time.pool_capacity_per_hour(256, cold):,.0f} -> "
    f"{cycle_time.pool_capacity_per_hour(256, snap):,.0f} episodes/h, a {cold / snap:.2f}x gain"
)

# %% [markdown]
# That is Amdahl's law on one slot, and the 1.77× only turns into faster training if inference, verification
# and the optimiser have the headroom to absorb 1.77 times as many episodes. Profile the whole loop and find
# the saturated stage before optimising any single one.
#
# The figure places four of these numbers on the curves they come from.

# %% tags=["hide-input"] mystnb={"figure": {"caption": "Four of the course's worked numbers on the curves they come from: the false-accept share of rewards, the lone-pass coefficient, rollouts per informative group, and the slot-capacity gain of a faster reset.", "name": "fig-ch10-key-numbers"}, "image": {"alt": "Four stacked line charts, each with its worked point marked: the false share of rewards falling as the pass rate rises; the lone-pass coefficient growing like a square root of G - 1; rollouts per informative group on a log axis for G = 8 and 16; and the capacity gain rising with the reset speed-up towards the no-reset ceiling."}}
chapter.key_numbers_figure(rho=0.10, alpha=0.025, group_size=16, t_reset=3.5, t_fast=0.015)

# %% [markdown]
# The group-size fallacy is the one where intuition misleads most, so explore it: the widget shows the
# contrast probability and the rollouts spent per informative group for a group size and pass rate of your
# choice.

# %%
from rlvr_lab.figures.widgets import contrast_explorer

contrast_explorer(group_size=8, p=0.05)

# %% [markdown]
# (ch10-summary)=
# ## Summary
#
# Reinforcement learning with verifiable rewards steers a policy with assessed interactions instead of a
# demonstration for every decision. What it can learn is bounded by what the sampler can reach and what the
# reward can tell apart, and its risks come from the fact that the recorded score, not the intent behind the
# task, is what gets optimised. Reward validity, fidelity of the sampled record, and enforcement outside the
# model are therefore parts of the learning system for as long as it trains.
#
# The repair group of {doc}`09_case_study` shows the chain: resolved, protected verdicts justify group
# coefficients; recorded actions and the inputs they saw justify the update; resource and version controls
# govern collection; and none of it replaces evaluating the resulting checkpoint under the conditions it will
# face. Training changes weights, not permissions: the runtime still bounds the horizon, the state and the
# authority of whatever the new weights propose.
#
# **Seven takeaways.**
#
# 1. *A reward needs reachable distinctions.* The policy must sample behaviour the reward can tell apart;
#    that support can come from several places, and supervised fine-tuning is one option, not a required stage.
# 2. *A protected score still has a scope.* Checks assess what they specify. Composition shapes preferences
#    and isolation closes interference paths; neither replaces runtime permissions or independent assessment.
# 3. *Return is not causal credit.* A baseline changes the coefficient of an action without measuring its
#    contribution; continuation estimates cost extra execution and carry uncertainty that must be reported.
# 4. *Group coefficients do not bound the update.* Equal rewards remove the reward terms, not all learning;
#    clipping changes the objective but is not a hard limit on drift.
# 5. *Train on the actions actually sampled.* Keep per-invocation inputs, sampled tokens and matching
#    behaviour probabilities; observations are conditioning; censored outcomes need a declared rule.
# 6. *Behavioural claims need behavioural evidence.* Entropy, length, reward and recovery traces guide an
#    investigation; test interventions on task outcomes and costs under controlled conditions.
# 7. *Collection and release have different gates.* Queues, group closure, version accounting and verifier
#    capacity run training; deployment needs evidence about the identified policy, with every runtime control
#    still in place.

# %% [markdown]
# (ch10-key-equations)=
# ## Key equations
#
# Each relation holds under the assumptions stated where it is derived: independent trials, binary rewards,
# constant stage times, or a steady training rate.
#
# | Relation | Formula | Used for | Derived in |
# | --- | --- | --- | --- |
# | False-accept share of rewarded rollouts | $\dfrac{(1-p^\ast)\,\alpha}{p^\ast\,\beta + (1-p^\ast)\,\alpha}$ | how many rewards are wrong at the current pass rate | {doc}`02_verifiable_rewards`, eq. {eq}`ch2-false-share` |
# | Reward ordering | $\lambda_f + \lambda_l < 1$ with $\text{len} \le 1$ enforced | every pass outranks every failure | {doc}`02_verifiable_rewards`, eq. {eq}`ch2-ordering` |
# | Continuation-sampling cost | $1 + \tfrac{M}{H}\sum_{k \in S}(H - k)$ times the base tokens; all boundaries $\approx M H^2 n / 2$ tokens | pricing fork-based credit | {doc}`03_credit_across_turns`, eq. {eq}`ch3-fork-multiple` |
# | Group-relative coefficient | $\hat A_i = (R_i - \bar R)/(\sigma_R + \varepsilon)$; lone pass $\to \sqrt{G-1}$ | the weight of each rollout in the update | {doc}`04_grpo`, eq. {eq}`ch4-advantage`, {eq}`ch4-lone-pass` |
# | Contrast probability | $P_c = 1 - p^G - (1-p)^G$; cost $G / P_c$ | rollouts per informative group | {doc}`01_learning_from_a_check`, eq. {eq}`ch1-contrast` |
# | Token ratio on the recorded prefix | $r_{i,t} = \pi_\theta(o_{i,t} \mid x_{i,t}) / \pi_{\mathrm{old}}(o_{i,t} \mid x_{i,t})$ | what a multi-turn record must make computable | {doc}`05_multi_turn`, eq. {eq}`ch5-ratio` |
# | All-pass rule | $q^K$ and $\mathbb{E}[N \mid q] = \sum_{j<K} q^j$ | acceptance and trial demand of repeated checks | {doc}`06_verifier_isolation`, eq. {eq}`ch6-allpass`, {eq}`ch6-trials` |
# | Per-token weight | $\hat A_i / \lvert o_i \rvert$ versus $\hat A_i / L$ | length bias of the normalisation | {doc}`07_training_pathologies`, eq. {eq}`ch7-weight` |
# | Clip headroom | $p\,(1 + \epsilon_{\text{high}})$ | why rare tokens stall under a symmetric clip | {doc}`07_training_pathologies`, eq. {eq}`ch7-headroom` |
# | Slot cycle | $T = H(t_{\text{model}} + t_{\text{tool}}) + t_{\text{assess}} + t_{\text{reset}}$; capacity slots$/T$ | what a faster reset buys | {doc}`08_environments_and_rollouts`, eq. {eq}`ch8-cycle` |
# | Version lag | $\Delta\mathrm{ver} = \lfloor \tau_{\text{admit}} / T_{\text{step}} \rfloor$ | staleness admission | {doc}`08_environments_and_rollouts`, eq. {eq}`ch8-lag` |
# | Verifier pool | $W = \lceil \lambda\,K\,t_v / \rho_{\text{target}} \rceil$, $K \to \mathbb{E}[N]$ with early exit | provisioning assessment | {doc}`08_environments_and_rollouts`, eq. {eq}`ch8-workers` |

# %% [markdown]
# (ch10-history)=
# ## Historical perspective
#
# The problem at the heart of this course is older than language models. Minsky asked how a learner that only
# sees whether a long game was won can apportion the credit among the many moves that led there, and gave it
# the name *credit assignment* {cite}`minsky1961steps`. Two families of answers still organise the field.
# Temporal-difference learning scores each step against the next prediction rather than the final outcome
# {cite}`sutton1988td`. The REINFORCE family differentiates the expected reward through the probabilities of
# sampled actions and subtracts a baseline to control the variance {cite}`williams1992reinforce`. The policy
# gradient theorem showed that such estimates survive function approximation {cite}`sutton1999pg`, and the
# analysis of baselines as control variates explained why some reduce variance more than others
# {cite}`greensmith2004variance`.
#
# Scaling policy gradients to deep networks exposed instability more than bias. Trust-region policy
# optimisation bounded the divergence of each step from the data-collecting policy {cite}`schulman2015trpo`,
# generalised advantage estimation made the bias-variance trade in the baseline explicit
# {cite}`schulman2016gae`, and proximal policy optimisation replaced the trust region with the cheaper clipped
# objective that GRPO inherits {cite}`schulman2017ppo`. Systems questions arrived at the same time:
# stale-synchronous parameter servers bounded how old a worker's parameters may be {cite}`ho2013ssp`,
# asynchronous actor-learners kept every actor busy at the price of lag {cite}`mnih2016a3c`, and IMPALA split
# acting from learning with an explicit off-policy correction {cite}`espeholt2018impala`, the design today's
# agent rollout fleets resemble.
#
# With language models, the reward became the hard part. Reward models learned from human comparisons made
# preferences optimisable {cite}`christiano2017deep,ouyang2022training`, and optimising a policy against such a
# proxy was shown to raise the proxy while a held-out gold score eventually falls {cite}`gao2023scaling`.
# Executable checks offered a sturdier signal: unit tests became the reward for code generation
# {cite}`le2022coderl`, outcome and process supervision were compared on checkable reasoning
# {cite}`uesato2022solving,lightman2024verify`, and training against such checks got its name, reinforcement
# learning with verifiable rewards {cite}`lambert2024tulu3`. On the optimiser side, scoring each sample against
# its siblings {cite}`kool2019buy4,ahmadian2024back` led to group-relative policy optimisation
# {cite}`shao2024deepseekmath`. The same years catalogued the cost of an imperfect reward, from early lists of
# specification problems {cite}`amodei2016concrete,krakovna2020specification` to a formal definition of reward
# hacking {cite}`skalse2022hacking`, and the defence went back to the protection literature: confinement
# {cite}`lampson1973confinement` and complete mediation {cite}`saltzer1975protection` describe the verifier
# boundary in terms written long before learned policies existed.

# %% [markdown]
# (ch10-reading)=
# ## Further reading
#
# Six starting points, from classical foundations to the boundary this course keeps returning to:
#
# - **Sutton and Barto, *Reinforcement Learning: An Introduction*** {cite}`sutton2018rl`. The standard text for
#   returns, value functions, temporal differences and policy gradients; every chapter here assumes its
#   vocabulary.
# - **Williams (1992)** {cite}`williams1992reinforce`. The original REINFORCE estimator and baseline; a short
#   read that shows how little the core update has changed.
# - **Schulman et al. (2017)**, read with **Schulman et al. (2016)** {cite}`schulman2017ppo,schulman2016gae`.
#   The clipped objective and advantage estimation: together they show what GRPO keeps and what it drops.
# - **Espeholt et al. (2018)** {cite}`espeholt2018impala`. The reference design for separating actors from
#   learners with bounded, corrected lag, the staleness problem that long agent rollouts make worse.
# - **Skalse et al. (2022)** {cite}`skalse2022hacking`. A precise definition of when a proxy reward can be
#   gamed, turning a vague worry into a property a reward designer can reason about.
# - **Saltzer and Schroeder (1975)** {cite}`saltzer1975protection`. The protection principles that verifier
#   isolation applies, and the reason an instruction to the policy never replaces mediation of every route to
#   the verdict.
#
# (ch10-practice)=
# ## Exercises and labs
#
# All eight exercises of the course are in
# [labs/exercises](https://github.com/rlvr-lab/rlvr-lab/tree/main/labs/exercises/student) and the five labs in
# [labs](https://github.com/rlvr-lab/rlvr-lab/tree/main/labs). The fallacies above map onto four exercises:
#
# - Exercise 1, *False accepts early and late*: [student notebook](https://github.com/rlvr-lab/rlvr-lab/blob/main/labs/exercises/student/ex1_false_accepts.ipynb) ([Colab](https://colab.research.google.com/github/rlvr-lab/rlvr-lab/blob/main/labs/exercises/student/ex1_false_accepts.ipynb)). The complete-specification fallacy at two pass rates.
# - Exercise 4, *A mixed task pool and its silent groups*: [student notebook](https://github.com/rlvr-lab/rlvr-lab/blob/main/labs/exercises/student/ex4_silent_groups.ipynb) ([Colab](https://colab.research.google.com/github/rlvr-lab/rlvr-lab/blob/main/labs/exercises/student/ex4_silent_groups.ipynb)). The bigger-group fallacy on a mixed pool.
# - Exercise 6, *Reset for a short-horizon support agent*: [student notebook](https://github.com/rlvr-lab/rlvr-lab/blob/main/labs/exercises/student/ex6_reset.ipynb) ([Colab](https://colab.research.google.com/github/rlvr-lab/rlvr-lab/blob/main/labs/exercises/student/ex6_reset.ipynb)). The faster-reset fallacy for a different agent.
# - Exercise 8, *Diagnosing a lengthening policy*: [student notebook](https://github.com/rlvr-lab/rlvr-lab/blob/main/labs/exercises/student/ex8_lengthening_policy.ipynb) ([Colab](https://colab.research.google.com/github/rlvr-lab/rlvr-lab/blob/main/labs/exercises/student/ex8_lengthening_policy.ipynb)). The longer-reasoning pitfall under per-rollout averaging.
#
# (ch10-bibliography)=
# ## Bibliography
#
# ```{bibliography}
# ```
