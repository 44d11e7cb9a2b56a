"""The prepared GPU check (issue 23): run it whenever a CUDA machine is at hand; under 5 minutes there.

    python scripts/gpu_check.py             # on a CUDA machine (fails without one)
    python scripts/gpu_check.py --smoke     # the same checks shrunk, on the CPU (bfloat16 autocast)

Three checks, each printed as one line and none allowed to fail:

1. ``gpu`` preset for a few GRPO steps (the course's model from scratch, dtype auto);
2. ``t4`` preset (LoRA, float16 with loss scaling on a frozen float16 base, chat template, MBPP format) on a
   locally saved random-weight Qwen2 stand-in (``rlvr_lab.train.stand_in``; nothing is downloaded), twice
   on a GPU: dtype auto (bfloat16 where the card has it) and float16 (the T4 path on any card);
3. the verifier pool beside them: the reference solutions of held-out tasks must pass, wrong ones fail.

Each line gives device, dtype, rollouts/s over the GRPO steps, the largest replay deviation and held-out
pass@1 before and after. The exit status is 1 if anything raised or a check failed, else 0.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLE = os.path.join(ROOT, "rlvr_lab", "fixtures", "mbpp", "sample.jsonl")


def run_preset(label: str, config) -> dict:
    """Train ``config``; the line's numbers."""
    from rlvr_lab.train import train
    from rlvr_lab.train.run import resolve_precision, resolve_device

    device = resolve_device(config.device)
    result = train(config)
    replays = [r["replay_max_dev"] for r in result.metrics if "replay_max_dev" in r]
    if not replays:
        raise RuntimeError(f"{label}: no update was replay-checked")
    return {
        "check": label,
        "device": str(device),
        "dtype": resolve_precision(config.dtype, device).dtype,
        "rollouts_per_s": result.rollouts / result.grpo_s if result.grpo_s else float("nan"),
        "replay_max_dev": max(replays),
        "pass1_before": result.before["pass1"],
        "pass1_after": result.after["pass1"],
        "wall_s": result.wall_s,
    }


def pool_check(workers: int, tasks: int) -> dict:
    """Reference solutions pass and broken ones fail on the verifier pool; verdicts per second."""
    from rlvr_lab.tasks import make_suite, split_tasks
    from rlvr_lab.verifier import VerifierPool

    chosen = split_tasks(make_suite(seed=0, problems_per_family=4), "heldout")[:tasks]
    with VerifierPool(workers=workers) as pool:
        t0 = time.perf_counter()
        good = [pool.submit(t.candidate(t.solution), t.fixture) for t in chosen]
        bad = [pool.submit(t.candidate("    return None\n"), t.fixture) for t in chosen]
        outcomes = [f.result(timeout=300).outcome for f in good], [f.result(timeout=300).outcome for f in bad]
        seconds = time.perf_counter() - t0
        backend = pool.backend
    if set(outcomes[0]) != {"pass"} or "pass" in outcomes[1]:
        raise RuntimeError(f"verifier pool: references {outcomes[0]}, broken {outcomes[1]}")
    return {
        "line": f"verifier pool ({backend}, {workers} workers): {len(chosen)}/{len(chosen)} references pass, "
        f"{len(chosen)}/{len(chosen)} broken fail, {2 * len(chosen) / seconds:.1f} verdicts/s"
    }


