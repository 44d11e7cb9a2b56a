"""Section 17.14's "implement it" exercise (:data:`EX9`) and the rules its functions obey.

A ``code`` part (:mod:`rlvr_lab.exercise_spec`) asks the student to *write* one of the chapter's
algorithms (the group advantages, the clipped surrogate, the unbiased pass@k of chapter 8 and the
version-checked admission). The grader (:mod:`rlvr_lab.grading.code_parts`) takes the
function's cell from the notebook (:func:`candidate_source`), refuses what breaks the rules below
(:func:`rule_problems`) and submits the rest to the course's verifier (chapter 6): hidden tests in the trusted
runner, the student's code in a sandbox that holds the interpreter's standard library only -- no numpy,
no torch and no ``rlvr_lab``, so the library's answer cannot be borrowed -- under the all-pass rule.

The rules are public and the student's self-check applies them too (:func:`check_function`, with the
spec's public examples only), so a function that would be refused is flagged before submission:

* imports only from :data:`ALLOWED_IMPORTS` (the sandbox has no third-party package, and the rest of the
  standard library has no place in these functions);
* none of :data:`FORBIDDEN_NAMES` (code, files and namespaces are out of an algorithm's reach) and no
  dunder name or attribute (``__import__``, ``__globals__``, ``__builtins__`` ...).
"""

from __future__ import annotations

import ast
import math

from rlvr_lab.exercise_spec import Answer, Part, exercise

__all__ = [
    "EX9",
    "ALLOWED_IMPORTS",
    "FORBIDDEN_NAMES",
    "rule_problems",
    "candidate_source",
    "borrowed",
    "is_stub",
    "check_function",
]

#: Modules a function may import: the standard library's numeric helpers.
ALLOWED_IMPORTS = frozenset(
    {
        "math",
        "cmath",
        "fractions",
        "decimal",
        "functools",
        "itertools",
        "operator",
        "statistics",
        "numbers",
        "typing",
        "collections",
        "bisect",
        "heapq",
    }
)
#: Builtins a function may not name.
FORBIDDEN_NAMES = frozenset(
    {
        "eval",
        "exec",
        "compile",
        "open",
        "globals",
        "locals",
        "vars",
        "breakpoint",
        "input",
        "getattr",
        "setattr",
        "delattr",
        "memoryview",
        "help",
    }
)
#: Statements kept from the function's cell (a bare expression, a loop, a check call are dropped).
_KEPT = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef, ast.Assign, ast.AnnAssign)
#: Tolerance of the public examples (the hidden tests use the same).
REL_TOL, ABS_TOL = 1e-6, 1e-6


def _dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__") and len(name) > 4


def rule_problems(source: str) -> list:
    """What in ``source`` breaks the rules (empty: nothing), each naming the line.

    >>> rule_problems("import math\\ndef f(x):\\n    return math.sqrt(x)")
    []
    >>> [p.split(":")[0] for p in rule_problems("import numpy as np\\nfrom rlvr_lab import rewards\\nf = __import__")]
    ['line 1 imports numpy', 'line 2 imports rlvr_lab', 'line 3 uses __import__']
    """
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return [f"line {exc.lineno} does not parse: {exc.msg}"]
    allowed = "math, cmath, " + ", ".join(sorted(ALLOWED_IMPORTS - {"math", "cmath"}))
    out = []
    for node in ast.walk(tree):
        modules = []
        if isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            modules = ["." * node.level + (node.module or "")]
        for module in modules:
            if module.split(".")[0] not in ALLOWED_IMPORTS or module.startswith("."):
                out.append(
                    f"line {node.lineno} imports {module}: the grader's sandbox has the standard "
                    f"library's math helpers only ({allowed})"
                )
        if isinstance(node, ast.Name) and node.id in FORBIDDEN_NAMES:
            out.append(
                f"line {node.lineno} uses {node.id}(): a function of this exercise computes from its arguments only"
            )
        elif isinstance(node, ast.Name) and _dunder(node.id) or isinstance(node, ast.Attribute) and _dunder(node.attr):
            out.append(
                f"line {node.lineno} uses {getattr(node, 'id', None) or node.attr}: no dunder names or attributes"
            )
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _dunder(node.name):
            out.append(
                f"line {node.lineno} defines {node.name}: no dunder names or attributes (return plain "
                "numbers and lists)"
            )
        elif isinstance(node, ast.alias) and _dunder(node.name.split(".")[-1]):
            out.append(f"line {getattr(node, 'lineno', '?')} imports {node.name}: no dunder names or attributes")
    return out


