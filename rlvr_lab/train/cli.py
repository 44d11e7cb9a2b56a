"""``rlvr-lab train``: the README's main command (sections 17.5, 17.10).

``rlvr-lab train [--preset ci|cpu|gpu] [--FIELD VALUE ...]`` runs the warm start, GRPO and the held-out
evaluation, then prints the report. Without ``--preset`` the preset is ``gpu`` when CUDA is present and
``cpu`` otherwise. Every field of :class:`~rlvr_lab.train.TrainConfig` is a flag of the same name
(``group_size`` -> ``--group-size``; booleans as ``--overlap``/``--no-overlap``; tuples comma-separated),
its help is the field's docstring, and a flag left out keeps the preset's value. Three flags keep their
short historical names as aliases: ``--out`` (``out_dir``), ``--steps`` (``grpo_steps``) and
``--backend`` (``verifier_backend``); ``--ray-address`` also selects ``verifier_pool=ray``. Two flags are
not config fields: with ``--env repair``, ``--negative-weight`` and ``--lr-warmup-steps`` set the
:class:`~rlvr_lab.train.repair_loop.EpisodeUpdate` (default its ``TRAINER_UPDATE``).
torch is imported only inside :func:`run`.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import fields

from rlvr_lab.train.config import CHOICES, PRESETS, TrainConfig, field_docs

#: Historical short names kept beside the generated ``--field-name`` flags.
ALIASES = {"out_dir": ("--out",), "grpo_steps": ("--steps",), "verifier_backend": ("--backend",)}
#: Fields that stay Python-only (a free-form dict has no sensible flag).
NO_FLAG = ("extra",)


def _optional_int(text: str) -> int | None:
    """argparse type of ``int | None`` fields: a whole number, or ``none``."""
    return None if text.strip().lower() == "none" else int(text)


def _names(text: str) -> tuple[str, ...]:
    """argparse type of ``tuple[str, ...]`` fields: comma-separated names."""
    names = tuple(part.strip() for part in text.split(",") if part.strip())
    if not names:
        raise argparse.ArgumentTypeError("needs at least one comma-separated name")
    return names


def _stop_strings(text: str) -> tuple[str, ...]:
    r"""argparse type of ``--stop-strings``: comma-separated, Python escapes decoded, nothing stripped.

    >>> _stop_strings(r"\ndef ,\nclass ")
    ('\ndef ', '\nclass ')
    """
    import codecs

    return tuple(codecs.decode(part, "unicode_escape") for part in text.split(",") if part)


def _ray_address(text: str) -> str:
    """argparse type of ``--ray-address``: a non-empty cluster address."""
    if not text.strip():
        raise argparse.ArgumentTypeError("must name a cluster: 'auto', host:port or ray://host:port")
    return text.strip()


#: argparse ``type`` per annotation of a TrainConfig field (as written in its source).
TYPES = {"int": int, "float": float, "str": str, "int | None": _optional_int, "tuple[str, ...]": _names}


def plain(text: str) -> str:
    """A docstring as terminal text: reST roles and double backquotes removed.

    >>> plain("Size name of :data:`rlvr_lab.policy.MODEL_SIZES`: ``tiny`` or ``small``.")
    'Size name of rlvr_lab.policy.MODEL_SIZES: tiny or small.'
    """
    return re.sub(r":\w+:`~?([^`]+)`", r"\1", text).replace("``", "")


def _preset_values(name: str, presets: dict[str, TrainConfig]) -> str:
    """The field's value in each preset, for the help text: one value when they agree."""
    values = [getattr(presets[p], name) for p in PRESETS]
    shown = [",".join(v) if isinstance(v, tuple) else repr(v) if isinstance(v, str) else str(v) for v in values]
    if len(set(shown)) == 1:
        return f"default {shown[0]}"
    return "default " + ", ".join(f"{p} {v}" for p, v in zip(PRESETS, shown))


