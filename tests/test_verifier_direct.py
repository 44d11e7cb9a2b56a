"""The direct path: plain hidden tests without pytest's machinery, and the sandbox built ahead of its trial.

The direct path must decide exactly as pytest does (checked here case by case against
``Verifier(test_runner="pytest")``, the plain loop it replaces), leave the runner as it found it when it
runs in the runner's own process, and be refused for anything pytest would treat specially.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from dataclasses import replace

import pytest

from rlvr_lab.verifier import Verifier
from rlvr_lab.verifier.direct import direct_refusal, inprocess_refusal
from rlvr_lab.verifier.schema import Candidate, Fixture, Limits
from verifier_helpers import (
    GOOD,
    BusyHost,
    _comm,
    _descendants,
    candidate,
    children,
    function_fixture,
    needs_local_sandbox,
)

LIMITS = Limits(wall_s=5.0, cpu_s=5, memory_mb=256, processes=16, file_mb=4, open_files=64, output_kb=64)

PLAIN = "from solution import f\n\n\ndef test_one():\n    assert f(1) == 2\n"


# -- which files are plain: a trusted ast scan ---------------------------------------------------------
@pytest.mark.parametrize(
    "files, why",
    [
        ({"test_a.py": PLAIN}, ""),
        (
            {
                "test_a.py": '"""doc"""\nimport math\nimport pytest\nLIMIT = 3\n\nclass Helper:\n    pass\n\n\n'
                "def helper():\n    pass\n\n\ndef test_x():\n    with pytest.raises(ValueError):\n"
                '        int("x")\n'
            },
            "",
        ),
        ({"conftest.py": "", "test_a.py": PLAIN}, "conftest.py is not a test file"),
        ({"helpers.py": "", "test_a.py": PLAIN}, "helpers.py is not a test file"),
        ({"test_a.py": "def test_x(tmp_path):\n    pass\n"}, "test_a.py::test_x takes arguments (fixtures)"),
        (
            {"test_a.py": "import pytest\n\n@pytest.mark.parametrize('x', [1])\ndef test_x(x):\n    pass\n"},
            "test_a.py::test_x is decorated",
        ),
        (
            {"test_a.py": "class TestThing:\n    def test_x(self):\n        pass\n"},
            "test_a.py defines test class TestThing",
        ),
        ({"test_a.py": "async def test_x():\n    pass\n"}, "test_a.py::test_x is async"),
        ({"test_a.py": "def test_x():\n    yield 1\n"}, "test_a.py::test_x is a generator"),
        ({"test_a.py": "import pytest\npytestmark = pytest.mark.slow\n"}, "test_a.py defines pytestmark"),
        ({"test_a.py": "def setup_module():\n    pass\n"}, "test_a.py defines setup_module"),
        ({"test_a.py": "def pytest_configure(config):\n    pass\n"}, "test_a.py defines pytest_configure"),
        (
            {"test_a.py": "import pytest\n\ndef test_x():\n    pytest.importorskip('numpy')\n"},
            "test_a.py uses pytest.importorskip",
        ),
        ({"test_a.py": "from pytest import raises\n"}, "test_a.py imports from pytest"),
        ({"test_a.py": "from . import shared\n"}, "test_a.py imports from ."),
        ({"test_a.py": "if True:\n    def test_x():\n        pass\n"}, "test_a.py has a module-level If statement"),
        ({"test_a.py": "def _t():\n    pass\n\ntest_x = _t\n"}, "test_a.py assigns a test name (test_x)"),
        ({"test_a.py": "def test_x(:\n"}, "test_a.py does not parse (invalid syntax)"),
        ({}, "no hidden tests"),
    ],
)
def test_direct_refusal(files, why):
    assert direct_refusal(files) == why


@pytest.mark.parametrize(
    "text, why",
    [
        ("import math, random, string\nfrom solution import *\nfrom typing import List\n", ""),
        ("import pytest\nfrom collections import Counter\n", ""),
        ("import threading\n", "test_a.py imports threading"),
        ("def test_x():\n    import os\n", "test_a.py imports os"),
        ("import solution.sub\nimport xml.dom\n", "test_a.py imports xml.dom"),
        ("def test_x():\n    open('/etc/passwd')\n", "test_a.py uses open"),
        ("def test_x():\n    exec('1')\n", "test_a.py uses exec"),
    ],
)
def test_inprocess_refusal(text, why):
    assert inprocess_refusal({"test_a.py": text}, ("solution",)) == why


# -- same verdicts as pytest -------------------------------------------------------------------------
def _fx(name: str, hidden: str, trials: int = 1, files: dict | None = None) -> Fixture:
    return Fixture(
        name,
        "v1",
        files=files or {"solution.py": ""},
        hidden_tests={"test_hidden.py": hidden},
        allowed_paths=("solution.py",),
        modules=("solution",),
        limits=LIMITS,
        trials=trials,
    )


CLAMP_TESTS = """\
import pytest
from solution import clamp


