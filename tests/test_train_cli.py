"""``rlvr-lab train`` flags come from TrainConfig: one flag per field, help from the field's docstring."""

import argparse
from dataclasses import fields

import pytest

from rlvr_lab.train import TrainConfig
from rlvr_lab.train.cli import NO_FLAG, config_from_args, plain, register
from rlvr_lab.train.config import field_docs


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="rlvr-lab")
    register(top.add_subparsers(dest="command"))
    return top


def parse(*argv: str) -> TrainConfig:
    args = parser().parse_args(["train", *argv])
    return config_from_args(args, args.preset or "cpu")


def test_every_field_is_documented_and_has_a_flag_with_its_docstring_as_help():
    docs = field_docs()
    assert set(docs) == {f.name for f in fields(TrainConfig)}
    assert all(len(text) > 10 for text in docs.values())
    train_parser = parser()._subparsers._group_actions[0].choices["train"]
    by_dest = {a.dest: a for a in train_parser._actions}
    for f in fields(TrainConfig):
        if f.name in NO_FLAG:
            assert f.name not in by_dest
            continue
        action = by_dest[f.name]
        assert f"--{f.name.replace('_', '-')}" in action.option_strings
        assert action.help.startswith(plain(docs[f.name]).replace("%", "%%"))


def test_flags_override_the_preset_and_nothing_else():
    config = parse(
        "--preset",
        "ci",
        "--group-size",
        "6",
        "--eps-high",
        "0.3",
        "--families",
        "arith, affine",
        "--no-overlap",
        "--heldout-tasks",
        "none",
        "--out",
        "/tmp/x",
        "--steps",
        "2",
        "--backend",
        "process",
        "--multi-turn",
        "--norm",
        "sequence",
    )
    expected = TrainConfig.preset(
        "ci",
        group_size=6,
        eps_high=0.3,
        families=("arith", "affine"),
        overlap=False,
        heldout_tasks=None,
        out_dir="/tmp/x",
        grpo_steps=2,
        verifier_backend="process",
        multi_turn=True,
        norm="sequence",
    )
    assert config == expected
    assert parse("--preset", "gpu") == TrainConfig.preset("gpu")
    assert parse("--preset", "ci", "--ray-address", "auto").verifier_pool == "ray"


@pytest.mark.parametrize(
    "argv",
    [
        ["--group-size", "x"],
        ["--norm", "tokens"],
        ["--families", ","],
        ["--ray-address", " "],
        ["--verifier-backend", "chroot"],
    ],
)
def test_malformed_flags_are_usage_errors(argv, capsys):
    with pytest.raises(SystemExit) as stop:
        parse("--preset", "ci", *argv)
    assert stop.value.code == 2
    assert "error" in capsys.readouterr().err


def test_out_of_range_values_name_the_field():
    with pytest.raises(ValueError, match=r"^group_size must be >= 2"):
        parse("--preset", "ci", "--group-size", "1")
    with pytest.raises(ValueError, match=r"^eps_high must be >= eps_low"):
        parse("--preset", "ci", "--eps-low", "0.3", "--eps-high", "0.2")


def test_an_out_of_range_value_on_the_command_line_exits_2_naming_the_field(capsys):
    from rlvr_lab.cli import main

    assert main(["train", "--preset", "ci", "--group-size", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rlvr-lab train: error: group_size must be >= 2") and "Traceback" not in err
    assert main(["train", "--preset", "ci", "--engine", "trl", "--eval-every", "3"]) == 2
    assert "eval_every is not used by engine='trl'" in capsys.readouterr().err
