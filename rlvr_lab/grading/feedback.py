"""Feedback to hand back: one file per student, in markdown and self-contained HTML (section 17.14).

Per notebook the outcome; per part its status, the points, what the grader found and the part's hint
(from the public spec, never the expected value); per decision part the rubric from the key and the
instructor's mark, or a blank line for it. Everything a student controls -- their folder's name, file
names, the grader's excerpts of their cells -- is escaped: :func:`md_text` for markdown (HTML and
markdown syntax alike, so a renderer shows the text, never a tag), :func:`html.escape` for HTML, which
loads nothing from anywhere (inline style, no script).
"""

from __future__ import annotations

import hashlib
import html
import os
import re

from rlvr_lab.grading.manual import RUBRIC_POINTS, rubric_id
from rlvr_lab.grading.roster import by_student

__all__ = ["md_text", "file_stem", "part_hints", "student_feedback", "write_feedback"]

#: Markdown punctuation escaped inside a line (text never starts a line, so ``-``, ``+``, ``1.`` stay as they are).
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]#|~])")
_STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}"
    "table{border-collapse:collapse;width:100%;margin:.5rem 0 1rem}th,td{border:1px solid #ccc;padding:.3rem .5rem;"
    "vertical-align:top;text-align:left}th{background:#f3f3f3}.correct,.marked{color:#17663a}"
    ".wrong,.tampered,.unanswered,.unmarked{color:#9a1c1c}.rubric{background:#f8f8f0;padding:.5rem 1rem;"
    "border-left:4px solid #b5a642}.mark{font-weight:bold}"
)


def md_text(text) -> str:
    """``text`` as inert markdown: one line, HTML's ``& < >`` as entities, markdown punctuation escaped.

    >>> md_text("<b>x|y</b>*")
    '&lt;b&gt;x\\\\|y&lt;/b&gt;\\\\*'
    >>> md_text("[link](javascript:alert(1))")
    '\\\\[link\\\\](javascript:alert(1))'
    """
    flat = " ".join(str(text).split())
    flat = flat.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD_SPECIAL.sub(r"\\\1", flat)


def file_stem(student: str) -> str:
    """A safe file name for ``student``'s feedback (a digest is added when the name had to change).

    >>> file_stem("ada"), file_stem("../x y")
    ('ada', 'x_y-46c740c6')
    """
    safe = re.sub(r"[^A-Za-z0-9_-]+", "_", student).strip("_") or "student"
    return safe if safe == student else f"{safe}-{hashlib.sha256(student.encode()).hexdigest()[:8]}"


def _points(entry: dict) -> str:
    return f"{entry['score']:g}/{entry['max']:g}"


def part_hints(part, found: str) -> str:
    """The spec's hints for a ``part`` not yet right: of the answers the grader's finding ``found`` names
    (else all of them), those the finding does not already give."""
    answers = getattr(part, "answers", ())
    chosen = [a for a in answers if a.name in found] or list(answers)
    return " ".join(dict.fromkeys(a.hint for a in chosen if a.hint and a.hint not in found))


def _rows(sub: dict, parts: dict, rubrics: dict) -> list:
    """Per part of one notebook: (part id, title, status, points, found, hint, rubric or None, mark or None)."""
    rows = []
    for pid, entry in sub["parts"].items():
        if entry.get("kind") == "rubric":
            continue
        hint = "" if entry["status"] == "correct" else part_hints(parts.get(pid), entry.get("detail", ""))
        argued = getattr(parts.get(pid), "argued", False)
        mark = sub["parts"].get(rubric_id(pid)) if argued else None
        rows.append(
            (
                pid,
                entry.get("title", ""),
                entry["status"],
                _points(entry),
                entry.get("detail", ""),
                hint,
                rubrics.get(pid, "(no rubric in the key)") if argued else None,
                mark,
            )
        )
    return rows


def _heading(sub: dict, titles: dict) -> str:
    name = os.path.basename(sub["path"])
    return f"{titles.get(sub.get('exercise'), sub.get('exercise') or 'unmatched notebook')} ({name})"


