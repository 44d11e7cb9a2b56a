"""Exercise 9's "implement it" parts (section 17.14 over 17.7): the student writes the function, the course's
verifier grades it against the key's hidden tests under the all-pass rule.

Honest functions pass every trial; a wrong one fails; every cheat -- importing the library, copying it with
numpy, reaching site-packages through ``sys.path``, reading or patching the hidden tests, an always-equal
object -- fails, both at the grader's rule check and, with that check bypassed, in the verifier's sandbox.
The self-check runs the public examples only. The last test grades code and numeric notebooks in one
``rlvr-lab grade`` run.
"""

import ast
import copy
import json
import math
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr_lab import advantages, checks, cycle_time, rewards
from rlvr_lab.exercise_code import EX9, candidate_source, check_function, is_stub, rule_problems
from rlvr_lab.grading import KeyData, load_key_module
from rlvr_lab.grading.code_parts import UNRESOLVED, code_fixture, grade_code_part, score_code_parts, ungraded
from rlvr_lab.verifier import Candidate, Verdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOLUTIONS = os.path.join(ROOT, "labs", "exercises", "solutions")
STUDENTS = os.path.join(ROOT, "labs", "exercises", "student")
NOTEBOOK = "ex9_implement_it.ipynb"
key = load_key_module(SOLUTIONS)
KEY = KeyData.from_dir(SOLUTIONS)
HIDDEN = dict(KEY.hidden)
sys.path.insert(0, os.path.join(ROOT, "labs", "exercises"))
import build_notebooks  # noqa: E402

#: The reference solution of each part (the solution notebook's cell), by part id.
HONEST = {EX9.part_id(p): src for p, (src, _) in zip(EX9.parts, build_notebooks.REFERENCE[8], strict=True)}
#: One plausible mistake per part: each passes some public example or none, and must fail the hidden tests.
WRONG = {
    "ex9.part_a": HONEST["ex9.part_a"].replace("/ len(rewards))  # population", "/ (len(rewards) - 1 or 1))  #"),
    "ex9.part_b": HONEST["ex9.part_b"].replace("min(r * a, min(max(r, low), high) * a)", "min(max(r, low), high) * a"),
    "ex9.part_c": HONEST["ex9.part_c"].replace("math.comb(n - c, k) / math.comb(n, k)", "(1 - c / n) ** k"),
    "ex9.part_d": HONEST["ex9.part_d"].replace("<= max_lag", "< max_lag"),
}
#: Public examples pass but the hidden edge case does not: a tie of 0.1s with eps = 0 (0/0 noise, not zeros).
PUBLIC_ONLY = (
    "import math\n\ndef group_advantages(rewards, eps=1e-8):\n"
    "    if len(rewards) == 0 or eps < 0:\n        raise ValueError('rewards, eps')\n"
    "    mean = sum(rewards) / len(rewards)\n"
    "    std = math.sqrt(sum((r - mean) ** 2 for r in rewards) / len(rewards))\n"
    "    if std + eps == 0:\n        return [0.0] * len(rewards)\n"
    "    return [(r - mean) / (std + eps) for r in rewards]"
)
_SITE = [p for p in sys.path if p.endswith("site-packages")]
#: Cheats on part (a), each able to pass only through what it must not reach.
CHEATS = {
    "import_library": "from rlvr_lab.advantages import group_advantages as _lib\n\n"
    "def group_advantages(rewards, eps=1e-8):\n    return [float(x) for x in _lib(rewards, eps)]",
    "numpy_copy": "import numpy as np\n\ndef group_advantages(rewards, eps=1e-8):\n"
    "    r = np.asarray(rewards, dtype=float)\n    c = r - r.mean()\n    s = np.sqrt((c ** 2).mean())\n"
    "    return [0.0] * len(r) if r.max() == r.min() else (c / (s + eps)).tolist()",
    "sys_path": f"import sys\nsys.path[:0] = {_SITE + [ROOT]!r}\n"
    "from rlvr_lab.advantages import group_advantages as _lib\n\n"
    "def group_advantages(rewards, eps=1e-8):\n    return [float(x) for x in _lib(rewards, eps)]",
    "dunder_import": "def group_advantages(rewards, eps=1e-8):\n"
    "    lib = __import__('rlvr_lab.advantages', fromlist=['x'])\n"
    "    return [float(x) for x in lib.group_advantages(rewards, eps)]",
    "read_hidden": f"import os\nFOUND = []\nfor top in {[os.path.join(SOLUTIONS, 'hidden'), '/tmp', '/']!r}:\n"
    "    for root, dirs, files in os.walk(top):\n"
    "        FOUND += [os.path.join(root, f) for f in files if f.startswith('test_ex9')]\n"
    "        if root.count('/') > 6 or root.startswith(('/proc', '/sys', '/usr')):\n"
    "            dirs[:] = []\n\n"
    "def group_advantages(rewards, eps=1e-8):\n"
    "    if not FOUND:\n        return [0.0] * len(rewards)\n"
    "    exec(open(FOUND[0]).read().split('TOL =')[0])  # the tests' own reference\n"
    "    return [float(x) for x in reference(rewards, eps)]",
    "patch_hidden": f"import os\nfor folder in {[os.path.join(SOLUTIONS, 'hidden'), '.', '..', '/tmp']!r}:\n"
    "    for name in ('conftest.py', 'test_ex9_group_advantages.py'):\n"
    "        try:\n            with open(os.path.join(folder, name), 'w') as f:\n"
    "                f.write('def test_nothing():\\n    pass\\n')\n"
    "        except OSError:\n            pass\n\n"
    "def group_advantages(rewards, eps=1e-8):\n    return [0.0] * len(rewards)",
    "always_equal": "class Anything(list):\n    def __eq__(self, other):\n        return True\n\n"
    "def group_advantages(rewards, eps=1e-8):\n    return Anything([0.0] * len(rewards))",
}

