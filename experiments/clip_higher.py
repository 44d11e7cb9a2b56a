"""Entropy collapse under a symmetric clip, and clip-higher against it (sections 17.5.2, 17.8.3).

The regime, fixed before the recorded seeds (RESULTS.md): a warm start that hedges. A tiny model is
trained for 400 steps on the ``affine`` and ``branch`` families with every training task demonstrated by
its reference solution twice and by each of its near misses once (:func:`rlvr_lab.warm_starts.hedged_demos`),
so it spreads its first decisions over several bodies and passes about 40 % of the time. GRPO then trains
it for 30 steps of 8 tasks x G = 8 at learning rate 1e-3 with four optimizer passes per batch, twice per seed
from the same warm start: a symmetric clip (``eps_low = eps_high = 0.2``) and clip-higher
(``eps_high = 0.28``). Reported per run: token entropy (at step 0, which both arms share, and over the first
and last five steps) and its drop ``1 - last 5 / step 0``; action diversity, distinct completions per group
/ G over all groups (and over the groups with no pass); the share of tokens at the upper and at any clip
bound (averaged over passes and steps); the share *eligible* for the upper clip (positive advantage and
behaviour probability below ``1 / (1 + eps_high)``); training reward and held-out pass@1. Intervals are 95 %
t over seeds.

    PYTHONPATH=. nice -n 10 python experiments/clip_higher.py --seeds 0 1 2 3 4
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import ENGINE_CODE, fmt, machine, mean_ci, pass_mean, series, window, write_result  # noqa: E402

ARMS = {"symmetric": dict(eps_low=0.2, eps_high=0.2), "clip_higher": dict(eps_low=0.2, eps_high=0.28)}
REGIME = dict(
    families=("affine", "branch"),
    sft_families=("affine", "branch"),
    problems_per_family=6,
    model_size="tiny",
    sft_steps=400,
    sft_batch=16,
    sft_lr=1e-2,
    lr=1e-3,
    passes=4,
    grpo_steps=30,
    tasks_per_step=8,
    group_size=8,
    heldout_tasks=8,
    norm="sequence",
    overlap=False,
    eval_every=30,
    checkpoint_every=30,
)
CORRECT = 2
"""Copies of each reference solution in the hedged warm start (each near miss appears once)."""
CODE = ENGINE_CODE + ("rlvr_lab/warm_starts.py", "rlvr_lab/exploits.py", "experiments/clip_higher.py")
"""The code the numbers come from (fingerprinted with REGIME and the seeds)."""


def diversity(records) -> float:
    """Distinct completions per group / G, averaged over the groups of a step (action diversity)."""
    groups: dict = {}
    for r in records:
        groups.setdefault(r.group_id, []).append(r)
    return sum(len({r.completion_text for r in g}) / len(g) for g in groups.values()) / max(len(groups), 1)


def unsolved_diversity(records) -> float:
    """Distinct completions per rollout over the groups of a step with no pass (NaN if every group passed)."""
    groups: dict = {}
    for r in records:
        groups.setdefault(r.group_id, []).append(r)
    vals = [
        len({r.completion_text for r in g}) / len(g) for g in groups.values() if not any(r.verdict == "pass" for r in g)
    ]
    return sum(vals) / len(vals) if vals else float("nan")


def eligible_shares(records, eps_high: float) -> dict:
    """Of all policy tokens sampled in one run: the share with a positive advantage, and the share with a
    positive advantage *and* behaviour probability below 1 / (1 + eps_high) - the only tokens whose ratio
    can reach the upper clip at all (eq ch7-headroom: a token above that probability has p_max > 1)."""
    import math

    from rlvr_lab import grpo

    groups: dict = {}
    for r in records:
        groups.setdefault(r.group_id, []).append(r)
    total = positive = eligible = 0
    cut = math.log(1.0 / (1.0 + eps_high))
    for members in groups.values():
        if any(m.reward is None for m in members):
            continue
        adv = grpo.group_advantages([m.reward for m in members], eps=1e-8)
        for m, a in zip(members, adv):
            lps = [lp for inv in m.invocations for lp in inv.behaviour_logprobs]
            total += len(lps)
            if a > 0:
                positive += len(lps)
                eligible += sum(lp < cut for lp in lps)
    return {"positive": positive / max(total, 1), "eligible": eligible / max(total, 1), "tokens": total}


def warm_start(base, out: str) -> None:
    """The hedged warm start of :data:`REGIME`, saved to ``out`` as a policy directory."""
    import json

    from rlvr_lab.policy import build_model, save_policy, train_tokenizer
    from rlvr_lab.tasks import make_suite, split_tasks
    from rlvr_lab.train import sft
    from rlvr_lab.warm_starts import hedged_demos

    suite = make_suite(
        seed=base.seed,
        families=base.families,
        variants=base.variants,
        heldout_fraction=base.heldout_fraction,
        problems_per_family=base.problems_per_family,
    )
    demos = hedged_demos(split_tasks(suite, "train", base.sft_families), CORRECT, base.seed)
    tok = train_tokenizer([t.prompt + t.solution for t in suite if t.split == "train"], base.vocab_size)
    model = build_model(tok, base.model_size, seed=base.seed)
    sft(model, tok, demos, base.sft_steps, base.sft_batch, base.sft_lr, base.seed)
    save_policy(model, tok, out)
    with open(os.path.join(out, "lineage.json"), "w", encoding="utf-8") as fh:
        json.dump({"heldout": {"pass1": float("nan")}, "demos": len(demos)}, fh)


def run_seed(seed: int, out: str) -> dict:
    from rlvr_lab.records import read_records
    from rlvr_lab.train import TrainConfig, train

    base = TrainConfig.preset("cpu", seed=seed, progress=False, plots=False, **REGIME)
    shutil.rmtree(out, ignore_errors=True)
    warm = os.path.join(out, "warm")
    warm_start(base, warm)
    row = {"seed": seed}
    for arm, knobs in ARMS.items():
        d = os.path.join(out, arm)
        shutil.copytree(warm, os.path.join(d, "warmstart"))
        result = train(base.with_overrides(out_dir=d, **knobs))
        records = [r for r in read_records(os.path.join(d, "records.jsonl")) if r.step >= 0]
        by_step = [[r for r in records if r.step == s] for s in range(result.steps)]
        div = [diversity(rs) for rs in by_step]
        unsolved = [unsolved_diversity(rs) for rs in by_step]
        ent = series(result.metrics, "entropy")
        reward = series(result.metrics, "reward_mean")
        shares = eligible_shares(records, knobs["eps_high"])
        row[arm] = {
            "entropy": ent,
            "diversity": div,
            "unsolved_diversity": unsolved,
            "reward": reward,
            "entropy_step0": ent[0],
            "entropy_first": window(ent, True),
            "entropy_last": window(ent, False),
            "entropy_drop": 1.0 - window(ent, False) / ent[0],
            "diversity_step0": div[0],
            "diversity_first": window(div, True),
            "diversity_last": window(div, False),
            "unsolved_diversity_last": window(unsolved, False),
            "reward_first": window(reward, True),
            "reward_last": window(reward, False),
            "clip_high": sum(pass_mean(result.metrics, "clip_high_fraction", base.passes)) / result.steps,
            "clip_any": sum(pass_mean(result.metrics, "clip_fraction", base.passes)) / result.steps,
            "positive": sum(pass_mean(result.metrics, "positive_fraction", base.passes)) / result.steps,
            "pass1_after": result.after["pass1"],
            "wall_s": result.wall_s,
            "eligible": shares["eligible"],
            "positive_sampled": shares["positive"],
        }
        a = row[arm]
        a["clip_high_of_positive"] = a["clip_high"] / max(a["positive"], 1e-12)
        print(
            f"seed {seed} {arm}: entropy {a['entropy_step0']:.3f} -> {a['entropy_last']:.3f} (drop "
            f"{a['entropy_drop']:.2f}), diversity {a['diversity_step0']:.2f} -> {a['diversity_last']:.2f}, reward "
            f"{a['reward_first']:.2f} -> {a['reward_last']:.2f}, upper clip {a['clip_high']:.4f}, eligible "
            f"{a['eligible']:.4f}, any clip {a['clip_any']:.4f}, pass@1 {a['pass1_after']:.3f} ({result.wall_s:.0f} s)",
            flush=True,
        )
    return row


SUMMARY_KEYS = (
    "entropy_step0", "entropy_first", "entropy_last", "entropy_drop", "diversity_step0", "diversity_first",
    "diversity_last", "unsolved_diversity_last", "reward_first", "reward_last", "clip_high",
    "clip_high_of_positive", "clip_any", "eligible", "pass1_after",
)  # fmt: skip


def summarise(rows: list[dict]) -> dict:
    out = {}
    for key in SUMMARY_KEYS:
        out[key] = {arm: mean_ci([r[arm][key] for r in rows]) for arm in ARMS}
        out[key]["difference"] = mean_ci([r["clip_higher"][key] - r["symmetric"][key] for r in rows])
    return out


def main(argv=None) -> int:
    from rlvr_lab.claims import fingerprint

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--out", default="runs/exp_clip_higher")
    args = parser.parse_args(argv)
    t0 = time.time()
    rows = [run_seed(s, os.path.join(args.out, f"seed{s}")) for s in args.seeds]
    summary = summarise(rows)
    for key, by in summary.items():
        print(
            f"{key:15s} symmetric {fmt(by['symmetric'])}  clip-higher {fmt(by['clip_higher'])}  "
            f"difference {fmt(by['difference'])}"
        )
    write_result(
        "clip_higher",
        {
            "claim": "GRPO under a symmetric clip collapses entropy and action diversity; clip-higher "
            "measured against it (17.5.2, 17.8.3)",
            "command": "PYTHONPATH=. nice -n 10 python experiments/clip_higher.py --seeds "
            + " ".join(map(str, args.seeds)),
            "regime": REGIME,
            "arms": ARMS,
            "runs": rows,
            "summary": summary,
            "machine": machine(),
            "wall_s": time.time() - t0,
            "correct": CORRECT,
            "fingerprint": fingerprint(CODE, {"regime": REGIME, "correct": CORRECT, "seeds": args.seeds}),
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
