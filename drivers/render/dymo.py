"""DYMO LabelWriter raster: the badge as a 4xx or 550 job, and such jobs read back to images.

4xx (LabelWriter 400 Series Technical Reference Manual): a resync run of ``ESC`` (85 or more, so a half-sent line
ends), ``ESC B n`` dot tab (the left margin in bytes), ``ESC h`` text mode (300x300 dpi), ``ESC e`` normal density,
``ESC L n1 n2`` label length in dot lines (high byte first), ``ESC D n`` bytes per line, then one ``SYN`` + n bytes
per dot line (1 = black dot, most significant bit leftmost), ``ESC f 1 n`` to skip n blank lines, and ``ESC E``
form feed: the label goes to the tear bar and the next label to top of form. DYMO's CUPS filter (raster2dymolw)
also sends ``ETB`` lines (run-length: bit 7 = black, low 7 bits = run length - 1) and ``ESC Q n1 n2`` (line tab);
the reader takes both, so a job that filter wrote can be read back too.

550 (LabelWriter 550 Series Technical Reference, as DYMO's V2 driver writes it): job header ``ESC s`` + job id
(u32 LE), ``ESC e``, ``ESC h``; per label ``ESC L`` 0 0 (die-cut labels), ``ESC n`` + label index (u16 LE),
``ESC D`` 1 2 + lines (u32 LE) + dots across (u32 LE, a multiple of 8) and the lines' bytes with no per-line
prefix, ``ESC G``; job trailer ``ESC E`` and ``ESC Q`` (end of job: the printer is free for other hosts).
"""

from __future__ import annotations

import struct

from PIL import Image

from drivers.render.bits import fit_width, pack, unpack

_ESC, _SYN, _ETB = 0x1B, 0x16, 0x17
# 4xx commands that draw nothing: second byte -> parameter bytes.
_ARGS_4XX: dict[int, int] = {
    **dict.fromkeys(b"hicdeg@*AEGyz", 0),
    **dict.fromkeys(b"BDq", 1),
    **dict.fromkeys(b"LQf", 2),
}


