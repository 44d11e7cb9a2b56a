"""The book's one figure style: palette, a Figure that shows itself in Jupyter, PNG bytes, a column of axes.

Every module of :mod:`rlvr_lab.figures` draws with it; matplotlib without pyplot, so no display is touched.

Sizes are chosen for the narrowest reader. A figure is at most :data:`FIG_WIDTH` inches wide, its panels
stacked one above another, and no text in it is smaller than :data:`TEXT_PT` points. At :data:`DPI` that is
a PNG at most 500 px wide whose smallest text is 13.9 px: shown whole in a desktop column, and still 9.4 px
when a 390 px phone shrinks it to its 340 px column (the narrowest the browser test measures, a dashboard's). :func:`png_bytes` writes the smallest text and
legend sizes into the PNG (text chunks ``rlvr-min-text-pt``, ``rlvr-min-legend-pt``, ``rlvr-dpi``) so the
book's build test can check every figure on the site.
"""

from __future__ import annotations

import io
import math

from matplotlib.figure import Figure
from matplotlib.text import Text

PASS_COLOR = "#2a9d8f"
FAIL_COLOR = "#e76f51"
NEUTRAL = "#264653"
ACCENT = "#e9c46a"
MUTED = "#8d99ae"

FIG_WIDTH = 5.0
"""Widest figure, in inches (500 px at :data:`DPI`)."""
TEXT_PT = 10.0
"""Smallest text in any figure, in points; :func:`png_bytes` raises smaller text to it."""
DPI = 100
"""Resolution of every figure the book shows."""


class BookFigure(Figure):
    """A plain :class:`~matplotlib.figure.Figure` that Jupyter shows as a PNG even when pyplot (and so the
    inline backend) was never imported: a cell that ends in ``relations.contrast_figure()`` displays it."""

    def _repr_png_(self) -> bytes:
        return png_bytes(self, dpi=DPI)


def _texts(fig: Figure) -> list[Text]:
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]


def text_sizes(fig: Figure) -> dict[str, float]:
    """The smallest visible text and legend text of ``fig``, in points (``inf`` where there is none).

    >>> text_sizes(axes_row(1)[0])["legend"]
    inf
    """
    texts = _texts(fig)
    legend = [t for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()]
    legend += [t for leg in fig.legends for t in leg.get_texts()]
    return {
        "text": min((t.get_fontsize() for t in texts), default=math.inf),
        "legend": min((t.get_fontsize() for t in legend if t.get_text().strip()), default=math.inf),
    }


def png_bytes(fig: Figure, dpi: int = DPI) -> bytes:
    """Render ``fig`` to PNG bytes in memory (Agg canvas, no display), no text under :data:`TEXT_PT`.

    The smallest text and legend sizes and the resolution go into the PNG's text chunks.

    >>> png_bytes(axes_row()[0])[:4]
    b'\\x89PNG'
    """
    for t in _texts(fig):
        if t.get_fontsize() < TEXT_PT:
            t.set_fontsize(TEXT_PT)
    sizes = text_sizes(fig)
    meta = {
        "rlvr-min-text-pt": f"{sizes['text']:g}",
        "rlvr-min-legend-pt": f"{sizes['legend']:g}",
        "rlvr-dpi": str(dpi),
    }
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, metadata=meta)
    return buf.getvalue()


def axes_row(ncols: int = 2, width: float = FIG_WIDTH, height: float = 3.0) -> tuple[Figure, list]:
    """A :class:`BookFigure` with ``ncols`` gridded panels, each ``height`` inches tall, stacked in one column.

    The figure is ``width`` inches wide, never more than :data:`FIG_WIDTH`: side-by-side panels would have to
    shrink below a legible size on a phone. (The name is older than the layout.)

    >>> [float(round(x, 1)) for x in axes_row(2)[0].get_size_inches()]
    [5.0, 6.0]
    """
    fig = BookFigure(figsize=(min(width, FIG_WIDTH), height * ncols), layout="constrained")
    axes = [fig.add_subplot(ncols, 1, i + 1) for i in range(ncols)]
    for ax in axes:
        ax.grid(True, alpha=0.3)
        ax.spines[["top", "right"]].set_visible(False)
    return fig, axes


def mark_point(ax, x, y, text, color=NEUTRAL, offset=(8, 8)) -> None:
    """Mark the worked point ``(x, y)`` on ``ax`` with a dot and a boxed label ``text``."""
    ax.plot([x], [y], "o", color=color, markersize=8, zorder=5)
    ax.annotate(
        text,
        (x, y),
        textcoords="offset points",
        xytext=offset,
        fontsize=10,
        color=color,
        bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": color, "alpha": 0.85},
    )
