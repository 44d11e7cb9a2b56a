import subprocess
import sys


def test_cli_help_runs():
    out = subprocess.run([sys.executable, "-m", "rlvr_lab", "--help"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "rlvr-lab" in out.stdout
