"""A run as a PDF, for a print shop or an office printer: sheets of badges with cut marks, a separator page a box.

Each badge is drawn as an agent draws it (``layouts/`` for a venue layout, ``drivers/render`` for the built-in
design) at the PDF's resolution, then placed on the sheet in a grid centred on the page, with cut marks in the
margins along every cut. A butterfly badge (``butterfly``) is folded over its top edge: its back half, above the
front, is the same badge turned upside down, so both sides read once folded. A badge that cannot be drawn (a name in
a script no font has) is never left blank: it is left out, the next badge takes its place, and it is listed (the
caller makes it void, so the door prints it).

The pages are drawn by worker processes (drawing is the slow part, ~25 ms a 4x6 in badge at 300 dpi) and written in
order as they come back compressed (preprint/pdfwriter.py), so memory stays a few pages whatever the run's size.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

from core.errors import UserError
from drivers.label import LabelConfig

#: Sheet sizes in mm (portrait).
SHEETS: dict[str, tuple[float, float]] = {"a4": (210.0, 297.0), "letter": (215.9, 279.4)}
#: The badge size without a venue layout: 4x6 in, the common badge stock (and the agents' default label).
DEFAULT_STOCK = "101.6x152.4"
#: Room at each edge for cut marks, and their length, in mm.
MARGIN_MM = 6.0
MARK_MM = 4.0
#: Pages in flight between the drawing workers and the writer: bounds memory, keeps both workers busy.
AHEAD = 8


@dataclass(frozen=True)
class Cell:
    """One badge to draw: the attendee's code (for the list of those that could not be drawn), its name, the job
    fields the badge is drawn from, and the layout ("" for the built-in design)."""

    code: str
    name: str
    job: Mapping[str, Any]
    layout: str


@dataclass(frozen=True)
class Separator:
    """The page before a box's badges: its label, in letters a person sorting boxes reads across a table."""

    title: str
    lines: tuple[str, ...]


Page = Separator | tuple[Cell, ...]


@dataclass(frozen=True)
class Grid:
    sheet_w: int
    sheet_h: int
    cell_w: int
    cell_h: int
    columns: int
    rows: int
    left: int
    top: int
    butterfly: bool

    @property
    def per_sheet(self) -> int:
        return self.columns * self.rows


def _dots(mm: float, dpi: int) -> int:
    return round(mm / 25.4 * dpi)


