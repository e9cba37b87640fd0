"""Drawings as self-contained pictures, for outputs that must show without trust or scripts.

A notebook's saved outputs are shown by viewers that each drop something: JupyterLab shows
``image/svg+xml`` and inline ``<svg>`` only in trusted notebooks (an untrusted one gets the
text fallback, or the SVG's text run together), while an ``<img>`` whose source is a
``data:`` URI survives its HTML sanitizer; nbconvert's HTML keeps ``text/html`` as it is and
needs no network for a ``data:`` URI. An ``<img>`` also isolates the drawing: nothing in
it can run, and the page's styles do not reach it.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Sequence

__all__ = ["picture_html", "stack_svgs", "svg_size"]

_ROOT = re.compile(r'<svg width="([0-9.]+)pt" height="([0-9.]+)pt"')
_CAPTION_PT = 14.0
_GAP_PT = 10.0


def svg_size(svg: str) -> tuple[float, float]:
    """Width and height, in points, of a drawing made by :func:`flowmagic.render.to_svg`."""
    match = _ROOT.match(svg)
    if match is None:
        raise ValueError("Not an SVG drawing made by Graphviz: it does not start with <svg width=...pt height=...pt.")
    return float(match.group(1)), float(match.group(2))


def picture_html(svg: str, alt: str) -> str:
    """``svg`` as an ``<img>`` with a ``data:`` URI, ``alt`` as its text alternative.

    The image is as wide as the drawing, and narrower where the page is (``max-width``).
    """
    source = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    width, _ = svg_size(svg)
    return (
        f'<img src="data:image/svg+xml;base64,{source}" alt="{html.escape(alt)}" '
        f'width="{round(width * 4 / 3)}" style="max-width: 100%; height: auto">'
    )


def stack_svgs(parts: Sequence[tuple[str, str]]) -> str:
    """One SVG of ``(caption, svg)`` drawings stacked top to bottom, each under its caption."""
    pieces = []
    top = 0.0
    width = 0.0
    for caption, svg in parts:
        part_width, part_height = svg_size(svg)
        top += _CAPTION_PT
        pieces.append(
            f'<text x="4" y="{top - 3:.2f}" font-family="Helvetica,sans-Serif" font-size="12" '
            f'font-weight="bold" fill="#111827">{html.escape(caption, quote=False)}</text>'
        )
        # The drawing keeps its own viewBox; placed at (0, top) in the outer drawing's points.
        pieces.append(_ROOT.sub(f'<svg x="0" y="{top:.2f}" width="{part_width:g}" height="{part_height:g}"', svg, 1))
        top += part_height + _GAP_PT
        width = max(width, part_width)
    height = max(top - _GAP_PT, 0.0)
    return (
        f'<svg width="{width:g}pt" height="{height:g}pt" viewBox="0 0 {width:g} {height:g}" '
        'xmlns="http://www.w3.org/2000/svg">\n'
        f'<rect width="100%" height="100%" fill="white"/>\n' + "\n".join(pieces) + "\n</svg>\n"
    )
