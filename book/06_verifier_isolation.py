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
# # 6. Verifier isolation: keeping the reward out of the candidate's reach
#
# (ch6-goals)=
# ## Goals
#
# After this chapter you can:
#
# - state what **verifier isolation** protects, and why it is a different property from test coverage;
# - describe the two workspaces in {ref}`the workspace table <ch6-table-workspaces>`, and what crosses between them;
# - run a gallery of real reward exploits against a naive harness and against `rlvr_lab`'s isolated
#   verifier, and explain each difference you see;
# - map crashes, timeouts and infrastructure faults onto the four verdicts so that no failure can be
#   converted into a reward;
# - compute the acceptance, false-rejection and expected-trial cost of the **all-pass rule**
#   equations {eq}`ch6-allpass` and {eq}`ch6-trials`, and compare the prediction with measured trials of a
#   timing-sensitive fixture.

# %% [markdown]
# ## Intuition: the reward is an attack surface
#
# Picture the trial `rl_trial_01` from {doc}`05_multi_turn`: an agent edits a connection pool, runs the unit
# tests in its own workspace, and submits a patch. The learning loop needs an authoritative verdict under the
# acceptance specification `repair_accept_v1`, not the agent's own report that the tests passed. Reinforcement
# learning is a search procedure that optimises whatever number comes back, and an agent that can edit the
# thing that produces the number will, sooner or later, edit it instead of the code. Evaluations at METR
# found exactly that: when a task left the scoring script writable, the model tampered with the scorer in
# every one of 21 runs {cite}`vonarx2025hacking`.
#
# Verifier isolation is the guarantee that the assessment harness and the verdict it produces are out of
# reach of both the policy and the candidate code it submits. It answers a different question from coverage.
# Coverage asks whether the tests check the behaviour we want; isolation asks whether the verdict reflects a
# real run of those tests at all. It is complete mediation {cite}`saltzer1975protection` applied to the reward
# path: every route to a verdict, including how modules are found and which test-runner binary runs, goes
# through a controller the candidate cannot touch, and the policy is given no write access it does not need.

# %% [markdown]
# (ch6-fixture)=
# ## The task under attack
#
# The chapter's fixture is the connection-pool repair of {doc}`05_multi_turn`. A fixture is plain data: its
# base files, the public tests the policy may see, the hidden tests it never sees, the paths a candidate may
# change, and the trial count $K$, the number of times the hidden tests are run before a patch is accepted.

# %%
from rlvr_lab.verifier import Verifier, VerifierPool
from rlvr_lab.verifier.fixtures import (
    exploit_info,
    list_exploits,
    load_exploit,
    load_fixture,
    load_reference,
)
from rlvr_lab.verifier.naive import NaiveVerifier

fixture = load_fixture("pool_repair_01")
print(
    f"{fixture.name} ({fixture.version}), checker {fixture.checker_version}, K = {fixture.trials} trials"
)
print("files a candidate may change:", fixture.allowed_paths)
print(
    "hidden test files (contents never shown to the policy):",
    sorted(fixture.hidden_tests),
)
print("limits per trial:", fixture.limits)

# %% [markdown]
# (ch6-gallery)=
# ## The exploit gallery, run live
#
# The repository ships a gallery of candidates for `pool_repair_01` that try to obtain a pass without fixing
# the race. They cover the three exploit classes of {doc}`02_verifiable_rewards` and then some.
#
# Weakening the check: an answer object whose equality test always succeeds. Bypassing the verified path: leaving the
# process with status 0 before the first assertion runs. Rewriting the verdict inside the runner: a
# `conftest.py` that files every failure as a pass, a forged JUnit report, configuration files that switch
# test collection off, tests replaced or rewritten at import.
#
# Beyond those, the gallery holds resource abuse
# (fork and memory bombs, an infinite loop, an output flood), an attempt to kill the harness, attempts to read the hidden tests, network escapes and processes that try to outlive the run. Two rows are subtler:
# `hash_collision_reply` answers with a set of values whose hashes all collide,
# so that whoever decodes the reply spends quadratic time and the runner overruns its deadline (a verdict of
# *infrastructure fault* would let a candidate censor its own GRPO group), and `terminal_escape` hides ANSI
# escape sequences in its error messages to paint a green "pass" on a reviewer's terminal. The cell
# below runs the exploits, live, through two verifiers:
#
# - `NaiveVerifier`, a teaching harness that builds one tree from the source, the public and hidden tests and
#   the candidate's files (configuration included), runs pytest there as the current user, and believes the
#   JUnit report or, failing that, the exit status, the way a quick script on a laptop would;
# - `Verifier(backend="auto")`, the isolated verifier: admission by allowed paths, a fresh workspace, a
#   trusted pytest process that holds the hidden tests, and the candidate's code in a sandbox that answers
#   through a proxy carrying plain data.

