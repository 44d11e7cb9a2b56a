"""The ``rlvr-lab`` command.

Each subcommand lives beside the concept it drives and exposes ``register(subparsers)``,
which adds its parser and sets ``func`` (called with the parsed arguments, returning an exit code).
Modules are imported only when their command is listed, so ``rlvr-lab --help`` stays fast
and the numpy-only commands never import torch.
"""

from __future__ import annotations

import argparse
import importlib
import sys

#: (module, what it provides). A module that is not importable (an optional extra missing)
#: is reported by ``rlvr-lab --help`` instead of breaking the other commands.
COMMAND_MODULES = [
    ("rlvr_lab.demo", "demo: the chapter's worked numbers"),
    ("rlvr_lab.verifier.cli", "verify, calibrate"),
    ("rlvr_lab.train.cli", "train"),
    ("rlvr_lab.grading", "grade"),
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rlvr-lab",
        description="RLVR Lab: reinforcement learning with verifiable rewards, the course library.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    missing = []
    for module_name, provides in COMMAND_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:  # an optional extra is not installed
            missing.append(f"{provides} ({module_name}: {exc})")
            continue
        module.register(subparsers)
    if missing:
        parser.epilog = "unavailable commands: " + "; ".join(missing)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help()
        return 0
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
