"""Repeated trials under the all-pass rule (section 17.7.2, equations for q^K and expected trials).

A candidate is accepted only if every one of K trials passes; verification stops at the first trial
that does not pass, so a candidate with per-trial pass probability q costs ``sum_{j<K} q^j`` trials on
average (:func:`rlvr_lab.rewards.expected_trials`). Each trial gets its own seed, derived from a base
seed and the trial index, which orders the hidden tests and seeds the candidate's ``random`` module, so
repeated trials are not replays of one schedule. The ``random`` seeds of the hidden tests and of the
candidate come from that seed and a secret of the runner (:func:`secret_seed`), so nothing the sandbox
sees predicts the hidden tests' randomness.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Sequence

from rlvr_lab.verifier.schema import TrialResult


def trial_seed(base_seed: int, index: int) -> int:
    """The seed of trial ``index`` (0-based) of a verification whose base seed is ``base_seed``.

    A 31-bit integer, stable across runs and platforms; different trials get unrelated seeds.

    >>> trial_seed(7, 0) == trial_seed(7, 0), trial_seed(7, 0) == trial_seed(7, 1)
    (True, False)
    >>> 0 <= trial_seed(123, 4) < 2**31
    True
    """
    if index < 0:
        raise ValueError(f"index must be >= 0, got {index}")
    digest = hashlib.sha256(f"{int(base_seed)}:{int(index)}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def secret_seed(secret: bytes, seed: int, purpose: str) -> int:
    """A 31-bit seed for ``purpose`` derived from the trial ``seed`` and the runner's ``secret``.

    The hidden tests' ``random`` is seeded with ``secret_seed(secret, seed, "tests")`` and the
    candidate's with ``secret_seed(secret, seed, "sandbox")``: the secret never leaves the runner, so
    nothing the sandbox sees predicts where a hidden test's random delays land, while both still vary
    per trial.

    >>> a = secret_seed(b"k", 1, "tests"); a == secret_seed(b"k", 1, "tests"), a == secret_seed(b"k", 1, "sandbox")
    (True, False)
    """
    digest = hmac.new(secret, f"{purpose}:{int(seed)}".encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def check_trials(trials: object) -> int:
    """Validate K, the number of trials of the all-pass rule.

    >>> check_trials(3)
    3
    >>> check_trials(0)
    Traceback (most recent call last):
    ...
    ValueError: trials must be an integer >= 1, got 0
    """
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
        raise ValueError(f"trials must be an integer >= 1, got {trials!r}")
    return trials


def all_pass(
    run_trial: Callable[[int, int], TrialResult], trials: int, base_seed: int
) -> tuple[str, tuple[TrialResult, ...], str]:
    """Run up to ``trials`` trials, stopping at the first that does not pass.

    ``run_trial(index, seed)`` runs one trial. Returns ``(outcome, results, stop_reason)`` where
    ``outcome`` is ``pass`` (all K passed), ``fail`` (a trial was rejected) or ``pending`` (a trial hit
    an infrastructure fault; nothing is concluded about the candidate).

    >>> ok = lambda i, s: TrialResult("pass", 0.01, s, "tests passed")
    >>> all_pass(ok, 3, 0)[0], len(all_pass(ok, 3, 0)[1])
    ('pass', 3)
    >>> flaky = lambda i, s: TrialResult("fail" if i == 1 else "pass", 0.01, s, "assertion failed")
    >>> outcome, results, why = all_pass(flaky, 3, 0); outcome, len(results), why
    ('fail', 2, 'rejected at trial 2 of 3: assertion failed')
    """
    check_trials(trials)
    results: list[TrialResult] = []
    for index in range(trials):
        result = run_trial(index, trial_seed(base_seed, index))
        results.append(result)
        if result.outcome == "pending":
            return "pending", tuple(results), f"infrastructure fault at trial {index + 1} of {trials}: {result.reason}"
        if result.outcome != "pass":
            return "fail", tuple(results), f"rejected at trial {index + 1} of {trials}: {result.reason}"
    return "pass", tuple(results), f"all {trials} trials passed"


def summarize(results: Sequence[TrialResult]) -> dict:
    """Counts of trial outcomes and total seconds, for evidence tables.

    >>> summarize([TrialResult("pass", 0.5, 1), TrialResult("fail", 0.25, 2)])
    {'pass': 1, 'fail': 1, 'pending': 0, 'seconds': 0.75}
    """
    counts = {"pass": 0, "fail": 0, "pending": 0}
    for result in results:
        counts[result.outcome] = counts.get(result.outcome, 0) + 1
    counts["seconds"] = round(sum(r.duration_s for r in results), 6)
    return counts
