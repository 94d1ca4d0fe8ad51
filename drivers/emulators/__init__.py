"""Printer emulators for tests and venue rehearsals (``badge-agent sim``): ZPL, Brother QL, ESC/POS, DYMO LabelWriter
(450 and 550) and TSPL printers on
TCP, a serial pty, or an emulated USB device, answering status in the published formats."""

from __future__ import annotations

from drivers.emulators.brother import BrotherPrinter
from drivers.emulators.core import FAULTS, EmulatedPrinter, Job
from drivers.emulators.dymo import Dymo550Printer, DymoPrinter
from drivers.emulators.escpos import EscposPrinter
from drivers.emulators.tspl import TsplPrinter
from drivers.emulators.zpl import ZplPrinter

__all__ = [
    "EMULATORS",
    "FAULTS",
    "BrotherPrinter",
    "Dymo550Printer",
    "DymoPrinter",
    "EmulatedPrinter",
    "EscposPrinter",
    "Job",
    "TsplPrinter",
    "ZplPrinter",
]

#: By the name ``badge-agent sim`` takes: ``dymo`` is a LabelWriter 450, ``dymo550`` a LabelWriter 550 (both are
#: ``driver.language: dymo``).
EMULATORS: dict[str, type[EmulatedPrinter]] = {
    "zpl": ZplPrinter,
    "brother_ql": BrotherPrinter,
    "escpos": EscposPrinter,
    "dymo": DymoPrinter,
    "dymo550": Dymo550Printer,
    "tspl": TsplPrinter,
}
