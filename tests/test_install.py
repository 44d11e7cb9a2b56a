"""The course as a reader gets it: the Colab install cell, and the wheel in a fresh venv outside the checkout.

Fast checks: every notebook a reader may open in Colab (chapters, labs, exercise notebooks) starts with
the same install cell, written from :mod:`rlvr_lab.colab`; the labs' jupytext pairs, the exercise
generator and the rewrite script agree with the committed notebooks, and the script catches a lab whose
``.py`` drifts; the repository URL agrees with ``_config.yml``; the cell passes the exercise grader's
tampering scan.

The rehearsal (slow, one venv for all of it): build the wheel from this tree, make a fresh venv under
/tmp as an ordinary user (``rlvr-student`` via ``setpriv`` when the suite runs as root) with ``HOME`` and
the working directory outside the repository, put torch in it first (Colab ships torch), then run the
install cell itself with ``RLVR_LAB_SOURCE`` set to the wheel (its Colab branch, through
``tests/notebook_exec.py --colab``). In that venv: the library's doctests, ``rlvr-lab verify`` on
pool_repair_01's good and bad references (pass, fail), lab 1 to the end on the ci preset, and the first
cells of every other lab. The install's time and size are printed (``-s``) for the notes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rlvr_lab import colab

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent
STUDENT = "rlvr-student"
#: Doctests that read the instructors' answer key from a checkout (labs/exercises/solutions): the key is
#: course material for instructors and deliberately not shipped in the wheel.
CHECKOUT_ONLY_DOCTESTS = ("rlvr_lab.grading.key_check_cells", "rlvr_lab.grading.admission.load_key")


def _source(cell: dict) -> str:
    return "".join(cell["source"])


def test_every_notebook_starts_with_the_same_install_cell():
    paths = colab.notebooks(ROOT)
    assert len(paths) >= 10 + 5 + 16, [str(p) for p in paths]
    for path in paths:
        first = json.loads(path.read_text(encoding="utf-8"))["cells"][0]
        assert first["cell_type"] == "code" and first["id"] == colab.CELL_ID, path
        assert _source(first) == colab.install_cell(), f"{path}: run python scripts/install_cells.py"


def test_generator_pairs_and_script_agree_with_the_committed_notebooks(tmp_path):
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts/install_cells.py"), "--check"], capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode == 0, done.stdout + done.stderr
    import jupytext

    labs = sorted(ROOT.glob("labs/lab[0-9]_*.py"))  # the labs' source of truth: their jupytext twins
    assert len(labs) == 5
    for pair in labs:
        first = jupytext.read(pair).cells[0]
        assert first.cell_type == "code" and first.source == colab.install_cell(), (
            f"{pair}: run python scripts/install_cells.py"
        )
        assert first.metadata.get("tags") == colab.cell_json()["metadata"]["tags"], pair
        cell = json.loads(pair.with_suffix(".ipynb").read_text(encoding="utf-8"))["cells"][0]
        assert {**cell, "source": _source(cell)} == colab.cell_json(), pair.with_suffix(".ipynb")
    sys.path.insert(0, str(ROOT / "labs/exercises"))
    try:
        import build_notebooks
    finally:
        sys.path.pop(0)
    nb = build_notebooks.notebook(build_notebooks.EXERCISES[0], solution=False)
    assert "google.colab" not in json.dumps(nb["cells"][0])  # the builder adds the install cell in write_all
    written = build_notebooks.write_all(str(tmp_path))
    for path in written:
        assert json.loads(Path(path).read_text())["cells"][0] == colab.cell_json(), path


def test_the_script_catches_a_lab_whose_install_cell_drifts(tmp_path):
    """A lab's .py edited by hand in its install cell: ``install_cells.py --check`` fails and names it."""
    copy = tmp_path / "repo"
    shutil.copytree(ROOT / "scripts", copy / "scripts")
    (copy / "rlvr_lab").mkdir()
    for name in ("__init__.py", "colab.py"):  # all the script imports
        shutil.copy2(ROOT / "rlvr_lab" / name, copy / "rlvr_lab" / name)
    (copy / "labs").mkdir()
    lab = "lab3_noisy_rewards"
    for suffix in (".ipynb", ".py"):
        shutil.copy2(ROOT / "labs" / (lab + suffix), copy / "labs" / (lab + suffix))
    check = [sys.executable, str(copy / "scripts/install_cells.py"), "--check"]
    assert subprocess.run(check, capture_output=True, text=True, cwd=copy).returncode == 0
    pair = copy / "labs" / (lab + ".py")
    pair.write_text(pair.read_text().replace("-q", "-qq", 1))
    done = subprocess.run(check, capture_output=True, text=True, cwd=copy)
    assert done.returncode == 1 and f"labs/{lab}" in done.stdout, done.stdout + done.stderr


