"""Task suite: determinism, per-problem split, fixtures of the verifier schema (17.9.1)."""
import pytest
from rlvr_lab.tasks import FAMILIES, fixture_task, make_suite, split_tasks
from rlvr_lab.verifier.schema import Fixture

def test_suite_is_a_pure_function_of_the_seed():
    pass

def test_variants_of_a_problem_stay_on_one_side_of_the_split():
    pass

def test_task_ids_unique_and_fixture_shape():
    pass

def test_families_rise_in_difficulty_and_filter():
    pass

def test_bad_arguments_name_themselves():
    pass

def test_fixture_task_writes_the_editable_file():
    pass

def test_reference_solutions_pass_and_wrong_bodies_fail_in_the_verifier():
    from rlvr_lab.verifier import VerifierPool

    suite = make_suite(seed=5, problems_per_family=2)
    one_per_family = {t.family: t for t in suite}
    with VerifierPool(workers=2) as pool:
        for task in one_per_family.values():
            assert pool.submit(task.candidate(task.solution), task.fixture).result(60).outcome == "pass"
            assert pool.submit(task.candidate("    return None\n"), task.fixture).result(60).outcome == "fail"


def test_fixture_from_disk_becomes_a_task():
    from rlvr_lab.tasks import load_fixture_task

    task = load_fixture_task("pool_repair_01")
    assert task.target in task.fixture.allowed_paths or task.target in task.fixture.files
    assert not task.solution and task.split == "heldout"
    for text in task.fixture.hidden_tests.values():
        assert text.strip() not in task.prompt  # hidden acceptance tests never reach the policy
    assert task.candidate("x = 1\n").files == {task.target: "x = 1\n"}