def test_inside():
    assert clamp(5, 0, 10) == 5


def test_outside():
    assert clamp(-3, 0, 10) == 0
    assert clamp(42, 0, 10) == 10


def test_bad_bounds():
    with pytest.raises(ValueError):
        clamp(1, 5, 0)
"""
CLAMP = "def clamp(x, lo, hi):\n    if lo > hi:\n        raise ValueError('lo > hi')\n    return max(lo, min(hi, x))\n"

FRESH_STATE = """\
import random
from solution import f

SEEN = []


def test_module_state_is_fresh():
    SEEN.append(random.random())
    assert len(SEEN) == 1
    assert f(1) == 2
"""

SKIPPING = "import pytest\nfrom solution import f\n\n\ndef test_x():\n    pytest.skip('not today')\n"
MISSING_NAME = "from solution import f, g\n\n\ndef test_x():\n    assert g(1) == 2\n"
CALLS_AT_IMPORT = "from solution import f\n\nTWO = f(1)\n\n\ndef test_x():\n    assert TWO == 2\n"

CASES = [
    # (fixture, candidate source, expected outcome); SystemExit in a call ends the server or becomes the
    # call's error depending on which of the server's reader threads ran it, so only the outcome is compared
    (_fx("clamp", CLAMP_TESTS), CLAMP, "pass"),
    (_fx("clamp", CLAMP_TESTS), "def clamp(x, lo, hi):\n    return max(lo, min(hi, x))\n", "fail"),
    (_fx("clamp", CLAMP_TESTS), "def clamp(x, lo, hi):\n    raise SystemExit(0)\n", "fail"),
    (_fx("clamp", CLAMP_TESTS), "import os\ndef clamp(x, lo, hi):\n    os._exit(0)\n", "fail"),
    (
        _fx("clamp", CLAMP_TESTS),
        "class N(int):\n    def __eq__(self, o):\n        return True\n"
        "def clamp(x, lo, hi):\n    if lo > hi:\n        raise ValueError\n    return N(0)\n",
        "fail",
    ),
    (_fx("fresh", FRESH_STATE, trials=3), "def f(x):\n    return x + 1\n", "pass"),
    (_fx("skip", SKIPPING), "def f(x):\n    return x + 1\n", "fail"),
    (_fx("missing", MISSING_NAME), "def f(x):\n    return x + 1\n", "fail"),
    (_fx("at_import", CALLS_AT_IMPORT), "def f(x):\n    return x + 1\n", "pass"),
    (_fx("at_import", CALLS_AT_IMPORT), "def f(x):\n    return x\n", "fail"),
    (function_fixture(), GOOD, "pass"),  # threads in the tests: direct, in a forked process
    (function_fixture(), GOOD + "\n\ndef double(x):\n    return x + x + 1\n", "fail"),
]


@pytest.fixture(scope="module")
def verifiers():
    auto = Verifier(backend="local", retries=0, seed=5)
    plain_pytest = Verifier(backend="local", retries=0, seed=5, test_runner="pytest")
    yield auto, plain_pytest
    auto.close()
    plain_pytest.close()


@needs_local_sandbox
def test_direct_decides_as_pytest_does(verifiers):
    auto, plain_pytest = verifiers
    for fixture, source, expected in CASES:
        fast = auto.verify(Candidate({"solution.py": source}), fixture)
        slow = plain_pytest.verify(Candidate({"solution.py": source}), fixture)
        assert (fast.test_runner, slow.test_runner) == ("direct", "pytest"), fixture.name
        assert fast.outcome == slow.outcome == expected, (fixture.name, source, fast, slow)
        if "SystemExit" not in source:
            assert [t.reason for t in fast.trials] == [t.reason for t in slow.trials], (fixture.name, fast, slow)


@needs_local_sandbox
def test_procedural_and_humaneval_tasks_agree(verifiers):
    from rlvr_lab.tasks import make_suite

    auto, plain_pytest = verifiers
    tasks = make_suite(seed=3, problems_per_family=2, variants=1)
    completions = ["{solution}", "    return 0\n", "    return None\n", "    raise ValueError('no')\n"]
    try:
        from rlvr_lab.tasks import humaneval

        tasks += humaneval(limit=12)
    except ImportError:
        pass
    for task in tasks:
        for template in completions:
            cand = task.candidate(template.format(solution=task.solution))
            fast, slow = auto.verify(cand, task.fixture), plain_pytest.verify(cand, task.fixture)
            assert fast.outcome == slow.outcome, (task.task_id, template, fast, slow)
            assert fast.test_runner == "direct"


@needs_local_sandbox
def test_a_candidate_that_exits_is_named_so_even_when_the_tests_end_fast(verifiers):
    """The direct path reaches the kill a few milliseconds after the candidate's process ended; the
    zygote must still report the candidate's own end (init's record), not a kill, also on a busy host."""
    auto, _ = verifiers
    exits = Candidate({"solution.py": "import os\ndef clamp(x, lo, hi):\n    os._exit(0)\n"})
    with BusyHost():
        reasons = {auto.verify(exits, _fx("clamp", CLAMP_TESTS)).trials[0].reason for _ in range(8)}
    assert reasons == {"candidate process ended"}


@needs_local_sandbox
def test_a_failed_assert_names_its_line(verifiers):
    auto, _ = verifiers
    wrong = "def clamp(x, lo, hi):\n    if lo > hi:\n        raise ValueError\n    return x\n"
    verdict = auto.verify(Candidate({"solution.py": wrong}), _fx("clamp", CLAMP_TESTS))
    assert verdict.outcome == "fail"
    assert "test_hidden.py:" in verdict.trials[0].detail and "assert clamp(" in verdict.trials[0].detail


@needs_local_sandbox
def test_module_reads_are_fresh_after_a_call(verifiers):
    hidden = (
        "import solution\n\n\ndef test_reads():\n    assert solution.counter == 0\n    solution.bump()\n"
        "    assert solution.counter == 1\n    xs = solution.ITEMS\n    xs.append(9)\n"
        "    assert solution.ITEMS == [1]\n"
    )
    source = "counter = 0\nITEMS = [1]\n\ndef bump():\n    global counter\n    counter += 1\n"
    for v in verifiers:
        assert v.verify(Candidate({"solution.py": source}), _fx("reads", hidden)).outcome == "pass"


# -- in the runner's own process ---------------------------------------------------------------------
@needs_local_sandbox
def test_inprocess_trials_leave_the_runner_as_they_found_it(tmp_path):
    from rlvr_lab.verifier.runner import SlotRunner

    runner = SlotRunner("local", tmp_path / "slot")
    try:
        modules_before = set(sys.modules)
        state = __import__("random").getstate()
        finder_modules = runner.finder.modules
        for source, expected in ((CLAMP, "pass"), ("def clamp(x, lo, hi):\n    return x\n", "fail")):
            reply = runner.verify(_fx("clamp", CLAMP_TESTS), Candidate({"solution.py": source}), 2, 11)
            assert (reply.outcome, reply.test_runner) == (expected, "direct")
        assert runner.last_child_pid is None, "a pure plain test forked a process"
        assert set(sys.modules) - modules_before <= {"pytest"} | {
            m for m in sys.modules if m.startswith(("_pytest", "pytest"))
        }
        assert "solution" not in sys.modules and "test_hidden" not in sys.modules
        assert runner.finder.modules == finder_modules and runner.binding.client is None
        assert __import__("random").getstate() == state
    finally:
        runner.close()


@needs_local_sandbox
@pytest.mark.slow
def test_a_runaway_hidden_test_is_ended_by_the_watchdog(tmp_path):
    """A trusted test that never returns, even after the sandbox is gone, is stopped at the trial budget;
    the verdict comes from the sandbox's record (its deadline passed first) and the runner goes on."""
    spin = (
        "from solution import f\n\n\ndef test_spin():\n    while True:\n        try:\n            f(1)\n"
        "        except Exception:\n            pass\n"
    )
    short = Limits(wall_s=0.5, cpu_s=2, memory_mb=256, processes=16, file_mb=4, open_files=64, output_kb=64)
    fixture = replace(_fx("spin", spin), limits=short)
    with Verifier(backend="local", retries=0, seed=3) as v:
        start = time.monotonic()
        verdict = v.verify(Candidate({"solution.py": "def f(x):\n    return x\n"}), fixture)
        took = time.monotonic() - start
        assert verdict.outcome == "fail" and verdict.trials[0].reason == "timeout", verdict
        from rlvr_lab.verifier.wire import trial_budget_s

        assert took >= trial_budget_s(short.wall_s) - 0.5, took  # the tests ran until the watchdog
        after = v.verify(Candidate({"solution.py": CLAMP}), _fx("clamp", CLAMP_TESTS))
        assert after.outcome == "pass" and after.test_runner == "direct"


