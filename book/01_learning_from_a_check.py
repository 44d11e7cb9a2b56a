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
# # 1. Learning from a check
#
# Our repair agent can already fix the bugs its demonstrations showed it. This chapter asks what it takes
# to let it improve on bugs nobody demonstrated, using only a program that says *pass* or *fail*.
#
# ```{admonition} Goals
# :class: tip
# After this chapter you can
#
# - say what a policy, a rollout and a verifiable reward are, and write the objective they define;
# - explain why a baseline turns one pass/fail score into updates of opposite sign;
# - compute the probability that a group of attempts contains both a pass and a failure, and see why
#   more rollouts cannot rescue a task the policy never solves;
# - name the boundary a check needs once it becomes the thing being optimised.
# ```
#
# ## Where imitation runs out
#
# A policy fine-tuned on curated demonstrations knows the recoveries that somebody recorded. Long,
# interactive tasks keep producing situations that nobody recorded: an unfamiliar error message, a
# dependency that changed, a source file the demonstrations never opened. Two obvious fixes both fall
# short:
#
# - **More imitation** needs a person to produce the missing recovery first. For intricate,
#   non-deterministic bugs such demonstrations are rare and expensive.
# - **Test-time selection** (sample many attempts, keep one the tests accept) works, but it pays the
#   sampling bill on *every* future task and leaves the policy exactly as likely to fail as before.
#
# What the agent does have is a set of versioned fixtures and acceptance tests. They can grade an attempt
# that no human has seen, including every intermediate action nobody labelled. Reinforcement learning
# uses that grade directly: a verdict becomes a gradient step that makes passing behaviour more likely.
#
# That move changes the job of the tests. Before, a weak assertion miscounted one evaluation. Now the
# optimizer *searches* the test suite for whatever earns reward, and any flaw it finds is written into
# the weights. Four pieces have to work together for the update to be worth having:
#
# 1. a **reward** that measures correctness without shortcuts the optimizer can take (chapter 2);
# 2. an **update rule** that turns one terminal verdict into per-token coefficients across many turns
#    (chapters 3 and 4);
# 3. a **rollout record** of exactly what context the policy saw and what tokens it produced
#    (chapter 5);
# 4. a **fleet** of sandboxes, verifiers and trainers sized so that complete groups of rollouts keep
#    arriving (chapter 8).
#
# ## Policies, rollouts and rewards
#
# The agent never sees the container it works in. It sees a transcript: the task, its own tool calls,
# and the (possibly truncated) outputs the runtime sends back. Call that delivered transcript at turn $k$
# the **history** $h_k$. The **policy** $\pi_\theta(a_k \mid h_k)$, with weights $\theta$, is a
# distribution over the next response $a_k$: a tool call or a final answer. An episode lasts at most $H$
# turns, $k = 0, \dots, H-1$; later chapters use $t$ for token positions inside a response, so the two
# indices never collide.
#
# A **rollout** $\tau$ is one complete, recorded run: task `pool_repair_01`, sandbox `pool_fixture_v1`,
# acceptance harness `repair_accept_v1`, a specific checkpoint, and every turn in between. A **reward**
# is a number computed from the rollout by a declared rule. In the simplest and most common setting,
# intermediate turns earn nothing and a single terminal score $R(\tau)$ arrives at the end. With no
# discounting, the return of the whole rollout is that score, and training maximises its expectation:
#
# $$
# J(\theta) \;=\; \mathbb{E}_{\tau \sim \pi_\theta}\big[\,R(\tau)\,\big].
# $$ (ch1-objective)
#
# The expectation runs over everything random: the policy's samples, which task is drawn, and the
# environment's own noise (test timing, scheduling). Objective {eq}`ch1-objective` is only as good as
# $R$: raising it raises *measured* reward, and chapter 2 is about the distance between that and the
# task.
#
# ```{admonition} Reinforcement learning with verifiable rewards (RLVR)
# :class: note
# Policy optimisation whose reward comes from an automated check of stated properties of the policy's
# output or interaction (a test suite, a type checker, a proof checker) rather than from a learned
# preference model or a human rating {cite}`lambert2024tulu3`. It needs no step-by-step demonstrations,
# but what it can teach is bounded by what the check covers and by how well the check is protected from
# the thing it grades.
# ```
#
# With only a terminal reward, every turn of a rollout sees the same *reward-to-go* (the sum of the
# rewards still to come), so the reward alone cannot say which turn mattered:

