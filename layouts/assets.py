"""A layout's images and background: read with the layout, checked once, rasterised once per size.

Checked at load (``layout set``), not per badge: the file is a PNG or an SVG (by its bytes, not its name); it is at
most ``MAX_IMAGE_BYTES`` (a logo is kilobytes; a 50 MB file is a mistake that would sit in every agent's memory);
a PNG is at most ``MAX_PIXELS``; an SVG has no external references (no file, URL or entity a printer host would
fetch). A background is a PDF (its first page) or a PNG.

SVG is drawn by resvg (resvg-py: a self-contained wheel, no Cairo), PDF by PDFium (pypdfium2, BSD/Apache).
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping
from typing import Literal

from PIL import Image, ImageOps

MAX_IMAGE_BYTES = 2 * 1024 * 1024
MAX_BACKGROUND_BYTES = 8 * 1024 * 1024
#: A 4x6 in label is 2400 x 3600 dots at 600 dpi: more pixels only cost the agent memory while it rasterises.
MAX_PIXELS = 3000 * 3000

_PNG = b"\x89PNG\r\n\x1a\n"
_PDF = b"%PDF-"
#: An href that is not a fragment ("#id") or inline data, a CSS url() or @import of anything but those, or a DTD.
_SVG_EXTERNAL = re.compile(
    rb"""(?:href\s*=\s*["'](?!\s*(?:#|data:))|url\(\s*["']?(?!\s*(?:#|data:))|@import|<!DOCTYPE|<!ENTITY|<\?xml-stylesheet)""",
    re.IGNORECASE,
)

Kind = Literal["png", "svg", "pdf"]


def kind_of(data: bytes) -> Kind | None:
    if data.startswith(_PNG):
        return "png"
    if data.lstrip()[:5] == _PDF:
        return "pdf"
    head = data[:4096].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if head.startswith((b"<svg", b"<?xml", b"<!--", b"<!doctype")) and b"<svg" in data[:65536].lower():
        return "svg"
    return None


def check_image(name: str, data: bytes, *, background: bool = False) -> str | None:
    """What is wrong with an image (or background) file, or None."""
    limit = MAX_BACKGROUND_BYTES if background else MAX_IMAGE_BYTES
    if len(data) > limit:
        return f"{name} is {len(data) / 1e6:.1f} MB; at most {limit // (1024 * 1024)} MB"
    kind = kind_of(data)
    allowed = ("png", "pdf") if background else ("png", "svg")
    if kind not in allowed:
        return f"{name} is not a {' or '.join(a.upper() for a in allowed)} file"
    if kind == "png":
        try:
            with Image.open(io.BytesIO(data)) as image:
                if image.width * image.height > MAX_PIXELS:
                    return f"{name} is {image.width}x{image.height} pixels; at most {MAX_PIXELS} pixels"
                image.load()
        except (OSError, ValueError, Image.DecompressionBombError) as exc:
            return f"{name} is not a readable PNG: {exc}"
    elif kind == "svg":
        found = _SVG_EXTERNAL.search(data)
        if found is not None:
            what = found.group().decode("utf-8", "replace").strip()
            return f"{name} has an external reference ({what}...): embed images as data: URLs"
        try:
            svg_to_image(data, 16, 16)
        except ValueError as exc:
            return f"{name} is not a readable SVG: {exc}"
    else:
        try:
            pdf_to_image(data, 16, 16)
        except ValueError as exc:
            return f"{name} is not a readable PDF: {exc}"
    return None


def svg_to_image(data: bytes, width: int, height: int) -> Image.Image:
    """The SVG drawn at ``width`` x ``height`` on white, mode "L". Raises ValueError when it cannot be drawn."""
    import resvg_py  # loaded only by layouts that have an SVG

    try:
        png = resvg_py.svg_to_bytes(
            svg_string=data.decode("utf-8"), width=width, height=height, background="#ffffff", skip_system_fonts=True
        )
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 text: {exc}") from exc
    return Image.open(io.BytesIO(bytes(png))).convert("L")


def pdf_to_image(data: bytes, width: int, height: int) -> Image.Image:
    """The PDF's first page drawn to ``width`` x ``height`` on white, mode "L". Raises ValueError."""
    import pypdfium2  # loaded only where a layout has a PDF background

    try:
        document = pypdfium2.PdfDocument(data)
    except pypdfium2.PdfiumError as exc:
        raise ValueError(str(exc)) from exc
    try:
        if len(document) == 0:
            raise ValueError("the PDF has no pages")
        page = document[0]
        page_w, page_h = page.get_size()  # points
        scale = min(width / page_w, height / page_h)
        bitmap = page.render(scale=scale, grayscale=True, fill_color=(255, 255, 255, 255))
        image: Image.Image = bitmap.to_pil().convert("L")
    finally:
        document.close()
    if image.size != (width, height):
        image = image.resize((width, height), Image.Resampling.LANCZOS)
    return image


#: The resolutions badge printers have: a stored layout carries its SVGs and PDF drawn for each (``prerendered``),
#: so agents decode a PNG and never load resvg or PDFium (about 13 MB of an agent's memory).
PRINTER_DPIS = (203, 300, 600)


def prerendered_name(name: str, width: int, height: int) -> str:
    """The file a stored layout keeps ``name`` in, drawn for a ``width`` x ``height`` dot box."""
    return f"{name}@{width}x{height}.png"


def raster_prerendered(files: Mapping[str, bytes], name: str, width: int, height: int) -> Image.Image:
    """``name`` for a ``width`` x ``height`` box: its prerendered PNG when the layout has one, else drawn now."""
    ready = files.get(prerendered_name(name, width, height))
    if ready is not None:
        with Image.open(io.BytesIO(ready)) as image:
            return image.convert("L")
    return raster(files[name], width, height)


def to_png(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, "PNG", optimize=True)
    return out.getvalue()


def raster(data: bytes, width: int, height: int) -> Image.Image:
    """An image file (PNG, SVG or PDF) drawn on white to fit ``width`` x ``height`` keeping its proportions, "L"."""
    kind = kind_of(data)
    if kind == "svg":
        return _contain_svg(data, width, height)
    if kind == "pdf":
        return pdf_to_image(data, width, height)
    with Image.open(io.BytesIO(data)) as opened:
        image = opened.convert("LA")  # grey and alpha: half the memory of RGBA, all a 1-bit print needs
    flat = Image.new("L", image.size, 255)
    flat.paste(image.getchannel("L"), (0, 0), image.getchannel("A"))
    scale = min(width / flat.width, height / flat.height)
    size = (max(1, round(flat.width * scale)), max(1, round(flat.height * scale)))
    return flat.resize(size, Image.Resampling.LANCZOS)


def _contain_svg(data: bytes, width: int, height: int) -> Image.Image:
    natural = _svg_natural_size(data)
    if natural is None:
        return svg_to_image(data, width, height)
    scale = min(width / natural[0], height / natural[1])
    return svg_to_image(data, max(1, round(natural[0] * scale)), max(1, round(natural[1] * scale)))


def _svg_natural_size(data: bytes) -> tuple[float, float] | None:
    import resvg_py

    png = resvg_py.svg_to_bytes(svg_string=data.decode("utf-8"), skip_system_fonts=True)
    with Image.open(io.BytesIO(bytes(png))) as image:
        return (float(image.width), float(image.height)) if image.width and image.height else None


def ink(image: Image.Image, mode: Literal["threshold", "dither"]) -> Image.Image:
    """A grey image as an ink mask ("L", 255 = ink): thresholded at half, or Floyd-Steinberg dithered."""
    if mode == "dither":
        bits = image.convert("1", dither=Image.Dither.FLOYDSTEINBERG)
    else:
        bits = image.point(lambda v: 255 if v >= 128 else 0).convert("1", dither=Image.Dither.NONE)
    return ImageOps.invert(bits.convert("L"))
