"""``rlvr-lab grade`` (section 17.14): the key scores 100 %, blanks 0 %, and tampering never pays.

One grading run (module fixture) executes the eight reference solutions, the eight untouched student
notebooks and a set of hostile submissions together, in parallel, so the tests below also show that
a crashing or looping notebook does not stop the others.
"""

import copy
import json
import os
import subprocess
import sys

import pytest

from rlvr_lab import grading

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOLUTIONS = os.path.join(ROOT, "labs", "exercises", "solutions")
STUDENTS = os.path.join(ROOT, "labs", "exercises", "student")
EX1 = "ex1_false_accepts.ipynb"
EX3 = "ex3_all_pass_rule.ipynb"


def _load(folder, name):
    with open(os.path.join(folder, name), encoding="utf-8") as handle:
        return json.load(handle)


def _code(source):
    return {"cell_type": "code", "metadata": {}, "source": source, "outputs": [], "execution_count": None}


def _insert_after_setup(nb, source):
    nb = copy.deepcopy(nb)
    setup = next(i for i, c in enumerate(nb["cells"]) if "from rlvr_lab import checks" in "".join(c["source"]))
    nb["cells"].insert(setup + 1, _code(source))
    return nb


def _student_with_wrong_answers():
    """The ex1 student notebook with wrong (but assigned) answers."""
    nb = copy.deepcopy(_load(STUDENTS, EX1))
    for cell in nb["cells"]:
        src = "".join(cell["source"])
        src = src.replace("share_early = None", "share_early = 0.5").replace("share_late = None", "share_late = 0.5")
        src = src.replace("alpha_max = None", "alpha_max = 0.5").replace("harden_when = None", "harden_when = 'after'")
        cell["source"] = src
    return nb


