"""TSPL: the badge as one label job, and such jobs read back to images.

TSC's TSPL/TSPL2 Programming Manual: ``SIZE m mm,n mm`` (the label), ``GAP m mm,n mm`` (the gap between labels;
``GAP 0,0`` for continuous stock), ``CLS`` (clear the image buffer), ``BITMAP X,Y,width,height,mode,data`` (width
in bytes, height in dots, mode 0 = overwrite; a 0 bit prints a dot, a 1 bit leaves it white) and ``PRINT 1``
(print the image buffer once). Each command ends with CR LF.
"""

from __future__ import annotations

import re

from PIL import Image, ImageOps

from drivers.render.bits import fit_width, pack, unpack

_INVERT = bytes(255 - i for i in range(256))
_NUMBER = rb"\s*([0-9]+(?:\.[0-9]+)?)\s*(mm)?\s*"
_SIZE = re.compile(rb"SIZE" + _NUMBER + rb"," + _NUMBER + rb"$", re.I)
_BITMAP = re.compile(rb"BITMAP\s*([0-9]+)\s*,\s*([0-9]+)\s*,\s*([0-9]+)\s*,\s*([0-9]+)\s*,\s*([0-9])\s*,", re.I)
_PRINT = re.compile(rb"PRINT\s*([0-9]+)(?:\s*,\s*([0-9]+))?\s*$", re.I)


def _mm(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def encode_tspl(image: Image.Image, *, width_mm: float, height_mm: float, gap_mm: float, dpi: int = 203) -> bytes:
    """A complete TSPL job: the label's size and gap, the badge as one BITMAP, one print.

    Raises:
        ValueError: the image has ink outside the label.
    """
    width = int(round(width_mm / 25.4 * dpi, 6)) // 8 * 8
    if image.width > width:
        image = fit_width(image, width, "this label")
    row_bytes, rows, data = pack(image)
    head = (
        f"SIZE {_mm(width_mm)} mm,{_mm(height_mm)} mm\r\nGAP {_mm(gap_mm)} mm,0 mm\r\nDIRECTION 1\r\nCLS\r\n"
        f"BITMAP 0,0,{row_bytes},{rows},0,"
    )
    return head.encode("ascii") + data.translate(_INVERT) + b"\r\nPRINT 1\r\n"


def decode_tspl(data: bytes, dpi: int = 203) -> list[Image.Image]:
    """Every printed label of a TSPL job as mode "1" images (``PRINT m`` gives m copies).

    Raises:
        ValueError: a truncated BITMAP or a label with no SIZE.
    """
    data = bytes(data)
    labels: list[Image.Image] = []
    canvas: Image.Image | None = None
    size: tuple[int, int] | None = None
    i = 0
    while i < len(data):
        end = data.find(b"\n", i)
        line_end = len(data) if end < 0 else end
        line = data[i:line_end].strip(b"\r\n ")
        if (bitmap := _BITMAP.match(data, i)) is not None:
            x, y, row_bytes, rows, _mode = (int(g) for g in bitmap.groups())
            start = bitmap.end()
            body = data[start : start + row_bytes * rows]
            if len(body) < row_bytes * rows:
                raise ValueError(f"BITMAP at offset {i} is truncated")
            if canvas is None:
                raise ValueError(f"BITMAP at offset {i} before SIZE and CLS")
            canvas.paste(unpack(body.translate(_INVERT), row_bytes, rows), (x, y))
            i = start + row_bytes * rows
            continue
        if (m := _SIZE.match(line)) is not None:
            w, h = float(m.group(1)), float(m.group(3))
            to_dots = dpi / 25.4 if m.group(2) else dpi  # without "mm" the size is in inches
            size = (int(round(w * to_dots, 6)), int(round(h * to_dots, 6)))
        elif line.upper() == b"CLS":
            if size is None:
                raise ValueError("CLS before SIZE")
            canvas = Image.new("1", size, 1)
        elif (m := _PRINT.match(line)) is not None and canvas is not None:
            labels += [canvas.copy() for _ in range(int(m.group(1)))]
        i = line_end + 1
    return labels


def ink_box(image: Image.Image) -> tuple[int, int, int, int] | None:
    """The bounding box of the black dots (tests compare decoded labels by it)."""
    return ImageOps.invert(image.convert("L")).getbbox()
