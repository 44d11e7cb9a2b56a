"""``rlvr-lab grade`` red team (section 17.14 over the 17.7 boundary): every cheat scores 0, every honest
notebook full marks, in the same run, and a hostile notebook changes nobody else's grade.

One grading run (module fixture, the CLI in a subprocess, 2 workers) holds the eight reference
solutions, honest notebooks that the old grader treated unfairly, and one notebook per attack of
issue 12 and of the earlier six tampering kinds. The fast tests at the bottom cover admission,
decoding and the report without a sandbox.
"""

import copy
import hashlib
import json
import os
import subprocess
import sys
import time

import pytest

from rlvr_lab import grading
from rlvr_lab.grading.notebook_sandbox import EXIT_GRACE_S, decode
from rlvr_lab.sandbox.clock import STRETCH_MAX
from rlvr_lab.sandbox.local import UID_BASE, UID_COUNT
from rlvr_lab.verifier.wire import GRACE_S

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOLUTIONS = os.path.join(ROOT, "labs", "exercises", "solutions")
STUDENTS = os.path.join(ROOT, "labs", "exercises", "student")
EX1, EX7 = "ex1_false_accepts.ipynb", "ex7_staleness_provisioning.ipynb"
TIMEOUT_S = 20
#: Modules of the grader that no notebook may import: the package, and the deprecated top-level paths.
GRADER_MODULES = (
    "rlvr_lab.grading",
    "rlvr_lab.grading.admission",
    "rlvr_lab.grading.worker",
    "rlvr_lab.grading.notebook_sandbox",
    "rlvr_lab.grading_admission",
    "rlvr_lab.grading_worker",
    "rlvr_lab.grading_sandbox",
    "rlvr_lab.grading_ray",
    "rlvr_lab.notebook_executor",
)


def _local_problem():
    from rlvr_lab.sandbox.backend import SandboxUnavailable
    from rlvr_lab.sandbox.local import check_available

    try:
        check_available()
    except SandboxUnavailable as exc:
        return str(exc)
    return None


#: The red team runs on the local backend where it is available, else on whatever ``auto`` finds.
BACKEND = "local" if _local_problem() is None else "auto"


def _load(folder, name):
    with open(os.path.join(folder, name), encoding="utf-8") as handle:
        return json.load(handle)


def _cell_number(nb, contains):
    """1-based position (as the grader's reasons count cells) of the first cell whose source has ``contains``."""
    return 1 + next(i for i, c in enumerate(nb["cells"]) if contains in "".join(c["source"]))


def _code(source):
    return {"cell_type": "code", "metadata": {}, "source": source, "outputs": [], "execution_count": None}


def _with_cell(nb, source, after="from rlvr_lab import checks"):
    """``nb`` with a code cell inserted after the first cell containing ``after``."""
    nb = copy.deepcopy(nb)
    at = next(i for i, c in enumerate(nb["cells"]) if after in "".join(c["source"]))
    nb["cells"].insert(at + 1, _code(source))
    return nb


def _append(nb, source):
    """``nb`` with a code cell added at the end (after every TODO cell)."""
    nb = copy.deepcopy(nb)
    nb["cells"].append(_code(source))
    return nb


def _replace(nb, old, new):
    nb = copy.deepcopy(nb)
    for cell in nb["cells"]:
        cell["source"] = "".join(cell["source"]).replace(old, new)
    return nb