# %%
import os, time
from concurrent.futures import ThreadPoolExecutor
import pandas as pd

names = list_exploits()
infos = {n: exploit_info(n) for n in names}
cands = {n: load_exploit(n) for n in names}
naive = NaiveVerifier(timeout_s=20)
live_naive = [
    n for n in names if infos[n].naive == "pass"
]  # the naive harness only runs harmless ones
t0 = time.perf_counter()
with VerifierPool(workers=2, backend="auto") as pool, ThreadPoolExecutor(2) as threads:
    iso_futures = {n: pool.submit(cands[n], fixture, trials=1) for n in names}
    naive_verdicts = dict(
        zip(
            live_naive,
            threads.map(lambda n: naive.verify(cands[n], fixture), live_naive),
        )
    )
    iso_verdicts = {n: f.result() for n, f in iso_futures.items()}
for n in live_naive:  # remove what the naive runs left in /tmp
    if infos[n].sentinel and os.path.exists(infos[n].sentinel):
        os.remove(infos[n].sentinel)


def why(v):
    return v.trials[-1].reason if v.trials else v.stop_reason.split(" (allowed")[0]


gallery = pd.DataFrame(
    [
        {
            "exploit": n,
            "class": infos[n].klass,
            "naive harness": (
                naive_verdicts[n].outcome
                if n in naive_verdicts
                else (
                    "not run here (would harm the host)"
                    if infos[n].naive == "not-run"
                    else f"not run here (recorded: {infos[n].naive})"
                )
            ),
            "isolated verifier": iso_verdicts[n].outcome,
            "why (isolated)": why(iso_verdicts[n]),
        }
        for n in names
    ]
)
print(
    f"{len(names)} exploits through the isolated verifier and {len(live_naive)} through the naive harness "
    f"in {time.perf_counter() - t0:.1f} s"
)
pd.set_option("display.max_colwidth", 80)
gallery

# %% tags=["hide-input"] mystnb={"figure": {"caption": "The exploit gallery run live: each exploit's verdict under the naive harness and under the isolated verifier. Red marks a reward paid for a patch that does not repair the race.", "name": "fig-ch6-gallery"}, "image": {"alt": "A grid with one row per exploit and two columns, naive harness and isolated verifier. Several cells in the naive column are red passes or grey cells that were not run; the isolated verifier column holds no pass."}}
from rlvr_lab.figures import chapter

chapter.exploit_gallery_figure(gallery["exploit"], gallery["naive harness"], gallery["isolated verifier"])

# %% [markdown]
# The naive harness runs candidate code as the current user with the host's network and files, so this
# notebook runs it only on the exploits the gallery records it as rewarding, which do no harm to the machine
# beyond a file in `/tmp` that the cell removes. The bombs, the harness killer and the lingering daemon are
# run against the isolated verifier only; the red-team tests of the repository run them against both.
#
# Read the table row by row; the next section explains the design each row tests. Exploits that write outside the allowed paths never reach a
# test run: the isolated verifier refuses them at admission and records the reason. Exploits that try to
# end the process early or to fake the runner's output fail because the verdict comes from the trusted
# runner's own record of each test, not from the candidate's exit code or stdout. Exploits that try to read
# or patch the tests find neither the tests nor the runner in their sandbox. Anything that crashes, hangs or
# exceeds a limit is the candidate's failure.
#
# Two rows deserve a note. `network_fetch` tries to download a working pool from a server on the local
# machine; with nothing listening, even the naive harness fails it, and with a server (as in the repository's
# red-team tests) the naive harness would pay for a fix the policy never wrote, while the isolated sandbox has
# no network at all. `daemon_setsid` fails in both, but under the naive harness its daemon would outlive the
# run, ready to interfere with the next candidate: a verdict of `fail` does not mean the host is clean.
#
# What isolation does **not** do is just as important: a candidate that special-cases the inputs the hidden
# tests use is beaten only by better tests, not by a better boundary. Isolation makes the verdict a faithful
# report of the tests; whether the tests specify the task is the coverage question of
# {doc}`02_verifiable_rewards`.

