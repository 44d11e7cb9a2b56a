"""Task suite: determinism, per-problem split, fixtures of the verifier schema (17.9.1)."""

import pytest

from rlvr_lab.tasks import FAMILIES, fixture_task, make_suite, split_tasks
from rlvr_lab.verifier.schema import Fixture


def test_suite_is_a_pure_function_of_the_seed():
    assert make_suite(seed=3) == make_suite(seed=3)
    assert [t.prompt for t in make_suite(seed=3)] != [t.prompt for t in make_suite(seed=4)]


def test_variants_of_a_problem_stay_on_one_side_of_the_split():
    suite = make_suite(seed=7, variants=3)
    sides = {}
    for task in suite:
        sides.setdefault(task.problem_id, set()).add(task.split)
    assert all(len(s) == 1 for s in sides.values())
    heldout = {p for p, s in sides.items() if s == {"heldout"}}
    assert 0.15 < len(heldout) / len(sides) < 0.45
    # every family has problems on both sides, so held-out pass@1 is measurable per family
    for family in FAMILIES:
        assert {t.split for t in suite if t.family == family} == {"train", "heldout"}


def test_task_ids_unique_and_fixture_shape():
    suite = make_suite(seed=0)
    assert len({t.task_id for t in suite}) == len(suite)
    task = suite[0]
    fx = task.fixture
    assert fx.allowed_paths == ("solution.py",) and fx.modules == ("solution",)
    assert "test_hidden.py" in fx.hidden_tests and "test_public.py" in fx.public_tests
    # the hidden tests never appear in what the policy sees
    for line in fx.hidden_tests["test_hidden.py"].splitlines():
        if line.strip().startswith("assert"):
            assert line.strip() not in task.prompt
    cand = task.candidate(task.solution)
    assert cand.files["solution.py"].startswith(task.prompt)
    assert cand.files["solution.py"].endswith(task.solution)


def test_families_rise_in_difficulty_and_filter():
    suite = make_suite(seed=0, families=("arith", "branch"), problems_per_family=4)
    assert {t.family for t in suite} == {"arith", "branch"}
    assert len(split_tasks(suite, "train", families=("arith",))) <= 8
    assert FAMILIES["arith"] < FAMILIES["affine"] < FAMILIES["listagg"] < FAMILIES["branch"]


def test_bad_arguments_name_themselves():
    with pytest.raises(ValueError, match="family"):
        make_suite(families=("nope",))
    with pytest.raises(ValueError, match="heldout_fraction"):
        make_suite(heldout_fraction=1.5)
    with pytest.raises(ValueError, match="variants"):
        make_suite(variants=0)
    with pytest.raises(ValueError, match="split"):
        split_tasks(make_suite(problems_per_family=1), "test")


def test_fixture_task_writes_the_editable_file():
    fx = Fixture(
        name="pool",
        version="v1",
        files={"pool.py": "x = 1\n", "README": "r"},
        hidden_tests={},
        allowed_paths=("pool.py",),
        description="Fix the pool.",
    )
    task = fixture_task(fx)
    assert task.family == "fixture" and task.split == "heldout"
    assert task.candidate("x = 2\n").files == {"pool.py": "x = 2\n"}
    assert "Fix the pool." in task.prompt