def test_repository_url_lives_in_one_place():
    config = (ROOT / "_config.yml").read_text()
    assert re.search(r"^repository:\n  url: (\S+)$", config, re.M).group(1) == colab.REPOSITORY
    cell = colab.install_cell()
    assert cell.count(colab.SOURCE) == 1 and "[runtime]" in cell
    for path in colab.notebooks(ROOT):  # no other notebook cell pins a source of its own
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"][1:]
        assert not any("pip install" in _source(c) for c in cells if c["cell_type"] == "code"), path


def test_install_cell_is_not_tampering_for_the_grader():
    from rlvr_lab.grading.admission import static_notes

    assert static_notes([(0, colab.install_cell())]) == []


def test_runtime_extra_is_light_and_pins_the_runner_pytest():
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    runtime = " ".join(extras["runtime"])
    for heavy in ("jupyter-book", "sphinx", "nbval", "selenium", "hypothesis", "trl"):
        assert heavy not in runtime
    pin = next(r for r in extras["runtime"] if r.startswith("pytest"))
    assert pytest.__version__.rsplit(".", 1)[0] in pin, f"{pin} does not cover the tested pytest {pytest.__version__}"
    assert "ipywidgets>=7.6" in runtime


# -- the rehearsal in a fresh venv -------------------------------------------------------------------
def _as_user(tmp_path_factory) -> tuple[list[str], str]:
    """(argv prefix that runs a command as an ordinary user, a Python that user may run)."""
    if os.geteuid() != 0:
        return [], os.path.realpath(getattr(sys, "_base_executable", sys.executable))
    if shutil.which("setpriv") is None or shutil.which("useradd") is None:
        pytest.skip("running as root without setpriv/useradd: cannot rehearse as an ordinary user")
    if subprocess.run(["id", STUDENT], capture_output=True).returncode != 0:
        subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", STUDENT], check=True)
    uid = subprocess.run(["id", "-u", STUDENT], capture_output=True, text=True).stdout.strip()
    gid = subprocess.run(["id", "-g", STUDENT], capture_output=True, text=True).stdout.strip()
    # the system's Python, as on a laptop (this suite's interpreter may live under root's home)
    python = shutil.which("python3", path="/usr/bin:/bin") or pytest.skip("no /usr/bin/python3 for the test user")
    return ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups"], python


def _pip_settings() -> dict[str, str]:
    """This suite's pip settings (an index mirror, a wheel folder) as ``PIP_*`` variables for the rehearsal.

    The rehearsal runs with a ``HOME`` of its own, so a pip.conf in the caller's home, or in this venv
    (where scripts/setup.sh records the ``PIP_*`` variables it was run with), would be invisible to it;
    ``pip config list`` gives them all, the environment's own ``PIP_*`` variables winning.
    """
    done = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True)
    out = {}
    for line in done.stdout.splitlines():
        match = re.fullmatch(r"(global|install|:env:)\.([\w-]+)='(.*)'", line)
        if match:
            out["PIP_" + match.group(2).upper().replace("-", "_")] = match.group(3)
    out.update({k: v for k, v in os.environ.items() if k.startswith("PIP_")})
    return out


class Rehearsal:
    def __init__(self, prefix: list[str], base: Path, env: dict[str, str]):
        self.prefix, self.base, self.env = prefix, base, env
        self.python = str(base / "venv/bin/python")
        self.scratch = base / "scratch"

    def run(self, *argv: str, timeout: float = 900, **env: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            self.prefix + list(argv),
            capture_output=True,
            text=True,
            cwd=self.scratch,
            env={**self.env, **env},
            timeout=timeout,
        )