#: Why each cheat fails in the sandbox: the library and numpy are not there, the hidden tests are out of reach
#: (found nothing, wrote nothing that the runner reads), an object that is not plain data never crosses.
WHY = {
    "import_library": "No module named 'rlvr_lab'",
    "numpy_copy": "No module named 'numpy'",
    "sys_path": "No module named 'rlvr_lab'",
    "dunder_import": "No module named 'rlvr_lab'",
    "read_hidden": "test failed in call",
    "patch_hidden": "test failed in call",
    "always_equal": "not plain data",
}


def _part(part_id):
    return key.CODE_PARTS[part_id][0]


def _verdict(verifier, part_id, source):
    part, test_file = key.CODE_PARTS[part_id]
    fixture = code_fixture(part_id, part, test_file, HIDDEN[test_file], key.CODE_TRIALS)
    return verifier.verify(Candidate({"solution.py": source}), fixture)


# ---------------------------------------------------------------- without a sandbox


def test_the_key_holds_four_code_parts_with_hidden_tests_outside_every_student_file():
    assert sorted(key.CODE_PARTS) == ["ex9.part_a", "ex9.part_b", "ex9.part_c", "ex9.part_d"]
    assert set(HIDDEN) == {f for _, f in key.CODE_PARTS.values()} and key.CODE_TRIALS >= 2
    student = open(os.path.join(STUDENTS, NOTEBOOK), encoding="utf-8").read()
    package = [os.path.join(r, f) for r, _, fs in os.walk(os.path.join(ROOT, "rlvr_lab")) for f in fs]
    for name, text in HIDDEN.items():
        assert name not in student and "hypothesis" not in student
        assert not any(os.path.basename(p) == name for p in package)
        assert "from solution import" in text and "@given" in text  # property tests on generated inputs
    with pytest.raises(ValueError, match="graded by the verifier"):
        key.verify("ex9.part_a", {"group_advantages": None})


