"""Static figures of the book (rlvr_lab.figures): pure functions that return a Figure built from the library."""

import io
import sys

import numpy as np
import pytest
from matplotlib.figure import Figure

from rlvr_lab import cycle_time, rewards
from rlvr_lab.equations import eq
from rlvr_lab.figures import fleet, relations, style

FIGURES = [
    relations.contrast_figure,
    relations.false_accept_figure,
    relations.reward_weights_figure,
    relations.all_pass_figure,
    relations.fork_figure,
    fleet.cycle_figure,
    fleet.barrier_figure,
    fleet.staleness_figure,
    fleet.verifier_pool_figure,
]
TORCH_FIGURES = [relations.group_advantages_figure, relations.clip_figure, relations.length_weights_figure]


def _render(fig: Figure) -> np.ndarray:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=40)
    buf.seek(0)
    import matplotlib.image as mpimg

    return mpimg.imread(buf)


def _pyplot_figures() -> list:
    """Figure numbers pyplot manages (empty when pyplot was never imported)."""
    plt = sys.modules.get("matplotlib.pyplot")
    return list(plt.get_fignums()) if plt is not None else []


def _texts(ax) -> list[str]:
    return [t.get_text() for t in ax.texts]


def _marks(ax) -> list[tuple[float, float]]:
    """The single-point markers a figure puts on the chapter's worked point."""
    return [
        (float(line.get_xdata()[0]), float(line.get_ydata()[0]))
        for line in ax.lines
        if len(line.get_xdata()) == 1 and line.get_marker() == "o"
    ]


@pytest.mark.parametrize("make", FIGURES + TORCH_FIGURES, ids=lambda f: f.__name__)
def test_each_figure_renders_without_pyplot(make):
    managed = _pyplot_figures()
    fig = make()
    assert isinstance(fig, Figure)
    # a bare Figure: no pyplot manager, no window, nothing registered globally
    assert fig.canvas.manager is None
    assert _pyplot_figures() == managed
    assert fig.axes
    for ax in fig.axes:
        assert ax.get_title() or ax.get_xlabel(), f"{make.__name__}: an axis without a title or label"
        assert ax.has_data(), f"{make.__name__}: an empty axis"
    img = _render(fig)
    assert img.ndim == 3 and img.shape[0] > 50 and img.shape[1] > 50
    # something was drawn: many distinct colours, not a blank canvas
    assert len(np.unique(img.reshape(-1, img.shape[2]), axis=0)) > 20
    assert style.png_bytes(fig, dpi=30).startswith(b"\x89PNG")
    assert fig._repr_png_().startswith(b"\x89PNG")


