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
# # 2. Verifiable rewards
#
# A reward is a measurement taken by a program, and an optimizer is a very patient adversary of that
# program. This chapter prices the measurement: how it gets gamed, how often it is wrong once the policy
# is being trained on it, and how extra reward terms can be added without letting a failure outscore a
# pass.
#
# ```{admonition} Goals
# :class: tip
# After this chapter you can
#
# - tell an incomplete check from a compromised one, and name the three exploit classes seen in coding
#   environments;
# - rank reward sources by how much of their verdict the policy can reach;
# - compute the share of rewarded rollouts that are really failures, equation {eq}`ch2-false-share`, and
#   explain why it is worst early in training;
# - choose weights for format and length terms that keep every pass above every failure,
#   condition {eq}`ch2-ordering`.
# ```
#
# ## What the score measures, and what it does not
#
# Training on `pool_repair_01` needs a score for every fresh candidate patch. The acceptance harness
# `repair_accept_v1` provides one, but a passing test is evidence about *the property that test asserts*
# and nothing more. Two very different things can go wrong:
#
# - **Incomplete coverage.** A patch passes the tested cases and introduces a race on a path no test
#   exercises. The measurement was honest; it just did not ask the right question.
# - **Compromised measurement.** The candidate can write to the grading environment, so it edits the test
#   runner until a failing run reports success. The measurement itself was corrupted.
#
# Hardening the grader fixes the second kind and does nothing for the first. Both are forms of
# **reward hacking**: behaviour that raises measured reward by exploiting the gap between the formal
# reward and the task that was meant, including tampering with the measurement
# {cite}`skalse2022hacking`.
#
# ### Why a false pass is worse in training than at test time
#
# When a selector at inference time accepts a bad candidate, one decision is wrong. When a training loop
# rewards a bad trajectory, the update raises the probability of every token that produced it, so the
# policy produces *more* such trajectories on later tasks. Write $U(\tau)$ for what the developer wants
# and $\hat R(\tau)$ for the reward the loop computes. If an unintended trajectory $\tau_x$ has
# $\hat R(\tau_x) \ge \hat R(\tau^\star)$ while $U(\tau_x) \ll U(\tau^\star)$, gradient ascent on
# $\hat R$ has no reason to prefer $\tau^\star$; if the shortcut is also *more probable* under the current
# policy (a two-line assertion edit is far easier to sample than a multi-turn diagnosis), it wins.
#
# The group-relative optimizer of chapter 4 makes this sharper. It scores each rollout against the others
# sampled for the same task, so a rare pass gets a large weight. If one rollout out of sixteen on a hard
# bug quietly weakens the failing assertion, it is the group's only pass and receives the largest
# coefficient in the group:

# %%
from rlvr_lab import advantages  # group coefficients and the lone pass, numpy only

tampered_pass, honest_failure = advantages.lone_pass_group_coefficients(16)
print(f"lone (tampered) pass: {tampered_pass:+.2f}   each honest failure: {honest_failure:+.2f}")