# %%
from rlvr_lab import credit, rewards

credit.reward_to_go([0, 0, 0, 0, 1])   # five turns, one terminal pass: every turn is credited with 1

# %% [markdown]
# ## Baselines: one score, two directions
#
# A policy-gradient step nudges up the log-probability of the sampled actions in proportion to a
# score. If the score is the raw reward, a failure ($R=0$) contributes nothing at all. Subtracting a
# **baseline** $b(h_0)$ (a number that may depend on the task, but not on the actions sampled in this
# rollout) fixes that: the centred score $R(\tau) - b(h_0)$ is positive for results better than expected
# and negative for worse ones {cite}`williams1992reinforce`. The baseline can be a constant, a running
# mean of recent outcomes, or a learned value estimate; it does not have to be a separate critic network.

# %%
baseline = 0.25
for outcome in ([0, 0, 1], [0, 0, 0]):   # a pass and a failure, three turns each
    print(outcome, "->", credit.reward_to_go(outcome) - baseline)

# %% [markdown]
# The pass pushes every one of its turns up by 0.75; the failure pushes every one of its turns down by
# 0.25. With a baseline of zero the failure would push nothing. Notice what the centred score does *not*
# do: it treats the decisive tool call and the useless detour of the same rollout identically. That is
# the credit-assignment problem, named by Minsky for any learner that gets one success signal for many
# internal decisions {cite}`minsky1961steps`. Chapter 3 spends tokens to separate turns; chapter 4
# computes the baseline from a group of attempts instead of training a critic.
#
# ## Exploration and the zero-contrast problem
#
# An update can only learn from rollouts that were actually sampled. If a task is never solved, every
# reward is 0; a baseline that tracks the outcomes (such as a group mean) is then 0 too, and every
# centred score vanishes. A fixed positive baseline would produce a gradient, but one that pushes down
# every sampled action alike, with nothing to prefer. Either way, without *variation* in the outcome
# there is no contrast to learn from, however many rollouts are spent.
#
# Suppose the policy solves a task with probability $p$ per independent attempt and we sample a group of
# $G$ attempts. At least one of them passes with probability $1-(1-p)^G$, which is the binding condition
# when $p$ is small. The group method of chapter 4 also needs at least one *failure* in the group, so the
# probability that a group carries contrast is
#
# $$
# P_c(G, p) \;=\; 1 - p^{G} - (1-p)^{G}.
# $$ (ch1-contrast)
#
# Equation {eq}`ch1-contrast` is zero at $p=0$ for every $G$: no group size rescues a task the policy
# cannot solve. In practice the cold start is broken by a supervised warm start, a curriculum that
# starts easy, or intermediate milestones in the reward.

# %%
for G, p in [(2, 0.10), (8, 0.05), (8, 0.50), (64, 0.0)]:
    pc = rewards.contrast_probability(G, p)
    cost = rewards.rollouts_per_informative_group(G, p)
    print(f"G={G:2d}  p={p:.2f}  P_c={pc:.2f}  rollouts per informative group={cost:.1f}")

# %% [markdown]
# Groups of two at a 10 % pass rate carry contrast only 18 % of the time; groups of eight at 5 % are
# silent about two times in three. The last column divides the group size by $P_c$: the rollouts you pay
# for each group that can move the weights. Move the sliders to find where contrast is cheap.