def grid(sheet: str, stock: str, dpi: int, per_sheet: int | None, butterfly: bool) -> Grid:
    """The badges' grid on the sheet: as many as fit (or ``per_sheet``, if fewer), centred. UserError when not one
    fits or more are asked for than fit."""
    if sheet not in SHEETS:
        raise UserError(f"--sheet must be one of {', '.join(SHEETS)}")
    try:
        width_mm, height_mm = (float(x) for x in stock.lower().split("x"))
    except ValueError:
        raise UserError(f"a badge size is WIDTHxHEIGHT in mm (such as {DEFAULT_STOCK}), not {stock!r}") from None
    cell_h_mm = height_mm * (2 if butterfly else 1)
    # The sheet turned whichever way holds more badges (two 4x6 in badges fit on A4 only in landscape).
    fits = []
    for page_w, page_h in (SHEETS[sheet], SHEETS[sheet][::-1]):
        columns, rows = int((page_w - 2 * MARGIN_MM) // width_mm), int((page_h - 2 * MARGIN_MM) // cell_h_mm)
        fits.append((max(columns, 0) * max(rows, 0), page_w, page_h, columns, rows))
    _, page_w, page_h, columns, rows = max(fits, key=lambda f: f[0])
    if columns < 1 or rows < 1:
        page_w, page_h = SHEETS[sheet]
        what = "a butterfly badge" if butterfly else "a badge"
        raise UserError(f"{what} of {width_mm:g}x{cell_h_mm:g} mm does not fit on {sheet} ({page_w:g}x{page_h:g} mm)")
    if per_sheet is not None:
        if per_sheet < 1 or per_sheet > columns * rows:
            raise UserError(f"--per-sheet: 1-{columns * rows} badges of {stock} mm fit on {sheet} (asked: {per_sheet})")
        while columns * rows > per_sheet:  # fewer: drop rows first, then columns
            if rows > 1 and columns * (rows - 1) >= per_sheet:
                rows -= 1
            elif columns > 1 and (columns - 1) * rows >= per_sheet:
                columns -= 1
            else:
                break
    sheet_w, sheet_h = _dots(page_w, dpi), _dots(page_h, dpi)
    cell_w, cell_h = _dots(width_mm, dpi), _dots(cell_h_mm, dpi)
    return Grid(
        sheet_w, sheet_h, cell_w, cell_h, columns, rows, (sheet_w - columns * cell_w) // 2,
        (sheet_h - rows * cell_h) // 2, butterfly,
    )  # fmt: skip


def pages(boxes: Sequence[tuple[Separator, Sequence[Cell]]], per_sheet: int) -> Iterator[Page]:
    """A separator page, then the box's badges ``per_sheet`` a page, box after box."""
    for separator, cells in boxes:
        yield separator
        for i in range(0, len(cells), per_sheet):
            yield tuple(cells[i : i + per_sheet])


# -- drawing (in the worker processes) ---------------------------------------------------------------------------

_WORKER: dict[str, Any] = {}


def _init(layouts: Mapping[str, Any], grid_: Grid, stock: str, dpi: int) -> None:
    """A worker's one-time setup: the layouts it draws with, prepared once each, and the label."""
    from layouts.draw import LayoutDraw

    width_mm, height_mm = (float(x) for x in stock.lower().split("x"))
    _WORKER["label"] = LabelConfig(width_mm=width_mm, height_mm=height_mm, dpi=dpi)
    _WORKER["layouts"] = {name: LayoutDraw(layout) for name, layout in layouts.items()}
    _WORKER["grid"] = grid_


def _badge_image(cell: Cell) -> Image.Image:
    from drivers.render import render_badge
    from protocol.jobs import parse_job

    badge = parse_job(dict(cell.job)).badge()
    label = _WORKER["label"]
    if cell.layout:
        drawn: Image.Image = _WORKER["layouts"][cell.layout](badge, label)
        return drawn.convert("1")
    return render_badge(badge, label)


def _marks(draw: ImageDraw.ImageDraw, g: Grid, dpi: int) -> None:
    """Cut marks in the margins, on the line of every cut (the grid's edges and the lines between badges)."""
    mark, gap = _dots(MARK_MM, dpi), _dots(1.0, dpi)
    width = max(1, dpi // 150)
    right, bottom = g.left + g.columns * g.cell_w, g.top + g.rows * g.cell_h
    for x in (g.left + c * g.cell_w for c in range(g.columns + 1)):
        draw.line((x, g.top - gap - mark, x, g.top - gap), fill=0, width=width)
        draw.line((x, bottom + gap, x, bottom + gap + mark), fill=0, width=width)
    for y in (g.top + r * g.cell_h for r in range(g.rows + 1)):
        draw.line((g.left - gap - mark, y, g.left - gap, y), fill=0, width=width)
        draw.line((right + gap, y, right + gap + mark, y), fill=0, width=width)
    if g.butterfly:  # the fold: a short mark at each end of every badge's middle
        for r in range(g.rows):
            y = g.top + r * g.cell_h + g.cell_h // 2
            for x0 in (g.left - gap - mark // 2, right + gap):
                draw.line((x0, y, x0 + mark // 2, y), fill=0, width=width)


def _text(canvas: Image.Image, text: str, box: tuple[int, int, int, int], largest: int) -> None:
    from drivers.base import RenderError
    from drivers.render import fonts
    from drivers.render.runs import itemize
    from drivers.render.textblock import Sizes, fit

    library = fonts.default_library()
    x, y, w, h = box
    try:
        paragraph = itemize("separator", text, library, bold=True)
    except RenderError:
        paragraph = itemize("separator", text.encode("ascii", "backslashreplace").decode(), library, bold=True)
    block = fit(paragraph, w, h, Sizes(largest, largest // 2, max(8, largest // 5)), library, bold=True, wrap=True)
    if block is not None:
        canvas.paste(0, (x + (w - block.mask.width) // 2, y, x + (w - block.mask.width) // 2 + block.mask.width,
                         y + block.mask.height), block.mask)  # fmt: skip


def draw_page(page: Page) -> tuple[int, int, bytes, list[tuple[str, str]]]:
    """One page, drawn and compressed: (width, height, its bits, the cells that could not be drawn: code, why)."""
    from drivers.base import RenderError
    from preprint.pdfwriter import compress

    g: Grid = _WORKER["grid"]
    dpi = _WORKER["label"].dpi
    canvas = Image.new("1", (g.sheet_w, g.sheet_h), 1)
    failed: list[tuple[str, str]] = []
    if isinstance(page, Separator):
        margin = _dots(20, dpi)
        _text(canvas, page.title, (margin, g.sheet_h // 3, g.sheet_w - 2 * margin, _dots(40, dpi)), _dots(25, dpi))
        for n, line in enumerate(page.lines):
            top = g.sheet_h // 3 + _dots(50 + 12 * n, dpi)
            _text(canvas, line, (margin, top, g.sheet_w - 2 * margin, _dots(10, dpi)), _dots(7, dpi))
        return g.sheet_w, g.sheet_h, compress(canvas), failed
    slot = 0
    for cell in page:
        try:
            image = _badge_image(cell)
        except (RenderError, ValueError) as exc:
            failed.append((cell.code, str(exc)))
            continue
        x = g.left + (slot % g.columns) * g.cell_w
        y = g.top + (slot // g.columns) * g.cell_h
        image = image.crop((0, 0, g.cell_w, g.cell_h // 2 if g.butterfly else g.cell_h))
        if g.butterfly:
            canvas.paste(image.rotate(180), (x, y))
            canvas.paste(image, (x, y + g.cell_h // 2))
        else:
            canvas.paste(image, (x, y))
        slot += 1
    _marks(ImageDraw.Draw(canvas), g, dpi)
    return g.sheet_w, g.sheet_h, compress(canvas), failed


# -- writing (in the caller's process) ---------------------------------------------------------------------------


@dataclass
class Written:
    pages: int = 0
    badges: int = 0
    #: (code, why) of each badge that could not be drawn: left out, never a blank badge.
    failed: list[tuple[str, str]] = field(default_factory=list)


def write(
    out: Path,
    title: str,
    boxes: Sequence[tuple[Separator, Sequence[Cell]]],
    layouts: Mapping[str, Any],
    *,
    sheet: str = "a4",
    per_sheet: int | None = None,
    dpi: int = 300,
    stock: str = DEFAULT_STOCK,
    butterfly: bool = False,
    workers: int | None = None,
) -> Written:
    """Write the PDF: each box's separator page, then its badges. Blocking (run it in a thread from asyncio).

    The pages are drawn by ``workers`` processes (default: one a core), started fresh (``spawn``: no copy of the
    caller's threads or connections), and written in order, at most ``AHEAD`` pages in flight.
    """
    from preprint.pdfwriter import PdfWriter

    if not 72 <= dpi <= 600:
        raise UserError(f"--dpi must be 72-600 (it was {dpi})")
    g = grid(sheet, stock, dpi, per_sheet, butterfly)
    done = Written()
    count = workers or min(os.cpu_count() or 1, 4)
    tmp = out.with_name(out.name + ".part")
    context = multiprocessing.get_context("spawn")
    with (
        tmp.open("wb") as fp,
        ProcessPoolExecutor(count, mp_context=context, initializer=_init, initargs=(layouts, g, stock, dpi)) as pool,
    ):
        writer = PdfWriter(fp, title)
        pending: list[tuple[Page, Future[tuple[int, int, bytes, list[tuple[str, str]]]]]] = []

        def flush(keep: int) -> None:
            while len(pending) > keep:
                page, future = pending.pop(0)
                width, height, data, failed = future.result()
                writer.add(width, height, dpi, data)
                done.pages += 1
                if not isinstance(page, Separator):
                    done.badges += len(page) - len(failed)
                done.failed += failed

        for page in pages(boxes, g.per_sheet):
            pending.append((page, pool.submit(draw_page, page)))
            flush(AHEAD)
        flush(0)
        writer.close()
    tmp.replace(out)
    return done
