"""``rlvr-lab train``: the README's main command (sections 17.5, 17.10).

``rlvr-lab train --preset cpu|gpu|ci [--engine ours|trl] [--model PATH_OR_HUB_ID] [--seed N] [--out DIR]``
runs the warm start, GRPO and the held-out evaluation, then prints the report. Without ``--preset`` the
preset is ``gpu`` when CUDA is present and ``cpu`` otherwise. torch is imported only inside :func:`run`.
"""

from __future__ import annotations

import argparse


def register(subparsers) -> None:
    """Add the ``train`` subcommand."""
    p = subparsers.add_parser("train", help="train the tiny code model with GRPO against the verifier",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--preset", choices=["ci", "cpu", "gpu"], default=None,
                   help="configuration preset (default: gpu when CUDA is available, else cpu)")
    p.add_argument("--engine", choices=["ours", "trl"], default="ours", help="GRPO implementation")
    p.add_argument("--model", default="", help="local path or hub id of a causal LM (default: build tiny)")
    p.add_argument("--seed", type=int, default=None, help="run seed")
    p.add_argument("--out", default=None, help="output directory (records, metrics, checkpoints, report)")
    p.add_argument("--steps", type=int, default=None, help="GRPO steps (overrides the preset)")
    p.add_argument("--multi-turn", action="store_true", help="second turn with public-test feedback")
    p.add_argument("--norm", choices=["sequence", "constant"], default=None, help="length normalisation")
    p.add_argument("--backend", choices=["auto", "local", "process", "docker"], default=None,
                   help="verifier backend (default auto: local namespaces where they work, else process)")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.set_defaults(func=run)


def run(args) -> int:
    """Build the config from the arguments, train, print the report; returns the exit code."""
    import torch

    from rlvr_lab.train import TrainConfig, train
    from rlvr_lab.train.report import format_report

    preset = args.preset or ("gpu" if torch.cuda.is_available() else "cpu")
    overrides = {"engine": args.engine}
    if args.model:
        overrides["model"] = args.model
    if args.seed is not None:
        overrides["seed"] = args.seed
    if args.out:
        overrides["out_dir"] = args.out
    if args.steps is not None:
        overrides["grpo_steps"] = args.steps
    if args.multi_turn:
        overrides["multi_turn"] = True
    if args.norm:
        overrides["norm"] = args.norm
    if args.backend:
        overrides["verifier_backend"] = args.backend
    if args.no_progress:
        overrides["progress"] = False
    config = TrainConfig.preset(preset, **overrides)
    result = train(config)
    print(format_report(result, config))
    return 0