def encode_dymo_4xx(image: Image.Image, *, head_dots: int = 672) -> bytes:
    """One badge as a 4xx job, ending with a form feed.

    Raises:
        ValueError: the badge has ink wider than the print head.
    """
    if image.width > head_dots:
        image = fit_width(image, head_dots, "this LabelWriter's head")
    row_bytes, rows, data = pack(image)
    dot_tab = (head_dots // 8 - row_bytes) // 2  # centre the badge on the head
    job = bytearray(b"\x1b" * 85)
    job += bytes([_ESC, ord("B"), dot_tab, _ESC, ord("h"), _ESC, ord("e")])
    job += bytes([_ESC, ord("L"), rows >> 8 & 0xFF, rows & 0xFF, _ESC, ord("D"), row_bytes])
    blank = bytes(row_bytes)
    skipped = 0
    for top in range(0, rows * row_bytes, row_bytes):
        line = data[top : top + row_bytes]
        if line == blank:
            skipped += 1
            continue
        while skipped:  # blank lines cost four bytes per 255 instead of a line each
            n = min(skipped, 255)
            job += bytes([_ESC, ord("f"), 1, n])
            skipped -= n
        job.append(_SYN)
        job += line
    job += b"\x1bE"
    return bytes(job)


def encode_dymo_550(image: Image.Image, *, head_dots: int = 672, job_id: int = 1) -> bytes:
    """One badge as a 550 print job: header, the label, trailer.

    Raises:
        ValueError: the badge has ink wider than the print head.
    """
    if image.width > head_dots:
        image = fit_width(image, head_dots, "this LabelWriter's head")
    row_bytes, rows, data = pack(image)
    job = bytearray(b"\x1bs" + struct.pack("<I", job_id) + b"\x1be\x1bh")
    job += b"\x1bL\x00\x00\x1bn" + struct.pack("<H", 1)
    job += b"\x1bD\x01\x02" + struct.pack("<II", rows, row_bytes * 8) + data
    job += b"\x1bG\x1bE\x1bQ"
    return bytes(job)


class _Label:
    def __init__(self) -> None:
        self.lines: list[tuple[int, bytes]] = []  # (dot tab in bytes, line bytes); b"" = a skipped line

    def take(self) -> Image.Image | None:
        lines, self.lines = self.lines, []
        while lines and not lines[-1][1]:
            lines.pop()
        if not lines:
            return None
        width = max(tab + len(line) for tab, line in lines)
        rows = b"".join(bytes(tab) + line + bytes(width - tab - len(line)) for tab, line in lines)
        return unpack(rows, width, len(lines))


def _unrle(data: bytes, i: int, dots: int) -> tuple[bytes, int]:
    """An ``ETB`` line: runs of (bit 7 = black, low 7 bits = length - 1) until ``dots`` dots."""
    bits: list[int] = []
    while len(bits) < dots:
        if i >= len(data):
            raise ValueError("ETB line at the end of the data is truncated")
        run = data[i]
        bits += [run >> 7] * ((run & 0x7F) + 1)
        i += 1
    bits = bits[:dots]
    out = bytearray()
    for k in range(0, dots, 8):
        byte = 0
        for bit in bits[k : k + 8]:
            byte = byte << 1 | bit
        out.append(byte)
    return bytes(out), i


def decode_dymo_4xx(data: bytes) -> list[Image.Image]:
    """Every label (up to each ``ESC E``/``ESC G``) of a 4xx job as mode "1" images.

    Raises:
        ValueError: a truncated or unknown command.
    """
    data = bytes(data)
    labels: list[Image.Image] = []
    label = _Label()
    tab, per_line = 0, 84
    i = 0
    while i < len(data):
        byte = data[i]
        if byte == _SYN:
            line = data[i + 1 : i + 1 + per_line]
            if len(line) < per_line:
                raise ValueError(f"SYN line at offset {i} is truncated")
            label.lines.append((tab, line))
            i += 1 + per_line
        elif byte == _ETB:
            line, i = _unrle(data, i + 1, per_line * 8)
            label.lines.append((tab, line))
        elif byte == _ESC:
            if i + 1 >= len(data):
                raise ValueError(f"ESC at offset {i} is truncated")
            op = data[i + 1]
            if op == _ESC:
                i += 1  # the resync run
                continue
            if op not in _ARGS_4XX:
                raise ValueError(f"unknown LabelWriter command ESC 0x{op:02x} at offset {i}")
            args = data[i + 2 : i + 2 + _ARGS_4XX[op]]
            if len(args) < _ARGS_4XX[op]:
                raise ValueError(f"ESC {chr(op)} at offset {i} is truncated")
            if op == ord("B"):
                tab = args[0]
            elif op == ord("D"):
                per_line = args[0]
            elif op == ord("f"):
                label.lines += [(0, b"")] * args[1]
            elif op in b"EG" and (image := label.take()) is not None:
                labels.append(image)
            elif op == ord("@"):
                label = _Label()
            i += 2 + _ARGS_4XX[op]
        else:
            i += 1  # "Any other characters are ignored" (400 Series manual)
    if (image := label.take()) is not None:
        labels.append(image)
    return labels


_ARGS_550: dict[int, int] = {
    **dict.fromkeys(b"hieEGQ@$", 0),
    **dict.fromkeys(b"ACTo", 1),
    **dict.fromkeys(b"Ln", 2),
    ord("s"): 4,
    ord("M"): 8,
}


def decode_dymo_550(data: bytes) -> list[Image.Image]:
    """Every label (``ESC D`` block) of a 550 job as mode "1" images.

    Raises:
        ValueError: a truncated or unknown command.
    """
    data = bytes(data)
    labels: list[Image.Image] = []
    i = 0
    while i < len(data):
        if data[i] != _ESC:
            i += 1
            continue
        if i + 1 >= len(data):
            raise ValueError(f"ESC at offset {i} is truncated")
        op = data[i + 1]
        if op == ord("D"):
            head = data[i + 2 : i + 12]
            if len(head) < 10:
                raise ValueError(f"ESC D at offset {i} is truncated")
            lines, dots = struct.unpack("<II", head[2:10])
            if dots % 8 or not lines or not dots:
                raise ValueError(f"ESC D at offset {i}: {lines} lines of {dots} dots is invalid")
            size = lines * dots // 8
            body = data[i + 12 : i + 12 + size]
            if len(body) < size:
                raise ValueError(f"label data at offset {i} is truncated")
            labels.append(unpack(body, dots // 8, lines))
            i += 12 + size
        elif op in _ARGS_550:
            i += 2 + _ARGS_550[op]
        else:
            raise ValueError(f"unknown LabelWriter 550 command ESC 0x{op:02x} at offset {i}")
    return labels
