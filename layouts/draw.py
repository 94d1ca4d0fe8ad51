"""Drawing a badge from a layout: prepared once per label (images and background rasterised), then per badge.

Text goes through the built-in design's machinery (``drivers.render``: font per character, raqm bidi and shaping,
shrink then wrap then ellipsis), so a layout prints every script the built-in design does. Everything is placed in
whole dots from mm at the label's resolution, so one layout serves 203, 300 and 600 dpi.

``rotate`` turns an element clockwise inside its box: at 90 its text reads top to bottom, at 180 it is upside
down (the back half of a folded butterfly badge).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from PIL import Image, ImageDraw

from drivers.base import Badge, RenderError
from drivers.label import LabelConfig
from drivers.render import fonts, runs
from drivers.render.badge import label_dots
from drivers.render.fonts import FontLibrary
from drivers.render.qr import qr_mask
from drivers.render.textblock import Block, Sizes, fit
from layouts import assets
from layouts.code128 import barcode_mask
from layouts.errors import LayoutError
from layouts.model import (
    BarcodeElement,
    BoxElement,
    ImageElement,
    Layout,
    Placed,
    QrElement,
    TextElement,
    code_min_module,
    job_values,
)
from layouts.model import describe as model_describe

log = logging.getLogger("layouts")

_MM_PER_INCH = 25.4
#: Fitted texts kept per prepared layout, by the bytes of their masks: what recurs (a band's ticket type, a
#: company, pronouns) stays; texts of one person (name, attendee id) are never kept.
BLOCKS_BYTES = 512 * 1024
_PERSONAL = frozenset(["name", "attendee_id", "job_id"])
_POINTS_PER_INCH = 72.0
#: The longest one badge's drawing may take. A layout that asks more (a stored one `layout set` never checked, or
#: a job's fields that fill a template past reason) would hold the printer and stop the agent's watchdog: past this
#: the drawing stops itself, between elements and between the renderings of a fit, and the job is dead-lettered.
DRAW_SECONDS = 5.0
#: The longest text one element draws, once its template is filled: a badge's line is a name or a company, and
#: shaping a text costs time in its length before a single rendering can be checked.
MAX_DRAWN_CHARS = 2000
#: Clockwise turns as Pillow's (counter-clockwise) transposes.
_TURN = {
    90: Image.Transpose.ROTATE_270,
    180: Image.Transpose.ROTATE_180,
    270: Image.Transpose.ROTATE_90,
}


@dataclass(frozen=True)
class Drawn:
    """A drawn badge ("1", 0 = black dot) and the fields its templates named that this job left empty."""

    image: Image.Image
    empty_fields: tuple[str, ...]


@dataclass(frozen=True)
class _Box:
    x: int
    y: int
    w: int  # in the element's own (unrotated) frame
    h: int
    rotate: int


class Prepared:
    """One layout ready to draw on one label: positions in dots, images and background already rasterised."""

    def __init__(self, layout: Layout, label: LabelConfig) -> None:
        self.layout = layout
        self.label = label
        self.width, self.height = label_dots(label)
        self.dpmm = label.dpi / _MM_PER_INCH
        self.boxes = {p.index: self._box(p) for p in layout.elements}
        self.base = self._background()
        self.images: dict[int, Image.Image] = {}
        # Fitted text by (element, text, fonts): a band's "Speaker", a company or a pronoun recurs badge after badge,
        # and fitting is most of a badge's drawing. Bounded; a lock, as draw-ahead may draw beside the pull loop.
        self._blocks: dict[tuple[int, str, int], Block | None] = {}
        self._blocks_bytes = 0
        self._blocks_lock = threading.Lock()
        for placed in layout.elements:
            if isinstance(placed.element, ImageElement):
                self.images[placed.index] = self._image(placed.element, self.boxes[placed.index])

    def _box(self, placed: Placed) -> _Box:
        return box_in_dots(placed, self.dpmm)

    def _background(self) -> Image.Image:
        base = Image.new("L", (self.width, self.height), 255)
        name = self.layout.background
        if name is None:
            return base
        w, h = background_dots(self.layout, self.dpmm)
        grey = assets.raster_prerendered(self.layout.assets, name, w, h)
        if grey.size != (w, h):  # a PNG of other proportions is stretched to the label it was made for
            grey = grey.resize((w, h), Image.Resampling.LANCZOS)
        base.paste(0, (0, 0), assets.ink(grey, self.layout.background_mode))
        return base

    def _image(self, element: ImageElement, box: _Box) -> Image.Image:
        grey = assets.raster_prerendered(self.layout.assets, element.src, box.w, box.h)
        mask = Image.new("L", (box.w, box.h), 0)
        mask.paste(assets.ink(grey, element.mode), ((box.w - grey.width) // 2, (box.h - grey.height) // 2))
        return _turn(mask, box.rotate)

    def draw(self, badge: Badge, library: FontLibrary | None = None) -> Drawn:
        """Draw one badge.

        Raises:
            RenderError: the name is empty or cannot be fitted or drawn (no font has its characters), or a QR code
                or barcode cannot hold its data; the reason names the element.
        """
        library = library or fonts.default_library()
        values = job_values(badge)
        empty: set[str] = set()
        canvas = self.base.copy()
        deadline = time.monotonic() + DRAW_SECONDS
        for placed in self.layout.elements:
            where = f"{self.layout.source}: elements[{placed.index}] ({placed.element.type})"
            check = _deadline_check(deadline, where)
            check()
            if placed.applies_to(values):
                try:
                    self._element(canvas, placed, values, empty, library, check)
                except RenderError as exc:
                    if str(exc).startswith(self.layout.source):
                        raise
                    raise RenderError(f"{where}: {exc}") from exc
                except (ValueError, OSError, MemoryError, Image.DecompressionBombError) as exc:
                    # Pillow and the fonts refuse what they cannot draw with these; it is this badge's fault,
                    # never the agent's: a RenderError dead-letters the job with the reason.
                    raise RenderError(f"{where}: cannot be drawn: {type(exc).__name__}: {exc}") from exc
        drawn = Drawn(canvas.convert("1", dither=Image.Dither.NONE), tuple(sorted(empty)))
        if drawn.empty_fields:
            log.warning(
                "badge drawn with fields its layout names left empty",
                extra={"job_id": badge.job_id, "layout": self.layout.source, "empty": ",".join(drawn.empty_fields)},
            )
        return drawn

    def _element(
        self,
        canvas: Image.Image,
        placed: Placed,
        values: Mapping[str, str],
        empty: set[str],
        library: FontLibrary,
        check: Callable[[], None],
    ) -> None:
        e, box = placed.element, self.boxes[placed.index]
        where = f"{self.layout.source}: elements[{placed.index}] ({e.type})"
        if isinstance(e, BoxElement):
            mask = Image.new("L", (box.w, box.h), 0)
            radius = round(e.radius * self.dpmm)
            ImageDraw.Draw(mask).rounded_rectangle((0, 0, box.w - 1, box.h - 1), radius=radius, fill=255)
            canvas.paste(_ink_colour(e.fill), (box.x, box.y), _turn(mask, box.rotate))
            return
        if isinstance(e, ImageElement):
            canvas.paste(0, (box.x, box.y), self.images[placed.index])
            return
        template = placed.template
        if template is None:  # parse_layout gives every text, qr and barcode element its template
            raise RenderError(f"{where}: has no template")
        text = runs.clean(template.fill(values, empty))
        if not text or template.all_empty(values):
            if placed.holds_name:
                raise RenderError(f"{where}: the name is empty: a badge is never printed without one")
            return  # a template that comes out empty leaves its element out
        if len(text) > MAX_DRAWN_CHARS:
            raise RenderError(f"{where}: its text is {len(text)} characters; at most {MAX_DRAWN_CHARS} are drawn")
        if isinstance(e, TextElement):
            block = self._text(e, placed, text, box, library, where, check)
            if block is None:
                return
            content = Image.new("L", (box.w, box.h), 0)
            # The pill's padding grows with the text: 0.45 em each side, 0.25 em above and below.
            pad = (round(0.45 * block.size), round(0.25 * block.size)) if e.pill is not None else (0, 0)
            x, y = _aligned(e, block.width + 2 * pad[0], block.height + 2 * pad[1], box)
            if e.pill is not None:
                pill = Image.new("L", (box.w, box.h), 0)
                right, bottom = (
                    min(box.w, x + block.width + 2 * pad[0]) - 1,
                    min(box.h, y + block.height + 2 * pad[1]) - 1,
                )
                ImageDraw.Draw(pill).rounded_rectangle((x, y, right, bottom), radius=(bottom - y + 1) // 2, fill=255)
                canvas.paste(_ink_colour(e.pill), (box.x, box.y), _turn(pill, box.rotate))
                x, y = x + pad[0], y + pad[1]
            content.paste(block.mask, (x, y))
            canvas.paste(_ink_colour(e.color), (box.x, box.y), _turn(content, box.rotate))
            return
        if not isinstance(e, QrElement | BarcodeElement):
            return
        min_module = code_min_module(e, self.dpmm)
        try:
            if isinstance(e, QrElement):
                side = min(box.w, box.h)
                fields = template.fields
                what = f"its data ({', '.join('{' + f + '}' for f in fields)})" if fields else "its data"
                symbol = qr_mask(text, side, min_module, what)
                content = Image.new("L", (box.w, box.h), 0)
                content.paste(symbol, ((box.w - symbol.width) // 2, (box.h - symbol.height) // 2))
            elif isinstance(e, BarcodeElement):
                content = barcode_mask(text, box.w, box.h, min_module)
            else:
                return
        except RenderError as exc:
            raise RenderError(f"{where}: {exc}") from exc
        canvas.paste(0, (box.x, box.y), _turn(content, box.rotate))

    def _text(
        self,
        e: TextElement,
        placed: Placed,
        text: str,
        box: _Box,
        library: FontLibrary,
        where: str,
        check: Callable[[], None],
    ) -> Block | None:
        if placed.template is not None and _PERSONAL.intersection(placed.template.fields):
            return self._fit_text(e, placed, text, box, library, where, check)
        key = (placed.index, text, id(library))
        with self._blocks_lock:
            if key in self._blocks:
                return self._blocks[key]
        block = self._fit_text(e, placed, text, box, library, where, check)
        size = block.width * block.height if block is not None else 0
        with self._blocks_lock:
            while self._blocks and self._blocks_bytes + size > BLOCKS_BYTES:
                old = self._blocks.pop(next(iter(self._blocks)))
                self._blocks_bytes -= old.width * old.height if old is not None else 0
            if size <= BLOCKS_BYTES:
                self._blocks[key] = block
                self._blocks_bytes += size
        return block

    def _fit_text(
        self,
        e: TextElement,
        placed: Placed,
        text: str,
        box: _Box,
        library: FontLibrary,
        where: str,
        check: Callable[[], None],
    ) -> Block | None:
        field = placed.template.fields[0] if placed.template and placed.template.fields else "text"
        paragraph = runs.itemize(field, text, library, e.bold)  # RenderError names the field and code points
        largest = self._px(e.font_size)
        if e.fit:
            low = e.min_font_size if e.min_font_size else e.font_size * 0.4
            smallest = min(largest, self._px(low))
            wrap_below = self._px(e.wrap_below) if e.wrap_below else round(largest * 0.6)
            sizes = Sizes(largest, max(smallest, wrap_below), smallest)
        else:
            sizes = Sizes(largest, largest, largest)
        w, h = box.w, box.h
        if e.pill is not None:  # room for the pill's padding
            w, h = w - round(0.9 * largest), round(h / 1.5)
        block = fit(paragraph, w, h, sizes, library, e.bold, e.max_lines == 2, check)
        if block is None and placed.holds_name:
            raise RenderError(f"{where}: name {text!r} cannot be fitted in {e.w:g} x {e.h:g} mm")
        return block

    def _px(self, points: float) -> int:
        return max(1, round(points / _POINTS_PER_INCH * self.label.dpi))


def box_in_dots(placed: Placed, dpmm: float) -> _Box:
    """An element's box in whole dots; ``w`` and ``h`` in its own (unturned) frame."""
    e = placed.element
    x0, y0 = round(e.x * dpmm), round(e.y * dpmm)
    w, h = round((e.x + e.w) * dpmm) - x0, round((e.y + e.h) * dpmm) - y0
    w, h = max(1, w), max(1, h)
    if e.rotate in (90, 270):
        w, h = h, w
    return _Box(x0, y0, w, h, e.rotate)