def test_the_public_examples_are_the_library_s_answers():
    from rlvr_lab import grpo

    library = {
        "group_advantages": lambda r, eps: advantages.group_advantages(r, eps).tolist(),
        "clipped_surrogate": lambda r, a, lo, hi: grpo.clipped_surrogate(r, a, lo, hi).tolist(),
        "pass_at_k": rewards.pass_at_k,
        "version_lag": cycle_time.version_lag,
        "admit": cycle_time.admit,
    }
    for part in EX9.parts:
        for answer in part.answers:
            examples = [
                (args, want)
                for args, want in answer.examples
                if not isinstance(want, type)
                and not (answer.name == "clipped_surrogate" and len(args[0]) != len(args[1]))
            ]
            assert examples and check_function(library[answer.name], answer.name, examples) == [], answer.name


def test_the_hidden_reference_of_the_surrogate_is_the_library_s():
    from rlvr_lab import grpo

    tree = ast.parse(HIDDEN["test_ex9_clipped_surrogate.py"])
    ns: dict = {}
    exec(
        compile(
            ast.Module([n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "reference"], []),
            "reference",
            "exec",
        ),
        ns,
    )

    @settings(max_examples=150, deadline=None, database=None)
    @given(
        st.lists(st.tuples(st.floats(0.0, 4.0), st.floats(-5.0, 5.0)), min_size=1, max_size=12),
        st.floats(0.01, 0.99),
        st.floats(0.0, 1.0),
    )
    def check(tokens, low, high):
        r, a = [t[0] for t in tokens], [t[1] for t in tokens]
        want = grpo.clipped_surrogate(r, a, low, high).tolist()
        got = ns["reference"](r, a, low, high)
        assert all(math.isclose(g, w, rel_tol=1e-12, abs_tol=1e-12) for g, w in zip(got, want))

    check()


def test_candidate_source_takes_the_last_defining_cell_and_drops_calls():
    cells = [
        "def pass_at_k(n, c, k):\n    return 0.0",
        "%timeit x",
        "import math\nBIG = 3\n\ndef pass_at_k(n, c, k):\n    return 1.0\nprint(pass_at_k(1, 1, 1))\ncheck(pass_at_k)",
        "x = 1",
    ]
    source, problem = candidate_source(cells, ("pass_at_k",))
    assert problem == "" and source == "import math\nBIG = 3\ndef pass_at_k(n, c, k):\n    return 1.0"
    source, problem = candidate_source(cells, ("admit",))
    assert source is None and "no cell defines admit()" in problem
    stub = next(a.stub for p in EX9.parts for a in p.answers if a.name == "pass_at_k")
    assert is_stub(stub, "pass_at_k") and not is_stub(HONEST["ex9.part_c"], "pass_at_k")


@pytest.mark.parametrize("name", sorted(CHEATS))
def test_the_rules_refuse_every_cheat_and_no_honest_function(name):
    assert rule_problems(CHEATS[name]), name
    for source in HONEST.values():
        assert rule_problems(source) == []


def test_the_self_check_runs_the_public_examples_only():
    ns: dict = {}
    exec(PUBLIC_ONLY, ns)
    checks.ex9.part_a(ns["group_advantages"])  # passes: the hidden edge case is not among the examples
    for part_id, source in WRONG.items():
        ns = {}
        exec(source, ns)
        part = _part(part_id)
        with pytest.raises(checks.CheckFailed, match="the example expects"):
            getattr(checks.ex9, part.name)(*[ns[n] for n in part.names])
    ns = {}
    exec(CHEATS["numpy_copy"], ns)  # with the cell's source (as in a notebook) the rules are checked too
    assert "imports numpy" in check_function(ns["group_advantages"], "group_advantages", (), CHEATS["numpy_copy"])[0]


class _Stuck:
    """A verifier whose infrastructure never decides."""

    def verify(self, candidate, fixture):
        return Verdict(
            outcome="unknown",
            candidate_digest=candidate.digest,
            fixture=fixture.name,
            fixture_version=fixture.version,
            checker_version=fixture.checker_version,
            backend="local",
            stop_reason="infrastructure: sandbox lost",
            attempts=2,
        )