def _honest():
    """name -> (exercise file, notebook): each must score full marks."""
    out = {
        f"key_{name[:3]}": (name, _load(SOLUTIONS, name))
        for name in sorted(os.listdir(SOLUTIONS))
        if name.endswith(".ipynb")
    }
    sol1, sol7 = _load(SOLUTIONS, EX1), _load(SOLUTIONS, EX7)
    # Exact types: Fraction and Decimal answers, numpy integers and a numpy bool, exact ceil by hand.
    typed = _replace(
        sol7,
        "lag_30, lag_90, lag_200 = (cycle_time.version_lag(t, 40.0) for t in (30.0, 90.0, 200.0))",
        "import numpy as np\nlag_30, lag_90, lag_200 = (np.int64(cycle_time.version_lag(t, 40.0)) "
        "for t in (30.0, 90.0, 200.0))",
    )
    typed = _replace(
        typed,
        "workers_all_trials = cycle_time.verifier_workers(arrival, 3, 10.0, 0.8)",
        "from fractions import Fraction\nimport math\n"
        "workers_all_trials = math.ceil(Fraction(256, 40) * 3 * 10 / Fraction(8, 10))",
    )
    typed = _replace(
        typed,
        "underprovisioned = bool(workers_mean_q < workers_stop_first)",
        "underprovisioned = np.bool_(workers_mean_q < workers_stop_first)",
    )
    out["types_ex7"] = (EX7, typed)
    decimal = _replace(
        sol1,
        "alpha_max = s * rho / ((1 - s) * (1 - rho))",
        "from decimal import Decimal\nfrom fractions import Fraction\nalpha_max = Fraction(1, 216)",
    )
    out["exact_ex1"] = (
        EX1,
        _replace(
            decimal,
            'harden_when = "before"',
            'harden_when = "before"\nfrom decimal import Decimal\nshare_late = Decimal(str(share_late))',
        ),
    )
    # Code the old static scan zeroed: setattr on a namespace, 'torch' in sys.modules, exec.
    out["scan_ex1"] = (
        EX1,
        _with_cell(
            sol1,
            "import sys, types\nns = types.SimpleNamespace()\n"
            "setattr(ns, 'rate', 0.02)\nhas_torch = 'torch' in sys.modules\n"
            "exec('unused = 1')\n%time total = sum(range(10))",
        ),
    )
    # Check cells moved above the answers, and a copy of a check cell placed first: graded on values.
    moved = copy.deepcopy(sol1)
    checks_cells = [c for c in moved["cells"] if "".join(c["source"]).startswith("checks.ex1.")]
    rest = [c for c in moved["cells"] if c not in checks_cells]
    moved["cells"] = rest[:2] + [copy.deepcopy(checks_cells[0])] + checks_cells[::-1] + rest[2:]
    out["reordered_ex1"] = (EX1, moved)
    return out


