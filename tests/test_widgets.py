"""The book's dashboards (rlvr_lab.figures.widgets): each builds without a display, redraws when a slider moves,
and shows exactly the numbers of the library function the core tests check."""

import html
import inspect
import math

import ipywidgets
import pytest

from rlvr_lab import credit, cycle_time, rewards
from rlvr_lab.figures import widgets

PNG = b"\x89PNG\r\n\x1a\n"


def _moved(dashboard, name, value):
    """Move one control; return (numbers before, readout before)."""
    before, text = (dict(dashboard.numbers), dashboard.readout.value)
    dashboard.controls[name].value = value
    return (before, text)


def _assert_redrawn(dashboard, before, text, image):
    assert dashboard.numbers != before
    assert dashboard.readout.value != text
    assert bytes(dashboard.image.value).startswith(PNG) and bytes(dashboard.image.value) != bytes(image)


def _image(dashboard) -> bytes:
    return bytes(dashboard.image.value)


def _move_and_check(dashboard, name, value):
    """Move ``name`` to ``value`` and assert that numbers, readout and figure all changed."""
    image, updates = _image(dashboard), dashboard.updates
    before, text = _moved(dashboard, name, value)
    assert dashboard.updates == updates + 1
    _assert_redrawn(dashboard, before, text, image)


def _other_end(control):
    """A value of ``control`` inside its range and different from the current one (its max or min)."""
    if isinstance(control, ipywidgets.FloatLogSlider):
        lo, hi = control.base**control.min, control.base**control.max
    else:
        lo, hi = control.min, control.max
    return hi if not math.isclose(control.value, hi) else lo


def _shown(dashboard, text):
    """Whether ``text`` appears as a bold value cell of the readout."""
    return f"<b>{html.escape(text)}</b>" in dashboard.readout.value


@pytest.mark.slow
def test_every_dashboard_builds_with_a_figure_and_a_readout():
    assert len(widgets.ALL) == 9
    for make in widgets.ALL:
        d = make()
        assert isinstance(d, widgets.Dashboard) and isinstance(d, ipywidgets.VBox)
        assert len(d.children) == 3 and d.image in d.children
        assert d.updates == 1
        # every control is a keyword of the builder, and the dashboard starts at the builder's defaults
        defaults = inspect.signature(make).parameters
        assert d.controls and set(d.controls) <= set(defaults)
        for name, control in d.controls.items():
            assert math.isclose(control.value, defaults[name].default), (make.__name__, name)
        assert d.params() == {n: c.value for n, c in d.controls.items()}
        # the readout is a table with one row per number, each number finite or an explicit inf
        assert d.numbers and d.readout.value.startswith("<table")
        for label, value in d.numbers.items():
            assert html.escape(label) in d.readout.value, (make.__name__, label)
            if isinstance(value, float):
                assert not math.isnan(value), (make.__name__, label)
        assert d.readout.value.count("<tr>") >= len(d.numbers)
        assert _image(d).startswith(PNG) and len(_image(d)) > 2000
        # moving the first control to the other end of its range redraws everything
        name, control = next(iter(d.controls.items()))
        _move_and_check(d, name, _other_end(control))


def test_contrast_explorer_matches_rewards_and_table_5():
    for group_size, p, pc, cost in [(8, 0.05, 0.34, 23.8), (16, 0.05, 0.56, 28.6), (8, 0.5, 0.99, 8.1)]:
        d = widgets.contrast_explorer(group_size, p)
        n = d.numbers
        assert n["contrast probability P_c"] == rewards.contrast_probability(group_size, p)
        assert round(n["contrast probability P_c"], 2) == pc
        assert n["rollouts per informative group"] == rewards.rollouts_per_informative_group(group_size, p)
        assert round(n["rollouts per informative group"], 1) == cost
        assert _shown(d, f"{cost:.1f}")
        assert math.isclose(n["zero-contrast share 1 - P_c"], 1 - n["contrast probability P_c"])
        assert math.isclose(n["at least one pass 1-(1-p)^G"], 1 - (1 - p) ** group_size)
    # G = 8 at 5 %: two groups in three carry no gradient
    d = widgets.contrast_explorer(8, 0.05)
    assert round(d.numbers["zero-contrast share 1 - P_c"], 2) == 0.66
    _move_and_check(d, "p", 0.5)
    assert round(d.numbers["rollouts per informative group"], 1) == 8.1
    _move_and_check(d, "group_size", 16)
    assert d.numbers["contrast probability P_c"] == rewards.contrast_probability(16, 0.5)


