"""The cmap reader against fontTools: same subtable chosen, same code points, on every installed face and on fonts
built here with each subtable format and the edge cases of the missing glyph."""

from __future__ import annotations

import logging
import struct
from pathlib import Path

import pytest
from fontTools.fontBuilder import FontBuilder
from fontTools.pens.ttGlyphPen import TTGlyphPen
from fontTools.ttLib import TTCollection, TTFont
from fontTools.ttLib.tables._c_m_a_p import CmapSubtable
from fontTools.ttLib.tables.DefaultTable import DefaultTable

from drivers.render import fonts
from drivers.render.cmap import FontFileError, best_cmap_ranges

GLYPHS = [".notdef", *(f"g{i}" for i in range(1, 40))]


def _codes(ranges: list[tuple[int, int]]) -> list[int]:
    return [code for start, end in ranges for code in range(start, end + 1)]


def _font_tools_codes(path: Path, index: int = 0) -> list[int]:
    with TTFont(path, fontNumber=index, lazy=True) as font:
        return sorted(font.getBestCmap() or {})


def _installed_faces() -> list[tuple[Path, int]]:
    files = [
        path
        for directory in fonts.font_dirs()
        if directory.is_dir()
        for path in sorted(directory.iterdir())
        if path.suffix in (".ttf", ".otf", ".ttc")
    ]
    return [
        (path, index)
        for path in files
        for index in range(len(TTCollection(path).fonts) if path.suffix == ".ttc" else 1)
    ]


def test_every_installed_face_reads_as_font_tools_reads_it() -> None:
    faces = _installed_faces()
    # The bundled fonts at least, and in CI Debian's fonts-noto-core and fonts-noto-cjk (~300 faces).
    assert {p.name for p, _ in faces} >= {p.name for p in fonts.PACKAGE_FONT_DIR.glob("*.ttf")}
    assert any(p.suffix == ".ttc" for p, _ in faces), "no font collection installed: the CJK path is untested"
    differing = [
        f"{path.name}#{index}"
        for path, index in faces
        if _codes(best_cmap_ranges(path, index)) != _font_tools_codes(path, index)
    ]
    assert not differing


def _built(tmp_path: Path, subtables: list[tuple[int, int, int, dict[int, str]]]) -> Path:
    """A font with the given (format, platform, encoding, code -> glyph) cmap subtables, saved to a file."""
    builder = FontBuilder(1000, isTTF=True)
    builder.setupGlyphOrder(GLYPHS)
    builder.setupCharacterMap({})
    pen = TTGlyphPen(None)
    pen.moveTo((0, 0))
    pen.lineTo((0, 500))
    pen.lineTo((500, 0))
    pen.closePath()
    builder.setupGlyf({name: pen.glyph() for name in GLYPHS})
    builder.setupHorizontalMetrics({name: (600, 0) for name in GLYPHS})
    builder.setupHorizontalHeader(ascent=800, descent=-200)
    builder.setupOS2()
    builder.setupPost()
    builder.setupNameTable({"familyName": "Test", "styleName": "Regular"})
    tables = []
    for fmt, platform, encoding, mapping in subtables:
        subtable = CmapSubtable.newSubtable(fmt)
        subtable.platformID, subtable.platEncID, subtable.language = platform, encoding, 0
        subtable.cmap = mapping
        tables.append(subtable)
    builder.font["cmap"].tables = tables
    path = tmp_path / "built.ttf"
    builder.font.save(path)
    return path


# Glyph ids out of code order, so format 4 needs glyph-array segments (idRangeOffset), not only deltas.
SCATTERED = {0x41 + i: GLYPHS[1 + (i * 7) % 39] for i in range(26)}


@pytest.mark.parametrize(
    ("fmt", "mapping"),
    [
        (0, {0x20: "g1", 0x41: "g2", 0x42: "g3", 0xE9: "g4"}),
        (4, SCATTERED | {0x3000 + i: GLYPHS[1 + i % 39] for i in range(100)} | {0xFFFE: "g5"}),
        (6, {0x100 + i: GLYPHS[1 + i % 39] for i in range(30) if i % 4}),
        (12, {0x41: "g1", 0x42: "g2", 0x1F600: "g3", 0x1F601: "g4", 0x1F603: "g9", 0x10FFFD: "g6"}),
        (13, {0x4E00 + i: "g7" for i in range(50)} | {0x20000 + i: "g8" for i in range(5)}),
    ],
    ids=lambda value: f"format-{value}" if isinstance(value, int) else "",
)
def test_each_subtable_format_reads_as_font_tools_reads_it(tmp_path: Path, fmt: int, mapping: dict[int, str]) -> None:
    platform, encoding = (3, 10) if fmt in (12, 13) else (3, 1)
    path = _built(tmp_path, [(fmt, platform, encoding, mapping)])
    with TTFont(path) as font:
        assert font["cmap"].tables[0].format == fmt  # fontTools did not pick another format on its own
    assert _codes(best_cmap_ranges(path)) == _font_tools_codes(path) == sorted(mapping)


