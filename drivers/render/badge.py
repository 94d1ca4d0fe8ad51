"""The badge image: name large, company and role smaller, the QR code with the attendee id.

Portrait stock (4x6 in Zebra, 62 mm Brother tape, 80 mm receipt) stacks the text above a centred QR code;
landscape stock (4x3 in, 62x29 mm) puts the text on the left and the QR code on the right. Every size is a
fraction of the label so one layout serves 203, 300 and 600 dpi. The result is 1-bit by threshold, never
dithered: thermal heads print dithered text as grey fuzz.
"""

from __future__ import annotations

from dataclasses import dataclass

from PIL import Image, ImageDraw

from drivers.base import Badge, RenderError
from drivers.label import LabelConfig
from drivers.render import fonts, runs
from drivers.render.fonts import FontLibrary
from drivers.render.qr import qr_mask
from drivers.render.textblock import Block, Sizes, fit

_MM_PER_INCH = 25.4


def label_dots(label: LabelConfig) -> tuple[int, int]:
    """Label size in dots, each rounded down to a whole byte of dots (every raster format packs 8 per byte)."""

    def dots(mm: float) -> int:
        return int(round(mm / _MM_PER_INCH * label.dpi, 6)) // 8 * 8

    return dots(label.width_mm), dots(label.height_mm)


@dataclass(frozen=True)
class _Frame:
    """The part of the badge given to the text, and where the QR code goes."""

    text_x: int
    text_y: int
    text_w: int
    text_h: int
    qr_x: int  # centre of the QR column
    qr_y: int  # top of the QR symbol
    qr_side: int
    id_h: int  # height reserved under the QR code for the printed id


