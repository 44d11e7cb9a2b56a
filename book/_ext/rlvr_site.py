"""Sphinx glue for the RLVR Lab site (loaded through ``sphinx.local_extensions`` in _config.yml).

One citation style: the text cites author-year ("Williams, 1992"), so the bibliography is labelled the
same way. ``rlvr_author_year`` is a pybtex formatting style (``bibtex_default_style`` in _config.yml): the
plain style's entries and sort order with author-year labels instead of numbers.

sphinx-thebe 0.3 registers its inline configuration script (``const THEBE_JS_URL = ...``) once per
``env-before-read-docs`` event, which Jupyter Book fires more than once per build; the repeated
``const`` declaration is a JavaScript SyntaxError on every page. This extension drops exact duplicate
script entries from each page's context, keeping the first of each and the order.
"""

from __future__ import annotations

from collections import Counter

from pybtex.plugin import register_plugin
from pybtex.richtext import Text
from pybtex.style.formatting.plain import Style as PlainStyle
from pybtex.style.labels import BaseLabelStyle


class AuthorYearLabels(BaseLabelStyle):
    """"Williams, 1992", "Sutton and Barto, 2018", "Lambert et al., 2024"; a, b, ... after a repeated year."""

    def format_labels(self, sorted_entries):
        labels = [self._label(entry) for entry in sorted_entries]
        counts, seen = Counter(labels), Counter()
        for label in labels:
            if counts[label] > 1:
                seen[label] += 1
                label = f"{label}{'abcdefghijklmnopqrstuvwxyz'[seen[label] - 1]}"
            yield label

    @staticmethod
    def _label(entry) -> str:
        persons = entry.persons.get("author") or entry.persons.get("editor") or []
        names = [Text.from_latex(" ".join(p.prelast_names + p.last_names)).render_as("text") for p in persons]
        if not names:
            who = entry.fields.get("organization") or entry.fields.get("title", entry.key)
            who = Text.from_latex(who).render_as("text")
        elif len(names) == 1:
            who = names[0]
        elif len(names) == 2:
            who = f"{names[0]} and {names[1]}"
        else:
            who = f"{names[0]} et al."
        return f"{who}, {entry.fields.get('year', 'n.d.')}"


class AuthorYearStyle(PlainStyle):
    """The plain style with :class:`AuthorYearLabels`."""

    default_label_style = AuthorYearLabels


def _script_key(script) -> tuple:
    filename = getattr(script, "filename", script) or ""  # inline scripts: None or ""
    attributes = getattr(script, "attributes", {}) or {}
    return (str(filename), tuple(sorted((str(k), str(v)) for k, v in attributes.items())))


def dedupe_scripts(app, pagename, templatename, context, doctree) -> None:
    """Remove repeated identical entries from ``context["script_files"]`` (html-page-context)."""
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, unique = set(), []
    for script in scripts:
        key = _script_key(script)
        if key not in seen:
            seen.add(key)
            unique.append(script)
    context["script_files"] = unique


def setup(app):
    register_plugin("pybtex.style.labels", "rlvr_author_year", AuthorYearLabels)
    register_plugin("pybtex.style.formatting", "rlvr_author_year", AuthorYearStyle)
    # Late priority: run after the extensions that add scripts during html-page-context.
    app.connect("html-page-context", dedupe_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
