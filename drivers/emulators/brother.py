"""An emulated Brother QL (QL-820NWB): raster jobs into a buffer, the 32-byte status on ``ESC i S``, and the
unprompted notices a real QL sends: phase change to printing, printing completed, phase change back to waiting,
and "error occurred" with the error bits when a job meets a fault. ``ESC @`` (after the invalidate NULs) drops
what the printer holds. A fault in the middle of a label loses that label (the QL does not reprint it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from drivers.emulators.core import EmulatedPrinter, Job
from drivers.emulators.decode import decode_graphics
from drivers.languages import brother_status as bs

# Parameter bytes of the commands that carry no raster (Raster Command Reference).
_ARGS: dict[bytes, int] = {
    b"\x1bia": 1,
    b"\x1bi!": 1,
    b"\x1biz": 10,
    b"\x1biM": 1,
    b"\x1biA": 1,
    b"\x1biK": 1,
    b"\x1bid": 2,
    b"\x1biUw\x01": 127,
    b"\x1biUJ": 14,
    b"M": 1,
}
_ERRORS = {  # fault -> (error information 1, error information 2)
    "media_out": (0x01, 0x00),
    "jam": (0x04, 0x00),
    "head_open": (0x00, 0x10),
    "overheat": (0x80, 0x00),
    "ribbon_out": (0x00, 0x01),
}


class BrotherPrinter(EmulatedPrinter):
    kind = "brother_ql"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: The loaded roll as the status reports it: (width mm, die-cut, label length mm; 0 for endless tape).
        #: Tests swap it to play a volunteer loading the wrong roll and then the right one.
        self.roll: tuple[int, bool, int] = (62, False, 0)
        self.reset_parser()

    def reset_parser(self) -> None:
        self._pending = b""
        self._job = bytearray()

    def _status(self, status_type: int, phase: int = bs.PHASE_WAITING) -> bytes:
        err1, err2 = _ERRORS.get(self.fault or "", (0, 0))
        width, die_cut, length = self.roll
        media = 0x00 if self.fault == "media_out" else (0x0B if die_cut else 0x0A)
        # A QL has no pause button; what holds its jobs without an error is head cooling, which it notifies.
        notification = {"head_open": 0x01, "paused": 0x03}.get(self.fault or "", 0x00)
        return bs.format_status(
            status_type=status_type,
            phase=phase,
            error_1=err1,
            error_2=err2,
            media_type=media,
            media_width_mm=width,
            media_length_mm=length,
            notification=notification,
        )

    def feed(self, data: bytes) -> None:
        buf = self._pending + data
        i = 0
        while i < len(buf):
            byte = buf[i]
            if byte == 0x00 and not self._job:
                i += 1
            elif buf.startswith(b"\x1biS", i):
                self.send(self._status(bs.TYPE_REPLY, bs.PHASE_PRINTING if self.printing else bs.PHASE_WAITING))
                i += 3
            elif buf.startswith(b"\x1b@", i):
                self.clear_buffer()  # initialize: what the host sends to cancel
                i += 2
            elif byte in (0x67, 0x77):  # g / w: a raster line with its length byte
                if len(buf) - i < 3 or len(buf) - i < 3 + buf[i + 2]:
                    break
                self._job += buf[i : i + 3 + buf[i + 2]]
                i += 3 + buf[i + 2]
            elif byte in (0x0C, 0x1A):  # print (page) / print with feed (last page)
                self._job += bytes([byte])
                self.enqueue(Job(b"\x1b@" + bytes(self._job)))
                self._job = bytearray()
                i += 1
            elif byte == 0x5A:  # Z: a blank raster line
                self._job.append(byte)
                i += 1
            elif byte == 0x00:  # NULs inside a job: the invalidate padding of a cancel
                i += 1
            else:
                prefix = next((p for p in _ARGS if buf.startswith(p, i)), None)
                if prefix is None:
                    if byte == 0x1B and len(buf) - i < 5:
                        break  # the rest of an ESC i command is still on the wire
                    i += 1  # unknown byte: a real QL would flag a transmission error; we skip it
                    continue
                end = i + len(prefix) + _ARGS[prefix]
                if end > len(buf):
                    break
                self._job += buf[i:end]
                i = end
        self._pending = buf[i:]

    def on_queued(self, job: Job) -> None:
        if self.blocked and self.fault not in ("paused", "power_off"):
            self.tell(job, self._status(bs.TYPE_ERROR))

    def on_start(self, job: Job) -> None:
        self.tell(job, self._status(bs.TYPE_PHASE, bs.PHASE_PRINTING))

    def on_complete(self, job: Job) -> None:
        self.tell(job, self._status(bs.TYPE_COMPLETED, bs.PHASE_PRINTING))
        self.tell(job, self._status(bs.TYPE_PHASE, bs.PHASE_WAITING))

    def on_interrupted(self, job: Job, fault: str) -> bool:
        self.tell(job, self._status(bs.TYPE_ERROR, bs.PHASE_PRINTING))
        return False

    def decode(self, job: Job, image: Path | None = None) -> dict[str, Any]:
        return {"texts": [], **decode_graphics("drivers.render.brother", "decode_brother_raster", job.data, image)}
