"""A naive pytest harness, kept to show how verifiers fall (section 17.3.1, listing 1; section 17.7.1).

UNSAFE, FOR TEACHING ONLY. Never put :class:`NaiveVerifier` on a reward path and never point it at
candidates you do not trust on this machine: their code runs as *your* user, with *your* network,
files and processes. It exists so that the course can show each exploit of the gallery
(``rlvr_lab/fixtures/exploits``) being rewarded, next to :class:`rlvr_lab.verifier.Verifier` rejecting it.

It does what many real harnesses do, and every step is a hole a policy can climb through:

1. copy the fixture's source tree, its public tests *and the hidden tests* (under ``tests/``) into one
   directory, then the candidate's files over it, tests and configuration included;
2. load the project's ``.env`` file into the environment and put the tree on ``PYTHONPATH``;
3. run ``python -m pytest tests --junitxml=report.xml`` there, in a subprocess that inherits the
   environment and honours the tree's ``conftest.py``, ``pytest.ini``, ``pyproject.toml``,
   ``setup.cfg`` and ``sitecustomize.py``;
4. read the verdict from the report file when there is one (pass when it lists no failures and no
   errors, even if it lists no tests), else from the exit status (0 is a pass).

Its only guard is a wall-clock timeout that kills pytest's process group (a hang is a ``fail``), and it
refuses candidate paths that would be written outside its scratch directory. Processes that leave the
process group (``setsid``) are not killed: that is one of the things it teaches. Never give it the
gallery exploits marked ``naive: not-run`` (fork_bomb, memory_bomb, stdout_flood, kill_parent): run
here they would exhaust this machine or kill the process that called it. Call it from a scratch
working directory: candidate code can read its parent's working directory through ``/proc``.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from rlvr_lab.verifier.schema import Candidate, Fixture, TrialResult, Verdict
from rlvr_lab.verifier.workspace import path_error

#: Bytes of pytest's output kept for the evidence; the rest is read and dropped.
OUTPUT_EXCERPT = 4096


def parse_env_file(text: str) -> dict[str, str]:
    """``KEY=VALUE`` lines of a ``.env`` file (comments, blanks and ``export`` prefixes allowed).

    >>> parse_env_file("# c\\nexport A=1\\nB='two words'\\n\\nnot a pair\\n")
    {'A': '1', 'B': 'two words'}
    """
    env = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, value = line.split("=", 1)
        key = key.removeprefix("export ").strip()
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        if key.isidentifier():
            env[key] = value
    return env


def junit_verdict(path: Path) -> tuple[bool, str] | None:
    """``(passed, reason)`` from a JUnit XML report the naive way, or None if unreadable.

    Passed means: no failures and no errors in any suite. Zero tests also counts as passed: the
    mistake the ``setup_cfg_addopts`` exploit relies on.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.xml"
    >>> _ = p.write_text('<testsuites><testsuite tests="0" failures="0" errors="0"/></testsuites>')
    >>> junit_verdict(p)
    (True, 'report: 0 tests, 0 failures, 0 errors')
    """
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return None
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    counts = {"tests": 0, "failures": 0, "errors": 0}
    try:
        for suite in suites:
            for key in counts:
                counts[key] += int(suite.get(key, "0"))
    except ValueError:
        return None
    passed = counts["failures"] == 0 and counts["errors"] == 0
    return passed, f"report: {counts['tests']} tests, {counts['failures']} failures, {counts['errors']} errors"


def build_tree(candidate: Candidate, fixture: Fixture, tree: Path) -> None:
    """Write fixture source, public and hidden tests (under ``tests/``), then the candidate, into ``tree``."""
    layers = [
        fixture.files,
        {f"tests/{rel}": text for rel, text in fixture.public_tests.items()},
        {f"tests/{rel}": text for rel, text in fixture.hidden_tests.items()},
        candidate.files,
    ]
    for layer in layers:
        for rel, text in layer.items():
            problem = path_error(rel)
            if problem:
                raise ValueError(f"candidate file {problem}")
            target = tree / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")


class NaiveVerifier:
    """The teaching-only harness described in the module docstring. UNSAFE: see the module docstring.

    ``timeout_s``: wall-clock seconds one pytest run may take before its process group is killed
    (``fail``). ``python``: the interpreter that runs pytest (default: this one).

    >>> NaiveVerifier(timeout_s=0)
    Traceback (most recent call last):
    ...
    ValueError: timeout_s must be a number in (0, 3600], got 0
    """

    name = "naive"

    def __init__(self, timeout_s: float = 60.0, python: str | None = None):
        if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)) or not 0 < timeout_s <= 3600:
            raise ValueError(f"timeout_s must be a number in (0, 3600], got {timeout_s!r}")
        self.timeout_s = float(timeout_s)
        self.python = python or sys.executable

    def _run_once(self, candidate: Candidate, fixture: Fixture, seed: int) -> TrialResult:
        start = time.perf_counter()
        tree = Path(tempfile.mkdtemp(prefix="rlvr-naive-"))
        try:
            build_tree(candidate, fixture, tree)
            env = dict(os.environ)
            dotenv = tree / ".env"
            if dotenv.is_file():
                env.update(parse_env_file(dotenv.read_text(encoding="utf-8", errors="replace")))
            env["PYTHONPATH"] = str(tree) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
            env["PYTHONHASHSEED"] = str(seed)
            env.setdefault("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # faster start; not a safeguard
            report = tree / "report.xml"
            cmd = [
                self.python,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                f"--confcutdir={tree}",
                f"--junitxml={report}",
                "tests",
            ]
            proc = subprocess.Popen(
                cmd,
                cwd=tree,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            kept = bytearray()

            def drain() -> None:
                assert proc.stdout is not None
                for chunk in iter(lambda: proc.stdout.read(65536), b""):
                    if len(kept) < OUTPUT_EXCERPT:
                        kept.extend(chunk[: OUTPUT_EXCERPT - len(kept)])

            reader = threading.Thread(target=drain, daemon=True)
            reader.start()
            try:
                code = proc.wait(timeout=self.timeout_s)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait()
                reader.join(2.0)
                return TrialResult(
                    "fail",
                    time.perf_counter() - start,
                    seed,
                    "timeout",
                    f"pytest ran past {self.timeout_s} s; process group killed",
                )
            reader.join(2.0)
            output = kept.decode(errors="replace")
            from_report = junit_verdict(report) if report.exists() else None
            if from_report is not None:
                passed, reason = from_report
            else:
                passed, reason = code == 0, f"exit status {code} (no report)"
            return TrialResult("pass" if passed else "fail", time.perf_counter() - start, seed, reason, output[-400:])
        finally:
            shutil.rmtree(tree, ignore_errors=True)

    def verify(self, candidate: Candidate, fixture: Fixture, trials: int | None = 1) -> Verdict:
        """Run the naive harness ``trials`` times (None: the fixture's K), stopping at the first fail."""
        if not isinstance(candidate, Candidate):
            raise ValueError(f"candidate must be a Candidate, got {type(candidate).__name__}")
        if not isinstance(fixture, Fixture):
            raise ValueError(f"fixture must be a Fixture, got {type(fixture).__name__}")
        k = fixture.trials if trials is None else trials
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 1000:
            raise ValueError(f"trials must be an integer in [1, 1000], got {k!r}")
        results = []
        for index in range(k):
            result = self._run_once(candidate, fixture, seed=index)
            results.append(result)
            if result.outcome != "pass":
                break
        passed = len(results) == k and all(r.outcome == "pass" for r in results)
        stop = "all trials passed" if passed else f"rejected at trial {len(results)}: {results[-1].reason}"
        return Verdict(
            outcome="pass" if passed else "fail",
            candidate_digest=candidate.digest,
            fixture=fixture.name,
            fixture_version=fixture.version,
            checker_version=fixture.checker_version,
            backend="naive",
            trials=tuple(results),
            stop_reason=stop,
        )
