"""The layout format: a label size in mm and positioned elements (text, box, qr, barcode, image), checked on load.

Every problem is reported at once, each naming the file and the element (``speaker.yaml: elements[2] (text
"{name}"): font_size: must be > 0``), so a designer fixes a layout in one go.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from core.validate import Invalid, parse
from drivers.base import Badge
from layouts.errors import LayoutError
from layouts.template import Template, parse_template

Mm = Annotated[float, Meta(ge=0, le=1000)]
Length = Annotated[float, Meta(gt=0, le=1000)]
Colour = Literal["black", "white"]
#: How far an element may reach past the label's edge (mm) before it counts as off the label: rounding in a
#: designer's export, never a design.
EDGE_SLACK_MM = 0.5
#: Built-in names (protocol/jobs.py BUILT_IN) and the event's own fields may be used in templates.
NAME_FIELD = "name"
#: What `layout set` lets a layout ask, so that drawing one badge stays a matter of milliseconds on a Pi. A badge
#: has a dozen elements and lines of a few dozen characters; these are far beyond any design and far below what
#: would hold a printer (layouts/draw.py also bounds the drawing itself, for layouts stored by other means).
MAX_ELEMENTS = 100
MAX_TEXT_CHARS = 500
#: The label drawn at the highest printer resolution (600 dpi): an A4 sheet is 35 megapixels.
MAX_LABEL_PIXELS = 40_000_000
HIGHEST_DPI = 600
_MM_PER_INCH = 25.4


class Size(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    width_mm: Annotated[float, Meta(gt=10, le=300)]
    height_mm: Annotated[float, Meta(gt=10, le=600)]


class _Element(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    type: str
    x: Mm
    y: Mm
    w: Length
    h: Length
    rotate: Literal[0, 90, 180, 270] = 0
    #: Drawn only for jobs whose field has this value (or one of these values).
    when: dict[str, str | list[str]] | None = None


class TextElement(_Element, kw_only=True):
    text: str
    #: The largest size (points); fit shrinks from here down to ``min_font_size``.
    font_size: Annotated[float, Meta(gt=0, le=400)] = 12.0
    min_font_size: Annotated[float, Meta(gt=0, le=400)] | None = None
    #: With ``max_lines: 2``, the size below which two lines are tried (default: 60% of ``font_size``).
    wrap_below: Annotated[float, Meta(gt=0, le=400)] | None = None
    bold: bool = False
    align: Literal["left", "center", "right"] = "center"
    valign: Literal["top", "middle", "bottom"] = "middle"
    max_lines: Literal[1, 2] = 1
    #: Shrink, then wrap (up to ``max_lines``), then cut with an ellipsis; false: ``font_size`` or an ellipsis.
    fit: bool = True
    color: Colour = "black"
    #: A pill behind the text, as wide as the text (a role or ticket type): ``black`` with ``color: white``.
    pill: Colour | None = None


class BoxElement(_Element, kw_only=True):
    fill: Colour = "black"
    radius: Mm = 0.0


class QrElement(_Element, kw_only=True):
    data: str = "{attendee_id}"


class BarcodeElement(_Element, kw_only=True):
    """Code 128 (the code set B: printable ASCII), bars across ``w``, ``h`` tall."""

    data: str = "{attendee_id}"


class ImageElement(_Element, kw_only=True):
    src: str
    #: ``threshold`` for logos and line art; ``dither`` for photos (never for text: it prints as grey fuzz).
    mode: Literal["threshold", "dither"] = "threshold"


Element = TextElement | BoxElement | QrElement | BarcodeElement | ImageElement
ELEMENT_TYPES: dict[str, type[_Element]] = {
    "text": TextElement,
    "box": BoxElement,
    "qr": QrElement,
    "barcode": BarcodeElement,
    "image": ImageElement,
}


@dataclass(frozen=True)
class Placed:
    """One checked element with its templates parsed."""

    index: int
    element: Element
    template: Template | None  # text of a text element, data of a qr/barcode
    when: dict[str, frozenset[str]]

    @property
    def holds_name(self) -> bool:
        return self.template is not None and NAME_FIELD in self.template.fields and self.element.type == "text"

    def applies_to(self, values: Mapping[str, str]) -> bool:
        # Compared without case: "Speaker" in a layout matches "speaker" in a registration export.
        return all(values.get(key, "").strip().casefold() in allowed for key, allowed in self.when.items())


@dataclass(frozen=True)
class Layout:
    """A checked layout: where it came from, its stock, its elements, and the files it uses (name -> bytes)."""

    source: str
    size: Size
    elements: tuple[Placed, ...]
    background: str | None = None
    background_mode: Literal["threshold", "dither"] = "threshold"
    assets: Mapping[str, bytes] = field(default_factory=dict)
    #: The document as written (our format; a pretix layout after mapping): what is stored in the venue's Redis.
    document: Mapping[str, Any] = field(default_factory=dict)

    @property
    def stock(self) -> str:
        """The stock it is drawn for, as "WxH" in mm ("101.6x152.4")."""
        return stock_name(self.size.width_mm, self.size.height_mm)


def stock_name(width_mm: float, height_mm: float) -> str:
    return f"{width_mm:g}x{height_mm:g}"


class _Top(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    size: Size
    elements: list[Any]
    background: str | None = None
    background_mode: Literal["threshold", "dither"] = "threshold"
    name: str | None = None  # a label for people; the stored name comes from `layout set --name`


def describe(index: int, raw: object) -> str:
    """``elements[2] (text "{name}")``: how problems name an element."""
    if not isinstance(raw, Mapping):
        return f"elements[{index}]"
    kind = raw.get("type", "?")
    hint = raw.get("text") or raw.get("data") or raw.get("src")
    return f"elements[{index}] ({kind}{f' {str(hint)[:40]!r}' if isinstance(hint, str) else ''})"


def parse_layout(
    data: object, source: str, assets: Mapping[str, bytes] | None = None, *, strict: bool = True
) -> Layout:
    """Check a parsed YAML/JSON layout. ``source`` names it in every problem; images are checked by the caller.

    ``strict`` (`layout set`, `layout preview`) also holds the layout to the bounds above and refuses a constant QR
    code or barcode that cannot be encoded; a layout read back from the venue's Redis is not refused for them (an
    older version may have stored it): its drawing is bounded instead (layouts/draw.py).

    Raises:
        LayoutError: every problem, each naming ``source`` and the element.
    """
    problems: list[str] = []
    try:
        top = parse(_Top, data)
    except Invalid as exc:
        raise LayoutError([f"{source}: {p}" for p in exc.problems]) from None
    placed: list[Placed] = []
    if strict:
        problems.extend(_size_problems(top, source))
    for index, raw in enumerate(top.elements):
        where = f"{source}: {describe(index, raw)}"
        item = _element(index, raw, top.size, where, problems)
        if item is not None:
            placed.append(item)
            if strict:
                problems.extend(f"{where}: {p}" for p in _bound_problems(item))
    if not problems and not any(p.holds_name for p in placed):
        problems.append(f"{source}: no text element shows {{{NAME_FIELD}}}: every badge must carry the name")
    if problems:
        raise LayoutError(problems)
    document = dict(data) if isinstance(data, Mapping) else {}
    return Layout(source, top.size, tuple(placed), top.background, top.background_mode, dict(assets or {}), document)


def _size_problems(top: _Top, source: str) -> list[str]:
    problems = []
    if len(top.elements) > MAX_ELEMENTS:
        problems.append(f"{source}: elements: {len(top.elements)} elements; a layout has at most {MAX_ELEMENTS}")
    dpmm = HIGHEST_DPI / _MM_PER_INCH
    pixels = round(top.size.width_mm * dpmm) * round(top.size.height_mm * dpmm)
    if pixels > MAX_LABEL_PIXELS:
        problems.append(
            f"{source}: size: {top.size.width_mm:g} x {top.size.height_mm:g} mm is {pixels / 1e6:.0f} megapixels at "
            f"{HIGHEST_DPI} dpi; a label is at most {MAX_LABEL_PIXELS // 1_000_000} megapixels (an A4 sheet)"
        )
    return problems


def code_min_module(element: QrElement | BarcodeElement, dpmm: float) -> int:
    """The narrowest module (dots) a QR code or barcode is printed with: what a door scanner still reads."""
    return max(2, round(0.375 * dpmm)) if isinstance(element, QrElement) else max(1, round(0.25 * dpmm))


def _bound_problems(placed: Placed) -> list[str]:
    """What in one checked element is over `layout set`'s bounds, or a constant code that cannot be encoded."""
    e, template = placed.element, placed.template
    text = e.text if isinstance(e, TextElement) else getattr(e, "data", None)
    if text is not None and len(text) > MAX_TEXT_CHARS:
        field_name = "text" if isinstance(e, TextElement) else "data"
        return [f"{field_name}: {len(text)} characters; at most {MAX_TEXT_CHARS}"]
    if not isinstance(e, QrElement | BarcodeElement) or template is None:
        return []
    literal = "".join(part for part, _ in template.parts)
    if isinstance(e, BarcodeElement):
        bad = next((c for c in literal if not 32 <= ord(c) <= 126), None)
        if bad is not None:
            return [f"data: {bad!r} cannot be carried by a Code 128 barcode (printable ASCII only)"]
    if template.fields:
        return []  # what the job's fields make is checked per badge (a render error names the element)
    return _constant_code_problems(e, literal, placed)