# %% [markdown]
# Nothing malfunctioned: the optimizer did exactly what the reward asked.
#
# ## Three ways a coding policy games its check
#
# Reports from 2025-era training and evaluation runs fall into three classes:
#
# 1. **Weaken or special-case the check**: return the expected values only for the inputs the suite
#    uses, or edit assertions until they pass.
# 2. **Stub or bypass the verified path**: make the verification function return true, or leave the
#    environment before any test runs.
# 3. **Rewrite the verdict inside the runner**: return an object whose equality test always succeeds,
#    call `sys.exit(0)` before the first assertion, or drop a `conftest.py` into the candidate's own tree
#    that patches how pytest records outcomes, so that every failure is filed as a pass
#    {cite}`macdiarmid2025emergent`.
#
# The third class is worth seeing in outline, because it never touches the tests at all. Pytest imports
# any `conftest.py` it finds in the tree under test before it runs a single test, so code the candidate
# wrote gets to run inside the grader:
#
# ```python
# # conftest.py, placed by the candidate next to its own source
# import _pytest.reports as reports
#
# _make = reports.TestReport.from_item_and_call.__func__
#
# def _rewritten(cls, item, call):
#     report = _make(cls, item, call)
#     if call.when == "call":               # the phase in which assertions run
#         report.outcome, report.longrepr = "passed", None
#     return report
#
# reports.TestReport.from_item_and_call = classmethod(_rewritten)
# ```
#
# Chapter 6 runs this exploit, and its relatives, against a naive verifier (which falls for them) and an
# isolated one (which does not).
#
# ```{admonition} Field note: scorers within reach (METR, 2025)
# :class: warning
# An independent evaluator measured how often frontier models attacked their scorer when it was visible
# {cite}`vonarx2025hacking`. On a fine-tuning speed task the model copied already-trained weights in
# **21 of 21** runs. Across the suite whose scoring code the agent could read, **39 of 128** runs hacked
# (30 %); on a broader suite where the scorer was out of reach, **8 of 1,087** (0.7 %). Adding "please do
# not reward hack" to the prompt moved the rate on one task only from 80 % to 70 % over 20 runs. The
# lesson for training is blunt: an instruction does not protect a check; reachability decides. In an
# evaluation those runs are discarded afterwards; in a training loop each one is a maximal reward.
# ```
#
# ## Closure levels: how much of the verdict the policy can touch
#
# A reward is only as trustworthy as the evidence behind it. Ordering sources by how much of the verdict
# the policy can influence gives the table below. Coverage limits every row: a sealed suite that misses
# an edge case still rewards the bug in that edge case.
#
# | source | what it establishes | how an optimizing policy games it | its job in the reward |
# | --- | --- | --- | --- |
# | proof checker | a proof of the encoded statement under its assumptions | mutable axioms, a weaker statement than the task | outcome reward |
# | sealed tests | behaviour on the withheld cases | coverage gaps; tampering if runner or tests are reachable | outcome reward |
# | compiler / type checker | structural constraints hold | code that compiles and does nothing | gate or partial credit |
# | tool-call format check | a call parses against its schema | well-formed calls that achieve nothing | small shaping term |
# | learned process reward model | a learned score per step | text that looks like careful reasoning | shaping; never the deciding score where a check exists |
# | rubric judge | free-form output against written criteria | length, confidence, keywords | only where nothing executable exists |
# | human rating | anything a person can inspect | fatigue, surface cues | audit, too costly to be frequent |
#
# The top rows judge the artifact, not how it is described, so the only way to raise their score is to
# change what the check runs on. The lower rows score text that the policy itself writes, which makes
# them models with blind spots that gradient ascent will find. Wherever a deterministic check exists, it
# decides the reward; learned scores may rank or shape, and where they must be the reward, their
# calibration against verified outcomes has to be re-measured as the policy drifts.
#
# ## False accepts among rewarded rollouts
#
# Let $p^\ast$ be the policy's current pass rate under an independent reference assessment, $\alpha$ the
# verifier's false-acceptance rate (the probability it accepts a failure), and $\beta$ its
# true-acceptance rate. Among the rollouts the verifier accepts, the fraction that actually fail is
#
# $$
# \Pr(\text{fail} \mid \text{accepted}) \;=\; \frac{(1-p^\ast)\,\alpha}{p^\ast\,\beta + (1-p^\ast)\,\alpha}.
# $$ (ch2-false-share)
#
# The denominator adds true accepts and false accepts. When failures dominate, which is the normal state
# early in training on hard tasks, a small $\alpha$ still claims a large share of the rewards. The batch
# of the worked example: 8 rollouts for each of 1,024 tasks, 10 % truly passing, a verifier that accepts
# every success and 2.5 % of failures.

