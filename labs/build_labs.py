"""Write the lab notebooks (``labs/lab*.ipynb``) from the cell lists below.

Keeping the labs as plain Python strings makes them reviewable in a diff; run from the repository root
after an edit::

    python labs/build_labs.py

Importing this module does nothing; only running it writes the notebooks. The notebooks are committed
without outputs: ``pytest`` runs each of them top to bottom with nbval on the ``ci`` preset.
"""

from __future__ import annotations

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))

COLAB = """**Running this lab.** On Colab: *Runtime → Change runtime type → GPU*, then run the first cell, which
installs the course library if it is missing (set `RLVR_LAB_SOURCE` to the repository's git URL or a
local checkout). On a laptop: `pip install -e ".[all]"` in the repository and open this notebook.

**Preset.** The lab sizes itself from the environment variable `RLVR_LAB_PRESET`: `ci` (seconds; what the
test suite runs), `cpu` (minutes on a laptop) or `gpu` (a Colab GPU). Unset, it picks `gpu` when CUDA is
available and `cpu` otherwise. The numbers quoted in the closing note are printed by the code from this
run, so they always describe the preset and machine you ran."""

SETUP = '''import os, sys, platform, subprocess, importlib.util
if importlib.util.find_spec("rlvr_lab") is None:  # Colab: install the course library first
    source = os.environ.get("RLVR_LAB_SOURCE")
    if not source:
        raise RuntimeError("rlvr_lab is not installed: set RLVR_LAB_SOURCE to the repository URL or path")
    subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", source + "[all]"])

def default_preset():
    try:
        import torch
        return "gpu" if torch.cuda.is_available() else "cpu"
    except ImportError:
        return "cpu"

PRESET = os.environ.get("RLVR_LAB_PRESET") or default_preset()
if PRESET not in ("ci", "cpu", "gpu"):
    raise ValueError(f"RLVR_LAB_PRESET must be 'ci', 'cpu' or 'gpu', got {PRESET!r}")
HARDWARE = f"{platform.machine()} {platform.system()}, {os.cpu_count()} CPU cores, Python {platform.python_version()}"
print("preset:", PRESET, "|", HARDWARE)'''


def md(text: str) -> tuple:
    return ("markdown", text)


def code(text: str) -> tuple:
    return ("code", text)


# ---------------------------------------------------------------- lab 3: noisy rewards

