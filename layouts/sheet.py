"""A contact sheet: many drawn badges on one page, each under its caption, for a designer to check at a glance."""

from __future__ import annotations

import math
from collections.abc import Sequence

from PIL import Image, ImageDraw

GAP = 16  # dots between badges
CAPTION = 28  # dots for the caption above each badge


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
        draw.text((x, y + 4), caption[:60], fill=0)
        small = image.convert("L").resize((round(image.width * scale), round(image.height * scale)))
        sheet.paste(small, (x, y + CAPTION))
        draw.rectangle((x - 1, y + CAPTION - 1, x + small.width, y + CAPTION + small.height), outline=128)
    return sheet
