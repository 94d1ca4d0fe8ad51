"""Printer emulators for tests and venue rehearsals (``badge-agent sim``): ZPL, Brother QL and ESC/POS printers on
TCP, a serial pty, or an emulated USB device, answering status in the published formats."""

from __future__ import annotations

from drivers.emulators.brother import BrotherPrinter
from drivers.emulators.core import FAULTS, EmulatedPrinter, Job
from drivers.emulators.escpos import EscposPrinter
from drivers.emulators.zpl import ZplPrinter

__all__ = ["EMULATORS", "FAULTS", "BrotherPrinter", "EmulatedPrinter", "EscposPrinter", "Job", "ZplPrinter"]

EMULATORS: dict[str, type[EmulatedPrinter]] = {"zpl": ZplPrinter, "brother_ql": BrotherPrinter, "escpos": EscposPrinter}
