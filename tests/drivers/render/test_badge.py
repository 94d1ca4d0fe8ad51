"""The badge image: every script, long names, refusals, hostile input."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from PIL import Image, ImageOps

from drivers.base import Badge, RenderError
from drivers.render import fonts, render_badge, runs
from drivers.render.badge import label_dots
from drivers.render.fonts import PACKAGE_FONT_DIR, FontLibrary
from drivers.render.textblock import Sizes, fit
from tests.support.drivers import NAMES

from .conftest import BROTHER_62, LABELS, SMALL, ZEBRA_203, qr_texts

LONG_NAME = "Maximilian Alexander Wolfeschlegelsteinhausen-Bergerdorff von Habsburg-Lothringen y Borbón"


def ink_box(image: Image.Image) -> tuple[int, int, int, int] | None:
    return ImageOps.invert(image.convert("L")).getbbox()


def assert_inside_margins(image: Image.Image, dpi: int) -> None:
    margin = round(4 * dpi / 25.4) - 1
    box = ink_box(image)
    assert box is not None
    left, top, right, bottom = box
    assert left >= margin and top >= margin, box
    assert right <= image.width - margin and bottom <= image.height - margin, box


@pytest.mark.parametrize("label_name", sorted(LABELS))
def test_size_mode_and_qr_for_every_stock(label_name: str) -> None:
    label = LABELS[label_name]
    image = render_badge(Badge("j1", "A-000123", "María José García", "Universidad de Sevilla", "Speaker"), label)
    assert image.mode == "1"
    assert image.size == label_dots(label)
    assert image.width % 8 == 0 and image.height % 8 == 0
    assert qr_texts(image) == ["A-000123"]
    assert_inside_margins(image, label.dpi)


def test_label_dots() -> None:
    assert label_dots(ZEBRA_203) == (808, 1216)
    assert label_dots(BROTHER_62) == (728, 1176)


@pytest.mark.parametrize("script", sorted(NAMES))
def test_names_from_many_scripts(script: str) -> None:
    badge = Badge("j", f"ID-{script}", NAMES[script], "Company", "Role")
    image = render_badge(badge, ZEBRA_203)
    assert qr_texts(image) == [f"ID-{script}"]
    assert_inside_margins(image, ZEBRA_203.dpi)
    box = ink_box(image)
    assert box is not None and box[3] - box[1] > 200  # something real was drawn above the QR code


def test_each_script_gets_its_font() -> None:
    library = fonts.default_library()
    expect = {
        "arabic": "Arabic",
        "hebrew": "Hebrew",
        "chinese": "CJK",
        "korean": "CJK",
        "devanagari": "Devanagari",
        "thai": "Thai",
    }
    for script, font_name in expect.items():
        paragraph = runs.itemize("name", NAMES[script], library, bold=True)
        assert any(font_name in face.path.name for face in paragraph.faces), (script, paragraph.faces)
    # Han in a Japanese name uses the JP face of the collection, in a Chinese one the SC face.
    jp = runs.itemize("name", "山田 はな", library, bold=True).faces[0]
    sc = runs.itemize("name", "李小龙", library, bold=True).faces[0]
    assert jp.index == 0 and sc.index == 2


def test_mixed_script_runs_are_ordered_visually() -> None:
    library = fonts.default_library()
    ltr = runs.itemize("name", "Smith محمد", library, bold=True)
    assert not ltr.rtl
    assert [r.rtl for r in ltr.line(0, len(ltr.clusters))] == [False, True]
    rtl = runs.itemize("name", "محمد Smith", library, bold=True)
    assert rtl.rtl
    visual = rtl.line(0, len(rtl.clusters))
    assert visual[0].text == "Smith" and visual[-1].rtl  # Smith is drawn left of the Arabic in an RTL line


def test_long_name_fits_in_two_lines_inside_margins() -> None:
    badge = Badge(
        "j",
        "A-1",
        LONG_NAME,
        "International Business Machines Corporation Research Laboratory Zürich",
        "Senior Principal Distinguished Engineer and Fellow of the Board",
    )
    for label in (ZEBRA_203, BROTHER_62, SMALL):
        image = render_badge(badge, label)
        assert qr_texts(image) == ["A-1"]
        assert_inside_margins(image, label.dpi)
    library = fonts.default_library()
    paragraph = runs.itemize("name", LONG_NAME, library, bold=True)
    block = fit(paragraph, 700, 500, Sizes(170, 70, 32), library, bold=True, wrap=True)
    assert block is not None and block.lines <= 2
    assert block.width <= 700 and block.height <= 500


def test_long_name_shrinks_before_wrapping() -> None:
    library = fonts.default_library()
    paragraph = runs.itemize("name", "Alexandra Papadopoulou", library, bold=True)
    block = fit(paragraph, 700, 500, Sizes(170, 50, 30), library, bold=True, wrap=True)
    assert block is not None and block.lines == 1 and block.size < 170
    wrapped = fit(paragraph, 700, 500, Sizes(170, 120, 30), library, bold=True, wrap=True)
    assert wrapped is not None and wrapped.lines == 2 and wrapped.size > block.size


@pytest.mark.parametrize(
    ("badge", "field", "code_point"),
    [
        (Badge("j", "A", "Ann \ue000 Lee"), "name", "U+E000"),
        (Badge("j", "A", "Ann", company="ACME \U0010fffd"), "company", "U+10FFFD"),
        (Badge("j", "A", "Ann", role="\U000e0001x"), "role", None),
        (Badge("j", "A", "Bad \ud800 surrogate"), "name", "U+D800"),
    ],
)
def test_uncovered_characters_are_refused_with_field_and_code_point(
    badge: Badge, field: str, code_point: str | None
) -> None:
    try:
        render_badge(badge, ZEBRA_203)
    except RenderError as exc:
        assert field in str(exc)
        if code_point:
            assert code_point in str(exc)
    else:
        assert field == "role"  # U+E0001 (language tag) is default-ignorable: it may be drawn as nothing


def test_missing_cjk_font_is_refused_not_printed_blank() -> None:
    bundled_only = FontLibrary([PACKAGE_FONT_DIR], system_fallback=False)
    assert "CJK SC" in bundled_only.missing_families()
    with pytest.raises(RenderError, match=r"name .*U\+674E"):
        render_badge(Badge("j", "A", "李小龙"), ZEBRA_203, fonts_library=bundled_only)
    # Latin, Arabic and Hebrew work from the bundled fonts alone.
    image = render_badge(Badge("j", "A-9", "Sara سارة כהן"), ZEBRA_203, fonts_library=bundled_only)
    assert qr_texts(image) == ["A-9"]


def test_complex_script_refused_without_raqm(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fonts, "RAQM", False)
    with pytest.raises(RenderError, match="raqm"):
        render_badge(Badge("j", "A", "محمد"), ZEBRA_203)


@pytest.mark.parametrize(
    "name",
    ["\x1b@\x1dV\x00Ann", "^XA^FDhacked^FS^XZ", "Ann\r\n\tLee", "\u202eevil\u202c Ann", "Ann\x00\x07\x7f\x85 Lee"],
)
def test_control_characters_cannot_break_anything(name: str) -> None:
    image = render_badge(Badge("j", "A-2", name, "\x1b\x1d", "\x00"), ZEBRA_203)
    assert qr_texts(image) == ["A-2"]
    assert runs.clean("\x1b@Ann\u202e") == "@Ann"


@pytest.mark.parametrize("name", ["", "   ", "\x00\x1b", "\u200b"])
def test_empty_name_is_refused(name: str) -> None:
    with pytest.raises(RenderError, match="name"):
        render_badge(Badge("j", "A", name), ZEBRA_203)


def test_bad_attendee_ids_are_refused() -> None:
    with pytest.raises(RenderError, match="attendee_id"):
        render_badge(Badge("j", "", "Ann"), ZEBRA_203)
    with pytest.raises(RenderError, match="attendee_id"):
        render_badge(Badge("j", "x" * 3000, "Ann"), SMALL)


def test_unicode_attendee_id_round_trips() -> None:
    image = render_badge(Badge("j", "Zoë-42", "Zoë"), ZEBRA_203)
    assert qr_texts(image) == ["Zoë-42"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.text(max_size=80), company=st.text(max_size=40))
@example(name="\ud800\udfff", company="")
@example(name="\u0301\u0301a", company="\u200d")
@example(name="ـــ", company="\ufeff")
def test_arbitrary_unicode_never_crashes(name: str, company: str) -> None:
    try:
        image = render_badge(Badge("j", "A-3", name, company), BROTHER_62)
    except RenderError:
        return
    assert image.mode == "1" and image.size == label_dots(BROTHER_62)
