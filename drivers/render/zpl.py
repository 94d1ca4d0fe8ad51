"""ZPL II: the badge as one ``^GF`` graphic field, and ``^GF`` fields read back to images.

Z64 is zlib (deflate with zlib header, which is what Zebra's "LZ77" means and what Zebrash reads), then base64,
then ``:`` and a CRC over the base64 text. The CRC is CRC-16/XMODEM (polynomial 0x1021, initial value 0, no
reflection), as in zplgrf and Zebra's own ZB64 samples; a printer drops a field whose CRC does not match
(ZPL II Programming Guide vol. 2, "ZB64 Encoding and Compression").
"""

from __future__ import annotations

import base64
import binascii
import re
import zlib

from PIL import Image

from drivers.render.bits import pack, unpack

#: A ^GF larger than this is not a badge; refusing it keeps a corrupt size field from eating the emulator's memory.
MAX_GRAPHIC_BYTES = 64 * 1024 * 1024

_GF = re.compile(rb"[\^]GF", re.IGNORECASE)
_HEX_DIGITS = frozenset(b"0123456789ABCDEFabcdef")


def crc16_xmodem(data: bytes) -> int:
    return binascii.crc_hqx(data, 0)


def encode_zpl(image: Image.Image) -> bytes:
    """A complete one-label ZPL job printing ``image`` (1 bit = black dot) at the label's top-left corner.

    Args:
        image: the badge, any mode (thresholded at 50 %, never dithered); width padded to whole bytes.
    """
    row_bytes, rows, data = pack(image)
    total = row_bytes * rows
    encoded = base64.b64encode(zlib.compress(data, 6))
    crc = crc16_xmodem(encoded)
    return b"".join(
        (
            b"^XA\n",
            b"^PW%d\n^LL%d\n^LH0,0\n" % (row_bytes * 8, rows),
            b"^FO0,0^GFA,%d,%d,%d,:Z64:%s:%04X^FS\n" % (total, total, row_bytes, encoded, crc),
            b"^PQ1\n^XZ\n",
        )
    )


def decode_zpl_graphics(data: bytes) -> list[Image.Image]:
    """Every ``^GF`` field in a ZPL stream, as mode "1" images (black = printed dot), in stream order.

    Reads compression type A (ASCII hex, with or without ZPL's run-length letters, or ``:B64:``/``:Z64:``
    with CRC) and B (binary). Other commands are ignored.

    Raises:
        ValueError: a ``^GF`` is malformed: bad parameters, a CRC mismatch, data shorter or longer than declared.
    """
    if not isinstance(data, bytes | bytearray | memoryview):
        raise ValueError(f"ZPL must be bytes, not {type(data).__name__}")
    data = bytes(data)
    images: list[Image.Image] = []
    pos = 0
    while (match := _GF.search(data, pos)) is not None:
        start = match.end()
        image, pos = _read_field(data, start)
        images.append(image)
    return images


def _read_field(data: bytes, start: int) -> tuple[Image.Image, int]:
    """Parse one ``^GFa,b,c,d,data`` starting after ``^GF``; return the image and where the field ends."""
    header = data[start : start + 64].split(b",", 4)
    if len(header) < 5:
        raise ValueError(f"^GF at offset {start - 3}: expected ^GFa,b,c,d,data")
    kind = header[0].strip().upper() or b"A"
    try:
        binary_count, total, row_bytes = (int(v) for v in header[1:4])
    except ValueError:
        raise ValueError(f"^GF at offset {start - 3}: sizes must be integers, got {b','.join(header[1:4])!r}") from None
    if row_bytes <= 0 or total <= 0 or total % row_bytes or total > MAX_GRAPHIC_BYTES:
        raise ValueError(f"^GF at offset {start - 3}: {total} bytes in rows of {row_bytes} is not a valid graphic")
    body_at = start + sum(len(part) + 1 for part in header[:4])
    rows = total // row_bytes
    if kind == b"B":
        raw = data[body_at : body_at + binary_count]
        if binary_count != total or len(raw) != total:
            raise ValueError(f"^GFB at offset {start - 3}: {len(raw)} bytes of binary data, {total} declared")
        return unpack(raw, row_bytes, rows), body_at + binary_count
    if kind != b"A":
        raise ValueError(f"^GF at offset {start - 3}: compression type {kind!r} is not supported (A or B only)")
    end = len(data)
    for stop in (data.find(b"^", body_at), data.find(b"~", body_at)):
        if stop != -1:
            end = min(end, stop)
    body = re.sub(rb"\s+", b"", data[body_at:end])
    if body[:5].upper() in (b":Z64:", b":B64:"):
        raw = _decode_base64(body, total, start - 3)
    else:
        raw = _decode_hex(body, row_bytes, total, start - 3)
    return unpack(raw, row_bytes, rows), end