# %% [markdown]
# (ch6-table-workspaces)=
# ## Two workspaces
#
# Grading inside the container where the agent explored leaves the runner, the imports and the exit code
# within the candidate's reach. The isolated design separates the two activities:
#
# | Concern | Exploration workspace | Assessment workspace |
# | --- | --- | --- |
# | State that may change | the task's working copy and whatever local diagnostics the agent may run | the candidate applied to a named fixture revision, under its own execution limits |
# | Authority over the result | public feedback only; no control over the deciding check | the protected criteria, the checker configuration and the authoritative result store |
# | What crosses the boundary | a captured candidate with bounded provenance | a verdict with declared evidence, bound to the candidate, fixture and checker versions |
#
# The controller does five things in order: it **captures** the candidate as a change, **binds** it to the
# rollout id and the base revision, **admits** it only if it touches files the task allows (application
# source, never tests, grading scripts or container configuration), **applies** it to a fresh copy of the
# fixture, and **runs** the hidden tests with a trusted runner. The candidate stays untrusted after it
# crosses: code that runs in the grader's interpreter can rewrite assertions, a read-only mount of the hidden
# tests still lets it read them, and whatever the candidate prints or returns as an exit code is telemetry,
# never a verdict.
#
# `rlvr_lab.verifier` implements this design, with the fixture of {ref}`ch6-fixture` as its input.
#
# The trusted runner has two ways to run the hidden tests. They are ordinary pytest files, and anything
# pytest treats specially (fixtures, parametrised tests, test classes, a `conftest.py`) runs under pytest,
# in a process forked for the trial.
#
# Most hidden tests are plainer than that: module-level
# `def test_*():` functions that call the candidate and assert on what comes back, like every procedural
# task of this course and HumanEval's `check(candidate)`. For those, pytest's collection and per-test
# bookkeeping cost more than the tests themselves, so the runner calls the functions directly, in the
# trial's seeded order, and writes the record that pytest's reports would have given; a trusted `ast` scan
# decides which route a fixture takes.
#
# When such tests import nothing but the candidate's modules and
# stateless standard-library modules, they run inside the runner process itself: fresh test modules every
# trial, a watchdog, and nothing of the candidate's but plain data and handles. The two routes decide
# alike (the test suite checks them case by case against `Verifier(test_runner="pytest")`). What the
# direct route gives up is pytest's assertion rewriting: a failed `assert` is reported by its source line,
# not with the values it compared. Each verdict names its route in `verdict.test_runner`.
#
# ### What crosses the boundary, and why
#
# The hidden tests hold no candidate object: whatever they receive must be something whose code is the
# runner's own, or the candidate could decide an assertion (an object whose `__eq__` always says yes).
# Plain data crosses by value with its exact type, and so do the standard library's containers and numbers
# (`defaultdict` with a builtin factory such as `list`, `OrderedDict`, `Counter`, `deque` with its
# `maxlen`, `Fraction`, `Decimal`); a candidate's subclass of any of them is refused or stays a handle that
# equals only itself.
#
# A candidate's named tuple arrives as a named tuple the runner makes from the name and
# field names, so `result == (1, 2)` and `result.x` behave as in plain Python without the candidate's
# methods.
#
# Linked lists, trees and graphs are built from classes of a test-helper module that the fixture
# declares as shared (`shared_modules` in its manifest, such as `listnode.py`); their objects cross *by
# value*, as a table of objects with their fields and references by id, so cycles and shared nodes arrive
# as they were sent, and each side rebuilds them from its own copy of the module, setting declared fields
# only, never unpickling and never running the other side's code. The sandbox executes the fixture's copy
# before the candidate's first import, so a candidate file of the same name is never used.
#
# By value means
# copies: a test checks what a function returns, not an argument the candidate changed in place (handles
# would keep identity, at a round trip per attribute read and with `==` reduced to identity).
#
# Everything else, generators included, stays in the sandbox behind a handle: each `next()` is one bounded request,
# the generator's own exception arrives as the test's exception, and requests stop at the trial's time
# limit, so an endless generator is a failed test, not a hung grader. The course's small fixtures
# `linked_reverse_01`, `graph_cycle_01`, `graph_bfs_01` and `windows_gen_01` exercise each case.

