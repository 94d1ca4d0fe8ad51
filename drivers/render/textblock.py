"""Drawing a field's text as a block that fits a box: shrink, then wrap to two lines, then ellipsize.

Blocks are drawn as 8-bit coverage masks (255 = ink) and cropped to their ink, so "fits" means every pixel of
ink is inside the box (overhanging swashes, stacked marks and accents included), not just the advance width.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from PIL import Image, ImageDraw

from drivers.base import RenderError
from drivers.render import fonts
from drivers.render.fonts import FontLibrary
from drivers.render.runs import Paragraph, Run, ellipsis_paragraph

LEADING = 1.18  # baseline to baseline, in ems, for a two-line name
_MAX_BREAK_CANDIDATES = 9
#: The largest canvas one block of text is drawn on: more than a 600 dpi A4 label, so no text that can fit a box is
#: refused, while a text of a hundred thousand characters at 400 pt is refused before Pillow allocates gigabytes.
MAX_BLOCK_PIXELS = 40_000_000
#: Renderings one fit tries while shrinking: each step shrinks by the measured overflow, so a fit takes two or three;
#: more only means the ink never settles, and drawing must stay bounded.
MAX_FIT_STEPS = 12


def _no_check() -> None:
    return None


@dataclass(frozen=True)
class Block:
    mask: Image.Image  # mode "L", 255 where ink is
    size: int
    lines: int
    ellipsized: bool = False

    @property
    def width(self) -> int:
        return self.mask.width

    @property
    def height(self) -> int:
        return self.mask.height


@dataclass(frozen=True)
class Sizes:
    """Font sizes in pixels (ems): start at ``largest``, wrap below ``wrap_below``, never go under ``smallest``."""

    largest: int
    wrap_below: int
    smallest: int


def _direction(run: Run) -> str:
    return "rtl" if run.rtl else "ltr"


def advance(runs: list[Run], size: int) -> float:
    if not fonts.RAQM:
        return sum(fonts.truetype(r.face, size).getlength(r.text) for r in runs)
    return sum(fonts.truetype(r.face, size).getlength(r.text, direction=_direction(r)) for r in runs)


def draw_lines(lines: list[list[Run]], size: int) -> Image.Image | None:
    """The lines, each centred, as an ink mask cropped to its ink; None when nothing is visible.

    Raises:
        RenderError: the text would need a canvas of more than ``MAX_BLOCK_PIXELS``.
    """
    widths = [advance(line, size) for line in lines]
    pad = size  # room for ink outside the advance box (swashes, overhangs)
    lead = round(size * LEADING)
    top = round(size * 1.6)  # stacked marks (Thai, Vietnamese, Arabic) reach well above the ascender
    canvas_w, canvas_h = math.ceil(max(widths, default=0)) + 2 * pad, top + lead * (len(lines) - 1) + size
    if canvas_w * canvas_h > MAX_BLOCK_PIXELS:
        raise RenderError(
            f"text too large to draw: {canvas_w} x {canvas_h} pixels at {size} px; at most {MAX_BLOCK_PIXELS} pixels"
        )
    canvas = Image.new("L", (canvas_w, canvas_h), 0)
    draw = ImageDraw.Draw(canvas)
    for number, (line, width) in enumerate(zip(lines, widths, strict=True)):
        x = pad + (max(widths) - width) / 2
        baseline = top + number * lead
        for run in line:
            font = fonts.truetype(run.face, size)
            if fonts.RAQM:
                draw.text((x, baseline), run.text, font=font, fill=255, anchor="ls", direction=_direction(run))
                x += font.getlength(run.text, direction=_direction(run))
            else:
                draw.text((x, baseline), run.text, font=font, fill=255, anchor="ls")
                x += font.getlength(run.text)
    box = canvas.getbbox()
    return canvas.crop(box) if box else None


def _render_fit(
    lines: list[list[Run]], size: int, box_w: int, box_h: int, smallest: int, check: Callable[[], None]
) -> Block | None:
    """Render at ``size``, shrinking until the ink fits; None when even ``smallest`` does not fit."""
    for _ in range(MAX_FIT_STEPS):
        if size < smallest:
            break
        check()
        mask = draw_lines(lines, size)
        if mask is None:
            return None
        if mask.width <= box_w and mask.height <= box_h:
            return Block(mask, size, len(lines))
        ratio = min(box_w / mask.width, box_h / mask.height)
        size = min(size - 1, math.floor(size * ratio))
    return None


def _guess(lines: list[list[Run]], size: int, box_w: int, box_h: int) -> int:
    """The size at which the widest line's advance fits (ink is checked afterwards)."""
    widest = max(advance(line, size) for line in lines) or 1.0
    height_ems = 1.0 + LEADING * (len(lines) - 1)
    return max(1, math.floor(min(size, size * box_w / widest, box_h / height_ems)))


