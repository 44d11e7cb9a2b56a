"""The chapters read as a course (issue 25): short paragraphs in chapter 6, no reference to a book the reader
never meets, Summary and Exercises last in every chapter, no shell lines, machine anecdotes or development
history in the text."""

import re
from pathlib import Path

import nbformat
import pytest

BOOK = Path(__file__).resolve().parents[1] / "book"
CHAPTERS = sorted(BOOK.glob("[01][0-9]_*.ipynb"))
PAGES = CHAPTERS + [BOOK / "instructors.md"]
LABS = sorted((BOOK.parent / "labs").glob("lab*.ipynb")) + sorted(
    (BOOK.parent / "labs" / "exercises" / "student").glob("*.ipynb")
)


def markdown(path: Path) -> str:
    if path.suffix == ".md":
        return path.read_text()
    return "\n\n".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown")


def paragraphs(text: str) -> list[str]:
    """Prose paragraphs: blocks between blank lines, each list item on its own, without tables, math,
    code fences, headings or label lines."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    text = re.sub(r"\$\$.*?\$\$", "", text, flags=re.S)
    out = []
    for block in re.split(r"\n\s*\n", text):
        lines = [ln for ln in block.splitlines() if ln.strip() and not re.match(r"\s*(\||#|\(.+\)=$|:)", ln)]
        item: list[str] = []
        for ln in lines:
            if re.match(r"\s*(- |\d+\. )", ln) and item:
                out.append(" ".join(item))
                item = []
            item.append(ln.strip())
        if item:
            out.append(" ".join(item))
    return out


def words(paragraph: str) -> int:
    return len(re.sub(r"\{\w+\}`[^`]*`|\$[^$]*\$", "x", paragraph).split())


def test_chapter_6_paragraphs_are_120_words_or_fewer():
    long = [(words(p), p[:80]) for p in paragraphs(markdown(BOOK / "06_verifier_isolation.ipynb")) if words(p) > 120]
    assert not long, long


@pytest.mark.parametrize("path", PAGES + LABS, ids=lambda p: p.name)
def test_no_reference_to_the_source_book_outside_the_intro(path):
    text = markdown(path)
    assert not re.search(r"\bsections? 17\.|\b17\.\d+(\.\d+)?\b|source chapter", text, re.I), path.name


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_summary_and_exercises_come_last(path):
    headings = [h for h in re.findall(r"(?m)^## (.+)$", markdown(path)) if h not in ("Bibliography", "References")]
    # Chapter 10 is itself the course's summary: its reading list sits between its Summary and its exercises.
    after = headings[headings.index("Summary") + 1 :]
    allowed = {"Key equations", "Historical perspective", "Further reading"} if path.name.startswith("10_") else set()
    assert after[-1:] == ["Exercises and labs"] and set(after[:-1]) <= allowed, f"{path.name} ends with {headings[-3:]}"


_SHELL = re.compile(r"(?m)^\s*(\$ |PYTHONPATH=|nice -n|python -m |python experiments/|pip install |make [\w-]+\s*$)")
_ANECDOTE = re.compile(r"load average|loaded two-core machine|a second, determined red team|a second red team", re.I)


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.name)
def test_no_shell_lines_or_machine_anecdotes_in_the_text(path):
    text = re.sub(r"```.*?```", "", markdown(path), flags=re.S)
    assert not _SHELL.search(text), f"{path.name}: {_SHELL.search(text).group(0)!r}"
    assert not _ANECDOTE.search(text), f"{path.name}: {_ANECDOTE.search(text).group(0)!r}"


def test_the_intro_credits_the_course_s_source_once():
    intro = (BOOK / "intro.md").read_text()
    assert len(re.findall(r"chapter 17", intro)) == 1


@pytest.mark.parametrize("path", LABS, ids=lambda p: p.name)
def test_labs_and_exercises_cite_equations_by_label(path):
    """The labs and exercises are book pages too: an equation number comes from its label ({eq} or
    rlvr_lab.equations), never typed by hand."""
    text = markdown(path)
    assert not re.search(r"\b[Ee]quations? \d|\beqs? \(?\d", text), path.name
