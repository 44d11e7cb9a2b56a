"""The code's format and lint rules (ruff, configured in pyproject.toml) hold on the whole tree.

The fast lane runs the same two commands (`make lint`); this test makes the full suite hold them too.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: What ruff checks: the project's Python, never files a run leaves in the checkout (pyproject.toml excludes
#: the chapters, the labs' notebook twins and the fixtures inside these).
PATHS = ["rlvr_lab", "tests", "benchmarks", "experiments", "scripts", "labs", "conftest.py"]


def ruff() -> str:
    found = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if found is None:
        pytest.fail("ruff is not installed: it is part of the test extra (pip install -e '.[test]')")
    return found


@pytest.mark.parametrize("command", [["format", "--check"], ["check"]], ids=["format", "lint"])
def test_ruff_passes_on_the_tree(command):
    done = subprocess.run([ruff(), *command, *PATHS], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_ruff_sees_a_violation(tmp_path):
    """The check can fail: an unused import in a file under the same configuration is reported."""
    bad = tmp_path / "bad.py"
    bad.write_text("import os\n")
    done = subprocess.run(
        [ruff(), "check", "--no-cache", "--config", str(ROOT / "pyproject.toml"), str(bad)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1 and "F401" in done.stdout