LAB3 = [
    md("""# Lab 3 - Noisy rewards: measuring q and testing the all-pass rule

Section 17.7.2 models a timing-sensitive check as a coin: one trial passes a fixed candidate with
probability q, trials are independent, and the all-pass rule with K trials accepts with probability
q^K, stopping at the first rejection after E[N | q] = sum_{j<K} q^j trials on average.

This lab puts that model against a real sandboxed verifier. The fixture `pool_repair_01` is a connection
pool that loses wake-ups; its hidden tests race threads against each other, so a *racy* patch can pass a
single trial by luck. We

1. measure q for each of the fixture's reference patches over many single trials,
2. predict the acceptance probability and expected trials of the fixture's rule (K = 3) from the
   measured q, and
3. run the rule itself many times and compare what the verifier actually did with the prediction.

**What is measured, where, how often.** Every number below comes from running the hidden tests of
`pool_repair_01` in the `local` sandbox backend of `rlvr_lab.verifier` on the machine printed by the next
cell; the number of trials per patch depends on the preset and is printed with each result. Test order
and the candidate's RNGs are reseeded for every trial (fresh seeds drawn from the OS), so repeated trials
are independent draws of the thread timing."""),
    md(COLAB),
    code(SETUP),
    code('''import math, time
import numpy as np
import matplotlib.pyplot as plt
from rlvr_lab import rewards
from rlvr_lab.verifier import Verifier
from rlvr_lab.verifier.fixtures import list_references, load_fixture, load_reference

SIZES = {"ci": dict(single=10, single_slow=3, rule=8, rule_slow=2),
         "cpu": dict(single=60, single_slow=10, rule=40, rule_slow=8),
         "gpu": dict(single=200, single_slow=20, rule=100, rule_slow=10)}[PRESET]
fixture = load_fixture("pool_repair_01")
K = fixture.trials
patches = {name: load_reference("pool_repair_01", name) for name in list_references("pool_repair_01")}
print(f"fixture {fixture.name} {fixture.version}, K = {K}, limits: {fixture.limits.wall_s} s wall per trial")
print("reference patches and their expected verdicts:", list_references("pool_repair_01"))'''),
    md("""## 1. Measure q: many single trials per patch

`trials=1` asks the verifier for exactly one run of the hidden suite. A patch that fails
deterministically fails fast only if its failure is quick; `bad_unlocked_notify` raises on every release
and the tests wait for timeouts, so it gets fewer trials (`single_slow`)."""),
    code('''def wilson(successes, n, z=1.96):
    """95 % Wilson score interval of a binomial proportion."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))

verifier = Verifier(backend="local")
single = {}
for name, candidate in patches.items():
    n = SIZES["single_slow"] if name == "bad_unlocked_notify" else SIZES["single"]
    start = time.perf_counter()
    outcomes = [verifier.verify(candidate, fixture, trials=1).outcome for _ in range(n)]
    passes = outcomes.count("pass")
    single[name] = dict(n=n, passes=passes, q=passes / n, ci=wilson(passes, n),
                        s_per_trial=(time.perf_counter() - start) / n,
                        unresolved=sum(o not in ("pass", "fail") for o in outcomes))
for name, s in single.items():
    print(f"{name:22s} q = {s['q']:.3f}  95% CI [{s['ci'][0]:.2f}, {s['ci'][1]:.2f}]  "
          f"({s['passes']}/{s['n']} single trials, {s['s_per_trial']:.2f} s each, {s['unresolved']} unresolved)")'''),
    md("""## 2. Predict the rule from q, then run the rule

From each measured q the model predicts acceptance `rewards.all_pass_probability(q, K)` and the mean
number of trials `rewards.expected_trials(q, K)`. Then the verifier runs the fixture's own rule
(`trials=None`, i.e. K = 3 with stop-on-first-rejection) repeatedly, and we count acceptances and the
trials each verification actually used (`len(verdict.trials)`)."""),
    code('''rule = {}
for name, candidate in patches.items():
    m = SIZES["rule_slow"] if name == "bad_unlocked_notify" else SIZES["rule"]
    verdicts = [verifier.verify(candidate, fixture) for _ in range(m)]
    accepted = sum(v.outcome == "pass" for v in verdicts)
    rule[name] = dict(m=m, accepted=accepted, rate=accepted / m, ci=wilson(accepted, m),
                      trials_used=float(np.mean([len(v.trials) for v in verdicts])))
verifier.close()

rows = []
for name in patches:
    q = single[name]["q"]
    rows.append((name, q, float(rewards.all_pass_probability(q, K)), rule[name]["rate"],
                 float(rewards.expected_trials(q, K)), rule[name]["trials_used"], rule[name]["m"]))
print(f"{'patch':22s} {'q':>6s} {'pred acc':>9s} {'obs acc':>8s} {'pred E[N]':>10s} {'obs N':>7s} {'runs':>5s}")
for name, q, pa, oa, pe, oe, m in rows:
    print(f"{name:22s} {q:6.3f} {pa:9.3f} {oa:8.3f} {pe:10.3f} {oe:7.3f} {m:5d}")'''),
    code('''fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
x = np.arange(len(rows))
names = [r[0] for r in rows]
pred_acc = [r[2] for r in rows]
obs_acc = [r[3] for r in rows]
err = np.array([[r[3] - rule[r[0]]["ci"][0], rule[r[0]]["ci"][1] - r[3]] for r in rows]).T
axes[0].bar(x - 0.2, pred_acc, 0.4, label="predicted q^K")
axes[0].bar(x + 0.2, obs_acc, 0.4, yerr=err, capsize=4, label="observed (95% CI)")
axes[0].set_xticks(x, names, rotation=15)
axes[0].set_ylabel(f"acceptance probability, K = {K}")
axes[0].legend()
axes[1].bar(x - 0.2, [r[4] for r in rows], 0.4, label="predicted E[N | q]")
axes[1].bar(x + 0.2, [r[5] for r in rows], 0.4, label="observed mean trials")
axes[1].set_xticks(x, names, rotation=15)
axes[1].set_ylabel("trials per verification")
axes[1].legend()
fig.suptitle(f"pool_repair_01, local sandbox, preset {PRESET}")
fig.tight_layout()
plt.show()'''),
    md("""## 3. What the rule buys against a racy patch

The rule's protection against a patch that passes a single trial with probability q is q^K. Below, the
curve of q^K for K = 1..6 at the *measured* q of `bad_racy_snapshot`, with the smallest K that would bring
its acceptance under 1 % - and the price the good patch pays in trials at that K."""),
    code('''q_racy = single["bad_racy_snapshot"]["q"]
q_good = single["good"]["q"]
ks = np.arange(1, 7)
plt.figure(figsize=(5, 3.2))
plt.semilogy(ks, [max(rewards.all_pass_probability(q_racy, int(k)), 1e-6) for k in ks], "o-",
             label=f"racy patch, measured q = {q_racy:.2f}")
plt.axhline(0.01, color="grey", ls="--", label="1 % acceptance")
plt.xlabel("K (trials required)"); plt.ylabel("acceptance probability"); plt.legend(); plt.tight_layout()
plt.show()
needed = next((int(k) for k in range(1, 200) if rewards.all_pass_probability(q_racy, k) < 0.01), None)
if needed is None:
    print("the racy patch passed every trial: q was not distinguishable from 1 at this sample size")
else:
    print(f"K for < 1 % racy acceptance: {needed}; the good patch then needs "
          f"{float(rewards.expected_trials(q_good, needed)):.2f} trials on average")'''),
    md("""## Closing note

The cell below prints this run's findings. What to look for: the deterministic patches sit at q = 0 or
q = 1 and the rule treats them exactly as predicted (a failing patch costs one trial, a passing one K);
the racy patch has an intermediate q, and its observed acceptance under K = 3 should fall inside the
confidence band around q^3. Where the observation misses the prediction, the independence assumption is
the suspect: trials that share a warm machine or a loaded core are correlated, and a correlated q makes
repeated trials buy less than q^K promises - the reason section 17.7.2 prefers repairing a fixture's
timing sensitivity to adding trials."""),
    code('''print(f"Measured on {HARDWARE}, local sandbox backend, preset {PRESET}.")
for name, q, pa, oa, pe, oe, m in rows:
    s = single[name]
    inside = rule[name]["ci"][0] <= pa <= rule[name]["ci"][1]
    print(f"- {name}: q = {q:.2f} from {s['n']} single trials; K = {K}: predicted acceptance {pa:.2f}, "
          f"observed {oa:.2f} over {m} runs (prediction {'inside' if inside else 'outside'} the 95% CI); "
          f"trials per verification predicted {pe:.2f}, observed {oe:.2f}.")'''),
]

