"""Fixture, reference-patch and exploit-gallery loaders (rlvr_lab.verifier.fixtures)."""

import json
import os
import shutil

import pytest

from rlvr_lab.verifier import fixtures as fx_mod
from rlvr_lab.verifier.fixtures import (
    NAIVE_OUTCOMES,
    exploit_info,
    list_exploits,
    list_fixtures,
    list_references,
    load_exploit,
    load_fixture,
    load_reference,
)
from rlvr_lab.verifier.schema import Candidate, Fixture
from rlvr_lab.verifier.workspace import admission_error

REQUIRED_EXPLOITS = {
    "conftest_report_patch",
    "exit_sys",
    "exit_os",
    "eq_always_true",
    "eq_subclass",
    "tests_replaced",
    "ini_addopts",
    "pyproject_addopts",
    "setup_cfg_addopts",
    "env_pytest_addopts",
    "sitecustomize_patch",
    "pth_hook",
    "read_hidden_via_proc",
    "forge_junit",
    "network_fetch",
    "fork_bomb",
    "memory_bomb",
    "infinite_loop",
    "daemon_setsid",
    "kill_parent",
    "stdout_flood",
    "hash_collision_reply",
    "terminal_escape",
}


def test_pool_fixture_loads_with_its_manifest():
    fx = load_fixture("pool_repair_01")
    assert isinstance(fx, Fixture)
    assert (fx.name, fx.version, fx.checker_version) == ("pool_repair_01", "pool_fixture_v1", "repair_accept_v3")
    assert fx.modules == ("pool_fixture",)
    assert fx.trials >= 3
    assert "pool_fixture/pool.py" in fx.files
    assert "test_pool_accept.py" in fx.hidden_tests
    assert "test_pool_public.py" in fx.public_tests
    assert fx.limits.wall_s <= 10
    assert "lost" in fx.description or "woken" in fx.description
    assert "pool_repair_01" in list_fixtures()


def test_hidden_tests_stay_out_of_what_a_policy_sees():
    fx = load_fixture("pool_repair_01")
    visible = "\n".join(list(fx.files.values()) + list(fx.public_tests.values()) + [fx.description])
    assert "in_flight" not in visible
    assert "repair_accept_v3" not in visible


def test_load_fixture_from_a_path_and_bad_names(tmp_path):
    src = fx_mod.fixtures_dir() / "pool_repair_01"
    copy = tmp_path / "copy"
    shutil.copytree(src, copy)
    assert load_fixture(copy).files == load_fixture("pool_repair_01").files
    with pytest.raises(ValueError, match="name_or_path"):
        load_fixture("no_such_fixture")
    with pytest.raises(ValueError, match="name_or_path"):
        load_fixture("../etc")
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["trials"] = 0
    (copy / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ValueError, match="trials"):
        load_fixture(copy)
    del manifest["limits"]
    (copy / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ValueError, match="limits"):
        load_fixture(copy)


def test_reference_patches_are_admissible_candidates():
    fx = load_fixture("pool_repair_01")
    refs = list_references("pool_repair_01")
    assert refs["good"] == "pass"
    assert sum(1 for name, expect in refs.items() if expect == "fail") >= 2
    for name in refs:
        cand = load_reference("pool_repair_01", name)
        assert isinstance(cand, Candidate)
        assert admission_error(cand, fx) is None
        assert any(text != fx.files[path] for path, text in cand.files.items()), f"{name} changes nothing"
    with pytest.raises(ValueError, match="patch"):
        load_reference("pool_repair_01", "nope")


def test_gallery_has_every_required_exploit_with_metadata():
    names = set(list_exploits())
    assert REQUIRED_EXPLOITS <= names
    for name in names:
        info = exploit_info(name)
        assert info.fixture == "pool_repair_01"
        assert info.naive in NAIVE_OUTCOMES
        assert info.klass and info.tries
        readme = (fx_mod.exploits_dir() / name / "README.md").read_text()
        assert readme.count("\n") == 1 and info.klass in readme
        cand = load_exploit(name)
        assert cand.files, name
        if info.naive != "pass":
            assert info.naive_note, f"{name} says why the naive harness does not reward it"
    with pytest.raises(ValueError, match="name"):
        exploit_info("../pool_repair_01")


def test_sentinel_paths_are_private_to_the_user():
    """Two users of one machine share /tmp: each gets its own sentinel file, named in the code it submits."""
    with_sentinel = [n for n in list_exploits() if exploit_info(n).sentinel]
    assert {"daemon_setsid", "read_hidden_via_proc"} <= set(with_sentinel)
    for name in with_sentinel:
        raw = json.loads((fx_mod.exploits_dir() / name / "exploit.json").read_text())["sentinel"]
        on_disk = fx_mod.read_tree(fx_mod.exploits_dir() / name / "candidate")
        assert any(raw in text for text in on_disk.values()), f"{name}'s code does not name {raw}"
        private = exploit_info(name).sentinel
        assert private != raw and f"uid{os.getuid()}" in private and private.startswith("/tmp/")
        submitted = "".join(load_exploit(name).files.values())
        assert private in submitted and raw not in submitted.replace(private, ""), name


def test_exploits_outside_permitted_paths_are_the_config_and_test_ones():
    fx = load_fixture("pool_repair_01")
    refused = {name for name in list_exploits() if admission_error(load_exploit(name), fx)}
    assert refused == {
        "conftest_report_patch",
        "tests_replaced",
        "ini_addopts",
        "pyproject_addopts",
        "setup_cfg_addopts",
        "env_pytest_addopts",
        "sitecustomize_patch",
        "pth_hook",
    }
