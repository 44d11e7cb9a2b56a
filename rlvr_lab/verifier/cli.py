"""``rlvr-lab verify`` and ``rlvr-lab calibrate`` (section 17.7; 17.7.2 for q^K and expected trials).

``rlvr-lab verify PATH --fixture NAME [--trials K] [--backend auto|local|process|docker] [--naive] [--json]``
    PATH is an explored tree (a directory: its change against the fixture's base revision is captured),
    a JSON object ``{"relative/path.py": "text", ...}``, or a single file when the fixture permits
    exactly one path. Prints the verdict and its evidence. Exit status: 0 pass, 1 fail, 3 pending or
    unknown, 2 bad usage.
``rlvr-lab calibrate --fixture NAME [--runs N] [--backend ...]``
    Runs every reference patch of the fixture's manifest N times with K = 1 and prints its measured
    per-trial pass probability q (with a 95 % Wilson interval) beside the chapter's predictions under the
    manifest's K: acceptance q^K and expected trials sum_{j<K} q^j. A known-bad patch whose predicted
    acceptance is not small is flagged.
"""

from __future__ import annotations

import argparse
import json
import sys
import unicodedata
from pathlib import Path

from rlvr_lab.sandbox.backend import BACKENDS

#: Predicted acceptance above which a known-bad reference is flagged by ``calibrate``.
BAD_ACCEPTANCE_WARN = 0.05


def register(subparsers: argparse._SubParsersAction) -> None:
    verify = subparsers.add_parser("verify", help="verify a candidate against a fixture in the sandbox")
    verify.add_argument("path", help="candidate tree (directory), JSON {path: text}, or a single file")
    verify.add_argument("--fixture", required=True, help="fixture name under fixtures/, e.g. pool_repair_01")
    verify.add_argument("--trials", type=int, default=None, help="K of the all-pass rule (default: manifest)")
    verify.add_argument(
        "--backend",
        choices=BACKENDS,
        default="auto",
        help="sandbox backend; auto: local namespaces where they work, else the weaker process backend",
    )
    verify.add_argument("--naive", action="store_true", help="use the teaching-only NaiveVerifier instead")
    verify.add_argument("--json", action="store_true", help="print the verdict as JSON")
    verify.set_defaults(func=run_verify)
    calibrate = subparsers.add_parser("calibrate", help="measure per-trial pass probability q of reference patches")
    calibrate.add_argument("--fixture", required=True)
    calibrate.add_argument("--runs", type=int, default=20, help="single-trial runs per reference (default 20)")
    calibrate.add_argument("--backend", choices=BACKENDS, default="auto")
    calibrate.add_argument("--workers", type=int, default=2, help="verifier slots (default 2)")
    calibrate.set_defaults(func=run_calibrate)


