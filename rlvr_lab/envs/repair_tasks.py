"""Procedurally generated repair tasks: a small module with one bug, public and hidden tests (17.2.1, 17.6).

The chapter's running example is an agent that repairs code. Each task here is a short, correct module from
:data:`TEMPLATES` with one bug injected: a wrong operator, an off-by-one bound, a wrong branch, a missing case,
swapped arguments or a wrong constant (:data:`BUG_KINDS`). The agent sees the buggy module and may run its
*public* tests (two cases, at least one of which the bug fails); the verdict comes from the *hidden* tests
(eight cases, boundary inputs included), which the fixed module passes and the buggy one fails, checked when
the task is generated. A *problem* is a template with one bug and its constants; its variants rename the
function. Splits go by problem (``heldout_fraction``) and by bug kind (``heldout_kinds``: every task of those
kinds is held out), so a held-out repair rate can ask both "a new task" and "a new kind of bug".
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass

from rlvr_lab.verifier.schema import Fixture

#: Version of the repair task generator, recorded in fixtures.
REPAIR_VERSION = "repair_tasks_v1"

#: The kinds of bug a task may carry.
BUG_KINDS = ("wrong_operator", "off_by_one", "wrong_branch", "missing_case", "swapped_args", "wrong_constant")


@dataclass(frozen=True)
class Template:
    """A correct module with the places a bug can go."""

    key: str
    source: str
    """Module source; ``{f}`` is the entry function's name, other fields come from ``params``."""
    names: tuple[str, ...]
    """Names the entry function takes in the variants."""
    bugs: dict
    """Bug kind -> (exact text of ``source``, its buggy replacement)."""
    params: object
    """``rng -> dict`` of the constants that format ``source`` (may be empty)."""
    inputs: object
    """``(rng, params) -> tuple`` of arguments for one random test case."""
    edges: object
    """``params -> list of argument tuples`` always among the hidden cases (boundaries)."""


def _ints(rng, n, lo=-5, hi=9):
    return [rng.randint(lo, hi) for _ in range(n)]


