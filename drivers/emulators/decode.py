"""Reading back what an emulated printer printed: the graphic through the renderer's decoders, written as a PNG
beside the print log, and the QR code read with zxing-cpp (a decoder someone else wrote, so the round trip proves
the badge scans) when it is installed.

zxing-cpp is a development dependency: a rehearsal with ``badge-agent sim`` on a venue's machine has the PNGs to
look at, and the attendee id read back only where the package is.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any


@functools.cache
def qr_reader() -> Any | None:
    """The zxingcpp module, or None when it is not installed."""
    try:
        return importlib.import_module("zxingcpp")
    except ImportError:
        return None


def qr_texts(images: Iterable[Any]) -> list[str]:
    zxingcpp = qr_reader()
    if zxingcpp is None:
        raise ImportError("No module named 'zxingcpp'")
    found: list[str] = []
    for image in images:
        gray = image.convert("L")
        found += [r.text for r in zxingcpp.read_barcodes(gray) if r.text]
    return found


def save_label(images: Sequence[Any], path: Path) -> None:
    """The label's graphics as one PNG (several are stacked top to bottom, in the order they were sent)."""
    from PIL import Image

    width = max(image.width for image in images)
    page = Image.new("1", (width, sum(image.height for image in images)), 1)
    y = 0
    for image in images:
        page.paste(image.convert("1"), (0, y))
        y += image.height
    page.save(path)


def decode_graphics(module: str, function: str, data: bytes, image: Path | None = None) -> dict[str, Any]:
    """What the job's graphics hold: ``attendee_id`` from the first QR code (None without zxing-cpp), the PNG
    written to ``image`` (its file name as ``image``), or the reason the data could not be read."""
    try:
        images = getattr(importlib.import_module(module), function)(data)
    except Exception as exc:  # noqa: BLE001 - a malformed job from a client is logged as such, never fatal
        return {"attendee_id": None, "decode_error": f"{type(exc).__name__}: {exc}"}
    result: dict[str, Any] = {"attendee_id": None, "graphics": len(images)}
    if image is not None and images:
        try:
            save_label(images, image)
            result["image"] = image.name
        except OSError as exc:
            result["image_error"] = f"{image}: {exc.strerror or exc}"
    if qr_reader() is not None:
        codes = qr_texts(images)
        result["attendee_id"] = codes[0] if codes else None
    return result