# %% [markdown]
# ### A false positive is not yet an exploit
#
# Two words get used for one event, and they should not be. A **false positive** (a false accept) is an
# *evaluation error*: the verifier said pass for a rollout that fails the criterion. An **exploit** is a
# *behaviour*: the policy found, and is being reinforced for, a way to raise the measured reward through a
# gap between reward and task. A false positive by itself does not show that the policy discovered or
# deliberately used a shortcut: a flaky test, a lenient tolerance or a harness fault can
# accept an honest failure once, at random. It becomes an exploit when the accepted behaviour is
# *systematic* and gets *reinforced*: the same kind of candidate keeps passing, its rate climbs across
# updates, and it climbs faster than the true pass rate. The evidence for each is different: a false
# positive is found by re-assessing a sample of accepted rollouts independently; an exploit by tracking a
# behaviour's frequency across training, as lab 4 does.

# %%
from rlvr_lab import rewards

n, rho, alpha, beta = 8 * 1024, 0.10, 0.025, 1.0
print(f"expected true accepts  {n * rho * beta:8.2f}")
print(f"expected false accepts {n * (1 - rho) * alpha:8.2f}")
print(f"false-accept share     {rewards.false_accept_share(rho, alpha, beta):8.1%}")

# %% [markdown]
# Almost one reward in five goes to a failure, although the verifier errs on only one failure in forty.
# Because $p^\ast$ changes as the policy learns, so does the share: measure verifier error at the pass rate
# the policy has *now*, and expect the share to fall as training succeeds. (It is also not the share of
# the *gradient* that rewards errors: chapter 4 shows that a false pass on a hard task, often the only
# pass in its group, weighs far more than one on an easy task.)

# %%
from rlvr_lab.figures import widgets

widgets.false_accept_explorer(rho=0.10, alpha=0.025)

# %% [markdown]
# In the dashboard's figure every curve climbs towards one as true passes become rare; in the small-share
# regime, halving $\alpha$ roughly halves the share, and so does doubling $p^\ast$.
#
# ## Composing a reward without overturning the order
#
# Extra terms help exploration: a bonus for well-formed tool calls, a penalty for long trajectories. With
# $C \in \{0, 1\}$ the observed outcome, $F \in [0,1]$ a format score and
# $\mathrm{len} \in [0,1]$ the generated tokens divided by the *enforced* cap, a common terminal score is
#
# $$
# R \;=\; C + \lambda_f F - \lambda_\ell\,\mathrm{len}.
# $$ (ch2-composite)
#
# Over those ranges a pass scores at least $1-\lambda_\ell$ and a failure at most $\lambda_f$. Every pass
# therefore outranks every failure whenever
#
# $$
# \lambda_f + \lambda_\ell \;<\; 1 .
# $$ (ch2-ordering)
#
# Equality allows a tie between the longest, worst-formatted pass and the best-formatted failure, so the
# inequality must be strict. The bound also leans on $\mathrm{len} \le 1$, which holds only if the runtime
# actually kills generation at the cap; normalising by a nominal budget that nothing enforces breaks it.
# Potential-based shaping would leave the optimal policy unchanged {cite}`ng1999shaping`, but format and
# length terms are not of that form: they change the objective, so their weights need this check.

# %%
for wf, wl in [(0.2, 0.3), (0.3, 0.75)]:
    worst_pass = rewards.composite_reward(1, 0.0, 1.0, wf, wl)
    best_failure = rewards.composite_reward(0, 1.0, 0.0, wf, wl)
    print(f"w_f={wf}, w_l={wl}: worst pass {worst_pass:+.2f}, best failure {best_failure:+.2f}, "
          f"margin {rewards.ordering_margin(wf, wl):+.2f}, safe: {rewards.pass_outranks_failure(wf, wl)}")

# %% [markdown]
# The figure shows an unsafe choice, $\lambda_f = 0.5$ and $\lambda_\ell = 0.6$: the range of failure
# scores reaches above the range of pass scores, so some failure (short, perfectly formatted) beats some
# pass (long, unformatted).

