"""A layout is checked when it is read: every problem named with the file and the element, nothing drawn."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from layouts.errors import LayoutError
from layouts.files import load_layout
from layouts.template import parse_template
from tests.support.layouts import band_layout, write_logo, write_pdf


def problems(path: Path) -> list[str]:
    with pytest.raises(LayoutError) as caught:
        load_layout(path)
    return caught.value.problems


def test_a_good_layout_loads_with_its_logo(tmp_path: Path, write_layout) -> None:
    write_logo(tmp_path / "logo.png")
    layout = load_layout(write_layout(band_layout()))
    assert layout.stock == "101.6x152.4"
    assert [p.element.type for p in layout.elements] == ["image", "text", "text", "box", "text", "qr"]
    assert layout.assets["logo.png"].startswith(b"\x89PNG")


def test_each_problem_names_the_file_and_the_element(tmp_path: Path, write_layout) -> None:
    write_logo(tmp_path / "logo.png")
    data = band_layout()
    data["elements"] += [  # type: ignore[operator]
        {"type": "text", "text": "{company}", "x": 90, "y": 10, "w": 20, "h": 10},  # off the label
        {"type": "text", "text": "{company}", "x": 5, "y": 10, "w": 20, "h": 10, "font_size": 0},
        {"type": "circle", "x": 5, "y": 10, "w": 20, "h": 10},
        {"type": "text", "text": "{company.upper}", "x": 5, "y": 10, "w": 20, "h": 10},
        {"type": "text", "text": "{company}", "x": 5, "y": 10, "w": 20, "h": 10, "rotate": 45},
    ]
    path = write_layout(data, "speaker.yaml")
    found = problems(path)
    assert all(p.startswith(f"{path}: elements[") for p in found), found
    assert (
        f"{path}: elements[6] (text '{{company}}'): off the label: reaches 110 x 20 mm on a 101.6 x 152.4 mm label"
        in found
    )
    assert f"{path}: elements[7] (text '{{company}}'): font_size: must be > 0 (got 0)" in found
    assert any(p.startswith(f"{path}: elements[8] (circle): unknown element type 'circle'") for p in found)
    assert any("elements[9]" in p and "is not a field name" in p for p in found)
    assert any("elements[10]" in p and "rotate: must be one of 0, 90, 180, 270" in p for p in found)
    assert len(found) == 5


def test_images_are_checked_by_their_bytes(tmp_path: Path, write_layout) -> None:
    (tmp_path / "logo.png").write_text("not a picture at all")
    assert problems(write_layout(band_layout())) == [
        f"{tmp_path / 'layout.yaml'}: elements[0] (image 'logo.png'): logo.png is not a PNG or SVG file"
    ]


def test_a_50_mb_logo_is_refused_without_being_read(tmp_path: Path, write_layout) -> None:
    with open(tmp_path / "logo.png", "wb") as big:
        big.truncate(50 * 1024 * 1024)  # sparse: takes no disk
    (found,) = problems(write_layout(band_layout()))
    assert found.endswith("elements[0] (image 'logo.png'): logo.png is 52.4 MB; at most 8 MB"), found


def test_a_logo_over_2_mb_is_refused(tmp_path: Path, write_layout) -> None:
    (tmp_path / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + os.urandom(3 * 1024 * 1024))
    (found,) = problems(write_layout(band_layout()))
    assert "logo.png is 3.1 MB; at most 2 MB" in found


@pytest.mark.parametrize(
    "svg",
    [
        '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">'
        '<image xlink:href="file:///etc/passwd" width="10" height="10"/></svg>',
        '<svg xmlns="http://www.w3.org/2000/svg"><image href="http://tracker.example/x.png"/></svg>',
        '<svg xmlns="http://www.w3.org/2000/svg"><style>@import url(a.css);</style></svg>',
        '<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/hostname">]>'
        '<svg xmlns="http://www.w3.org/2000/svg"><text>&x;</text></svg>',
        # internal entities only, ten of the level below nine levels deep: a billion "lol"s from 1 kB
        '<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY l0 "lol">'
        + "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, 10))
        + ']><svg xmlns="http://www.w3.org/2000/svg"><text>&l9;</text></svg>',
    ],
)
def test_an_svg_with_external_references_is_refused(tmp_path: Path, write_layout, svg: str) -> None:
    (tmp_path / "logo.svg").write_text(svg)
    data = band_layout()
    data["elements"][0]["src"] = "logo.svg"  # type: ignore[index]
    (found,) = problems(write_layout(data))
    assert "elements[0] (image 'logo.svg'): logo.svg has an external reference" in found


def test_an_svg_with_inline_data_and_fragments_is_fine(tmp_path: Path, write_layout) -> None:
    (tmp_path / "logo.svg").write_text(
        '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="40" height="20">'
        '<defs><rect id="r" width="30" height="10"/></defs><use xlink:href="#r" x="5" y="5"/></svg>'
    )
    data = band_layout()
    data["elements"][0]["src"] = "logo.svg"  # type: ignore[index]
    assert load_layout(write_layout(data)).assets["logo.svg"].startswith(b"<svg")


def test_a_layout_without_the_name_is_refused(tmp_path: Path, write_layout) -> None:
    write_logo(tmp_path / "logo.png")
    data = band_layout()
    del data["elements"][1]  # type: ignore[attr-defined]
    assert problems(write_layout(data)) == [
        f"{tmp_path / 'layout.yaml'}: no text element shows {{name}}: every badge must carry the name"
    ]


def test_background_must_be_a_pdf_or_png(tmp_path: Path, write_layout) -> None:
    write_logo(tmp_path / "logo.png")
    write_pdf(tmp_path / "bg.pdf", (101.6, 152.4))
    assert load_layout(write_layout(band_layout(background="bg.pdf"))).background == "bg.pdf"
    (tmp_path / "bg.txt").write_text("%PDX")
    (found,) = problems(write_layout(band_layout(background="bg.txt")))
    assert found == f"{tmp_path / 'layout.yaml'}: background: bg.txt is not a PNG or PDF file"


def test_unknown_top_level_fields_and_bad_yaml(tmp_path: Path, write_layout) -> None:
    write_logo(tmp_path / "logo.png")
    assert problems(write_layout(band_layout(colour="red"))) == [
        f"{tmp_path / 'layout.yaml'}: colour: unknown field (known: size, elements, background, background_mode, name)"
    ]
    bad = tmp_path / "bad.yaml"
    bad.write_text("size: [")
    (found,) = problems(bad)
    assert found.startswith(f"{bad}: is not valid YAML")


def test_a_file_outside_the_layouts_folder_is_refused(tmp_path: Path, write_layout) -> None:
    data = band_layout()
    data["elements"][0]["src"] = "../logo.png"  # type: ignore[index]
    (found,) = problems(write_layout(data))
    assert "name a file beside the layout" in found


def test_templates_take_plain_field_names_only() -> None:
    template = parse_template("{first_name} {{{last_name}}}")
    assert template.fields == ("first_name", "last_name")
    missing: set[str] = set()
    assert template.fill({"first_name": "Ana"}, missing) == "Ana {}"
    assert missing == {"last_name"}
    for bad in ("{name!r}", "{name:>9}", "{name[0]}", "{Name}", "{name"):
        with pytest.raises(ValueError):
            parse_template(bad)