# -- the sandbox built ahead of its trial ------------------------------------------------------------
def _warm(runner_pid: int) -> list[int]:
    """Inits of the sandboxes built ahead of their trial, each with its server forked and waiting. The
    zygote carries the name ``rlvr-warm-init`` too for the moment it forks one (so the child is born
    with it), but never has a ``rlvr-warm-srv`` child: a test that kills these never kills the zygote."""
    return [
        p
        for p in _descendants(runner_pid)
        if _comm(p) == "rlvr-warm-init" and any(_comm(c) == "rlvr-warm-srv" for c in children(p))
    ]


PROC_NAMES = "def names():\n    return open('/proc/1/comm').read().strip(), open('/proc/self/comm').read().strip()\n"
NAMES_TEST = (
    "from solution import names\n\n\ndef test_names():\n    first, me = names()\n    assert 'rlvr' not in first + me\n"
)


@needs_local_sandbox
def test_each_trial_takes_the_sandbox_built_ahead_of_it():
    with Verifier(backend="local", retries=0, seed=9) as v:
        assert v.verify(candidate(""), function_fixture()).outcome == "pass"
        deadline = time.monotonic() + 10
        # one warm sandbox waits for the next trial (a loaded host may show a replaced one on its way out)
        while len(_warm(v.runner_pid)) != 1 and time.monotonic() < deadline:
            time.sleep(0.02)
        (first,) = _warm(v.runner_pid)
        verdict = v.verify(Candidate({"solution.py": PROC_NAMES}), _fx("names", NAMES_TEST))
        assert verdict.outcome == "pass", verdict  # nothing in the sandbox's /proc says "verifier"
        # the zygote reaps a killed sandbox just after its answer to the runner: give it that moment
        deadline = time.monotonic() + 10
        while os.path.exists(f"/proc/{first}") and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not os.path.exists(f"/proc/{first}"), "the warm sandbox was not the one used"
        deadline = time.monotonic() + 10
        while len(_warm(v.runner_pid)) != 1 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(_warm(v.runner_pid)) == 1


