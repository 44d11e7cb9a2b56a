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
# # 7. Training pathologies: entropy, length and clipping
#
# (ch7-goals)=
# ## Goals
#
# After this chapter you can:
#
# - compute token entropy, equation {eq}`ch7-token-entropy`, and say which distribution a logged entropy describes;
# - use {ref}`the diagnostics table <ch7-table-diagnostics>` to turn a worrying training curve into a hypothesis and a
#   check, instead of a conclusion;
# - explain how per-rollout length normalisation favours long failures and short successes,
#   equation {eq}`ch7-weight`, and how a constant denominator removes that pressure;
# - show why a symmetric ratio clip lets dominant tokens consolidate while rare tokens stall,
#   equation {eq}`ch7-headroom`, and what clip-higher changes;
# - design a recovery test that measures tool behaviour under a controlled perturbation rather than reading
#   self-correction text.

# %% [markdown]
# ## Intuition: curves do not explain themselves
#
# A GRPO run can be numerically healthy, with an isolated grader and clean gradient steps, and still push an
# agent towards something nobody wanted. The trouble is that the usual curves are ambiguous. Rising reward
# with longer rollouts might mean the policy has learned to test its patch before submitting; it might mean
# it repeats failed edits until the budget runs out; it might mean that the tasks which happened to finish
# grading before a timeout changed. Each of these needs a different fix, so each observation should become
# a **hypothesis with a check**, run under fixed fixtures, sampling settings, reward function and grader
# version, so that a change in measured behaviour is not a change in the measurement.

# %% [markdown]
# (ch7-entropy)=
# ## Diversity and token entropy
#
# When a policy settles early on one failing strategy, its rollouts on an unsolved task start to look
# alike: the same tool calls, the same edit. It stops exploring precisely where exploration is needed.
# Token entropy measures the narrowing at the scale of one decision. For a delivered prefix $x$ and
# vocabulary $\mathcal{V}$,
#
# ```{math}
# :label: ch7-token-entropy
# H\big(\pi(\cdot \mid x)\big) = -\sum_{v \in \mathcal{V}} \pi(v \mid x)\,\log \pi(v \mid x),
# ```
#
# in nats with natural logarithms, reading $0 \log 0$ as 0. A logged entropy is only meaningful with two
# qualifiers. **Which distribution?** The raw softmax of the network, or the distribution after temperature,
# top-$k$, top-$p$ or a grammar constraint, which is what the sampler actually used; decoding settings move
# the number without touching a weight. **Which prefixes?** Entropy averaged over a batch changes when the
# task mix or the prompt lengths change.
#
# The cell below shows the first qualifier on one tiny policy: same weights, same prefixes, three decoding
# configurations. The policy is *untrained* (random weights), which keeps the cell fast but makes it an
# extreme case: a random network's softmax is nearly uniform, so only a truncation such as top-$k$ moves its
# entropy much, while temperature barely does. The cell shows that the logged number depends on the decoding
# settings with the weights fixed; it does not show how much a given setting moves a trained policy.

# %%
import numpy as np
import torch
from rlvr_lab.grpo import token_entropy
from rlvr_lab.policy import (
    SamplingConfig,
    build_model,
    completion_logprobs,
    sample,
    train_tokenizer,
    transformed_logprobs,
)
from rlvr_lab.tasks import make_suite

suite = make_suite(seed=0, families=("arith", "listmap"), problems_per_family=4)
tok = train_tokenizer([t.prompt + t.solution for t in suite], vocab_size=320)
model = build_model(tok, "tiny", seed=0).eval()
prompts = [
    [tok.bos_token_id] + tok(t.prompt, add_special_tokens=False)["input_ids"]
    for t in suite[:8]
]
base = SamplingConfig(temperature=1.0, max_new_tokens=12)
samples = sample(
    model,
    prompts,
    base,
    tok.eos_token_id,
    tok.pad_token_id,
    torch.Generator().manual_seed(0),
)
seqs = [s.prompt_ids + s.completion_ids for s in samples]
masks = [[0] * len(s.prompt_ids) + [1] * len(s.completion_ids) for s in samples]
with torch.no_grad():
    _, mask, logits = completion_logprobs(
        model, seqs, masks, base, tok.pad_token_id, with_logits=True
    )