def _defines(tree: ast.Module, name: str) -> bool:
    return any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name for n in tree.body)


def candidate_source(cells, names) -> tuple:
    """``(module source, problem)`` for the functions ``names`` from a notebook's code ``cells`` (sources).

    Each name's function is taken from the *last* cell that defines it at top level (what ran last);
    that cell's imports, functions, classes and assignments are kept, its other statements (calls, prints,
    checks) dropped. A cell that does not parse as Python is skipped. ``problem`` names a function no cell
    defines (the source is then None).

    >>> candidate_source(["def f():\\n    return 1\\nprint(f())", "x = 2"], ("f",))
    ('def f():\\n    return 1', '')
    """
    trees = []
    for source in cells:
        try:
            trees.append((source, ast.parse(source)))
        except (SyntaxError, ValueError):
            trees.append((source, None))
    chosen: list = []
    for name in names:
        found = [i for i, (_, tree) in enumerate(trees) if tree is not None and _defines(tree, name)]
        if not found:
            return None, f"no cell defines {name}() at top level (keep the function and its helpers in one cell)"
        if found[-1] not in chosen:
            chosen.append(found[-1])
    parts = []
    for index in sorted(chosen):
        source, tree = trees[index]
        lines = source.splitlines()
        for node in tree.body:
            if isinstance(node, _KEPT):
                first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
                parts.append("\n".join(lines[first - 1 : node.end_lineno]))
    return "\n".join(parts), ""


def borrowed(cells, names) -> list:
    """Which of ``names`` some cell binds by ``import`` or assignment instead of ``def`` (a function taken, not
    written: ``from rlvr_lab.rewards import pass_at_k``).

    >>> borrowed(["from rlvr_lab.rewards import pass_at_k", "admit = print"], ("pass_at_k", "admit", "f"))
    ['pass_at_k', 'admit']
    """
    bound = set()
    for source in cells:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                bound |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return [n for n in names if n in bound]


