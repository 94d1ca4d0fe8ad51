"""A layout's images and background: read with the layout, checked once, rasterised once per size.

Checked at load (``layout set``), not per badge: the file is a PNG or an SVG (by its bytes, not its name); it is at
most ``MAX_IMAGE_BYTES`` (a logo is kilobytes; a 50 MB file is a mistake that would sit in every agent's memory);
a PNG is at most ``MAX_PIXELS``; an SVG has no external references (no file, URL or entity a printer host would
fetch). A background is a PDF (its first page) or a PNG.

SVG is drawn by resvg (resvg-py: a self-contained wheel, no Cairo), PDF by PDFium (pypdfium2, BSD/Apache), each
in a process of its own bounded in memory and time (layouts/rasterise.py), never larger than the box it fills. An
SVG that declares more than ``MAX_PIXELS`` and a PDF page larger than ``MAX_PDF_PAGE_MM`` are refused before
anything is drawn.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from PIL import Image, ImageOps

MAX_IMAGE_BYTES = 2 * 1024 * 1024
MAX_BACKGROUND_BYTES = 8 * 1024 * 1024
#: A 4x6 in label is 2400 x 3600 dots at 600 dpi: more pixels only cost the agent memory while it rasterises.
MAX_PIXELS = 3000 * 3000

#: A PDF background's page: a label is at most 600 mm long; a larger page is not a label's background.
MAX_PDF_PAGE_MM = 1000.0
#: What drawing one SVG or PDF (at every size a layout needs) may take: the process that draws it is refused more.
RASTER_MEGABYTES = 480
RASTER_SECONDS = 8

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
            declared = svg_declared_size(data)
        except ValueError as exc:
            return f"{name} is not a readable SVG: {exc}"
        if declared is not None and declared[0] * declared[1] > MAX_PIXELS:
            return (
                f"{name} declares {declared[0]:.0f}x{declared[1]:.0f} pixels; at most {MAX_PIXELS} pixels "
                "(give the svg element a smaller width and height, or a viewBox)"
            )
        try:
            rasters(data, "svg", [(16, 16)])
        except ValueError as exc:
            return f"{name} is not a readable SVG: {exc}"
    else:
        try:
            rasters(data, "pdf", [(16, 16)])
        except ValueError as exc:
            return f"{name} is not a readable PDF: {exc}"
    return None


#: CSS units in pixels (96 per inch), as resvg reads an svg element's width and height.
_UNITS = {"": 1.0, "px": 1.0, "in": 96.0, "cm": 96 / 2.54, "mm": 96 / 25.4, "pt": 4 / 3, "pc": 16.0, "em": 16.0}
_LENGTH = re.compile(r"\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([a-z%]*)\s*")


def svg_declared_size(data: bytes) -> tuple[float, float] | None:
    """The size (pixels) the svg element declares by its width and height, else its viewBox; None if neither.

    Read from the root element's attributes only, before anything is drawn. Raises ValueError: not an SVG document.
    """
    parser: ET.XMLPullParser[Any] = ET.XMLPullParser(events=("start",))
    try:
        for start in range(0, len(data), 65536):
            parser.feed(data[start : start + 65536])
            for item in parser.read_events():
                element = item[-1]  # ("start", the element)
                if isinstance(element, ET.Element):
                    return _root_size(element.attrib)
    except ET.ParseError as exc:
        raise ValueError(str(exc)) from exc
    raise ValueError("no svg element")


def _root_size(attrib: Mapping[str, str]) -> tuple[float, float] | None:
    def length(text: str | None) -> float | None:
        found = _LENGTH.fullmatch(text or "")
        if found is None or found.group(2) not in _UNITS:
            return None  # absent, or a percentage: the viewBox says
        return float(found.group(1)) * _UNITS[found.group(2)]

    width, height = length(attrib.get("width")), length(attrib.get("height"))
    box = [float(v) for v in re.split(r"[\s,]+", attrib.get("viewBox", "").strip()) if v][2:4]
    if len(box) == 2 and box[0] > 0 and box[1] > 0:
        if width is None and height is None:
            width, height = box
        elif width is None and height is not None:
            width = height * box[0] / box[1]
        elif height is None and width is not None:
            height = width * box[1] / box[0]
    if width is None or height is None or width <= 0 or height <= 0:
        return None
    return width, height


def rasters(data: bytes, kind: Literal["svg", "pdf"], sizes: Sequence[tuple[int, int]]) -> list[Image.Image]:
    """An SVG (fitted, keeping its proportions) or a PDF's first page drawn at each size, "L", in a process bounded
    to ``RASTER_MEGABYTES`` and ``RASTER_SECONDS`` (layouts/rasterise.py).

    Raises:
        ValueError: it cannot be drawn, or needs more memory or time than that; the reason says which.
    """
    header = json.dumps({"kind": kind, "sizes": [list(s) for s in sizes]}).encode() + b"\n"
    # The child finds this package where this process found it, whatever the current directory.
    root = str(Path(__file__).resolve().parent.parent)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "layouts.rasterise", str(RASTER_MEGABYTES), str(RASTER_SECONDS)],
            input=header + data,
            capture_output=True,
            timeout=RASTER_SECONDS,
            cwd=root,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise ValueError(f"takes over {RASTER_SECONDS} s to draw (filters, or too much drawn): simplify it") from None
    said = (done.stderr.decode("utf-8", "replace").strip().splitlines() or [""])[-1]
    if done.returncode == 2:
        raise ValueError(said)
    if done.returncode in (-9, -24):  # SIGXCPU, then SIGKILL: past the CPU time
        raise ValueError(f"takes over {RASTER_SECONDS} s of CPU to draw: simplify it")
    if done.returncode in (3, -6) or b"memory allocation" in done.stderr:  # MemoryError, or a native abort on one
        raise ValueError(f"needs more than {RASTER_MEGABYTES} MB to draw: simplify it")
    if done.returncode != 0:
        raise ValueError(f"cannot be drawn (the renderer ended with status {done.returncode}: {said})")
    images, out = [], done.stdout
    for _ in sizes:
        length = int.from_bytes(out[:8], "big")
        with Image.open(io.BytesIO(out[8 : 8 + length])) as image:
            images.append(image.convert("L"))
        out = out[8 + length :]
    return images


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
        longest = max(page_w, page_h) * 25.4 / 72
        if longest > MAX_PDF_PAGE_MM:
            raise ValueError(
                f"its page is {longest:.0f} mm long; a background's page is at most {MAX_PDF_PAGE_MM:g} mm"
            )
        if page_w <= 0 or page_h <= 0:
            raise ValueError("its page has no size")
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
        return rasters(data, "svg", [(width, height)])[0]
    if kind == "pdf":
        return rasters(data, "pdf", [(width, height)])[0]
    with Image.open(io.BytesIO(data)) as opened:
        image = opened.convert("LA")  # grey and alpha: half the memory of RGBA, all a 1-bit print needs
    flat = Image.new("L", image.size, 255)
    flat.paste(image.getchannel("L"), (0, 0), image.getchannel("A"))
    scale = min(width / flat.width, height / flat.height)
    size = (max(1, round(flat.width * scale)), max(1, round(flat.height * scale)))
    return flat.resize(size, Image.Resampling.LANCZOS)


def contain_svg(data: bytes, width: int, height: int) -> Image.Image:
    """The SVG fitted into ``width`` x ``height`` keeping the proportions it declares; never drawn at its own size
    (that is the declared size, which may be anything). Raises ValueError."""
    natural = svg_declared_size(data)
    if natural is None:
        return svg_to_image(data, width, height)
    scale = min(width / natural[0], height / natural[1])
    return svg_to_image(data, max(1, round(natural[0] * scale)), max(1, round(natural[1] * scale)))


def ink(image: Image.Image, mode: Literal["threshold", "dither"]) -> Image.Image:
    """A grey image as an ink mask ("L", 255 = ink): thresholded at half, or Floyd-Steinberg dithered."""
    if mode == "dither":
        bits = image.convert("1", dither=Image.Dither.FLOYDSTEINBERG)
    else:
        bits = image.point(lambda v: 255 if v >= 128 else 0).convert("1", dither=Image.Dither.NONE)
    return ImageOps.invert(bits.convert("L"))