def background_dots(layout: Layout, dpmm: float) -> tuple[int, int]:
    return round(layout.size.width_mm * dpmm), round(layout.size.height_mm * dpmm)


def prerender(layout: Layout) -> Layout:
    """The layout with its SVG images and PDF background also drawn, as PNGs, for every printer resolution.

    Done once, when a layout is read for `layout set` or `layout preview`, so agents only decode PNGs
    (assets.PRINTER_DPIS). Each file is drawn in one bounded process (assets.rasters).

    Raises:
        LayoutError: a file cannot be drawn within the bounds; each problem names the file and the element.
    """
    files = dict(layout.assets)
    wanted: dict[str, tuple[str, list[tuple[int, int]]]] = {}  # file -> (where it is used, the sizes it needs)
    for dpi in assets.PRINTER_DPIS:
        dpmm = dpi / _MM_PER_INCH
        if layout.background is not None and assets.kind_of(files[layout.background]) == "pdf":
            entry = wanted.setdefault(layout.background, (f"{layout.source}: background", []))
            entry[1].append(background_dots(layout, dpmm))
        for placed in layout.elements:
            element = placed.element
            if isinstance(element, ImageElement) and assets.kind_of(files[element.src]) == "svg":
                box = box_in_dots(placed, dpmm)
                entry = wanted.setdefault(element.src, (f"{layout.source}: {describe(placed.index, layout)}", []))
                entry[1].append((box.w, box.h))
    problems = []
    for name, (where, sizes) in wanted.items():
        needed = [size for size in dict.fromkeys(sizes) if assets.prerendered_name(name, *size) not in files]
        if not needed:
            continue
        kind = assets.kind_of(files[name])
        try:
            drawn = assets.rasters(layout.assets[name], "svg" if kind == "svg" else "pdf", needed)
        except ValueError as exc:
            problems.append(f"{where}: {name} cannot be drawn: {exc}")
            continue
        for (w, h), image in zip(needed, drawn, strict=True):
            files[assets.prerendered_name(name, w, h)] = assets.to_png(image)
    if problems:
        raise LayoutError(problems)
    return replace(layout, assets=files)