def _cheats(victims, key_dir):
    """name -> (exercise file, notebook, expected status of its parts). Every one must score 0."""
    blank = _load(STUDENTS, EX1)
    wrong = _replace(
        _replace(_replace(blank, "share_early = None", "share_early = 0.5"), "alpha_max = None", "alpha_max = 0.5"),
        "harden_when = None",
        "harden_when = 'after'",
    )
    fill = (
        "share_early = share_late = found[0] if found else 0.5\nalpha_max = found[-1] if found else 0.5\n"
        "harden_when = 'after'\n"
    )
    out = {}
    # -- the earlier six kinds
    out["redefine"] = (
        EX1,
        _with_cell(
            wrong,
            "checks.ex1.part_a = lambda *a: print('ex1.part_a: correct.')\n"
            "checks.ex1.part_b = checks.ex1.part_c = checks.ex1.part_a",
        ),
        "tampered",
    )
    out["monkeypatch"] = (
        EX1,
        _with_cell(
            wrong,
            "type.__setattr__(checks.ex1, 'part_b', staticmethod(lambda *a: None))\n"
            "checks.__dict__['self_check'] = lambda *a: []",
        ),
        "tampered",
    )
    out["sys_modules"] = (
        EX1,
        _with_cell(
            wrong,
            "import sys, types\nfake = types.ModuleType('rlvr_lab.checks')\n"
            "class _Any:\n    def __getattr__(self, name):\n"
            "        return lambda *a: print('correct.')\n"
            "fake.ex1 = _Any()\nsys.modules['rlvr_lab.checks'] = fake\nchecks = fake",
        ),
        "tampered",
    )
    out["edited_check"] = (EX1, _replace(wrong, "checks.ex1.", "print('correct') or str."), "wrong")
    stored = copy.deepcopy(blank)
    for n, cell in enumerate(stored["cells"]):
        if cell["cell_type"] == "code":
            cell["execution_count"] = n
            cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "ex1.part_a: correct.\n"}]
    out["stored_outputs"] = (EX1, stored, "unanswered")
    out["fake_record"] = (
        EX1,
        _with_cell(
            blank, 'print(\'RLVR-RECORD 0 {"part": "ex1.part_a", "values": {}}\')\nprint(\'ex1.part_a: correct.\')'
        ),
        "unanswered",
    )
    # -- the key is reachable from the kernel
    hunt = (
        "import os, glob, rlvr_lab\nfound, seen = [], []\n"
        "for pid in [p for p in os.listdir('/proc') if p.isdigit()]:\n"
        "    try:\n        seen.append(open(f'/proc/{pid}/cmdline').read())\n    except OSError:\n        pass\n"
        "base = os.path.dirname(os.path.dirname(rlvr_lab.__file__))\n"
        f"places = [base + '/labs/exercises/solutions', {key_dir!r}] + glob.glob('/*/*/labs/exercises/solutions')\n"
        "for place in places:\n    try:\n        get_ipython().run_line_magic('run', place + '/ex1_false_accepts.ipynb')\n"
        "        found.append(alpha_max)\n    except BaseException as exc:\n        seen.append(repr(exc))\n"
        + fill
        + "raise RuntimeError('hunt: ' + repr(found) + ' ' + repr(seen)[:300])"
    )
    out["key_hunt"] = (EX1, _append(blank, hunt), "wrong")
    # -- capture the expected value from the checker's frames with a profile hook, then use it
    profile = (
        "import sys\nfound = []\n"
        "def hook(frame, event, arg):\n"
        "    if 'checks' in frame.f_code.co_filename:\n"
        "        found.extend(v for v in frame.f_locals.values() if type(v) is float and v not in (0.5,))\n"
        "sys.setprofile(hook)\n"
        "for call in (lambda: checks.ex1.part_a(0.5, 0.5), lambda: checks.ex1.part_b(0.5)):\n"
        "    try:\n        call()\n    except Exception:\n        pass\n"
        "sys.setprofile(None)\nsys.setprofile(hook)\n" + fill
    )
    out["profile_capture"] = (EX1, _append(blank, profile), "tampered")
    # -- the grader's environment, results and other submissions
    vandal = (
        "import os, json\nhits = {k: v for k, v in os.environ.items() if 'RLVR' in k or 'GRADER' in k}\n"
        f"for path in {victims + [os.path.join(key_dir, EX1)]!r}:\n"
        "    for mode in ('a', 'w'):\n"
        "        try:\n            open(path, mode).write('{}')\n            hits[path] = mode\n"
        "        except OSError:\n            pass\n"
        "for folder in ('/home/user', '/home/user/lib/rlvr_lab', '/home/user/project', '/work', '/tmp/..'):\n"
        "    try:\n        open(os.path.join(folder, 'record.jsonl'), 'w').write('{}')\n        hits[folder] = 'w'\n"
        "    except OSError:\n        pass\n"
        "share_early = share_late = alpha_max = None\n"
        "raise RuntimeError('vandal: ' + json.dumps(hits))"
    )
    out["vandal"] = (EX1, _append(blank, vandal), "unanswered")
    # -- the grader's own modules: its package, and the old top-level paths (shims of the package)
    grader = (
        "import importlib\nfound = []\n"
        f"for name in {GRADER_MODULES!r}:\n"
        "    try:\n        importlib.import_module(name)\n        found.append(name)\n"
        "    except BaseException:\n        pass\n"
        "raise RuntimeError('grader modules: ' + repr(found))"
    )
    out["grader_import"] = (EX1, _append(blank, grader), "unanswered")
    out["forged_frames"] = (
        EX1,
        _with_cell(
            blank,
            'import os, struct\nbody = b\'{"t": "cell", "i": 99, "values": '
            "{\"share_early\": 0.324}}'\nos.write(3, struct.pack('>I', len(body)) + body)",
        ),
        "tampered",
    )
    out["garbage_frames"] = (EX1, _with_cell(blank, "import os\nos.write(3, b'\\xff' * 64)"), "tampered")
    out["killer"] = (
        EX1,
        _with_cell(
            blank,
            "import os, signal\nfor pid in [int(p) for p in os.listdir('/proc') if p.isdigit()]"
            " + [os.getppid(), -1]:\n    try:\n        os.kill(pid, signal.SIGKILL)\n"
            "    except OSError:\n        pass",
        ),
        "not run",
    )
    out["ignore_interrupt"] = (
        EX1,
        _with_cell(
            blank,
            "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
            "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
            "while True:\n    try:\n        print('still here')\n"
            "        time.sleep(0.2)\n    except BaseException:\n        pass",
        ),
        "not run",
    )
    out["endless"] = (EX1, _with_cell(blank, "while True:\n    pass"), "not run")
    out["fork_bomb"] = (
        EX1,
        _with_cell(
            blank,
            "import os, time\nwhile True:\n    try:\n        os.fork()\n"
            "    except OSError:\n        break\nwhile True:\n    time.sleep(1)",
        ),
        "not run",
    )
    out["flood_print"] = (EX1, _with_cell(blank, "for _ in range(100):\n    print('x' * 1_000_000)"), "not run")
    out["flood_raw"] = (
        EX1,
        _with_cell(blank, "import os\nfor _ in range(100):\n    os.write(1, b'x' * 1_000_000)"),
        "not run",
    )
    out["tamper_math"] = (
        EX1,
        _with_cell(
            wrong,
            "import math, json, builtins\nmath.isclose = lambda *a, **k: True\n"
            "json.dumps = lambda *a, **k: '{}'\n_p = builtins.print\n"
            "builtins.print = lambda *a, **k: _p('correct.')",
        ),
        "tampered",
    )
    # the cell waits for its thread's first forged frame: on a busy host the scheduler may not run a new
    # thread before the last cell's "done" (after which the grader reads nothing), and such a run forged nothing
    out["racing_thread"] = (
        EX1,
        _with_cell(
            blank,
            "import os, struct, threading, time\n"
            'body = b\'{"t": "cell", "i": 0, "values": {}}\'\n'
            "wrote = threading.Event()\n"
            "def race():\n    while True:\n"
            "        os.write(3, struct.pack('>I', len(body)) + body)\n"
            "        wrote.set()\n"
            "        time.sleep(0.001)\n"
            "threading.Thread(target=race, daemon=True).start()\n"
            "wrote.wait(10)",
        ),
        "tampered",
    )
    out["daemon"] = (
        EX1,
        _with_cell(
            blank,
            "import os, time\nif os.fork() == 0:\n    os.setsid()\n"
            "    if os.fork() == 0:\n        time.sleep(600)\n    os._exit(0)",
        ),
        "unanswered",
    )
    bad = copy.deepcopy(blank)
    bad["cells"][_cell_number(blank, "share_early = None") - 1]["source"] = ["share_early = ", 0.5, "\n"]
    out["bad_source"] = (EX1, bad, "not run")
    out["many_cells"] = (EX1, dict(blank, cells=blank["cells"] + [_code("x = 1")] * 10_000), "not run")
    return out


