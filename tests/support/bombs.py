"""Files built to hurt what draws them: a PDF whose content unpacks to gigabytes, an SVG of stacked blur filters."""

from __future__ import annotations

import zlib


def pdf(contents: bytes, *, page_pt: tuple[float, float] = (288, 432), repeat: int = 1) -> bytes:
    """A one-page PDF of ``page_pt`` whose content stream (Flate-compressed) is ``contents``, listed ``repeat``
    times in the page's /Contents: what PDFium unpacks and parses is ``repeat`` times the stream."""
    body = zlib.compress(contents, 9)
    refs = b" ".join([b"4 0 R"] * repeat)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %g %g] /Contents [%s] >>" % (*page_pt, refs),
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(body) + body + b"\nendstream",
    ]
    out = b"%PDF-1.4\n"
    offsets = []
    for number, obj in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + obj + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return out


def pdf_of_2_gib() -> bytes:
    """64 MiB of path operators listed 32 times: 2 GiB of content in a file of about 100 kB."""
    return pdf(b"0 0 m\n" * (64 * 1024 * 1024 // 6), repeat=32)


def blur_svg(depth: int = 50, region: str = "2000%") -> bytes:
    """A 100 px logo under ``depth`` nested blur filters over a region twenty times its size: about 1.4 kB that
    costs resvg minutes of CPU (or gigabytes) at a label's resolution."""
    blur = (
        f'<filter id="f" x="-50%" y="-50%" width="{region}" height="{region}"><feGaussianBlur stdDeviation="20"/>'
        "</filter>"
    )
    body = '<g filter="url(#f)">' * depth + '<rect width="100" height="100"/>' + "</g>" * depth
    return f'<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100">{blur}{body}</svg>'.encode()