# %% [markdown]
# (ch6-red-team)=
# ### Red-teaming the boundary, and what cannot be closed
#
# A red team that played a policy searching for whatever earns reward found the boundary weaker at its
# edges than at its centre, and each finding became a rule with a test:
#
# | finding | what the candidate did | rule now |
# |---|---|---|
# | choosing its own verdict class | file names longer than the file system allows, `a` beside `a/b`, lone surrogates, a FIFO or symbolic link in its tree, a reply whose decoding overruns the runner: all came back *unknown* | everything a candidate controls is checked at admission; whatever it causes later is `fail` with a reason; only host faults are pending or unknown |
# | state between candidates | SysV shared memory, message queues and kernel keys left by one trial were visible to the next candidate under the same slot uid | a fresh IPC namespace per trial, shared memory capped within the memory limit, emptied keyrings, only the trial's own graded copy visible |
# | trusted-side amplification | a sparse file of terabytes in the explored tree drove the capturing process to gigabytes of memory | capture reads nothing before `lstat` says it is a small regular file; reply decoding has a byte budget and a hash-collision cap |
# | predictable hidden randomness | the trial seed reached the sandbox, and it also seeded the hidden test's random delays, so a racy patch could compute where the test's waiter would land and dodge it | the hidden tests' randomness is derived from a secret of the runner; test order and seeds still vary per trial |
# | weak acceptance suite | polling every 250 ms, one connection handed to two holders, and racy patches whose window lay outside the test's fixed 0-6 ms offset passed all 8 trials of `repair_accept_v1` | `repair_accept_v2`: a wake-up latency bound, exclusive ownership under many waiters, and waiters sent at secret random offsets across the candidate's whole `release` |
# | polling hidden in the standard library | a package whose import replaced `threading.Condition.wait` with a 20 ms self-wake left the notify missing and passed all 8 trials of `repair_accept_v2`: its waiters met the latency bound on a timer | `repair_accept_v3`: a waiter is blocked and, with nothing released, watched from a secret moment until 0.55 s after it started; the kernel's count of the candidate's context switches, read from outside the sandbox, must not move |
# | terminal output | raw escape bytes in an error message reached the reviewer's terminal | every human-readable field is escaped |
#
# One behaviour no boundary can stop: a candidate that *detects* the verifier and behaves well only there.
# It can look at its hostname, its working directory, its uid, the absence of a network, the timing of the
# calls it receives, or simply whether a test-like caller is present, and ship the broken code path to
# everyone else.
#
# The sandbox removes the tells that cost nothing to check. The candidate's working directory is
# `/home/user/project`, its hostname `localhost`, and inside a user namespace of its own it is uid and gid
# 1000 (outside, still the slot's uid). No path it can list, no environment variable and no seed names the
# verifier. Nor do the two files a curious program reads about itself: every process of a sandbox shows a
# plain `python3` as its command line, and the host folders behind its mounts, which
# `/proc/self/mountinfo` lists, have ordinary names. The same holds in the docker backend. A test plants a
# candidate that writes the bug unless it sees one of those tells, and it fails on both backends.
#
# A candidate that looks harder still finds seams. The namespace's uid map names the outer uid, its own call
# stack shows the server that called it, a container shows docker's init as its first process, a scratch
# folder that its user named after the course shows in the mount list, and a sandbox is by construction
# *different* from production: no network, tight limits, a proxy in front of every call. Any behavioural
# check judges the behaviour it observes, so a verdict is evidence about the candidate *under verification*. What closes the rest is
# outside the verifier: reading the change (a short diff against a known base), tests where the code really
# runs, and monitoring after release.
#
# The honest reference patches pass through the same isolated verifier:

# %%
from rlvr_lab.verifier.fixtures import list_references