def checks(smoke: bool, out: str):
    """(label, zero-argument function) of every check, sized for a GPU or, with ``smoke``, for the CPU."""
    from rlvr_lab.tasks import make_suite
    from rlvr_lab.train import TrainConfig
    from rlvr_lab.train.stand_in import save_stand_in

    quiet = dict(progress=False, plots=False)
    if smoke:
        gpu = TrainConfig.preset(
            "gpu",
            out_dir=f"{out}/gpu",
            device="cpu",
            dtype="bfloat16",
            model_size="tiny",
            vocab_size=320,
            problems_per_family=6,
            sft_steps=20,
            sft_batch=16,
            grpo_steps=2,
            tasks_per_step=4,
            group_size=4,
            heldout_tasks=8,
            eval_samples=2,
            eval_k=2,
            eval_every=2,
            checkpoint_every=2,
            max_new_tokens=16,
            verifier_workers=2,
            **quiet,
        )
        stand_in = dict(hidden=64, layers=2)
        t4 = dict(
            device="cpu",
            grpo_steps=1,
            tasks_per_step=2,
            group_size=2,
            max_new_tokens=12,
            eval_samples=1,
            eval_k=1,
            verifier_workers=2,
            micro_batch=2,
        )
        dtypes = ("bfloat16",)
    else:
        gpu = TrainConfig.preset(
            "gpu",
            out_dir=f"{out}/gpu",
            sft_steps=100,
            grpo_steps=4,
            tasks_per_step=16,
            eval_every=4,
            checkpoint_every=4,
            heldout_tasks=48,
            **quiet,
        )
        stand_in = dict(hidden=256, layers=4)
        t4 = dict(
            grpo_steps=3,
            tasks_per_step=4,
            group_size=8,
            max_new_tokens=96,
            eval_samples=2,
            eval_k=2,
            verifier_workers=4,
        )
        dtypes = ("auto", "float16")
    corpus = [t.prompt + t.solution for t in make_suite(problems_per_family=8)] * 2
    model_dir = f"{out}/qwen2-stand-in"
    found = [("gpu preset", lambda: run_preset("gpu preset", gpu))]
    for dtype in dtypes:

        def one(dtype=dtype):
            if not os.path.exists(os.path.join(model_dir, "config.json")):
                save_stand_in(model_dir, corpus, family="qwen2", chat=True, dropout=0.1, **stand_in)
            config = TrainConfig.preset(
                "t4",
                model=model_dir,
                mbpp_source=SAMPLE,
                heldout_set="tasks",
                out_dir=f"{out}/t4-{dtype}",
                dtype=dtype,
                eval_every=t4["grpo_steps"],
                checkpoint_every=t4["grpo_steps"],
                **t4,
                **quiet,
            )
            return run_preset(f"t4 preset, local Qwen2, {dtype}", config)

        found.append((f"t4 preset ({dtype})", one))
    found.append(("verifier pool", lambda: pool_check(2 if smoke else 4, 8 if smoke else 24)))
    return found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="shrunk checks on the CPU (no CUDA needed)")
    parser.add_argument("--out", default=None, help="run folder (default: a fresh temporary one)")
    args = parser.parse_args(argv)
    import torch

    if not args.smoke and not torch.cuda.is_available():
        print("gpu_check: CUDA is not available; run with --smoke for the CPU version", file=sys.stderr)
        return 2
    out = args.out or tempfile.mkdtemp(prefix="rlvr-gpu-check-")
    name = torch.cuda.get_device_name(0) if torch.cuda.is_available() and not args.smoke else "cpu"
    print(f"gpu_check: {'smoke (CPU)' if args.smoke else 'CUDA'} on {name}, torch {torch.__version__}, out {out}")
    failed, t0 = 0, time.perf_counter()
    for label, check in checks(args.smoke, out):
        try:
            r = check()
        except Exception:
            failed += 1
            print(f"FAIL {label}\n{traceback.format_exc()}", flush=True)
            continue
        if "line" in r:
            print(f"ok   {r['line']}", flush=True)
            continue
        print(
            f"ok   {r['check']}: device {r['device']}, dtype {r['dtype']}, {r['rollouts_per_s']:.1f} rollouts/s, "
            f"replay_max_dev {r['replay_max_dev']:.2e}, pass@1 {r['pass1_before']:.3f} -> {r['pass1_after']:.3f}, "
            f"{r['wall_s']:.0f} s",
            flush=True,
        )
    print(f"gpu_check: {failed} failed, {time.perf_counter() - t0:.0f} s in all")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