for name, cfg in [
    ("raw softmax (T = 1)", base),
    ("temperature 0.7", SamplingConfig(temperature=0.7)),
    ("temperature 0.7, top-k 5", SamplingConfig(temperature=0.7, top_k=5)),
]:
    h = token_entropy(transformed_logprobs(logits, cfg), mask)
    print(
        f"{name:>26}: mean entropy {float(h):.3f} nats over {int(mask.sum())} sampled positions"
    )
print(f"{'uniform over the vocabulary':>26}: {np.log(len(tok)):.3f} nats")

# %% [markdown]
# The random policy sits near the uniform ceiling; temperature 0.7 hardly changes that, and top-$k$ = 5
# caps it at $\log 5 \approx 1.6$ nats by construction. A trained policy is already peaked at most
# positions (the course's warm start averages well under one nat), so the same settings move its entropy by
# different amounts, and the right comparison is always two numbers taken under one stated decoding
# configuration. Even with the decoding and the prefix population held fixed, low entropy is not
# automatically bad: a closing bracket or a
# fixed tool schema *should* be nearly deterministic. Rather than one global entropy threshold, look at
# diversity where it matters, in the actions and candidates the policy produces on tasks it has not yet
# solved.
#
# Equal rewards inside a group pose the same kind of puzzle. A group in which every rollout ties gives no
# reward gradient ({doc}`04_grpo`), but the reason can be that diverse attempts all failed, that diverse
# correct solutions all passed, or that the grader cannot tell partial progress from none. Only the logs of
# the trajectories can separate these.

# %% [markdown]
# (ch7-table-diagnostics)=
# ### From an observation to a check
#
# | What you observe | What it could mean | A useful next check |
# | --- | --- | --- |
# | Entropy falls and actions repeat on unsolved tasks | exploration has narrowed; or decoding constraints changed; or the task mix changed | compare action and candidate diversity on fixed diagnostic fixtures under the same sampling configuration |
# | More groups with equal rewards | tasks mastered; tasks persistently failed; or the assessment cannot make the distinction | split all-pass, all-fail and unresolved groups; inspect test coverage and reward components |
# | More generated tokens, acceptance flat | necessary checking; unproductive repetition; or a change in population or termination | compare lengths by outcome and by task family, including budget stops and unavailable verdicts |
# | Training reward up, independent assessment not | useful adaptation; a reward-specific shortcut; or a grading change | audit the candidates and the reward components, then test the identified checkpoint under the independent protocol |
#
# No row proves a mechanism or prescribes a fix; each narrows the search. The course's trainer logs the
# inputs these checks need: `rlvr_lab.train.metrics.group_outcomes` splits groups into all-pass, all-fail,
# unresolved and contrastive, and `length_by_outcome` reports mean length per verdict.

# %% [markdown]
# (ch7-length)=
# ## Output length
#
# Tokens, tool calls and wall time measure different costs, and a long trajectory is not automatically a
# wasteful one: it may hold the extra test run that made the patch correct, while a short one may be an early
# give-up. Mean length is therefore nearly useless on its own. Look at length **distributions split by
# outcome** (pass, fail, pending, unknown). A flat average reward can hide an expensive migration: cheap
# syntax failures early in training turning into long tool loops that still fail.
#
# The first mechanism to audit when failures grow longer is the objective itself, the per-token weight
# {eq}`ch4-token-weight` of the GRPO chapter. At the start of an update,
# with every ratio equal to 1, GRPO with per-rollout averaging gives each policy token of rollout $i$ the
# weight
#
# ```{math}
# :label: ch7-weight
# w_i^{\text{seq}} = \frac{\hat A_i}{|o_i|}
# \quad\text{versus}\quad
# w_i^{\text{const}} = \frac{\hat A_i}{L},
# ```
#
# where $L$ is one constant shared by the group or batch (the mean length, or the enforced cap). With the
# per-rollout divisor, a failure ($\hat A_i < 0$) spreads its penalty thinner the longer it runs, and a
# success concentrates its reward the shorter it is {cite}`liu2025drgrpo`. Two failures with the same
# coefficient, one of 128 tokens and one of 4,096:

# %%
from rlvr_lab.grpo import per_token_weights

adv, lengths = [-1.0, -1.0], [128, 4096]
seq = per_token_weights(adv, lengths, norm="sequence")
const = per_token_weights(adv, lengths, norm="constant", constant=4096)
print(
    f"per-rollout divisor: short failure's tokens are pushed down {seq[0] / seq[1]:.0f}x harder"
)
print(f"constant divisor:    ratio {const[0] / const[1]:.0f}x")

# %% mystnb={"figure": {"caption": "Length bias of the per-rollout divisor: the size of the per-token weight against rollout length for a failure and a success, and under a constant divisor of 2048 tokens.", "name": "fig-ch7-length-bias"}, "image": {"alt": "A log-log chart of per-token weight against rollout length from 64 to 4096 tokens. The failure and success lines under the per-rollout divisor fall together along a straight line; the constant-divisor line is flat."}} tags=["hide-input"]
from rlvr_lab.figures import chapter

chapter.length_bias_figure(constant=2048)

# %% [markdown]
# These scalar weights describe the push on each token, not the resulting drift in length, which depends on
# how token gradients line up across sequences. The experiment that separates the two is direct: train the
# same diagnostic tasks under the per-rollout and the constant-denominator objectives and compare failure
# lengths. Growth that survives the constant denominator is more likely useful work, such as extra checks
# the reward happens to favour; lab 5 runs this comparison on the course's model.
#
# If shorter outputs are genuinely wanted, a length term in the reward must keep the order of the rewards
# chapter ({doc}`02_verifiable_rewards`): with $R = C + \lambda_f F - \lambda_l\,\text{len}$ and
# $\text{len} \in [0, 1]$, every pass outranks every failure only when $\lambda_f + \lambda_l < 1$.

# %% [markdown]
# ### Recorded: failing length under both objectives
#
# `experiments/length_norm.py` runs that experiment on five seeds, in a regime where failures *can* grow:
# a 64-token budget against answers of about 11 tokens, and a task mix with a family the warm start never
# saw, so most rollouts fail. The constant arm divides by the first batch's mean completion length (about
# 11.3 tokens), not by the budget, so both arms take steps of the same average size and differ only in how
# the weight is spread across lengths. The stored result (`rlvr_lab.claims`):
#
# **The direction is suggested, not established.** Over 20 steps failing rollouts grew by 1.00
# [-0.18, 2.17] tokens under per-sequence normalisation (in four seeds of five) and by 0.06 [-0.84, 0.96]
# under the constant. The difference in growth, 0.94 [-0.64, 2.52] tokens, and in the final failing length,
# 0.86 [-0.22, 1.94], both have 95 % intervals that include zero. These failures stop with the end token,
# 90 % of them after 8 to 17 tokens, and none reached the budget in the last five steps, so the length
# pressure of {eq}`ch7-weight` acts on a narrow spread of lengths and moves it slowly.

# %%
from IPython.display import Markdown, display
from rlvr_lab import claims
from rlvr_lab.figures import experiments

display(Markdown(claims.table("length_norm")))

# %% mystnb={"figure": {"caption": "Recorded comparison of the per-rollout and constant divisors on the course's model: the mean length of failing rollouts per training step, and its change over the run.", "name": "fig-ch7-recorded-length"}, "image": {"alt": "Two stacked charts. Top: failing-rollout length per training step, one line per divisor. Bottom: the change of that length over the run for each divisor."}} tags=["hide-input"]
experiments.recorded_length_figure()

# %%
from rlvr_lab import rewards

for w_f, w_l in [(0.2, 0.3), (0.4, 0.7)]:
    print(
        f"lambda_f = {w_f}, lambda_l = {w_l}: margin {rewards.ordering_margin(w_f, w_l):+.2f}, "
        f"every pass outranks every failure: {rewards.pass_outranks_failure(w_f, w_l)}"
    )

