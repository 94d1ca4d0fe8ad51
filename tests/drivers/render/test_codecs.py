"""Codecs: our bytes read back by our decoders and by other people's readers (Zebrash, brother_ql, python-escpos)."""

from __future__ import annotations

import base64
import io
import zlib
from pathlib import Path

import pytest
from brother_ql.conversion import convert
from brother_ql.raster import BrotherQLRaster
from brother_ql.reader import BrotherQLReader
from escpos.printer import Dummy
from PIL import Image, ImageChops, ImageOps

from drivers.base import Badge
from drivers.label import LabelConfig
from drivers.render import render_badge
from drivers.render.bits import fit_width
from drivers.render.brother import (
    LABELS,
    MODELS,
    decode_brother_raster,
    encode_brother_raster,
    packbits,
    unpackbits,
)
from drivers.render.escpos import decode_escpos_raster, encode_escpos_raster
from drivers.render.zpl import crc16_xmodem, decode_zpl_graphics, encode_zpl

from .conftest import BROTHER_62, ESCPOS_80, ZEBRA_203, ZEBRA_300, Zebrash, qr_texts

BADGE = Badge("job-1", "ATT-2026-000123", "María José García", "Universidad de Sevilla", "Speaker")
ARABIC = Badge("job-2", "ATT-2026-000124", "محمد عبد الله", "جامعة القاهرة", "متحدث")


def same(a: Image.Image, b: Image.Image) -> bool:
    return a.size == b.size and ImageChops.difference(a.convert("L"), b.convert("L")).getbbox() is None


# ZPL ------------------------------------------------------------------------------------------------------------


def test_crc_is_xmodem() -> None:
    assert crc16_xmodem(b"123456789") == 0x31C3  # the CRC-16/XMODEM check value


@pytest.mark.parametrize("label", [ZEBRA_203, ZEBRA_300])
def test_zpl_round_trip(label: object) -> None:
    image = render_badge(BADGE, label)  # type: ignore[arg-type]
    zpl = encode_zpl(image)
    assert zpl.startswith(b"^XA") and zpl.rstrip().endswith(b"^XZ") and b"^PQ1" in zpl and b":Z64:" in zpl
    (decoded,) = decode_zpl_graphics(zpl)
    assert same(decoded, image)
    assert qr_texts(decoded) == [BADGE.attendee_id]


@pytest.mark.parametrize(("badge", "label"), [(BADGE, ZEBRA_203), (ARABIC, ZEBRA_300)])
def test_zebrash_renders_our_exact_bytes(zebrash: Zebrash, tmp_path: Path, badge: Badge, label: object) -> None:
    image = render_badge(badge, label)  # type: ignore[arg-type]
    (png,) = zebrash.render(encode_zpl(image), label, tmp_path)  # type: ignore[arg-type]
    assert qr_texts(png) == [badge.attendee_id]
    # Zebrash draws the graphic dot for dot. Its canvas is the nominal label (a few dots wider than our whole-byte
    # width) with the print width centred on it, so line the two up by their ink before comparing.
    theirs = png.convert("L").point(lambda v: 0 if v < 128 else 255)
    their_box, our_box = ImageOps.invert(theirs).getbbox(), ImageOps.invert(image.convert("L")).getbbox()
    assert their_box is not None and our_box is not None
    dx, dy = their_box[0] - our_box[0], their_box[1] - our_box[1]
    assert abs(dx) <= 16 and abs(dy) <= 4  # 300 dpi is 12 dots/mm to Zebrash: its canvas is 19 dots wider
    assert same(theirs.crop((dx, dy, dx + image.width, dy + image.height)), image)


def test_zpl_hex_and_b64_and_binary_forms_decode() -> None:
    image = Image.new("1", (16, 3), 1)
    for x in range(8):
        image.putpixel((x, 0), 0)
        image.putpixel((x, 1), 0)
    image.putpixel((15, 2), 0)
    raw = bytes([0xFF, 0x00, 0xFF, 0x00, 0x00, 0x01])
    b64 = base64.b64encode(raw)
    z64 = base64.b64encode(zlib.compress(raw))
    forms = [
        b"^XA^FO0,0^GFA,6,6,2,FF00FF000001^FS^XZ",  # plain hex
        b"^XA^GFA,6,6,2,\nFF00\n:\nI01^FS^XZ",  # ZPL hex compression: ":" repeats a row, "I" = 3 times
        b"^XA^GFA,6,6,2,FF,:I01^FS^XZ",  # ',' ends a row with zeros
        b"^xa^gfa,6,6,2,ff00ff000001^fs^xz",
        b"^XA^GFA,6,6,2,:B64:" + b64 + b":%04X^FS^XZ" % crc16_xmodem(b64),
        b"^XA^GFA,6,6,2,:Z64:" + z64 + b":%04x^FS^XZ" % crc16_xmodem(z64),
        b"^XA^GFB,6,6,2," + raw + b"^FS^XZ",
    ]
    for zpl in forms:
        (decoded,) = decode_zpl_graphics(zpl)
        assert same(decoded, image), zpl