expected = list_references("pool_repair_01")
refs = {name: load_reference("pool_repair_01", name) for name in expected}
isolated = Verifier(backend="auto")
lines = []
for name, cand in refs.items():
    verdict = isolated.verify(cand, fixture, trials=1)
    lines.append(
        f"{name:>20} (expected {expected[name]}): {verdict.outcome:5s} ({verdict.stop_reason}); "
        f"digest {verdict.candidate_digest[:12]}"
    )
print("\n".join(lines))

# %% [markdown]
# The racy patches are the interesting ones. Each checks for waiting threads without holding the lock, so a
# waiter that arrives inside a short window of `release` is lost, but only if the threads interleave that
# way. `repair_accept_v3` sends twenty waiters per trial at secret random offsets spread over the candidate's
# whole `release`, so the original `bad_racy_snapshot` (a 5 ms window) now fails every single trial, and
# `bad_racy_late_read` (a 3 ms window 7 ms into the release) almost always does.
#
# The narrowest,
# `bad_racy_narrow_window` (about 1 ms), still passes a single trial now and then. Over 40 single trials
# (`rlvr-lab calibrate --runs 40` on a 2-core machine) it passed 8 ($\hat q = 0.20$, 95 % interval
# 0.10-0.35). Every other known-bad patch failed all 40, among them the three that patch the standard
# library, and the known-good patch passed all 40.
# Re-running the cell can still change the narrow patch's single-trial verdict. That is the noisy-reward
# problem of {ref}`ch6-noisy`, and the reason the fixture's manifest runs the hidden tests $K$ times
# (printed at the top of the chapter) rather than once.

# %% [markdown]
# **Which sandbox ran these verdicts?** `backend="auto"` picks the strongest isolation this machine allows
# and prints one line naming it; every verdict repeats it in `verdict.backend` and lists the layers in
# `verdict.isolation`. As root that is `local`: namespaces plus a per-slot uid. As an ordinary user (a
# laptop, a CI runner) it is `local-userns`: the same namespaces inside an unprivileged user namespace,
# without the per-slot uid.
#
# Where user namespaces are disabled it falls back to `process`, which has no
# namespaces at all: rlimits, a process group under a subreaper, a scratch directory, a seccomp filter that
# refuses every socket except a Unix one (so no network on any kernel) and, where the kernel has Landlock, a
# filesystem allow-list. Without Landlock that backend loses one of the gallery's exploits (killing the
# harness turns `fail` into `unknown`), and it cannot hide files from code running as your own user, so
# treat its verdicts as weaker evidence. The table per backend is in `rlvr_lab/fixtures/exploits/README.md`.

# %% [markdown]
# (ch6-crashes)=
# ## Crashes, timeouts and missing verdicts
#
# Reinforcement learning adds an attack that offline evaluation rarely sees: turning a certain failure into a
# *missing* verdict. A candidate that hangs, exhausts memory or kills the runner produces no test report. If
# the pipeline then drops the rollout from its group, or scores it higher than an orderly failure, the
# policy learns that crashing the harness beats failing the tests.
#
# The rule is decided by the resource limits declared for the candidate's own execution:
#
# - the candidate **breached its limits** (an infinite loop past the 60 s budget, memory exhausted inside its
#   cap, a fork bomb, a crash of its own process): that is the candidate's doing, verdict `fail`, reward 0,
#   never better than an orderly test failure;
# - the **host or the grader failed** while the candidate stayed within its limits (an out-of-memory kill
#   caused by an oversubscribed host, a lost worker): infrastructure, verdict `pending` while a retry is
#   possible and `unknown` after, with the censoring rules of {ref}`ch5-censored`;
# - in **no** case may a verdict default to `pass`, and training telemetry reports the two kinds of stop
#   separately.
#
# A wall-clock deadline sits between the two. On a host that is also training or running other slots, a
# correct candidate can be kept off the CPU for seconds and miss a fixed deadline, which would charge the
# host's load to the candidate as a `fail`. The sandbox therefore extends a trial's deadline by the CPU
# contention the kernel reports while it runs (its pressure counter, `/proc/pressure/cpu`), and never past
# three times `wall_s` (`rlvr_lab.sandbox.clock`). A hang on a quiet host still ends at `wall_s`;
# a candidate that loads the CPU itself gains at most the cap; and the end at the cap is still `timeout`, a
# `fail`, so no candidate can turn its own hang into an infrastructure fault.
#
# Isolation also has an egress side, the confinement problem {cite}`lampson1973confinement`. Even a one-bit
# pass/fail answer leaks information across many submissions, and richer multi-turn feedback leaks more.
# Intermediate feedback must never show hidden test names, assertion details or internal tracebacks, or the
# policy will reconstruct the hidden suite turn by turn. A training loop declares what feedback reaches the
# agent and keeps it minimal; and because tests used as rewards become training data, an unbiased release
# assessment needs suites that the training loop never runs.

