"""What a layout may ask is bounded: `layout set` refuses a layout past the bounds (text, elements, the label's
pixels, a constant QR code or barcode that can never encode) naming the element, and refuses image and background
files that would take unbounded memory or time to draw; drawing a badge stays bounded for a layout stored by other
means (a hostile or older tool)."""

from __future__ import annotations

import io
import struct
import zlib
from dataclasses import replace
from pathlib import Path

import pytest
from PIL import Image

from cli.redis_server import RedisServer
from drivers.base import RenderError
from drivers.label import LabelConfig
from layouts import draw
from layouts.draw import Prepared
from layouts.errors import LayoutError
from layouts.files import load_layout
from layouts.model import MAX_ELEMENTS, MAX_TEXT_CHARS, parse_layout
from tests.support.bombs import blur_svg, pdf, pdf_of_2_gib
from tests.support.layouts import SPEAKER
from tests.support.processes import cli

NAME = {"type": "text", "text": "{name}", "x": 5, "y": 5, "w": 91.6, "h": 20, "font_size": 36}
SIZE = {"width_mm": 101.6, "height_mm": 152.4}


def doc(*elements: dict[str, object], size: dict[str, float] = SIZE, **extra: object) -> dict[str, object]:
    return {"size": size, "elements": [NAME, *elements], **extra}


def refused(write_layout, data: dict[str, object]) -> list[str]:  # type: ignore[no-untyped-def]
    with pytest.raises(LayoutError) as caught:
        load_layout(write_layout(data))
    return caught.value.problems


# -- `layout set`: the layout's own bounds -------------------------------------------------------------------------


def test_set_refuses_a_text_of_100000_characters_naming_the_element(
    tmp_path: Path, redis_server: RedisServer, venue: str, write_layout
) -> None:
    path = write_layout(doc({"type": "text", "text": "W" * 100_000, "x": 5, "y": 40, "w": 90, "h": 30}))
    done = cli(redis_server, venue, "layout", "set", str(path), "--name", "huge")
    assert done.returncode == 2, done.stderr
    assert f"{path}: elements[1] (text 'WWWW" in done.stderr
    assert f"text: 100000 characters; at most {MAX_TEXT_CHARS}" in done.stderr
    assert "Traceback" not in done.stderr


def test_set_refuses_more_elements_than_the_bound(write_layout) -> None:
    boxes = [{"type": "box", "x": 1, "y": 1, "w": 1, "h": 1}] * MAX_ELEMENTS
    (problem,) = refused(write_layout, doc(*boxes))
    assert f"elements: {MAX_ELEMENTS + 1} elements; a layout has at most {MAX_ELEMENTS}" in problem


def test_set_refuses_a_label_of_more_pixels_than_the_bound(write_layout) -> None:
    (problem,) = refused(write_layout, doc(size={"width_mm": 300, "height_mm": 600}))
    assert "size: 300 x 600 mm is 100 megapixels at 600 dpi; a label is at most 40 megapixels" in problem


def test_a_qr_code_or_data_barcode_that_can_never_encode_is_refused_naming_the_element(write_layout) -> None:
    problems = refused(
        write_layout,
        doc(
            {"type": "qr", "data": "X" * 400, "x": 30, "y": 100, "w": 20, "h": 20},
            {"type": "barcode", "data": "Caf\u00e9", "x": 5, "y": 125, "w": 90, "h": 10},
            {"type": "barcode", "data": "A-" + "x" * 80, "x": 5, "y": 140, "w": 30, "h": 10},
            {"type": "barcode", "data": "\u00e9-{attendee_id}", "x": 5, "y": 40, "w": 90, "h": 10},
        ),
    )
    assert len(problems) == 4, problems
    qr, accent, long, template = problems
    assert "elements[1] (qr 'XXXX" in qr and "data: the QR code 'XXXX" in qr and "cannot be printed at" in qr
    assert "attendee_id" not in qr
    assert "elements[2] (barcode 'Café')" in accent and "Code 128" in accent
    assert "elements[3] (barcode 'A-xxx" in long and "cannot be printed at 203 dpi" in long
    assert "elements[4] (barcode" in template and "'é'" in template


def test_codes_that_encode_and_codes_of_job_fields_are_accepted(write_layout) -> None:
    load_layout(
        write_layout(
            doc(
                {"type": "qr", "data": "https://example.org/venue-map", "x": 30, "y": 100, "w": 40, "h": 40},
                {"type": "barcode", "data": "{attendee_id}", "x": 5, "y": 40, "w": 90, "h": 10},
            )
        )
    )


# -- drawing a stored layout (no `set` checks): bounded ------------------------------------------------------------


def unchecked(*elements: dict[str, object]) -> Prepared:
    return Prepared(parse_layout(doc(*elements), "stored", strict=False), LabelConfig(dpi=203))


def test_a_stored_text_of_100000_characters_is_a_render_error_not_a_crash() -> None:
    prepared = unchecked({"type": "text", "text": "W" * 100_000, "x": 5, "y": 40, "w": 90, "h": 30})
    with pytest.raises(RenderError, match=r"stored: elements\[1\] \(text\): its text is 100000 characters"):
        prepared.draw(SPEAKER)


def test_a_stored_text_at_400_pt_that_cannot_shrink_is_a_render_error_before_pillow_allocates() -> None:
    huge = {"type": "text", "text": "W" * 1500, "x": 5, "y": 40, "w": 90, "h": 30, "font_size": 400, "fit": False}
    with pytest.raises(RenderError, match=r"stored: elements\[1\] \(text\): text too large to draw"):
        unchecked(huge).draw(SPEAKER)