def test_contrast_explorer_shows_no_contrast_at_p_zero():
    for p in (0.0, 1.0):
        d = widgets.contrast_explorer(8, p)
        assert d.numbers["contrast probability P_c"] == 0.0
        assert d.numbers["zero-contrast share 1 - P_c"] == 1.0
        assert d.numbers["rollouts per informative group"] == math.inf
        assert _shown(d, "inf")
        assert _image(d).startswith(PNG)
    d = widgets.contrast_explorer(8, 0.05)
    _move_and_check(d, "p", 0.0)
    assert d.numbers["contrast probability P_c"] == 0.0
    assert d.numbers["rollouts per informative group"] == math.inf
    # a group of one never holds both a pass and a failure, whatever p is
    assert widgets.contrast_explorer(1, 0.5).numbers["contrast probability P_c"] == 0.0


def test_clip_explorer_matches_grpo_thresholds():
    from rlvr_lab import grpo

    d = widgets.clip_explorer(0.2, 0.2, 0.9)
    low, high = grpo.clip_probability_bounds(0.9, 0.2, 0.2)
    assert d.numbers["positive clip at probability"] == high and round(high, 2) == 1.08
    assert d.numbers["negative clip at probability"] == low and round(low, 2) == 0.72
    assert d.numbers["clip binds below p = 1"] is False and _shown(d, "no")
    assert (d.numbers["ratio interval low"], d.numbers["ratio interval high"]) == (0.8, 1.2)
    # past the top of the interval a positive coefficient earns nothing more; past the bottom a negative one
    assert math.isclose(d.numbers["surrogate, A=+1, r past the top"], 1.2, rel_tol=1e-6)
    assert math.isclose(d.numbers["surrogate, A=-1, r past the bottom"], -0.8, rel_tol=1e-6)
    expected = grpo.clipped_surrogate([1.3, 0.7], [1.0, -1.0], 0.2, 0.2).tolist()
    assert [d.numbers["surrogate, A=+1, r past the top"], d.numbers["surrogate, A=-1, r past the bottom"]] == expected
    # a rare token: the incentive flattens after +0.002 of absolute probability
    _move_and_check(d, "p", 0.01)
    assert round(d.numbers["headroom above p"], 4) == 0.002
    assert d.numbers["clip binds below p = 1"] is True and _shown(d, "yes")
    # clip-higher widens only the upper end
    _move_and_check(d, "eps_high", 0.28)
    assert d.numbers["ratio interval high"] == 1.28 and d.numbers["ratio interval low"] == 0.8
    assert d.numbers["positive clip at probability"] == grpo.clip_probability_bounds(0.01, 0.2, 0.28)[1]


def test_all_pass_explorer_matches_rewards_napkin_17_5():
    d = widgets.all_pass_explorer(3, 0.20, 0.98)
    n = d.numbers
    assert n["incorrect patch accepted"] == rewards.all_pass_probability(0.20, 3)
    assert round(n["incorrect patch accepted"], 6) == 0.008
    assert n["correct patch rejected"] == 1 - rewards.all_pass_probability(0.98, 3)
    assert round(n["correct patch rejected"], 4) == 0.0588
    assert n["expected trials, incorrect"] == rewards.expected_trials(0.20, 3)
    assert round(n["expected trials, incorrect"], 6) == 1.24
    assert round(n["expected trials, correct"], 6) == 2.9404
    assert _shown(d, "0.800%") and _shown(d, "5.88%")
    _move_and_check(d, "trials", 1)
    assert math.isclose(d.numbers["incorrect patch accepted"], 0.2)
    assert d.numbers["expected trials, incorrect"] == d.numbers["expected trials, correct"] == 1.0
    _move_and_check(d, "q_bad", 0.5)
    assert d.numbers["incorrect patch accepted"] == rewards.all_pass_probability(0.5, 1)


def test_false_accept_explorer_matches_equation_1():
    d = widgets.false_accept_explorer(0.10, 0.025, 1.0, 8192)
    n = d.numbers
    assert n["false-accept share"] == rewards.false_accept_share(0.10, 0.025, 1.0)
    assert round(n["false-accept share"], 4) == 0.1837
    assert math.isclose(n["true accepts in 8,192"], 819.2)
    assert math.isclose(n["false accepts in 8,192"], 184.32)
    assert _shown(d, "18.4%") and _shown(d, "819.20") and _shown(d, "184.32")
    # the share is exactly false accepts over all accepts
    assert math.isclose(n["false-accept share"], 184.32 / (819.2 + 184.32))
    _move_and_check(d, "alpha", 0.05)
    assert d.numbers["false-accept share"] == rewards.false_accept_share(0.10, 0.05, 1.0)
    _move_and_check(d, "beta", 0.5)
    assert d.numbers["false-accept share"] == rewards.false_accept_share(0.10, 0.05, 0.5)