# %% [markdown]
# The constant denominator is half of Dr. GRPO; chapter 4 ("Three recipes on one warm start") trains the
# whole recipe, and DAPO's token-level loss, against GRPO from the same warm starts: in three seeds neither
# moved held-out pass@1 by an amount the intervals can tell from zero.
#
# A length penalty only shapes preferences while learning. It is not a budget: the bound
# $\text{len} \le 1$ holds only because the runtime enforces the token cap, and hard limits on tokens and turns
# stay with the runtime, whatever the reward says.

# %% [markdown]
# (ch7-clip)=
# ## Entropy collapse and clip-higher
#
# Symmetric ratio clipping is a direct route to **entropy collapse**, the early loss of diversity on tasks the
# policy has not solved. Suppose a path that partly works shows up early. Its tokens get positive coefficients,
# their probabilities rise, and the distribution sharpens around that one path. The clip is meant to slow
# this down, but it acts on the *ratio*, and a ratio cap means very different things in probability space.
# For a token with behaviour probability $p$ and positive advantage, the incentive to push it up vanishes at
# the ratio $1 + \epsilon_{\text{high}}$, that is at the absolute probability
#
# ```{math}
# :label: ch7-headroom
# \begin{gathered}
# p_{\max} = p\,(1 + \epsilon_{\text{high}}),\\
# \text{headroom } p_{\max} - p = \epsilon_{\text{high}}\,p .
# \end{gathered}
# ```
#
# With $\epsilon = 0.2$, a dominant token at $p = 0.9$ has $p_{\max} = 1.08$. That is above 1, so the clip
# can never bind and the surrogate keeps rewarding the token all the way up. An alternative at $p = 0.01$
# stops receiving incentive after $+0.002$. Rare actions climb slowly, dominant ones consolidate, and (other
# tokens' gradients and other loss terms can still move any ratio past the interval) the group's rollouts
# drift towards near-copies of each other. Their rewards tie, and the zero-contrast state of {doc}`04_grpo`
# switches off the reward gradient on exactly the tasks that needed exploration.

# %%
from rlvr_lab.grpo import clip_probability_bounds

print(f"{'p':>6} | {'p_max, eps_high = 0.20':>22} | {'p_max, eps_high = 0.28':>22}")
for p in [0.9, 0.5, 0.1, 0.01]:
    sym = clip_probability_bounds(p, 0.2)[1]
    high = clip_probability_bounds(p, 0.2, 0.28)[1]
    note = "   (above 1: the clip never binds)" if sym > 1 else ""
    print(
        f"{p:>6} | {sym:>13.4f} (+{sym - p:.4f}) | {high:>13.4f} (+{high - p:.4f}){note}"
    )

# %% [markdown]
# **Clip-higher** {cite}`yu2025dapo` decouples the two sides of the interval to
# $[1 - \epsilon_{\text{low}},\, 1 + \epsilon_{\text{high}}]$ with $\epsilon_{\text{high}} > \epsilon_{\text{low}}$.
# The wider upper side lets low-probability tokens with positive advantage climb faster, while the lower
# side still limits how fast penalised tokens fall. Use the widget to see the surrogate
# $\min\!\big(r\hat A,\ \mathrm{clip}(r, 1-\epsilon_{\text{low}}, 1+\epsilon_{\text{high}})\hat A\big)$ for
# both signs of $\hat A$, and the absolute-probability threshold {eq}`ch7-headroom` for a token of your
# choice.

# %%
from rlvr_lab.figures.widgets import clip_explorer

clip_explorer(eps_low=0.2, eps_high=0.28, p=0.01)

# %% mystnb={"figure": {"caption": "The clipped surrogate for a symmetric clip (0.2, 0.2) and for clip-higher (0.2, 0.28), for a positive and a negative advantage.", "name": "fig-ch7-clip-higher"}, "image": {"alt": "Two stacked charts of the surrogate against the token ratio r. Top, advantage +1: both clipped curves rise with r and flatten, the clip-higher curve later. Bottom, advantage -1: both curves fall with r and flatten at the same low ratio."}} tags=["hide-input"]
chapter.clip_higher_figure(settings=[(0.2, 0.2), (0.2, 0.28)])