def is_stub(source: str, name: str) -> bool:
    """True when ``name`` in ``source`` still only raises ``NotImplementedError`` (the student's starting cell).

    >>> is_stub('def f(x):\\n    "doc"\\n    raise NotImplementedError("write it")', "f")
    True
    """
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            body = [s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
            if len(body) == 1 and isinstance(body[0], ast.Raise) and body[0].exc is not None:
                exc = body[0].exc.func if isinstance(body[0].exc, ast.Call) else body[0].exc
                return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"
    return False


def _close(got, want) -> bool:
    """``got`` matches the example's ``want``: a bool or int exactly (and of that type), a list item by item,
    a float within the tolerance."""
    if isinstance(want, bool) or isinstance(want, int):
        return type(got) is type(want) and got == want
    if isinstance(want, (list, tuple)):
        return isinstance(got, (list, tuple)) and len(got) == len(want) and all(_close(g, w) for g, w in zip(got, want))
    if isinstance(got, bool) or not isinstance(got, (int, float)):
        return False
    return math.isclose(float(got), float(want), rel_tol=REL_TOL, abs_tol=ABS_TOL)


def check_function(fn, name: str, examples, source: str | None = None) -> list:
    """The student-side check of one function: the public ``examples`` and, with ``source``, the rules.

    Returns problems (empty: it passes these examples). It never runs the hidden tests.

    >>> check_function(lambda n: n * 2, "double", (((2,), 4), ((-1,), ValueError)))
    ['double(-1) should raise ValueError, returned -2']
    """
    if fn is None or fn is Ellipsis or not callable(fn):
        return [f"{name} is not a function yet: run the cell that defines it."]
    problems = [] if source is None else rule_problems(source)
    for args, want in examples:
        call = f"{name}({', '.join(map(repr, args))})"
        try:
            got = fn(*args)
        except NotImplementedError:
            return problems + [f"{name} still raises NotImplementedError: write its body."]
        except Exception as exc:  # noqa: BLE001 - reported to the student
            if not (isinstance(want, type) and isinstance(exc, want)):
                problems.append(f"{call} raised {type(exc).__name__}: {exc}"[:300])
            continue
        if isinstance(want, type):
            problems.append(f"{call} should raise {want.__name__}, returned {got!r}"[:300])
        elif not _close(got, want):
            problems.append(f"{call} returned {got!r}, the example expects {want!r}"[:300])
    return problems


_CODE_RULES = (
    "Write it in plain Python: `import math` (or another module of `exercise_code.ALLOWED_IMPORTS`) is "
    "all the grader's sandbox offers -- no numpy, no torch, no `rlvr_lab`. Keep the function and any "
    "helper it calls in its cell."
)

EX9 = exercise(
    "ex9_implement_it",
    "Exercise 9 - Implement it: advantages, the clipped surrogate, pass@k, admission (code)",
    "four of the course's algorithms, written by you (eqs `ch4-advantage` and `ch4-surrogate` of chapter 4; the unbiased pass@k and eq `ch8-lag` of chapter 8)",
    {},
    "Each part asks you to *write* one algorithm of the chapter as a Python function. Your cell's check runs "
    "a few public examples. `rlvr-lab grade` takes the function's cell from your notebook and runs it in "
    "the course's sandboxed verifier (chapter 6) against hidden tests -- fixed edge cases and "
    "property tests that compare it with the library on generated inputs -- under the all-pass rule: "
    "every trial must pass. A part scores when the verdict is `pass`.",
    (
        Part(
            "a",
            "group advantages with the stabiliser (eq `ch4-advantage`)",
            "Write `group_advantages(rewards, eps)`: equation `ch4-advantage` for one group, "
            "`A_i = (R_i - mean) / (std + eps)` with the population std (divide by G). "
            "An all-equal group gets zeros, never NaN, even with `eps = 0`. " + _CODE_RULES,
            (
                Answer(
                    "group_advantages",
                    "code",
                    "equation `ch4-advantage`: centre by the group mean, scale by the population "
                    "std plus eps; a tied group is all zeros.",
                    stub="def group_advantages(rewards, eps=1e-8):\n"
                    '    """The group-relative advantages of one group: a list of G floats, A_i = (R_i - mean) / (std + eps).\n\n'
                    "    rewards: a list of G >= 1 finite numbers; eps >= 0. The std is the population std\n"
                    "    (divide by G). A group whose rewards are all equal gets G zeros (never NaN), whatever\n"
                    "    eps >= 0. Raise ValueError for an empty group or a negative eps.\n"
                    '    """\n'
                    '    raise NotImplementedError("write group_advantages")',
                    examples=(
                        ((([0.0, 1.0, 0.0]), 1e-8), [-0.7071067741, 1.4142135482, -0.7071067741]),
                        (([1.0, 0.0, 0.0, 0.0], 0.0), [1.7320508076, -0.5773502692, -0.5773502692, -0.5773502692]),
                        (([1.0, 1.0, 1.0], 0.0), [0.0, 0.0, 0.0]),
                        (([], 1e-8), ValueError),
                    ),
                ),
            ),
        ),
        Part(
            "b",
            "the clipped surrogate with clip-higher (eq `ch4-surrogate`)",
            "Write `clipped_surrogate(ratios, advantages, eps_low, eps_high)`: the per-token term of "
            "equation `ch4-surrogate`, `min(r * A, clip(r, 1 - eps_low, 1 + eps_high) * A)`, with clip-higher "
            "(`eps_high` may exceed `eps_low`). " + _CODE_RULES,
            (
                Answer(
                    "clipped_surrogate",
                    "code",
                    "take the smaller of the unclipped and the clipped term, the "
                    "clip range being [1 - eps_low, 1 + eps_high].",
                    stub="def clipped_surrogate(ratios, advantages, eps_low, eps_high):\n"
                    '    """Per token, min(r * A, clip(r, 1 - eps_low, 1 + eps_high) * A): a list of floats.\n\n'
                    "    ratios: a list of token ratios r >= 0; advantages: a list of the same length (the\n"
                    "    advantage of each token's rollout). 0 < eps_low < 1, eps_high >= 0. Raise ValueError\n"
                    "    when the lengths differ or a clip width is out of range.\n"
                    '    """\n'
                    '    raise NotImplementedError("write the clipped surrogate")',
                    examples=(
                        (([0.5, 1.1, 1.5], [2.0, 2.0, 2.0], 0.2, 0.2), [1.0, 2.2, 2.4]),
                        (([1.25, 1.35, 0.7], [1.0, 1.0, -1.0], 0.2, 0.28), [1.25, 1.28, -0.8]),
                        (([1.0], [1.0, 2.0], 0.2, 0.28), ValueError),
                    ),
                ),
            ),
        ),
        Part(
            "c",
            "the unbiased pass@k (chapter 8)",
            "Write `pass_at_k(n, c, k)`: the probability that a random k-subset of n samples, c of which "
            "passed, holds at least one pass, `1 - C(n - c, k) / C(n, k)`. " + _CODE_RULES,
            (
                Answer(
                    "pass_at_k",
                    "code",
                    "count the k-subsets with no pass: C(n - c, k) of C(n, k).",
                    stub="def pass_at_k(n, c, k):\n"
                    '    """Unbiased pass@k from n samples with c passes: 1 - C(n - c, k) / C(n, k), a float.\n\n'
                    "    Integers with 0 <= c <= n and 1 <= k <= n; raise ValueError otherwise "
                    "(k > n included).\n"
                    '    """\n'
                    '    raise NotImplementedError("write the unbiased pass@k")',
                    examples=(
                        ((10, 3, 1), 0.3),
                        ((10, 3, 5), 0.9166666667),
                        ((5, 0, 2), 0.0),
                        ((5, 5, 2), 1.0),
                        ((3, 1, 4), ValueError),
                    ),
                ),
            ),
        ),
        Part(
            "d",
            "version-checked admission (eq `ch8-lag`)",
            "Write `version_lag(age_s, step_s)`, equation `ch8-lag`'s lag `floor(age / T_step)` as an int, and "
            "`admit(age_s, step_s, max_lag)`, True iff that lag is at most `max_lag`. " + _CODE_RULES,
            (
                Answer(
                    "version_lag",
                    "code",
                    "equation `ch8-lag`: whole training steps elapsed while the rollout aged.",
                    stub="def version_lag(age_s, step_s):\n"
                    '    """The version lag: floor(age_s / step_s), an int. age_s >= 0, step_s > 0 '
                    '(else ValueError)."""\n'
                    '    raise NotImplementedError("write version_lag")',
                    examples=(((90.0, 40.0), 2), ((200.0, 40.0), 5), ((120.0, 40.0), 3), ((10.0, 0.0), ValueError)),
                ),
                Answer(
                    "admit",
                    "code",
                    "admit while the lag is at most the bound, the bound included.",
                    stub="def admit(age_s, step_s, max_lag):\n"
                    '    """True iff version_lag(age_s, step_s) <= max_lag (an int >= 0, else ValueError)."""\n'
                    '    raise NotImplementedError("write version-checked admission")',
                    examples=(
                        ((90.0, 40.0, 2), True),
                        ((120.0, 40.0, 2), False),
                        ((200.0, 40.0, 5), True),
                        ((90.0, 40.0, -1), ValueError),
                    ),
                ),
            ),
        ),
    ),
)
