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
# # 4. Group Relative Policy Optimization
#
# Three fresh attempts at the connection-pool repair, same fixture, same budget, same assessment, end
# with rewards $[0, 1, 0]$. Without anyone labelling an edit, the pass is a comparison point for the two
# failures. GRPO turns such within-task comparisons into update coefficients, using a group of sampled
# outcomes where PPO would train a value network {cite}`shao2024deepseekmath`. This chapter builds its
# objective piece by piece and prices its characteristic failure: groups with nothing to
# compare.
#
# ```{admonition} Goals
# :class: tip
# After this chapter you can
#
# - compute group-relative coefficients, equation {eq}`ch4-advantage`, and the lone-pass coefficient
#   {eq}`ch4-lone-pass`;
# - read the clipped surrogate {eq}`ch4-surrogate` in ratio space and in probability space, and say what
#   clip-higher changes;
# - write the GRPO objective {eq}`ch4-objective` with its reference KL and find the per-token weight that
#   length normalisation gives each rollout {eq}`ch4-token-weight`;
# - compute the rollouts spent per informative group, and choose between a larger group and a
#   difficulty-targeted task mix.
# ```
#
# ## PPO and GRPO side by side
#
# Both can use an external check as reward, and both keep a frozen **reference policy** (the starting
# checkpoint) to penalise drift. They differ in where the baseline comes from {cite}`schulman2017ppo`.
#
# | | PPO | GRPO |
# | --- | --- | --- |
# | models held | policy, value function, reference, maybe a reward model | policy and reference; reward can be an external check |
# | trained | policy and value function | policy only |
# | baseline | learned value estimate $\hat V(h_k)$ | mean reward of the task's group |
# | credit granularity | per token or turn, through the value estimate | per trajectory, shared by all of its tokens |
# | rollouts per task | can be one | a group of $G$ |
# | typical failure | value error on long, sparse-reward trajectories | no reward gradient when every rollout in a group ties |
#
# GRPO saves the critic's memory and training and pays with $G$ rollouts per task. Everything in later
# chapters about records and isolation applies to both.
#
# ## Group-relative coefficients
#
# Sample $G$ complete rollouts for one task from a fixed behaviour policy $\pi_{\text{old}}$ (checkpoint,
# environment and decoding settings included) and let $R_i$ be their terminal rewards. Then
#
# $$
# \begin{gathered}
# \bar R = \frac{1}{G}\sum_{i=1}^{G} R_i, \qquad
# \sigma = \sqrt{\frac{1}{G}\sum_{i=1}^{G}\big(R_i - \bar R\big)^2},\\
# \hat A_i = \frac{R_i - \bar R}{\sigma + \varepsilon}.
# \end{gathered}
# $$ (ch4-advantage)
#
# The stabilizer $\varepsilon > 0$ keeps a tied group well defined. The divisor is $G$ (population
# standard deviation), not $G-1$: that choice rescales every coefficient, so it is part of the objective
# and must be recorded with the run. During the update the $R_i$ and $\hat A_i$ are constants.

# %%
from rlvr_lab import grpo

print("population std (the chapter's):", grpo.group_advantages([0.0, 1.0, 0.0]).round(6))
print("sample std (TRL's default):    ", grpo.group_advantages([0.0, 1.0, 0.0], std="sample").round(6))
print("tied group:                    ", grpo.group_advantages([1.0, 1.0, 1.0]))

# %% [markdown]
# The two failures get $-1/\sqrt 2$, the pass $\sqrt 2$, and the three sum to zero. A tied group gets
# zeros, never NaN. Note what $\hat A_i$ is *not*: the advantage {eq}`ch3-value` of chapter 3 is an
# expectation for one action at one history; $\hat A_i$ is an empirical, standardised score broadcast to
# every token of a whole trajectory. Centering alone is a rescaled leave-one-out baseline and harmless;
# dividing by $\sigma$, which every reward in the group helps set, makes the estimator a deliberate
# weighting choice rather than unbiased REINFORCE. And a false pass receives exactly the coefficient of a
# real one.
#
# ### The rarer the pass, the larger its weight
#
# With binary rewards and exactly one pass among $G$, the mean is $1/G$ and $\sigma = \sqrt{G-1}/G$, so the
# lone pass receives
#
# $$
# \begin{aligned}
# \hat A_{\text{pass}} &= \frac{1 - 1/G}{\sqrt{G-1}/G + \varepsilon}\\
# &\longrightarrow\; \sqrt{G-1} \quad (\varepsilon \to 0).
# \end{aligned}
# $$ (ch4-lone-pass)