# %% [markdown]
# ### Recorded: entropy collapse on the course's model, and what clip-higher changes
#
# To watch a collapse, a policy needs entropy to lose. The course's default warm start has little: it learnt
# one reference solution per task and averages about 0.2 nats per token. `experiments/clip_higher.py`
# therefore starts from a warm start that *hedges*. A tiny model learns two task families from
# demonstrations in which each task appears with its reference solution twice and with each of a few near
# misses once (a flipped comparison, a wrong constant, the argument returned unchanged). It passes about
# 40 % of the time and spreads its first decisions over several bodies. GRPO then runs 30 steps from it,
# twice per seed: with a symmetric clip ($\epsilon_{\text{low}} = \epsilon_{\text{high}} = 0.2$) and with
# clip-higher ($\epsilon_{\text{high}} = 0.28$). The table and figure are the stored five-seed result
# (`rlvr_lab.claims`), not a run in this page.
#
# **The collapse is there.** Under the symmetric clip token entropy fell from 0.132 [0.123, 0.141] nats at
# step 0 to 0.048 [0.037, 0.059] over the last five steps, a drop of 0.638 [0.564, 0.712]. Action diversity
# fell with it, from 0.403 [0.361, 0.445] to 0.204 [0.173, 0.235] distinct completions per group over $G$:
# by the end, the rollouts of a group are mostly copies. The training reward rose from 0.72 to 0.92, so
# nothing in the reward curve warns of the narrowing.
#
# **Clip-higher did not prevent it.** Clip-higher minus symmetric: drop -0.075 [-0.308, 0.158], final
# entropy +0.010 [-0.021, 0.041] nats, final diversity +0.016 [-0.065, 0.096]. Every interval includes zero.
# Equation {eq}`ch7-headroom` says why. The upper clip acts only on a token with a positive advantage whose
# probability is below $1/(1+\epsilon_{\text{high}})$. Even in this hedging policy such tokens are about 1 %
# of all tokens, and the upper clip binds on about 0.3 % under the symmetric clip. The collapse runs through
# the other 99 %: GRPO reinforces the passing bodies, step after step, at ratios that never reach either
# bound. Loosening a bound that almost no token meets cannot slow that.

# %%
from IPython.display import Markdown, display
from rlvr_lab import claims

display(Markdown(claims.table("clip_higher")))

# %% mystnb={"figure": {"caption": "Recorded entropy collapse on the course's model, five seeds from a hedging warm start: token entropy and action diversity per training step under the symmetric clip and clip-higher, and the share of tokens each clip bound acts on, with 95 % intervals.", "name": "fig-ch7-recorded-clip"}, "image": {"alt": "Three stacked charts. Top: token entropy per training step, falling by about two thirds for both clip settings. Middle: distinct completions per group over G, falling from about 0.4 to 0.2 for both. Bottom: bars of the shares of tokens at the upper clip, eligible for it and at any clip, all near or below 1.5 %."}} tags=["hide-input"]
from rlvr_lab.figures import experiments

experiments.recorded_clip_figure()

# %% [markdown]
# Other regularisers attack collapse differently. An explicit **entropy bonus** penalises sharp
# distributions directly at the positions it targets. The **reference KL** term $\beta_{\mathrm{KL}}\,D_{i,t}$
# of the GRPO objective {eq}`ch4-objective` penalises drift away from the starting checkpoint. That does push
# back on collapse: a policy that sharpens below its reference's spread moves away from the reference and
# pays for it, so the KL term slows the collapse in proportion to $\beta_{\mathrm{KL}}$. What it does not do
# is set an absolute floor: it pulls towards the *reference's* distribution, so a reference that was already
# peaked protects little, and a small $\beta_{\mathrm{KL}}$ (0.02 in the course's presets) trades only a
# little reward for spread. It is also estimated only at the tokens the behaviour policy sampled (the $k_3$
# estimator of {doc}`04_grpo`). Its gradient still reaches the alternatives: through the softmax, moving the
# sampled token's probability towards the reference's moves every other logit at that position too. What it
# cannot do is notice an alternative whose probability drifted at a position no rollout visited. Every one of these
# changes the loss surface and needs a controlled experiment: fixed task distribution and sampling,
# evaluation on verified task success and token cost, and a watch on the ratio distribution. A smoother loss
# curve is weak evidence of healthy exploration; only verified completions count.
#
# When exploration has collapsed, an agent can also fall into loops: the same shell command, the same
# unchanged file read again. A runtime watchdog has to stop those, but repetition is ambiguous in an agent
# (waiting for a slow build, polling an asynchronous job, retrying a flaky test after a change all look
# repetitive). Log the exact trigger and apply the stop rules of {ref}`ch5-censored`: an exhausted budget is a
# failure, an infrastructure interruption stays out of the reward. Killing a runaway rollout frees the slot
# immediately; its environment state and external side effects still belong to their cleanup handlers.

