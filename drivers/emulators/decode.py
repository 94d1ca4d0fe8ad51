"""Reading back what an emulated printer printed: the graphic through the renderer's decoders, the QR code with
zxing-cpp (a decoder someone else wrote, so the round trip proves the badge scans)."""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import Any


def qr_texts(images: Iterable[Any]) -> list[str]:
    zxingcpp = importlib.import_module("zxingcpp")
    found: list[str] = []
    for image in images:
        gray = image.convert("L")
        found += [r.text for r in zxingcpp.read_barcodes(gray) if r.text]
    return found


def decode_graphics(module: str, function: str, data: bytes) -> dict[str, Any]:
    """``attendee_id`` from the first QR code in the job's graphics, or the reason it could not be read."""
    try:
        images = getattr(importlib.import_module(module), function)(data)
        codes = qr_texts(images)
    except Exception as exc:  # noqa: BLE001 - a malformed job from a client is logged as such, never fatal
        return {"attendee_id": None, "decode_error": f"{type(exc).__name__}: {exc}"}
    return {"attendee_id": codes[0] if codes else None, "graphics": len(images)}