@pytest.mark.parametrize(
    "zpl",
    [
        b"^GFA,6,6,2,:Z64:eJz7/58BAAUAAf8=:0000",  # CRC mismatch
        b"^GFA,6,6,2,:Z64:!!!!:0000",
        b"^GFA,6,6,2,:Z64:eJz7/58BAAUAAf8=",  # no CRC
        b"^GFA,6,6,0,FF",  # zero bytes per row
        b"^GFA,6,7,2,FF00FF000001",  # total not a multiple of the row
        b"^GFA,x,6,2,FF",
        b"^GFA,6,6,2,FF00FF",  # short
        b"^GFA,6,6,2,FF00FF000001FF",  # long
        b"^GFA,6,6,2,FFQQ",
        b"^GFA,6,6,2,:FF",
        b"^GFC,6,6,2,FF",
        b"^GFB,6,6,2,\x00",
        b"^GFA,99999999999,99999999999,1,00",
        b"^GF",
    ],
)
def test_zpl_malformed_graphics_raise_value_error(zpl: bytes) -> None:
    with pytest.raises(ValueError):
        decode_zpl_graphics(zpl)


def test_zpl_without_graphics_is_empty() -> None:
    assert decode_zpl_graphics(b"^XA^FO10,10^A0N,30,30^FDHello^FS^XZ") == []


# Brother QL ------------------------------------------------------------------------------------------------------


def test_packbits_round_trip() -> None:
    for row in (bytes(90), b"\xff" * 90, bytes(range(90)), b"\x00\x00\x01" * 30, b"ab" + b"\x00" * 200):
        assert unpackbits(packbits(row)) == row


def test_brother_round_trip() -> None:
    image = render_badge(BADGE, BROTHER_62)
    job = encode_brother_raster(image, "QL-820NWB", "62")
    assert job.startswith(b"\x00" * 400 + b"\x1b@\x1bia\x01\x1biz") and job.endswith(b"\x1a")
    (page,) = decode_brother_raster(job)
    assert page.size == (720, image.height)
    assert qr_texts(page) == [BADGE.attendee_id]


def test_brother_ql_reader_reads_our_raster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    image = render_badge(ARABIC, BROTHER_62)
    monkeypatch.chdir(tmp_path)
    reader = BrotherQLReader(io.BufferedReader(io.BytesIO(encode_brother_raster(image))))  # type: ignore[arg-type]
    reader.analyse()
    (saved,) = sorted(tmp_path.glob("label*.png"))
    assert qr_texts(Image.open(saved)) == [ARABIC.attendee_id]
    assert same(Image.open(saved), decode_brother_raster(encode_brother_raster(image))[0])


@pytest.mark.parametrize(("model", "compress"), [("QL-820NWB", True), ("QL-700", False), ("QL-1110NWB", True)])
def test_brother_ql_generator_agrees_with_our_placement(model: str, compress: bool) -> None:
    image = fit_width(render_badge(BADGE, BROTHER_62), 696, "62 mm")
    theirs = BrotherQLRaster(model)
    convert(theirs, [image.convert("L")], label="62", cut=True, compress=compress, rotate="0", dither=False)
    (ours,) = decode_brother_raster(encode_brother_raster(image, model, "62"))
    (reference,) = decode_brother_raster(theirs.data)
    assert same(ours, reference)


def test_brother_die_cut_and_errors() -> None:
    image = render_badge(BADGE, BROTHER_62)
    (page,) = decode_brother_raster(encode_brother_raster(image, label="62x100"))
    assert page.height == 1109
    with pytest.raises(ValueError, match="model"):
        encode_brother_raster(image, model="QL-9999")
    with pytest.raises(ValueError, match="label"):
        encode_brother_raster(image, label="99")
    with pytest.raises(ValueError, match="rows"):
        encode_brother_raster(Image.new("1", (696, 20), 1))
    with pytest.raises(ValueError, match="prints only"):  # the tape's width, but ink where the head cannot reach
        encode_brother_raster(Image.new("1", (732, 300), 0))