def test_format_4_leaves_out_every_code_point_that_lands_on_the_missing_glyph(tmp_path: Path) -> None:
    # fontTools never writes such segments, so the subtable is spelled out: a delta segment U+0041..U+0045 whose
    # delta sends U+0043 to glyph 0, a glyph-array segment U+0061..U+0066 with two 0 entries and one entry that the
    # delta wraps to 0, and the U+FFFF terminator.
    ends, starts, deltas, range_offsets = (0x45, 0x66, 0xFFFF), (0x41, 0x61, 0xFFFF), (-0x43 & 0xFFFF, 1, 1), (0, 4, 0)
    glyph_array = (3, 0, 5, 0, 7, 0xFFFF)
    words = (*ends, 0, *starts, *deltas, *range_offsets, *glyph_array)
    subtable = struct.pack(">7H", 4, 14 + 2 * len(words), 0, 6, 4, 1, 2) + struct.pack(f">{len(words)}H", *words)
    path = _built(tmp_path, [(4, 3, 1, {0x41: "g1"})])
    font = TTFont(path)
    font["cmap"] = DefaultTable("cmap")
    font["cmap"].data = struct.pack(">HHHHL", 0, 1, 3, 1, 12) + subtable
    font.save(path)
    expected = [0x41, 0x42, 0x44, 0x45, 0x61, 0x63, 0x65]
    assert _codes(best_cmap_ranges(path)) == _font_tools_codes(path) == expected


def test_the_full_unicode_subtable_wins_over_the_bmp_one(tmp_path: Path) -> None:
    bmp = {0x41: "g1", 0x42: "g2"}
    path = _built(tmp_path, [(4, 3, 1, bmp), (12, 3, 10, bmp | {0x1F600: "g3"}), (6, 1, 0, {0x43: "g4"})])
    assert best_cmap_ranges(path) == [(0x41, 0x42), (0x1F600, 0x1F600)]


def test_a_font_with_no_unicode_subtable_covers_nothing(tmp_path: Path) -> None:
    path = _built(tmp_path, [(6, 1, 0, {0x41: "g1"})])  # a Macintosh Roman table only
    assert best_cmap_ranges(path) == [] and _font_tools_codes(path) == []


def test_a_glyph_zero_group_start_is_missing_in_format_12_and_the_whole_group_in_13(tmp_path: Path) -> None:
    path = _built(tmp_path, [(12, 3, 10, {0x41: "g1"})])
    data = bytearray(path.read_bytes())
    group = bytes.fromhex("00000041 00000041 00000001")  # the one group: U+0041 -> glyph 1
    at = data.index(group)
    data[at : at + 12] = bytes.fromhex("00000040 00000043 00000000")  # U+0040..U+0043 -> glyphs 0..3
    path.write_bytes(data)
    assert best_cmap_ranges(path) == [(0x41, 0x43)]
    assert _font_tools_codes(path) == [0x41, 0x42, 0x43]
    data[at - 16 : at - 14] = b"\x00\x0d"  # the same group in format 13: every code point -> glyph 0
    path.write_bytes(data)
    assert best_cmap_ranges(path) == []


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda data: b"%PDF-1.7 " + data[9:], "not a TrueType/OpenType font"),
        (lambda data: data[:40], "no cmap table|truncated"),
        (lambda data: data.replace(b"cmap", b"xmap", 1), "no cmap table"),
    ],
    ids=["not-a-font", "truncated", "no-cmap"],
)
def test_a_damaged_font_is_refused_by_name(tmp_path: Path, damage: object, message: str) -> None:
    path = _built(tmp_path, [(4, 3, 1, {0x41: "g1"})])
    path.write_bytes(damage(path.read_bytes()))  # type: ignore[operator]
    with pytest.raises(FontFileError, match=message):
        best_cmap_ranges(path)


def test_a_face_index_past_the_collection_is_refused() -> None:
    collection = next((p for p, _ in _installed_faces() if p.suffix == ".ttc"), None)
    assert collection is not None
    faces = len(TTCollection(collection).fonts)
    assert best_cmap_ranges(collection, faces - 1)
    with pytest.raises(FontFileError, match=f"has {faces} faces, not a face #{faces}"):
        best_cmap_ranges(collection, faces)
    with pytest.raises(FontFileError, match="not a font collection"):
        best_cmap_ranges(fonts.PACKAGE_FONT_DIR / "NotoSans-Regular.ttf", 1)


def test_an_unsupported_format_is_refused_and_the_agent_treats_the_font_as_covering_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _built(tmp_path, [(4, 3, 1, {0x41: "g1"})])
    data = bytearray(path.read_bytes())
    (subtable,) = TTFont(path)["cmap"].tables
    cmap_at = data.index(bytes.fromhex("0000 0001 0003 0001"))  # version 0, one subtable, (3, 1)
    data[cmap_at + 12 : cmap_at + 14] = b"\x00\x02"  # its format: 2 (high-byte mapping, legacy CJK)
    path.write_bytes(data)
    assert subtable.format == 4
    with pytest.raises(FontFileError, match="format 2 is not supported"):
        best_cmap_ranges(path)
    with caplog.at_level(logging.WARNING, logger=fonts.__name__):
        covered = fonts.coverage(fonts.Face(path))
    assert len(covered) == 0 and ord("A") not in covered
    assert "cannot read font built.ttf: cmap subtable format 2 is not supported" in caplog.text