def _constant_code_problems(e: QrElement | BarcodeElement, data: str, placed: Placed) -> list[str]:
    """A QR code or barcode whose data is constant is encoded now, at each printer resolution, so a layout that
    could never print one is refused here rather than dead-lettering every badge."""
    from drivers.base import RenderError  # the encoders are loaded only for layouts with a constant code
    from drivers.render.qr import qr_mask
    from layouts.code128 import barcode_mask

    for dpi in (203, 300, HIGHEST_DPI):
        dpmm = dpi / _MM_PER_INCH
        w = max(1, round((e.x + e.w) * dpmm) - round(e.x * dpmm))
        h = max(1, round((e.y + e.h) * dpmm) - round(e.y * dpmm))
        if e.rotate in (90, 270):
            w, h = h, w
        try:
            if isinstance(e, QrElement):
                qr_mask(data, min(w, h), code_min_module(e, dpmm), "its data")
            else:
                barcode_mask(data, w, 1, code_min_module(e, dpmm))
        except RenderError as exc:
            what = "QR code" if isinstance(e, QrElement) else "barcode"
            return [f"data: the {what} {data[:40]!r} cannot be printed at {dpi} dpi: {exc}"]
    return []


def _element(index: int, raw: object, size: Size, where: str, problems: list[str]) -> Placed | None:
    if not isinstance(raw, Mapping):
        problems.append(f"{where}: must be a mapping")
        return None
    kind = raw.get("type")
    struct = ELEMENT_TYPES.get(kind) if isinstance(kind, str) else None
    if struct is None:
        problems.append(f"{where}: unknown element type {kind!r} (known: {', '.join(ELEMENT_TYPES)})")
        return None
    try:
        element: Element = parse(struct, raw)  # type: ignore[assignment]
    except Invalid as exc:
        problems.extend(f"{where}: {p}" for p in exc.problems)
        return None
    if element.x + element.w > size.width_mm + EDGE_SLACK_MM or element.y + element.h > size.height_mm + EDGE_SLACK_MM:
        problems.append(
            f"{where}: off the label: reaches {element.x + element.w:g} x {element.y + element.h:g} mm on a "
            f"{size.width_mm:g} x {size.height_mm:g} mm label"
        )
        return None
    if isinstance(element, TextElement) and element.min_font_size and element.min_font_size > element.font_size:
        problems.append(f"{where}: min_font_size {element.min_font_size:g} is larger than font_size")
        return None
    template: Template | None = None
    text = element.text if isinstance(element, TextElement) else getattr(element, "data", None)
    if text is not None:
        try:
            template = parse_template(text)
        except ValueError as exc:
            problems.append(f"{where}: {exc}")
            return None
    when = {
        k: frozenset(x.strip().casefold() for x in ([v] if isinstance(v, str) else v))
        for k, v in (element.when or {}).items()
    }
    return Placed(index, element, template, when)


def job_values(badge: Badge) -> dict[str, str]:
    """What templates and ``when`` see: the job's built-in fields and its own ``fields``."""
    built_in = {
        "name": badge.name,
        "company": badge.company,
        "role": badge.role,
        "attendee_id": badge.attendee_id,
        "job_id": badge.job_id,
    }
    return {**badge.fields, **built_in}


#: The layout a job names to be drawn in the built-in design whatever the venue's rules and default: a label that is
#: no attendee's badge (a box's separator, preprint/pool.py) must not look like one.
BUILT_IN_LAYOUT = "built-in"
#: Why ``built-in`` is never a venue layout's name: a job naming it (a box's separator label) is drawn in the built-in
#: design whatever the venue sets, so a layout of that name would be stored and never drawn.
RESERVED_NAME = (
    f"the layout name {BUILT_IN_LAYOUT!r} is reserved (it names the built-in design, which box separator labels "
    "are drawn in): give the layout another name (--name)"
)