# %%
import numpy as np

pass_coeff, fail_coeff = grpo.lone_pass_group_coefficients(16)
print(f"G=16: lone pass {pass_coeff:.2f}, each failure {fail_coeff:.2f}, sqrt(G-1) = {np.sqrt(15):.2f}")
for group in ([0, 1, 0, 0], [1, 1, 0, 0], [1, 0, 1, 1, 0, 0, 0, 0]):
    adv = grpo.group_advantages(group, eps=0.0)
    print(group, "sum of squares:", round(float(np.sum(adv ** 2)), 6), "= G")

# %% [markdown]
# A hard task where 1 of 16 attempts passes gives that pass $3.87$ and each failure $-0.26$; an easy task
# with one failure mirrors the signs. Every untied group has the same total squared weight $G$: a lone pass
# takes $G-1$ of those units, an even split spreads them out. This is also why the false-accept share of
# chapter 2 is not the false share of the *gradient*: false passes land mostly on hard tasks, where they are
# often the only pass and carry a coefficient near $\sqrt{G-1}$.

# %% mystnb={"figure": {"caption": "Group-relative coefficients. Top: the coefficient of each rollout in a group of three with rewards 0, 1, 0. Bottom: in a binary group of G with one pass, the lone pass's coefficient and a failure's coefficient against G, with the square root of G - 1 dotted and G = 16 marked.", "name": "fig-ch4-group-advantages"}, "image": {"alt": "Two stacked panels. Top: three bars, a positive one for the passing rollout between two equal negative ones. Bottom: against group size, the lone pass's coefficient rises like a square root, reaching 3.87 at G = 16, while a failure's coefficient stays slightly below zero, -0.26 at G = 16."}} tags=["hide-input"]
from rlvr_lab.figures import relations

relations.group_advantages_figure(group_rewards=(0.0, 1.0, 0.0))

# %% [markdown]
# ### Recorded: does a naive verifier amplify an exploit on the course's model?
#
# `experiments/exploit_amplification.py` (lab 4's comparison on five seeds) sets up the scenario above. A
# tiny model learns two easy task families from honest demonstrations. On a third family it only sees wrong
# attempts: for every training task, six near misses and one exploit (`os._exit(0)`, which the naive harness
# of chapter 6 scores as a pass). At step 0 it writes the exploit on 0 to 12.5 % of rollouts. The same warm
# start is then trained twice, rewarded by the naive harness and by the isolated verifier, and every group
# in which the exploit was rewarded is sorted by its make-up: the exploit as the lone pass, as one of
# several exploits, or beside an honest pass.
#
# **The exploit was amplified.** Under the naive reward its rate over the last five steps was 0.597
# [0.208, 0.986] of all rollouts; under the isolated verifier it faded to 0.004 [-0.002, 0.011]. The
# difference, 0.593 [0.206, 0.979], has a 95 % interval well above zero (five seeds). On the hard family the
# exploit crowded out the honest passes the policy had been finding there (true pass rate 0.135 to 0.039
# under the naive reward; 0.184 to 0.205 under isolation).
#
# **The lone pass was not the main route.** Lone passes carried 0.12 [-0.06, 0.30] of the exploit's
# positive advantage over a run, and 0.30 [-0.10, 0.70] in the first step. Groups with several exploits
# carried 0.64 [0.27, 1.02]. Equation {eq}`ch4-lone-pass` is the largest push *per rollout*, but a group with
# $k$ passes out of $G$ gives each $\sqrt{(G-k)/k}$, so together they get $\sqrt{k(G-k)}$: 2.65 for one pass
# at $G = 8$, 3.46 for two, 4.00 for four. This policy wrote the exploit unevenly, more on some tasks than
# others, so from the first steps many groups held two or more, and those groups pushed hardest. A false
# pass needs no lone-pass luck to take over; it only needs to beat the failures beside it.