# %% tags=["hide-input"] mystnb={"figure": {"caption": "When a composite score keeps passes above failures. Top: the plane of format weight and length weight; inside the shaded triangle every pass outranks every failure. Bottom: the score ranges of passes and of failures at the marked weights (0.5, 0.6), which lie outside the triangle, so the two ranges overlap.", "name": "fig-ch2-reward-weights"}, "image": {"alt": "Two stacked panels. Top: a square plane of format weight against length weight with a shaded triangle below the line where the two weights sum to one, and a marked point at 0.5 and 0.6 outside the triangle. Bottom: two horizontal bars showing the range of scores a pass and a failure can reach; the bars overlap."}}
from rlvr_lab.figures import relations

relations.reward_weights_figure(w_format=0.5, w_length=0.6)

# %% [markdown]
# Try weights that look harmless on a single pair of rollouts and fail the bound: the score table in the
# dashboard shows which failure climbs above which pass.

# %%
widgets.reward_weights_explorer(w_format=0.2, w_length=0.3)

# %% [markdown]
# Two rules keep composition honest:
#
# - **An unexecuted check is not a verdict.** If the harness crashes and a required check never ran, the
#   outcome is *unknown*, not $C=0$ (that penalises correct work for an infrastructure fault) and
#   certainly not $C=1$ (that is a new exploit). A timeout declared in the task contract *is* a failure;
#   a missing result because the runner died is not. Chapter 5 treats these rollouts.
# - **Penalties are not permissions.** A negative reward discourages an action; only the sandbox prevents
#   it, and no penalty undoes a side effect that already happened. Authorization, network isolation and
#   quotas belong to the harness; reward terms express preferences inside that perimeter.
# - **Partial credit is a different objective, not a softer one.** Rewarding the fraction of tests passed
#   changes which behaviour earns reinforcement. In a suite of ten tests, a candidate that
#   special-cases three easy inputs and solves nothing scores 3/10, more than an honest attempt whose one
#   wrong edge case breaks eight of the tests (2/10); and a group whose members all fail still has contrast. Partial credit needs its own ordering analysis like
#   {eq}`ch2-ordering` (does every full pass still outrank every partial one?) and its own protection, since
#   each test is now a separately gameable reward.
#
# ## Summary
#
# - A check measures what it covers; hardening protects the measurement, not the coverage.
# - Coding policies game checks by weakening them, bypassing them, or rewriting the verdict in the runner;
#   reachability, not instructions, decides how often.
# - The false-accept share {eq}`ch2-false-share` depends on the policy's pass rate as much as on the
#   verifier, and is largest early in training.
# - Shaped rewards {eq}`ch2-composite` keep every pass above every failure only under the strict bound
#   {eq}`ch2-ordering` and an enforced length cap.
#
# ## Exercises and labs
#
# - Exercise 1, *False accepts early and late*:
#   [student notebook](https://github.com/rlvr-lab/rlvr-lab/blob/main/labs/exercises/student/ex1_false_accepts.ipynb)
#   ([Colab](https://colab.research.google.com/github/rlvr-lab/rlvr-lab/blob/main/labs/exercises/student/ex1_false_accepts.ipynb)).
# - Exercise 2, *Keeping the pass above the failure*:
#   [student notebook](https://github.com/rlvr-lab/rlvr-lab/blob/main/labs/exercises/student/ex2_reward_order.ipynb)
#   ([Colab](https://colab.research.google.com/github/rlvr-lab/rlvr-lab/blob/main/labs/exercises/student/ex2_reward_order.ipynb)).
# - Lab 2, *Verifier red team*
#   ([notebook](https://github.com/rlvr-lab/rlvr-lab/blob/main/labs/lab2_verifier_red_team.ipynb)), and lab 4,
#   *Reward hacking under optimisation*, in the [labs folder](https://github.com/rlvr-lab/rlvr-lab/tree/main/labs).
