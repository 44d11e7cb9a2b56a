"""``rlvr-lab verify``: verdict and evidence on stdout, exit status by verdict."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rlvr_lab.verifier.cli import format_verdict, read_candidate, wilson
from rlvr_lab.verifier.schema import TrialResult, Verdict
from verifier_helpers import GOOD, function_fixture, needs_local_sandbox

pytestmark = needs_local_sandbox

FIXTURES = Path(__file__).resolve().parents[1] / "rlvr_lab" / "fixtures" / "pool_repair_01"
needs_pool_fixture = pytest.mark.skipif(
    not (FIXTURES / "manifest.json").is_file(), reason="rlvr_lab/fixtures/pool_repair_01 is not in this checkout"
)


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rlvr_lab", *args], capture_output=True, text=True, timeout=180)


@needs_pool_fixture
def test_verify_prints_verdict_and_evidence(tmp_path):
    tree = tmp_path / "explored"
    shutil.copytree(FIXTURES / "src", tree)
    shutil.copy(FIXTURES / "reference" / "good" / "pool_fixture" / "pool.py", tree / "pool_fixture" / "pool.py")
    out = cli("verify", str(tree), "--fixture", "pool_repair_01", "--trials", "1")
    assert out.returncode == 0, out.stderr
    assert "verdict: pass" in out.stdout
    assert "fixture: pool_repair_01 (pool_fixture_v1), checker repair_accept_v3" in out.stdout
    assert "backend: local" in out.stdout
    assert "trial 1: pass" in out.stdout


@needs_pool_fixture
def test_verify_rejects_bad_patch_and_refused_path(tmp_path):
    out = cli(
        "verify",
        str(FIXTURES / "reference" / "bad_unlocked_notify"),
        "--fixture",
        "pool_repair_01",
        "--trials",
        "1",
        "--json",
    )
    assert out.returncode == 1, out.stderr
    verdict = json.loads(out.stdout)
    assert verdict["outcome"] == "fail" and verdict["backend"] in ("local", "local-userns")
    mapping = tmp_path / "cand.json"
    mapping.write_text(json.dumps({"conftest.py": "import pytest\n"}))
    out = cli("verify", str(mapping), "--fixture", "pool_repair_01")
    assert out.returncode == 1
    assert "stop reason: admission: path 'conftest.py' is not permitted" in out.stdout


def test_read_candidate_forms(tmp_path):
    fx = function_fixture()
    single = tmp_path / "sol.py"
    single.write_text(GOOD)
    assert read_candidate(single, fx).files == {"solution.py": GOOD}  # the one plain permitted path
    with pytest.raises(ValueError, match="pass a directory or JSON mapping"):
        read_candidate(single, dataclasses.replace(fx, allowed_paths=("pkg/*.py",)))
    mapping = tmp_path / "c.json"
    mapping.write_text(json.dumps({"solution.py": GOOD}))
    assert read_candidate(mapping, fx).files == {"solution.py": GOOD}


def test_format_and_wilson():
    verdict = Verdict(
        "fail",
        "ab" * 32,
        "f",
        "v1",
        "c1",
        "local",
        (TrialResult("fail", 0.012, 7, "timeout", "x"),),
        "rejected at trial 1 of 3: timeout",
    )
    text = format_verdict(verdict)
    assert "verdict: fail" in text and "trial 1: fail" in text and "timeout" in text
    lo, hi = wilson(0, 20)
    assert lo == 0.0 and 0.1 < hi < 0.2
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
        wilson(0, 0)


@needs_pool_fixture
@pytest.mark.slow
def test_calibrate_prints_q_beside_predictions():
    out = cli("calibrate", "--fixture", "pool_repair_01", "--runs", "2")
    assert out.returncode in (0, 1), out.stderr  # 1 only flags a reference whose K looks too small
    lines = out.stdout.splitlines()
    assert "K = " in lines[0] and "q^K" in lines[1] and "E[trials]" in lines[1]
    rows = {line.split()[0]: line.split() for line in lines[2:] if line.strip()}
    assert rows["good"][1] == "pass" and float(rows["good"][2]) == 1.0
    assert rows["bad_unlocked_notify"][1] == "fail" and float(rows["bad_unlocked_notify"][2]) == 0.0
    assert float(rows["bad_unlocked_notify"][5]) == 0.0 and float(rows["bad_unlocked_notify"][6]) == 1.0