# %%
from IPython.display import Markdown, display
from rlvr_lab import claims
from rlvr_lab.figures import experiments

display(Markdown(claims.table("exploit_amplification")))

# %% mystnb={"figure": {"caption": "Recorded exploit amplification on the course's model, five seeds: exploit rate and true pass rate per training step under the naive harness and under the isolated verifier, and where the naive run's exploit advantage came from.", "name": "fig-ch4-recorded-exploit"}, "image": {"alt": "Three stacked charts over training steps. Top: the share of rollouts that use the exploit, rising under the naive harness and fading under the isolated verifier. Middle: the true pass rate of the same rollouts. Bottom: stacked bars of the exploit's positive advantage per step, mostly from groups with several exploits."}} tags=["hide-input"]
experiments.recorded_exploit_figure()

# %% [markdown]
# ## The clipped surrogate
#
# Several gradient steps on one batch move the policy $\pi_\theta$ away from the $\pi_{\text{old}}$ that
# sampled it. For token $t$ of rollout $i$ (only sampled policy tokens; tool output and prompt text are
# masked out and do not count towards the length $|o_i|$), the probability ratio and the clipped surrogate
# are
#
# $$
# \begin{aligned}
# r_{i,t}(\theta) &= \frac{\pi_\theta(o_{i,t} \mid x_{i,t})}{\pi_{\text{old}}(o_{i,t} \mid x_{i,t})},\\
# L_{i,t} &= \min\!\Big(r_{i,t}\hat A_i,\\
# &\qquad\quad \mathrm{clip}\big(r_{i,t}, 1-\epsilon_{\text{low}}, 1+\epsilon_{\text{high}}\big)\hat A_i\Big).
# \end{aligned}
# $$ (ch4-surrogate)
#
# $\pi_{\text{old}}$ must be the distribution the tokens were *actually* drawn from, after temperature and
# top-$k$/top-$p$, and strictly positive there. With $\hat A > 0$ the surrogate stops growing once $r$
# passes $1+\epsilon_{\text{high}}$; with $\hat A < 0$ it stops falling below $1-\epsilon_{\text{low}}$.
# Moves in the *wrong* direction stay unclipped and keep being penalised:

# %%
ratios = [0.6, 0.8, 1.0, 1.2, 1.4]
print("ratio            ", ratios)
print("A=+1, eps=0.2    ", grpo.clipped_surrogate(ratios, [1.0] * 5, 0.2).tolist())
print("A=-1, eps=0.2    ", grpo.clipped_surrogate(ratios, [-1.0] * 5, 0.2).tolist())
print("A=+1, 0.2 / 0.28 ", grpo.clipped_surrogate(ratios, [1.0] * 5, 0.2, 0.28).tolist())

# %% [markdown]
# Clipping caps each token's *incentive*; it is not a trust region. What it does **not** bound:
#
# - **the ratio itself.** A clipped token has zero gradient from its own term, but shared parameters and
#   other tokens' terms keep moving it, so ratios well outside the interval are normal after a few passes;
# - **moves in the wrong direction**, which stay unclipped (above);
# - **the sequence.** Each token is clipped alone; a rollout's probability is the product of its token
#   ratios, and fifty tokens each at $1.2$ multiply to about 9,000;
# - **tokens nobody sampled.** The objective only sees sampled tokens; probability mass can move among
#   the alternatives freely;
# - **the divergence from the reference.** That is the KL term's job, and its weight decides how much.
#
# So production runs monitor the ratio distribution, the clipped fractions and the divergence directly.
#
# ### The same clip in probability space
#
# A ratio bound is a very different bound in absolute probability. With $\epsilon = 0.2$, a token already
# at $p = 0.9$ stops being rewarded only at $0.9 \times 1.2 = 1.08$, a probability it can never reach, so
# the clip never binds. A rare alternative at $p = 0.01$ loses its incentive after gaining just $0.002$.
# Dominant tokens consolidate while rare ones climb slowly: one route to the entropy collapse of chapter 7.
# "Clip-higher" widens only the upper side, $\epsilon_{\text{high}} > \epsilon_{\text{low}}$
# {cite}`yu2025dapo`.

