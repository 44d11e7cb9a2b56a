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
# # 3. Credit across turns
#
# In the connection-pool repair, an agent runs the failing reproducer, reads `src/pool.py`, correctly
# spots the notification that is missed when a connection is returned, and then breaks the build with a
# syntax error in its final edit. The verifier sees only the end: *fail*. That verdict describes the
# trajectory as a whole; it does not say the diagnosis was wrong. This chapter compares the ways of
# spreading one terminal outcome over many turns, and what each one costs.
#
# ```{admonition} Goals
# :class: tip
# After this chapter you can
#
# - write the score-function (REINFORCE) estimator with a baseline and say why the baseline adds no bias;
# - define value, action value and advantage over interaction histories, and compute TD residuals and
#   GAE with `rlvr_lab.credit`;
# - distinguish estimating a return from changing it with a process reward;
# - price continuation sampling in generated tokens, equation {eq}`ch3-fork-multiple`, and bound its
#   standard error, equation {eq}`ch3-se`.
# ```
#
# The estimators below differ in what they spend to tell two turns apart: nothing beyond the sampled
# return, a trained value model, a denser reward, or extra rollouts. Keep two quantities apart throughout:
# the *coefficient* a sampled update multiplies a turn's gradient by, and the *true expected value* of
# that turn's action. The first is computable; the second is what we would like it to estimate.
#
# ## The score-function estimator
#
# Index turns $k = 0, \dots, H-1$, let $r_k$ be the reward right after action $a_k$, and let
# $G_k = \sum_{j \ge k} r_j$ be the reward-to-go. With only a terminal reward $R$, every turn has
# $G_k = R$. For one trajectory sampled from the current policy, the REINFORCE estimator with a baseline
# is {cite}`williams1992reinforce`
#
# $$
# \hat g \;=\; \sum_{k=0}^{H-1} \nabla_\theta \log \pi_\theta(a_k \mid h_k)\,\big(G_k - b(h_k)\big).
# $$ (ch3-reinforce)
#
# Its expectation is the gradient of the expected return {eq}`ch1-objective`, provided the task
# distribution, the environment and the reward do not depend on $\theta$ and differentiating under the
# expectation is allowed. The baseline costs no bias because the score has mean zero under the policy:
#
# $$
# \mathbb{E}_{a \sim \pi_\theta(\cdot \mid h)}\big[\nabla_\theta \log \pi_\theta(a \mid h)\big] \;=\; 0 .
# $$ (ch3-zero-score)
#
# So any $b(h_k)$ that does not depend on the action being scored can be subtracted for free. A baseline
# fitted on earlier, independent rollouts qualifies. One computed from *this* rollout's own outcome does
# not, even with no gradient flowing through it, because that outcome depends on the very actions being
# scored. (Group baselines, chapter 4, sit between the two and need their own argument.)
#
# Now the failed repair. With a zero baseline every coefficient is zero and the update ignores the run.
# With a baseline of 0.4, every turn (the insightful diagnosis and the broken edit alike) gets $-0.4$:

# %%
from rlvr_lab import credit

turns = ["run reproducer", "read pool.py", "diagnose missed notify", "edit (syntax error)"]
terminal_failure = [0, 0, 0, 0]
for name, coeff in zip(turns, credit.reward_to_go(terminal_failure) - 0.4):
    print(f"{name:24s} {coeff:+.2f}")