TEMPLATES = (
    Template(
        "count_above",
        'def {f}(xs, k):\n    """Count the items of xs strictly greater than k."""\n    n = 0\n    for v in xs:\n'
        "        if v > k:\n            n += 1\n    return n\n",
        ("count_above", "n_above", "above_count"),
        {"wrong_operator": ("if v > k:", "if v >= k:"), "wrong_constant": ("n = 0", "n = 1")},
        lambda rng: {},
        lambda rng, p: (_ints(rng, rng.randint(0, 6)), rng.randint(0, 4)),
        lambda p: [([1, 2, 3], 2), ([], 0), ([5, 5], 5)],
    ),
    Template(
        "sum_range",
        'def {f}(a, b):\n    """The sum of the integers from a to b, both included (0 when a > b)."""\n'
        "    total = 0\n    for i in range(a, b + 1):\n        total += i\n    return total\n",
        ("sum_range", "range_total", "add_between"),
        {"off_by_one": ("range(a, b + 1)", "range(a, b)"), "wrong_operator": ("total += i", "total -= i")},
        lambda rng: {},
        lambda rng, p: (rng.randint(-3, 5), rng.randint(-3, 9)),
        lambda p: [(1, 3), (4, 4), (5, 2)],
    ),
    Template(
        "clamp",
        'def {f}(x, lo, hi):\n    """x limited to the interval [lo, hi] (lo <= hi)."""\n    if x < lo:\n'
        "        return lo\n    if x > hi:\n        return hi\n    return x\n",
        ("clamp", "limit", "bound"),
        {"wrong_branch": ("if x < lo:\n        return lo", "if x < lo:\n        return hi")},
        lambda rng: {},
        lambda rng, p: (rng.randint(-9, 9), rng.randint(-4, 0), rng.randint(1, 5)),
        lambda p: [(-7, -2, 3), (9, -2, 3), (1, -2, 3)],
    ),
    Template(
        "safe_ratio",
        'def {f}(a, b):\n    """a divided by b, or 0.0 when b is 0."""\n    if b == 0:\n        return 0.0\n'
        "    return a / b\n",
        ("safe_ratio", "ratio", "share"),
        {"missing_case": ("    if b == 0:\n        return 0.0\n", ""), "swapped_args": ("a / b", "b / a")},
        lambda rng: {},
        lambda rng, p: (rng.randint(1, 9), rng.randint(1, 4)),
        lambda p: [(3, 0), (6, 3), (1, 4)],
    ),
    Template(
        "widest_gap",
        'def gap(high, low):\n    """How far high lies above low."""\n    return high - low\n\n\n'
        'def {f}(xs):\n    """The gap between the largest and the smallest item of xs (0 when xs is empty)."""\n'
        "    if not xs:\n        return 0\n    return gap(max(xs), min(xs))\n",
        ("widest_gap", "spread", "value_range"),
        {
            "swapped_args": ("gap(max(xs), min(xs))", "gap(min(xs), max(xs))"),
            "missing_case": ("    if not xs:\n        return 0\n", ""),
        },
        lambda rng: {},
        lambda rng, p: (_ints(rng, rng.randint(1, 6)),),
        lambda p: [([],), ([4, 1, 7],), ([3],)],
    ),
    Template(
        "sign",
        'def {f}(x):\n    """1 for a positive x, -1 for a negative x, 0 for zero."""\n    if x > 0:\n        return 1\n'
        "    if x < 0:\n        return -1\n    return 0\n",
        ("sign", "signum", "direction"),
        {
            "wrong_branch": ("        return -1\n", "        return 1\n"),
            "missing_case": ("    if x < 0:\n        return -1\n    return 0\n", "    return -1\n"),
        },
        lambda rng: {},
        lambda rng, p: (rng.randint(-9, 9),),
        lambda p: [(0,), (-3,), (4,)],
    ),
    Template(
        "last_index",
        'def {f}(xs, target):\n    """The index of the last item of xs equal to target, or -1 if none is."""\n'
        "    for i in range(len(xs) - 1, -1, -1):\n        if xs[i] == target:\n            return i\n    return -1\n",
        ("last_index", "rfind", "find_last"),
        {
            "off_by_one": ("range(len(xs) - 1, -1, -1)", "range(len(xs) - 1, 0, -1)"),
            "wrong_constant": ("    return -1\n", "    return 0\n"),
        },
        lambda rng: {},
        lambda rng, p: (_ints(rng, rng.randint(0, 6), 0, 4), rng.randint(0, 4)),
        lambda p: [([2, 1, 1], 2), ([1, 2], 3), ([], 1)],
    ),
    Template(
        "power",
        'def {f}(base, exp):\n    """base raised to the non-negative integer exp."""\n    result = 1\n'
        "    for _ in range(exp):\n        result *= base\n    return result\n",
        ("power", "pow_int", "raise_to"),
        {
            "wrong_operator": ("result *= base", "result += base"),
            "off_by_one": ("range(exp)", "range(exp - 1)"),
            "wrong_constant": ("result = 1", "result = base"),
        },
        lambda rng: {},
        lambda rng, p: (rng.randint(-3, 4), rng.randint(0, 4)),
        lambda p: [(2, 0), (3, 3), (5, 1)],
    ),
    Template(
        "running_max",
        'def {f}(xs):\n    """At each position of xs, the largest item seen so far."""\n    out = []\n    best = None\n'
        "    for v in xs:\n        if best is None or v > best:\n            best = v\n        out.append(best)\n"
        "    return out\n",
        ("running_max", "prefix_max", "best_so_far"),
        {"wrong_operator": ("v > best", "v < best"), "missing_case": ("best is None or v > best", "v > best")},
        lambda rng: {},
        lambda rng, p: (_ints(rng, rng.randint(1, 6)),),
        lambda p: [([3, 1, 4, 1, 5],), ([],), ([2, 2],)],
    ),
    Template(
        "count_within",
        'def within(x, lo, hi):\n    """True when x lies between lo and hi, both included."""\n    return lo <= x <= hi\n\n\n'
        'def {f}(xs, lo, hi):\n    """How many items of xs lie in [lo, hi], both ends included."""\n'
        "    return sum(1 for v in xs if within(v, lo, hi))\n",
        ("count_within", "n_between", "in_range_count"),
        {
            "swapped_args": ("within(v, lo, hi)", "within(lo, v, hi)"),
            "wrong_operator": ("lo <= x <= hi", "lo < x <= hi"),
        },
        lambda rng: {},
        lambda rng, p: (_ints(rng, rng.randint(0, 6)), rng.randint(-3, 1), rng.randint(2, 6)),
        lambda p: [([1, 2, 3, 4], 2, 3), ([], 0, 1), ([0, 5], 0, 5)],
    ),
)


@dataclass(frozen=True)
class RepairTask:
    """One repair task: the buggy module the agent starts from, and how its repair is judged."""

    task_id: str
    """``template/bug_kind/v{variant}``, e.g. ``clamp/wrong_branch/v1``."""
    problem_id: str
    """``template/bug_kind``: the split by problem keeps every variant of it on one side."""
    template: str
    bug_kind: str
    """One of :data:`BUG_KINDS`."""
    split: str
    """``train`` or ``heldout``."""
    entry: str
    """Name of the function the tests call."""
    buggy: str
    """The module as the agent finds it (``solution.py``)."""
    fixed: str
    """The correct module (the demonstration's target; never shown to the agent)."""
    fixture: Fixture
    """Hidden tests (the verdict) and public tests (what ``RUN`` shows), for the verifier."""


