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