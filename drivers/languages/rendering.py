"""From a badge to the bytes of one printer language, using the shared renderer in ``drivers.render``.

The default badge is always a graphic drawn by the agent (any script, shaped and fitted), so no attendee field
ever reaches the printer as text. A ZPL venue may supply its own template with native text fields instead; a
badge whose characters the printer's font cannot draw still falls back to the graphic.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from typing import Any

from drivers.base import Badge, RenderError
from drivers.label import LabelConfig
from drivers.languages import zpl_text


def _render(module: str, name: str) -> Any:
    # The renderer loads Pillow, raqm and the Noto fonts: import it when the first badge is drawn, so tools that
    # only probe printers (check-config, the emulators) stay light.
    return getattr(importlib.import_module(module), name)


#: Draws one badge for a label as a mode "1" image: a badge layout's drawing (layouts/); None: the built-in design.
Draw = Callable[[Badge, LabelConfig], Any]


def _image(badge: Badge, label: LabelConfig, draw: Draw | None) -> Any:
    if draw is not None:
        return draw(badge, label)
    return _render("drivers.render", "render_badge")(badge, label)


def job_marker(badge: Badge) -> bytes:
    """A ZPL comment naming the job, for the print log; only safe characters, so it cannot end the comment."""
    return b"^FXjob:" + re.sub(r"[^A-Za-z0-9._:@-]", "-", badge.job_id)[:64].encode("ascii") + b"^FS"


def render_zpl(badge: Badge, label: LabelConfig, template: str | None, draw: Draw | None = None) -> bytes:
    fields = {"name": badge.name, "company": badge.company, "role": badge.role}
    # A badge layout is always drawn by the agent: the native template is the built-in design's alternative.
    if draw is None and template is not None and all(zpl_text.font_covers(v) for v in fields.values()):
        values = {**fields, "attendee_id": badge.attendee_id, "job_id": badge.job_id}
        body = zpl_text.fill_template(template, values)
    else:
        body = bytes(_render("drivers.render.zpl", "encode_zpl")(_image(badge, label, draw)))
    start = body.upper().find(b"^XA")
    if start < 0:
        raise RenderError("ZPL encoder produced no ^XA")
    return body[: start + 3] + job_marker(badge) + body[start + 3 :]


def render_for(
    language: str,
    badge: Badge,
    label: LabelConfig,
    template: str | None = None,
    model: str | None = None,
    draw: Draw | None = None,
    head_dots: int = 672,
    generation: str = "4xx",
) -> bytes:
    """The bytes of one badge in ``language``. ``model`` is a Brother's; ``head_dots`` and ``generation`` (4xx or 550)
    a DYMO LabelWriter's."""
    try:
        if language == "zpl":
            return render_zpl(badge, label, template, draw)
        if language == "brother_ql":
            from drivers.languages import brother_media

            model = model or brother_media.DEFAULT_MODEL
            stock = brother_media.check(model, label)
            encode = _render("drivers.render.brother", "encode_brother_raster")
            return bytes(encode(_image(badge, label, draw), model=model, label=stock))
        if language == "escpos":
            return bytes(_render("drivers.render.escpos", "encode_escpos_raster")(_image(badge, label, draw)))
        if language == "dymo":
            name = "encode_dymo_550" if generation == "550" else "encode_dymo_4xx"
            return bytes(_render("drivers.render.dymo", name)(_image(badge, label, draw), head_dots=head_dots))
        if language == "tspl":
            encode = _render("drivers.render.tspl", "encode_tspl")
            image = _image(badge, label, draw)
            return bytes(
                encode(image, width_mm=label.width_mm, height_mm=label.height_mm, gap_mm=label.gap_mm, dpi=label.dpi)
            )
    except ValueError as exc:
        raise RenderError(f"cannot encode the badge for {language}: {exc}") from exc
    raise RenderError(f"no renderer for language {language!r}")
