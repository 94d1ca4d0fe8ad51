"""Which code points a font face maps to a glyph, read straight from its OpenType ``cmap`` table.

Only the code points are wanted, as ranges, so this reads the one table it needs and never builds a per-code-point
map: a CJK face maps ~45,000 code points, and fontTools' ``getBestCmap`` built them into a dict that peaked at
~26 MB a face (~10 MB for a 300-glyph one, from its glyph order) in an agent on a Pi, fragmenting the heap the
agent keeps for the whole event. The subtable chosen and the rules for the missing glyph follow fontTools (the
tests check this module against it on every installed face), so a name is refused exactly when a font lacks one of
its characters.

Formats read: 0, 4, 6, 12 and 13, which is every format a Unicode subtable uses in practice; the legacy
formats 2, 8 and 10 are refused with a :class:`FontFileError` (the font then covers nothing: a name in it is refused,
never printed with holes).
"""

from __future__ import annotations

import struct
import sys
from array import array
from collections.abc import Iterable
from pathlib import Path
from typing import Any, BinaryIO

#: (platform, encoding) of the subtables, best first: Unicode full repertoire, then BMP only (fontTools' order).
PREFERENCES: tuple[tuple[int, int], ...] = ((3, 10), (0, 6), (0, 4), (3, 1), (0, 3), (0, 2), (0, 1), (0, 0))
_LAST_CODE_POINT = 0x10FFFF
_SFNT_VERSIONS = (b"\x00\x01\x00\x00", b"OTTO", b"true")

Range = tuple[int, int]  # first and last code point, inclusive


class FontFileError(ValueError):
    """The file is not a font this reader understands, or its cmap is damaged."""


def best_cmap_ranges(path: Path, index: int = 0) -> list[Range]:
    """The code points the face's best Unicode cmap subtable maps to a glyph other than ``.notdef``.

    Args:
        path: a TrueType/OpenType font or collection (``.ttf``, ``.otf``, ``.ttc``).
        index: the face in a collection.

    Returns:
        Sorted, non-overlapping, non-adjacent inclusive ranges; empty when the face has no Unicode subtable.

    Raises:
        FontFileError: not an sfnt font, no such face, no cmap, or a damaged or unsupported subtable.
        OSError: the file cannot be read.
    """
    with open(path, "rb") as file:
        offset, length = _table_location(file, index, b"cmap")
        file.seek(offset)
        cmap = file.read(length)
    if len(cmap) < length:
        raise FontFileError("the cmap table runs past the end of the file")
    subtable = _best_subtable(cmap)
    if subtable is None:
        return []
    return _merged(_subtable_ranges(cmap, subtable))


def _unpack(fmt: str, data: bytes, offset: int) -> tuple[Any, ...]:
    try:
        return struct.unpack_from(fmt, data, offset)
    except struct.error as exc:
        raise FontFileError(f"truncated at byte {offset}") from exc


def _table_location(file: BinaryIO, index: int, tag: bytes) -> Range:
    head = file.read(12)
    if head[:4] == b"ttcf":
        (count,) = _unpack(">L", head, 8)
        if not 0 <= index < count:
            raise FontFileError(f"the collection has {count} faces, not a face #{index}")
        file.seek(12 + 4 * index)
        (directory,) = _unpack(">L", file.read(4), 0)
        file.seek(directory)
        head = file.read(12)
    elif index != 0:
        raise FontFileError(f"not a font collection, so there is no face #{index}")
    if head[:4] not in _SFNT_VERSIONS:
        raise FontFileError(f"not a TrueType/OpenType font (starts with {head[:4]!r})")
    (tables,) = _unpack(">H", head, 4)
    records = file.read(16 * tables)
    for i in range(tables):
        record_tag, _checksum, offset, length = _unpack(">4sLLL", records, 16 * i)
        if record_tag == tag:
            return offset, length
    raise FontFileError(f"the face has no {tag.decode()} table")


def _best_subtable(cmap: bytes) -> int | None:
    """Offset of the preferred subtable, or None: the first of each (platform, encoding), skipping empty ones."""
    _version, count = _unpack(">HH", cmap, 0)
    found: dict[tuple[int, int], int] = {}
    for i in range(count):
        platform, encoding, offset = _unpack(">HHL", cmap, 4 + 8 * i)
        if (platform, encoding) in found or _subtable_length(cmap, offset) == 0:
            continue
        found[platform, encoding] = offset
    return next((found[key] for key in PREFERENCES if key in found), None)


def _subtable_length(cmap: bytes, offset: int) -> int:
    (fmt,) = _unpack(">H", cmap, offset)
    if fmt in (8, 10, 12, 13):
        return int(_unpack(">L", cmap, offset + 4)[0])
    if fmt in (14, 15):
        return int(_unpack(">L", cmap, offset + 2)[0])
    return int(_unpack(">H", cmap, offset + 2)[0])