def test_pending_and_unknown_verdicts_are_reported_ungraded_never_a_silent_zero_or_pass():
    cells = [HONEST[p] for p in HONEST]
    parts = score_code_parts(key, "ex9", cells, HIDDEN, _Stuck())
    assert all(e["status"] in UNRESOLVED and e["graded"] is False and e["score"] == 0 for e in parts.values())
    assert all("not graded" in e["detail"] and "regrade" in e["detail"] for e in parts.values())
    assert ungraded({"submissions": [{"path": "nb", "parts": parts}]}) == [f"nb {p} (unknown)" for p in parts]

    def broken():
        raise RuntimeError("no sandbox here")

    entry = grade_code_part(
        "ex9.part_c", _part("ex9.part_c"), cells, "test_ex9_pass_at_k.py", HIDDEN["test_ex9_pass_at_k.py"], 3, broken
    )
    assert entry["status"] == "unknown" and entry["graded"] is False and "no sandbox here" in entry["detail"]


def test_rlvr_lab_grade_exits_5_naming_an_undecided_code_part(monkeypatch, capsys):
    import argparse

    from rlvr_lab.grading import grader

    parts = score_code_parts(key, "ex9", [HONEST[p] for p in HONEST], HIDDEN, _Stuck())
    report = {
        "submissions": [
            {
                "path": "ada/ex9.ipynb",
                "exercise": "ex9",
                "score": 0,
                "max": 4,
                "outcome": "completed",
                "reason": "",
                "runtime_s": 1.0,
                "parts": parts,
            }
        ],
        "elapsed_s": 1.0,
        "median_notebook_s": 1.0,
        "load_average": [0, 0, 0],
        "sandboxes": ["local"],
        "sandbox_error": None,
        "faults": [],
    }
    report["ungraded"] = ungraded(report)
    monkeypatch.setattr(grader, "grade", lambda *a, **k: report)
    solutions = os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "labs", "exercises", "solutions"
    )
    args = argparse.Namespace(
        key=solutions,
        submissions=["s"],
        workers=1,
        timeout=1.0,
        backend="local",
        no_progress=True,
        ray_address=None,
        json=None,
        csv=None,
    )
    assert grader.run(args) == 5
    assert "4 code part(s) not graded" in capsys.readouterr().err


# ---------------------------------------------------------------- in the verifier's sandbox


@pytest.fixture(scope="module")
def verifier():
    from rlvr_lab.verifier import SandboxUnavailable, Verifier

    try:
        v = Verifier(backend="auto")
    except SandboxUnavailable as exc:
        pytest.skip(f"no sandbox backend here: {exc}")
    if v.backend == "process":
        v.close()
        pytest.skip("only the process backend here: it cannot hide the library")
    yield v
    v.close()


@pytest.mark.parametrize("part_id", sorted(HONEST))
def test_an_honest_function_passes_every_trial_and_a_wrong_one_fails(verifier, part_id):
    good = grade_code_part(part_id, _part(part_id), [HONEST[part_id]], *_hidden(part_id), key.CODE_TRIALS, verifier)
    assert good["status"] == "correct" and good["score"] == 1, good
    assert good["verdict"]["outcome"] == "pass" and good["verdict"]["trials"] == key.CODE_TRIALS
    bad = grade_code_part(part_id, _part(part_id), [WRONG[part_id]], *_hidden(part_id), key.CODE_TRIALS, verifier)
    assert bad["status"] == "wrong" and bad["score"] == 0 and bad["verdict"]["outcome"] == "fail", bad
    assert "rejected at trial" in bad["detail"] and "tests/" not in bad["detail"]


def _hidden(part_id):
    test_file = key.CODE_PARTS[part_id][1]
    return test_file, HIDDEN[test_file]


def test_the_public_examples_alone_do_not_pass_the_hidden_tests(verifier):
    verdict = _verdict(verifier, "ex9.part_a", PUBLIC_ONLY)
    assert verdict.outcome == "fail" and "tied_groups" in verdict.trials[0].detail