# %% [markdown]
# (ch7-recovery)=
# ## Recovery behaviour
#
# Pure-RL training runs have been reported to grow their responses and to produce text in which the model
# seems to reconsider earlier steps {cite}`deepseekai2025r1`. For a systems engineer, a token sequence such as
# "wait, let me double-check" is generated text, not an observable mental state. In an agent that acts on real
# infrastructure, recovery has one criterion: after an execution failure or an unexpected observation, do the
# **next tool calls fix it**?
#
# That criterion can be tested. Take the connection-pool repair and build a diagnostic fixture that injects a
# disturbance, for example a dependency version conflict that appears right after the agent's first
# inspection. Then measure whether the policy gathers fresh evidence, revises its patch to satisfy the new
# constraint, and passes the suite within the original budget. Count the failed and unhandled runs too, so
# that an apparent recovery is not a timeout artefact in disguise. A controlled perturbation gives evidence of
# recovery *from that perturbation*, in the same spirit as targeted recovery demonstrations against
# compounding errors in imitation learning.
#
# Budgets decide whether such a comparison means anything. Compare a candidate policy and its baseline under
# **identical** token and turn limits; otherwise extra deliberation and extra verbosity are
# indistinguishable. The pass@$k$ family makes a related distinction between reliability and reach: a policy
# can raise pass@1 while a broader sampler of the base model matches it at large $k$ {cite}`yue2025rlreasoning`.
# That is a statement about a *set* of tasks: on any single task the two pass@$k$ curves cannot cross.

# %%
# One task cannot show a crossover: pass@k rises with the number c of correct samples at every k, so the
# policy with more correct samples on a task is ahead at every k. A crossover needs a task SET on which RL
# lost reach. Ten tasks, 16 samples each: the sharpened policy solves six reliably (14 of 16) and four
# never; the base solves every task now and then (4 of 16).
sharpened, base = [14] * 6 + [0] * 4, [4] * 10
for k in (1, 2, 4, 8, 16):
    s = np.mean([rewards.pass_at_k(16, c, k) for c in sharpened])
    b = np.mean([rewards.pass_at_k(16, c, k) for c in base])
    print(f"k = {k:>2}: sharpened {s:.3f}   base {b:.3f}   {'base ahead' if b >= s else ''}")

# %% [markdown]
# ### Recorded: pass@k before and after GRPO on held-out tasks
#
# `experiments/pass_at_k.py` trains the course's `cpu` preset on five seeds and samples the warm start and
# the trained policy 32 times on each of 32 held-out tasks (same sampling seed), then averages the unbiased
# pass@$k$ over the tasks. The stored result (`rlvr_lab.claims`):
#
# **The comparison reproduces.** The pass@1 gain is 0.194 [0.088, 0.299] (95 % t interval over the five
# seeds), and the gains at $k = 2$ and $4$, 0.211 [0.098, 0.323] and 0.168 [0.051, 0.284], also exclude
# zero. The gap then closes: at $k = 8$ it is 0.085 [-0.039, 0.209], and in every seed the warm start caught
# up by $k = 32$ (at $k = 8$, 16, 16, 32 and 32). At $k = 32$ the warm start is ahead by 0.081
# [-0.004, 0.166], an interval that just includes zero, so "ahead" at the largest $k$ is suggested rather
# than shown. The crossover has the cause the toy above shows: in each seed two to seven held-out tasks were
# solved at least once by the warm start and never by the trained policy.