@pytest.fixture(scope="module")
def rehearsal(tmp_path_factory):
    prefix, python = _as_user(tmp_path_factory)
    base = Path(f"/tmp/rlvr-rehearsal-{os.getpid()}")
    shutil.rmtree(base, ignore_errors=True)
    (base / "home").mkdir(parents=True)
    (base / "scratch").mkdir()
    (base / "src").mkdir()
    (base / "tmp").mkdir()
    # the wheel, from a copy of this tree's tracked and new files (the build leaves nothing in the checkout)
    files = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split("\n")
    for name in filter(None, files):
        if (ROOT / name).is_file():
            (base / "src" / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, base / "src" / name)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(base / "dist"),
            str(base / "src"),
        ],
        check=True,
        capture_output=True,
    )
    wheel = next((base / "dist").glob("rlvr_lab-*.whl"))
    if prefix:
        subprocess.run(["chown", "-R", prefix[1].split("=")[1] + ":" + prefix[2].split("=")[1], str(base)], check=True)
    env = {
        "PATH": f"{base}/venv/bin:/usr/bin:/bin",
        "HOME": str(base / "home"),
        "LANG": "C.UTF-8",
        "TMPDIR": str(base / "tmp"),
        "RLVR_LAB_PRESET": "ci",
        "MPLBACKEND": "Agg",
    }
    env.update(_pip_settings())
    r = Rehearsal(prefix, base, env)
    done = r.run(python, "-m", "venv", str(base / "venv"))
    assert done.returncode == 0, done.stderr
    import torch  # Colab ships torch: the rehearsal's venv gets the same version first

    t0 = time.monotonic()
    done = r.run(str(base / "venv/bin/pip"), "install", "-q", f"torch=={torch.__version__}")
    assert done.returncode == 0, (
        f"pip found no torch {torch.__version__} (the build this suite runs on) with the "
        f"settings {_pip_settings()}; a local build such as +cpu needs the wheel folder "
        f"or index it came from (scripts/setup.sh records it in .venv/pip.conf)\n" + done.stderr[-2000:]
    )
    torch_s, size_before = time.monotonic() - t0, _du(base / "venv")
    t0 = time.monotonic()
    done = r.run(
        r.python,
        str(HERE / "notebook_exec.py"),
        str(ROOT / "labs/lab1_grpo_training.ipynb"),
        "--cells",
        "1",
        "--colab",
        RLVR_LAB_SOURCE=str(wheel),
    )
    assert done.returncode == 0, done.stdout[-1000:] + done.stderr[-2000:]
    r.install_s, r.install_mb = time.monotonic() - t0, (_du(base / "venv") - size_before) / 2**20
    print(
        f"\nrehearsal: torch {torch_s:.0f} s; install cell {r.install_s:.0f} s, +{r.install_mb:.0f} MiB "
        f"(venv {_du(base / 'venv') / 2**20:.0f} MiB); load {os.getloadavg()[0]:.1f}"
    )
    yield r
    shutil.rmtree(base, ignore_errors=True)


def _du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


@pytest.mark.slow
def test_installed_package_passes_its_doctests_outside_the_checkout(rehearsal):
    site = rehearsal.run(rehearsal.python, "-c", "import rlvr_lab, os; print(os.path.dirname(rlvr_lab.__file__))")
    package = site.stdout.strip()
    assert package.startswith(str(rehearsal.base)) and not package.startswith(str(ROOT)), package
    deselect = " and ".join(f"not {name.rsplit('.', 1)[1]}" for name in CHECKOUT_ONLY_DOCTESTS)
    done = rehearsal.run(
        rehearsal.python,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "--doctest-modules",
        "--collect-in-virtualenv",
        f"--ignore={package}/fixtures",
        "-k",
        deselect,
        package,
    )
    assert done.returncode == 0, done.stdout[-3000:]
    assert re.search(r"\b(\d{3}) passed", done.stdout), done.stdout[-500:]


@pytest.mark.slow
def test_installed_cli_verifies_the_references(rehearsal):
    package = Path(
        rehearsal.run(rehearsal.python, "-c", "import rlvr_lab.fixtures as f; print(f.__path__[0])").stdout.strip()
    )
    cli = str(rehearsal.base / "venv/bin/rlvr-lab")
    good = rehearsal.run(cli, "verify", str(package / "pool_repair_01/reference/good"), "--fixture", "pool_repair_01")
    bad = rehearsal.run(
        cli, "verify", str(package / "pool_repair_01/reference/bad_unlocked_notify"), "--fixture", "pool_repair_01"
    )
    assert good.returncode == 0 and "verdict: pass" in good.stdout, good.stdout + good.stderr
    assert bad.returncode == 1 and "verdict: fail" in bad.stdout, bad.stdout + bad.stderr
    assert good.stderr.count("rlvr-lab verifier: backend auto -> ") == 1
    if rehearsal.prefix or os.geteuid() != 0:  # an ordinary user: never the root backend
        assert "backend: local\n" not in good.stdout and "slot-uid" not in good.stdout


@pytest.mark.slow
def test_lab1_runs_to_the_end_from_the_wheel(rehearsal):
    done = rehearsal.run(rehearsal.python, str(HERE / "notebook_exec.py"), str(ROOT / "labs/lab1_grpo_training.ipynb"))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert "preset: ci" in done.stdout and "trained 3 GRPO steps" in done.stdout


@pytest.mark.slow
@pytest.mark.parametrize(
    "lab", ["lab2_verifier_red_team", "lab3_noisy_rewards", "lab4_reward_hacking", "lab5_pathologies"]
)
def test_each_lab_starts_on_a_fresh_install(rehearsal, lab):
    """The install cell (Colab branch: already installed, so pip has nothing to do), the lab's set-up cell
    and the next code cell run as the ordinary user, from a scratch directory, on the ci preset."""
    done = rehearsal.run(
        rehearsal.python,
        str(HERE / "notebook_exec.py"),
        str(ROOT / f"labs/{lab}.ipynb"),
        "--cells",
        "3",
        "--colab",
        RLVR_LAB_SOURCE=str(next((rehearsal.base / "dist").glob("*.whl"))),
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert "cell 2 ok" in done.stdout and "preset: ci" in done.stdout
