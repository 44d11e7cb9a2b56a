"""The book's equation numbers, from one source: each equation's label, in the order the book builds them.

The chapters number their display equations with MyST labels (``$$ ... $$ (ch4-lone-pass)``); Jupyter Book
numbers them across the whole book in table-of-contents order, so the n-th label of :data:`LABELS` renders
as equation (n). Every title, panel and printed line of the library that cites an equation names it by its
label and asks this module for the number; nothing types a number in. ``tests/test_equations.py`` checks
:data:`LABELS` against the labels in the chapter sources, and ``tests/test_book_build.py`` checks every
number shown on the built site against the number the build gave the equation it names.

>>> number("ch4-lone-pass"), eq("ch4-lone-pass"), eq("ch4-surrogate", "ch7-headroom")
(14, 'eq (14)', 'eqs (15) and (25)')
>>> eq_html("ch1-contrast")
'eq <span class="rlvr-eq" data-eq="ch1-contrast">(2)</span>'
>>> cite("the lone pass, equation `ch4-lone-pass`; both, eqs `ch6-allpass` and `ch6-trials`")
'the lone pass, equation (14); both, eqs (21) and (22)'
>>> number("ch4-lonepass")
Traceback (most recent call last):
...
ValueError: label must be one of the book's equation labels (ch1-objective ... ch8-pass-at-k), got 'ch4-lonepass'
"""

from __future__ import annotations

import re

LABELS = (
    "ch1-objective",
    "ch1-contrast",
    "ch2-false-share",
    "ch2-composite",
    "ch2-ordering",
    "ch3-reinforce",
    "ch3-zero-score",
    "ch3-value",
    "ch3-td",
    "ch3-gae",
    "ch3-se",
    "ch3-fork-multiple",
    "ch4-advantage",
    "ch4-lone-pass",
    "ch4-surrogate",
    "ch4-kl",
    "ch4-objective",
    "ch4-token-weight",
    "ch5-prefix",
    "ch5-ratio",
    "ch6-allpass",
    "ch6-trials",
    "ch7-token-entropy",
    "ch7-weight",
    "ch7-headroom",
    "ch8-cycle",
    "ch8-barrier",
    "ch8-lag",
    "ch8-capacity",
    "ch8-workers",
    "ch8-pass-at-k",
)
"""Every labelled equation of the book, in build order (chapter by chapter, top to bottom)."""

NUMBERS = {label: i for i, label in enumerate(LABELS, start=1)}
"""label -> the number the built book shows for it."""


def number(label: str) -> int:
    """The rendered number of the equation labelled ``label``."""
    try:
        return NUMBERS[label]
    except KeyError:
        raise ValueError(
            f"label must be one of the book's equation labels ({LABELS[0]} ... {LABELS[-1]}), got {label!r}"
        ) from None


def _join(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def eq(*labels: str) -> str:
    """How a title or printed line cites the equations ``labels``: ``eq (14)``, ``eqs (15) and (25)``."""
    if not labels:
        raise ValueError("labels must name at least one equation, got none")
    return ("eqs " if len(labels) > 1 else "eq ") + _join([f"({number(x)})" for x in labels])


def _span(label: str) -> str:
    """The number of ``label`` in a ``span.rlvr-eq`` that names the label (``data-eq``) for the build test."""
    return f'<span class="rlvr-eq" data-eq="{label}">({number(label)})</span>'


def eq_html(*labels: str) -> str:
    """:func:`eq` as HTML, each number in a ``span.rlvr-eq`` naming its label (``data-eq``) for the build test."""
    if not labels:
        raise ValueError("labels must name at least one equation, got none")
    return ("eqs " if len(labels) > 1 else "eq ") + _join([_span(x) for x in labels])


_CITED = re.compile(r"\b(eqs?|equations?) `([\w-]+)`((?: and `[\w-]+`)*)", re.IGNORECASE)


def cite(text: str, html: bool = False) -> str:
    """``text`` with each equation cited by label (``equation `ch8-lag```, ``eqs `a` and `b```) numbered.

    Texts written once and shown later (exercise prompts and hints, the train command's help) cite this way.
    With ``html`` each number is a ``span.rlvr-eq`` naming its label, as :func:`eq_html` writes it: for
    markdown that a notebook and the built book both render (it reads "(14)" in either).

    >>> cite("equation `ch4-lone-pass`", html=True)
    'equation <span class="rlvr-eq" data-eq="ch4-lone-pass">(14)</span>'
    """

    def numbered(m: re.Match) -> str:
        labels = [m.group(2), *re.findall(r"`([\w-]+)`", m.group(3))]
        return f"{m.group(1)} " + _join([_span(x) if html else f"({number(x)})" for x in labels])

    return _CITED.sub(numbered, text)