def _sha(path):
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def _uptime_ticks() -> int:
    """Now, in the clock ticks since boot that ``/proc/PID/stat`` gives a process's start time in."""
    with open("/proc/uptime") as handle:
        return int(float(handle.read().split()[0]) * os.sysconf("SC_CLK_TCK"))


def _session_root() -> int:
    """The test session's first process: xdist's controller (every worker's parent), else this one."""
    return os.getppid() if os.environ.get("PYTEST_XDIST_WORKER") else os.getpid()


def _ancestors(pid: str) -> set:
    """Every live ancestor of ``pid`` (by the parent links in ``/proc``), up to and including 1."""
    out = set()
    while pid not in ("0", "1") and pid not in out:
        try:
            with open(f"/proc/{pid}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            break
        pid = stat[stat.rfind(b")") + 2 :].split()[1].decode()
        out.add(pid)
    return {int(p) for p in out}


def _executor_processes(window=None):
    """Processes running the notebook executor under a slot uid (root mode) or our own uid (user-namespace
    mode) that nothing in this test session still owns; other sandboxes on the host are not ours.

    ``window`` (``(from, to)`` in uptime ticks): only those started while one grading ran. An executor a
    live grading still runs (another test's, in the other xdist worker) descends from the session's root; a
    leaked one was orphaned when its grader exited, and does not."""
    out, root = [], _session_root()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/status") as handle:
                uid = next(int(line.split()[1]) for line in handle if line.startswith("Uid:"))
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                cmdline = handle.read()
            with open(f"/proc/{pid}/stat", "rb") as handle:
                stat = handle.read()
        except (OSError, StopIteration):
            continue
        started = int(stat[stat.rfind(b")") + 2 :].split()[19])
        if window is not None and not window[0] <= started <= window[1]:
            continue
        ours = UID_BASE <= uid < UID_BASE + UID_COUNT or (uid == os.getuid() and uid != 0)  # slot uid or userns
        if ours and b"notebook_executor" in cmdline and int(pid) != os.getpid() and root not in _ancestors(pid):
            out.append(pid)
    return out


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("submissions")
    honest, paths = _honest(), {}
    for name, (exercise, nb) in honest.items():
        path = folder / name / exercise
        path.parent.mkdir()
        path.write_text(json.dumps(nb))
        paths[name] = str(path)
    cheats = _cheats(sorted(paths.values()), SOLUTIONS)
    for name, (exercise, nb, _) in cheats.items():
        path = folder / name / exercise
        path.parent.mkdir()
        path.write_text(json.dumps(nb))
        paths[name] = str(path)
    (folder / "broken_json").mkdir()
    (folder / "broken_json" / EX1).write_text('{"cells": [ this is not json')
    paths["broken_json"] = str(folder / "broken_json" / EX1)
    (folder / "link_to_key").mkdir()
    os.symlink(os.path.join(SOLUTIONS, EX1), folder / "link_to_key" / EX1)
    os.symlink(SOLUTIONS, folder / "linked_folder")
    before = {
        p: _sha(p)
        for p in list(paths.values())
        + [os.path.join(SOLUTIONS, n) for n in os.listdir(SOLUTIONS) if os.path.isfile(os.path.join(SOLUTIONS, n))]
    }
    report_path, csv_path = folder.parent / "report.json", folder.parent / "report.csv"
    cmd = [
        sys.executable,
        "-m",
        "rlvr_lab",
        "grade",
        str(folder),
        paths["key_ex1"],
        "--key",
        SOLUTIONS,
        "--json",
        str(report_path),
        "--csv",
        str(csv_path),
        "--workers",
        "2",
        "--timeout",
        str(TIMEOUT_S),
        "--backend",
        BACKEND,
    ]
    graded_from = _uptime_ticks()  # every executor of this grading started after now
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=900)
    graded_by = _uptime_ticks()  # and before now
    if proc.returncode == 3:
        pytest.skip(f"no sandbox backend on this machine: {proc.stderr.strip()[-300:]}")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads(report_path.read_text())
    by_name = {}
    for sub in report["submissions"]:
        rel = os.path.relpath(sub["path"], folder)
        by_name.setdefault(rel.split(os.sep)[0], []).append(sub)
    return dict(
        report=report,
        by=by_name,
        honest=honest,
        cheats=cheats,
        before=before,
        proc=proc,
        csv=csv_path.read_text(),
        folder=str(folder),
        graded_window=(graded_from, graded_by),
    )


