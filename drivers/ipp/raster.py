"""A badge as a document an IPP printer takes: PWG raster (PWG 5102.4), PNG or JPEG, one page of the media size.

The badge is drawn (mode "1", 0 = black) on the printable area; the page adds the printer's margins around it, so
the printer does not scale it and the QR code keeps its module size.
"""

from __future__ import annotations

import io
import itertools
import re
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
    if image.mode == "1" and image.size == (width, height) and left == top == 0:
        return image  # the badge fills the page (a label printer without margins): a copy would cost 5-15 ms
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


#: A run of two or more equal bytes; what lies between two runs is a literal. The regex engine finds them in C,
#: where a Python loop over each byte would take some 100 ms for a 600 dpi page.
_RUN = re.compile(rb"(.)\1+", re.DOTALL)


def _encode_line(line: bytes) -> bytes:
    """One line in PWG raster's PackBits variant (PWG 5102.4), a byte as the unit (one gray pixel, or eight 1-bit
    ones): a run of n equal bytes as n-1 and the byte, n literal bytes as 257-n and the bytes (n from 2 to 128; a
    single byte is a run of one). Runs longer than 128 are cut into 128s; a byte left over from one starts the
    literal after it."""
    out = bytearray()
    at = 0  # where the bytes not yet coded begin: a literal, up to the next run
    for run in _RUN.finditer(line):
        start, end = run.span()
        if start > at:
            _literal(out, line[at:start])
        byte = run.group(1)
        length = end - start
        if length <= 128:  # nearly every run: the short way
            out.append(length - 1)
            out += byte
            at = end
            continue
        full, left = divmod(length, 128)
        out += (b"\x7f" + byte) * full
        if left == 1:  # the last byte of a run cut into 128s goes with the literal after it
            at = end - 1
            continue
        if left:
            out.append(left - 1)
            out += byte
        at = end
    if at < len(line):
        _literal(out, line[at:])
    return bytes(out)


def _literal(out: bytearray, literal: bytes) -> None:
    """Literal bytes, 128 at most to a code."""
    for at in range(0, len(literal), 128):
        chunk = literal[at : at + 128]
        out.append(257 - len(chunk) if len(chunk) > 1 else 0)
        out += chunk


def encode_pwg(sheet: Image.Image, dpi: int, raster_type: str, media_name: str = "") -> bytes:
    """One page of PWG raster: ``black_1`` (1 = black) or ``sgray_8`` (0 = black)."""
    width, height = sheet.size
    black = raster_type == "black_1"
    if black:
        # One byte a pixel (0 or 255) as Pillow holds a mode "1" image: a copy, where packing the bits costs 8 ms.
        pixels = (sheet if sheet.mode == "1" else sheet.convert("1")).tobytes("raw", "L")
    else:
        pixels = sheet.convert("L").tobytes()
    # A badge has a few hundred distinct lines among thousands (blank bands, a glyph's straight strokes, a QR code's
    # module rows): equal lines in a row are one line repeated (up to 256 at a time), and each distinct line is
    # packed and coded once.
    distinct: dict[bytes, int] = {}
    repeats: list[tuple[int, int]] = []  # (distinct line, times in a row)
    for line, group in itertools.groupby(pixels[y : y + width] for y in range(0, width * height, width)):
        repeats.append((distinct.setdefault(line, len(distinct)), sum(1 for _ in group)))
    lines: list[bytes] = list(distinct)
    if black and lines:
        # Pillow's "1;I" packer writes 1 for black, as PWG's black_1 has it, and leaves the bits past the width 0
        # (white), so a page whose width is not a whole byte has no black sliver a printer might not mask.
        stride = (width + 7) // 8
        packed = Image.frombytes("1", (width, len(lines)), b"".join(lines), "raw", "L").tobytes("raw", "1;I")
        lines = [packed[i : i + stride] for i in range(0, len(packed), stride)]
    coded = [_encode_line(line) for line in lines]
    out = bytearray(b"RaS2")
    out += pwg_header(width, height, dpi, raster_type, media_name)
    for index, repeat in repeats:
        body = coded[index]
        full, left = divmod(repeat, 256)
        out += (b"\xff" + body) * full
        if left:
            out.append(left - 1)
            out += body
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