def test_a_badge_that_takes_too_long_stops_itself_between_renderings(monkeypatch: pytest.MonkeyPatch) -> None:
    # The bound made small, so that one long fit (2000 characters, shrunk, wrapped and cut) runs past it.
    monkeypatch.setattr(draw, "DRAW_SECONDS", 0.01)
    text = {"type": "text", "text": "Wide words " * 180, "x": 5, "y": 40, "w": 90, "h": 5, "max_lines": 2}
    with pytest.raises(RenderError, match=r"stored: elements\[1\] \(text\): the badge took over 0.01 s to draw"):
        unchecked(text).draw(SPEAKER)


# -- image and background files ------------------------------------------------------------------------------------


def logo_doc(src: str = "logo.svg") -> dict[str, object]:
    return doc({"type": "image", "src": src, "x": 20, "y": 40, "w": 60, "h": 20})


def test_an_svg_declaring_40000_pixels_square_is_refused_before_it_is_drawn(tmp_path: Path, write_layout) -> None:
    svg = b'<svg xmlns="http://www.w3.org/2000/svg" width="40000" height="40000"><rect width="9" height="9"/></svg>'
    (tmp_path / "logo.svg").write_bytes(svg)
    (problem,) = refused(write_layout, logo_doc())
    assert "elements[1] (image 'logo.svg'): logo.svg declares 40000x40000 pixels; at most 9000000 pixels" in problem


def test_an_svg_declaring_its_size_by_its_viewbox_is_drawn_in_its_proportions(tmp_path: Path, write_layout) -> None:
    svg = b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 300 100"><rect width="300" height="100"/></svg>'
    (tmp_path / "logo.svg").write_bytes(svg)
    layout = load_layout(write_layout(logo_doc()))
    image = Prepared(layout, LabelConfig(dpi=203)).images[1]
    box = image.getbbox()
    assert box is not None and box[2] - box[0] == image.width  # 3:1 fills the 60 x 20 mm box


def test_an_svg_of_blur_filters_is_refused_within_the_bounds(tmp_path: Path, write_layout) -> None:
    (tmp_path / "logo.svg").write_bytes(blur_svg())
    (problem,) = refused(write_layout, logo_doc())
    assert problem.startswith(f"{tmp_path / 'layout.yaml'}: elements[1] (image 'logo.svg'): logo.svg ")
    assert "s to draw" in problem or "MB to draw" in problem, problem


def test_a_pdf_of_2_gib_of_content_is_refused_within_the_bounds(tmp_path: Path, write_layout) -> None:
    (tmp_path / "frame.pdf").write_bytes(pdf_of_2_gib())
    (problem,) = refused(write_layout, doc(background="frame.pdf"))
    assert "background: frame.pdf is not a readable PDF: needs more than 480 MB to draw" in problem


def test_a_pdf_with_a_huge_page_is_refused(tmp_path: Path, write_layout) -> None:
    (tmp_path / "frame.pdf").write_bytes(pdf(b"0 0 m 10 10 l S", page_pt=(14400, 14400)))
    (problem,) = refused(write_layout, doc(background="frame.pdf"))
    assert (
        "frame.pdf is not a readable PDF: its page is 5080 mm long; a background's page is at most 1000 mm" in problem
    )


def test_a_small_pdf_background_is_drawn(tmp_path: Path, write_layout) -> None:
    (tmp_path / "frame.pdf").write_bytes(pdf(b"0 0 m 288 432 l S", page_pt=(288, 432)))
    layout = load_layout(write_layout(doc(background="frame.pdf")))
    assert any(name.startswith("frame.pdf@") for name in layout.assets)


def test_an_svg_use_bomb_is_still_refused(tmp_path: Path, write_layout) -> None:
    # Ten <use> of the level below, nine levels deep: a billion rectangles from 2 kB.
    levels = "".join(f'<g id="a{i}">' + f'<use href="#a{i - 1}"/>' * 10 + "</g>" for i in range(1, 10))
    svg = (
        '<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100"><defs><rect id="a0" width="1" height="1"/>'
        f'{levels}</defs><use href="#a9"/></svg>'
    )
    (tmp_path / "logo.svg").write_text(svg)
    (problem,) = refused(write_layout, logo_doc())
    assert "logo.svg is not a readable SVG: SVG data parsing failed cause nodes limit reached" in problem


@pytest.mark.parametrize(
    ("side", "said"),
    [(20000, "is not a readable PNG: Image size (400000000 pixels) exceeds limit"), (4000, "is 4000x4000 pixels")],
)
def test_a_png_of_too_many_pixels_is_still_refused_by_its_header(
    tmp_path: Path, write_layout, side: int, said: str
) -> None:
    small = io.BytesIO()
    Image.new("L", (1, 1), 0).save(small, "PNG")
    data = bytearray(small.getvalue())
    # The IHDR chunk (at 8: length, type, width, height, ...) made to declare side x side pixels, its CRC redone:
    # refused by what it declares, never decoded.
    data[16:24] = struct.pack(">II", side, side)
    data[29:33] = struct.pack(">I", zlib.crc32(bytes(data[12:29])))
    (tmp_path / "logo.png").write_bytes(bytes(data))
    (problem,) = refused(write_layout, logo_doc("logo.png"))
    assert f"logo.png {said}" in problem, problem


def test_a_qr_code_of_a_field_too_long_for_its_box_blames_that_field_not_the_attendee_id() -> None:
    prepared = unchecked({"type": "qr", "data": "{seat}", "x": 30, "y": 100, "w": 20, "h": 20})
    badge = replace(SPEAKER, fields={**SPEAKER.fields, "seat": "S" * 1500})
    with pytest.raises(RenderError) as caught:
        prepared.draw(badge)
    assert str(caught.value).startswith("stored: elements[1] (qr): its data ({seat}) is too long"), caught.value
    assert "attendee_id" not in str(caught.value)
