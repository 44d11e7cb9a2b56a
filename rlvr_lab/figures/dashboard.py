"""The dashboard every explorer of the book is built from: sliders, a readout of the numbers, a figure.

Moving a slider recomputes the numbers and redraws the figure into an ``Image`` widget, so the book's
static HTML keeps each dashboard's saved state without a kernel; each readout cell carries its full-precision
value (``data-value``) and the recomputation spec (``data-rlvr``) for ``book/_static/rlvr-math.js``.
The explorers themselves live in :mod:`rlvr_lab.figures.widgets`.

>>> from rlvr_lab.figures import relations
>>> d = Dashboard("x squared", {"x": float_slider("x", 0.5, 0.0, 1.0, 0.1)}, lambda x: {"x^2": x * x},
...               lambda x: relations.contrast_figure(8, x))
>>> d.numbers, d.updates
({'x^2': 0.25}, 1)
>>> d.controls["x"].value = 0.2
>>> round(d.numbers["x^2"], 2), d.updates
(0.04, 2)
>>> int_slider("G", 70, 1, 64)
Traceback (most recent call last):
...
ValueError: G must be in [1, 64] (the slider's range), got 70
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable

import ipywidgets as w

from rlvr_lab.equations import eq, eq_html, number
from rlvr_lab.figures.style import png_bytes

STYLE = {"description_width": "150px"}
"""Every slider's style: room for a label such as "false accept alpha"."""
LAYOUT = dict(width="100%", max_width="460px")
"""Sliders take the container's width (up to 460 px), so the value beside each stays visible on a phone."""


class Dashboard(w.VBox):
    """Sliders, a readout of the numbers they imply, and a figure; recomputed whenever a control moves.

    Attributes: ``controls`` (name -> ipywidget, the names are the keyword arguments of ``compute``
    and ``draw``), ``numbers`` (label -> value, the latest results), ``readout`` (an ``HTML`` widget with
    the numbers as a table), ``image`` (an ``Image`` widget holding the PNG of the figure) and
    ``updates`` (how many times the numbers have been computed).
    """

    def __init__(
        self,
        title: str,
        controls: dict,
        compute: Callable[..., dict],
        draw: Callable,
        formats: dict | None = None,
        extra_html: Callable[..., str] | None = None,
        kind: str | None = None,
        fixed: dict | None = None,
        note: str | None = None,
        equations: tuple[str, ...] = (),
    ):
        self.controls = controls
        self.equations = tuple(equations)
        """The labels of the equations the title cites (``{eq}`` in ``title``); their numbers come from
        :mod:`rlvr_lab.equations`, and the static page's panels get them through the readout's spec."""
        if ("{eq}" in title) != bool(self.equations):
            raise ValueError(f"title must hold {{eq}} exactly when equations are named, got {title!r}")
        self.title = title.replace("{eq}", eq(*self.equations)) if self.equations else title
        self.kind = kind
        """The dashboard's name in ``book/_static/rlvr-math.js`` (which recomputes it on the static site)."""
        self.fixed = dict(fixed or {})
        """Parameters that are not sliders (JSON-serialisable); the static page's recomputation needs them."""
        self.numbers: dict = {}
        self.updates = 0
        self._compute, self._draw = compute, draw
        self._formats = formats or {}
        self._extra_html = extra_html
        self.readout = w.HTML(layout=w.Layout(flex="1 1 260px", max_width="100%"))
        self.image = w.Image(format="png", layout=w.Layout(max_width="100%", height="auto"))
        shown = html.escape(title)
        if self.equations:
            shown = shown.replace("{eq}", eq_html(*self.equations))
        header = w.HTML(f"<b>{shown}</b>" + (f"<div class='rlvr-note'>{html.escape(note)}</div>" if note else ""))
        sliders = w.VBox(list(controls.values()), layout=w.Layout(flex="1 1 300px", max_width="100%"))
        body = w.HBox(
            [sliders, self.readout], layout=w.Layout(flex_flow="row wrap", align_items="flex-start", max_width="100%")
        )
        super().__init__(
            [header, body, self.image], layout=w.Layout(border="1px solid #ddd", padding="6px", max_width="100%")
        )
        self.add_class("rlvr-dashboard")
        if kind:
            self.add_class(f"rlvr-kind-{kind}")
        for name, control in controls.items():
            control.add_class("rlvr-ctl")
            control.add_class(f"rlvr-ctl-{name}")
            if isinstance(control, w.FloatLogSlider):
                control.add_class("rlvr-log")
            elif isinstance(control, w.IntSlider):
                control.add_class("rlvr-int")
            control.observe(self._refresh, names="value")
        self._refresh()

    def params(self) -> dict:
        """The current control values, by keyword."""
        return {name: control.value for name, control in self.controls.items()}

    def _refresh(self, change=None) -> None:
        params = self.params()
        self.numbers = self._compute(**params)
        self.updates += 1
        rows = "".join(
            f"<tr><td>{html.escape(label)}</td><td data-value='{_raw(value)}'>"
            f"<b>{html.escape(self._format(label, value))}</b></td></tr>"
            for label, value in self.numbers.items()
        )
        extra = self._extra_html(**params) if self._extra_html else ""
        spec = {
            "kind": self.kind,
            "fixed": self.fixed,
            "formats": self._formats,
            "params": params,
            "eq": {label: number(label) for label in self.equations},
        }
        spec = html.escape(json.dumps(spec), quote=True)
        self.readout.value = f"<table class='rlvr-readout' data-rlvr='{spec}'>{rows}</table>{extra}"
        # 100 dpi: the smallest figure text (8 pt) is 11 px at natural size, readable when a phone scrolls it.
        self.image.value = png_bytes(self._draw(**params), dpi=100)

    def _format(self, label: str, value) -> str:
        spec = self._formats.get(label)
        if spec is not None:
            return format(value, spec)
        if isinstance(value, bool):
            return "yes" if value else "no"
        if isinstance(value, int):
            return f"{value:,}"
        return f"{value:.4g}"