# %% [markdown]
# Credit for good diagnostic habits can only emerge *statistically*: over many trajectories, actions that
# tend to precede passes show up more often in winning runs than in losing ones. Each extra turn adds
# another noisy term to {eq}`ch3-reinforce`, so the variance can grow with $H$, while long horizons also
# make passes rarer. Long tasks cost the learner twice.
#
# ## Value, advantage and process scores
#
# To separate the diagnosis from the bad edit on a *single* rollout, we need a baseline that moves after
# every turn. For a fixed continuation policy and reward, define the value of a history, the value of an
# action at that history, and their difference:
#
# $$
# \begin{aligned}
# V(h_k) &= \mathbb{E}[G_k \mid h_k],\\
# Q(h_k, a_k) &= \mathbb{E}[G_k \mid h_k, a_k],\\
# A(h_k, a_k) &= Q(h_k, a_k) - V(h_k).
# \end{aligned}
# $$ (ch3-value)
#
# They are defined over delivered histories, the transcript the model actually saw, not over the hidden
# state of the container. With $V(h_H) = 0$, the temporal-difference residual is
#
# $$
# \delta_k \;=\; r_k + V(h_{k+1}) - V(h_k).
# $$ (ch3-td)
#
# If $V$ were exact, $\delta_k$ would average to the advantage; a single residual is one noisy sample, and
# a learned $V$ adds its own error. Generalised advantage estimation sums future residuals with weights
# $\lambda^j$ (undiscounted here, as everywhere in this course):
#
# $$
# \hat A_k^{\text{GAE}(\lambda)} \;=\; \sum_{j=0}^{H-1-k} \lambda^{j}\,\delta_{k+j},
# \qquad 0 \le \lambda \le 1 .
# $$ (ch3-gae)
#
# At $\lambda = 0$ it is the one-step residual (low variance, biased by any value error), at
# $\lambda = 1$ the return minus $V(h_k)$ (unbiased with respect to $V$, full variance)
# {cite}`schulman2016gae`. Suppose value estimates of 0.05 before the diagnosis and 0.60 after it, and a
# trajectory that then fails:

# %%
rewards_per_turn = [0, 0, 0]          # diagnose, edit, finish: the run fails
values = [0.05, 0.60, 0.60]           # V before each turn; V(h_H) = 0 is appended
print("TD residuals:", credit.td_residuals(rewards_per_turn, values).round(2))
for lam in (0.0, 0.5, 1.0):
    print(f"GAE lambda={lam}:", credit.gae(rewards_per_turn, values, lam).round(2))

# %% [markdown]
# At $\lambda = 0$ the diagnosis earns $+0.55$ and the final turn takes the blame ($-0.60$). At
# $\lambda = 1$ each turn gets the final return minus its own value estimate ($-0.05$, $-0.60$, $-0.60$),
# and the diagnosis no longer stands out. $\lambda$ decides how much credit rests on the value model
# rather than on what the environment actually returned.
#
# ### Estimating a return versus changing it
#
# A learned critic *estimates* the return of the existing task. A **process reward model** scores
# intermediate steps directly and so *adds* a criterion to the objective. Dense step scores can guide
# search at inference time {cite}`lightman2024verify`, but training against them invites three habits:
# ritual phrases that please the scorer without doing any checking; fluent step-by-step reasoning built on
# a false premise; and avoidance of exploratory detours that temporarily lower step scores even when the
# bug needs them. Denser feedback is not more correct feedback.
#
# | choice | what it supplies | what you then owe |
# | --- | --- | --- |
# | terminal check | the observed outcome | validate the criterion, its coverage and its protection |
# | learned value estimate | a predicted return under one policy | measure its prediction error and bias |
# | process reward | an extra per-step criterion | justify the changed objective and measure its errors |
# | continuation sampling | an empirical return at a declared fork | restore the fork faithfully; pay for and bound the sampling error |
#
# ## Continuation sampling: buying credit with rollouts
#
# Instead of learning $V$, sample it: restore the state after turn $k$, run $M$ independent continuations
# to the end, and average their terminal rewards. Restoring "the state" means the workspace files, the
# network namespace, the delivered context tokens, mock services, the continuation policy's version and
# the verifier; copying disk blocks is not enough when hidden state (locks, processes) matters.
#
# With returns in $[0, 1]$, a Bernoulli variance is at most $1/4$, so a fork's sample mean has standard
# error at most $1/(2\sqrt M)$; the difference of two independent forks at most
# $\sqrt 2/(2\sqrt M)$:
#
# $$
# \begin{aligned}
# \mathrm{SE}\big(\hat V\big) &\le \frac{1}{2\sqrt{M}},\\
# \mathrm{SE}\big(\hat V_2 - \hat V_1\big) &\le \frac{\sqrt 2}{2\sqrt{M}} .
# \end{aligned}
# $$ (ch3-se)
#
# Halving the error costs four times the rollouts, and shared caches or prefixes between branches only
# make it worse. In the worked fork, 1 of 20 continuations from the bug report passes ($\hat V = 0.05$),
# and 12 of 20 pass after the debugger turn ($\hat V = 0.60$). Call a difference *resolved* when it is at
# least twice its error bound:

