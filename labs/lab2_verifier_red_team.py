# ---
# jupyter:
#   accelerator: GPU
#   jupytext:
#     formats: ipynb,py:percent
#     notebook_metadata_filter: accelerator
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
# # Lab 2 - Verifier red team: what does each harness let through?
#
# A verifier is a reward function, and a policy under optimisation pressure searches it for holes
# (chapters 2 and 6). In this lab you attack two harnesses with the same candidates:
#
# * `NaiveVerifier` - what many real harnesses do: copy the candidate over the tree, hidden tests included,
#   run `pytest` as your user, read the exit status or the JUnit report. **Teaching only**: it runs the
#   candidate's code with your rights, so only feed it the candidates in this notebook.
# * `Verifier(backend="local")` - the isolated verifier of `rlvr_lab`: admission refuses changes outside the
#   allowed paths, the candidate runs in its own namespaces as an unprivileged user under resource limits,
#   the hidden tests run in a trusted process and reach the candidate only through a proxy carrying plain
#   data, and nothing defaults to `pass`.
#
# Both judge the same task, `pool_repair_01` (repair a connection pool that loses wake-ups). You will run
# the exploit gallery of `rlvr_lab/fixtures/exploits/`, then **write your own exploits** and tabulate what each
# harness lets through.
#
# **What is measured, where, how often.** One verification per candidate and harness on the machine printed
# below (the isolated verifier with the fixture's K trials, stopping at the first rejection; the naive
# harness with one run). The gallery subset depends on the preset; exploits that would damage the host when
# run by the naive harness (fork and memory bombs, killing the parent, flooding output, leaving a daemon)
# are never given to it.

# %% [markdown]
# **Running this lab.** On Colab: *Runtime → Change runtime type → GPU*, then run the first cell, which
# installs the course library there (from the repository, or from a wheel file you uploaded: set
# `RLVR_LAB_SOURCE` to its path first). On a laptop: `pip install ".[runtime]"` in the repository (or the
# wheel) and open this notebook.
#
# **Preset.** The lab sizes itself from the environment variable `RLVR_LAB_PRESET`: `ci` (seconds; what the
# test suite runs), `cpu` (minutes on a laptop) or `gpu` (a Colab GPU). Unset, it picks `gpu` when CUDA is
# available (as on a Colab GPU runtime) and `cpu` otherwise. The numbers quoted in the closing note are
# printed by the code from this run, so they always describe the preset and machine you ran.

# %%
from rlvr_lab.lab_setup import start_lab
PRESET, HARDWARE = start_lab()  # prints the preset (RLVR_LAB_PRESET, else gpu with CUDA, else cpu) and the machine

# %%
import os, time
from rlvr_lab.figures.style import FAIL_COLOR, PASS_COLOR, axes_row
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
    print(f"- {n} ({info.klass}): {info.tries}")

# %% [markdown]
# ## 1. Your exploits
#
# Each exploit is a dict `{relative path: file text}` of files the candidate submits, on top of the
# fixture's tree (`pool_fixture/__init__.py`, `pool_fixture/pool.py`). Two examples are filled in; **add at
# least two of your own** below them. Ideas: make the test run collect nothing; make a comparison always
# succeed; change how pytest is configured; leave the process before any assertion; read the hidden tests
# and special-case them. Then predict, for each, what the naive and the isolated verifier will say.

# %%
MY_EXPLOITS = {
    # A root conftest.py that deselects every collected test: pytest then runs nothing and reports no failure.
    "deselect_everything": {
        "conftest.py": "def pytest_collection_modifyitems(config, items):\n    items.clear()\n",
    },
    # Exit with status 0 when the interpreter shuts down, hoping the harness trusts the exit status.
    "exit_zero_at_shutdown": {
        "pool_fixture/__init__.py": (
            "import atexit, os\n"
            "atexit.register(lambda: os._exit(0))\n"
            "from pool_fixture.pool import Connection, ConnectionPool\n"
            "__all__ = ['Connection', 'ConnectionPool']\n"),
    },
    # Add your own here, e.g. "my_exploit": {"pool_fixture/pool.py": "..."},
}