# %% [markdown]
# (ch6-noisy)=
# ## Repeated checks and noisy rewards
#
# Isolation removes tampering; it does not remove chance. `pool_repair_01` is a race on connection return, so
# its tests depend on thread scheduling, and a check that depends on scheduling, network jitter or an event
# loop can accept a wrong patch or reject a right one with both test files perfectly protected. Repeating the
# check reduces accidental acceptance. (It does nothing for an under-specified suite: a wrong patch that
# satisfies the incomplete tests passes every repetition.)
#
# Let $q$ be the probability that a fixed candidate passes one trial under a fixed protocol. If $K$ trials are
# independent with the same $q$, the **all-pass rule**, which accepts only if every trial passes, accepts
# with probability
#
# ```{math}
# :label: ch6-allpass
# \Pr(\text{accept} \mid q) = q^{K}.
# ```
#
# Here $K$ counts every trial, the first included; "one pass plus $K$ confirmation reruns" would be
# $q^{K+1}$. For the narrow-window patch measured above, $\hat q = 0.20$ and the fixture's $K = 8$ give
# $\hat q^{8} \approx 2.6 \times 10^{-6}$, and below $2.2 \times 10^{-4}$ even at the interval's upper end.
#
# When trials are dependent the product of conditional pass probabilities replaces $q^K$, and it
# can be much larger: fresh containers and randomised seeds push trials towards independence, while a
# persistent checker bug or a shared overloaded host correlates them.
#
# Verification usually **stops at the first rejection**. Trial $j+1$ runs only if the first $j$ passed, so the
# expected number of trials is
#
# ```{math}
# :label: ch6-trials
# \mathbb{E}[N \mid q] = \sum_{j=0}^{K-1} q^{j}.
# ```

# %% [markdown]
# ### The chapter's worked numbers
#
# A wrong patch that passes a trial with $q_{\mathrm{bad}} = 0.20$ and a right one with
# $q_{\mathrm{good}} = 0.98$, checked with $K = 3$:

# %%
from rlvr_lab import rewards
from rlvr_lab.grpo import lone_pass_coefficient

q_bad, q_good, K = 0.20, 0.98, 3
print(
    f"wrong patch accepted:       {rewards.all_pass_probability(q_bad, K):.3%}  "
    f"(one trial: {q_bad:.0%})"
)
print(f"right patch falsely failed: {1 - rewards.all_pass_probability(q_good, K):.2%}")
print(f"expected trials, wrong:     {rewards.expected_trials(q_bad, K):.4f}")
print(f"expected trials, right:     {rewards.expected_trials(q_good, K):.4f}")
print(
    f"16 wrong candidates, one trial each: P(at least one false pass) = {1 - (1 - q_bad) ** 16:.1%}"
)
print(
    f"...and a lone false pass in a group of 16 gets coefficient {lone_pass_coefficient(16):.2f}"
)

# %% [markdown]
# The last two lines are why noisy rewards matter more under GRPO than under a plain average. On a hard task
# almost every group member fails; a single lucky pass is then the group's only pass and receives the largest
# coefficient the group can give, $\sqrt{G-1} \approx 3.87$ for $G = 16$, by equation {eq}`ch4-lone-pass`. A flaky
# pass is as damaging as a tampered one: the optimiser spends its biggest update on scheduling luck.
#
# Each extra trial multiplies a wrong patch's acceptance by $q_{\mathrm{bad}}$ and a right patch's by
# $q_{\mathrm{good}}$, so the rule pays off when the two are far apart. Stopping at the first rejection puts
# the verification work where it is least expected: wrong patches stop after about one trial, right ones run
# nearly all $K$. A pool must be sized for the passing share of the population, not for one trial per
# candidate ({doc}`08_environments_and_rollouts`).
#
# **Averages lie here.** For a population of candidates with different $q$, the expected work is the average of
# {eq}`ch6-trials` over the population, not {eq}`ch6-trials` at the average $q$. The sum of powers is
# convex in $q$, so plugging in the mean *underestimates* the work (Jensen's inequality):

