"""Sphinx glue for the RLVR Lab site (loaded through ``sphinx.local_extensions`` in _config.yml).

sphinx-thebe 0.3 registers its inline configuration script (``const THEBE_JS_URL = ...``) once per
``env-before-read-docs`` event, which Jupyter Book fires more than once per build; the repeated
``const`` declaration is a JavaScript SyntaxError on every page. This extension drops exact duplicate
script entries from each page's context, keeping the first of each and the order.
"""

from __future__ import annotations


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
    # Late priority: run after the extensions that add scripts during html-page-context.
    app.connect("html-page-context", dedupe_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