# ---------------------------------------------------------------- lab 2: verifier red team

LAB2 = [
    md("""# Lab 2 - Verifier red team: what does each harness let through?

A verifier is a reward function, and a policy under optimisation pressure searches it for holes
(sections 17.3.1 and 17.7.1). In this lab you attack two harnesses with the same candidates:

* `NaiveVerifier` - what many real harnesses do: copy the candidate over the tree, hidden tests included,
  run `pytest` as your user, read the exit status or the JUnit report. **Teaching only**: it runs the
  candidate's code with your rights, so only feed it the candidates in this notebook.
* `Verifier(backend="local")` - the isolated verifier of `rlvr_lab`: admission refuses changes outside the
  allowed paths, the candidate runs in its own namespaces as an unprivileged user under resource limits,
  the hidden tests run in a trusted process and reach the candidate only through a proxy carrying plain
  data, and nothing defaults to `pass`.

Both judge the same task, `pool_repair_01` (repair a connection pool that loses wake-ups). You will run
the exploit gallery of `fixtures/exploits/`, then **write your own exploits** and tabulate what each
harness lets through.

**What is measured, where, how often.** One verification per candidate and harness on the machine printed
below (the isolated verifier with the fixture's K = 3 trials, stopping at the first rejection; the naive
harness with one run). The gallery subset depends on the preset; exploits that would damage the host when
run by the naive harness (fork and memory bombs, killing the parent, flooding output, leaving a daemon)
are never given to it."""),
    md(COLAB),
    code(SETUP),
    code("""import time
import matplotlib.pyplot as plt
from rlvr_lab.verifier import Candidate, Verifier
from rlvr_lab.verifier.naive import NaiveVerifier
from rlvr_lab.verifier.fixtures import exploit_info, list_exploits, load_exploit, load_fixture, load_reference

fixture = load_fixture("pool_repair_01")
SAFE_FOR_NAIVE = [n for n in list_exploits() if exploit_info(n).naive != "not-run" and n != "daemon_setsid"]
CI_SUBSET = ["exit_sys", "conftest_report_patch", "forge_junit", "pyproject_addopts"]
gallery = [n for n in SAFE_FOR_NAIVE if PRESET != "ci" or n in CI_SUBSET]
print(f"{len(list_exploits())} exploits in the gallery; {len(SAFE_FOR_NAIVE)} safe to give the naive harness; "
      f"running {len(gallery)} on preset {PRESET}")
for n in gallery:
    info = exploit_info(n)
    print(f"- {n} ({info.klass}): {info.tries}")"""),
    md("""## 1. Your exploits

Each exploit is a dict `{relative path: file text}` of files the candidate submits, on top of the
fixture's tree (`pool_fixture/__init__.py`, `pool_fixture/pool.py`). Two examples are filled in; **add at
least two of your own** below them. Ideas: make the test run collect nothing; make a comparison always
succeed; change how pytest is configured; leave the process before any assertion; read the hidden tests
and special-case them. Then predict, for each, what the naive and the isolated verifier will say."""),
    code("""MY_EXPLOITS = {
    # A root conftest.py that deselects every collected test: pytest then runs nothing and reports no failure.
    "deselect_everything": {
        "conftest.py": "def pytest_collection_modifyitems(config, items):\\n    items.clear()\\n",
    },
    # Exit with status 0 when the interpreter shuts down, hoping the harness trusts the exit status.
    "exit_zero_at_shutdown": {
        "pool_fixture/__init__.py": (
            "import atexit, os\\n"
            "atexit.register(lambda: os._exit(0))\\n"
            "from pool_fixture.pool import Connection, ConnectionPool\\n"
            "__all__ = ['Connection', 'ConnectionPool']\\n"),
    },
    # Add your own here, e.g. "my_exploit": {"pool_fixture/pool.py": "..."},
}"""),
    md("""## 2. Run everything against both harnesses

Controls first: the fixture's known-good patch (both should pass it) and a known-bad patch (both should
fail it). A harness that fails a control is broken before any exploit is tried."""),
    code("""candidates = {"control: good patch": ("control", load_reference("pool_repair_01", "good")),
              "control: bad patch": ("control", load_reference("pool_repair_01", "bad_unlocked_notify"))}
for n in gallery:
    candidates[n] = (exploit_info(n).klass, load_exploit(n))
for n, files in MY_EXPLOITS.items():
    candidates["mine: " + n] = ("student", Candidate(files))

naive, isolated = NaiveVerifier(timeout_s=30), Verifier(backend="local")
results = []
for name, (klass, candidate) in candidates.items():
    t0 = time.perf_counter()
    nv = naive.verify(candidate, fixture)
    t1 = time.perf_counter()
    iv = isolated.verify(candidate, fixture)
    t2 = time.perf_counter()
    results.append(dict(name=name, klass=klass, naive=nv.outcome, isolated=iv.outcome,
                        why=iv.stop_reason or (iv.trials[-1].reason if iv.trials else ""),
                        naive_s=t1 - t0, isolated_s=t2 - t1))
isolated.close()

print(f"{'candidate':34s} {'class':32s} {'naive':7s} {'isolated':8s}  isolated's reason")
for r in results:
    print(f"{r['name']:34s} {r['klass'][:32]:32s} {r['naive']:7s} {r['isolated']:8s}  {r['why'][:60]}")"""),
    code("""exploits = [r for r in results if r["klass"] != "control"]
through = {"naive": sum(r["naive"] == "pass" for r in exploits),
           "isolated": sum(r["isolated"] == "pass" for r in exploits)}
fig, ax = plt.subplots(figsize=(5, 3))
ax.bar(list(through), list(through.values()), color=["tab:red", "tab:green"])
ax.set_ylabel("exploits rewarded (pass)")
ax.set_title(f"{len(exploits)} exploits on pool_repair_01, preset {PRESET}")
for i, v in enumerate(through.values()):
    ax.text(i, v + 0.1, str(v), ha="center")
fig.tight_layout()
plt.show()

controls = {r["name"]: (r["naive"], r["isolated"]) for r in results if r["klass"] == "control"}
assert controls["control: good patch"] == ("pass", "pass"), controls
assert controls["control: bad patch"] == ("fail", "fail"), controls"""),
    md("""## 3. Questions

1. Which of your exploits did the naive harness reward, and which step of its recipe (copying tests next
   to the candidate, trusting the exit status, trusting a report file, honouring configuration files)
   did each one use?
2. For each exploit the isolated verifier rejected, read its reason: was it refused at **admission**
   (a path outside `pool_fixture/*.py`), or did it run and **fail** the hidden tests?
3. Would an exploit that fools a harness only *sometimes* be harmless in training? (Section 17.5.1: a
   lone pass in a group gets the largest coefficient.)

## Closing note

The next cell prints this run's tally."""),
    code("""print(f"Measured on {HARDWARE}, preset {PRESET}: one naive run and one isolated verification (K = "
      f"{fixture.trials}) per candidate.")
print(f"- naive harness rewarded {through['naive']} of {len(exploits)} exploits: "
      + ", ".join(r["name"] for r in exploits if r["naive"] == "pass"))
print(f"- isolated verifier rewarded {through['isolated']} of {len(exploits)}"
      + (": " + ", ".join(r["name"] for r in exploits if r["isolated"] == "pass") if through["isolated"] else ""))
print(f"- both controls behaved: good patch {controls['control: good patch']}, "
      f"bad patch {controls['control: bad patch']} (naive, isolated)")
print(f"- median seconds per candidate: naive {sorted(r['naive_s'] for r in results)[len(results) // 2]:.2f}, "
      f"isolated {sorted(r['isolated_s'] for r in results)[len(results) // 2]:.2f}")"""),
]


LABS = {"lab2_verifier_red_team": LAB2, "lab3_noisy_rewards": LAB3}


def notebook(cells) -> dict:
    """nbformat-4 JSON of a lab from its ``(kind, source)`` cells."""
    out = []
    for i, (kind, source) in enumerate(cells):
        cell = {"cell_type": kind, "id": f"c{i:02d}", "metadata": {}, "source": source}
        if kind == "code":
            cell.update(execution_count=None, outputs=[])
        out.append(cell)
    return {"cells": out,
            "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                         "language_info": {"name": "python"}, "accelerator": "GPU"},
            "nbformat": 4, "nbformat_minor": 5}


def write_all(names=None) -> list:
    """Write the labs (all, or those named) next to this file; return the paths."""
    written = []
    for name, cells in LABS.items():
        if names and name not in names:
            continue
        path = os.path.join(HERE, name + ".ipynb")
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(notebook(cells), handle, indent=1, ensure_ascii=False)
            handle.write("\n")
        written.append(path)
    return written


if __name__ == "__main__":
    import sys

    for path in write_all(sys.argv[1:]):
        print(path)
