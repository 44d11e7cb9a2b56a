"""Per-step training metrics and held-out pass@k (sections 17.5.4, 17.8, 17.9.6).

The chapter's diagnostics, computed from rollout records: mean reward, zero-contrast groups split into
all-pass, all-fail and unresolved (table 8), length by outcome (17.8.2), and pass@1 / pass@k with a
confidence interval over tasks (17.9.6). :class:`MetricsLog` appends one JSON line per step and rewrites a
CSV beside it. numpy only.
"""

from __future__ import annotations

import csv
import json
import math
import os
from collections import defaultdict

import numpy as np

from rlvr_lab.records import RolloutRecord


def group_outcomes(records: list[RolloutRecord]) -> dict[str, float]:
    """Fractions of groups that are all-pass, all-fail, unresolved (any member) or contrastive (17.5.4).

    >>> from rlvr_lab.records import Invocation
    >>> inv = [Invocation(0, [1], [2], [-1.0], 0, "eos")]
    >>> mk = lambda g, v: RolloutRecord(g + v, g, "t", "p", "train", 0, "f", "v", {}, "", inv, "", v,
    ...                                 {"pass": 1.0, "fail": 0.0}.get(v), {}, "eos", 1, 1, 0)
    >>> group_outcomes([mk("a", "pass"), mk("a", "fail"), mk("b", "fail"), mk("b", "fail")])
    {'all_pass': 0.0, 'all_fail': 0.5, 'unresolved': 0.0, 'contrast': 0.5}
    """
    groups: dict[str, list[RolloutRecord]] = defaultdict(list)
    for r in records:
        groups[r.group_id].append(r)
    counts = {"all_pass": 0, "all_fail": 0, "unresolved": 0, "contrast": 0}
    for members in groups.values():
        rewards = [m.reward for m in members]
        if any(x is None for x in rewards):
            counts["unresolved"] += 1
        elif all(x == 1.0 for x in rewards):
            counts["all_pass"] += 1
        elif all(x == 0.0 for x in rewards):
            counts["all_fail"] += 1
        else:
            counts["contrast"] += 1
    n = max(len(groups), 1)
    return {k: v / n for k, v in counts.items()}


def length_by_outcome(records: list[RolloutRecord]) -> dict[str, float]:
    """Mean scored completion tokens per verdict (17.8.2); verdicts absent from the batch are omitted.

    >>> length_by_outcome([])
    {}
    """
    by: dict[str, list[int]] = defaultdict(list)
    for r in records:
        by[r.verdict].append(r.completion_tokens)
    return {f"len_{k}": float(np.mean(v)) for k, v in sorted(by.items())}


def _pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from n samples with c passes (delegates to :func:`rlvr_lab.rewards.pass_at_k`)."""
    from rlvr_lab.rewards import pass_at_k

    return float(pass_at_k(n, c, k))


def pass_at_k_summary(records: list[RolloutRecord], k: int, z: float = 1.96) -> dict[str, float]:
    """pass@1 and pass@k over tasks with a normal-approximation CI over tasks (17.9.6).

    Per task, only resolved samples count (n = resolved, c = passes); tasks with no resolved sample are
    reported in ``tasks_unresolved`` and left out. pass@1's interval is mean +- z * sd / sqrt(tasks).
    """
    by_task: dict[str, list[float | None]] = defaultdict(list)
    for r in records:
        by_task[r.task_id].append(r.reward)
    p1, pk, unresolved_tasks, unresolved = [], [], 0, 0
    for rewards in by_task.values():
        resolved = [x for x in rewards if x is not None]
        unresolved += len(rewards) - len(resolved)
        if not resolved:
            unresolved_tasks += 1
            continue
        n, c = len(resolved), int(sum(resolved))
        p1.append(c / n)
        pk.append(_pass_at_k(n, c, min(k, n)))
    if not p1:
        return {
            "pass1": float("nan"),
            "pass1_lo": float("nan"),
            "pass1_hi": float("nan"),
            f"pass{k}": float("nan"),
            "tasks": 0,
            "tasks_unresolved": unresolved_tasks,
            "samples_unresolved": unresolved,
        }
    mean = float(np.mean(p1))
    half = z * float(np.std(p1, ddof=1)) / math.sqrt(len(p1)) if len(p1) > 1 else float("nan")
    return {
        "pass1": mean,
        "pass1_lo": max(0.0, mean - half),
        "pass1_hi": min(1.0, mean + half),
        f"pass{k}": float(np.mean(pk)),
        "tasks": len(p1),
        "tasks_unresolved": unresolved_tasks,
        "samples_unresolved": unresolved,
    }


def per_family_pass1(records: list[RolloutRecord]) -> dict[str, float]:
    """Mean resolved reward per task family (the family is the task id's first part)."""
    by: dict[str, list[float]] = defaultdict(list)
    for r in records:
        if r.reward is not None:
            by[r.task_id.split("/")[0]].append(r.reward)
    return {f"pass1_{k}": float(np.mean(v)) for k, v in sorted(by.items())}


class MetricsLog:
    """Append-only per-step metrics: ``metrics.jsonl`` plus ``metrics.csv`` rewritten from it."""

    def __init__(self, out_dir: str):
        self.jsonl = os.path.join(out_dir, "metrics.jsonl")
        self.csv = os.path.join(out_dir, "metrics.csv")

    def rows(self) -> list[dict]:
        """Every row written so far."""
        if not os.path.exists(self.jsonl):
            return []
        with open(self.jsonl, encoding="utf-8") as fh:
            return [json.loads(line) for line in fh if line.strip()]

    def append(self, row: dict) -> int:
        """Append one row; returns the JSONL size in bytes (kept in checkpoints for resume)."""
        with open(self.jsonl, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(row, sort_keys=True, default=float) + "\n")
            size = fh.tell()
        self.write_csv()
        return size

    def write_csv(self) -> None:
        """Rewrite the CSV from the JSONL (columns: union of keys)."""
        rows = self.rows()
        keys = sorted({k for r in rows for k in r if not isinstance(r[k], (dict, list))})
        with open(self.csv, "w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=keys, extrasaction="ignore")
            writer.writeheader()
            writer.writerows(rows)