# %% [markdown]
# ## 2. Run everything against both harnesses
#
# Controls first: the fixture's known-good patch (both should pass it) and a known-bad patch (both should
# fail it). A harness that fails a control is broken before any exploit is tried.

# %%
candidates = {"control: good patch": ("control", load_reference("pool_repair_01", "good")),
              "control: bad patch": ("control", load_reference("pool_repair_01", "bad_unlocked_notify"))}
for n in gallery:
    candidates[n] = (exploit_info(n).klass, load_exploit(n))
for n, files in MY_EXPLOITS.items():
    candidates["mine: " + n] = ("student", Candidate(files))

import tempfile
naive, isolated = NaiveVerifier(timeout_s=30), Verifier(backend="auto")
home = os.getcwd()
os.chdir(tempfile.mkdtemp(prefix="rlvr-redteam-"))  # the naive harness runs from a scratch directory
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
os.chdir(home)

print(f"{'candidate':34s} {'class':32s} {'naive':7s} {'isolated':8s}  isolated's reason")
for r in results:
    print(f"{r['name']:34s} {r['klass'][:32]:32s} {r['naive']:7s} {r['isolated']:8s}  {r['why'][:60]}")

# %% mystnb={"figure": {"caption": "How many of this run's exploits each verifier rewarded with a pass on pool_repair_01: the naive harness beside the isolated verifier.", "name": "fig-lab2-rewarded"}, "image": {"alt": "Two bars labelled with their counts: the number of exploit candidates the naive harness passed, and the number the isolated verifier passed, which should be zero."}}
exploits = [r for r in results if r["klass"] != "control"]
through = {"naive": sum(r["naive"] == "pass" for r in exploits),
           "isolated": sum(r["isolated"] == "pass" for r in exploits)}
controls = {r["name"]: (r["naive"], r["isolated"]) for r in results if r["klass"] == "control"}
assert controls["control: good patch"] == ("pass", "pass"), controls
assert controls["control: bad patch"] == ("fail", "fail"), controls

fig, (ax,) = axes_row(1)
ax.bar(list(through), list(through.values()), color=[FAIL_COLOR, PASS_COLOR])
ax.set_ylabel("exploits rewarded (pass)")
ax.set_title(f"{len(exploits)} exploits on pool_repair_01, preset {PRESET}")
for i, v in enumerate(through.values()):
    ax.text(i, v + 0.1, str(v), ha="center")
fig

# %% [markdown]
# ## 3. Questions
#
# 1. Which of your exploits did the naive harness reward, and which step of its recipe (copying tests next
#    to the candidate, trusting the exit status, trusting a report file, honouring configuration files)
#    did each one use?
# 2. For each exploit the isolated verifier rejected, read its reason: was it refused at **admission**
#    (a path outside `pool_fixture/*.py`), or did it run and **fail** the hidden tests?
# 3. Would an exploit that fools a harness only *sometimes* be harmless in training? (Chapter 4: a
#    lone pass in a group gets the largest coefficient.)
#
# ## Closing note
#
# The next cell prints this run's tally.

# %%
print(f"Measured on {HARDWARE}, preset {PRESET}: one naive run and one isolated verification (K = "
      f"{fixture.trials}) per candidate.")
print(f"- naive harness rewarded {through['naive']} of {len(exploits)} exploits: "
      + ", ".join(r["name"] for r in exploits if r["naive"] == "pass"))
print(f"- isolated verifier rewarded {through['isolated']} of {len(exploits)}"
      + (": " + ", ".join(r["name"] for r in exploits if r["isolated"] == "pass") if through["isolated"] else ""))
print(f"- both controls behaved: good patch {controls['control: good patch']}, "
      f"bad patch {controls['control: bad patch']} (naive, isolated)")
print(f"- median seconds per candidate: naive {sorted(r['naive_s'] for r in results)[len(results) // 2]:.2f}, "
      f"isolated {sorted(r['isolated_s'] for r in results)[len(results) // 2]:.2f}")