def test_reward_weights_explorer_matches_ordering_bound_and_scores():
    def scores(n):
        passes = [n[f"R: {name}"] for name, c, _, _ in widgets.SCORE_TABLE if c]
        failures = [n[f"R: {name}"] for name, c, _, _ in widgets.SCORE_TABLE if not c]
        return passes, failures

    d = widgets.reward_weights_explorer(0.2, 0.3)
    assert d.numbers["ordering margin"] == rewards.ordering_margin(0.2, 0.3)
    assert round(d.numbers["ordering margin"], 10) == 0.5 and _shown(d, "+0.50")
    assert d.numbers["every pass outranks every failure"] is True and _shown(d, "yes")
    for name, c, f, ln in widgets.SCORE_TABLE:
        assert d.numbers[f"R: {name}"] == rewards.composite_reward(c, f, ln, 0.2, 0.3)
        assert html.escape(name) in d.readout.value
    passes, failures = scores(d.numbers)
    assert min(passes) > max(failures)
    # w_f + w_l > 1: a well-formatted failure outscores a long pass
    _move_and_check(d, "w_length", 0.9)
    assert d.numbers["ordering margin"] == rewards.ordering_margin(0.2, 0.9)
    assert d.numbers["every pass outranks every failure"] is False and _shown(d, "no")
    passes, failures = scores(d.numbers)
    assert max(failures) > min(passes)
    d = widgets.reward_weights_explorer(0.4, 0.7)
    assert round(d.numbers["ordering margin"], 2) == -0.1 and not d.numbers["every pass outranks every failure"]


def test_fork_explorer_matches_table_3():
    d = widgets.fork_explorer(30, 512, 8, 2)
    n = d.numbers
    assert n["chosen fork turns"] == "10, 20"
    assert n["tokens, every boundary"] == credit.continuation_tokens(30, 512, 8, "all") == 1_797_120
    assert n["multiple, every boundary"] == credit.continuation_multiple(30, 8, "all") == 117.0
    assert n["tokens, chosen forks"] == credit.continuation_tokens(30, 512, 8, [10, 20]) == 138_240
    assert n["multiple, chosen forks"] == 9.0
    assert n["SE bound, one fork"] == credit.standard_error_bound(8)
    assert n["SE bound, difference"] == credit.difference_standard_error_bound(8)
    assert _shown(d, "1,797,120") and _shown(d, "138,240") and _shown(d, "117.0") and _shown(d, "9.0")
    # M = 20: 0.11 per fork, 0.16 for a difference, resolved from 0.32
    _move_and_check(d, "continuations", 20)
    assert round(d.numbers["SE bound, one fork"], 2) == 0.11
    assert round(d.numbers["SE bound, difference"], 2) == 0.16
    assert round(d.numbers["resolved if |difference| >="], 2) == 0.32
    assert credit.is_resolved(d.numbers["resolved if |difference| >="] + 1e-9, 20)
    _move_and_check(d, "forks", 1)
    assert d.numbers["chosen fork turns"] == "15"
    assert (
        d.numbers["tokens, chosen forks"] == credit.continuation_tokens(30, 512, 20, [15]) == 30 * 512 + 20 * 512 * 15
    )


def test_cycle_explorer_matches_napkin_17_6():
    d = widgets.cycle_explorer(20, 0.12, 0.08, 0.5, 3.5, 256)
    n = d.numbers
    assert n["cycle time (s)"] == cycle_time.cycle_time(20, 0.12, 0.08, 0.5, 3.5) == 8.0
    assert n["capacity (episodes/h)"] == cycle_time.pool_capacity_per_hour(256, 8.0) == 115_200.0
    assert math.isclose(n["reset share of cycle"], 3.5 / 8.0)
    assert math.isclose(n["zero-reset ceiling (episodes/h)"], 256 * 3600 / 4.5)
    assert _shown(d, "8.000") and _shown(d, "115,200")
    before = n["capacity (episodes/h)"]
    # a 15 ms snapshot restore: 4.515 s cycle, about 204,120 episodes an hour, 1.77x
    _move_and_check(d, "t_reset", 0.015)
    assert round(d.numbers["cycle time (s)"], 3) == 4.515
    assert round(d.numbers["capacity (episodes/h)"], -1) == 204_120
    assert round(d.numbers["capacity (episodes/h)"] / before, 2) == 1.77
    assert d.numbers["capacity (episodes/h)"] < d.numbers["zero-reset ceiling (episodes/h)"]
    _move_and_check(d, "slots", 512)
    assert math.isclose(d.numbers["capacity (episodes/h)"], 2 * 256 * 3600 / 4.515)


