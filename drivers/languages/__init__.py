"""Printer languages: ZPL (Zebra), Brother QL raster, ESC/POS. Each renders, reads status and decides outcomes."""

from __future__ import annotations

from drivers.languages.base import LanguageDriver
from drivers.languages.brother import BrotherDriver
from drivers.languages.escpos import EscposDriver
from drivers.languages.zpl import ZplDriver

__all__ = ["LANGUAGES", "BrotherDriver", "EscposDriver", "LanguageDriver", "ZplDriver"]

LANGUAGES: dict[str, type[LanguageDriver]] = {"zpl": ZplDriver, "brother_ql": BrotherDriver, "escpos": EscposDriver}
