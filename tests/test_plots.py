"""Static figures of the book (rlvr_lab.plots): pure functions that return a Figure built from the library."""
import io
import numpy as np
import pytest
from matplotlib.figure import Figure
from rlvr_lab import cycle_time, plots, rewards
FIGURES = [plots.contrast_figure, plots.false_accept_figure, plots.reward_weights_figure, plots.all_pass_figure, plots.fork_figure, plots.cycle_figure, plots.barrier_figure, plots.staleness_figure, plots.verifier_pool_figure]
TORCH_FIGURES = [plots.group_advantages_figure, plots.clip_figure, plots.length_weights_figure]

def _render(fig: Figure) -> np.ndarray:
    buf = io.BytesIO()
    fig.savefig(buf, format='png', dpi=40)
    buf.seek(0)
    import matplotlib.image as mpimg
    return mpimg.imread(buf)

@pytest.mark.parametrize('make', FIGURES + TORCH_FIGURES, ids=lambda f: f.__name__)
def test_each_figure_renders_without_pyplot(make):
    pass

def test_figures_leave_pyplot_untouched():
    pass

def test_contrast_figure_curves_are_the_library_function():
    pass

def test_cycle_figure_marks_the_napkin_point():
    pass

def test_reward_weights_figure_reports_overlap_for_unsafe_weights():
    pass

def test_barrier_and_admission_helpers_match_chapter_numbers():
    pass

def test_bad_figure_input_raises_value_error_naming_the_argument():
    pass