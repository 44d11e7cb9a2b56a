"""The benchmarks' configurations are valid for every preset they offer (benchmarks/train.py once asked TRL's
engine for the cpu preset's overlap, which it refuses, and crashed before training a step)."""

import importlib.util
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", os.path.join(ROOT, "benchmarks", f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("preset", ["ci", "cpu", "gpu"])
def test_the_trainer_benchmark_builds_both_engines_configs_for_every_preset(preset, tmp_path):
    bench = _load("train")
    base, ours, trl = bench.engine_configs(preset, 10, 0, str(tmp_path))
    assert ours.engine == base.engine != "trl" and trl.engine == "trl" and not trl.overlap
    assert ours.overlap == base.overlap  # ours keeps the preset's pipeline
    for cfg in (ours, trl):  # same work for both: steps, tasks, group size, seed
        assert (cfg.grpo_steps, cfg.tasks_per_step, cfg.group_size, cfg.seed) == (10, base.tasks_per_step,
                                                                                  base.group_size, 0)  # fmt: skip
    assert ours.out_dir != trl.out_dir


@pytest.mark.parametrize("preset", ["ci", "cpu"])
def test_the_repair_comparison_gives_both_engines_the_same_episodes(preset, tmp_path):
    """``--env repair``: both configurations are repair runs with the same steps, tasks, group size, horizon
    and seed; TRL's has overlap off (train_repair_trl reads it as our repair loop does)."""
    bench = _load("train")
    base, ours, trl = bench.engine_configs(preset, 10, 0, str(tmp_path), env="repair")
    assert ours.env == trl.env == "repair" and not trl.overlap and ours.out_dir != trl.out_dir
    keys = ("grpo_steps", "tasks_per_step", "group_size", "horizon", "seed", "passes", "lr", "beta")
    assert [getattr(ours, k) for k in keys] == [getattr(trl, k) for k in keys]


@pytest.mark.parametrize("flag", ["--n", "--baseline-n", "--rounds", "--humaneval-baseline-n"])
def test_the_verifier_benchmark_refuses_an_empty_sample(flag):
    """A median over no candidates is undefined: the benchmark says which flag, before any work."""
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "benchmarks", "verifier.py"), flag, "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and f"{flag} must be at least 1" in proc.stderr
    assert "Traceback" not in proc.stderr
