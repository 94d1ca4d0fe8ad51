"""The built-in design as a layout file (config/badge-default.yaml): it loads, and draws what the built-in design
draws on 4x6 in stock: the name large above, company and the role in a black pill, the QR code of the attendee id
in the same place, the id under it."""

from __future__ import annotations

from pathlib import Path

import pytest
import zxingcpp
from PIL import Image, ImageChops

from drivers.base import Badge
from drivers.label import LabelConfig
from drivers.render import render_badge
from layouts.draw import draw_layout
from layouts.files import load_layout

DEFAULT = Path(__file__).parents[2] / "config" / "badge-default.yaml"
BADGE = Badge(job_id="j", attendee_id="ATT-0001", name="Ada Lovelace", company="Analytical Engines", role="Speaker")


def ink_rows(image: Image.Image, top: int, bottom: int) -> int:
    gray = image.convert("L").crop((0, top, image.width, bottom))
    return gray.histogram()[0]


@pytest.mark.parametrize("dpi", [203, 300])
def test_the_default_layout_draws_the_built_in_badge(dpi: int) -> None:
    label = LabelConfig(width_mm=101.6, height_mm=152.4, dpi=dpi)
    layout = load_layout(DEFAULT)
    ours, built_in = draw_layout(layout, BADGE, label).image, render_badge(BADGE, label)
    assert ours.size == built_in.size
    qr = [(r.text, r.position.top_left.x, r.position.top_left.y) for r in zxingcpp.read_barcodes(ours.convert("L"))]
    theirs = [(r.text, r.position.top_left.x, r.position.top_left.y) for r in zxingcpp.read_barcodes(built_in)]
    assert [q[0] for q in qr] == ["ATT-0001"]
    assert abs(qr[0][1] - theirs[0][1]) <= 2 and abs(qr[0][2] - theirs[0][2]) <= 2  # the same place, to 2 dots
    d = dpi / 25.4
    # The same amount of ink in the text area (the same sizes of name, company and pill), within 5%.
    text_ours, text_theirs = ink_rows(ours, 0, round(90 * d)), ink_rows(built_in, 0, round(90 * d))
    assert abs(text_ours - text_theirs) / text_theirs < 0.05, (text_ours, text_theirs)
    # And in the same part of the label: most of it overlaps.
    diff = ImageChops.logical_xor(ours, built_in).convert("L").histogram()[255]
    assert diff < 0.4 * text_theirs, (diff, text_theirs)


def test_the_pill_is_black_with_the_role_in_white() -> None:
    label = LabelConfig(width_mm=101.6, height_mm=152.4, dpi=203)
    image = draw_layout(load_layout(DEFAULT), BADGE, label).image.convert("L")
    d = 203 / 25.4
    row = round(63 * d)  # through the middle of the pill (59 to 67 mm)
    pixels = [image.getpixel((x, row)) for x in range(image.width)]
    black = [x for x, v in enumerate(pixels) if v == 0]
    assert black, "no pill"
    left, right = min(black), max(black)
    assert 0.25 * image.width < right - left < 0.5 * image.width  # as wide as the word, not the label
    assert 255 in pixels[left:right]  # white letters inside
