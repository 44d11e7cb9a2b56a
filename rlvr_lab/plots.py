# ruff: noqa: F401 (a deprecated path: every import here is a re-export)
"""Deprecated: the figures moved to :mod:`rlvr_lab.figures` (one module each); this path goes in 0.2.

Every name this module exported stays here for homework scripts: the figures of single relations
(:mod:`rlvr_lab.figures.relations`), of the fleet (:mod:`~rlvr_lab.figures.fleet`), of the chapters
(:mod:`~rlvr_lab.figures.chapter`) and of the claim experiments (:mod:`~rlvr_lab.figures.experiments`),
and the style (:mod:`~rlvr_lab.figures.style`).
"""

import warnings

from rlvr_lab.claims import load as load_recorded
from rlvr_lab.cycle_time import admitted_fraction
from rlvr_lab.figures.chapter import (
    all_pass_measured_figure,
    case_study_figure,
    clip_higher_figure,
    exploit_gallery_figure,
    key_numbers_figure,
    length_bias_figure,
    rollout_roles_figure,
)
from rlvr_lab.figures.experiments import (
    recorded_clip_figure,
    recorded_exploit_figure,
    recorded_length_figure,
    recorded_pass_at_k_figure,
)
from rlvr_lab.figures.fleet import barrier_figure, cycle_figure, staleness_figure, verifier_pool_figure
from rlvr_lab.figures.relations import (
    all_pass_figure,
    clip_figure,
    contrast_figure,
    even_forks,
    false_accept_figure,
    fork_figure,
    group_advantages_figure,
    length_weights_figure,
    reward_weights_figure,
)
from rlvr_lab.figures.style import ACCENT, FAIL_COLOR, MUTED, NEUTRAL, PASS_COLOR, BookFigure, png_bytes
from rlvr_lab.rewards import mixture_trials

warnings.warn(
    "rlvr_lab.plots moved to rlvr_lab.figures (relations, fleet, chapter, experiments, style); "
    "the old path goes in 0.2",
    DeprecationWarning,
    stacklevel=2,
)
