import subprocess
import sys


def test_cli_help_runs():
    out = subprocess.run([sys.executable, "-m", "rlvr_lab", "--help"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "rlvr-lab" in out.stdout


def test_a_missing_optional_extra_makes_its_command_unavailable(monkeypatch, tmp_path):
    from rlvr_lab import cli

    (tmp_path / "needs_ray_cmd.py").write_text("import ray  # noqa: F401\n\ndef register(subparsers):\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ModuleNotFoundError, as without the extra
    monkeypatch.setattr(cli, "COMMAND_MODULES", cli.COMMAND_MODULES + [("needs_ray_cmd", "fleet")])
    parser = cli.build_parser()
    assert "unavailable commands: fleet (needs_ray_cmd:" in parser.epilog
    assert cli.main(["demo"]) == 0  # the other commands still work


def test_a_real_import_bug_in_a_command_is_raised_not_hidden(monkeypatch, tmp_path):
    import pytest

    from rlvr_lab import cli

    (tmp_path / "buggy_cmd.py").write_text("from rlvr_lab.grpo import no_such_function  # noqa: F401\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(cli, "COMMAND_MODULES", cli.COMMAND_MODULES + [("buggy_cmd", "buggy")])
    with pytest.raises(ImportError, match="no_such_function"):
        cli.build_parser()