def _decode_base64(body: bytes, total: int, where: int) -> bytes:
    payload, sep, crc_text = body[5:].rpartition(b":")
    if not sep or len(crc_text) != 4:
        raise ValueError(f"^GF at offset {where}: {body[:5]!r} data must end with ':' and a 4-digit CRC")
    try:
        crc = int(crc_text, 16)
    except ValueError:
        raise ValueError(f"^GF at offset {where}: CRC {crc_text!r} is not hexadecimal") from None
    if crc != crc16_xmodem(payload):
        raise ValueError(f"^GF at offset {where}: CRC {crc:04X} does not match the data ({crc16_xmodem(payload):04X})")
    try:
        raw = base64.b64decode(payload, validate=True)
    except binascii.Error as exc:
        raise ValueError(f"^GF at offset {where}: bad base64 ({exc})") from None
    if body[:5].upper() == b":Z64:":
        inflater = zlib.decompressobj()
        try:
            raw = inflater.decompress(raw, total + 1)  # bounded: a small bomb cannot inflate past the field
        except zlib.error as exc:
            raise ValueError(f"^GF at offset {where}: Z64 data does not inflate ({exc})") from None
    if len(raw) != total:
        raise ValueError(f"^GF at offset {where}: {len(raw)} bytes of graphic data, {total} declared")
    return raw


def _decode_hex(body: bytes, row_bytes: int, total: int, where: int) -> bytes:
    """ASCII hex with ZPL's compression: G..Y repeat 1..19, g..z repeat 20..400 (they add up), ',' ends a row
    with 0s, '!' ends it with 1s, ':' repeats the previous row."""
    nibbles_per_row = row_bytes * 2
    out = bytearray()
    row = bytearray()
    previous: bytes | None = None
    count = 0
    for byte in body:
        if ord("G") <= byte <= ord("Y"):
            count += byte - ord("G") + 1
            continue
        if ord("g") <= byte <= ord("z"):
            count += (byte - ord("g") + 1) * 20
            continue
        if byte in _HEX_DIGITS:
            row.extend([byte] * (count or 1))
            count = 0
            if len(row) > nibbles_per_row:
                raise ValueError(f"^GF at offset {where}: a repeat runs past the end of a {row_bytes}-byte row")
        elif byte in b",!:":
            if byte == ord(":"):
                if row or previous is None:
                    raise ValueError(f"^GF at offset {where}: ':' (repeat row) with no whole previous row")
                row = bytearray(previous)
            else:
                row.extend((b"0" if byte == ord(",") else b"F") * (nibbles_per_row - len(row)))
            count = 0
        else:
            raise ValueError(f"^GF at offset {where}: unexpected character {chr(byte)!r} in hex graphic data")
        if len(row) == nibbles_per_row:
            previous = bytes(row)
            out.extend(binascii.unhexlify(previous))
            row.clear()
            if len(out) > total:
                raise ValueError(f"^GF at offset {where}: more graphic data than the {total} bytes declared")
    if row:
        raise ValueError(f"^GF at offset {where}: the data ends inside a row ({len(row)} of {nibbles_per_row} digits)")
    if len(out) != total:
        raise ValueError(f"^GF at offset {where}: {len(out)} whole bytes of graphic data, {total} declared")
    return bytes(out)
