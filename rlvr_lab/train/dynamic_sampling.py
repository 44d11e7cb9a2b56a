"""DAPO's dynamic sampling (section 17.5.4, eq 2): refill a step with groups that carry a gradient.

A group whose G members all got the same reward has zero advantage for every member (eq 2): it moves the
weights only through the KL term, and under the token-level loss it dilutes every other token. DAPO (Yu et al.,
2025) samples more prompts until the batch holds enough groups with contrast. Here a step that has fewer than
``tasks_per_step`` admitted groups with contrast samples that many more tasks (none seen this step), up to
``dynamic_sampling_rounds`` rounds; then the first ``tasks_per_step`` groups with contrast, in sampling order,
enter the update and every other group is recorded with the reason it stayed out. Informative groups are rare
exactly when pass rates are near 0 or 1 (:func:`rlvr_lab.rewards.contrast_probability`, eq 2), so this costs the
most sampling where the plain batch would carry the least signal.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from rlvr_lab.records import RolloutRecord

#: Why a group stayed out of a dynamically sampled update.
NO_CONTRAST = "no contrast: every member got the same reward (dynamic sampling)"
SURPLUS = "surplus: the step already had tasks_per_step groups with contrast (dynamic sampling)"


def contrast_groups(records: list[RolloutRecord]) -> list[str]:
    """Group ids, in order of first appearance, whose members are all admitted and not all equal in reward.

    >>> from rlvr_lab.records import Invocation
    >>> inv = Invocation(0, [1], [2], [-0.5], 0, "eos")
    >>> mk = lambda g, r: RolloutRecord(g + str(r), g, "t", "p", "train", 0, "f", "v", {}, "", [inv], "",
    ...                                 "pass" if r else "fail", r, {}, "eos", 1, 1, 0, admitted=True)
    >>> contrast_groups([mk("a", 1.0), mk("a", 1.0), mk("b", 0.0), mk("b", 1.0)])
    ['b']
    """
    groups: dict[str, list[RolloutRecord]] = {}
    for r in records:
        groups.setdefault(r.group_id, []).append(r)
    return [
        g for g, members in groups.items() if all(m.admitted for m in members) and len({m.reward for m in members}) > 1
    ]


def keep_informative(records: list[RolloutRecord], wanted: int) -> list[str]:
    """Admit the first ``wanted`` groups with contrast; mark every other admitted group out, with its reason.
    Returns the ids of the groups kept."""
    kept = contrast_groups(records)[:wanted]
    informative = set(contrast_groups(records))
    for r in records:
        if r.admitted and r.group_id not in kept:
            r.admitted = False
            r.exclusion_reason = SURPLUS if r.group_id in informative else NO_CONTRAST
    return kept


def refill(
    records: list[RolloutRecord],
    train_tasks: list,
    wanted: int,
    rounds: int,
    seed: str,
    sample_and_grade: Callable[[list, str], list[RolloutRecord]],
) -> tuple[list[RolloutRecord], int]:
    """Sample more tasks until ``wanted`` groups have contrast or ``rounds`` rounds are spent.

    ``sample_and_grade(tasks, id_prefix)`` samples one group per task with ``id_prefix`` on its rollout ids
    (``d{round}-s``: unique within the step) and returns their graded, closed records. Each round draws its
    tasks with ``random.Random(f"{seed}:refill:{round}")`` from the tasks not yet sampled this step, so a
    resumed run refills exactly as the uninterrupted one. Returns every record (the step's own first) and the
    rounds used; call :func:`keep_informative` on them next.
    """
    records = list(records)
    used = {r.task_id for r in records}
    spent = 0
    for round_ in range(1, rounds + 1):
        missing = wanted - len(contrast_groups(records))
        fresh = [t for t in train_tasks if t.task_id not in used]
        if missing <= 0 or not fresh:
            break
        tasks = random.Random(f"{seed}:refill:{round_}").sample(fresh, min(missing, len(fresh)))
        used |= {t.task_id for t in tasks}
        records += sample_and_grade(tasks, f"d{round_}-s")
        spent = round_
    return records, spent