def _markdown(student: str, subs: list, parts: dict, rubrics: dict, titles: dict) -> str:
    score, most = sum(s["score"] for s in subs), sum(s["max"] for s in subs)
    out = [
        f"# Feedback for {md_text(student)}",
        "",
        f"**Total: {score:g}/{most:g}** over {len(subs)} notebook(s). Numbers are checked at 0.5 %, counts "
        f"exactly; a hint names the relation to use, never the answer.",
        "",
    ]
    for sub in subs:
        out += [
            f"## {md_text(_heading(sub, titles))}",
            "",
            f"Outcome: **{md_text(sub['outcome'])}**, {sub['score']:g}/{sub['max']:g} points"
            + (f" ({md_text(sub['reason'])})" if sub.get("reason") else "")
            + ".",
            "",
            "| part | status | points | what the grader found | hint |",
            "| --- | --- | --- | --- | --- |",
        ]
        rows = _rows(sub, parts, rubrics)
        out += [
            f"| {md_text(pid)} {md_text(title)} | {md_text(status)} | {points} | {md_text(found) or '-'} | "
            f"{md_text(hint) or '-'} |"
            for pid, title, status, points, found, hint, _, _ in rows
        ]
        for pid, _, _, _, _, _, rubric, mark in rows:
            if rubric is None:
                continue
            out += ["", f"### Written argument, {md_text(pid)}", "", f"> **Rubric.** {md_text(rubric)}", ""]
            if mark and mark["status"] == "marked":
                out.append(
                    f"**Instructor's mark: {_points(mark)}**"
                    + (f" - {md_text(mark['detail'])}" if mark["detail"] else "")
                )
            else:
                out.append(
                    f"**Instructor's mark:** ____ / {RUBRIC_POINTS:g}"
                    + (f" - {md_text(mark['detail'])}" if mark and mark["detail"] else "  Comment: ________")
                )
        for evidence in sub.get("tampering", [])[:5]:
            out += ["", f"Tampering evidence: {md_text(evidence)}"]
        out.append("")
    return "\n".join(out)


def _html(student: str, subs: list, parts: dict, rubrics: dict, titles: dict) -> str:
    e = html.escape
    score, most = sum(s["score"] for s in subs), sum(s["max"] for s in subs)
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>Feedback for {e(student)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>Feedback for {e(student)}</h1>",
        f"<p><strong>Total: {score:g}/{most:g}</strong> over {len(subs)} notebook(s). Numbers are checked at "
        "0.5 %, counts exactly; a hint names the relation to use, never the answer.</p>",
    ]
    for sub in subs:
        reason = f" ({e(sub['reason'])})" if sub.get("reason") else ""
        out += [
            f"<h2>{e(_heading(sub, titles))}</h2>",
            f"<p>Outcome: <strong>{e(sub['outcome'] or '')}</strong>, {sub['score']:g}/{sub['max']:g} points"
            f"{reason}.</p>",
            "<table><tr><th>part</th><th>status</th><th>points</th><th>what the grader found</th><th>hint</th></tr>",
        ]
        rows = _rows(sub, parts, rubrics)
        for pid, title, status, points, found, hint, _, _ in rows:
            out.append(
                f'<tr><td>{e(pid)} {e(title)}</td><td class="{e(status.replace(" ", "-"))}">{e(status)}</td>'
                f"<td>{points}</td><td>{e(found) or '-'}</td><td>{e(hint) or '-'}</td></tr>"
            )
        out.append("</table>")
        for pid, _, _, _, _, _, rubric, mark in rows:
            if rubric is None:
                continue
            out += [
                f"<h3>Written argument, {e(pid)}</h3>",
                f'<div class="rubric"><p><strong>Rubric.</strong> {e(rubric)}</p>',
            ]
            if mark and mark["status"] == "marked":
                out.append(
                    f'<p class="mark marked">Instructor\'s mark: {_points(mark)}'
                    + (f" - {e(mark['detail'])}" if mark["detail"] else "")
                    + "</p></div>"
                )
            else:
                comment = e(mark["detail"]) if mark and mark["detail"] else "________"
                out.append(
                    f'<p class="mark unmarked">Instructor\'s mark: ____ / {RUBRIC_POINTS:g}. '
                    f"Comment: {comment}</p></div>"
                )
        out += [f"<p>Tampering evidence: {e(ev)}</p>" for ev in sub.get("tampering", [])[:5]]
    out.append("</body></html>")
    return "\n".join(out)


def student_feedback(report: dict, key_module, rubric_texts: dict) -> dict:
    """``{student: (markdown, html)}`` for every student of ``report``.

    ``key_module``: the key (its ``PARTS`` give each part's hints and whether it is argued);
    ``rubric_texts``: ``{part id: rubric}`` (:func:`rlvr_lab.grading.manual.rubrics`).
    """
    from rlvr_lab import exercises

    parts = dict(key_module.PARTS)
    titles = {e.id: e.title for e in exercises.EXERCISES}
    return {
        student: (
            _markdown(student, subs, parts, rubric_texts, titles),
            _html(student, subs, parts, rubric_texts, titles),
        )
        for student, subs in by_student(report).items()
    }


def write_feedback(report: dict, folder: str, key_module, rubric_texts: dict) -> list:
    """Write ``<student>.md`` and ``<student>.html`` per student into ``folder`` (created); return the paths."""
    os.makedirs(folder, exist_ok=True)
    written = []
    for student, documents in student_feedback(report, key_module, rubric_texts).items():
        stem = file_stem(student)
        for suffix, text in zip((".md", ".html"), documents):
            path = os.path.join(folder, stem + suffix)
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(text + "\n")
            written.append(path)
    return written
