"""TSPL status (TSC's TSPL/TSPL2 Programming Manual, "Status Polling Commands").

``<ESC>!?`` is answered at once, "even in the event of printer error", with one byte: bit 0 head opened, bit 1
paper jam, bit 2 out of paper, bit 3 out of ribbon, bit 4 pause, bit 5 printing, bit 6 cover opened, bit 7
environment temperature over range; 00 is "Normal" (ready). ``~!T`` is answered with the model name, but only
when the printer is ready ("~ ... returns the printer status only when the printer is ready"). ``<ESC>!R`` resets
the printer: what it holds is dropped.
"""

from __future__ import annotations

from drivers.base import DeviceState, DeviceStatus

STATUS_REQUEST = b"\x1b!?"
MODEL_REQUEST = b"~!T\r\n"
RESET = b"\x1b!R"

HEAD_OPEN, PAPER_JAM, PAPER_OUT, RIBBON_OUT, PAUSE, PRINTING, COVER_OPEN, TEMPERATURE = (1 << n for n in range(8))

_BITS: tuple[tuple[int, DeviceState, str], ...] = (
    (HEAD_OPEN, DeviceState.HEAD_OPEN, "print head open"),
    (COVER_OPEN, DeviceState.HEAD_OPEN, "cover open"),
    (PAPER_OUT, DeviceState.MEDIA_OUT, "out of labels"),
    (PAPER_JAM, DeviceState.JAM, "label jam"),
    (RIBBON_OUT, DeviceState.RIBBON_OUT, "out of ribbon"),
    (TEMPERATURE, DeviceState.OVERHEAT, "temperature out of range"),
    (PAUSE, DeviceState.PAUSED, "paused at the printer"),
)


def parse_status(byte: int) -> DeviceStatus:
    detail: dict[str, object] = {"status_byte": f"0x{byte:02x}"}
    faults = [(state, why) for bit, state, why in _BITS if byte & bit]
    if faults:
        return DeviceStatus(faults[0][0], tuple(why for _, why in faults), detail)
    if byte & PRINTING:
        return DeviceStatus(DeviceState.PRINTING, (), detail)
    return DeviceStatus(DeviceState.READY, (), detail)


def format_status(fault: str | None, printing: bool) -> int:
    """The byte a TSPL printer with ``fault`` answers to ``<ESC>!?`` (the emulator's side)."""
    bits = {
        "head_open": HEAD_OPEN,
        "jam": PAPER_JAM,
        "media_out": PAPER_OUT,
        "ribbon_out": RIBBON_OUT,
        "paused": PAUSE,
        "overheat": TEMPERATURE,
    }
    return bits.get(fault or "", 0) | (PRINTING if printing else 0)


def parse_model(reply: bytes) -> str | None:
    """The model name of a ``~!T`` reply (ended by CR), or None when it is not printable text."""
    text = reply.split(b"\r")[0].strip()
    if not text or any(not 0x20 <= b < 0x7F for b in text):
        return None
    return text.decode("ascii")