@pytest.mark.slow
def test_figures_leave_pyplot_untouched():
    import subprocess

    # in a fresh interpreter: build and render every numpy-only figure, pyplot must never be imported
    # (the torch figures are checked in-process by test_each_figure_renders_without_pyplot)
    code = (
        "import sys\n"
        "import importlib\n"
        "from rlvr_lab.figures import style\n"
        "names = " + repr([(f.__module__, f.__name__) for f in FIGURES]) + "\n"
        "for module, name in names:\n"
        "    fig = getattr(importlib.import_module(module), name)()\n"
        '    assert style.png_bytes(fig, dpi=20).startswith(b"\\x89PNG"), name\n'
        'assert "matplotlib.pyplot" not in sys.modules, "pyplot imported"\n'
        "print(len(names))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(len(FIGURES))
    # in this process: whatever pyplot holds (if anything imported it) is left as it was
    managed = _pyplot_figures()
    for make in FIGURES + TORCH_FIGURES:
        make()
    assert _pyplot_figures() == managed


def test_contrast_figure_curves_are_the_library_function():
    fig = relations.contrast_figure(8, 0.05)
    left, right = fig.axes
    curves = {line.get_label(): line for line in left.lines if line.get_label().startswith("G = ")}
    assert set(curves) == {"G = 2", "G = 8", "G = 16"}
    for label, line in curves.items():
        g = int(label.split("=")[1])
        p = np.asarray(line.get_xdata())
        assert p.min() > 0 and p.max() < 1 and len(p) > 100
        np.testing.assert_allclose(line.get_ydata(), rewards.contrast_probability(g, p), rtol=1e-12)
    for line in right.lines:
        if line.get_label().startswith("G = "):
            g = int(line.get_label().split("=")[1])
            np.testing.assert_allclose(
                line.get_ydata(), rewards.rollouts_per_informative_group(g, np.asarray(line.get_xdata())), rtol=1e-12
            )
    # the worked point (G = 8, p = 5 %): P_c 0.34 and 23.8 rollouts per informative group
    ((x, y),) = _marks(left)
    assert x == 0.05 and y == rewards.contrast_probability(8, 0.05)
    assert any("P_c=0.34" in t for t in _texts(left))
    ((x, y),) = _marks(right)
    assert y == rewards.rollouts_per_informative_group(8, 0.05)
    assert "23.8 rollouts" in _texts(right)
    # a group size not among the defaults gets its own, highlighted curve
    fig = relations.contrast_figure(12, 0.5)
    labels = [line.get_label() for line in fig.axes[0].lines]
    assert "G = 12" in labels
    line = fig.axes[0].lines[labels.index("G = 12")]
    assert line.get_linewidth() > max(
        ln.get_linewidth() for ln in fig.axes[0].lines if ln.get_label() in ("G = 2", "G = 8", "G = 16")
    )
    # no contrast at all: the cost is infinite and is not marked as a number
    fig = relations.contrast_figure(8, 0.0)
    assert _marks(fig.axes[0]) == [(0.0, 0.0)] and _marks(fig.axes[1]) == []


def test_cycle_figure_marks_the_napkin_point():
    fig = fleet.cycle_figure(20, 0.12, 0.08, 0.5, 3.5, 256)
    left, right = fig.axes
    assert left.get_title() == f"Cycle, {eq('ch8-cycle')}: 8.000 s" == "Cycle, eq (26): 8.000 s"
    ((x, y),) = _marks(left)
    assert (x, y) == (3.5, 115_200.0)
    assert "reset 3.5 s: 115,200/h" in _texts(left)
    curve = next(line for line in left.lines if line.get_label() == "256 slots")
    resets = np.asarray(curve.get_xdata())
    np.testing.assert_allclose(
        curve.get_ydata(),
        cycle_time.pool_capacity_per_hour(256, cycle_time.cycle_time(20, 0.12, 0.08, 0.5, resets)),
        rtol=1e-12,
    )
    ceiling = next(line for line in left.lines if line.get_label().startswith("zero-reset ceiling"))
    assert np.allclose(ceiling.get_ydata(), 256 * 3600 / 4.5)
    assert right.get_title() == "One slot cycle: reset share 43.8 %"
    widths = [patch.get_width() for patch in right.patches]
    assert np.allclose(widths, [20 * 0.12, 20 * 0.08, 0.5, 3.5]) and np.isclose(sum(widths), 8.0)
    # the snapshot restore of napkin math 17.6
    fig = fleet.cycle_figure(20, 0.12, 0.08, 0.5, 0.015, 256)
    assert fig.axes[0].get_title() == f"Cycle, {eq('ch8-cycle')}: 4.515 s"
    ((_, y),) = _marks(fig.axes[0])
    assert round(y, -1) == 204_120


def test_reward_weights_figure_reports_overlap_for_unsafe_weights():
    assert relations.reward_weights_figure(0.2, 0.3).axes[1].get_title() == "Score ranges: gap of 0.50"
    assert relations.reward_weights_figure(0.4, 0.7).axes[1].get_title() == "Score ranges: overlap of 0.10"
    # the bound is strict: at w_f + w_l = 1 the best failure ties the worst pass, which is no gap
    assert relations.reward_weights_figure(0.5, 0.5).axes[1].get_title().startswith("Score ranges: touching")
    fig = relations.reward_weights_figure(0.4, 0.7)
    left, right = fig.axes
    assert _marks(left) == [(0.4, 0.7)] and "margin -0.10" in _texts(left)
    assert left.lines[-1].get_color() == style.FAIL_COLOR
    assert relations.reward_weights_figure(0.2, 0.3).axes[0].lines[-1].get_color() == style.PASS_COLOR
    bars = sorted(right.patches, key=lambda b: b.get_y())
    fail_bar, pass_bar = bars
    r = rewards.composite_reward
    assert np.isclose(pass_bar.get_x(), r(1, 0.0, 1.0, 0.4, 0.7))
    assert np.isclose(pass_bar.get_x() + pass_bar.get_width(), r(1, 1.0, 0.0, 0.4, 0.7))
    assert np.isclose(fail_bar.get_x(), r(0, 0.0, 1.0, 0.4, 0.7))
    assert np.isclose(fail_bar.get_x() + fail_bar.get_width(), r(0, 1.0, 0.0, 0.4, 0.7))
    assert fail_bar.get_x() + fail_bar.get_width() > pass_bar.get_x()  # the ranges overlap


def test_barrier_and_admission_helpers_match_chapter_numbers():
    durations = [0.2, 3.0, 3.52, 16.8]
    fig = fleet.barrier_figure(durations)
    (ax,) = fig.axes
    assert ax.get_title() == "Group barrier: 65 % of reserved slot time idle"
    busy, idle = ax.patches[:4], ax.patches[4:8]
    assert np.allclose([b.get_width() for b in busy], durations)
    assert np.allclose([b.get_width() for b in idle], [16.8 - d for d in durations])
    idle_share = sum(b.get_width() for b in idle) / (4 * cycle_time.barrier_step_time(durations))
    assert np.isclose(idle_share, cycle_time.barrier_idle_fraction(durations)) and round(idle_share, 2) == 0.65

    ages, weights = [30, 90, 200], [0.70, 0.25, 0.05]
    assert cycle_time.admitted_fraction(40, 2, ages, weights) == 0.95
    for step_s, max_lag in [(40, 0), (40, 2), (40, 5), (100, 0), (20, 3)]:
        expected = sum(w for a, w in zip(ages, weights) if cycle_time.admit(a, step_s, max_lag))
        assert np.isclose(cycle_time.admitted_fraction(step_s, max_lag, ages, weights), expected)
    assert cycle_time.admitted_fraction(40, 5, ages) == 1.0
    assert "95 % admitted" in _texts(fleet.staleness_figure(40.0, 2, ages, weights).axes[0])
    lags = [bar.get_height() for bar in fleet.staleness_figure(40.0, 2, ages, weights).axes[1].patches]
    assert lags == [cycle_time.version_lag(a, 40.0) for a in ages] == [0, 2, 5]

    mix, plug_in = rewards.mixture_trials(3, 0.5, 0.2, 0.98)
    assert mix == rewards.expected_trials([0.2, 0.98], 3, weights=[0.5, 0.5])
    assert round(mix, 4) == 2.0902 and round(plug_in, 4) == 1.9381 and plug_in < mix  # convexity
    fig = fleet.verifier_pool_figure(32.0, 3, 8.0, 0.8, 0.5, 0.2, 0.98)
    assert "960 workers" in _texts(fig.axes[0])
    assert [b.get_height() for b in fig.axes[1].patches] == [
        256.0,
        768.0,
        cycle_time.verifier_demand(32.0, mix, 8.0),
        960,
    ]


def test_bad_figure_input_raises_value_error_naming_the_argument():
    cases = [
        (relations.contrast_figure, {"p": 1.5}, "p"),
        (relations.contrast_figure, {"group_size": 0}, "group_size"),
        (relations.false_accept_figure, {"alpha": -0.1}, "alpha"),
        (relations.false_accept_figure, {"rho": 2.0}, "rho"),
        (relations.all_pass_figure, {"trials": 0}, "trials"),
        (relations.all_pass_figure, {"q_bad": 1.5}, "q_bad"),
        (relations.all_pass_figure, {"q_good": -0.1}, "q_good"),
        (relations.all_pass_figure, {"max_trials": 0}, "max_trials"),
        (relations.fork_figure, {"continuations": 0}, "continuations"),
        (fleet.cycle_figure, {"t_reset": -1.0}, "t_reset"),
        (fleet.cycle_figure, {"slots": 0}, "slots"),
        (fleet.barrier_figure, {"durations": []}, "durations"),
        (fleet.barrier_figure, {"durations": [1.0, -2.0]}, "durations"),
        (fleet.staleness_figure, {"step_s": 0.0}, "step_s"),
        (fleet.staleness_figure, {"max_lag": -1}, "max_lag"),
        (fleet.verifier_pool_figure, {"target_utilization": 1.5}, "target_utilization"),
        (fleet.verifier_pool_figure, {"incorrect_share": 1.5}, "incorrect_share"),
        (relations.reward_weights_figure, {"w_format": -0.1}, "w_format"),
        (relations.fork_figure, {"horizon": 30, "forks": [40]}, "forks"),
        (cycle_time.admitted_fraction, {"step_s": 40, "max_lag": 2, "ages": [30, 90], "weights": [1.0]}, "weights"),
    ]
    for make, kwargs, name in cases:
        with pytest.raises(ValueError) as err:
            make(**kwargs)
        assert str(err.value).split()[0] == name, (make.__name__, kwargs, str(err.value))
        assert "must be" in str(err.value)


def test_reward_weights_title_at_the_boundary_says_touching_not_minus_zero():
    title = relations.reward_weights_figure(0.5, 0.5).axes[1].get_title()
    assert title.startswith("Score ranges: touching") and "-0.00" not in title


OLD_PATHS = {
    "rlvr_lab.plots": [
        "contrast_figure",
        "false_accept_figure",
        "reward_weights_figure",
        "all_pass_figure",
        "fork_figure",
        "even_forks",
        "group_advantages_figure",
        "clip_figure",
        "length_weights_figure",
        "cycle_figure",
        "barrier_figure",
        "staleness_figure",
        "verifier_pool_figure",
        "rollout_roles_figure",
        "exploit_gallery_figure",
        "all_pass_measured_figure",
        "length_bias_figure",
        "clip_higher_figure",
        "case_study_figure",
        "key_numbers_figure",
        "load_recorded",
        "recorded_exploit_figure",
        "recorded_clip_figure",
        "recorded_length_figure",
        "recorded_pass_at_k_figure",
        "admitted_fraction",
        "mixture_trials",
        "png_bytes",
        "BookFigure",
        "PASS_COLOR",
        "FAIL_COLOR",
        "NEUTRAL",
        "ACCENT",
        "MUTED",
    ],
    "rlvr_lab.figure_style": [
        "PASS_COLOR",
        "FAIL_COLOR",
        "NEUTRAL",
        "ACCENT",
        "MUTED",
        "BookFigure",
        "png_bytes",
        "axes_row",
        "mark_point",
    ],
    "rlvr_lab.fleet_figures": ["cycle_figure", "barrier_figure", "staleness_figure", "verifier_pool_figure"],
    "rlvr_lab.chapter_figures": ["FIGURES", "VERDICT_COLORS", "rollout_roles_figure", "key_numbers_figure"],
    "rlvr_lab.dashboard": ["Dashboard", "float_slider", "int_slider", "log_slider", "check_range", "STYLE", "LAYOUT"],
    "rlvr_lab.widgets": ["ALL", "SCORE_TABLE", "Dashboard", "contrast_explorer", "verifier_pool_explorer"],
    "rlvr_lab.recorded": ["NAMES", "load", "table", "ci"],
    "rlvr_lab.recorded.figures": ["load_recorded", "recorded_exploit_figure", "recorded_pass_at_k_figure"],
}
"""The figure modules' old paths (before rlvr_lab.figures and rlvr_lab.claims) and names homework may use."""


@pytest.mark.parametrize("old", sorted(OLD_PATHS))
def test_old_figure_paths_keep_their_names_with_a_deprecation_warning(old):
    import importlib

    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=f"{old} moved to rlvr_lab\\.(figures|claims)"):
        module = importlib.import_module(old)
    missing = [name for name in OLD_PATHS[old] if not hasattr(module, name)]
    assert missing == []
    assert module.__doc__.startswith("Deprecated")