# %%
for p in (0.9, 0.01):
    low, high = grpo.clip_probability_bounds(p, 0.2)
    print(f"p={p}: positive incentive stops at {high:.3f} (headroom {high - p:+.3f})")

# %%
from rlvr_lab.figures import widgets

widgets.clip_explorer(eps_low=0.2, eps_high=0.2, p=0.01)

# %% mystnb={"figure": {"caption": "The clipped surrogate with eps_low = 0.2 and eps_high = 0.28. Top: the surrogate against the token ratio r for a positive and a negative advantage. Bottom: the probability above which a positive-advantage token stops being pushed up, against its current probability; the token at p = 0.01 is marked with its headroom.", "name": "fig-ch4-clip"}, "image": {"alt": "Two stacked panels. Top: two piecewise-linear curves of the surrogate against the ratio; each is flat beyond the clip in the direction of its advantage. Bottom: on a log axis, the clip threshold p times 1.28 against the current probability p, with a horizontal line at probability 1 and the point at p = 0.01 marked."}} tags=["hide-input"]
relations.clip_figure(eps_low=0.2, eps_high=0.28, p=0.01)

# %% [markdown]
# ## The reference penalty and the objective
#
# A frozen reference policy $\pi_{\text{ref}}$ (usually the pre-RL checkpoint, a different model identity
# from $\pi_{\text{old}}$) anchors the policy. With $u_{i,t} = \pi_{\text{ref}}/\pi_\theta$ at the
# sampled token, the per-token penalty
#
# $$
# D_{i,t} = u_{i,t} - \log u_{i,t} - 1
# $$ (ch4-kl)
#
# is never negative, is zero exactly when the two probabilities agree, and averages to
# $\mathrm{KL}(\pi_\theta \,\|\, \pi_{\text{ref}})$ under $\pi_\theta$. The tokens it is averaged over
# were drawn from the behaviour policy $\pi_{\text{old}}$, not from $\pi_\theta$. The two coincide only on
# the first pass over rollouts sampled by the current weights. After that pass, and on every pass when the
# sampler runs ahead of the learner (the `cpu` and `gpu` presets sample the next batch while the current
# one trains, so each batch is one update old when it is used), the average is an approximation that
# ignores the ratio $r_{i,t}$ (an importance-weighted version would multiply each term by it). With one or two passes and ratios near 1 the
# error is small; with many passes, or stale rollouts, the logged KL is not the KL of the current policy. The plain log ratio has the same
# mean but can be negative for a single token, which would sometimes reward drift. Putting the pieces
# together, GRPO maximises
#
# $$
# \begin{aligned}
# J_{\text{GRPO}}(\theta) = \frac{1}{G}\sum_{i=1}^{G}\frac{1}{|o_i|}\sum_{t=1}^{|o_i|}
# &\Big[L_{i,t}(\theta)\\
# &- \beta_{\text{KL}}\,D_{i,t}(\theta)\Big],
# \end{aligned}
# $$ (ch4-objective)
#
# and frameworks minimise its negative. `rlvr_lab.grpo.grpo_loss` computes exactly this, plus the
# diagnostics a run should log:

# %%
import torch

torch.manual_seed(0)
B, T = 3, 5                                   # the [0, 1, 0] group, 5 completion positions each
advantages = torch.as_tensor(grpo.group_advantages([0.0, 1.0, 0.0]), dtype=torch.float64)
old_logp = torch.log(torch.full((B, T), 0.5, dtype=torch.float64))
logp = old_logp + 0.3 * torch.randn(B, T, dtype=torch.float64)   # the policy after a few steps
ref_logp = old_logp.clone()
mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 1, 0, 0, 0]], dtype=torch.float64)
loss, diag = grpo.grpo_loss(logp, old_logp, ref_logp, advantages, mask,
                            eps_low=0.2, eps_high=0.28, beta=0.04, norm="sequence")
print(f"loss {loss.item():+.4f}")
print({k: round(v, 4) for k, v in diag.items()})

