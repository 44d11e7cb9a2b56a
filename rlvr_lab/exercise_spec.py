"""The form of an exercise spec of section 17.14: :class:`Exercise`, :class:`Part`, :class:`Answer`.

The specs themselves, one per exercise, are in :mod:`rlvr_lab.exercises`. A spec is public and holds no
answer: its givens, its parts and, per part, the notebook variables that are checked (their kind, hint and
TODO note). Texts name a given as a ``{name}`` field (``str.format`` syntax, e.g. ``{cap:,}``), filled in
by :func:`exercise`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from rlvr_lab.equations import cite

__all__ = ["Answer", "Part", "Exercise", "exercise", "number", "REL_TOL", "ABS_TOL", "KINDS"]

#: Relative tolerance for numeric answers: 0.5 %, so three significant figures always pass.
REL_TOL = 5e-3
#: Absolute tolerance for numeric answers near zero.
ABS_TOL = 1e-6
#: The kinds of answer: a number within the tolerance, an exact count, True/False, one of some strings,
#: ``custom`` (a rule with no single answer, :func:`rlvr_lab.checks.redesign_problems`), or ``code`` (a
#: function the student writes, graded by the course's verifier against hidden tests: :mod:`rlvr_lab.exercise_code`).
KINDS = ("number", "integer", "boolean", "choice", "custom", "code")


@dataclass(frozen=True)
class Answer:
    """One notebook variable that a part checks."""

    name: str
    """The variable's name in the notebook (the checker and the grader read it by this name)."""
    kind: str
    """One of :data:`KINDS`."""
    hint: str
    """Shown when the value is wrong: a relation, a unit, a type -- never the value or its direction."""
    todo: str = ""
    """What follows ``# TODO`` on the variable's line in the student notebook (e.g. ``": True/False"``)."""
    fraction: bool = False
    """A share in [0, 1]: a value that matches as a percentage gets its own hint."""
    options: tuple = ()
    """The strings a ``choice`` may take."""
    stub: str = ""
    """A ``code`` answer's starting cell in the student notebook: the function's signature, its docstring
    (what it must do, the errors it raises) and ``raise NotImplementedError``."""
    examples: tuple = ()
    """A ``code`` answer's public examples, ``(args, expected)``: the self-check calls the function with
    ``args`` and expects ``expected`` (a number or list of numbers within 1e-6, a bool or int exactly, or
    an exception class it must raise). The hidden tests are not here: they stay with the key."""


@dataclass(frozen=True)
class Part:
    """One checked part of an exercise."""

    letter: str
    """``"a"``, ``"b"`` ...: the part is ``checks.<exercise>.part_<letter>``."""
    title: str
    """What the part asks, in one line (shown in grade tables)."""
    prompt: str
    """The part's question in the notebook (markdown)."""
    answers: tuple
    """The :class:`Answer` objects, in the checker's call order."""
    argued: bool = False
    """The part also asks for a written argument (a markdown cell, read against the rubric)."""

    @property
    def name(self) -> str:
        """The checker's attribute name, ``part_<letter>``."""
        return f"part_{self.letter}"

    @property
    def names(self) -> tuple:
        """The checked variable names, in call order."""
        return tuple(a.name for a in self.answers)

    @property
    def is_code(self) -> bool:
        """The part asks for functions (``code`` answers), graded by the verifier, not for values."""
        return any(a.kind == "code" for a in self.answers)


@dataclass(frozen=True)
class Exercise:
    """One exercise of section 17.14: its notebook, givens and parts."""

    stem: str
    """The notebooks' file stem; its first word is the exercise id (``ex1_false_accepts`` -> ``ex1``)."""
    title: str
    """The notebook's heading."""
    summary: str
    """One line with the chapter sections it draws on (the checker's docstring)."""
    givens: dict
    """The exercise's inputs by name (hypothetical, from the chapter text); the key computes from these."""
    setting: str
    """The givens as the notebook states them (markdown)."""
    parts: tuple
    """The :class:`Part` objects, in order."""

    @property
    def id(self) -> str:
        """``ex1`` ... ``ex9``."""
        return self.stem.split("_")[0]

    def part_id(self, part: Part) -> str:
        """``ex1.part_a`` for part (a) of exercise 1."""
        return f"{self.id}.{part.name}"


def exercise(stem: str, title: str, summary: str, givens: dict, setting: str, parts: tuple) -> Exercise:
    """An :class:`Exercise` whose texts (setting, titles, prompts, hints, TODO notes) are filled from ``givens``.

    Equations are cited by label (``equation `ch8-lag```) and numbered by :func:`rlvr_lab.equations.cite`, in
    the texts and in code stubs alike; the notebook's markdown (the setting and each prompt) carries each number
    in a span naming its label, so the built book can check it.
    """

    def fill(text: str, html: bool = False) -> str:
        return cite(text.format(**givens), html=html)

    for p in parts:
        for a in p.answers:
            if a.kind not in KINDS or (a.kind == "choice") != bool(a.options):
                raise ValueError(f"{stem} ({p.letter}) {a.name}: kind {a.kind!r} with options {a.options!r}")
            if (a.kind == "code") != bool(a.stub) or (a.kind == "code") != bool(a.examples):
                raise ValueError(
                    f"{stem} ({p.letter}) {a.name}: a code answer needs a stub and examples, "
                    "and only a code answer has them"
                )
    filled = tuple(
        replace(
            p,
            title=fill(p.title),
            prompt=fill(p.prompt, html=True),
            answers=tuple(
                replace(a, hint=fill(a.hint), todo=fill(a.todo), stub=cite(a.stub) if a.stub else a.stub)
                for a in p.answers
            ),
        )
        for p in parts
    )
    return Exercise(stem, title, cite(summary), givens, fill(setting, html=True), filled)


def number(name: str, hint: str, todo: str = "", fraction: bool = False) -> Answer:
    """A ``number`` answer (the commonest kind)."""
    return Answer(name, "number", hint, todo, fraction)
