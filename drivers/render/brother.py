"""Brother QL raster: the badge as one print job, and raster jobs read back to images.

The byte layout follows Brother's "QL Series Command Reference" as implemented by brother_ql (whose reader the
tests use to check ours): the head prints each row right to left, so rows are mirrored, and the printable
stripe sits ``offset_r`` dots from the right end of the head. Rows are packbits-compressed where the model
allows it; we never send ``Z`` (blank row) because only some models accept it.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass

from brother_ql.labels import Color, FormFactor, LabelsManager
from brother_ql.models import ModelsManager
from PIL import Image, ImageOps

from drivers.render.bits import fit_width, pack, unpack


@dataclass(frozen=True)
class QLModel:
    bytes_per_row: int = 90
    invalidate_bytes: int = 200
    compression: bool = True
    mode_switch: bool = True
    cutter: bool = True
    min_rows: int = 150
    extra_offset_r: int = 0


@dataclass(frozen=True)
class QLLabel:
    width_mm: int
    length_mm: int  # 0 for endless tape
    printable_dots: int
    printable_rows: int  # 0 for endless tape
    offset_r: int
    feed_margin: int
    models: tuple[str, ...] = ()  # the only models that take it; empty = every model

    def describe(self) -> str:
        """How a volunteer names the roll: "62 mm endless", "62x100 mm die-cut"."""
        return f"{self.width_mm} mm endless" if not self.length_mm else f"{self.width_mm}x{self.length_mm} mm die-cut"


def _brother_ql_tables() -> tuple[dict[str, QLModel], dict[str, QLLabel]]:
    # brother_ql's tables are the maintained record of each model's head, compression and label stripes; copies
    # of them drift. Two-colour (red/black) stock and round labels are left out: the badge is one colour, square.
    models = {
        m.identifier: QLModel(
            bytes_per_row=m.number_bytes_per_row,
            invalidate_bytes=m.num_invalidate_bytes,
            compression=m.compression,
            mode_switch=m.mode_setting,
            cutter=m.cutting,
            min_rows=m.min_max_length_dots[0],
            extra_offset_r=m.additional_offset_r,
        )
        for m in ModelsManager().iter_elements()
    }
    labels = {
        lb.identifier: QLLabel(
            width_mm=lb.tape_size[0],
            length_mm=lb.tape_size[1],
            printable_dots=lb.dots_printable[0],
            printable_rows=lb.dots_printable[1],
            offset_r=lb.offset_r,
            feed_margin=lb.feed_margin,
            models=tuple(lb.restricted_to_models),
        )
        for lb in LabelsManager().iter_elements()
        if lb.color == Color.BLACK_WHITE and lb.form_factor in (FormFactor.ENDLESS, FormFactor.DIE_CUT)
    }
    return models, labels


MODELS, LABELS = _brother_ql_tables()


DPI = 300  # every QL model's head


def _mm(dots: int) -> float:
    return dots * 25.4 / DPI


_MEDIA_ENDLESS, _MEDIA_DIE_CUT = 0x0A, 0x0B
_RUN = re.compile(rb"(.)\1{2,127}", re.DOTALL)


def packbits(row: bytes) -> bytes:
    """TIFF PackBits: runs of 3+ equal bytes as (1 - n, byte), the rest as literals of up to 128 bytes."""
    out = bytearray()

    def literal(chunk: bytes) -> None:
        for i in range(0, len(chunk), 128):
            part = chunk[i : i + 128]
            out.append(len(part) - 1)
            out.extend(part)

    at = 0
    for match in _RUN.finditer(row):
        literal(row[at : match.start()])
        out.append(257 - len(match.group()))  # two's complement of 1 - n
        out.append(row[match.start()])
        at = match.end()
    literal(row[at:])
    return bytes(out)


def unpackbits(data: bytes) -> bytes:
    out = bytearray()
    i = 0
    while i < len(data):
        header = data[i]
        if header < 128:
            chunk = data[i + 1 : i + 2 + header]
            if len(chunk) != header + 1:
                raise ValueError("packbits literal runs past the end of the raster line")
            out.extend(chunk)
            i += header + 2
        elif header > 128:
            if i + 1 >= len(data):
                raise ValueError("packbits run has no byte to repeat")
            out.extend(data[i + 1 : i + 2] * (257 - header))
            i += 2
        else:
            i += 1  # -128 is a no-op by the TIFF spec
    return bytes(out)


def encode_brother_raster(image: Image.Image, model: str = "QL-820NWB", label: str = "62") -> bytes:
    """A complete Brother QL job printing ``image`` (300 dpi, width across the tape) and cutting after it.

    Args:
        image: the badge; narrower images are centred on the tape, white edges outside the printable stripe
            are trimmed.
        model: a key of :data:`MODELS`.
        label: a key of :data:`LABELS` (``"62"`` = 62 mm endless tape, ``"62x100"`` = die-cut).

    Raises:
        ValueError: unknown model or label, a label the model cannot take, a badge larger than the label, an
            image too short for the model, or with ink outside the printable stripe.
    """
    if model not in MODELS:
        raise ValueError(f"unknown Brother model {model!r}; known: {', '.join(MODELS)}")
    if label not in LABELS:
        raise ValueError(f"unknown Brother label {label!r}; known: {', '.join(LABELS)}")
    spec, media = MODELS[model], LABELS[label]
    if media.models and model not in media.models:
        raise ValueError(f"{model} cannot print {media.describe()} labels (only {', '.join(media.models)})")
    width_mm, height_mm = _mm(image.width), _mm(image.height)
    if width_mm > media.width_mm + 0.5 or (media.length_mm and height_mm > media.length_mm + 0.5):
        # Never trimmed: a badge laid out for other stock would lose its edges and still count as printed.
        raise ValueError(f"the badge is {width_mm:.0f}x{height_mm:.0f} mm, larger than the {media.describe()} label")
    image = fit_width(image, media.printable_dots, f"{label} labels", media.printable_rows or None)
    if image.height < spec.min_rows:
        raise ValueError(f"image is {image.height} rows; {model} prints at least {spec.min_rows}")
    head = Image.new("1", (spec.bytes_per_row * 8, image.height), 1)
    head.paste(image, (head.width - image.width - media.offset_r - spec.extra_offset_r, 0))
    row_bytes, rows, data = pack(ImageOps.mirror(head))

    job = bytearray(b"\x00" * spec.invalidate_bytes)
    job += b"\x1b@"  # initialize
    if spec.mode_switch:
        job += b"\x1bia\x01"  # raster mode
    valid = 0x80 | 0x40 | 0x02 | 0x04 | 0x08  # recover, quality, media type, width and length are given
    kind = _MEDIA_DIE_CUT if media.length_mm else _MEDIA_ENDLESS
    job += b"\x1biz" + struct.pack("<BBBBIBB", valid, kind, media.width_mm, media.length_mm, rows, 0, 0)
    if spec.cutter:
        job += b"\x1biM\x40"  # auto cut on
        job += b"\x1biA\x01"  # cut after every label
        job += b"\x1biK\x08"  # expanded mode: cut at end
    job += b"\x1bid" + struct.pack("<H", media.feed_margin)
    if spec.compression:
        job += b"M\x02"
    # A badge repeats rows (white margins and gaps, the straight parts of large letters): each distinct row is
    # compressed once. This halves the encoding, which is the larger half of a Brother badge's drawing time
    # (bench/render.py), and a Brother badge's drawing is what the first badge after a lull waits for.
    lines: dict[bytes, bytes] = {}
    for y in range(rows):
        row = data[y * row_bytes : (y + 1) * row_bytes]
        line = lines.get(row)
        if line is None:
            packed = packbits(row) if spec.compression else row
            line = lines[row] = b"g\x00" + bytes([len(packed)]) + packed
        job += line
    job += b"\x1a"  # print, feed and cut
    return bytes(job)


# Commands without raster data: prefix -> number of parameter bytes.
_SKIP: dict[bytes, int] = {
    b"\x1bia": 1,
    b"\x1biz": 10,
    b"\x1biM": 1,
    b"\x1biA": 1,
    b"\x1biK": 1,
    b"\x1bid": 2,
    b"\x1biS": 0,
    b"\x1bi!": 1,
    b"\x1biUw\x01": 127,
    b"\x1biUJ": 14,
    b"M": 1,
}


def decode_brother_raster(data: bytes) -> list[Image.Image]:
    """The pages of a Brother QL raster job, as mode "1" images the width of the head, as seen from the front.

    Raises:
        ValueError: an unknown command, a truncated one, or raster lines of different lengths.
    """
    if not isinstance(data, bytes | bytearray | memoryview):
        raise ValueError(f"Brother raster must be bytes, not {type(data).__name__}")
    data = bytes(data)
    pages: list[Image.Image] = []
    rows: list[bytes] = []
    compressed = False
    i = 0
    while i < len(data):
        byte = data[i]
        if byte == 0x00:
            i += 1
        elif data.startswith(b"\x1b@", i):
            rows, compressed, i = [], False, i + 2
        elif byte in (0x67, 0x77):  # g: raster line; w: two-colour raster line (its layer byte is skipped)
            if i + 3 > len(data):
                raise ValueError(f"raster line at offset {i} is truncated")
            length = data[i + 2]
            line = data[i + 3 : i + 3 + length]
            if len(line) != length:
                raise ValueError(f"raster line at offset {i} declares {length} bytes, {len(line)} present")
            if byte == 0x67 or data[i + 1] == 0x01:
                rows.append(unpackbits(line) if compressed else line)
            i += 3 + length
        elif byte == 0x5A:  # Z: a blank line (compressed mode only)
            rows.append(b"")
            i += 1
        elif byte in (0x0C, 0x1A):
            if rows:
                pages.append(_page(rows, i))
            rows, i = [], i + 1
        else:
            prefix = next((p for p in _SKIP if data.startswith(p, i)), None)
            if prefix is None:
                raise ValueError(f"unknown Brother raster command {data[i : i + 4].hex(' ')} at offset {i}")
            end = i + len(prefix) + _SKIP[prefix]
            if end > len(data):
                raise ValueError(f"command {prefix!r} at offset {i} is truncated")
            if prefix == b"M":
                compressed = data[i + 1] == 0x02
            i = end
    return pages


def _page(rows: list[bytes], where: int) -> Image.Image:
    width = max(len(r) for r in rows)
    if width == 0 or any(r and len(r) != width for r in rows):
        raise ValueError(f"page ending at offset {where} has raster lines of different lengths")
    data = b"".join(r or bytes(width) for r in rows)
    return ImageOps.mirror(unpack(data, width, len(rows)))
