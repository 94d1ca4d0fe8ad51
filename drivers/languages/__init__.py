"""Printer languages: ZPL (Zebra), Brother QL raster, ESC/POS, DYMO LabelWriter, TSPL. Each renders, reads status
and decides outcomes."""

from __future__ import annotations

from drivers.languages.base import LanguageDriver
from drivers.languages.brother import BrotherDriver
from drivers.languages.dymo import DymoDriver
from drivers.languages.escpos import EscposDriver
from drivers.languages.tspl import TsplDriver
from drivers.languages.zpl import ZplDriver

__all__ = [
    "LANGUAGES",
    "BrotherDriver",
    "DymoDriver",
    "EscposDriver",
    "LanguageDriver",
    "TsplDriver",
    "ZplDriver",
]

LANGUAGES: dict[str, type[LanguageDriver]] = {
    "zpl": ZplDriver,
    "brother_ql": BrotherDriver,
    "escpos": EscposDriver,
    "dymo": DymoDriver,
    "tspl": TsplDriver,
}