def _break_points(paragraph: Paragraph) -> list[tuple[int, int]]:
    """(end of line 1, start of line 2) pairs: at spaces, else between any two clusters (CJK, Thai, one long word)."""
    parts = paragraph.clusters
    points = _break_points_all(paragraph)
    middle = len(parts) / 2
    return sorted(points, key=lambda p: abs(p[0] - middle))[:_MAX_BREAK_CANDIDATES]


def _two_lines(paragraph: Paragraph, size: int, check: Callable[[], None]) -> list[list[Run]] | None:
    best: tuple[float, list[list[Run]]] | None = None
    n = len(paragraph.clusters)
    for end, start in _break_points(paragraph):
        check()
        lines = [paragraph.line(0, end), paragraph.line(start, n)]
        widest = max(advance(line, size) for line in lines)
        if best is None or widest < best[0]:
            best = (widest, lines)
    return None if best is None else best[1]


def fit(
    paragraph: Paragraph,
    box_w: int,
    box_h: int,
    sizes: Sizes,
    library: FontLibrary,
    bold: bool,
    wrap: bool,
    check: Callable[[], None] = _no_check,
) -> Block | None:
    """The largest rendering of ``paragraph`` inside ``box_w`` x ``box_h``; None if the box is too small for any.

    One line down to ``sizes.wrap_below``; then (if ``wrap``) two lines, when that is larger; below
    ``sizes.smallest`` the last line is cut with an ellipsis. ``check`` is called before each rendering (a caller's
    time bound: it raises to stop).
    """
    n = len(paragraph.clusters)
    one = [paragraph.line(0, n)]
    one_size = _guess(one, sizes.largest, box_w, box_h)
    if one_size >= sizes.wrap_below or not wrap or n < 2:
        block = _render_fit(one, max(one_size, sizes.smallest), box_w, box_h, sizes.smallest, check)
        if block is not None:
            return block
    elif (two := _two_lines(paragraph, sizes.largest, check)) is not None:
        two_size = _guess(two, sizes.largest, box_w, box_h)
        if two_size > one_size:
            block = _render_fit(two, max(two_size, sizes.smallest), box_w, box_h, sizes.smallest, check)
            if block is not None:
                return block
        block = _render_fit(one, max(one_size, sizes.smallest), box_w, box_h, sizes.smallest, check)
        if block is not None:
            return block
    check()
    return _ellipsized(paragraph, box_w, box_h, sizes.smallest, library, bold, wrap, check)


def _ellipsized(
    paragraph: Paragraph,
    box_w: int,
    box_h: int,
    size: int,
    library: FontLibrary,
    bold: bool,
    wrap: bool,
    check: Callable[[], None],
) -> Block | None:
    """At the smallest size, keep as many clusters as fit (binary search) and end with an ellipsis."""
    n = len(paragraph.clusters)
    first_end, second_start = 0, 0
    if wrap and n >= 2:
        # Fill line one as far as it goes, breaking at a space when there is one.
        points = sorted(_break_points_all(paragraph), reverse=True)
        for end, start in points:
            check()
            if advance(paragraph.line(0, end), size) <= box_w * 0.97:
                first_end, second_start = end, start
                break
    lines_budget = 2 if first_end else 1
    if lines_budget == 2 and size * (1 + LEADING) > box_h:
        lines_budget, first_end, second_start = 1, 0, 0
    low, high, best = second_start, n, None
    while low <= high:
        keep = (low + high) // 2
        check()
        cut = ellipsis_paragraph(paragraph, keep, library, bold)
        if first_end:
            start = min(second_start, len(cut.clusters) - 1)  # a dropped trailing space shortens the cut
            lines = [cut.line(0, min(first_end, start)), cut.line(start, len(cut.clusters))]
        else:
            lines = [cut.line(0, len(cut.clusters))]
        mask = draw_lines(lines, size)
        if mask is not None and mask.width <= box_w and mask.height <= box_h:
            best, low = Block(mask, size, len(lines), ellipsized=True), keep + 1
        else:
            high = keep - 1
    return best


def _break_points_all(paragraph: Paragraph) -> list[tuple[int, int]]:
    parts = paragraph.clusters
    # A space is dropped at the break; a hyphen stays at the end of line one.
    words = [(i, i + 1) for i, c in enumerate(parts) if c == " " and 0 < i < len(parts) - 1]
    words += [(i + 1, i + 1) for i, c in enumerate(parts) if c in "-\u2010" and 0 < i < len(parts) - 2]
    return sorted(words) or [(i, i) for i in range(1, len(parts))]
