"""Contact sheets: the same layouts with names in every script the built-in design prints, each name drawn (shaped,
in its own font, inside its box), the band's white text and the QR code on every badge."""

from __future__ import annotations

import unicodedata
from dataclasses import replace
from pathlib import Path

import pytest
import yaml
import zxingcpp
from PIL import Image, ImageOps

from drivers.label import LabelConfig
from layouts.draw import Prepared
from layouts.files import load_layout
from layouts.pretix import load_pretix
from layouts.sheet import CAPTION, GAP, contact_sheet
from tests.support.drivers import NAMES
from tests.support.layouts import SPEAKER, band_layout, write_logo

from .test_pretix import butterfly


@pytest.mark.parametrize("dpi", [203, 300])
def test_a_contact_sheet_of_every_script(tmp_path: Path, dpi: int) -> None:
    write_logo(tmp_path / "logo.png")
    (tmp_path / "band.yaml").write_text(yaml.safe_dump(band_layout()))
    prepared = Prepared(load_layout(tmp_path / "band.yaml"), LabelConfig(width_mm=101.6, height_mm=152.4, dpi=dpi))
    d = dpi / 25.4
    badges = []
    for script, name in NAMES.items():
        image = prepared.draw(replace(SPEAKER, name=name)).image
        name_area = ImageOps.invert(image.convert("L").crop((0, round(28 * d), image.width, round(64 * d))))
        box = name_area.getbbox()
        assert box is not None, script
        assert box[0] >= round(5 * d) - 1 and box[2] <= round(96.6 * d) + 1, (script, box)  # inside its element
        assert [r.text for r in zxingcpp.read_barcodes(image.convert("L"))] == ["S-12"], script
        badges.append((script, image))
    sheet = contact_sheet(badges)
    sheet.save(tmp_path / "sheet.png")
    assert sheet.width > 4 * badges[0][1].width * 0.5 and sheet.height > 3 * badges[0][1].height * 0.5


def test_a_pretix_butterfly_sheet_in_every_script(tmp_path: Path) -> None:
    prepared = Prepared(load_pretix(butterfly(tmp_path)), LabelConfig(width_mm=82, height_mm=203, dpi=203))
    d = 203 / 25.4
    for script, name in NAMES.items():
        image = prepared.draw(replace(SPEAKER, name=name)).image.convert("L")
        front = ImageOps.invert(image.crop((round(5 * d), round(42 * d), round(77 * d), round(50.5 * d))))
        back = ImageOps.invert(image.crop((round(5 * d), round(151.4 * d), round(77 * d), round(159.9 * d))))
        ink = front.histogram()[255]
        assert ink > 0 and abs(back.histogram()[255] - ink) <= 0.05 * ink, script  # the same name, turned over


def test_preview_writes_a_contact_sheet(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from cli.commands.layout import layout

    write_logo(tmp_path / "logo.png")
    (tmp_path / "band.yaml").write_text(yaml.safe_dump(band_layout()))
    rows = tmp_path / "people.jsonl"
    rows.write_text(
        "\n".join(f'{{"attendee_id": "A-{i}", "name": "{name}"}}' for i, name in enumerate(NAMES.values())) + "\n"
    )
    result = CliRunner().invoke(
        layout,
        ["preview", str(tmp_path / "band.yaml"), "-f", str(rows), "-o", str(tmp_path / "b.png"),
         "--sheet", str(tmp_path / "sheet.png"), "--dpi", "203"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert f"drew {len(NAMES)}, could not draw 0" in result.output
    assert Image.open(tmp_path / "sheet.png").width > 1000


def test_captions_draw_every_script_the_badges_do() -> None:
    """Each letter of every script's name as a caption alone: each with ink, and no two letters of one script alike.
    A font lacking them draws every one as the same missing-glyph box (``ö`` and ``ó`` were one box with Pillow's
    own font). Scripts are compared apart: Greek Κ and Latin K are rightly the same shape."""
    blank = Image.new("L", (400, 100), 255)
    for script, name in NAMES.items():
        if script.startswith("mixed"):
            continue
        letters = sorted({c for c in name + ("öó" if script == "latin" else "") if unicodedata.category(c) in LETTERS})
        sheet = contact_sheet([(letter, blank) for letter in letters], columns=1, scale=1)
        captions: dict[bytes, str] = {}
        for row, letter in enumerate(letters):
            y = GAP + row * (blank.height + CAPTION + GAP)
            crop = ImageOps.invert(sheet.crop((GAP, y, GAP + blank.width, y + CAPTION - 1)))
            box = crop.getbbox()
            assert box is not None, f"caption {letter!r} drew nothing"
            ink = crop.crop(box).tobytes() + bytes(box[2:])
            assert ink not in captions, f"{script}: caption {letter!r} looks like {captions.get(ink)!r}: a box"
            captions[ink] = letter


LETTERS = ("Ll", "Lu", "Lo")