@needs_local_sandbox
def test_a_warm_sandbox_that_died_is_replaced():
    with Verifier(backend="local", retries=0, seed=9) as v:
        assert v.verify(candidate(""), function_fixture()).outcome == "pass"
        deadline = time.monotonic() + 10
        while not _warm(v.runner_pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        for pid in _warm(v.runner_pid):
            os.kill(pid, signal.SIGKILL)
        verdict = v.verify(candidate(""), function_fixture())
        assert verdict.outcome == "pass", verdict
        assert verdict.attempts == 1


@needs_local_sandbox
def test_a_warm_sandbox_that_cannot_take_its_trial_is_replaced():
    """A warm sandbox that is alive but does not answer (stopped here; in life, one dying as its trial
    is sent) would take the trial's channel into its socket buffer and the trial would hang to its
    deadline. The zygote waits for the sandbox's answer instead, and builds the trial a fresh one."""
    with Verifier(backend="local", retries=0, seed=9) as v:
        assert v.verify(candidate(""), function_fixture()).outcome == "pass"
        deadline = time.monotonic() + 10
        while len(_warm(v.runner_pid)) != 1 and time.monotonic() < deadline:
            time.sleep(0.02)
        (stuck,) = _warm(v.runner_pid)
        os.kill(stuck, signal.SIGSTOP)
        verdict = v.verify(candidate(""), function_fixture())
        assert verdict.outcome == "pass", verdict
        assert verdict.attempts == 1
        assert not os.path.exists(f"/proc/{stuck}"), "the stopped sandbox was left behind"


def test_a_hidden_file_is_compiled_once_and_runs_fresh_in_every_trial():
    """The direct path keeps a fixture's compiled tests (``direct.compiled``): a second trial reuses the code
    object, runs it in a fresh module (module state does not carry over) and records what the first did; a
    file that does not compile is a collection error in every trial, never a cached pass."""
    from rlvr_lab.verifier import direct

    text = "STATE = []\n\n\ndef test_a():\n    STATE.append(1)\n    assert STATE == [1]\n\n\ndef test_b():\n    assert 1 == 2\n"
    test_dir = f"/nonexistent/compiled-once-{os.getpid()}"
    before = direct.compiled.cache_info()
    first = direct.run_tests({"test_c.py": text}, test_dir, "p/", seed=3)
    second = direct.run_tests({"test_c.py": text}, test_dir, "p/", seed=3)
    after = direct.compiled.cache_info()
    assert (after.misses - before.misses, after.hits - before.hits) == (1, 1)
    assert first == second
    outcomes = {r["nodeid"]: r["outcome"] for r in first["reports"]}
    assert outcomes == {"p/test_c.py::test_a": "passed", "p/test_c.py::test_b": "failed"}
    assert first["exit"] == 1 and first["collect_errors"] == []
    for _ in range(2):
        broken = direct.run_tests({"test_s.py": "def test_x(:\n    pass\n"}, test_dir, "p/", seed=3)
        assert broken["exit"] == 2 and broken["reports"] == []
        assert [e["nodeid"] for e in broken["collect_errors"]] == ["p/test_s.py"]
