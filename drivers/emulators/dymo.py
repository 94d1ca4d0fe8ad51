"""Emulated DYMO LabelWriters: a 450 (4xx raster, one status byte) and a 550 (job header and trailer, 32-byte status).

The 450 takes the raster commands of the 400 Series Technical Reference Manual (``ESC B/D/L/Q/f``, ``SYN`` and
``ETB`` lines, ``ESC E``/``ESC G`` form feeds), answers ``ESC A`` at once with its status byte ("top of form" clear
while a label is buffered or being fed, set once it is at the tear bar; paper out, jam and the error bit while a
fault lasts) and drops what it holds on ``ESC @``. The 550 takes ``ESC s`` ... ``ESC Q`` jobs and answers
``ESC A n`` with the 32-byte status: print status, the job id it prints, the main bay (roll present, low, empty,
jammed, refused) and the labels left on the roll. Like a LabelWriter that runs out of labels half way, a fault
stops the label; its data waits and prints when the fault clears, unless the host reset the printer.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

from drivers.emulators.core import INCOMPLETE, CommandStream, Job
from drivers.emulators.decode import decode_graphics
from drivers.languages import dymo_status as ds

_ESC, _SYN, _ETB = 0x1B, 0x16, 0x17
_ARGS_4XX: dict[int, int] = {
    **dict.fromkeys(b"hicdeg@*AEGyz", 0),
    **dict.fromkeys(b"BDq", 1),
    **dict.fromkeys(b"LQf", 2),
}
_ARGS_550: dict[int, int] = {
    **dict.fromkeys(b"hieEGQ@$", 0),
    **dict.fromkeys(b"ACTo", 1),
    **dict.fromkeys(b"Ln", 2),
    ord("s"): 4,
    ord("M"): 8,
}


def _etb_size(buf: bytes, i: int, dots: int) -> int:
    """Bytes of the ``ETB`` line's runs starting at ``i``, or INCOMPLETE."""
    j, seen = i, 0
    while seen < dots:
        if j >= len(buf):
            return INCOMPLETE
        seen += (buf[j] & 0x7F) + 1
        j += 1
    return j - i


class DymoPrinter(CommandStream):
    kind = "dymo"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.reset_parser()

    def reset_parser(self) -> None:
        self._pending = b""
        self._job = bytearray()
        self._lines = 0
        self._per_line = 84

    @property
    def top_of_form(self) -> bool:
        return not self.buffer and self.printing is None

    def _command(self, buf: bytes, i: int) -> int:
        byte = buf[i]
        if byte == _SYN:
            if len(buf) - i < 1 + self._per_line:
                return INCOMPLETE
            return self._line(buf, i, 1 + self._per_line)
        if byte == _ETB:
            size = _etb_size(buf, i + 1, self._per_line * 8)
            return INCOMPLETE if size == INCOMPLETE else self._line(buf, i, 1 + size)
        if byte != _ESC:
            return 1  # "Any other characters are ignored"
        if len(buf) - i < 2:
            return INCOMPLETE
        op = buf[i + 1]
        if op == _ESC:
            return 1  # the resync run
        if op not in _ARGS_4XX:
            return 2  # a command this model does not know: skipped, as the printer does
        size = 2 + _ARGS_4XX[op]
        if len(buf) - i < size:
            return INCOMPLETE
        if op == ord("A"):
            self.send(bytes([ds.format_4xx(self.fault if self.blocked else None, self.top_of_form)]))
            return size
        if op == ord("@"):
            self.clear_buffer()
            return size
        if op == ord("D"):
            self._per_line = buf[i + 2] or 84
        self._job += buf[i : i + size]
        if op in b"EG" and self._lines:
            self.enqueue(Job(bytes(self._job)))
            self._job, self._lines = bytearray(), 0
        return size

    def _line(self, buf: bytes, i: int, size: int) -> int:
        self._job += buf[i : i + size]
        self._lines += 1
        return size

    def decode(self, job: Job, image: Path | None = None) -> dict[str, Any]:
        return {"texts": [], **decode_graphics("drivers.render.dymo", "decode_dymo_4xx", job.data, image)}


class Dymo550Printer(CommandStream):
    kind = "dymo550"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: Labels left on the roll, as the roll's chip tells the printer; tests set it.
        self.labels_remaining = 220
        #: A roll the printer refuses (not a DYMO roll): it holds every job until a roll it accepts is in.
        self.refused_roll = False
        self.reset_parser()

    def reset_parser(self) -> None:
        self._pending = b""
        self._job = bytearray()
        self._job_id = 0
        self._label_index = 0

    @property
    def blocked(self) -> bool:
        return super().blocked or self.refused_roll

    def _current(self) -> Job | None:
        return self.printing or (self.buffer[0] if self.buffer else None)

    def _command(self, buf: bytes, i: int) -> int:
        if buf[i] != _ESC:
            self._job.append(buf[i])  # label data outside ESC D is not expected; kept for the decoder to judge
            return 1
        if len(buf) - i < 2:
            return INCOMPLETE
        op = buf[i + 1]
        if op == ord("D"):
            if len(buf) - i < 12:
                return INCOMPLETE
            lines, dots = struct.unpack("<II", buf[i + 4 : i + 12])
            size = 12 + int(lines) * int(dots) // 8
            if len(buf) - i < size:
                return INCOMPLETE
            self._job += buf[i : i + size]
            return size
        if op == _ESC:
            return 1  # a resync run, as the 4xx series takes it
        if op not in _ARGS_550:
            return 2
        size = 2 + _ARGS_550[op]
        if len(buf) - i < size:
            return INCOMPLETE
        if op == ord("A"):
            job = self._current()
            fault = self.fault if self.blocked else None
            self.send(
                ds.format_550(
                    fault=fault,
                    printing=job is not None,
                    job_id=job.extra["job_id"] if job is not None else 0,
                    label_index=self._label_index,
                    labels_remaining=self.labels_remaining,
                    refused_roll=self.refused_roll,
                )
            )
            return size
        if op == ord("@"):
            self.clear_buffer()
            return size
        if op == ord("s"):
            self._job = bytearray()
            self._job_id = int(struct.unpack("<I", buf[i + 2 : i + 6])[0])
        elif op == ord("n"):
            self._label_index = int(struct.unpack("<H", buf[i + 2 : i + 4])[0])
        self._job += buf[i : i + size]
        if op == ord("Q") and b"\x1bD" in self._job:
            self.enqueue(Job(bytes(self._job), extra={"job_id": self._job_id}))
            self._job = bytearray()
        return size

    def on_complete(self, job: Job) -> None:
        self.labels_remaining = max(0, self.labels_remaining - 1)

    def decode(self, job: Job, image: Path | None = None) -> dict[str, Any]:
        return {"texts": [], **decode_graphics("drivers.render.dymo", "decode_dymo_550", job.data, image)}
