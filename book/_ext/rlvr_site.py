"""Sphinx glue for the RLVR Lab site (loaded through ``sphinx.local_extensions`` in _config.yml).

One citation style: the text cites author-year ("Williams, 1992"), so the bibliography is labelled the
same way. ``rlvr_author_year`` is a pybtex formatting style (``bibtex_default_style`` in _config.yml): the
plain style's entries and sort order with author-year labels instead of numbers.

sphinx-thebe 0.3 registers its inline configuration script (``const THEBE_JS_URL = ...``) once per
``env-before-read-docs`` event, which Jupyter Book fires more than once per build; the repeated
``const`` declaration is a JavaScript SyntaxError on every page. This extension drops exact duplicate
script entries from each page's context, keeping the first of each and the order.

Page weight: pydata-sphinx-theme loads Font Awesome twice, as CSS with web fonts (in its style sheet,
enough for every icon the theme shows) and as ``scripts/fontawesome.js`` (1.5 MB, which only swaps the
same icons for SVGs). After the build this extension removes that script from every page and from the
site, so a page's icons come from the style sheet's fonts alone.

Downloads: the theme's download button offers ``_sources/DOC.ipynb``, which Sphinx copies from the source
tree, without outputs. After the build this extension puts the notebook MyST-NB executed
(``_build/jupyter_execute/DOC.ipynb``) in its place, so the download is the page as the reader saw it.

Labs: the labs size themselves from ``RLVR_LAB_PRESET``; the build runs them on the ``ci`` preset (the
smallest runs), whatever the environment says, so building the book stays cheap.
"""

from __future__ import annotations

import os
import re
import shutil
from collections import Counter
from pathlib import Path

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


_FONTAWESOME_JS = re.compile(r'[ \t]*<script[^>]*src="[^"]*_static/scripts/fontawesome\.js[^"]*"[^>]*></script>\n?')


def drop_fontawesome_js(app, exception) -> None:
    """Remove the theme's ``fontawesome.js`` from every built page and from ``_static`` (build-finished)."""
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    for page in out.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        lean = _FONTAWESOME_JS.sub("", html)
        if lean != html:
            page.write_text(lean, encoding="utf-8")
    for path in (out / "_static" / "scripts").glob("fontawesome.js*"):
        path.unlink()


def executed_downloads(app, exception) -> None:
    """Replace each ``_sources/DOC.ipynb`` with the executed notebook of DOC (build-finished)."""
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    executed = out.parent / "jupyter_execute"
    for source in (out / "_sources").rglob("*.ipynb"):
        done = executed / source.relative_to(out / "_sources")
        if done.is_file():
            shutil.copyfile(done, source)


def setup(app):
    # Read by the kernels the build starts (they inherit this environment): the labs' start_lab() reads the
    # preset; the labs draw with pyplot, shown by the inline backend (tests/book_site.py sets Agg for the
    # build, under which plt.show() shows nothing; the chapters draw BookFigures, which show either way);
    # progress bars (tqdm, Hugging Face's weight loading) would be saved as widgets, meaningless on a page.
    os.environ["RLVR_LAB_PRESET"] = "ci"
    os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
    os.environ["TQDM_DISABLE"] = "1"
    os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
    register_plugin("pybtex.style.labels", "rlvr_author_year", AuthorYearLabels)
    register_plugin("pybtex.style.formatting", "rlvr_author_year", AuthorYearStyle)
    # Late priority: run after the extensions that add scripts during html-page-context.
    app.connect("html-page-context", dedupe_scripts, priority=900)
    app.connect("build-finished", drop_fontawesome_js)
    app.connect("build-finished", executed_downloads)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