def _frame(width: int, height: int, dpmm: float) -> _Frame:
    margin = max(round(4 * dpmm), round(0.06 * min(width, height)))
    inner_w, inner_h = width - 2 * margin, height - 2 * margin
    gap = max(round(2 * dpmm), round(0.02 * min(width, height)))
    if width > 1.1 * height:  # landscape: text left, QR right
        id_h = max(round(2.5 * dpmm), round(0.06 * inner_h))
        side = min(round(0.40 * inner_w), inner_h - id_h)
        text_w = inner_w - side - gap
        qr_y = margin + (inner_h - side - id_h) // 2
        return _Frame(margin, margin, text_w, inner_h, width - margin - side // 2, qr_y, side, id_h)
    id_h = max(round(2.5 * dpmm), round(0.028 * inner_h))
    side = min(round(0.56 * inner_w), round(0.38 * inner_h))
    qr_y = height - margin - id_h - side
    return _Frame(margin, margin, inner_w, qr_y - gap - margin, width // 2, qr_y, side, id_h)


def _block(
    field: str, text: str, box: tuple[int, int], sizes: Sizes, library: FontLibrary, bold: bool, wrap: bool
) -> Block | None:
    if not text:
        return None
    paragraph = runs.itemize(field, text, library, bold)
    block = fit(paragraph, box[0], box[1], sizes, library, bold, wrap)
    if block is None and field == "name":
        raise RenderError(f"name {text!r} cannot be fitted on a {box[0]}x{box[1]} dot area of this label")
    return block


def render_badge(badge: Badge, label: LabelConfig, *, fonts_library: FontLibrary | None = None) -> Image.Image:
    """Draw one badge for the label stock loaded in the printer.

    Args:
        badge: what to print; ``name`` is required, ``company`` and ``role`` may be empty.
        label: label size and printer resolution.
        fonts_library: the fonts to draw with (default: bundled, then system Noto fonts).

    Returns:
        A mode "1" image (0 = black dot), label width x height in dots, each a multiple of 8.

    Raises:
        RenderError: a field has characters no available font draws (the reason names the field and code
            points), the name is empty, or the attendee id cannot be made into a scannable QR code.
    """
    library = fonts_library or fonts.default_library()
    width, height = label_dots(label)
    dpmm = label.dpi / _MM_PER_INCH
    frame = _frame(width, height, dpmm)
    name, company, role = runs.clean(badge.name), runs.clean(badge.company), runs.clean(badge.role)
    if not name:
        raise RenderError(f"name {badge.name!r} is empty once control characters are removed")

    tw, th = frame.text_w, frame.text_h
    name_sizes = Sizes(round(0.24 * tw), round(0.10 * tw), max(round(3 * dpmm), round(0.045 * tw)))
    company_sizes = Sizes(round(0.085 * tw), round(0.05 * tw), max(round(2.2 * dpmm), round(0.04 * tw)))
    role_sizes = Sizes(round(0.06 * tw), round(0.04 * tw), max(round(2 * dpmm), round(0.032 * tw)))

    name_block = _block("name", name, (tw, round(0.56 * th)), name_sizes, library, bold=True, wrap=True)
    company_block = _block("company", company, (tw, round(0.16 * th)), company_sizes, library, False, False)
    # The role sits in a pill whose padding grows with the text: 0.45 em each side, 0.25 em above and below.
    role_box = (tw - round(0.9 * role_sizes.largest), round(0.14 * th / 1.5))
    role_block = _block("role", role, role_box, role_sizes, library, bold=True, wrap=False)
    pill_pad_x = round(0.45 * role_block.size) if role_block else 0
    pill_pad_y = round(0.25 * role_block.size) if role_block else 0

    canvas = Image.new("L", (width, height), 255)
    draw = ImageDraw.Draw(canvas)
    gap_name = round(0.09 * th)
    gap_small = round(0.05 * th)
    pill_h = role_block.height + 2 * pill_pad_y if role_block else 0
    parts: list[tuple[int, int]] = []  # (height, gap before)
    for height_, gap in (
        (name_block.height if name_block else 0, 0),
        (company_block.height if company_block else 0, gap_name),
        (pill_h, gap_name if not company_block else gap_small),
    ):
        if height_:
            parts.append((height_, gap if parts else 0))
    total = sum(h + g for h, g in parts)
    y = frame.text_y + max(0, (th - total) // 2)
    cx = frame.text_x + tw // 2
    if name_block:
        canvas.paste(0, (cx - name_block.width // 2, y), name_block.mask)
        y += name_block.height
    if company_block:
        y += gap_name
        canvas.paste(0, (cx - company_block.width // 2, y), company_block.mask)
        y += company_block.height
    if role_block:
        y += gap_small if company_block else gap_name
        pill_w = role_block.width + 2 * pill_pad_x
        x0 = cx - pill_w // 2
        draw.rounded_rectangle((x0, y, x0 + pill_w - 1, y + pill_h - 1), radius=pill_h // 2, fill=0)
        canvas.paste(255, (x0 + pill_pad_x, y + pill_pad_y), role_block.mask)

    _draw_qr(canvas, badge.attendee_id, frame, dpmm, library)
    return canvas.convert("1", dither=Image.Dither.NONE)


def _draw_qr(canvas: Image.Image, attendee_id: str, frame: _Frame, dpmm: float, library: FontLibrary) -> None:
    # Modules of 0.375 mm (3 dots at 203 dpi) are the least a door scanner reads reliably off a thermal label.
    # The quiet zone lies inside the QR cell, which the text never enters, so scanners always find it.
    mask = qr_mask(attendee_id, frame.qr_side, max(2, round(0.375 * dpmm)))
    x = frame.qr_x - mask.width // 2
    y = frame.qr_y + (frame.qr_side - mask.width) // 2
    canvas.paste(0, (x, y), mask)
    _draw_id(
        canvas, attendee_id, frame, frame.qr_x - frame.qr_side // 2, frame.qr_y + frame.qr_side, frame.qr_side, library
    )


def _draw_id(
    canvas: Image.Image, attendee_id: str, frame: _Frame, x: int, y: int, w: int, library: FontLibrary
) -> None:
    """The id in small print under the code, for staff typing it in by hand; left out if a font lacks it."""
    text = runs.clean(attendee_id)
    if not text:
        return
    try:
        paragraph = runs.itemize("attendee_id", text, library, bold=False)
    except RenderError:
        return  # the QR code still carries it; a partial id would mislead
    size = frame.id_h
    block = fit(paragraph, w, frame.id_h, Sizes(size, size, max(8, size // 2)), library, False, False)
    if block is not None:
        canvas.paste(0, (x + (w - block.width) // 2, y), block.mask)


__all__ = ["label_dots", "render_badge"]