pytestmark = pytest.mark.slow


def test_every_honest_notebook_scores_full_marks(graded):
    for name in graded["honest"]:
        sub = graded["by"][name][0]
        assert sub["outcome"] == "completed", (name, sub["reason"])
        assert sub["score"] == sub["max"] > 0, (name, sub["parts"])


def test_every_cheat_scores_zero_with_the_expected_status(graded):
    for name, (_, _, status) in graded["cheats"].items():
        sub = graded["by"][name][0]
        assert sub["score"] == 0 and sub["max"] == 3, (name, sub)
        assert {p["status"] for p in sub["parts"].values()} == {status}, (name, sub["parts"], sub["reason"])


def test_no_hostile_notebook_changed_a_file_or_left_a_process(graded):
    for path, digest in graded["before"].items():
        assert _sha(path) == digest, path
    # a killed sandbox's processes (a fork bomb's 64) may take a moment to be torn down on a busy host;
    # a leaked one stays, and fails here
    # Only executors started while this grading ran, and orphaned, count: another test may be grading in the
    # other worker, and its live executors descend from the session's root.
    deadline = time.monotonic() + 30.0
    while _executor_processes(graded["graded_window"]) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _executor_processes(graded["graded_window"]) == []
    vandal = graded["by"]["vandal"][0]["cell_errors"][-1]["error"]
    assert vandal.endswith("vandal: {}"), vandal  # no variable, no writable file, no folder reached
    hunt = graded["by"]["key_hunt"][0]["cell_errors"][-1]["error"]
    assert "hunt: []" in hunt and "solutions" not in hunt.split("]", 1)[0], hunt


