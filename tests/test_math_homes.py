"""The math lives beside the math (issue 15): new homes, the old names kept, numpy-only modules."""

import importlib
import subprocess
import sys

import numpy as np
import pytest

from rlvr_lab import advantages, cycle_time, rewards


def test_moved_functions_keep_their_old_names():
    sys.modules.pop("rlvr_lab.plots", None)  # the old figure path warns on import (issue 21)
    with pytest.warns(DeprecationWarning, match="rlvr_lab.plots moved"):
        plots = importlib.import_module("rlvr_lab.plots")
    assert plots.admitted_fraction is cycle_time.admitted_fraction
    assert plots.mixture_trials is rewards.mixture_trials
    from rlvr_lab.verifier.cli import wilson

    assert wilson(8, 10) == rewards.wilson_interval(8, 10)


def test_wilson_interval_brackets_the_rate_and_refuses_bad_counts():
    for n in (1, 7, 50):
        for c in range(n + 1):
            lo, hi = rewards.wilson_interval(c, n)
            assert 0.0 <= lo <= c / n <= hi <= 1.0 and hi > lo
    for bad, match in [
        ((3, 2), "successes must be <= n"),
        ((-1, 5), "successes must be an integer"),
        ((1, 0), "n must be an integer"),
        ((1.5, 4), "successes must be an integer"),
    ]:
        with pytest.raises(ValueError, match=match):
            rewards.wilson_interval(*bad)


def test_mixture_trials_is_the_weighted_mean_of_expected_trials():
    mix, plug = rewards.mixture_trials(3, 0.25, 0.3, 0.9)
    assert np.isclose(mix, 0.25 * rewards.expected_trials(0.3, 3) + 0.75 * rewards.expected_trials(0.9, 3))
    assert np.isclose(plug, rewards.expected_trials(0.25 * 0.3 + 0.75 * 0.9, 3)) and mix >= plug


def test_numpy_advantages_equal_the_torch_path():
    torch = pytest.importorskip("torch", reason="the torch path of eq 2 is compared only where torch is installed")
    from rlvr_lab import grpo

    rng = np.random.default_rng(0)
    for shape in [(5,), (3, 8)]:
        r = rng.integers(0, 2, size=shape).astype(float)
        for std in ("population", "sample"):
            for scale in ("group", "batch", "none"):
                a = advantages.group_advantages(r, std=std, scale=scale)
                t = grpo.group_advantages(torch.tensor(r, dtype=torch.float64), std=std, scale=scale)
                assert isinstance(a, np.ndarray) and isinstance(t, torch.Tensor)
                np.testing.assert_allclose(t.numpy(), a, rtol=0, atol=0)
    assert grpo.lone_pass_coefficient is advantages.lone_pass_coefficient


def test_math_modules_do_not_import_torch():
    code = (
        "import sys; import rlvr_lab.advantages, rlvr_lab.rewards, rlvr_lab.cycle_time, rlvr_lab.credit; "
        "print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
