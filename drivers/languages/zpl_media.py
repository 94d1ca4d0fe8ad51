"""The stock a Zebra reports against the label the config describes, checked when the driver opens.

The printer's print width comes from SGD ``ezpl.print_width`` (dots; Link-OS printers) and the label length
from ``~HS`` (field ``dddd``, dots: the length the printer measured at calibration, or ``^LL``). A difference of
more than 1.5 mm is logged as a warning naming both sizes; badges still print (a Zebra prints a narrower or
shorter layout on wider stock, and a crew may calibrate after the agent started). A printer without SGD has its
length checked alone.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from drivers.label import LabelConfig
from drivers.languages import zpl_status as zs

log = logging.getLogger(__name__)

PRINT_WIDTH = zs.sgd_getvar("ezpl.print_width")
TOLERANCE_MM = 1.5

Query = Callable[[bytes, Callable[[bytes], bool], float], Awaitable[bytes]]


@dataclass(frozen=True)
class Stock:
    """Sizes in dots; None where the printer did not say."""

    width: int | None
    length: int | None


def _dots(mm: float, dpi: int) -> int:
    return round(mm / 25.4 * dpi)


def _mm(dots: int, dpi: int) -> str:
    return f"{dots * 25.4 / dpi:.1f}"


async def read_stock(query: Query, within: float, sgd: bool = True) -> Stock:
    """The printer's print width (when it speaks SGD) and label length."""
    width: int | None = None
    if sgd:
        try:
            width = int(zs.parse_sgd(await query(PRINT_WIDTH, zs.sgd_complete, within)))
        except ValueError:
            width = None
    try:
        length: int | None = zs.parse_host_status(
            await query(zs.HOST_STATUS, zs.host_status_complete, within)
        ).label_length
    except ValueError:
        length = None
    return Stock(width, length)


def mismatch(stock: Stock, label: LabelConfig) -> str | None:
    """Both sizes, in dots and mm, when the printer's stock differs from the config's label; else None."""
    want = Stock(_dots(label.width_mm, label.dpi), _dots(label.height_mm, label.dpi))
    slack = _dots(TOLERANCE_MM, label.dpi)
    differs = [
        (have, wanted)
        for have, wanted in ((stock.width, want.width), (stock.length, want.length))
        if have is not None and wanted is not None and abs(have - wanted) > slack
    ]
    if not differs:
        return None

    def size(s: Stock) -> str:
        w = "?" if s.width is None else str(s.width)
        ln = "?" if s.length is None else str(s.length)
        mm_w = "?" if s.width is None else _mm(s.width, label.dpi)
        mm_l = "?" if s.length is None else _mm(s.length, label.dpi)
        return f"{w} x {ln} dots ({mm_w} x {mm_l} mm)"

    return (
        f"loaded stock differs from the config: printer reports print width x label length {size(stock)}, "
        f"config expects {size(want)} at {label.dpi} dpi"
    )


def as_label(stock: Stock, label: LabelConfig) -> LabelConfig | None:
    """The label the printer reports (width and length, at the config's resolution), or None when it did not
    give both or gave sizes no label has."""
    if stock.width is None or stock.length is None:
        return None
    width, height = stock.width * 25.4 / label.dpi, stock.length * 25.4 / label.dpi
    if not (10 < width <= 300 and 10 < height <= 600):
        return None
    return LabelConfig(width_mm=round(width, 1), height_mm=round(height, 1), dpi=label.dpi)


async def warn_on_mismatch(
    query: Query, label: LabelConfig, io_timeout: float, printer: str, sgd: bool = True
) -> tuple[str | None, LabelConfig | None]:
    """Read the stock and log a warning when it differs from ``label``; returns the warning (None: it matches) and
    the label the printer reports (None: it did not give both sizes).

    ``sgd``: the printer answered SGD before (its label counter); one that did not is not asked its width.
    """
    stock = await read_stock(query, min(io_timeout, 1.0), sgd)
    problem = mismatch(stock, label)
    if problem is not None:
        log.warning("%s: %s", printer, problem)
    return problem, as_label(stock, label)