def test_each_failure_is_its_own_outcome_with_a_reason_naming_the_cell(graded):
    by = graded["by"]

    def one(name):
        return by[name][0]

    student = _load(STUDENTS, EX1)
    at = f"cell {_cell_number(student, 'from rlvr_lab import checks') + 1}"  # where _with_cell inserts
    code_cells = sum(c["cell_type"] == "code" for c in student["cells"])
    assert one("endless")["outcome"] == "timeout" and one("endless")["reason"].startswith(f"timed out in {at}")
    assert one("ignore_interrupt")["outcome"] == "timeout" and at in one("ignore_interrupt")["reason"]
    assert one("fork_bomb")["outcome"] == "timeout"
    assert one("killer")["outcome"] == "died" and at in one("killer")["reason"]
    assert one("flood_print")["outcome"] == "output_cap" and at in one("flood_print")["reason"]
    assert one("flood_raw")["outcome"] == "output_cap" and at in one("flood_raw")["reason"]
    assert one("forged_frames")["outcome"] == "protocol"
    assert one("broken_json")["outcome"] == "invalid"
    assert one("broken_json")["reason"].startswith("notebook is not valid JSON")
    assert one("bad_source")["reason"].startswith(
        f"cell {_cell_number(student, 'share_early = None')} has a source that is not text"
    )
    assert f"{code_cells + 10_000} code cells" in one("many_cells")["reason"]
    assert one("link_to_key")["outcome"] == "refused" and "symbolic link" in one("link_to_key")["reason"]
    assert by["linked_folder"][0]["outcome"] == "refused"
    # a timeout is not retried (one budget, stretched at most STRETCH_MAX times by a busy host, plus the
    # grace periods), and the timed-out notebooks did not hold the run: notebooks ran side by side
    runtimes = [s["runtime_s"] for subs in by.values() for s in subs if s.get("runtime_s")]
    for name in ("endless", "ignore_interrupt", "fork_bomb"):
        assert one(name)["runtime_s"] < STRETCH_MAX * TIMEOUT_S + GRACE_S + EXIT_GRACE_S + 5, one(name)
    assert graded["report"]["elapsed_s"] < sum(runtimes)


def test_tampering_is_reported_with_evidence(graded):
    evidence = {name: " ".join(graded["by"][name][0]["tampering"]) for name in graded["cheats"]}
    assert "rlvr_lab.checks.ex1.part_a was replaced" in evidence["redefine"]
    assert "rlvr_lab.checks.self_check was replaced" in evidence["monkeypatch"]
    assert "sys.modules['rlvr_lab.checks'] was replaced" in evidence["sys_modules"]
    assert "setprofile" in evidence["profile_capture"]
    assert "math.isclose was replaced" in evidence["tamper_math"] and "json.dumps" in evidence["tamper_math"]
    assert "builtins.print was replaced" in evidence["tamper_math"]
    assert "forged or malformed frame" in evidence["forged_frames"]
    assert all(not graded["by"][n][0]["tampering"] for n in graded["honest"])


def test_no_grading_module_is_importable_in_a_notebook(graded):
    sub = graded["by"]["grader_import"][0]
    assert "grader modules: []" in sub["cell_errors"][-1]["error"], sub["cell_errors"][-1]


def test_the_same_file_twice_is_graded_once_and_the_report_has_every_format(graded):
    key_ex1 = graded["by"]["key_ex1"]
    assert len(key_ex1) == 2 and sorted(s["outcome"] for s in key_ex1) == ["completed", "refused"]
    assert [s for s in key_ex1 if s["outcome"] == "refused"][0]["max"] == 0
    out = graded["proc"].stdout
    assert "total" in out and "timed out in cell" in out
    assert "grading [" in graded["proc"].stderr  # the progress bar
    header = graded["csv"].splitlines()[0]
    assert header.startswith("path,exercise,part,score,max,status,detail,outcome,reason,runtime_s")
    report = graded["report"]
    assert report["median_notebook_s"] > 0 and len(report["load_average"]) == 3
    assert report["sandboxes"] and set(report["sandboxes"]) <= {"local", "local-userns", "docker"}
    for sub in report["submissions"]:
        if sub["outcome"] not in ("refused", "invalid"):
            assert sub["runtime_s"] > 0


