"""The PWG raster encoder (drivers/ipp/raster.py): byte for byte what a plain reading of PWG 5102.4's line coding
gives (the reference below, which walks every pixel), and read back by an independent decoder (tests/support/ipp.py,
``read_pwg``). That a printer's own reader takes it is tests/drivers/test_ipp.py's (ippevepcl, in ippeveprinter's job
command)."""

from __future__ import annotations

import random

import pytest
from PIL import Image, ImageChops

from drivers.base import Badge
from drivers.ipp import raster
from drivers.ipp.status import PWG_RASTER, Plan
from drivers.label import LabelConfig
from drivers.render import render_badge
from tests.support import ipp


def reference_line(line: bytes) -> bytes:
    """One line, pixel by pixel: a run of n equal bytes as n-1 and the byte, a literal of n bytes (each unlike the
    next) as 257-n and the bytes, n up to 128; a single byte as a run of one."""
    out = bytearray()
    i, count = 0, len(line)
    while i < count:
        run = 1
        while i + run < count and run < 128 and line[i + run] == line[i]:
            run += 1
        if run > 1 or i + 1 == count:
            out += bytes([run - 1, line[i]])
            i += run
            continue
        start = i
        while i < count and i - start < 128 and (i + 1 == count or line[i + 1] != line[i]):
            i += 1
        out.append(0 if i - start == 1 else 257 - (i - start))
        out += line[start:i]
    return bytes(out)


def reference_pwg(sheet: Image.Image, dpi: int, raster_type: str, media_name: str = "") -> bytes:
    width, height = sheet.size
    if raster_type == "black_1":
        raw = bytes(b ^ 0xFF for b in sheet.convert("1").tobytes())  # Pillow packs 1 = white; black_1 has 1 = black
        stride = (width + 7) // 8
        if width % 8:
            # The bits past the width in a line's last byte are 0 (white): inverting the whole byte would make them 1.
            pad = (0xFF << (8 - width % 8)) & 0xFF
            raw = b"".join(
                raw[y : y + stride - 1] + bytes([raw[y + stride - 1] & pad]) for y in range(0, len(raw), stride)
            )
    else:
        raw = sheet.convert("L").tobytes()
        stride = width
    out = bytearray(b"RaS2") + raster.pwg_header(width, height, dpi, raster_type, media_name)
    y = 0
    while y < height:
        line = raw[y * stride : (y + 1) * stride]
        repeat = 1
        while y + repeat < height and repeat < 256 and raw[(y + repeat) * stride : (y + repeat + 1) * stride] == line:
            repeat += 1
        out.append(repeat - 1)
        out += reference_line(line)
        y += repeat
    return bytes(out)


BADGE = Badge("job-1", "ATT-2026-000123", "María José García", "Universidad de Sevilla", "Speaker")
LABEL_600 = LabelConfig(width_mm=101.6, height_mm=152.4, dpi=600)


def _lines() -> list[bytes]:
    """Lines at the edges of the coding: runs of 1, 2, 127-130, 256, 257; literals of 1, 2, 128, 129, 300; mixed."""
    alternating = bytes(i % 2 for i in range(300))
    cases = [
        b"\x00",
        b"\x00\x01",
        b"\x05\x05",
        bytes(300),
        alternating,
        alternating[:128],
        alternating[:129],
        alternating[:257],
    ]
    for n in (127, 128, 129, 130, 256, 257, 385):
        cases += [bytes([9]) * n, bytes([9]) * n + b"\x01\x02\x03", b"\x01" + bytes([9]) * n + alternating[:5]]
        cases += [bytes([9]) * n + bytes([4]) * 2, alternating[:3] + bytes([9]) * n + alternating[:n]]
    return cases


@pytest.mark.parametrize("line", _lines())
def test_each_line_is_coded_as_the_reference_codes_it(line: bytes) -> None:
    assert raster._encode_line(line) == reference_line(line)


def test_random_lines_are_coded_as_the_reference_codes_them() -> None:
    rnd = random.Random(7)
    for _ in range(2000):
        line = bytes(rnd.choice((0, 0, 255, rnd.randrange(256))) for _ in range(rnd.randrange(1, 400)))
        assert raster._encode_line(line) == reference_line(line), line.hex()


def _images() -> list[tuple[str, Image.Image, str]]:
    rnd = random.Random(11)
    badge = render_badge(BADGE, LABEL_600)
    noise = Image.frombytes("L", (203, 61), bytes(rnd.randrange(256) for _ in range(203 * 61)))
    stripes = Image.new("1", (2400, 700), 1)
    for y in range(0, 700, 3):
        stripes.paste(0, (y % 50, y, y % 50 + 1030, y + 1))
    return [
        ("badge 600 dpi black_1", badge, "black_1"),
        ("badge 600 dpi sgray_8", badge, "sgray_8"),
        ("noise black_1", noise.convert("1"), "black_1"),
        ("noise sgray_8", noise, "sgray_8"),
        ("stripes black_1 (odd width)", stripes.crop((0, 0, 2397, 700)), "black_1"),
    ]


@pytest.mark.parametrize(("name", "image", "raster_type"), _images(), ids=lambda v: v if isinstance(v, str) else "")
def test_a_page_is_the_references_bytes_and_reads_back(name: str, image: Image.Image, raster_type: str) -> None:
    encoded = raster.encode_pwg(image, 600, raster_type, "na_index-4x6_4x6in")
    assert encoded == reference_pwg(image, 600, raster_type, "na_index-4x6_4x6in"), name
    decoded = ipp.read_pwg(encoded)
    expected = image.convert("L") if raster_type == "sgray_8" else image.convert("1").convert("L")
    assert decoded.size == image.size
    assert ImageChops.difference(decoded, expected).getbbox() is None, name


def test_a_page_of_the_media_size_is_the_badge_itself_and_margins_are_white() -> None:
    badge = render_badge(BADGE, LABEL_600)
    whole = Plan(PWG_RASTER, 600, 10160, 15240)
    assert raster.page(badge, whole) is badge  # no copy of a page the badge fills
    framed = Plan(PWG_RASTER, 600, 10160 + 254, 15240 + 254, margins=(127, 127, 127, 127))
    sheet = raster.page(render_badge(BADGE, framed.label), framed)
    assert sheet.size == (2460, 3660)
    assert sheet.crop((0, 0, 2460, 30)).convert("L").getextrema() == (255, 255)  # the top margin is white
