"""The QR code that carries the attendee id to the session-door scanners."""

from __future__ import annotations

import segno
from PIL import Image

from drivers.base import RenderError

QUIET_ZONE = 4  # modules of white the QR spec requires around the symbol


def qr_mask(attendee_id: str, cell: int, min_module: int, what: str = "attendee_id") -> Image.Image:
    """The symbol as an ink mask ("L", 255 = dark module), whole dots per module, sized so that the symbol and its
    quiet zone fit a ``cell`` x ``cell`` square (the mask is the symbol only; centre it in the cell).

    Whole-dot modules matter on a 203 dpi head: a resampled module becomes uneven bars a scanner misreads.

    ``what`` names the data in errors: the attendee id on the built-in badge, a layout's own data elsewhere.

    Raises:
        RenderError: the id is empty, or too long for a symbol with modules of at least ``min_module`` dots.
    """
    if not attendee_id:
        raise RenderError(f"{what} is empty: the badge's QR code would carry nothing")
    try:
        # Error level M, raised for free when the data leaves room: badges get bent and scratched.
        code = segno.make(attendee_id, error="m", micro=False, boost_error=True)
    except (segno.DataOverflowError, ValueError) as exc:
        raise RenderError(f"{what} is too long for a QR code ({len(attendee_id)} characters): {exc}") from exc
    modules = int(code.symbol_size(border=0)[0])
    scale = cell // (modules + 2 * QUIET_ZONE)
    if scale < min_module:
        raise RenderError(
            f"{what} is too long to print as a scannable QR code on this label "
            f"({modules} modules and the quiet zone in {cell} dots; at least {min_module} dots per module needed)"
        )
    data = bytes(255 if dark else 0 for row in code.matrix for dark in row)
    image = Image.frombytes("L", (modules, modules), data)
    return image.resize((modules * scale, modules * scale), Image.Resampling.NEAREST)
