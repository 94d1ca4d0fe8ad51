"""What the driver tests share: the links a venue uses and the badge every printer kind is loaded for."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from drivers.base import Badge
from drivers.emulators import EMULATORS
from drivers.emulators.fronts import TcpFront
from drivers.label import LabelConfig

LINKS = ["tcp", "serial", "usb"]
#: The stock each printer kind is loaded with: the badge is drawn for it (a receipt printer prints 72 mm). The
#: real-driver benches (bench/printers.py) load their emulators with the same.
LABELS = {
    "zpl": LabelConfig(),
    "brother_ql": LabelConfig(width_mm=62, height_mm=100, dpi=300),
    "escpos": LabelConfig(width_mm=72, height_mm=100, dpi=203),
    "dymo": LabelConfig(width_mm=56, height_mm=102, dpi=300),
    "dymo550": LabelConfig(width_mm=56, height_mm=102, dpi=300),
    "tspl": LabelConfig(width_mm=101.6, height_mm=152.4, dpi=203),
}
#: The driver language of each emulator kind (a LabelWriter 550 is ``driver.language: dymo``).
LANGUAGE = {"dymo550": "dymo"}


def language_of(kind: str) -> str:
    return LANGUAGE.get(kind, kind)


BADGE = Badge(job_id="job-1", attendee_id="ATT-0001", name="Ada Lovelace", company="Analytical", role="Speaker")


NAMES = {
    "latin": "Zoë Ångström-Łukasiewicz",
    "arabic": "محمد عبد الله",
    "hebrew": "דוד בן־גוריון",
    "chinese": "李小龙",
    "japanese": "山田 太郎",
    "korean": "김민준",
    "cyrillic": "Сергей Прокофьев",
    "greek": "Νίκος Καζαντζάκης",
    "devanagari": "अमिताभ बच्चन",
    "thai": "สมชาย ใจดี",
    "vietnamese": "Nguyễn Thị Minh Khai",
    "mixed": "María 李 Сергей",
    "mixed_rtl": "Sara سارة Cohen כהן",
}


@contextlib.asynccontextmanager
async def zpl_printer(name: str, print_time: float = 0.05) -> AsyncIterator[dict[str, object]]:
    printer = EMULATORS["zpl"](name, print_time=print_time)
    await printer.start()
    front = TcpFront(printer, "127.0.0.1", 0)
    host, port = await front.start()
    try:
        yield {"language": "zpl", "transport": "tcp", "host": host, "port": port, "io_timeout": 2.0}
    finally:
        await front.stop()
        await printer.stop()