# %%
from IPython.display import Markdown, display
from rlvr_lab import claims
from rlvr_lab.figures import experiments

display(Markdown(claims.table("pass_at_k")))

# %% mystnb={"figure": {"caption": "Recorded pass@k on held-out tasks before and after GRPO training, and the difference between the two curves.", "name": "fig-ch7-recorded-pass-at-k"}, "image": {"alt": "Two stacked charts against k. Top: pass@k before and after training. Bottom: the difference between the two curves, after minus before."}} tags=["hide-input"]
experiments.recorded_pass_at_k_figure()

# %% [markdown]
# Running these checks at scale is an infrastructure problem: a versioned catalogue of diagnostic fixtures,
# structured traces with explicit execution states, and enough isolated grader capacity. That is why the next
# chapter, {doc}`08_environments_and_rollouts`, treats the rollout fleet as part of the learning algorithm.
#
# (ch7-summary)=
# ## Summary
#
# - Entropy {eq}`ch7-token-entropy` is reported with its distribution (raw or after decoding transforms) and its
#   prefix population; decoding alone moves it a lot. Judge diversity by actions on unsolved tasks.
# - Every worrying curve has several explanations ({ref}`the diagnostics table <ch7-table-diagnostics>`); turn it into a
#   controlled check with fixtures, sampling, reward and grader held fixed.
# - Per-rollout normalisation weights tokens by $\hat A_i/|o_i|$ {eq}`ch7-weight`: a 128-token failure's
#   tokens are pushed 32 times harder than a 4,096-token failure's. A constant divisor removes the length
#   pressure; compare lengths by outcome under both before adding any length penalty, and keep
#   $\lambda_f + \lambda_l < 1$ with an enforced cap if you add one.
# - A ratio clip is a probability cap $p(1+\epsilon_{\text{high}})$ {eq}`ch7-headroom`: no brake for
#   dominant tokens, a tight one for rare tokens. Clip-higher loosens the upper side; entropy bonuses and KL
#   act differently: KL pulls back towards the reference's spread, but sets no absolute entropy floor.
# - On the course's model GRPO collapsed a hedging policy's entropy by about two thirds in 30 steps, action
#   diversity with it, while the reward rose; clip-higher made no difference the five seeds can detect,
#   because its bound acts on well under 1 % of tokens there.
# - Recovery is measured by corrective tool actions under controlled perturbations and matched budgets, not
#   by self-correction text.
#
# (ch7-practice)=
# ## Exercises and labs
#
# - Exercise 8, *Diagnosing a lengthening policy*: [student notebook](https://github.com/rlvr-lab/rlvr-lab/blob/main/labs/exercises/student/ex8_lengthening_policy.ipynb) ([Colab](https://colab.research.google.com/github/rlvr-lab/rlvr-lab/blob/main/labs/exercises/student/ex8_lengthening_policy.ipynb)).
# - Exercise 2, *Keeping the pass above the failure*: [student notebook](https://github.com/rlvr-lab/rlvr-lab/blob/main/labs/exercises/student/ex2_reward_order.ipynb) ([Colab](https://colab.research.google.com/github/rlvr-lab/rlvr-lab/blob/main/labs/exercises/student/ex2_reward_order.ipynb)).
# - Lab 5, *Pathologies*: [notebook](https://github.com/rlvr-lab/rlvr-lab/blob/main/labs/lab5_pathologies.ipynb) ([Colab](https://colab.research.google.com/github/rlvr-lab/rlvr-lab/blob/main/labs/lab5_pathologies.ipynb)). Symmetric clipping against clip-higher, per-rollout against constant normalisation, pass@1 against pass@k before and after RL, measured on the course's model.
# - Lab 1, *GRPO training*: [notebook](https://github.com/rlvr-lab/rlvr-lab/blob/main/labs/lab1_grpo_training.ipynb) ([Colab](https://colab.research.google.com/github/rlvr-lab/rlvr-lab/blob/main/labs/lab1_grpo_training.ipynb)). Entropy and length by outcome over a full run.