def _hostile():
    """name -> (notebook, what it does)."""
    out = {}
    wrong = _student_with_wrong_answers()
    # 1. Redefines the checkers so they always print success (caught by the static scan).
    out["redefine"] = _insert_after_setup(
        wrong, "checks.ex1.part_a = lambda *a: print('ex1.part_a: correct.')\n"
               "checks.ex1.part_b = lambda *a: print('ex1.part_b: correct.')\n"
               "checks.ex1.part_c = lambda *a: print('ex1.part_c: correct.')")
    # 2. Monkeypatches the checker module's helper without any pattern the static scan knows
    #    (caught by the integrity evidence of the injected record cell).
    out["monkeypatch"] = _insert_after_setup(
        wrong, "type.__setattr__(checks.ex1, 'part_b', staticmethod(lambda *a: None))\n"
               "checks.__dict__['_report'] = lambda *a: print('correct.')")
    # 3. Replaces rlvr_lab.checks in sys.modules with a fake that passes everything.
    out["sys_modules"] = _insert_after_setup(
        wrong, "import sys, types\nfake = types.ModuleType('rlvr_lab.checks')\n"
               "class _Any:\n    def __getattr__(self, name):\n        return lambda *a: print('correct.')\n"
               "fake.ex1 = _Any()\nsys.modules['rlvr_lab.checks'] = fake\nchecks = fake")
    # 4. Edits the check cells to print success instead of checking.
    edited = copy.deepcopy(wrong)
    for cell in edited["cells"]:
        src = "".join(cell["source"])
        if src.startswith("checks.ex1."):
            cell["source"] = f"print('{src[7:17]}: correct.')"
    out["edited_check"] = edited
    # 5. Untouched answers, stored outputs edited to show passes everywhere.
    faked = copy.deepcopy(_load(STUDENTS, EX1))
    for n, cell in enumerate(faked["cells"]):
        if cell["cell_type"] == "code":
            cell["execution_count"] = n
            cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "ex1.part_a: correct.\n"}]
    out["stored_outputs"] = faked
    # 6. Prints a fake grader record of its own.
    out["fake_record"] = _insert_after_setup(
        wrong, "print('RLVR-RECORD 0 ' + '{\"part\": \"ex1.part_a\", \"values\": {}}')")
    # 7. Crashes its kernel before answering part (b); part (a) is answered correctly before the crash.
    crash = copy.deepcopy(_load(SOLUTIONS, EX1))
    for cell in crash["cells"]:
        if "alpha_max =" in "".join(cell["source"]):
            cell["source"] = "import os\nos._exit(3)"
    out["crash"] = crash
    # 8. Loops forever (ignoring interrupts) at the top.
    out["loop"] = _insert_after_setup(_load(SOLUTIONS, EX1),
                                      "while True:\n    try:\n        pass\n    except BaseException:\n        pass")
    return out


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("submissions")
    hostile = {}
    for name, nb in _hostile().items():
        path = folder / "hostile" / name / EX1
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(nb))
        hostile[name] = str(path)
    broken = folder / "hostile" / "broken" / EX1
    broken.parent.mkdir(parents=True)
    broken.write_text("{ this is not json")
    hostile["broken"] = str(broken)
    out = folder / "report.json"
    cmd = [sys.executable, "-m", "rlvr_lab", "grade", SOLUTIONS, STUDENTS, str(folder / "hostile"),
           "--key", SOLUTIONS, "--json", str(out), "--workers", "2", "--timeout", "40"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(out.read_text())
    by_path = {s["path"]: s for s in report["submissions"]}
    return report, by_path, hostile, proc.stdout


pytestmark = pytest.mark.slow


def test_reference_solutions_score_100_percent(graded):
    report, by_path, _, _ = graded
    solutions = [s for p, s in by_path.items() if p.startswith(SOLUTIONS)]
    assert len(solutions) == 8
    for sub in solutions:
        assert sub["percent"] == 100.0, (sub["path"], sub["parts"])


def test_untouched_student_notebooks_score_zero(graded):
    _, by_path, _, _ = graded
    students = [s for p, s in by_path.items() if p.startswith(STUDENTS)]
    assert len(students) == 8
    for sub in students:
        assert sub["score"] == 0 and sub["max"] >= 3
        assert {p["status"] for p in sub["parts"].values()} == {"unanswered"}


@pytest.mark.parametrize("kind, status", [
    ("redefine", "tampered"), ("monkeypatch", "tampered"), ("sys_modules", "tampered"),
    ("edited_check", "tampered"), ("stored_outputs", "unanswered"), ("fake_record", "tampered"),
])
def test_each_tampering_kind_scores_zero(graded, kind, status):
    _, by_path, hostile, _ = graded
    sub = by_path[hostile[kind]]
    assert sub["score"] == 0, sub["parts"]
    assert all(p["status"] == status for p in sub["parts"].values()), sub["parts"]


def test_monkeypatch_is_caught_by_the_integrity_evidence_not_the_scan(graded):
    _, by_path, hostile, _ = graded
    details = " ".join(p["detail"] for p in by_path[hostile["monkeypatch"]]["parts"].values())
    assert "rlvr_lab.checks was modified" in details
    assert "student code" not in details


def test_crash_and_loop_score_zero_without_stopping_the_run(graded):
    _, by_path, hostile, _ = graded
    crash = by_path[hostile["crash"]]["parts"]
    assert crash["ex1.part_a"]["status"] == "correct"  # recorded before the kernel died
    assert crash["ex1.part_b"]["score"] == 0 and crash["ex1.part_c"]["score"] == 0
    loop = by_path[hostile["loop"]]
    assert loop["score"] == 0 and all(p["status"] == "not run" for p in loop["parts"].values())
    broken = by_path[hostile["broken"]]
    assert broken["score"] == 0 and "unreadable" in broken["error"]


def test_json_report_shape_and_table(graded):
    report, _, _, stdout = graded
    assert set(report) >= {"key", "timeout_s", "workers", "elapsed_s", "submissions"}
    for sub in report["submissions"]:
        assert set(sub) >= {"path", "exercise", "error", "parts", "score", "max", "percent"}
        for part_id, entry in sub["parts"].items():
            assert part_id.startswith(sub["exercise"][:3])
            assert set(entry) >= {"score", "max", "status", "detail", "title"}
            assert entry["status"] in {"correct", "wrong", "unanswered", "tampered", "not run"}
    assert "ex1.part_a" in stdout and "total" in stdout


def test_wrong_answers_get_hints_in_the_report():
    key = grading.load_key(SOLUTIONS)
    nb = _student_with_wrong_answers()
    prepared, located, static = grading.prepare(nb, key["ex1_false_accepts"], "n0nce")
    assert list(located) == ["ex1.part_a", "ex1.part_b", "ex1.part_c"] and static == {}
    assert sum("# RLVR-GRADER-RECORD n0nce" in c["source"] for c in prepared["cells"]) == 3
    assert all(c["outputs"] == [] for c in prepared["cells"])


def test_bad_arguments_are_value_errors(tmp_path):
    with pytest.raises(ValueError, match="key must be a directory"):
        grading.grade([SOLUTIONS], key_dir=str(tmp_path / "missing"))
    with pytest.raises(ValueError, match="workers must be >= 1"):
        grading.grade([SOLUTIONS], workers=0)
    with pytest.raises(ValueError, match="no .ipynb notebook"):
        grading.grade([str(tmp_path)], key_dir=SOLUTIONS)