def _subtable_ranges(cmap: bytes, offset: int) -> Iterable[Range]:
    (fmt,) = _unpack(">H", cmap, offset)
    if fmt == 0:
        return _mapped(0, _words(cmap, offset + 6, 256, "B"))
    if fmt == 4:
        return _format_4(cmap, offset)
    if fmt == 6:
        first, count = _unpack(">HH", cmap, offset + 6)
        return _mapped(first, _words(cmap, offset + 10, count, "H"))
    if fmt in (12, 13):
        return _format_12_13(cmap, offset, one_glyph_per_group=fmt == 13)
    raise FontFileError(f"cmap subtable format {fmt} is not supported")


def _words(data: bytes, offset: int, count: int, typecode: str) -> array[int]:
    """``count`` big-endian unsigned numbers at ``offset`` ("B", "H" or "I": 1, 2, 4 bytes)."""
    words = array(typecode)
    size = words.itemsize * count
    if offset + size > len(data):
        raise FontFileError(f"truncated at byte {offset}")
    words.frombytes(data[offset : offset + size])
    if words.itemsize > 1 and sys.byteorder == "little":
        words.byteswap()
    return words


def _mapped(first: int, ids: array[int]) -> Iterable[Range]:
    return ((first + i, first + i) for i, glyph in enumerate(ids) if glyph)


def _format_4(cmap: bytes, offset: int) -> Iterable[Range]:
    """Segments of BMP code points; glyph = code + delta, or a glyph array entry + delta (0 stays missing)."""
    (length,) = _unpack(">H", cmap, offset + 2)
    (segments_x2,) = _unpack(">H", cmap, offset + 6)
    segments = segments_x2 // 2
    # The words after the fixed header: endCode, a pad, startCode, idDelta, idRangeOffset, then the glyph array
    # up to the end of the subtable.
    words_at = offset + 14
    words = _words(cmap, words_at, (min(offset + length, len(cmap)) - words_at) // 2, "H")
    ends = words[:segments]
    starts = words[segments + 1 : 2 * segments + 1]
    deltas = words[2 * segments + 1 : 3 * segments + 1]
    range_offsets = words[3 * segments + 1 : 4 * segments + 1]
    glyph_array_at = 4 * segments + 1  # index into words
    if len(range_offsets) < segments:
        raise FontFileError("cmap format 4 subtable is truncated")
    out: list[Range] = []
    for i in range(segments - 1):  # the last segment is the 0xFFFF terminator
        start, end, delta = starts[i], ends[i], deltas[i]
        if start > end:
            continue
        if range_offsets[i] == 0:
            missing = -delta & 0xFFFF  # the one code point that lands on glyph 0
            if start <= missing <= end:
                out += [r for r in ((start, missing - 1), (missing + 1, end)) if r[0] <= r[1]]
            else:
                out.append((start, end))
            continue
        # idRangeOffset counts bytes from its own slot to the glyph array entry of ``start``.
        first = 3 * segments + 1 + i + range_offsets[i] // 2
        if first < glyph_array_at or first + (end - start) >= len(words):
            raise FontFileError(f"cmap format 4 segment {i} points outside its glyph array")
        for code in range(start, end + 1):
            glyph = words[first + code - start]
            if glyph and (glyph + delta) & 0xFFFF:
                out.append((code, code))
    return out


def _format_12_13(cmap: bytes, offset: int, *, one_glyph_per_group: bool) -> Iterable[Range]:
    """Groups of (first, last, glyph); in format 12 the glyph counts up along the group, in 13 it stays."""
    (count,) = _unpack(">L", cmap, offset + 12)
    groups = _words(cmap, offset + 16, 3 * count, "I")
    out: list[Range] = []
    last_end = 0
    for g in range(count):
        start, end, glyph = groups[3 * g], min(groups[3 * g + 1], _LAST_CODE_POINT), groups[3 * g + 2]
        if start > end or start < last_end:
            continue  # unsorted or overlapping: skipped, as HarfBuzz and fontTools do
        last_end = end
        if glyph == 0:
            if one_glyph_per_group:
                continue
            start += 1  # only the first code point lands on glyph 0
        if start <= end:
            out.append((start, end))
    return out


def _merged(ranges: Iterable[Range]) -> list[Range]:
    out: list[Range] = []
    for start, end in sorted(ranges):
        if out and start <= out[-1][1] + 1:
            if end > out[-1][1]:
                out[-1] = (out[-1][0], end)
        else:
            out.append((start, end))
    return out