def describe(index: int, layout: Layout) -> str:
    """``elements[3] (image 'logo.svg')``, as the layout's checks name an element."""
    elements = layout.document.get("elements")
    raw = elements[index] if isinstance(elements, list) and index < len(elements) else None
    return model_describe(index, raw)


def _deadline_check(deadline: float, where: str) -> Callable[[], None]:
    """A check that stops a badge's drawing once it has run past ``deadline`` (a drawing thread cannot be killed)."""

    def check() -> None:
        if time.monotonic() > deadline:
            raise RenderError(f"{where}: the badge took over {DRAW_SECONDS:g} s to draw; its layout asks too much")

    return check


def _ink_colour(colour: str) -> int:
    return 0 if colour == "black" else 255


def _turn(mask: Image.Image, rotate: int) -> Image.Image:
    return mask.transpose(_TURN[rotate]) if rotate else mask


def _aligned(e: TextElement, width: int, height: int, box: _Box) -> tuple[int, int]:
    free_x, free_y = max(0, box.w - width), max(0, box.h - height)
    x = {"left": 0, "center": free_x // 2, "right": free_x}[e.align]
    y = {"top": 0, "middle": free_y // 2, "bottom": free_y}[e.valign]
    return x, y


def draw_layout(layout: Layout, badge: Badge, label: LabelConfig, library: FontLibrary | None = None) -> Drawn:
    """Prepare and draw in one go (previews, tests); agents keep a :class:`Prepared` per layout and label."""
    return Prepared(layout, label).draw(badge, library)


class LayoutDraw:
    """A driver's ``draw`` for one layout: prepared once per label it is asked for, then drawn per badge."""

    def __init__(self, layout: Layout, library: FontLibrary | None = None) -> None:
        self.layout = layout
        self.library = library
        self._prepared: dict[tuple[float, float, int], Prepared] = {}

    def prepared(self, label: LabelConfig) -> Prepared:
        key = (label.width_mm, label.height_mm, label.dpi)
        found = self._prepared.get(key)
        if found is None:
            found = self._prepared[key] = Prepared(self.layout, label)
        return found

    def __call__(self, badge: Badge, label: LabelConfig) -> Image.Image:
        return self.prepared(label).draw(badge, self.library).image