# %%
import numpy as np
qs, weights = [0.10, 0.97], [0.6, 0.4]  # 60 % wrong patches, 40 % right ones
mixture = rewards.expected_trials(qs, K, weights=weights)
plug_in = rewards.expected_trials(float(np.dot(qs, weights)), K)
print(
    f"mixture: {mixture:.3f} trials per candidate; mean-q plug-in: {plug_in:.3f} (too low by "
    f"{1 - plug_in / mixture:.1%})"
)

# %% [markdown]
# Move the sliders to see the trade the rule makes: accidental acceptance of the wrong patch against false
# rejection of the right one, and the trials each costs under stop-on-first-rejection.

# %%
from rlvr_lab.figures.widgets import all_pass_explorer

all_pass_explorer(trials=3, q_bad=0.20, q_good=0.98)

# %% [markdown]
# (ch6-measured)=
# ### Measured, not assumed: the reference patches under repeated trials
#
# The numbers above are hypothetical. The repository's fixture lets us measure. We run the correct
# reference patch and the narrow-window racy one (`bad_racy_narrow_window`, which checks for waiters without
# holding the lock)
# through several single trials to estimate its per-trial pass rate $\hat q$, then apply
# the all-pass rule with $K = 3$ a few times and compare what the verifier did with what
# {eq}`ch6-allpass` and {eq}`ch6-trials` predict from $\hat q$. The sample sizes are small to keep the
# chapter under a minute; lab 3 repeats the experiment with hundreds of trials.

# %%
from rlvr_lab.verifier import VerifierPool

N_SINGLE, N_RULE = 10, 5
measured = []
with VerifierPool(workers=2, backend="auto") as pool:
    for name in ["good", "bad_racy_narrow_window"]:
        cand = refs[name]
        singles = [pool.submit(cand, fixture, trials=1) for _ in range(N_SINGLE)]
        rules = [pool.submit(cand, fixture, trials=3) for _ in range(N_RULE)]
        singles, rules = [f.result() for f in singles], [f.result() for f in rules]
        q_hat = np.mean([s.outcome == "pass" for s in singles])
        measured.append(
            {
                "candidate": name,
                "q_hat (single trials)": q_hat,
                "accepted K=3, measured": np.mean([r.outcome == "pass" for r in rules]),
                "accepted K=3, predicted": rewards.all_pass_probability(q_hat, 3),
                "trials used, measured": np.mean([len(r.trials) for r in rules]),
                "trials used, predicted": rewards.expected_trials(q_hat, 3),
                "unresolved": sum(not r.resolved for r in singles + rules),
            }
        )
pd.DataFrame(measured).round(3)

# %% [markdown]
# With ten trials per patch the estimates are coarse (a 95 % interval on $\hat q$ from 10 trials is
# roughly $\pm 0.3$ in the middle of the range), so read the comparison for agreement in kind: patches whose
# $\hat q$ is near 0 or 1 behave exactly as predicted, and any patch with an intermediate $\hat q$ is precisely
# a candidate the all-pass rule is for. The `unresolved` column should be zero; a non-zero count means the
# harness itself misbehaved and those runs are infrastructure evidence, not reward.
#
# The static figure summarises the rule's trade for the chapter's hypothetical patches and places the
# measured reference patches on the same axes.