def _run(source: str, entry: str, args: tuple):
    """Call ``entry(*args)`` of our own template module (trusted code, at generation only): its value or the
    exception's type name."""
    space: dict = {}
    exec(compile(source, "<template>", "exec"), space)
    try:
        return ("ok", space[entry](*[list(a) if isinstance(a, list) else a for a in args]))
    except Exception as exc:  # a missing case typically raises: that is a failing case too
        return ("raises", type(exc).__name__)


def _test_file(entry: str, cases: list[tuple]) -> str:
    lines = [f"from solution import {entry}"]
    for i, (args, want) in enumerate(cases, 1):
        call = f"{entry}({', '.join(repr(a) for a in args)})"
        lines += ["", "", f"def test_case_{i}():", f"    assert {call} == {want!r}"]
    return "\n".join(lines) + "\n"


def make_repair_task(template: Template, kind: str, variant: int, split: str, seed: int = 0) -> RepairTask:
    """One variant of ``template`` with bug ``kind``; hidden cases: the template's edges and random inputs,
    at least one of them failing the buggy module; public cases: one the bug fails and one it passes (when
    there is one).

    >>> t = make_repair_task(TEMPLATES[2], "wrong_branch", 0, "train")
    >>> t.entry, "return hi" in t.buggy.split("if x > hi")[0]
    ('clamp', True)
    """
    if kind not in template.bugs:
        raise ValueError(f"template {template.key} has no {kind} bug; it has {sorted(template.bugs)}")
    rng = random.Random(f"{seed}:{template.key}:{kind}:{variant}")
    params = template.params(rng)
    entry = template.names[variant % len(template.names)]
    fixed = template.source.format(f=entry, **params)
    old, new = template.bugs[kind]
    if fixed.count(old.format(f=entry, **params)) != 1:
        raise ValueError(f"{template.key}/{kind}: the bug's text must occur exactly once")
    buggy = fixed.replace(old.format(f=entry, **params), new.format(f=entry, **params))
    cases, failing, passing = [], [], []  # (args, the fixed module's answer)
    for args in list(template.edges(params)) + [template.inputs(rng, params) for _ in range(40)]:
        good, bad = _run(fixed, entry, args), _run(buggy, entry, args)
        if good[0] != "ok" or args in [c for c, _ in failing + passing]:
            continue
        (failing if bad != good else passing).append((args, good[1]))
        if len(cases) < 8:
            cases.append((args, good[1]))
    if not failing:
        raise ValueError(f"{template.key}/{kind}: no generated case tells the bug from the fix")
    if not any(c in failing for c in cases):
        cases[-1] = failing[0]
    public = [failing[0]] + ([passing[0]] if passing else [])
    task_id = f"{template.key}/{kind}/v{variant}"
    fixture = Fixture(
        name="repair." + task_id.replace("/", "."),
        version=f"{REPAIR_VERSION}-s{seed}",
        files={"solution.py": buggy},
        hidden_tests={"test_hidden.py": _test_file(entry, cases)},
        public_tests={"test_public.py": _test_file(entry, public)},
        allowed_paths=("solution.py",),
        modules=("solution",),
        checker_version=f"{REPAIR_VERSION}-hidden",
        description=f"Repair {entry}: the module below fails its tests.",
    )
    return RepairTask(task_id, f"{template.key}/{kind}", template.key, kind, split, entry, buggy, fixed, fixture)


def _split_of(problem_id: str, seed: int, heldout_fraction: float) -> str:
    h = int(hashlib.sha256(f"{seed}:{problem_id}".encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    return "heldout" if h < heldout_fraction else "train"


def make_repair_suite(
    seed: int = 0, variants: int = 3, heldout_fraction: float = 0.25, heldout_kinds: tuple[str, ...] = ()
) -> list[RepairTask]:
    """Every template x bug kind x ``variants``, split by problem (``heldout_fraction``) and by kind (every
    task whose bug kind is in ``heldout_kinds`` is held out).

    >>> suite = make_repair_suite(heldout_kinds=("swapped_args",))
    >>> len(suite), {t.split for t in suite if t.bug_kind == "swapped_args"}
    (60, {'heldout'})
    """
    if not 0.0 <= heldout_fraction < 1.0:
        raise ValueError(f"heldout_fraction must be in [0, 1), got {heldout_fraction}")
    unknown = set(heldout_kinds) - set(BUG_KINDS)
    if unknown:
        raise ValueError(f"heldout_kinds must be among {BUG_KINDS}, got {sorted(unknown)}")
    if variants < 1:
        raise ValueError(f"variants must be >= 1, got {variants}")
    suite = []
    for template in TEMPLATES:
        for kind in template.bugs:
            problem = f"{template.key}/{kind}"
            split = "heldout" if kind in heldout_kinds else _split_of(problem, seed, heldout_fraction)
            suite += [make_repair_task(template, kind, v, split, seed) for v in range(variants)]
    return suite