def _raw(value) -> str:
    """A readout value as the static page's recomputation writes it (full precision, for the tests)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(float(value)) if isinstance(value, float) else str(value)
    return html.escape(str(value), quote=True)


def check_range(name: str, value, lo, hi):
    """``value`` if it lies in the slider's range [lo, hi]; ValueError otherwise."""
    if not lo <= value <= hi:
        raise ValueError(f"{name} must be in [{lo}, {hi}] (the slider's range), got {value!r}")
    return value


def float_slider(
    name: str, value: float, lo: float, hi: float, step: float, label: str | None = None, fmt: str = ".3f"
) -> w.FloatSlider:
    """A slider of floats in [lo, hi] for the keyword ``name``, labelled ``label`` (default ``name``)."""
    check_range(name, value, lo, hi)
    return w.FloatSlider(
        value=value,
        min=lo,
        max=hi,
        step=step,
        description=label or name,
        continuous_update=False,
        readout_format=fmt,
        style=STYLE,
        layout=w.Layout(**LAYOUT),
    )


def int_slider(name: str, value: int, lo: int, hi: int, label: str | None = None) -> w.IntSlider:
    """A slider of integers in [lo, hi] for the keyword ``name``."""
    check_range(name, value, lo, hi)
    return w.IntSlider(
        value=value,
        min=lo,
        max=hi,
        step=1,
        description=label or name,
        continuous_update=False,
        style=STYLE,
        layout=w.Layout(**LAYOUT),
    )


def log_slider(name: str, value: float, lo_exp: float, hi_exp: float, label: str | None = None) -> w.FloatLogSlider:
    """A log-scale slider from 10**lo_exp to 10**hi_exp (class ``rlvr-log``: book/_static/rlvr-live.js maps it back)."""
    check_range(name, value, 10**lo_exp, 10**hi_exp)
    return w.FloatLogSlider(
        value=value,
        base=10,
        min=lo_exp,
        max=hi_exp,
        step=0.01,
        description=label or name,
        continuous_update=False,
        readout_format=".3g",
        style=STYLE,
        layout=w.Layout(**LAYOUT),
    )