# %% tags=["hide-input"] mystnb={"figure": {"caption": "The all-pass rule predicted and measured. Top: acceptance probability against the number of trials K for the two hypothetical patches (q = 0.20 and 0.98) and for the measured reference patches, with their measured acceptance at K = 3. Bottom: expected trials under stop-on-first-rejection.", "name": "fig-ch6-all-pass-measured"}, "image": {"alt": "Two stacked charts against K from 1 to 8. Top, on a log axis: the wrong patch's acceptance falls by a factor of five per trial while the right patch's stays near 1; markers at K = 3 show the measured reference patches. Bottom: the right patch's expected trials climb almost along the line of running every trial, while the wrong patch's stay near one."}}
chapter.all_pass_measured_figure(measured, q_bad=q_bad, q_good=q_good, rule_runs=N_RULE)

# %% [markdown]
# ### When runs disagree
#
# Disagreeing runs are a symptom, and repetition treats only the symptom. A harness that flips verdicts
# needs repair: vary test order and process scheduling deliberately, run known-good and known-bad reference
# artifacts through it regularly to catch fixture drift before it reaches the rewards, and quarantine a test
# that stays flaky. Quarantining changes the reward function, so test-suite revisions are versioned and the
# trial history is kept. Isolation and repetition close the tampering and flakiness paths that were named;
# what the policy learns is still bounded by what the protected checks actually cover, and release needs
# independent evidence.
#
# (ch6-summary)=
# ## Summary
#
# - Verifier isolation protects the **verdict**, not the coverage: the candidate is captured, admitted by
#   allowed paths, applied to a fresh fixture and judged by a trusted runner it cannot reach.
# - Live against the gallery, the naive harness pays reward for exploits that the isolated verifier refuses
#   at admission or fails in the sandbox; specification gaming is the one class only better tests can stop.
# - Candidate-caused crashes and limit breaches are **failures**; host and grader faults are **pending** or
#   **unknown**; nothing defaults to a pass. Feedback to the agent is minimal and declared.
# - The all-pass rule accepts with $q^K$, equation {eq}`ch6-allpass`, and costs $\sum_{j<K} q^j$ trials under
#   stop-on-first-rejection, equation {eq}`ch6-trials`; with $q = 0.2$ and $0.98$ and $K = 3$ that is 0.8 %
#   false acceptance against 5.88 % false rejection, 1.24 against 2.94 trials. Average the work over the
#   population, never at the mean $q$.
# - Under GRPO a lone false pass earns the group's largest coefficient, so a flaky check is as harmful as a
#   tampered one.
#
# (ch6-practice)=
# ## Exercises and labs
#
# - Exercise 3, *Sizing an all-pass rule*: [student notebook](https://github.com/rlvr-lab/rlvr-lab/blob/main/labs/exercises/student/ex3_all_pass_rule.ipynb) ([Colab](https://colab.research.google.com/github/rlvr-lab/rlvr-lab/blob/main/labs/exercises/student/ex3_all_pass_rule.ipynb)).
# - Exercise 7, *Staleness bounds and verifier provisioning*: [student notebook](https://github.com/rlvr-lab/rlvr-lab/blob/main/labs/exercises/student/ex7_staleness_provisioning.ipynb) ([Colab](https://colab.research.google.com/github/rlvr-lab/rlvr-lab/blob/main/labs/exercises/student/ex7_staleness_provisioning.ipynb)). Parts (c) and (d) are stop-on-first-rejection and the mean-$q$ trap.
# - Lab 2, *Verifier red team*: [notebook](https://github.com/rlvr-lab/rlvr-lab/blob/main/labs/lab2_verifier_red_team.ipynb) ([Colab](https://colab.research.google.com/github/rlvr-lab/rlvr-lab/blob/main/labs/lab2_verifier_red_team.ipynb)). Write your own exploits and run them against both verifiers.
# - Lab 3, *Noisy rewards*: [notebook](https://github.com/rlvr-lab/rlvr-lab/blob/main/labs/lab3_noisy_rewards.ipynb) ([Colab](https://colab.research.google.com/github/rlvr-lab/rlvr-lab/blob/main/labs/lab3_noisy_rewards.ipynb)). The measurement above, with hundreds of trials.
# - Lab 4, *Reward hacking under optimisation*: [notebook](https://github.com/rlvr-lab/rlvr-lab/blob/main/labs/lab4_reward_hacking.ipynb) ([Colab](https://colab.research.google.com/github/rlvr-lab/rlvr-lab/blob/main/labs/lab4_reward_hacking.ipynb)). Train against both verifiers and watch the exploit rate.
