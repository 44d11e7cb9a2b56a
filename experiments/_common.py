"""Shared pieces of the claim experiments: seed intervals, per-step series, result files.

Every experiment runs one training arm per seed (or two arms from the same warm start), summarises each run
by a few numbers, and reports the mean over seeds with a 95 % Student-t interval (n - 1 degrees of freedom:
with 5 seeds the half-width is 2.78 standard errors, so an interval that excludes zero is a strong hint,
not a proof). Paired differences (arm B minus arm A on the same seed and warm start) get the same interval.
Results are written to ``experiments/results/<name>.json``; the book, labs 4-5 and
``tests/test_recorded_results.py`` read them from there.
"""

from __future__ import annotations

import json
import math
import os
import platform
import statistics
import time

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
PACKAGE_COPY = os.path.join(os.path.dirname(HERE), "rlvr_lab", "claims")  # what the book and labs read

#: The code a training experiment's numbers come from, for :func:`rlvr_lab.claims.fingerprint` (each script
#: adds itself): our engine's modules, the math, the model and the tasks; not the TRL engine, the CLI or the
#: report, and not the verifier, whose verdicts its own tests hold to pass/fail.
ENGINE_CODE = tuple(f"rlvr_lab/train/{m}.py" for m in (
    "config", "grpo_loop", "learner", "rollout", "run", "supervised", "metrics", "prompting", "precision",
    "checkpoint", "dynamic_sampling")) + (
    "rlvr_lab/grpo.py", "rlvr_lab/advantages.py", "rlvr_lab/policy.py", "rlvr_lab/tasks.py", "rlvr_lab/records.py",
    "rlvr_lab/scoring_mode.py")  # fmt: skip

#: The repair agent's code on top of the engine's, for the experiments that train or update it (each adds
#: itself): its GRPO loop over episodes, the episode sampler and the environment with its tasks and tools.
REPAIR_CODE = ENGINE_CODE + (
    "rlvr_lab/train/repair_loop.py",
    "rlvr_lab/train/episodes.py",
    "rlvr_lab/envs/repair.py",
    "rlvr_lab/envs/repair_tasks.py",
    "rlvr_lab/envs/tools.py",
    "rlvr_lab/envs/context.py",
)

# Two-sided 95 % Student-t quantiles by degrees of freedom (no scipy in the course's environment).
_T95 = {
    1: 12.706,
    2: 4.303,
    3: 3.182,
    4: 2.776,
    5: 2.571,
    6: 2.447,
    7: 2.365,
    8: 2.306,
    9: 2.262,
    10: 2.228,
    12: 2.179,
    15: 2.131,
    20: 2.086,
    30: 2.042,
}


def t95(df: int) -> float:
    """Two-sided 95 % t quantile for ``df`` degrees of freedom (the nearest tabulated df at or below)."""
    if df < 1:
        raise ValueError(f"df must be >= 1, got {df}")
    if df > 30:
        return 1.96
    return _T95[max(d for d in _T95 if d <= df)]


def mean_ci(values) -> dict:
    """Mean and 95 % t interval over seeds: ``{"mean", "lo", "hi", "n", "values"}``."""
    xs = [float(x) for x in values if x is not None and not math.isnan(float(x))]
    if not xs:
        return {"mean": float("nan"), "lo": float("nan"), "hi": float("nan"), "n": 0, "values": []}
    m = statistics.mean(xs)
    half = t95(len(xs) - 1) * statistics.stdev(xs) / math.sqrt(len(xs)) if len(xs) > 1 else float("nan")
    return {"mean": m, "lo": m - half, "hi": m + half, "n": len(xs), "values": xs}


def fmt(ci: dict, digits: int = 3) -> str:
    """``mean [lo, hi]``."""
    return f"{ci['mean']:.{digits}f} [{ci['lo']:.{digits}f}, {ci['hi']:.{digits}f}]"


def window(values, first: bool, size: int = 5) -> float:
    """Mean of the first or the last ``size`` finite values of a per-step series (one step is too noisy)."""
    xs = [float(x) for x in values if x is not None and not math.isnan(float(x))]
    part = xs[:size] if first else xs[-size:]
    return statistics.mean(part) if part else float("nan")


def series(rows: list[dict], key: str) -> list[float]:
    """One metric across the GRPO step rows (NaN where a step lacks it)."""
    return [float(r.get(key, float("nan"))) for r in rows if r.get("step", -1) >= 0]


def pass_mean(rows: list[dict], key: str, passes: int) -> list[float]:
    """A per-pass diagnostic averaged over a step's optimizer passes (``key_pass0`` ... and ``key``)."""
    out = []
    for r in rows:
        vals = [r.get(f"{key}_pass{p}") for p in range(passes - 1)] + [r.get(key)]
        vals = [float(v) for v in vals if v is not None]
        out.append(statistics.mean(vals) if vals else float("nan"))
    return out


def machine() -> dict:
    """Where and under what load the numbers were taken."""
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    return {
        "host": platform.node(),
        "cpus": os.cpu_count(),
        "load_avg_1_5_15": [round(x, 2) for x in load],
        "when_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
    }


def write_result(name: str, data: dict) -> str:
    """Write ``experiments/results/<name>.json`` and its package copy ``rlvr_lab/claims/<name>.json``
    (same bytes; sorted keys, NaN as null) and return the first path."""
    os.makedirs(RESULTS, exist_ok=True)
    os.makedirs(PACKAGE_COPY, exist_ok=True)
    path = os.path.join(RESULTS, f"{name}.json")

    def clean(x):
        if isinstance(x, float) and math.isnan(x):
            return None
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [clean(v) for v in x]
        return x

    text = json.dumps(clean(data), indent=1, sort_keys=True) + "\n"
    for target in (path, os.path.join(PACKAGE_COPY, f"{name}.json")):
        with open(target, "w", encoding="utf-8") as fh:
            fh.write(text)
    return path
