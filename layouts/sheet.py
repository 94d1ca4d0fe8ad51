"""A contact sheet: many drawn badges on one page, each under its caption, for a designer to check at a glance."""

from __future__ import annotations

import math
from collections.abc import Sequence

from PIL import Image, ImageDraw

from drivers.base import RenderError
from drivers.render import fonts
from drivers.render.runs import itemize
from drivers.render.textblock import Sizes, fit

GAP = 16  # dots between badges
CAPTION = 28  # dots for the caption above each badge
CAPTION_SIZES = Sizes(largest=18, wrap_below=18, smallest=12)  # one line; a long caption ends in an ellipsis


def caption_mask(text: str, width: int) -> Image.Image | None:
    """``text`` as an ink mask (mode "L", 255 = ink) at most ``width`` wide, in the badges' own fonts.

    The sheet checks names in every script, so its captions use the fonts and shaping the badges do (Pillow's
    built-in font has no ö, no Arabic, no CJK and would draw boxes). A character no installed font has is shown as
    ``?``: the badge beside it already says whether it could be drawn.
    """
    library = fonts.default_library()
    faces = library.faces(bold=False)
    shown = "".join(c if c.isspace() or any(ord(c) in fonts.coverage(f) for f in faces) else "?" for c in text)
    try:
        paragraph = itemize("caption", shown, library, bold=False)
    except RenderError:  # a script that needs shaping, on a Pillow without raqm: its code points instead
        paragraph = itemize("caption", shown.encode("ascii", "backslashreplace").decode(), library, bold=False)
    if not paragraph.clusters:
        return None
    block = fit(paragraph, width, CAPTION - 4, CAPTION_SIZES, library, bold=False, wrap=False)
    return None if block is None else block.mask


def contact_sheet(badges: Sequence[tuple[str, Image.Image]], columns: int = 4, scale: float = 0.5) -> Image.Image:
    """The badges (caption, image), ``scale`` of their size, ``columns`` a row, on white; mode "L"."""
    if not badges:
        return Image.new("L", (1, 1), 255)
    width = max(round(image.width * scale) for _, image in badges)
    height = max(round(image.height * scale) for _, image in badges)
    columns = max(1, min(columns, len(badges)))
    rows = math.ceil(len(badges) / columns)
    sheet = Image.new("L", (columns * (width + GAP) + GAP, rows * (height + CAPTION + GAP) + GAP), 255)
    draw = ImageDraw.Draw(sheet)
    for number, (caption, image) in enumerate(badges):
        x = GAP + (number % columns) * (width + GAP)
        y = GAP + (number // columns) * (height + CAPTION + GAP)
        mask = caption_mask(caption, width)
        if mask is not None:
            sheet.paste(0, (x, y + 2, x + mask.width, y + 2 + mask.height), mask)
        small = image.convert("L").resize((round(image.width * scale), round(image.height * scale)))
        sheet.paste(small, (x, y + CAPTION))
        draw.rectangle((x - 1, y + CAPTION - 1, x + small.width, y + CAPTION + small.height), outline=128)
    return sheet