@pytest.mark.docker
def test_the_docker_backend_grades_the_same(tmp_path):
    from rlvr_lab.sandbox.backend import SandboxUnavailable
    from rlvr_lab.sandbox.docker_image import docker_client

    try:
        docker_client()
    except SandboxUnavailable as exc:
        pytest.skip(f"no Docker engine to grade with here: {exc}")
    cheats = _cheats([], SOLUTIONS)
    chosen = {"key": (EX1, _load(SOLUTIONS, EX1), None), "types": _honest()["types_ex7"] + (None,)}
    chosen.update({name: cheats[name] for name in ("redefine", "key_hunt", "endless", "flood_raw", "killer")})
    for name, (exercise, nb, _) in chosen.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / exercise).write_text(json.dumps(nb))
    out = tmp_path / "report.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "rlvr_lab",
            "grade",
            str(tmp_path),
            "--key",
            SOLUTIONS,
            "--backend",
            "docker",
            "--timeout",
            str(TIMEOUT_S),
            "--json",
            str(out),
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    by = {os.path.relpath(s["path"], tmp_path).split(os.sep)[0]: s for s in json.loads(out.read_text())["submissions"]}
    assert by["key"]["score"] == by["key"]["max"] == 3 and by["types"]["score"] == by["types"]["max"] == 4
    for name in ("redefine", "key_hunt", "endless", "flood_raw", "killer"):
        assert by[name]["score"] == 0, (name, by[name])
    assert by["redefine"]["parts"]["ex1.part_a"]["status"] == "tampered"
    at = _cell_number(_load(STUDENTS, EX1), "from rlvr_lab import checks") + 1  # where _with_cell inserts
    assert by["endless"]["reason"].startswith(f"timed out in cell {at}")
    assert by["flood_raw"]["outcome"] == "output_cap"
    assert "hunt: []" in by["key_hunt"]["cell_errors"][-1]["error"]


def test_grading_as_a_non_root_user():
    """The grader run by an unprivileged user (uid 65534, in the docker group where there is one): graded
    in a sandbox it may start, or, where it may start none, a clear outcome per notebook and a report."""
    import grp
    import shutil
    import tempfile

    if os.geteuid() != 0:
        user = []  # already unprivileged
    else:
        try:
            groups = ["--groups", str(grp.getgrnam("docker").gr_gid)]
        except KeyError:
            groups = ["--clear-groups"]
        user = ["setpriv", "--reuid", "65534", "--regid", "65534", *groups]
        probe = subprocess.run(
            user + [sys.executable, "-c", "import rlvr_lab, IPython"],
            capture_output=True,
            cwd="/",
            env={"PATH": os.environ.get("PATH", ""), "PYTHONPATH": ROOT},
        )
        if probe.returncode != 0:
            pytest.skip(
                f"an unprivileged user cannot run this interpreter ({sys.executable}): "
                f"{probe.stderr.decode(errors='replace').strip()[-200:]}"
            )
    work = tempfile.mkdtemp(prefix="rlvr-grade-nonroot-")  # pytest's own temp folder is private to root
    try:
        folder = os.path.join(work, "class", "ada")
        os.makedirs(folder)
        with open(os.path.join(folder, EX1), "w", encoding="utf-8") as handle:
            json.dump(_load(SOLUTIONS, EX1), handle)
        for root, _dirs, files in os.walk(work):
            os.chmod(root, 0o777)
            for name in files:
                os.chmod(os.path.join(root, name), 0o644)
        out = os.path.join(work, "report.json")
        proc = subprocess.run(
            user
            + [
                sys.executable,
                "-m",
                "rlvr_lab",
                "grade",
                os.path.join(work, "class"),
                "--key",
                SOLUTIONS,
                "--backend",
                "auto",
                "--json",
                out,
                "--no-progress",
            ],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=600,
            env={"PATH": os.environ.get("PATH", ""), "PYTHONPATH": ROOT, "HOME": work},
        )
        with open(out, encoding="utf-8") as handle:
            report = json.load(handle)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    sub = report["submissions"][0]
    if proc.returncode == 3:  # no backend this user may start: said once, and per notebook
        assert sub["outcome"] == "infra" and "sandbox unavailable" in sub["reason"], sub
        assert "local:" in proc.stderr and "docker:" in proc.stderr
    else:
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert sub["outcome"] == "completed" and sub["score"] == sub["max"] == 3, sub


# ---------------------------------------------------------------- fast tests: no sandbox


def test_admission_refuses_links_and_duplicates(tmp_path):
    nb = tmp_path / "a" / EX1
    nb.parent.mkdir()
    nb.write_text("{}")
    os.symlink(nb, tmp_path / "a" / "ex2_reward_order.ipynb")
    accepted, refused = grading.collect_submissions([str(tmp_path / "a"), str(nb)], SOLUTIONS)
    assert [p for p, _ in accepted] == [str(nb)]
    reasons = sorted(r for _, r in refused)
    assert reasons[0].startswith("duplicate of") and "symbolic link" in reasons[1]
    _, refused = grading.collect_submissions([os.path.join(SOLUTIONS, EX1)], SOLUTIONS)
    assert refused[0][1] == "lies inside the key folder"


