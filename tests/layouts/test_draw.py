"""Drawing from a layout: the same design at 203, 300 and 600 dpi, bands in black with white text, codes that scan,
rotation, conditions, and the rules for empty fields."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import zxingcpp
from PIL import Image, ImageOps

from drivers.base import RenderError
from drivers.label import LabelConfig
from layouts.draw import Prepared, draw_layout
from layouts.files import load_layout
from layouts.model import Layout
from tests.support.layouts import SPEAKER, band_layout, write_logo, write_pdf


def codes(image: Image.Image) -> dict[str, str]:
    return {r.format.name: r.text for r in zxingcpp.read_barcodes(image.convert("L"))}


def black_share(image: Image.Image, box: tuple[float, float, float, float], dpi: int) -> float:
    """The share of black dots in a box given in mm."""
    d = dpi / 25.4
    x0, y0, x1, y1 = (round(v * d) for v in box)
    crop = image.convert("L").crop((x0, y0, min(x1, image.width), min(y1, image.height)))
    histogram = crop.histogram()
    return histogram[0] / max(1, sum(histogram))


@pytest.fixture
def layout(tmp_path: Path, write_layout) -> Layout:  # type: ignore[no-untyped-def]
    write_logo(tmp_path / "logo.png")
    return load_layout(write_layout(band_layout()))


@pytest.mark.parametrize("dpi", [203, 300, 600])
def test_one_layout_at_every_resolution(layout: Layout, dpi: int) -> None:
    label = LabelConfig(width_mm=101.6, height_mm=152.4, dpi=dpi)
    drawn = draw_layout(layout, SPEAKER, label)
    image = drawn.image
    assert image.mode == "1" and image.size == (round(101.6 / 25.4 * dpi) // 8 * 8, round(152.4 / 25.4 * dpi) // 8 * 8)
    assert codes(image) == {"QRCode": "S-12"}
    # The band is black where the layout puts it, apart from its white text; outside it the label is mostly white.
    assert black_share(image, (1, 79, 4, 97), dpi) == 1.0  # the band's left end: no text there
    assert 0.55 < black_share(image, (0, 78, 101.6, 98), dpi) < 0.97  # white letters in it
    assert black_share(image, (0, 99, 101.6, 103), dpi) == 0.0
    # The logo is black inside its box and nowhere outside it.
    assert black_share(image, (45, 10, 56, 18), dpi) == 1.0
    assert drawn.empty_fields == ()


def test_the_band_is_only_for_the_ticket_types_it_names(layout: Layout) -> None:
    label = LabelConfig(width_mm=101.6, height_mm=152.4, dpi=203)
    attendee = replace(SPEAKER, fields={**SPEAKER.fields, "ticket_type": "Attendee"})
    assert black_share(draw_layout(layout, attendee, label).image, (0, 78, 101.6, 98), 203) == 0.0
    staff = replace(SPEAKER, fields={**SPEAKER.fields, "ticket_type": "staff"})  # case does not matter
    assert black_share(draw_layout(layout, staff, label).image, (1, 79, 4, 97), 203) == 1.0


def test_an_empty_name_is_an_error_never_a_blank_badge(layout: Layout) -> None:
    label = LabelConfig(width_mm=101.6, height_mm=152.4, dpi=203)
    with pytest.raises(RenderError, match=r"elements\[1\] \(text\): the name is empty"):
        draw_layout(layout, replace(SPEAKER, name=" \u200b\x1b "), label)


def test_a_field_the_job_lacks_leaves_its_element_out_and_is_named(layout: Layout) -> None:
    label = LabelConfig(width_mm=101.6, height_mm=152.4, dpi=203)
    drawn = draw_layout(layout, replace(SPEAKER, fields={"ticket_type": "Speaker"}), label)
    assert drawn.empty_fields == ("pronouns", "seat")
    assert codes(drawn.image) == {}  # no QR code of nothing
    assert black_share(drawn.image, (0, 66, 101.6, 74), 203) == 0.0  # no pronouns
    assert black_share(drawn.image, (5, 28, 96.6, 64), 203) > 0.05  # the rest is there


@pytest.mark.parametrize("name", ["José Ñúñez", "محمد عبد الله", "דוד לוי", "Nguyễn Thị Minh Khai"])
def test_names_in_any_script(layout: Layout, name: str) -> None:
    label = LabelConfig(width_mm=101.6, height_mm=152.4, dpi=300)
    drawn = draw_layout(layout, replace(SPEAKER, name=name), label)
    assert black_share(drawn.image, (5, 28, 96.6, 64), 300) > 0.03


@pytest.mark.parametrize(("rotate", "black"), [(0, "left"), (90, "top"), (180, "right"), (270, "bottom")])
def test_rotation_turns_an_element_clockwise_in_its_box(tmp_path: Path, write_layout, rotate: int, black: str) -> None:
    half = Image.new("L", (100, 100), 255)
    half.paste(0, (0, 0, 50, 100))  # black on the left
    half.save(tmp_path / "half.png")
    data = {
        "size": {"width_mm": 60, "height_mm": 60},
        "elements": [
            {"type": "image", "src": "half.png", "x": 10, "y": 10, "w": 40, "h": 40, "rotate": rotate},
            {"type": "text", "text": "{name}", "x": 0, "y": 52, "w": 60, "h": 8},
        ],
    }
    image = draw_layout(load_layout(write_layout(data)), SPEAKER, LabelConfig(width_mm=60, height_mm=60, dpi=203)).image
    sides = {"left": (11, 11, 29, 49), "right": (31, 11, 49, 49), "top": (11, 11, 49, 29), "bottom": (11, 31, 49, 49)}
    assert {side: black_share(image, box, 203) for side, box in sides.items()}[black] == 1.0
    opposite = {"left": "right", "right": "left", "top": "bottom", "bottom": "top"}[black]
    assert black_share(image, sides[opposite], 203) == 0.0


def test_rotated_text_and_barcode(tmp_path: Path, write_layout) -> None:
    label = LabelConfig(width_mm=80, height_mm=80, dpi=300)
    base = {
        "size": {"width_mm": 80, "height_mm": 80},
        "elements": [
            {"type": "text", "text": "{name}", "x": 0, "y": 0, "w": 80, "h": 30, "font_size": 30},
            {"type": "barcode", "data": "{attendee_id}", "x": 0, "y": 35, "w": 80, "h": 20},
        ],
    }
    upright = draw_layout(load_layout(write_layout(base, "a.yaml")), SPEAKER, label).image
    turned = dict(base, elements=[dict(e, rotate=180) for e in base["elements"]])  # type: ignore[attr-defined]
    upside = draw_layout(load_layout(write_layout(turned, "b.yaml")), SPEAKER, label).image
    d = 300 / 25.4
    for top, bottom in ((0, 30), (35, 55)):
        box = (0, round(top * d), upright.width, round(bottom * d))
        a, b = ImageOps.invert(upright.convert("L").crop(box)), ImageOps.invert(upside.convert("L").crop(box))
        turned_a = ImageOps.flip(ImageOps.mirror(a))
        # The same ink, turned: centring in a box of odd free space may land it one dot over.
        assert turned_a.histogram() == b.histogram()
        bbox_a, bbox_b = turned_a.getbbox(), b.getbbox()
        assert bbox_a is not None and bbox_b is not None
        assert all(abs(p - q) <= 1 for p, q in zip(bbox_a, bbox_b, strict=True)), (bbox_a, bbox_b)
    assert codes(upside) == {"Code128": "ATT-0001"}
    sideways = dict(
        base,
        elements=[
            dict(base["elements"][0], w=30, h=80, x=0, y=0, rotate=90),  # type: ignore[index]
            dict(base["elements"][1], x=40, y=0, w=20, h=80, rotate=270),
        ],
    )  # type: ignore[index]
    image = draw_layout(load_layout(write_layout(sideways, "c.yaml")), SPEAKER, label).image
    assert codes(image) == {"Code128": "ATT-0001"}
    assert black_share(image, (0, 0, 30, 80), 300) > 0.03


def test_images_thresholded_or_dithered(tmp_path: Path, write_layout) -> None:
    grey = Image.new("L", (100, 100), 140)  # mid grey: thresholded it is white, dithered about half black
    grey.save(tmp_path / "grey.png")
    label = LabelConfig(width_mm=60, height_mm=60, dpi=203)
    for mode, low, high in (("threshold", 0.0, 0.0), ("dither", 0.35, 0.6)):
        data = {
            "size": {"width_mm": 60, "height_mm": 60},
            "elements": [
                {"type": "image", "src": "grey.png", "x": 0, "y": 0, "w": 30, "h": 30, "mode": mode},
                {"type": "text", "text": "{name}", "x": 0, "y": 40, "w": 60, "h": 20},
            ],
        }
        image = draw_layout(load_layout(write_layout(data, f"{mode}.yaml")), SPEAKER, label).image
        assert low <= black_share(image, (1, 1, 29, 29), 203) <= high, mode


def test_svg_logo_and_pdf_background_drawn_once_per_resolution(tmp_path: Path, write_layout) -> None:
    (tmp_path / "logo.svg").write_text(
        '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><rect width="40" height="20"/></svg>'
    )
    write_pdf(tmp_path / "bg.pdf", (80, 50))
    data = {
        "size": {"width_mm": 80, "height_mm": 50},
        "background": "bg.pdf",
        "elements": [
            {"type": "image", "src": "logo.svg", "x": 50, "y": 5, "w": 20, "h": 10},
            {"type": "text", "text": "{name}", "x": 45, "y": 20, "w": 30, "h": 20},
        ],
    }
    layout = load_layout(write_layout(data))
    for dpi in (203, 300, 600):
        prepared = Prepared(layout, LabelConfig(width_mm=80, height_mm=50, dpi=dpi))
        image = prepared.draw(SPEAKER).image
        assert black_share(image, (2, 2, 38, 48), dpi) == 1.0  # the PDF's black half
        assert black_share(image, (42, 2, 48, 18), dpi) == 0.0
        assert black_share(image, (51, 6, 69, 14), dpi) == 1.0  # the SVG's rectangle, 2:1 in a 2:1 box
        assert prepared.draw(SPEAKER).image.tobytes() == image.tobytes()
