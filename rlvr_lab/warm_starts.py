"""A warm start that hedges: the regime in which entropy collapse can be watched (section 17.8.3).

A warm start trained only on reference solutions is already sharp (the course's averages about 0.2 nats
per token), so there is little entropy left to lose and a symmetric clip and clip-higher behave alike. A
policy fresh from imitation on real data is less sure of itself: it has seen several answers to the same
prompt, some right and some nearly right. :func:`hedged_demos` builds such a warm start from the task
suite: each training task is demonstrated by its reference solution ``correct`` times and by each of its
near misses (:func:`rlvr_lab.exploits.near_misses`) once, so the warm-started policy spreads its first
decision over several bodies and passes some of the time. GRPO then has both what entropy collapse
needs - contrast in most groups and probability mass to concentrate - and a measurable amount of it.
"""

from __future__ import annotations

import random

from rlvr_lab.exploits import near_misses


def hedged_demos(tasks, correct: int, seed: int) -> list:
    """Demonstrations for ``tasks``: per task its reference ``correct`` times (>= 1) and each near miss once,
    shuffled with ``seed``. A task with no near miss contributes its reference only."""
    import dataclasses

    if correct < 1:
        raise ValueError(f"correct must be >= 1, got {correct}")
    demos = []
    for task in tasks:
        demos += [task] * correct
        demos += [dataclasses.replace(task, solution=body) for body in near_misses(task)]
    random.Random(seed).shuffle(demos)
    return demos
