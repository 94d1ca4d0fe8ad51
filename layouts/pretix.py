"""pretix badge layouts, accepted as pretix's badge designer saves them, mapped to our format.

pretix's layout is a JSON list of ``textarea``, ``textcontainer``, ``barcodearea`` and ``imagearea`` objects (also
the ``layout`` of a badge layout its REST API returns), placed in mm from the page's *bottom-left* corner, drawn
over a background PDF whose first page sets the page size. What maps where:

* ``left``/``bottom`` -> ``x``/``y`` from the top-left. A text area's ``bottom`` is the bottom of its text, which
  grows upwards; with ``downward`` it is the top, and the text grows downwards. A ``textcontainer`` (pretix's
  current text element, in its shipped badge templates) is a box ``height`` mm tall above ``bottom``, its text
  placed by ``verticalalign`` and, with ``autoresize``, shrunk to fit. pretix turns a text area clockwise
  by ``rotation`` degrees about its top-left corner; so do we (0, 90, 180 and 270 only).
* ``content``: ``attendee_name`` -> ``{name}``, ``attendee_company`` -> ``{company}``, ``item`` and ``itemvar``
  -> ``{ticket_type}``, ``secret`` -> ``{attendee_id}`` (the ticket code the QR code carries), ``other`` -> its
  ``text``, ``other_i18n`` -> its first text; any other name (``attendee_email``, ``event_name``, a question's
  identifier) -> the job field of that name, lower-cased.
* ``fontsize``, ``bold`` and ``align`` are kept; the font is always ours (Noto, drawn per character, so every
  script prints), italic is dropped, ``color`` becomes black or white. Text is fitted (shrink, then two lines)
  where pretix would overflow.
* ``barcodearea``: a QR code, ``size`` mm square, its bottom-left at ``left``/``bottom``.
* ``imagearea``: the image named by ``content`` is read from ``CONTENT.png`` or ``CONTENT.svg`` beside the layout.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from layouts import assets
from layouts.errors import LayoutError
from layouts.files import read_assets, read_document
from layouts.model import Layout, parse_layout

_MM_PER_POINT = 25.4 / 72
_FIELD = re.compile(r"[a-z0-9_]{1,40}")
_CONTENT = {
    "attendee_name": "{name}",
    "attendee_name_full": "{name}",
    "attendee_company": "{company}",
    "item": "{ticket_type}",
    "itemvar": "{ticket_type}",
    "secret": "{attendee_id}",
}
#: A pretix text area has no height: ours holds one line (two with ``downward``) of the font size, with room for
#: accents above and descenders below.
_LINE = 1.2


def _number(raw: Mapping[str, Any], key: str, where: str, problems: list[str], default: float | None = None) -> float:
    value = raw.get(key, default)
    try:
        return float(value)  # pretix writes numbers as text ("152.55") or as numbers
    except (TypeError, ValueError):
        problems.append(f"{where}: {key}: must be a number (got {value!r})")
        return 0.0


def _content(raw: Mapping[str, Any], where: str, problems: list[str]) -> str | None:
    content = str(raw.get("content") or "secret")
    if content == "other":
        return str(raw.get("text") or "").replace("{", "{{").replace("}", "}}")
    if content == "other_i18n":
        texts = raw.get("text_i18n") or {}
        first = next(iter(texts.values()), "") if isinstance(texts, Mapping) else ""
        return str(first).replace("{", "{{").replace("}", "}}")
    if content in _CONTENT:
        return _CONTENT[content]
    name = content.lower().replace("-", "_")
    if content.startswith("attendee_name_") and _FIELD.fullmatch(name[len("attendee_name_") :]):
        return "{" + name[len("attendee_name_") :] + "}"  # a part of the name: given_name, family_name
    if not _FIELD.fullmatch(name):
        problems.append(f"{where}: content {content!r} cannot be a job field (letters, digits and _ only)")
        return None
    return "{" + name + "}"


def _place(
    pivot: tuple[float, float], w: float, h: float, rotation: int, page: tuple[float, float]
) -> dict[str, float]:
    """Our box (y down from the top) for an area of ``w`` x ``h`` whose unturned top-left corner is ``pivot`` (in
    pretix's y-up mm), turned clockwise by ``rotation`` about that corner; clipped to the page."""
    px, py = pivot[0], page[1] - pivot[1]
    x0, y0, x1, y1 = {
        0: (px, py, px + w, py + h),
        90: (px - h, py, px, py + w),
        180: (px - w, py - h, px, py),
        270: (px, py - w, px + h, py),
    }[rotation]
    x0, y0 = max(0.0, x0), max(0.0, y0)
    x1, y1 = min(page[0], x1), min(page[1], y1)
    return {"x": round(x0, 2), "y": round(y0, 2), "w": round(max(0.1, x1 - x0), 2), "h": round(max(0.1, y1 - y0), 2)}


def _rotation(raw: Mapping[str, Any], where: str, problems: list[str]) -> int:
    value = _number(raw, "rotation", where, problems, 0) % 360
    if value not in (0, 90, 180, 270):
        problems.append(f"{where}: rotation {value:g} is not supported on a badge printer (0, 90, 180 or 270)")
        return 0
    return int(value)


def _colour(raw: Mapping[str, Any]) -> str:
    rgb = raw.get("color") or [0, 0, 0]
    try:
        r, g, b = (float(v) for v in list(rgb)[:3])
    except (TypeError, ValueError):
        return "black"
    return "white" if 0.299 * r + 0.587 * g + 0.114 * b >= 128 else "black"


def convert(
    elements: list[Any], page: tuple[float, float], source: str, folder: Path, background: str | None
) -> tuple[dict[str, Any], list[str]]:
    """Our layout document for pretix's element list on a page of ``page`` mm, and the problems found."""
    problems: list[str] = []
    ours: list[dict[str, Any]] = []
    for index, raw in enumerate(elements):
        where = f"{source}: layout[{index}]"
        if not isinstance(raw, Mapping):
            problems.append(f"{where}: must be an object")
            continue
        kind = raw.get("type")
        where = f"{where} ({kind} {raw.get('content', '')!s})".replace(" )", ")")
        if int(_number(raw, "page", where, problems, 1)) != 1:
            continue  # a badge is one page; pretix's later pages are for printers that print both sides
        left, bottom = _number(raw, "left", where, problems), _number(raw, "bottom", where, problems)
        if kind in ("textarea", "textcontainer"):
            text = _content(raw, where, problems)
            size = _number(raw, "fontsize", where, problems, 12)
            width = _number(raw, "width", where, problems)
            rotation = _rotation(raw, where, problems)
            valign = "top"
            min_size = max(1.0, size * 0.5)
            if kind == "textcontainer":  # a box of its own height: its top-left corner is the pivot
                height = _number(raw, "height", where, problems)
                pivot = (left, bottom + height)
                valign = str(raw.get("verticalalign") or "top")
                if raw.get("autoresize"):
                    min_size = 1.0  # pretix shrinks it as far as it must
            else:
                line = size * _MM_PER_POINT * max(1.0, _number(raw, "lineheight", where, problems, 1)) * _LINE
                downward = bool(raw.get("downward", False))
                height = 2 * line if downward else line
                pivot = (left, bottom) if downward else (left, bottom + height)
                valign = "top" if downward else "bottom"
            if text is None:
                continue
            align = raw.get("align", "left")
            ours.append(
                {
                    "type": "text",
                    "text": text,
                    **_place(pivot, width, height, rotation, page),
                    "rotate": rotation,
                    "font_size": size,
                    "min_font_size": min(size, min_size),
                    "max_lines": 2,
                    "bold": bool(raw.get("bold", False)),
                    "align": align if align in ("left", "center", "right") else "left",
                    "valign": valign if valign in ("top", "middle", "bottom") else "top",
                    "color": _colour(raw),
                }
            )
        elif kind == "barcodearea":
            data = _content(raw, where, problems)
            side = _number(raw, "size", where, problems)
            rotation = _rotation(raw, where, problems)
            if data is None:
                continue
            ours.append(
                {
                    "type": "qr",
                    "data": data,
                    **_place((left, bottom + side), side, side, rotation, page),
                    "rotate": rotation,
                }
            )
        elif kind == "imagearea":
            content = str(raw.get("content") or "")
            name = next((f"{content}{ext}" for ext in (".png", ".svg") if (folder / f"{content}{ext}").is_file()), None)
            width, height = _number(raw, "width", where, problems), _number(raw, "height", where, problems)
            if name is None:
                problems.append(f"{where}: put the image for {content!r} beside the layout as {content}.png or .svg")
                continue
            ours.append({"type": "image", "src": name, **_place((left, bottom + height), width, height, 0, page)})
        elif kind == "poweredby":
            continue  # pretix's own logo: not ours to print
        else:
            known = "textarea, textcontainer, barcodearea, imagearea"
            problems.append(f"{where}: unknown pretix element type {kind!r} ({known})")
    document: dict[str, Any] = {
        "size": {"width_mm": round(page[0], 2), "height_mm": round(page[1], 2)},
        "elements": ours,
    }
    if background is not None:
        document["background"] = background
    return document, problems


def pdf_page_mm(data: bytes) -> tuple[float, float]:
    """The size of a PDF's first page in mm. Raises ValueError for a file PDFium cannot read."""
    import pypdfium2

    try:
        document = pypdfium2.PdfDocument(data)
    except pypdfium2.PdfiumError as exc:
        raise ValueError(str(exc)) from exc
    try:
        if len(document) == 0:
            raise ValueError("the PDF has no pages")
        width, height = document[0].get_size()
    finally:
        document.close()
    return width * _MM_PER_POINT, height * _MM_PER_POINT


def load_pretix(path: Path, background: Path | None = None, size_mm: tuple[float, float] | None = None) -> Layout:
    """Read a pretix badge layout (its JSON) and its background PDF (``background``, else the ``.pdf`` of the same
    name beside it, if there is one). The page size is the PDF's, else ``size_mm``.

    Raises:
        LayoutError: every problem, each naming the file and the element (``layout[3] (textarea attendee_name)``).
    """
    source = str(path)
    data = read_document(path)
    elements = data.get("layout") if isinstance(data, Mapping) else data
    if isinstance(elements, str):  # pretix's API and exports carry the layout as JSON text
        try:
            elements = json.loads(elements)
        except json.JSONDecodeError as exc:
            raise LayoutError([f"{source}: layout: is not valid JSON: {exc}"]) from None
    if not isinstance(elements, list):
        raise LayoutError([f"{source}: not a pretix badge layout (a list of textarea, barcodearea and imagearea)"])
    background = background or (path.with_suffix(".pdf") if path.with_suffix(".pdf").is_file() else None)
    page = size_mm
    extra: dict[str, bytes] = {}
    if background is not None:
        try:
            content = background.read_bytes()
        except OSError as exc:
            raise LayoutError([f"{source}: background {background}: cannot be read ({exc.strerror})"]) from None
        problem = assets.check_image(background.name, content, background=True)
        if problem:
            raise LayoutError([f"{source}: background: {problem}"])
        if assets.kind_of(content) == "pdf":
            page = pdf_page_mm(content)
        extra[background.name] = content
    if page is None:
        raise LayoutError([f"{source}: no background PDF to take the page size from: give the label size"])
    document, problems = convert(elements, page, source, path.parent, background.name if background else None)
    try:
        found = read_assets(document, path.parent, source, extra)
    except LayoutError as exc:
        problems += exc.problems
        found = {}
    if problems:
        raise LayoutError(problems)
    from layouts.draw import prerender  # each file drawn once now: one that cannot be is refused here

    return prerender(parse_layout(document, source, found))