# %% [markdown]
# Standardising rewards, clipping ratios and normalising by length all depart from the plain expected
# return {eq}`ch1-objective`, so record these settings with the weights and judge the result by fresh
# evaluation, not by the loss.
#
# ## Length normalisation
#
# At the start of an update ($r = 1$), rollout $i$ contributes
#
# $$
# \frac{\hat A_i}{|o_i|}\sum_{t=1}^{|o_i|}\nabla_\theta \log \pi_\theta(o_{i,t} \mid x_{i,t}),
# $$ (ch4-token-weight)
#
# so each of its tokens carries weight $\hat A_i/|o_i|$. For failures ($\hat A_i < 0$) a longer rollout
# spreads the penalty thinner; for passes a shorter one concentrates the reward. The pressure favours
# concise passes and verbose failures {cite}`liu2025drgrpo`. Two failures with the same coefficient, one of
# 128 tokens and one that runs to a 4,096-token cap:

# %%
weights = grpo.per_token_weights([-1.0, -1.0], [128, 4096], norm="sequence")
print("per-sequence:", weights, "ratio", float(weights[0] / weights[1]))
print("constant:    ", grpo.per_token_weights([-1.0, -1.0], [128, 4096], norm="constant", constant=4096))

# %% [markdown]
# The short failure is punished 32 times harder per token. Dividing by one constant shared by the group or
# batch (the mean length, or the enforced cap) instead of $|o_i|$ makes every token's weight proportional to
# $\hat A_i$ alone. Whether lengths then actually drift depends on how token gradients align across
# sequences, which chapter 7 measures.

# %% mystnb={"figure": {"caption": "Per-token weights of failures of five lengths that share the coefficient A = -1, under the per-rollout divisor and under a constant divisor. The shortest failure is 32 times heavier per token than the longest under the per-rollout divisor.", "name": "fig-ch4-length-weights"}, "image": {"alt": "Grouped bars on a log axis for rollout lengths 128, 512, 1024, 2048 and 4096 tokens. Under the per-rollout divisor the bars fall as the length grows; under the constant divisor all five bars are equal."}} tags=["hide-input"]
relations.length_weights_figure(advantage=-1.0, lengths=(128, 512, 1024, 2048, 4096))

# %% [markdown]
# ## Zero-contrast groups and the price of contrast
#
# When every rollout in a group earns the same reward, every $\hat A_i$ is zero, every surrogate term is
# zero, and only the KL term moves the policy. Some recipes therefore **filter zero-variance groups** out of
# the batch and sample more until it is full of contrastive groups (DAPO's dynamic sampling
# {cite}`yu2025dapo`). That changes more than efficiency: the filtered groups also leave the KL average, so
# drift on tasks the policy always or never solves is no longer penalised at all, and the KL the run logs
# describes only the contrastive tasks. The per-batch normaliser changes too, so a filtered and an
# unfiltered run with the same $\beta_{\text{KL}}$ do not apply the same pull towards the reference. Equal rewards do not mean equal behaviour; the binary score
# just cannot tell the attempts apart. Chapter 1's contrast probability {eq}`ch1-contrast` tells how often
# this happens, and $G/P_c$ is the number of rollouts spent per group that carries any signal. The worked
# update samples 8 rollouts for each of 512 tasks, 30 turns of 512 tokens each:

# %%
from rlvr_lab import rewards

tokens_per_rollout = 30 * 512
print(f"{tokens_per_rollout:,} tokens per rollout, {512 * 8 * tokens_per_rollout / 1e6:.1f} M tokens per step")
print(f"{'lever':18s} {'G':>3s} {'p':>5s} {'P_c':>5s} {'rollouts/informative':>21s}")
for lever, G, p in [("current task mix", 8, 0.05), ("double the group", 16, 0.05), ("target difficulty", 8, 0.50)]:
    print(f"{lever:18s} {G:3d} {p:5.0%} {rewards.contrast_probability(G, p):5.2f} "
          f"{rewards.rollouts_per_informative_group(G, p):21.1f}")

