"""The closing report of a run and its plots (sections 17.8, 17.9.6, 17.10).

Pass@1 before and after with confidence intervals over held-out tasks, wall time, and where the time
went (warm start, sampling, verification, update, evaluation, checkpoints), written to ``report.md`` and
``summary.json``; matplotlib figures of the per-step diagnostics go to ``plots/``.
"""

from __future__ import annotations

import json
import math
import os


def _fmt(ev: dict, k: int) -> str:
    return (
        f"{ev.get('pass1', float('nan')):.3f} [{ev.get('pass1_lo', float('nan')):.3f}, "
        f"{ev.get('pass1_hi', float('nan')):.3f}]  pass@{k} {ev.get(f'pass{k}', float('nan')):.3f}"
    )


def format_report(result, config) -> str:
    """Plain-text report of a :class:`~rlvr_lab.train.grpo_loop.TrainResult`.

    >>> from types import SimpleNamespace
    >>> r = SimpleNamespace(before={"pass1": 0.2, "pass1_lo": 0.1, "pass1_hi": 0.3, "tasks": 10},
    ...     after={"pass1": 0.5, "pass1_lo": 0.4, "pass1_hi": 0.6, "tasks": 10}, wall_s=60.0,
    ...     timing={"sft": 10.0, "sample": 20.0}, steps=5, rollouts=100, gain=0.3, out_dir="runs/x")
    >>> c = SimpleNamespace(eval_k=4, eval_samples=4, engine="ours", seed=0)
    >>> "+0.300" in format_report(r, c)
    True
    """
    k = config.eval_k
    lines = [
        f"RLVR Lab training report (engine {config.engine}, seed {config.seed})",
        f"held-out tasks: {result.after.get('tasks', result.before.get('tasks'))}, "
        f"{config.eval_samples} samples each, 95% CI over tasks",
        f"  pass@1 warm start: {_fmt(result.before, k)}",
        f"  pass@1 after GRPO: {_fmt(result.after, k)}",
        f"  change: {result.gain:+.3f}",
        f"wall time: {result.wall_s:.1f} s for {result.steps} GRPO steps, {result.rollouts} training rollouts",
        "where the time went:",
    ]
    total = sum(result.timing.values()) or 1.0
    for name, secs in sorted(result.timing.items(), key=lambda kv: -kv[1]):
        lines.append(f"  {name:<11} {secs:8.1f} s  {100 * secs / total:5.1f} %")
    lines.append(
        "  (verify counts only the time spent waiting for verdicts; the verifier pool works while the "
        "trainer samples, scores and updates"
        + (", and overlap updates on the previous batch meanwhile)" if getattr(config, "overlap", False) else ")")
    )
    lines.append(f"output: {result.out_dir}")
    return "\n".join(lines)


def write_report(result, config, grader=None) -> str:
    """Write ``report.md``, ``summary.json`` and (when ``config.plots``) the plots; returns the report text."""
    text = format_report(result, config)
    if grader is not None:
        text += (
            f"\nverifier: {grader.submitted} submissions, {grader.cache_hits} cached verdict reuses, "
            f"{grader.seconds:.1f} s waiting"
        )
    with open(os.path.join(result.out_dir, "report.md"), "w", encoding="utf-8") as fh:
        fh.write(text + "\n")
    summary = {
        "before": result.before,
        "after": result.after,
        "gain": result.gain,
        "wall_s": result.wall_s,
        "timing": result.timing,
        "steps": result.steps,
        "rollouts": result.rollouts,
        "config": config.to_dict(),
    }
    with open(os.path.join(result.out_dir, "summary.json"), "w", encoding="utf-8") as fh:
        json.dump(summary, fh, indent=2, sort_keys=True, default=str)
    if config.plots and result.metrics:
        plot_metrics(result.metrics, os.path.join(result.out_dir, "plots"), before=result.before)
    return text


def plot_metrics(rows: list[dict], out_dir: str, before: dict | None = None) -> list[str]:
    """One PNG per diagnostic that the rows carry; returns the written paths.

    ``before`` (the warm start's held-out evaluation) becomes the first point of the held-out panel, at
    step -1, with its 95 % interval; later evaluations carry their intervals too.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(out_dir, exist_ok=True)
    panels = [
        ("reward_mean", "mean training reward"),
        ("heldout_pass1", "held-out pass@1"),
        ("entropy", "token entropy (nats)"),
        ("kl_mean", "mean k3 KL to reference"),
        ("clip_fraction", "clip fraction"),
        ("groups_contrast", "groups with contrast"),
        ("verifier_share", "verifier share of step time"),
    ]
    written = []
    for key, title in panels:
        pts = [(r["step"], r[key]) for r in rows if isinstance(r.get(key), (int, float)) and not math.isnan(r[key])]
        if not pts:
            continue
        fig, ax = plt.subplots(figsize=(4.5, 3))
        if key == "heldout_pass1":
            evals = ([(-1, before)] if before else []) + [
                (r["step"], {k[len("heldout_") :]: v for k, v in r.items() if k.startswith("heldout_")})
                for r in rows
                if "heldout_pass1" in r
            ]
            xs = [s for s, _ in evals]
            ys = [e["pass1"] for _, e in evals]
            lo = [e["pass1"] - e.get("pass1_lo", e["pass1"]) for _, e in evals]
            hi = [e.get("pass1_hi", e["pass1"]) - e["pass1"] for _, e in evals]
            ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", capsize=3)
            ax.set_ylim(bottom=0)
        else:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o" if len(pts) < 30 else None)
        ax.set_xlabel("GRPO step (-1: warm start)" if key == "heldout_pass1" else "GRPO step")
        ax.set_title(title)
        fig.tight_layout()
        path = os.path.join(out_dir, f"{key}.png")
        fig.savefig(path, dpi=100)
        plt.close(fig)
        written.append(path)
    return written