def read_candidate(path: Path, fixture):
    """A :class:`~rlvr_lab.verifier.schema.Candidate` from a tree, a JSON mapping or one file."""
    from rlvr_lab.verifier.schema import Candidate
    from rlvr_lab.verifier.workspace import capture

    path = Path(path)
    if path.is_dir():
        return capture(path, fixture)
    if not path.is_file():
        raise ValueError(f"path must be an existing directory or file, got {path}")
    if path.suffix == ".json":
        files = json.loads(path.read_text())
        if not isinstance(files, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
            raise ValueError(f"{path} must hold a JSON object of relative path -> text")
        return Candidate(files)
    plain = [p for p in fixture.allowed_paths if not any(ch in p for ch in "*?[")]
    if len(plain) != 1:
        raise ValueError(f"fixture {fixture.name} permits {fixture.allowed_paths}; pass a directory or JSON mapping")
    return Candidate({plain[0]: path.read_text()})


def printable(text: object) -> str:
    r"""``text`` with every control, format or unassigned character escaped (``\x1b``, ``\u202e``), so that
    candidate material (a reason, a test's excerpt, a file name) cannot drive the terminal.

    >>> printable("ok\x1b[2J\r\n")
    'ok\\x1b[2J\\x0d\\x0a'
    """
    out = []
    for ch in str(text):
        if unicodedata.category(ch)[0] == "C":
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
        else:
            out.append(ch)
    return "".join(out)


def format_verdict(verdict) -> str:
    """Human-readable verdict and evidence; every field is passed through :func:`printable`."""
    p = printable
    lines = [
        f"verdict: {p(verdict.outcome)}",
        f"candidate: sha256:{p(verdict.candidate_digest)}",
        f"fixture: {p(verdict.fixture)} ({p(verdict.fixture_version)}), checker {p(verdict.checker_version)}",
        f"backend: {p(verdict.backend)}   attempts: {verdict.attempts}   "
        f"hidden tests run by: {p(getattr(verdict, 'test_runner', '') or 'n/a')}",
        f"isolation: {p(', '.join(verdict.isolation) or 'none recorded')}",
        f"stop reason: {p(verdict.stop_reason)}",
    ]
    for i, trial in enumerate(verdict.trials, 1):
        lines.append(
            f"  trial {i}: {p(trial.outcome):7s} {trial.duration_s * 1000:8.1f} ms  seed {trial.seed:<10d} "
            f"{p(trial.reason)}"
        )
        if trial.detail and trial.outcome != "pass":
            lines.append(f"           {p(trial.detail)}")
    return "\n".join(lines)


def _load(name: str):
    from rlvr_lab.verifier.fixtures import load_fixture

    return load_fixture(name)


def run_verify(args: argparse.Namespace) -> int:
    try:
        fixture = _load(args.fixture)
        candidate = read_candidate(Path(args.path), fixture)
        if args.naive:
            from rlvr_lab.verifier.naive import NaiveVerifier

            verdict = (
                NaiveVerifier().verify(candidate, fixture)
                if args.trials is None
                else NaiveVerifier().verify(candidate, fixture, trials=args.trials)
            )
        else:
            from rlvr_lab.verifier.verifier import Verifier

            with Verifier(backend=args.backend) as verifier:
                verdict = verifier.verify(candidate, fixture, trials=args.trials)
    except (ValueError, FileNotFoundError, KeyError) as exc:
        print(f"rlvr-lab verify: {printable(exc)}", file=sys.stderr)
        return 2
    print(json.dumps(verdict.to_dict(), indent=2) if args.json else format_verdict(verdict))
    return {"pass": 0, "fail": 1}.get(verdict.outcome, 3)


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson interval, now :func:`rlvr_lab.rewards.wilson_interval` (beside pass@k); kept for scripts.

    >>> [round(x, 3) for x in wilson(8, 10)]
    [0.49, 0.943]
    """
    from rlvr_lab.rewards import wilson_interval  # numpy stays out of the verifier's import

    return wilson_interval(successes, n, z)


def reference_candidates(name: str) -> list[tuple[str, str, object]]:
    """``(reference name, expected verdict, Candidate)`` for every reference patch in the manifest."""
    from rlvr_lab.verifier.fixtures import list_references, load_reference

    return [(ref, expect, load_reference(name, ref)) for ref, expect in list_references(name).items()]


def run_calibrate(args: argparse.Namespace) -> int:
    from rlvr_lab.rewards import all_pass_probability, expected_trials, wilson_interval
    from rlvr_lab.verifier.pool import VerifierPool

    if args.runs < 1:
        print(f"rlvr-lab calibrate: --runs must be >= 1, got {args.runs}", file=sys.stderr)
        return 2
    try:
        fixture = _load(args.fixture)
        references = reference_candidates(args.fixture)
    except (ValueError, FileNotFoundError, KeyError) as exc:
        print(f"rlvr-lab calibrate: {printable(exc)}", file=sys.stderr)
        return 2
    k = fixture.trials
    print(
        f"fixture {fixture.name} ({fixture.version}), checker {fixture.checker_version}, K = {k}, "
        f"{args.runs} single-trial runs per reference, backend {args.backend}"
    )
    print(
        f"{'reference':24s} {'expect':6s} {'q (measured)':>12s} {'95% interval':>15s} {'q^K':>8s} "
        f"{'E[trials]':>9s} {'unresolved':>10s}"
    )
    flagged = False
    with VerifierPool(workers=args.workers, backend=args.backend, max_queue=4 * args.workers) as pool:
        for ref_name, expect, candidate in references:
            verdicts = pool.map([candidate] * args.runs, fixture, trials=1)
            resolved = [v for v in verdicts if v.resolved]
            unresolved = len(verdicts) - len(resolved)
            if not resolved:
                print(f"{ref_name:24s} {expect:6s} {'n/a':>12s}  all {unresolved} runs unresolved")
                continue
            passes = sum(v.outcome == "pass" for v in resolved)
            q = passes / len(resolved)
            lo, hi = wilson_interval(passes, len(resolved))
            acc = float(all_pass_probability(q, k))
            note = ""
            if expect == "fail" and acc > BAD_ACCEPTANCE_WARN:
                note, flagged = f"  <- known-bad accepted with probability {acc:.3f} at K={k}", True
            if expect == "pass" and acc < 0.9:
                note, flagged = f"  <- known-good rejected with probability {1 - acc:.3f} at K={k}", True
            print(
                f"{ref_name:24s} {expect:6s} {q:12.3f} {f'[{lo:.2f}, {hi:.2f}]':>15s} {acc:8.3f} "
                f"{float(expected_trials(q, k)):9.3f} {unresolved:10d}{note}"
            )
    return 1 if flagged else 0