# %%
M, before, after = 20, 1 / 20, 12 / 20
print(f"SE per fork <= {credit.standard_error_bound(M):.2f}, "
      f"SE of the difference <= {credit.difference_standard_error_bound(M):.2f}, "
      f"threshold {2 * credit.difference_standard_error_bound(M):.2f}")
print(f"difference {after - before:.2f} resolved: {credit.is_resolved(after - before, M)}")

# %% [markdown]
# The 0.55 gain clears the 0.32 threshold, so it is unlikely to be noise. It is still an estimate at two
# particular fork conditions, not a proof of cause, but unlike a process reward it adds no criterion the
# policy could learn to satisfy.
#
# ### Forks on the course's repair agent
#
# The worked fork's numbers are illustrative; the course's repair agent ({doc}`05_multi_turn`) can be
# forked for real. `experiments/repair_episodes.py` warm-starts it on scripted repairs (`cpu` preset,
# seeds 0, 1 and 2), plays one episode of each task, and forks every episode after each turn k that did not
# end it. A fork restores the module as edited so far, the turns taken and the exact token context
# (`rlvr_lab.train.episode_forks.fork_rewards`). From there the policy finishes the episode $M = 20$
# times, twice, independently (estimates a and b). A typical episode runs the tests (k = 1), edits one
# line (k = 2) and submits, so the forks on either side of the edit measure its credit,
# $\hat V_2 - \hat V_1$.

# %%
# Recorded by experiments/repair_episodes.py, seeds 0-2 (its command and code fingerprint are in
# experiments/results/repair_episodes.json); ± is a 95 % interval over the three seeds
M = 20
forks = dict(count=190, strictly_between=26, plug_in_se=0.013, rms_a_minus_b=0.042, rms_a_minus_b_ci=0.018,
             edits=73, edit_credit=0.034, edit_credit_ci=0.202)
resolved = [  # (task, V after RUN, V after the base episode's edit, the base episode's verdict)
    ("sum_range/off_by_one/v2", 0.65, 1.00, "pass"),
    ("count_above/wrong_operator/v2", 0.70, 0.00, "fail"),
    ("sum_range/off_by_one/v1", 0.80, 0.00, "fail"),
    ("sum_range/off_by_one/v2", 0.80, 0.00, "fail"),
]
print(f"{forks['count']} forks, {forks['strictly_between']} with 0 < V < 1; mean plug-in SE "
      f"{forks['plug_in_se']:.3f} against the bound {credit.standard_error_bound(M):.3f}")
print(f"RMS of a - b {forks['rms_a_minus_b']:.3f} ± {forks['rms_a_minus_b_ci']:.3f} against the bound "
      f"{credit.difference_standard_error_bound(M):.3f} for a difference of two forks")
print(f"edit credit V2 - V1 over {forks['edits']} edits: {forks['edit_credit']:.3f} ± {forks['edit_credit_ci']:.3f}")
for task, v1, v2, verdict in resolved:
    print(f"  resolved: {task:30s} {v1:.2f} -> {v2:.2f} ({v2 - v1:+.2f}; base episode {verdict}): "
          f"{credit.is_resolved(v2 - v1, M)}")

# %% [markdown]
# The bounds hold with room to spare, and the room is the lesson. The bound $1/(2\sqrt M) = 0.112$ is the
# worst case, a value of one half. The warm-started policy is nearly deterministic: 164 of the 190 forks
# finish the same way all 20 times ($\hat V$ of 0 or 1), so the mean plug-in error is 0.013, and two
# independent estimates of the same fork differ by 0.042 (root mean square) where the bound for a
# difference allows 0.158.
#
# Averaged over the 73 edits the credit is 0.034 ± 0.202: no signal, because on most tasks the policy
# takes the same edit from the fork after `RUN` as the base episode did, and both forks agree. Only 4
# differences clear twice their bound (0.316). One edit earned its credit: from after `RUN` the policy
# repairs `sum_range` 65 % of the time, after the edit every time. Three were the base episode's bad draw:
# from after `RUN`, 70-80 % of the continuations repair the module, yet the base episode chose an edit
# after which no continuation passes, and it failed. A reward at the end gives those three episodes' `RUN`
# and edit the same zero. The forks tell them apart, at 20 extra episodes per turn boundary.
#
# ### What a fork schedule costs
#
# Forks are paid for in generated tokens. With $n$ tokens per turn and $M$ continuations after each
# completed turn $k$ in a schedule $S \subseteq \{1, \dots, H-1\}$ (branches are not forked again),
#
# $$
# \begin{aligned}
# \text{tokens} &= H n + M n \sum_{k \in S} (H - k),\\
# \text{multiple of base} &= 1 + \frac{M}{H} \sum_{k \in S} (H - k),
# \end{aligned}
# $$ (ch3-fork-multiple)
#
# and forking at every boundary gives $1 + M(H-1)/2$: quadratic in the horizon. For 30 turns of 512
# tokens and 8 continuations:

# %%
H, n, M = 30, 512, 8
print(f"{'schedule':28s} {'branches':>8s} {'tokens':>11s} {'multiple':>9s}")
for name, forks in [("every intermediate boundary", "all"), ("after turns 10 and 20", [10, 20])]:
    print(f"{name:28s} {credit.continuation_branches(H, M, forks):8d} "
          f"{credit.continuation_tokens(H, n, M, forks):11,d} {credit.continuation_multiple(H, M, forks):8.0f}x")

# %% [markdown]
# The base trajectory is 15,360 tokens; exhaustive forking multiplies it by 117, two chosen forks by 9.
# (These count generated tokens only; prompt processing, snapshot restores, tools and verification add to
# both.) The two rows are not equally accurate, since the cheap schedule estimates far fewer conditions,
# which is why the schedule, not the estimator, is the real design decision.

# %%
from rlvr_lab.figures import widgets

widgets.fork_explorer(horizon=30, tokens_per_turn=512, continuations=8, forks=2)

# %% [markdown]
# The figure below is drawn for the worked fork's $M = 20$: the token multiple of exhaustive forking grows
# with the horizon while two fixed forks stay flat (left), and the error bounds fall only as $1/\sqrt M$,
# with $M = 20$ marked (right).

# %% mystnb={"figure": {"caption": "The cost and precision of continuation sampling. Top: generated tokens as a multiple of one trajectory, forking at every turn boundary against forking at two chosen boundaries, with the 30-turn horizon marked. Bottom: the standard-error bounds against the number of continuations M, with M = 20 marked.", "name": "fig-ch3-forks"}, "image": {"alt": "Two stacked line charts. Top: token cost against horizon; forking at every boundary grows much faster than forking at two boundaries, and the horizon of 30 is marked. Bottom: two falling curves of standard-error bound against the number of continuations, with the point at 20 continuations marked."}} tags=["hide-input"]
from rlvr_lab.figures import relations

relations.fork_figure(horizon=30, continuations=20, forks=[10, 20])

# %% [markdown]
# Where to fork? Two triggers work well: turns where the policy's next-token distribution is spread over
# many candidates (high entropy, chapter 7), and turns that change state: file edits, migrations, network
# changes. Two or three such forks put the estimates where trajectories actually diverge.
#
# ## Summary
#
# - The REINFORCE estimator {eq}`ch3-reinforce` attaches one return to every turn; an action-independent
#   baseline removes variance at no bias {eq}`ch3-zero-score`, but cannot separate turns within a run.
# - Values, advantages and TD residuals {eq}`ch3-value`, {eq}`ch3-td` can, at the price of a value model
#   whose errors become credit errors; GAE's $\lambda$ sets how much you trust it.
# - Process rewards change the objective and can be gamed; continuation sampling measures the existing one
#   and pays in tokens {eq}`ch3-fork-multiple` and in sampling error {eq}`ch3-se`.
# - GRPO (chapter 4) sits at the cheapest end: it compares whole returns within a group and spends nothing
#   on intermediate forks.
#
# ## Exercises and labs
#
# - Exercise 5, *A continuation-sampling budget*:
#   [student notebook](https://github.com/rlvr-lab/rlvr-lab/blob/main/labs/exercises/student/ex5_continuation_budget.ipynb)
#   ([Colab](https://colab.research.google.com/github/rlvr-lab/rlvr-lab/blob/main/labs/exercises/student/ex5_continuation_budget.ipynb)).
# - Lab 1, *GRPO training*, in the [labs folder](https://github.com/rlvr-lab/rlvr-lab/tree/main/labs), logs
#   per-outcome lengths and entropy, the signals a fork trigger would use.