def test_brother_badge_larger_than_the_label_is_an_error_naming_both_sizes() -> None:
    wide = render_badge(BADGE, LabelConfig(width_mm=102, height_mm=152, dpi=300))
    with pytest.raises(ValueError, match=r"the badge is 102x152 mm, larger than the 62 mm endless label"):
        encode_brother_raster(wide, "QL-820NWB", "62")
    with pytest.raises(ValueError, match=r"larger than the 62x29 mm die-cut label"):
        encode_brother_raster(render_badge(BADGE, BROTHER_62), "QL-820NWB", "62x29")
    with pytest.raises(ValueError, match=r"QL-820NWB cannot print 102 mm endless labels \(only .*QL-1100"):
        encode_brother_raster(wide, "QL-820NWB", "102")
    (page,) = decode_brother_raster(encode_brother_raster(wide, "QL-1100", "102"))
    assert page.width == 162 * 8


def test_brother_tables_come_from_brother_ql() -> None:
    from brother_ql.labels import LabelsManager
    from brother_ql.models import ModelsManager

    assert MODELS["QL-700"].compression is False and MODELS["QL-820NWB"].compression is True
    assert set(MODELS) == set(ModelsManager().iter_identifiers())
    assert {"62", "29", "102", "62x100", "29x90"} <= set(LABELS) <= set(LabelsManager().iter_identifiers())
    assert LABELS["62x100"].length_mm == 100 and LABELS["62"].length_mm == 0


@pytest.mark.parametrize(
    "job",
    [
        b"\x1b@g\x00\x05ab",
        b"\x1b@\xee",
        b"\x1b@\x1biz\x00",
        b"M\x02g\x00\x02\x05a\x1a",
        b"g",
        b"\x1b@g\x00\x01\x00g\x00\x02\x00\x00\x1a",
    ],
)
def test_brother_malformed_raises_value_error(job: bytes) -> None:
    with pytest.raises(ValueError):
        decode_brother_raster(job)


# ESC/POS ---------------------------------------------------------------------------------------------------------


def test_escpos_round_trip() -> None:
    image = render_badge(BADGE, ESCPOS_80)
    job = encode_escpos_raster(image)
    assert job.startswith(b"\x1b@\x1dv0\x00") and job.endswith(b"\x1dVA\x00")
    assert job.count(b"\x1dv0") == -(-image.height // 256)  # bands of at most 256 rows
    (page,) = decode_escpos_raster(job)
    assert page.size == (576, image.height)
    assert same(page, fit_width(image, 576, "80 mm"))
    assert qr_texts(page) == [BADGE.attendee_id]


def test_python_escpos_raster_matches_ours() -> None:
    image = fit_width(render_badge(ARABIC, ESCPOS_80), 576, "80 mm")
    printer = Dummy()
    printer.image(image, impl="bitImageRaster", fragment_height=256, center=False)
    printer.cut()
    (theirs,) = decode_escpos_raster(printer.output)
    (ours,) = decode_escpos_raster(encode_escpos_raster(image))
    assert same(theirs.crop((0, 0, *ours.size)), ours)


def test_escpos_decoder_skips_text_and_status_and_splits_at_cuts() -> None:
    one = encode_escpos_raster(Image.new("1", (64, 10), 0))
    job = b"\x10\x04\x01\x1ba\x01Hello\n\x1d!\x11" + one + one + b"\x1d(k\x03\x001A2"
    pages = decode_escpos_raster(job)
    assert [p.size for p in pages] == [(64, 10), (64, 10)]


@pytest.mark.parametrize(
    "job",
    [
        b"\x1dv0\x00\x10\x00\x10\x00\x00",
        b"\x1b\xee",
        b"\x1d\xee",
        b"\x1dv0\x07\x01\x00\x01\x00\x00",
        b"\x1b",
        b"\x1dV",
        b"\x1d(k\xff\xff",
    ],
)
def test_escpos_malformed_raises_value_error(job: bytes) -> None:
    with pytest.raises(ValueError):
        decode_escpos_raster(job)


@pytest.mark.parametrize("decoder", [decode_zpl_graphics, decode_brother_raster, decode_escpos_raster])
def test_decoders_reject_non_bytes(decoder: object) -> None:
    with pytest.raises(ValueError):
        decoder("not bytes")  # type: ignore[operator]
