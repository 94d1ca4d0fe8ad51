"""The label stock loaded in a printer, as ``printer.driver.label`` gives it, and each language's default stock.

A module of its own so that the drivers' config and the Brother label tables (drivers/languages/brother_media.py)
both import it without importing each other.
"""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import Meta


class LabelConfig(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """The label stock loaded in the printer."""

    width_mm: Annotated[float, Meta(gt=10, le=300)] = 101.6
    height_mm: Annotated[float, Meta(gt=10, le=600)] = 152.4
    dpi: Annotated[int, Meta(ge=100, le=600)] = 203
    #: Brother QL: separate labels of width x height (e.g. DK-11202, 62x100 mm) rather than endless tape cut at
    #: ``height_mm``; the printer reports which is loaded, and a badge is sent only when it matches.
    die_cut: bool = False
    #: TSPL: the gap between two labels (the ``GAP`` command); 0 for continuous stock.
    gap_mm: Annotated[float, Meta(ge=0, le=25)] = 3.0


#: A 4x6 in Zebra label at 203 dpi; 62 mm Brother DK tape cut at 100 mm (QL printers are 300 dpi); 80 mm ESC/POS
#: paper, whose printable width is 72 mm at 203 dpi; a DYMO name badge label (57x102 mm, 56 mm of it under a
#: LabelWriter 450's 300 dpi head); a 4x6 in label on a TSPL printer at 203 dpi.
DEFAULT_LABELS: dict[str, LabelConfig] = {
    "zpl": LabelConfig(width_mm=101.6, height_mm=152.4, dpi=203),
    "brother_ql": LabelConfig(width_mm=62, height_mm=100, dpi=300),
    "escpos": LabelConfig(width_mm=72, height_mm=100, dpi=203),
    "dymo": LabelConfig(width_mm=56, height_mm=102, dpi=300),
    "tspl": LabelConfig(width_mm=101.6, height_mm=152.4, dpi=203),
}