def add_config_flags(parser: argparse.ArgumentParser) -> None:
    """One flag per TrainConfig field, help from the field docstrings. A flag left out is absent from the
    parsed namespace (``argparse.SUPPRESS``), so the preset decides, and ``--heldout-tasks none`` can still
    set a field to None."""
    docs = field_docs()
    presets = {p: TrainConfig.preset(p) for p in PRESETS}
    for f in fields(TrainConfig):
        if f.name in NO_FLAG:
            continue
        flags = (f"--{f.name.replace('_', '-')}", *ALIASES.get(f.name, ()))
        text = f"{plain(docs[f.name])} [{_preset_values(f.name, presets)}]".replace("%", "%%")
        if f.type == "bool":
            parser.add_argument(
                *flags, dest=f.name, action=argparse.BooleanOptionalAction, default=argparse.SUPPRESS, help=text
            )
            continue
        if f.type not in TYPES:
            raise TypeError(f"TrainConfig.{f.name}: no command-line type for {f.type!r}")
        kind = {"ray_address": _ray_address, "stop_strings": _stop_strings}.get(f.name, TYPES[f.type])
        parser.add_argument(
            *flags,
            dest=f.name,
            type=kind,
            default=argparse.SUPPRESS,
            choices=CHOICES.get(f.name),
            metavar=None if f.name in CHOICES else f.name.upper(),
            help=text,
        )


def register(subparsers) -> None:
    """Add the ``train`` subcommand."""
    p = subparsers.add_parser(
        "train",
        help="train the tiny code model with GRPO against the verifier",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--preset",
        choices=PRESETS,
        default=None,
        help="configuration preset (default: gpu when CUDA is available, else cpu)",
    )
    add_config_flags(p)
    p.add_argument(
        "--negative-weight",
        type=float,
        default=None,
        help="with --env repair: factor on the failures' negative advantages, 0-1 (1 is eq 2's update) [default 1]",
    )
    p.add_argument(
        "--lr-warmup-steps",
        type=int,
        default=None,
        help="with --env repair: steps of a linear learning-rate warmup (0: none) [default 0]",
    )
    p.set_defaults(func=run)


def episode_update(args: argparse.Namespace):
    """The repair run's :class:`~rlvr_lab.train.repair_loop.EpisodeUpdate`: ``TRAINER_UPDATE`` with the two
    flags that were given (ValueError when one is out of range)."""
    from dataclasses import replace

    from rlvr_lab.train.repair_loop import TRAINER_UPDATE

    given = {
        k: v
        for k, v in (("negative_weight", args.negative_weight), ("lr_warmup_steps", args.lr_warmup_steps))
        if v is not None
    }
    return replace(TRAINER_UPDATE, **given)


def config_from_args(args: argparse.Namespace, preset: str) -> TrainConfig:
    """The preset with every flag that was given applied (ValueError names a field with a bad value)."""
    given = vars(args)
    overrides = {f.name: given[f.name] for f in fields(TrainConfig) if f.name in given}
    if overrides.get("ray_address"):
        overrides["verifier_pool"] = "ray"
    return TrainConfig.preset(preset, **overrides)


def run(args) -> int:
    """Build the config from the arguments, train, print the report; returns the exit code."""
    from rlvr_lab.train import train
    from rlvr_lab.train.config import default_preset
    from rlvr_lab.train.finished import finished_result
    from rlvr_lab.train.report import format_report

    preset = args.preset or default_preset()
    try:
        config = config_from_args(args, preset)
        update = episode_update(args)
        if config.env != "repair" and (args.negative_weight is not None or args.lr_warmup_steps is not None):
            raise ValueError("--negative-weight and --lr-warmup-steps apply to --env repair only")
    except ValueError as exc:  # a value out of range: the field's name and its range, no traceback
        print(f"rlvr-lab train: error: {exc}", file=sys.stderr)
        return 2
    if config.env == "repair":
        from rlvr_lab.train.repair_loop import format_summary, train_repair

        print(format_summary(train_repair(config, update=update)))
        return 0
    result = finished_result(config)
    if result is not None:
        print(
            f"{config.out_dir} already holds this run, finished ({config.grpo_steps} GRPO steps): its report "
            "follows. Delete that folder, or pass --out, to train again."
        )
    else:
        result = train(config)
    print(format_report(result, config))
    return 0
