"""A badge as a document an IPP printer takes: PWG raster (PWG 5102.4), PNG or JPEG, one page of the media size.

The badge is drawn (mode "1", 0 = black) on the printable area; the page adds the printer's margins around it, so
the printer does not scale it and the QR code keeps its module size.
"""

from __future__ import annotations

import io
import struct
from typing import Any

from PIL import Image

from drivers.ipp.status import JPEG, PNG, PWG_RASTER, Plan

_HEADER = 1796
_MM100_PER_INCH = 2540


def page(image: Image.Image, plan: Plan) -> Image.Image:
    """The badge placed on the whole page at the plan's margins (white around it)."""
    width = plan.width * plan.dpi // _MM100_PER_INCH
    height = plan.height * plan.dpi // _MM100_PER_INCH
    left = plan.margins[0] * plan.dpi // _MM100_PER_INCH
    top = plan.margins[1] * plan.dpi // _MM100_PER_INCH
    sheet = Image.new("1", (width, height), 1)
    sheet.paste(image.convert("1"), (left, top))
    return sheet


def _c_string(text: str) -> bytes:
    return text.encode("ascii")[:63].ljust(64, b"\0")


def pwg_header(width: int, height: int, dpi: int, raster_type: str, media_name: str) -> bytes:
    """The page header (the CUPS ``cups_page_header2_t`` layout, big-endian, as PWG 5102.4 defines it)."""
    black = raster_type == "black_1"
    bits = 1 if black else 8
    bytes_per_line = (width * bits + 7) // 8
    header = bytearray(_HEADER)
    header[0:64] = _c_string("PwgRaster")
    points = (round(width * 72 / dpi), round(height * 72 / dpi))

    def put(offset: int, *values: int) -> None:
        struct.pack_into(f">{len(values)}I", header, offset, *values)

    put(276, dpi, dpi)  # HWResolution
    put(340, 1)  # NumCopies
    put(352, *points)  # PageSize, in points
    put(372, width, height)  # Width, Height (pixels)
    put(384, bits, bits, bytes_per_line)  # BitsPerColor, BitsPerPixel, BytesPerLine
    put(396, 0, 3 if black else 18)  # ColorOrder chunky; ColorSpace black (3) or sGray (18)
    put(420, 1)  # NumColors
    put(452, 1, 1, 1)  # TotalPageCount, CrossFeedTransform, FeedTransform
    header[1668:1732] = _c_string("")  # RenderingIntent: the printer's default
    header[1732:1796] = _c_string(media_name)
    return bytes(header)


def _encode_line(line: bytes, unit: int) -> bytes:
    """One line's pixels in PWG raster's PackBits variant: a run of n equal pixels as n-1 and the pixel, n literal
    pixels as 257-n and the pixels (n from 2 to 128; a single pixel is a run of one)."""
    pixels = [line[i : i + unit] for i in range(0, len(line), unit)]
    out = bytearray()
    i, count = 0, len(pixels)
    while i < count:
        run = 1
        while i + run < count and run < 128 and pixels[i + run] == pixels[i]:
            run += 1
        if run > 1 or i + 1 == count:
            out.append(run - 1)
            out += pixels[i]
            i += run
            continue
        start = i
        while i < count and i - start < 128 and (i + 1 == count or pixels[i + 1] != pixels[i]):
            i += 1
        literal = pixels[start:i]
        if len(literal) == 1:
            out.append(0)
        else:
            out.append(257 - len(literal))
        out += b"".join(literal)
    return bytes(out)


def encode_pwg(sheet: Image.Image, dpi: int, raster_type: str, media_name: str = "") -> bytes:
    """One page of PWG raster: ``black_1`` (1 = black) or ``sgray_8`` (0 = black)."""
    width, height = sheet.size
    if raster_type == "black_1":
        raw = sheet.convert("1").tobytes()
        raw = bytes(b ^ 0xFF for b in raw)  # Pillow packs 1 = white; PWG black_1 has 1 = black
        unit, stride = 1, (width + 7) // 8
    else:
        raw = sheet.convert("L").tobytes()
        unit, stride = 1, width
    out = bytearray(b"RaS2")
    out += pwg_header(width, height, dpi, raster_type, media_name)
    y = 0
    while y < height:
        line = raw[y * stride : (y + 1) * stride]
        repeat = 1
        while y + repeat < height and repeat < 256 and raw[(y + repeat) * stride : (y + repeat + 1) * stride] == line:
            repeat += 1
        out.append(repeat - 1)
        out += _encode_line(line, unit)
        y += repeat
    return bytes(out)


def encode(image: Any, plan: Plan) -> bytes:
    """The document for one badge, with :meth:`Plan.header` in front (read off by the driver before sending)."""
    sheet = page(image, plan)
    if plan.format == PWG_RASTER:
        body = encode_pwg(sheet, plan.dpi, plan.raster_type, plan.media_name)
    else:
        buffer = io.BytesIO()
        if plan.format == PNG:
            sheet.save(buffer, "PNG", dpi=(plan.dpi, plan.dpi), optimize=False)
        elif plan.format == JPEG:
            sheet.convert("L").save(buffer, "JPEG", dpi=(plan.dpi, plan.dpi), quality=95)
        else:
            raise ValueError(f"no encoder for {plan.format}")
        body = buffer.getvalue()
    return plan.header() + body