# %%
from rlvr_lab.figures import widgets

widgets.contrast_explorer(group_size=8, p=0.05)

# %% [markdown]
# The figure below draws the same relation for four group sizes and marks the smallest worked case, a
# pair of attempts at a 10 % pass rate. Contrast is reliable only at middling pass rates, and the cost per
# informative group, $G / P_c$ rollouts, explodes at both ends. That cost never falls as the group grows: a
# pair and a triple cost exactly the same at every pass rate (both come to $1/(p(1-p))$), and from three on
# it grows with every added attempt, so the smallest group is always among the cheapest ways to buy one
# informative group. At low pass rates it grows slowly (at $p = 0.05$: about 21 rollouts for $G = 2$, 24 for $G = 8$, 40 for $G = 32$), because
# a small group is then almost always silent. What a larger group buys is contrast in more of the groups a
# batch holds ($P_c$ = 0.10, 0.34 and 0.81 for those three sizes), not cheaper contrast.

# %% tags=["hide-input"] mystnb={"figure": {"caption": "Contrast and its price. Top: the probability that a group holds at least one pass and one failure, against the pass rate p, for four group sizes. Bottom: rollouts spent for each group that carries contrast (log scale). The dot marks G = 2 at p = 0.10.", "name": "fig-ch1-contrast"}, "image": {"alt": "Two stacked line charts against pass rate p from 0 to 1, one curve per group size 2, 8, 16 and 32. Top: contrast probability; the G = 2 curve peaks at 0.5 in the middle, larger groups rise faster and stay close to 1 over most of the range. Bottom: rollouts per informative group on a log axis, each curve lowest in the middle and climbing steeply towards p = 0 and p = 1."}}
from rlvr_lab.figures import relations

relations.contrast_figure(group_size=2, p=0.10, group_sizes=(2, 8, 16, 32))

# %% [markdown]
# ## A check that is being optimised needs a wall
#
# Sampling thousands of attempts explores the environment *and* the grader. Any permission left loose
# (reading the hidden tests, editing the test runner, changing an exit code) will eventually be found,
# because it earns reward more cheaply than a real fix. The assessment therefore has to sit behind a
# protected boundary: the candidate's code runs in a sandbox; the verifier runs with separate privileges,
# its own storage and read-only access to private tests. Chapter 6 builds that boundary and attacks it.
# Even a perfectly isolated check only certifies what it covers, so a held-out evaluation on different
# tasks is still needed to tell competence from fitting the training verifier.
#
# ## Summary
#
# - RLVR replaces demonstrations with a programmatic check; the check becomes the objective
#   {eq}`ch1-objective`, and its flaws become the policy's habits.
# - A terminal reward credits every turn equally; a baseline makes passes and failures push in opposite
#   directions but does not tell turns apart.
# - Learning needs contrast: a group carries it with probability {eq}`ch1-contrast`, which is zero for
#   tasks the policy never solves and small at low pass rates unless the group is large (at $p = 0.05$:
#   0.34 for $G = 8$, 0.81 for $G = 32$, 0.96 for $G = 64$); each informative group then costs more
#   rollouts, $G / P_c$, which never falls as $G$ grows (pairs and triples tie; from three on it rises).
# - The check has to be protected before it is optimised against.
#
# ## Exercises and labs
#
# - Exercise 4, *A mixed task pool and its silent groups*:
#   [student notebook](https://github.com/rlvr-lab/rlvr-lab/blob/main/labs/exercises/student/ex4_silent_groups.ipynb)
#   ([open in Colab](https://colab.research.google.com/github/rlvr-lab/rlvr-lab/blob/main/labs/exercises/student/ex4_silent_groups.ipynb)).
# - Lab 1, *GRPO training*, trains the tiny code model and plots reward and pass rate as contrast appears:
#   see the [labs folder](https://github.com/rlvr-lab/rlvr-lab/tree/main/labs).
