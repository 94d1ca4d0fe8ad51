"""ESC/POS: the badge as ``GS v 0`` raster bands, and such jobs read back to images.

Bands of at most 256 rows, because older printers (and python-escpos's own default fragmenting) overflow their
receive buffer on one tall raster. The job ends with ``GS V 65 0``: "feed to the cutter, then cut", so the
cut never goes through the badge whatever the head-to-cutter distance of the model.
"""

from __future__ import annotations

import struct

from PIL import Image

from drivers.render.bits import fit_width, pack, unpack

BAND_ROWS = 256
PRINTABLE_80MM = 576  # dots on 80 mm paper at 203 dpi (72 mm printable)

_ESC, _GS, _DLE, _FS = 0x1B, 0x1D, 0x10, 0x1C

# Commands that draw nothing: second byte -> parameter bytes (None: handled specially).
_ESC_ARGS: dict[int, int] = {
    **dict.fromkeys(b"!-EGMatR{3dJUV=r ", 1),
    **dict.fromkeys(b"2@<", 0),
    **dict.fromkeys(b"$\\", 2),
    ord("p"): 3,
    ord("c"): 2,
}
_GS_ARGS: dict[int, int] = {
    **dict.fromkeys(b"!BHafhwrIb/", 1),
    **dict.fromkeys(b"LWP", 2),
}


def encode_escpos_raster(image: Image.Image, *, max_width: int = PRINTABLE_80MM) -> bytes:
    """A complete ESC/POS job: reset, the image in ``GS v 0`` bands, feed to the cutter and cut.

    Args:
        image: the badge (1 bit = black dot after thresholding).
        max_width: printable dots of the paper; a wider image loses white edges only.

    Raises:
        ValueError: the image has ink outside ``max_width``.
    """
    if image.width > max_width:
        image = fit_width(image, max_width, "this paper")
    row_bytes, rows, data = pack(image)
    job = bytearray(b"\x1b@")
    for top in range(0, rows, BAND_ROWS):
        band = min(BAND_ROWS, rows - top)
        job += b"\x1dv0\x00" + struct.pack("<HH", row_bytes, band)
        job += data[top * row_bytes : (top + band) * row_bytes]
    job += b"\x1dVA\x00"
    return bytes(job)


class _Page:
    def __init__(self) -> None:
        self.rows: list[bytes] = []

    def add(self, image: Image.Image) -> None:
        raw, width = image.tobytes(), image.width // 8
        self.rows.extend(raw[k : k + width] for k in range(0, len(raw), width))

    def feed(self, dots: int) -> None:
        if self.rows:  # feeds before the first band are the paper's business, not the badge's
            self.rows.extend([b""] * dots)

    def take(self) -> Image.Image | None:
        rows, self.rows = self.rows, []
        while rows and not rows[-1]:
            rows.pop()
        if not rows:
            return None
        width = max(len(r) for r in rows)
        data = b"".join(r + b"\xff" * (width - len(r)) for r in rows)  # Pillow "1": set bits are white
        return Image.frombytes("1", (width * 8, len(rows)), data)


