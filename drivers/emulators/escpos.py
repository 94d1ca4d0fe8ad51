"""An emulated ESC/POS receipt printer (Epson TM style): data into a receive buffer, a badge ends at ``GS V``;
real-time commands (``DLE EOT``, ``DLE DC4``, ``DLE ENQ``) act on arrival even while offline; ``GS a`` turns on
Automatic Status Back; ``GS ( H`` fn=48 is answered when everything before it has printed. A fault half way
through a badge stops the paper; the rest prints when the fault clears, unless ``DLE DC4`` fn=8 cleared it."""

from __future__ import annotations

from typing import Any

from drivers.emulators.core import EmulatedPrinter, Job
from drivers.emulators.decode import decode_graphics
from drivers.languages import escpos_status as es

_ESC_ARGS = {**dict.fromkeys(b"!-EGMatR{3dJUV=r ", 1), **dict.fromkeys(b"2@<", 0), **dict.fromkeys(b"$\\", 2)}
_ESC_ARGS |= {ord("p"): 3, ord("c"): 2}
_GS_ARGS = {**dict.fromkeys(b"!BHafhwrIb/", 1), **dict.fromkeys(b"LWP", 2)}
_INCOMPLETE = -1


class EscposPrinter(EmulatedPrinter):
    kind = "escpos"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.asb = False
        self.reset_parser()

    def reset_parser(self) -> None:
        self._pending = b""
        self._job = bytearray()

    def feed(self, data: bytes) -> None:
        buf = self._pending + data
        i = 0
        while i < len(buf):
            size = self._command(buf, i)
            if size == _INCOMPLETE:
                break
            i += size
        self._pending = buf[i:]

    def _command(self, buf: bytes, i: int) -> int:
        """Act on the command at ``i``; return its length, or _INCOMPLETE when more bytes are needed."""
        left = len(buf) - i
        byte = buf[i]
        if byte == 0x10:  # DLE: real-time, never buffered
            if left < 3:
                return _INCOMPLETE
            n = buf[i + 1]
            if n == 0x04:  # DLE EOT n
                if buf[i + 2] in (1, 2, 3, 4):
                    self.send(bytes([es.format_realtime(buf[i + 2], self.fault)]))
                return 3 if buf[i + 2] in (1, 2, 3, 4) else 4
            if n == 0x14:  # DLE DC4 fn
                fn = buf[i + 2]
                size = {1: 5, 2: 5, 7: 4, 8: 10}.get(fn, 3)
                if left < size:
                    return _INCOMPLETE
                if fn == 8 and buf[i + 3 : i + 10] == es.CLEAR_BUFFERS[3:]:
                    self.clear_buffer()
                    self.send(es.CLEAR_RESPONSE)
                elif fn == 7:
                    self.send(es.format_asb(self.fault))
                return size
            if n == 0x05:  # DLE ENQ n: 2 = recover and clear the buffers
                if buf[i + 2] == 2:
                    self.clear_buffer()
                return 3
            return self._data(buf, i, 1)
        if byte == 0x1D:  # GS
            if left < 2:
                return _INCOMPLETE
            op = buf[i + 1]
            if op == 0x28:  # GS ( x pL pH ...
                if left < 5:
                    return _INCOMPLETE
                size = 5 + buf[i + 3] + (buf[i + 4] << 8)
                if left < size:
                    return _INCOMPLETE
                if buf[i + 2] == 0x48 and buf[i + 5] == 0x30:  # GS ( H fn=48: process ID
                    self._close_job()
                    self.enqueue(Job(b"", marker=None, zero_time=True, extra={"process_id": buf[i + 7 : i + 11]}))
                    return size
                return self._data(buf, i, size)
            if op == 0x76:  # GS v 0 m xL xH yL yH data
                if left < 8:
                    return _INCOMPLETE
                size = 8 + (buf[i + 4] + (buf[i + 5] << 8)) * (buf[i + 6] + (buf[i + 7] << 8))
                return _INCOMPLETE if left < size else self._data(buf, i, size)
            if op == 0x56:  # GS V m [n]: cut, the end of a badge
                if left < 3:
                    return _INCOMPLETE
                size = 4 if buf[i + 2] >= 65 else 3
                if left < size:
                    return _INCOMPLETE
                self._data(buf, i, size)
                self._close_job()
                return size
            if op == 0x61:  # GS a n: Automatic Status Back
                if left < 3:
                    return _INCOMPLETE
                self.asb = buf[i + 2] != 0
                if self.asb:
                    self.send(es.format_asb(self.fault))
                return 3
            size = 2 + _GS_ARGS.get(op, 0)
            return _INCOMPLETE if left < size else self._data(buf, i, size)
        if byte == 0x1B:  # ESC
            if left < 2:
                return _INCOMPLETE
            size = 2 + _ESC_ARGS.get(buf[i + 1], 0)
            return _INCOMPLETE if left < size else self._data(buf, i, size)
        return self._data(buf, i, 1)

    def _data(self, buf: bytes, i: int, size: int) -> int:
        self._job += buf[i : i + size]
        return size

    def _close_job(self) -> None:
        if self._job.strip(b"\x1b@"):
            self.enqueue(Job(bytes(self._job)))
        self._job = bytearray()

    def on_complete(self, job: Job) -> None:
        if job.zero_time:
            self.send(b"\x37\x22" + job.extra["process_id"] + b"\x00")

    def decode(self, job: Job) -> dict[str, Any]:
        return {"texts": [], **decode_graphics("drivers.render.escpos", "decode_escpos_raster", job.data)}