# %% [markdown]
# Doubling the group raises contrast from 0.34 to 0.56 but *raises* the cost per informative group from
# 23.8 to 28.6 rollouts. Targeting tasks near a 50 % pass rate cuts it to 8.1, about 2.9 times cheaper, at
# the price of changing which tasks the policy trains on, which the run must log. The metric counts
# informative groups, not the information inside them: a group of 16 does estimate its baseline more
# precisely, which can justify it once getting *any* contrast is no longer the bottleneck.

# %%
widgets.contrast_explorer(group_size=16, p=0.05)

# %% [markdown]
# ## Three recipes on one warm start
#
# Two published changes to GRPO's loss follow from this section and the last. **Dr. GRPO**
# {cite}`liu2025drgrpo` removes both biases it names: it stops dividing by the group's standard deviation,
# which gives a group with a lone pass or a lone failure the largest coefficients, and it divides every
# rollout by one constant instead of its own length. **DAPO** {cite}`yu2025dapo` averages over every scored
# token of the batch, so each token weighs the same whatever its rollout's length, and refills each step
# with fresh tasks until it holds enough groups with contrast. All three are settings of the course's
# trainer: `norm` (`sequence`, `constant`, `token`), `scale` (`group`, `none`) and `dynamic_sampling`.
#
# Do they matter on the course's model? Each of three seeds (0, 1, 2) trained the cpu preset three times
# from the same warm start, one recipe each; the intervals are 95 % t intervals over the seeds.

# %%
display(Markdown(claims.table("loss_variants")))

# %% [markdown]
# All three recipes raised held-out pass@1 in every seed. Paired on the seed, Dr. GRPO minus GRPO is
# -0.019 [-0.139, 0.102] and DAPO minus GRPO is +0.038 [-0.052, 0.128]: both intervals include zero, so
# three seeds cannot tell the recipes apart on this model. The cost of dynamic sampling is clear: 2,667
# [445, 4,888] more rollouts per run, about half as many again, so that every update holds only groups with
# contrast, where GRPO's batches had 35 % of their groups tied. Whether that trade pays depends on how dear
# a rollout is, which is the question chapter 8 measures.
#
# ## Summary
#
# - GRPO replaces the critic with a group: coefficients {eq}`ch4-advantage` are standardised rewards,
#   shared by every token of a rollout, and a lone pass gets about $\sqrt{G-1}$ {eq}`ch4-lone-pass`,
#   whether it is real or false.
# - The clipped surrogate {eq}`ch4-surrogate` caps per-token incentives in ratio space, which in
#   probability space protects dominant tokens and starves rare ones; clip-higher loosens the upper side.
# - The objective {eq}`ch4-objective` adds a non-negative per-token KL {eq}`ch4-kl`; per-sequence length
#   normalisation gives each token weight $\hat A_i/|o_i|$ {eq}`ch4-token-weight`, favouring short passes
#   and long failures.
# - Tied groups carry no reward gradient; at low pass rates, targeting difficulty buys contrast more cheaply
#   than larger groups.
# - Dr. GRPO (no std division, one constant denominator) and DAPO (token-level loss, dynamic sampling) are
#   settings of the same trainer; on the course's model three seeds show no difference in pass@1 from GRPO,
#   and dynamic sampling costs about half as many rollouts again.
#
# ## Exercises and labs
#
# - Exercise 4, *A mixed task pool and its silent groups*:
#   [student notebook](https://github.com/rlvr-lab/rlvr-lab/blob/main/labs/exercises/student/ex4_silent_groups.ipynb)
#   ([Colab](https://colab.research.google.com/github/rlvr-lab/rlvr-lab/blob/main/labs/exercises/student/ex4_silent_groups.ipynb)).
# - Exercise 8, *Diagnosing a lengthening policy*:
#   [student notebook](https://github.com/rlvr-lab/rlvr-lab/blob/main/labs/exercises/student/ex8_lengthening_policy.ipynb)
#   ([Colab](https://colab.research.google.com/github/rlvr-lab/rlvr-lab/blob/main/labs/exercises/student/ex8_lengthening_policy.ipynb)).
# - Lab 1, *GRPO training*, and lab 5, *Pathologies* (symmetric clipping versus clip-higher, per-sequence
#   versus constant normalisation), in the [labs folder](https://github.com/rlvr-lab/rlvr-lab/tree/main/labs).