def test_staleness_explorer_matches_version_lag_and_admit():
    ages, weights = (30.0, 90.0, 200.0), (0.70, 0.25, 0.05)

    def expected(step_s, max_lag):
        return sum(w for a, w in zip(ages, weights) if cycle_time.admit(a, step_s, max_lag)) / sum(weights)

    d = widgets.staleness_explorer(40.0, 2, ages, weights)
    assert math.isclose(d.numbers["admitted fraction"], expected(40.0, 2)) and d.numbers["admitted fraction"] == 0.95
    lags = [d.numbers[f"lag of a {a:g} s rollout"] for a in ages]
    assert lags == [cycle_time.version_lag(a, 40.0) for a in ages] == [0, 2, 5]
    assert _shown(d, "95.0%")
    _move_and_check(d, "max_lag", 5)
    assert d.numbers["admitted fraction"] == 1.0
    _move_and_check(d, "max_lag", 0)
    assert math.isclose(d.numbers["admitted fraction"], 0.70)
    _move_and_check(d, "step_s", 100.0)
    assert [d.numbers[f"lag of a {a:g} s rollout"] for a in ages] == [0, 0, 2]
    assert math.isclose(d.numbers["admitted fraction"], expected(100.0, 0))


def test_verifier_pool_explorer_matches_equation_9():
    d = widgets.verifier_pool_explorer(32.0, 3, 8.0, 0.8, 0.5, 0.2, 0.98)
    n = d.numbers
    assert n["busy workers, 1 trial"] == cycle_time.verifier_demand(32.0, 1, 8.0) == 256.0
    assert n["busy workers, all K"] == cycle_time.verifier_demand(32.0, 3, 8.0) == 768.0
    assert n["workers, all K"] == cycle_time.verifier_workers(32.0, 3, 8.0, 0.8) == 960
    assert _shown(d, "256") and _shown(d, "768") and _shown(d, "960")
    # stop on first rejection: expected trials averaged over the mixture, never at the mean q
    mix = rewards.expected_trials([0.2, 0.98], 3, weights=[0.5, 0.5])
    assert math.isclose(n["expected trials (mixture)"], mix) and round(mix, 4) == 2.0902
    assert n["workers, stop on first rejection"] == cycle_time.verifier_workers(32.0, mix, 8.0, 0.8)
    plug_in = rewards.expected_trials(0.5 * 0.2 + 0.5 * 0.98, 3)
    assert n["workers, mean-q plug-in (wrong)"] == cycle_time.verifier_workers(32.0, plug_in, 8.0, 0.8)
    assert n["workers, mean-q plug-in (wrong)"] < n["workers, stop on first rejection"] < n["workers, all K"]
    _move_and_check(d, "target_utilization", 0.5)
    assert d.numbers["workers, all K"] == 1536
    _move_and_check(d, "incorrect_share", 0.0)
    assert math.isclose(d.numbers["expected trials (mixture)"], rewards.expected_trials(0.98, 3))


@pytest.mark.parametrize(
    "make, kwargs, name",
    [
        (widgets.contrast_explorer, {"p": 1.5}, "p"),
        (widgets.contrast_explorer, {"group_size": 0}, "group_size"),
        (widgets.all_pass_explorer, {"trials": 0}, "trials"),
        (widgets.cycle_explorer, {"t_reset": 100.0}, "t_reset"),
        (widgets.false_accept_explorer, {"alpha": 0.0}, "alpha"),
        (widgets.verifier_pool_explorer, {"target_utilization": 1.0}, "target_utilization"),
    ],
)
def test_out_of_range_start_values_raise_value_error_naming_the_argument(make, kwargs, name):
    with pytest.raises(ValueError) as err:
        make(**kwargs)
    message = str(err.value)
    assert message.split()[0] == name, message
    assert "must be in [" in message and repr(kwargs[name]) in message


@pytest.mark.slow
def test_widget_module_imports_without_a_display_or_torch():
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "MPLBACKEND", "WAYLAND_DISPLAY")}
    code = (
        "import sys, rlvr_lab.figures.widgets as w; d = w.contrast_explorer(); "
        "assert 'torch' not in sys.modules and 'matplotlib.pyplot' not in sys.modules; print(len(d.children))"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "3"