@pytest.mark.parametrize("name", sorted(CHEATS))
def test_each_cheat_fails_in_the_sandbox_even_past_the_rules(verifier, name):
    entry = grade_code_part("ex9.part_a", _part("ex9.part_a"), [CHEATS[name]], *_hidden("ex9.part_a"), 3, verifier)
    assert entry["status"] == "refused" and entry["score"] == 0  # the grader's rules stop it first
    verdict = _verdict(verifier, "ex9.part_a", CHEATS[name])  # and the verifier fails it on its own
    assert verdict.outcome == "fail", (name, verdict.stop_reason, verdict.trials)
    trial = verdict.trials[0]
    assert WHY[name] in f"{trial.reason}: {trial.detail}" and "timeout" not in trial.reason, (name, trial)
    assert all(os.path.exists(os.path.join(SOLUTIONS, "hidden", f)) for f in HIDDEN)
    assert HIDDEN == dict(KeyData.from_dir(SOLUTIONS).hidden)  # nothing patched the key's tests


# ---------------------------------------------------------------- in one rlvr-lab grade run


def _notebook(replace=None):
    with open(os.path.join(SOLUTIONS, NOTEBOOK), encoding="utf-8") as handle:
        nb = json.load(handle)
    nb = copy.deepcopy(nb)
    for cell in nb["cells"]:
        source = "".join(cell["source"])
        for old, new in (replace or {}).items():
            if source.strip() == old.strip():
                source = new
        cell["source"] = source
    return nb


@pytest.mark.slow
def test_code_and_numeric_notebooks_are_graded_in_one_run(tmp_path):
    from rlvr_lab.verifier import SandboxUnavailable
    from rlvr_lab.verifier.sandbox import check_available

    try:
        check_available()
    except SandboxUnavailable as exc:
        pytest.skip(f"no local sandbox: {exc}")
    subs = {
        "honest": _notebook(),
        "wrong": _notebook(replace={HONEST[p]: WRONG[p] for p in WRONG}),
        "cheat": _notebook(
            replace={
                HONEST["ex9.part_a"]: CHEATS["import_library"],
                HONEST["ex9.part_c"]: "from rlvr_lab.rewards import pass_at_k",
            }
        ),
    }
    for name, nb in subs.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / NOTEBOOK).write_text(json.dumps(nb))
    (tmp_path / "numeric").mkdir()
    (tmp_path / "numeric" / "ex1_false_accepts.ipynb").write_text(
        open(os.path.join(SOLUTIONS, "ex1_false_accepts.ipynb"), encoding="utf-8").read()
    )
    (tmp_path / "stub").mkdir()
    (tmp_path / "stub" / NOTEBOOK).write_text(open(os.path.join(STUDENTS, NOTEBOOK), encoding="utf-8").read())
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
            "--json",
            str(out),
            "--no-progress",
            "--workers",
            "2",
            "--backend",
            "local",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    report = json.loads(out.read_text())
    by = {os.path.relpath(s["path"], tmp_path).split(os.sep)[0]: s for s in report["submissions"]}
    assert by["numeric"]["score"] == by["numeric"]["max"] == 3
    assert by["honest"]["score"] == by["honest"]["max"] == 4
    assert all(p["verdict"]["outcome"] == "pass" for p in by["honest"]["parts"].values())
    assert by["wrong"]["score"] == 0 and {p["status"] for p in by["wrong"]["parts"].values()} == {"wrong"}
    cheat = by["cheat"]["parts"]
    assert by["cheat"]["score"] == 2 and cheat["ex9.part_a"]["status"] == cheat["ex9.part_c"]["status"] == "refused"
    assert "imports rlvr_lab" in cheat["ex9.part_a"]["detail"] and "not written" in cheat["ex9.part_c"]["detail"]
    assert {p["status"] for p in by["stub"]["parts"].values()} == {"unanswered"} and report["ungraded"] == []