def test_reading_names_each_kind_of_broken_notebook(tmp_path):
    cases = {
        "x.ipynb": ("[1, 2", "not valid JSON"),
        "y.ipynb": ('{"cells": 3}', "no list of cells"),
        "z.ipynb": ('{"cells": [{"cell_type": "code", "source": ["a", 1]}]}', "cell 1 has a source"),
    }
    for name, (text, reason) in cases.items():
        (tmp_path / name).write_text(text)
        cells, error = grading.read_notebook(str(tmp_path / name))
        assert cells == [] and reason in error


def test_decoding_is_strict_and_static_notes_never_score():
    assert decode({"$decimal": "1e400"}) is not None
    assert type(decode({"$fraction": "a/b"})).__name__ == "fraction"
    assert type(decode({"$h": 1})).__name__ == "unknown"
    assert decode([[[[1]]]])[0][0][0].__class__.__name__ == "unknown"
    assert grading.static_notes([(2, "sys.settrace(f)")]) == ["cell 2: installs a profile/trace hook or reads frames"]


def test_bad_arguments_are_value_errors(tmp_path):
    with pytest.raises(ValueError, match="workers"):
        grading.grade([SOLUTIONS], key_dir=SOLUTIONS, workers=0)
    with pytest.raises(ValueError, match="timeout_s"):
        grading.grade([SOLUTIONS], key_dir=SOLUTIONS, timeout_s=0)
    with pytest.raises(ValueError, match="key must be a directory"):
        grading.grade([SOLUTIONS], key_dir=str(tmp_path / "nope"))
    with pytest.raises(ValueError, match="no .ipynb"):
        grading.grade([str(tmp_path)], key_dir=SOLUTIONS)


def test_the_staged_library_hides_the_grading_package_by_folder(tmp_path):
    """A module added to ``rlvr_lab/grading/`` is never staged for a notebook, and the old top-level paths
    left as shims reveal nothing: they import from the package, which is absent there."""
    import shutil

    from rlvr_lab.grading.notebook_sandbox import EXECUTOR, LIBRARY, stage_library

    source = tmp_path / "src" / "rlvr_lab"
    shutil.copytree(LIBRARY, source, ignore=shutil.ignore_patterns("__pycache__", "fixtures", "recorded"))
    (source / "grading" / "new_grader_module.py").write_text("EXPECTED = 42\n")
    lib = tmp_path / "lib"
    assert stage_library(str(lib), source) == str(lib)
    staged = [p.relative_to(lib) for p in lib.rglob("*")]
    assert (lib / "rlvr_lab" / "checks.py").is_file() and (lib / EXECUTOR).is_file()  # the executor beside it
    assert not [p for p in staged if {"grading", "fixtures", "__pycache__"} & set(p.parts)]
    assert not [p for p in staged if "new_grader_module" in p.name or p.name == "exercise_key.py"]
    probe = (
        f"import importlib, sys\nsys.path.insert(0, {str(lib)!r})\nfound = []\n"
        f"for name in {GRADER_MODULES + ('rlvr_lab.grading.new_grader_module',)!r}:\n"
        "    try:\n        importlib.import_module(name)\n        found.append(name)\n"
        "    except ImportError:\n        pass\n"
        "import rlvr_lab.checks\nprint(found, rlvr_lab.checks.__file__)"
    )
    # -I -S: no site-packages, so no editable install can point back at the checkout
    done = subprocess.run([sys.executable, "-I", "-S", "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[0] == "[]" and str(lib) in done.stdout, done.stdout


@pytest.mark.parametrize("timeout_s", [0.5, 20, 120])
def test_a_looping_notebook_meets_the_wall_clock_before_the_cpu_limit(timeout_s):
    """A busy host stretches the wall deadline up to STRETCH_MAX times; one thread uses at most one CPU
    second per second, so the CPU limit must sit above that, or a loop ends as ``died``, not ``timeout``."""
    from rlvr_lab.grading.notebook_sandbox import SandboxConfig

    limits = SandboxConfig(timeout_s=timeout_s).limits()
    assert limits.wall_s == timeout_s
    assert limits.cpu_s > STRETCH_MAX * timeout_s