def decode_escpos_raster(data: bytes) -> list[Image.Image]:
    """Every page (up to each cut, and what is left at the end) of an ESC/POS job as mode "1" images.

    Raster bands (``GS v 0``) are stacked; feeds between bands become white rows; text and other commands that
    draw no raster are skipped. Column bit images (``ESC *``) are skipped too.

    Raises:
        ValueError: a truncated or unknown ESC/GS command.
    """
    if not isinstance(data, bytes | bytearray | memoryview):
        raise ValueError(f"ESC/POS must be bytes, not {type(data).__name__}")
    data = bytes(data)
    pages: list[Image.Image] = []
    page = _Page()
    i = 0

    def need(count: int, what: str) -> bytes:
        if i + count > len(data):
            raise ValueError(f"{what} at offset {i} is truncated")
        return data[i : i + count]

    while i < len(data):
        byte = data[i]
        if byte == _GS and data[i + 1 : i + 3] == b"v0":
            head = need(8, "GS v 0")
            mode, row_bytes, rows = head[3], *struct.unpack("<HH", head[4:8])
            if mode not in (0, 1, 2, 3, 48, 49, 50, 51) or row_bytes == 0 or rows == 0:
                raise ValueError(f"GS v 0 at offset {i}: mode {mode}, {row_bytes} bytes x {rows} rows is invalid")
            band = unpack(need(8 + row_bytes * rows, "GS v 0 raster")[8:], row_bytes, rows)
            scale_x, scale_y = 1 + (mode & 1), 1 + ((mode >> 1) & 1)  # double width / double height modes
            if scale_x > 1 or scale_y > 1:
                band = band.resize((band.width * scale_x, band.height * scale_y), Image.Resampling.NEAREST)
            page.add(band)
            i += 8 + row_bytes * rows
        elif byte == _GS and data[i + 1 : i + 2] == b"V":
            mode = need(3, "GS V")[2]
            i += 4 if mode in (65, 66, 97, 98, 103, 104) else 3
            if i > len(data):
                raise ValueError("GS V at the end of the data is truncated")
            if (image := page.take()) is not None:
                pages.append(image)
        elif byte == _ESC:
            i = _skip_esc(data, i, page)
        elif byte == _GS:
            i = _skip_gs(data, i)
        elif byte == _DLE:
            command = need(2, "DLE")[1]
            i += {0x04: 3, 0x05: 3, 0x14: 5}.get(command, 2)
            if i > len(data):
                raise ValueError("DLE command at the end of the data is truncated")
        elif byte == _FS:
            command = need(2, "FS")[1]
            i += {ord("p"): 4, ord("."): 2, ord("&"): 2, ord("C"): 3, ord("!"): 3}.get(command, 2)
        else:
            if byte == 0x0A:
                page.feed(30)  # one line at the default 1/6 inch spacing
            i += 1  # text and other single bytes draw no raster
    if (image := page.take()) is not None:
        pages.append(image)
    return pages


def _skip_esc(data: bytes, i: int, page: _Page) -> int:
    if i + 1 >= len(data):
        raise ValueError(f"ESC at offset {i} is truncated")
    command = data[i + 1]
    if command == ord("*"):  # column bit image: ESC * m nL nH data
        if i + 5 > len(data):
            raise ValueError(f"ESC * at offset {i} is truncated")
        m, columns = data[i + 2], data[i + 3] | data[i + 4] << 8
        end = i + 5 + columns * (3 if m in (32, 33) else 1)
    elif command == ord("D"):  # tab stops, ended by NUL
        stop = data.find(b"\x00", i + 2)
        end = len(data) if stop == -1 else stop + 1
    elif command in _ESC_ARGS:
        end = i + 2 + _ESC_ARGS[command]
    else:
        raise ValueError(f"unknown ESC/POS command ESC 0x{command:02x} at offset {i}")
    if end > len(data):
        raise ValueError(f"ESC 0x{command:02x} at offset {i} is truncated")
    if command == ord("J"):
        page.feed(data[i + 2])  # feed n motion units (dots on a 203 dpi head)
    elif command == ord("d"):
        page.feed(30 * data[i + 2])
    return end


def _skip_gs(data: bytes, i: int) -> int:
    if i + 1 >= len(data):
        raise ValueError(f"GS at offset {i} is truncated")
    command = data[i + 1]
    if command == ord("("):  # GS ( x pL pH <p bytes>: graphics, QR, etc.
        if i + 5 > len(data):
            raise ValueError(f"GS ( at offset {i} is truncated")
        end = i + 5 + (data[i + 3] | data[i + 4] << 8)
    elif command == ord("k"):  # barcode: NUL-terminated (m <= 6) or counted (m >= 65)
        if i + 3 > len(data):
            raise ValueError(f"GS k at offset {i} is truncated")
        m = data[i + 2]
        if m <= 6:
            stop = data.find(b"\x00", i + 3)
            end = len(data) + 1 if stop == -1 else stop + 1
        else:
            end = i + 4 + (data[i + 3] if i + 3 < len(data) else len(data))
    elif command == ord("*"):  # define downloaded bit image: GS * x y d1..d(x*y*8)
        if i + 4 > len(data):
            raise ValueError(f"GS * at offset {i} is truncated")
        end = i + 4 + data[i + 2] * data[i + 3] * 8
    elif command in _GS_ARGS:
        end = i + 2 + _GS_ARGS[command]
    else:
        raise ValueError(f"unknown ESC/POS command GS 0x{command:02x} at offset {i}")
    if end > len(data):
        raise ValueError(f"GS 0x{command:02x} at offset {i} is truncated")
    return end
