"""The book's one figure style: palette, a Figure that shows itself in Jupyter, PNG bytes, a row of axes.

Every module of :mod:`rlvr_lab.figures` draws with it; matplotlib without pyplot, so no display is touched.
"""

from __future__ import annotations

import io

from matplotlib.figure import Figure

PASS_COLOR = "#2a9d8f"
FAIL_COLOR = "#e76f51"
NEUTRAL = "#264653"
ACCENT = "#e9c46a"
MUTED = "#8d99ae"


class BookFigure(Figure):
    """A plain :class:`~matplotlib.figure.Figure` that Jupyter shows as a PNG even when pyplot (and so the
    inline backend) was never imported: a cell that ends in ``relations.contrast_figure()`` displays it."""

    def _repr_png_(self) -> bytes:
        return png_bytes(self, dpi=100)


def png_bytes(fig: Figure, dpi: int = 100) -> bytes:
    """Render ``fig`` to PNG bytes in memory (Agg canvas, no display).

    >>> png_bytes(axes_row()[0])[:4]
    b'\\x89PNG'
    """
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


def axes_row(ncols: int = 2, width: float = 10.0, height: float = 3.6) -> tuple[Figure, list]:
    """A :class:`BookFigure` of ``width`` x ``height`` inches with ``ncols`` gridded axes side by side."""
    fig = BookFigure(figsize=(width, height), layout="constrained")
    axes = [fig.add_subplot(1, ncols, i + 1) for i in range(ncols)]
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
        fontsize=9,
        color=color,
        bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": color, "alpha": 0.85},
    )
