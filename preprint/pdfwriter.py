"""A PDF of black-and-white page images, written page by page.

Each page is one 1-bit image (a badge sheet drawn at the printer's resolution) compressed with Flate, so a page
costs its compressed bytes on disk and nothing in memory once written. Pillow's PDF writer keeps every page's image
until the end (thousands of sheets at 300 dpi would not fit), and a PDF library would be a dependency for a format
this simple: a header, one image, content and page object a page, the page tree, and the cross-reference table.
"""

from __future__ import annotations

import zlib
from typing import BinaryIO

from PIL import Image

#: PDF user space units (points) per inch.
_POINTS = 72.0
#: Object numbers 1 and 2 are written last (they list the pages), every page's objects from 3 on.
_CATALOG, _PAGES = 1, 2


class PdfWriter:
    def __init__(self, out: BinaryIO, title: str = "") -> None:
        self.out = out
        self.title = title
        self.offsets: dict[int, int] = {}
        self.pages: list[int] = []
        self.next_id = 3
        self.written = 0
        # A binary comment after the header: tools that sniff for text know the file is binary.
        self._write(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")

    def _write(self, data: bytes) -> None:
        self.out.write(data)
        self.written += len(data)

    def _object(self, number: int, body: bytes, stream: bytes | None = None) -> None:
        self.offsets[number] = self.written
        if stream is None:
            self._write(b"%d 0 obj\n%s\nendobj\n" % (number, body))
            return
        self._write(b"%d 0 obj\n%s\nstream\n" % (number, body))
        self._write(stream)
        self._write(b"\nendstream\nendobj\n")

    def page(self, image: Image.Image, dpi: int, compressed: bytes | None = None) -> None:
        """One page: ``image`` (mode "1", 0 black) fills it, at ``dpi``. ``compressed``: its bits already Flate-
        compressed (``compress``, done where the page was drawn)."""
        self.add(image.width, image.height, dpi, compressed if compressed is not None else compress(image))

    def add(self, width: int, height: int, dpi: int, data: bytes) -> None:
        """A page of ``width`` x ``height`` dots whose 1-bit rows (``compress``) are ``data``."""
        image_id, content_id, page_id = self.next_id, self.next_id + 1, self.next_id + 2
        self.next_id += 3
        w, h = width * _POINTS / dpi, height * _POINTS / dpi
        self._object(
            image_id,
            b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 1"
            b" /Filter /FlateDecode /Length %d >>" % (width, height, len(data)),
            data,
        )
        content = b"q %.3f 0 0 %.3f 0 0 cm /Im Do Q" % (w, h)
        self._object(content_id, b"<< /Length %d >>" % len(content), content)
        self._object(
            page_id,
            b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 %.3f %.3f] /Resources << /XObject << /Im %d 0 R >> >>"
            b" /Contents %d 0 R >>" % (_PAGES, w, h, image_id, content_id),
        )
        self.pages.append(page_id)

    def close(self) -> None:
        kids = b" ".join(b"%d 0 R" % p for p in self.pages)
        self._object(_PAGES, b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, len(self.pages)))
        self._object(_CATALOG, b"<< /Type /Catalog /Pages %d 0 R >>" % _PAGES)
        info = self.next_id
        title = self.title.encode("utf-16-be").hex().upper().encode()
        self._object(info, b"<< /Title <FEFF%s> /Producer (badge-agent) >>" % title)
        xref = self.written
        self._write(b"xref\n0 %d\n0000000000 65535 f \n" % (info + 1))
        for number in range(1, info + 1):
            self._write(b"%010d 00000 n \n" % self.offsets[number])
        self._write(b"trailer\n<< /Size %d /Root %d 0 R /Info %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
            info + 1, _CATALOG, info, xref,
        ))  # fmt: skip
        self.out.flush()


def compress(image: Image.Image) -> bytes:
    """A mode "1" image's rows as a PDF 1-bit gray image holds them (1 white, each row padded to a byte)."""
    if image.mode != "1":
        image = image.convert("1")
    return zlib.compress(image.tobytes(), 6)
