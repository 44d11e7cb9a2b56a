"""Student-side self-checks for the section 17.14 exercises: hints, and no expected value to read.

A student notebook assigns named variables in its TODO cells and then calls one check per part, for
example ``checks.ex1.part_a(share_early, share_late)``. The check prints ``ex1.part_a: correct.`` when
every value matches, and otherwise raises :class:`CheckFailed` listing a *hint* per value: which relation
to use, the units, the type expected -- never the expected number and never its direction.

The exercises, their parts and the variables each part checks come from the public spec
(:mod:`rlvr_lab.exercises`), which holds no answer. This module holds no expected value and computes
none. For every answer it ships (in
``check_table.json``, built by ``write_self_check_table`` of the key folder's ``exercise_key.py``) a
salt and a key-stretched hash (PBKDF2-SHA256, :data:`HASH_ITERATIONS` rounds) of the answer in canonical form:
numbers at three significant figures, counts exactly, booleans and choices as text. A check hashes the
canonical forms of the values within :data:`REL_TOL` of the student's value and compares. What a
student can and cannot learn from this is written out in ``book/instructors.md``. The grade itself is
computed by the grader (:mod:`rlvr_lab.grading`) from the values its sandbox reports, with the exact
tolerance of the key (``labs/exercises/solutions/exercise_key.py``); the self-check can disagree with
it only at the very edge of the tolerance.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from decimal import Decimal
from fractions import Fraction
from numbers import Real

from rlvr_lab import exercises
from rlvr_lab.exercise_spec import ABS_TOL, REL_TOL

__all__ = [
    "CheckFailed",
    "answer_hash",
    "canonical",
    "redesign_problems",
    "part_names",
    "ex1",
    "ex2",
    "ex3",
    "ex4",
    "ex5",
    "ex6",
    "ex7",
    "ex8",
    "ex9",
]

#: PBKDF2 rounds per hash: slows a brute-force search, keeps one check well under a second.
HASH_ITERATIONS = 20_000
_TABLE_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_table.json")
_table: dict | None = None


class CheckFailed(AssertionError):
    """Raised by a check when an answer is missing or wrong; the message is a hint, not the answer.

    In Jupyter the hint is all a failed check shows, not a traceback through this module (IPython renders an
    exception with ``_render_traceback_`` by its lines).

    >>> CheckFailed("ex1.part_a not yet right").render_traceback_lines()
    ['CheckFailed: ex1.part_a not yet right']
    """

    def render_traceback_lines(self) -> list[str]:
        """The lines a notebook shows for this failure: its class and its hint."""
        return [f"{type(self).__name__}: {self}"]

    def _render_traceback_(self) -> list[str]:
        return self.render_traceback_lines()


def answer_hash(part_id: str, name: str, canon: str, salt: str, iterations: int = HASH_ITERATIONS) -> str:
    """Salted, stretched hash of one answer in canonical form (hex).

    >>> len(answer_hash("ex1.part_c", "harden_when", "before", "00", iterations=1))
    64
    """
    data = f"{part_id}|{name}|{canon}".encode()
    return hashlib.pbkdf2_hmac("sha256", data, bytes.fromhex(salt), iterations).hex()


def _sig3(x: float) -> str:
    """``x`` at three significant figures as ``"<mantissa>e<exponent>"`` (``"0"`` near zero).

    >>> _sig3(0.07843), _sig3(240.0), _sig3(-0.9996), _sig3(1e-9)
    ('784e-4', '240e0', '-100e-2', '0')
    """
    if abs(x) <= ABS_TOL:
        return "0"
    exp = math.floor(math.log10(abs(x))) - 2
    mant = round(x / 10.0**exp)
    if abs(mant) >= 1000:
        mant, exp = round(mant / 10), exp + 1
    return f"{mant}e{exp}"


def canonical(kind: str, value) -> str:
    """The text that is hashed for an answer of ``kind`` (number, integer, boolean, choice)."""
    if kind == "number":
        return _sig3(float(value))
    if kind == "integer":
        return str(int(value))
    if kind == "boolean":
        return str(bool(value))
    return str(value)


def _numbers_near(x: float) -> list:
    """Canonical forms of the three-significant-figure values within REL_TOL of ``x``.

    >>> "784e-4" in _numbers_near(0.0786), "784e-4" in _numbers_near(0.0800)
    (True, False)
    """
    if abs(x) <= ABS_TOL:
        return ["0"]
    lo, hi = sorted((x * (1 - REL_TOL), x * (1 + REL_TOL)))
    out = {"0"} if lo <= ABS_TOL <= hi or lo <= -ABS_TOL <= hi else set()
    base = math.floor(math.log10(abs(x))) - 2
    for exp in (base - 1, base, base + 1):
        step = 10.0**exp
        for mant in range(math.ceil(lo / step - 1e-9), math.floor(hi / step + 1e-9) + 1):
            if 100 <= abs(mant) <= 999:
                out.add(f"{mant}e{exp}")
    return sorted(out)


def _plain(value):
    """numpy scalars and size-1 arrays as the Python value they hold."""
    if type(value).__module__ == "numpy" and hasattr(value, "item") and getattr(value, "size", 2) == 1:
        return value.item()
    return value


def _as_real(name: str, value, problems: list):
    value = _plain(value)
    if value is None or value is Ellipsis:
        problems.append(f"{name} is still unassigned: replace the placeholder in the TODO cell.")
        return None
    if isinstance(value, bool) or not isinstance(value, (Real, Decimal)):
        problems.append(f"{name} should be a single number, got {type(value).__name__}.")
        return None
    exact = (
        Fraction(value)
        if isinstance(value, (Decimal, Fraction, int)) and (not isinstance(value, Decimal) or value.is_finite())
        else None
    )
    number = float(value)
    if not math.isfinite(number):
        problems.append(f"{name} is {number}: a finite number is expected.")
        return None
    return exact if exact is not None else number


def _matches(part_id: str, name: str, entry: dict, canons, iterations: int) -> bool:
    return any(answer_hash(part_id, name, c, entry["salt"], iterations) == entry["hash"] for c in canons)


def _check_value(part_id: str, name: str, value, entry: dict, iterations: int, problems: list) -> None:
    kind, hint = entry["kind"], entry["hint"]
    if kind in ("number", "integer"):
        given = _as_real(name, value, problems)
        if given is None:
            return
        if kind == "integer":
            if given != int(given):
                problems.append(f"{name} should be a whole number (a count), got {float(given)}.")
            elif not _matches(part_id, name, entry, [str(int(given))], iterations):
                problems.append(f"{name} is not right. Hint: {hint}")
            return
        if _matches(part_id, name, entry, _numbers_near(float(given)), iterations):
            return
        if entry.get("fraction") and _matches(part_id, name, entry, _numbers_near(float(given) / 100), iterations):
            problems.append(f"{name} looks like a percentage: give it as a fraction in [0, 1].")
            return
        problems.append(f"{name} is not right (compared at three significant figures). Hint: {hint}")
    elif kind == "boolean":
        value = _plain(value)
        if value is None or value is Ellipsis:
            problems.append(f"{name} is still unassigned: set it to True or False.")
        elif not isinstance(value, bool):
            problems.append(f"{name} should be True or False, got {type(value).__name__}.")
        elif not _matches(part_id, name, entry, [str(value)], iterations):
            problems.append(f"{name} is not right. Hint: {hint}")
    elif kind == "choice":
        options = entry["options"]
        if value is None or value is Ellipsis:
            problems.append(f"{name} is still unassigned: pick one of {options}.")
        elif not isinstance(value, str) or value not in options:
            problems.append(f"{name} must be one of {options}, got {value!r}.")
        elif not _matches(part_id, name, entry, [value], iterations):
            problems.append(f"{name}: reconsider. Hint: {hint}")


def redesign_problems(redesign_forks, redesign_m, horizon: int, budget: float, difference: float) -> list:
    """Exercise 5(d): any fork schedule within ``budget`` that resolves ``difference`` passes.

    The rule has no single answer, so the student-side check and the grader share it.

    >>> redesign_problems([20], 50, 40, 30.0, 0.20)
    []
    """
    from rlvr_lab.credit import continuation_multiple, is_resolved

    p: list = []
    m = _as_real("redesign_m", redesign_m, p)
    if redesign_forks is None or redesign_forks is Ellipsis:
        p.append("redesign_forks is still unassigned: give a list of completed-turn indices.")
    elif (
        not isinstance(redesign_forks, (list, tuple))
        or not redesign_forks
        or not all(isinstance(k, int) and not isinstance(k, bool) for k in redesign_forks)
    ):
        p.append("redesign_forks should be a non-empty list of whole turn indices, e.g. [12, 25].")
    elif any(k < 1 or k > horizon - 1 for k in redesign_forks) or len(set(redesign_forks)) != len(redesign_forks):
        p.append(f"redesign_forks must be distinct completed turns between 1 and {horizon - 1}.")
    if p or m is None:
        return p
    if m != int(m) or m < 1:
        return ["redesign_m should be a whole number of continuations >= 1."]
    cost = continuation_multiple(horizon, int(m), [int(k) for k in redesign_forks])
    if cost > budget + 1e-9:
        p.append(
            f"redesign_forks with redesign_m costs more than {budget:g}x the base trajectory; fork later or at "
            "fewer turns."
        )
    if not is_resolved(difference, int(m)):
        p.append(
            f"redesign_m still cannot resolve a {difference:.2f} difference; find the M where twice the "
            f"difference bound drops to {difference:.2f}."
        )
    return p


def code_problems(part, values: dict) -> list:
    """Exercise 9: each function of ``part`` on its public examples, and its source against the grader's rules
    (:func:`rlvr_lab.exercise_code.check_function`). The hidden tests are never here: they stay with the key.

    >>> code_problems(exercises.part("ex9.part_c")[1], {"pass_at_k": None})
    ['pass_at_k is not a function yet: run the cell that defines it.']
    """
    import inspect
    import linecache

    from rlvr_lab.exercise_code import check_function

    problems: list = []
    for answer in part.answers:
        fn = values.get(answer.name)
        try:  # the whole cell (IPython keeps it in linecache), so that its imports are checked too
            source = "".join(linecache.getlines(inspect.getsourcefile(fn))) or inspect.getsource(fn)
        except (OSError, TypeError):  # defined where no source is kept: the rules are checked by the grader
            source = None
        problems += check_function(fn, answer.name, answer.examples, source)
    return problems


def _load_table() -> dict:
    global _table
    if _table is None:
        try:
            with open(_TABLE_PATH, encoding="utf-8") as handle:
                _table = json.load(handle)
        except OSError as exc:
            raise RuntimeError(
                f"the self-check table {_TABLE_PATH} is missing ({exc}); rebuild it with "
                "`python labs/exercises/solutions/exercise_key.py`"
            ) from None
    return _table


def part_names(part_id: str) -> tuple:
    """The variable names the check of ``part_id`` takes, in call order (from :mod:`rlvr_lab.exercises`).

    >>> part_names("ex1.part_a")
    ('share_early', 'share_late')
    """
    return exercises.part(part_id)[1].names


def self_check(part_id: str, values: dict) -> list:
    """The hints for ``values`` of one part (empty: every value matches the stored hash)."""
    exercise, part = exercises.part(part_id)
    if part.is_code:  # exercise 9: functions, checked on the public examples only (the grader has the rest)
        return code_problems(part, values)
    if all(a.kind == "custom" for a in part.answers):  # exercise 5(d): a rule, not a value
        g = exercise.givens
        return redesign_problems(
            values.get("redesign_forks"), values.get("redesign_m"), g["horizon"], g["budget"], g["difference"]
        )
    table = _load_table()
    entries = table["parts"][part_id]["checks"]
    problems: list = []
    for name in part.names:
        _check_value(part_id, name, values.get(name), entries[name], int(table["iterations"]), problems)
    return problems


def _checker(part_id: str):
    def check(*values):
        names = part_names(part_id)
        if len(values) != len(names):
            raise TypeError(f"checks.{part_id}() takes {len(names)} values ({', '.join(names)}), got {len(values)}")
        problems = self_check(part_id, dict(zip(names, values)))
        if problems:
            raise CheckFailed(f"{part_id} not yet right:\n  - " + "\n  - ".join(problems))
        print(f"{part_id}: correct.")

    check.__name__ = check.__qualname__ = part_id.split(".")[1]
    check.__doc__ = f"Self-check {part_id}: prints a confirmation or raises CheckFailed with hints."
    return staticmethod(check)


def _exercise_checks(exercise) -> type:
    """The class of one exercise's checks, ``checks.ex1.part_a(...)``, one static method per part of its spec."""
    number = exercise.id.removeprefix("ex")
    return type(
        exercise.id,
        (),
        {
            "__doc__": f"17.14 exercise {number}: {exercise.summary}.",
            **{p.name: _checker(exercise.part_id(p)) for p in exercise.parts},
        },
    )


ex1, ex2, ex3, ex4, ex5, ex6, ex7, ex8, ex9 = (_exercise_checks(e) for e in exercises.EXERCISES)
