"""scripts/gpu_check.py, the prepared GPU check: its CPU smoke mode runs every check here."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).parents[1] / "scripts" / "gpu_check.py"


def load():
    spec = importlib.util.spec_from_file_location("gpu_check", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_without_cuda_the_full_check_refuses_and_names_the_smoke_flag(monkeypatch, capsys):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert load().main([]) == 2
    assert "--smoke" in capsys.readouterr().err


def test_a_failing_check_makes_the_exit_status_non_zero(monkeypatch, tmp_path, capsys):
    module = load()

    def broken():
        raise RuntimeError("replay deviation 0.8 nats > replay_bound 0.001")

    monkeypatch.setattr(module, "checks", lambda smoke, out: [("broken", broken)])
    assert module.main(["--smoke", "--out", str(tmp_path)]) == 1
    assert "FAIL broken" in capsys.readouterr().out


@pytest.mark.slow
def test_the_smoke_mode_runs_every_check_on_the_cpu(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(SCRIPT.parents[1]))
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--smoke", "--out", str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("ok ")]
    assert len(lines) == 3 and "0 failed" in done.stdout
    assert lines[0].startswith("ok   gpu preset: device cpu, dtype bfloat16") and "t4 preset" in lines[1]
    for line in lines[:2]:
        replay = float(line.split("replay_max_dev ")[1].split(",")[0])
        assert 0 <= replay < 0.05 and "pass@1" in line and "rollouts/s" in line
    assert "references pass" in lines[2]
