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
from verifier_helpers import GOOD, function_fixture
FIXTURES = Path(__file__).resolve().parents[1] / 'fixtures' / 'pool_repair_01'
needs_pool_fixture = pytest.mark.skipif(not (FIXTURES / 'manifest.json').is_file(), reason='fixtures/pool_repair_01 is not in this checkout')

def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, '-m', 'rlvr_lab', *args], capture_output=True, text=True, timeout=180)

@needs_pool_fixture
def test_verify_prints_verdict_and_evidence(tmp_path):
    pass

@needs_pool_fixture
def test_verify_rejects_bad_patch_and_refused_path(tmp_path):
    pass

def test_read_candidate_forms(tmp_path):
    pass

def test_format_and_wilson():
    pass

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
