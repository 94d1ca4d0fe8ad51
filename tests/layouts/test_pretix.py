"""pretix badge layouts as pretix's designer saves them (written here in pretix's format: a butterfly badge whose
second half is turned upside down, a barcode, an image), with a background PDF, mapped to ours and drawn."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import zxingcpp
from PIL import Image, ImageChops, ImageOps

from drivers.label import LabelConfig
from layouts.draw import draw_layout
from layouts.errors import LayoutError
from layouts.pretix import load_pretix
from tests.support.layouts import SPEAKER, write_logo


def write_frame_pdf(path: Path, size_mm: tuple[float, float]) -> None:
    """A butterfly badge's background: a 1 mm black frame and a fold line across the middle (Pillow writes it)."""
    w, h = round(size_mm[0] * 10), round(size_mm[1] * 10)  # ten pixels a mm, at 254 dpi
    page = Image.new("L", (w, h), 255)
    page.paste(0, (0, 0, w, 10))
    page.paste(0, (0, h - 10, w, h))
    page.paste(0, (0, 0, 10, h))
    page.paste(0, (w - 10, 0, w, h))
    page.paste(0, (0, h // 2 - 3, w, h // 2 + 3))
    page.save(path, "PDF", resolution=254)


def textarea(content: str, left: float, bottom: float, **extra: Any) -> dict[str, Any]:
    """A text area as pretix's badge designer writes one (numbers as text, as it does)."""
    return {
        "type": "textarea", "page": 1, "locale": "", "left": f"{left:.2f}", "bottom": f"{bottom:.2f}",
        "fontsize": "20.0", "lineheight": "1", "color": [0, 0, 0, 1], "fontfamily": "Open Sans", "bold": True,
        "italic": False, "width": "72.00", "downward": False, "content": content, "text": "", "text_i18n": {},
        "rotation": 0, "align": "center", **extra,
    }  # fmt: skip


def butterfly(tmp_path: Path) -> Path:
    """82 x 203 mm, folded in the middle: the front half upright, the back half turned 180 degrees (so both read
    upright once folded over a lanyard), a QR code of the secret, and the event's logo."""
    write_frame_pdf(tmp_path / "butterfly.pdf", (82, 203))
    write_logo(tmp_path / "event_logo.png")
    layout = [
        textarea("attendee_name", 5, 152.55),
        textarea("attendee_company", 5, 144.55, fontsize="14.0", bold=False),
        textarea("item", 5, 120, downward=True, fontsize="12.0"),
        {"type": "barcodearea", "page": 1, "left": "26.00", "bottom": "105.00", "size": "30.00", "content": "secret"},
        {"type": "imagearea", "page": 1, "left": "21.00", "bottom": "180.00", "width": "40.00", "height": "15.00",
         "content": "event_logo"},
        textarea("attendee_name", 77.10, 34.68, rotation=180),
        textarea("attendee_company", 77.06, 44.28, rotation=180, fontsize="14.0", bold=False),
        {"type": "poweredby", "page": 1, "left": "0", "bottom": "0", "size": "10", "content": "dark"},
    ]  # fmt: skip
    path = tmp_path / "butterfly.json"
    path.write_text(json.dumps(layout))
    return path


def test_a_butterfly_previews_with_both_halves_the_second_upside_down(tmp_path: Path) -> None:
    layout = load_pretix(butterfly(tmp_path))
    assert (layout.size.width_mm, round(layout.size.height_mm, 1)) == (82.0, 203.0)
    assert [p.element.type for p in layout.elements] == ["text", "text", "text", "qr", "image", "text", "text"]
    label = LabelConfig(width_mm=82, height_mm=203, dpi=300)
    badge = replace(SPEAKER, name="Ada Lovelace", company="Analytical Engines")
    image = draw_layout(layout, badge, label).image.convert("L")
    d = 300 / 25.4

    def crop(x0: float, y0: float, x1: float, y1: float) -> Image.Image:
        return ImageOps.invert(image.crop((round(x0 * d), round(y0 * d), round(x1 * d), round(y1 * d))))

    # The background PDF: its frame and fold line, black.
    assert crop(0, 0, 82, 0.8).getextrema() == (255, 255)
    assert crop(0, 101.3, 82, 101.7).getextrema() == (255, 255)
    # The front half's name (42 to 50.5 mm from the top) and the back half's (151.4 to 159.9 mm), turned 180
    # degrees: the same ink, the back's upside down.
    front, back = crop(5, 42, 77, 50.5), crop(5.1, 151.4, 77.1, 159.9)
    turned = ImageOps.flip(ImageOps.mirror(back))
    ink = front.histogram()[255]
    assert ink > 1000 and abs(turned.histogram()[255] - ink) < 0.05 * ink
    bbox_front, bbox_turned = front.getbbox(), turned.getbbox()
    assert bbox_front is not None and bbox_turned is not None
    assert all(abs(a - b) <= 3 for a, b in zip(bbox_front, bbox_turned, strict=True)), (bbox_front, bbox_turned)
    # Upside down means the turned crop matches the front, and the unturned one does not.
    assert _overlap(turned, front) > 0.8 > _overlap(back, front)
    assert [r.text for r in zxingcpp.read_barcodes(image)] == ["ATT-0001"]
    # The logo: black in its box (8 to 23 mm from the top, centred).
    assert crop(35, 12, 47, 19).getextrema() == (255, 255)


def _overlap(a: Image.Image, b: Image.Image) -> float:
    """The share of b's ink that a has too."""
    both = ImageChops.multiply(a, b).histogram()[255]
    return both / max(1, b.histogram()[255])


def test_a_text_area_turned_180_degrees_turns_about_its_top_left_corner(tmp_path: Path) -> None:
    """As pretix turns it: the box ends up left of and above its corner, mirrored across a centred badge."""
    layout = [
        textarea("attendee_name", 5, 152.55),
        textarea("attendee_name", 77.0, 41.98, rotation=180),
    ]
    path = tmp_path / "pair.json"
    path.write_text(json.dumps(layout))
    ours = load_pretix(path, size_mm=(82, 203))
    front, back = ours.elements[0].element, ours.elements[1].element
    assert back.rotate == 180 and front.rotate == 0
    assert back.x == pytest.approx(82 - front.x - front.w, abs=0.1)  # mirrored across the badge
    assert back.y + back.h == pytest.approx(203 - 41.98 - back.h, abs=0.01)  # its corner: bottom plus a line


def test_mapping_of_contents_and_fonts(tmp_path: Path) -> None:
    layout = [
        textarea("attendee_name_given_name", 5, 150),
        textarea("other", 5, 120, text="Welcome {to} DevConf"),
        textarea("attendee_email", 5, 100, color=[255, 255, 255, 1], italic=True, fontfamily="Comic Sans"),
        textarea("attendee_name", 5, 80),
    ]
    path = tmp_path / "map.json"
    path.write_text(json.dumps({"name": "Badges", "layout": json.dumps(layout)}))  # as pretix's API returns it
    ours = load_pretix(path, size_mm=(82, 203))
    texts = [p.element.text for p in ours.elements]  # type: ignore[union-attr]
    assert texts == ["{given_name}", "Welcome {{to}} DevConf", "{attendee_email}", "{name}"]
    assert ours.elements[2].element.color == "white"  # type: ignore[union-attr]


def test_problems_name_the_file_and_the_element(tmp_path: Path) -> None:
    layout = [
        textarea("attendee_name", 5, 150, rotation=45),
        {"type": "imagearea", "left": "1", "bottom": "1", "width": "10", "height": "10", "content": "sponsor"},
        {"type": "ellipse", "left": "1", "bottom": "1"},
        textarea("attendee_name", 5, 100, fontsize="big"),
    ]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(layout))
    with pytest.raises(LayoutError) as caught:
        load_pretix(path, size_mm=(82, 203))
    assert caught.value.problems == [
        f"{path}: layout[0] (textarea attendee_name): rotation 45 is not supported on a badge printer (0, 90, 180 "
        "or 270)",
        f"{path}: layout[1] (imagearea sponsor): put the image for 'sponsor' beside the layout as sponsor.png or .svg",
        f"{path}: layout[2] (ellipse): unknown pretix element type 'ellipse' (textarea, textcontainer, barcodearea, "
        "imagearea)",
        f"{path}: layout[3] (textarea attendee_name): fontsize: must be a number (got 'big')",
    ]


def test_without_a_pdf_the_size_must_be_given(tmp_path: Path) -> None:
    path = tmp_path / "plain.json"
    path.write_text(json.dumps([textarea("attendee_name", 5, 150)]))
    with pytest.raises(LayoutError, match="no background PDF to take the page size from"):
        load_pretix(path)


def test_a_pretix_background_that_is_not_a_pdf(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text(json.dumps([textarea("attendee_name", 5, 150)]))
    (tmp_path / "x.pdf").write_bytes(b"GIF89a")
    with pytest.raises(LayoutError, match=r"background: x.pdf is not a PNG or PDF file"):
        load_pretix(path)


def test_a_png_background_is_drawn_too(tmp_path: Path) -> None:
    Image.new("L", (82, 203), 0).save(tmp_path / "bg.png")
    path = tmp_path / "x.json"
    path.write_text(json.dumps([textarea("attendee_name", 5, 150)]))
    layout = load_pretix(path, background=tmp_path / "bg.png", size_mm=(82, 203))
    assert layout.background == "bg.png"


def test_preview_from_pretix_on_the_command_line(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from cli.commands.layout import layout

    path = butterfly(tmp_path)
    job = json.dumps({"attendee_id": "A-1", "name": "Ada Lovelace", "company": "AE"})
    out = tmp_path / "out.png"
    result = CliRunner().invoke(layout, ["preview", str(path), "--from", "pretix", "--job", job, "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert f"job: {out} (empty: ticket_type)" in result.output
    image = Image.open(out)
    assert image.size == (round(82 / 25.4 * 300) // 8 * 8, round(203 / 25.4 * 300) // 8 * 8)
    assert [r.text for r in zxingcpp.read_barcodes(image.convert("L"))] == ["A-1"]
