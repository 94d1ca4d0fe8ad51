"""An emulated ESC/POS receipt printer (Epson TM style): data into a receive buffer, a badge ends at ``GS V``;
real-time commands (``DLE EOT``, ``DLE DC4``, ``DLE ENQ``) act on arrival even while offline; ``GS a`` turns on
Automatic Status Back; ``GS ( H`` fn=48 is answered when everything before it has printed. ``GS I`` (model,
firmware, maker, serial number) and ``GS ( E`` fn=6 a=3 (paper width) are answered as an Epson TM-T88VI answers
them, in turn with the data before them (an offline printer answers once it is back). A fault half way through a
badge stops the paper; the rest prints when the fault clears, unless ``DLE DC4`` fn=8 cleared it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from drivers.emulators.core import INCOMPLETE, CommandStream, Job
from drivers.emulators.decode import decode_graphics
from drivers.languages import escpos_info as ei
from drivers.languages import escpos_status as es

_ESC_ARGS = {**dict.fromkeys(b"!-EGMatR{3dJUV=r ", 1), **dict.fromkeys(b"2@<", 0), **dict.fromkeys(b"$\\", 2)}
_ESC_ARGS |= {ord("p"): 3, ord("c"): 2}
_GS_ARGS = {**dict.fromkeys(b"!BHafhwrb/", 1), **dict.fromkeys(b"LWP", 2)}
#: GS I n, n = 1..3: one-byte IDs (a TM-T88VI's model ID, type ID: autocutter, no multi-byte fonts; ROM version).
_ONE_BYTE_IDS = {1: 0x20, 2: 0x02, 3: 0x30, 49: 0x20, 50: 0x02, 51: 0x30}


class EscposPrinter(CommandStream):
    kind = "escpos"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.asb = False
        #: What GS I and GS ( E answer; tests change them (a 58 mm printer, a clone that answers none: None).
        self.info: dict[int, str] | None = {
            ei.MODEL: "TM-T88VI",
            ei.FIRMWARE: "30.02 ESC/POS",
            ei.MAKER: "EPSON",
            ei.SERIAL: "X5Y9012345",
        }
        self.paper_mm: int | None = 80
        self.reset_parser()

    def reset_parser(self) -> None:
        self._pending = b""
        self._job = bytearray()

    def _command(self, buf: bytes, i: int) -> int:
        """Act on the command at ``i``; return its length, or INCOMPLETE when more bytes are needed."""
        left = len(buf) - i
        byte = buf[i]
        if byte == 0x10:  # DLE: real-time, never buffered
            if left < 3:
                return INCOMPLETE
            n = buf[i + 1]
            if n == 0x04:  # DLE EOT n
                if buf[i + 2] in (1, 2, 3, 4):
                    self.send(bytes([es.format_realtime(buf[i + 2], self.fault)]))
                return 3 if buf[i + 2] in (1, 2, 3, 4) else 4
            if n == 0x14:  # DLE DC4 fn
                fn = buf[i + 2]
                size = {1: 5, 2: 5, 7: 4, 8: 10}.get(fn, 3)
                if left < size:
                    return INCOMPLETE
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
                return INCOMPLETE
            op = buf[i + 1]
            if op == 0x28:  # GS ( x pL pH ...
                if left < 5:
                    return INCOMPLETE
                size = 5 + buf[i + 3] + (buf[i + 4] << 8)
                if left < size:
                    return INCOMPLETE
                if buf[i + 2] == 0x48 and buf[i + 5] == 0x30:  # GS ( H fn=48: process ID
                    self._answer_in_turn(b"\x37\x22" + buf[i + 7 : i + 11] + b"\x00")
                    return size
                if buf[i : i + size] == ei.PAPER_WIDTH_REQUEST:  # GS ( E fn=6 a=3
                    if self.paper_mm is not None:
                        self._answer_in_turn(ei.format_paper_width(self.paper_mm))
                    return size
                return self._data(buf, i, size)
            if op == 0x49:  # GS I n: transmit printer ID
                if left < 3:
                    return INCOMPLETE
                n = buf[i + 2]
                if self.info is not None and n in self.info:
                    self._answer_in_turn(ei.format_info(self.info[n]))
                elif self.info is not None and n in _ONE_BYTE_IDS:
                    self._answer_in_turn(bytes([_ONE_BYTE_IDS[n]]))
                return 3
            if op == 0x76:  # GS v 0 m xL xH yL yH data
                if left < 8:
                    return INCOMPLETE
                size = 8 + (buf[i + 4] + (buf[i + 5] << 8)) * (buf[i + 6] + (buf[i + 7] << 8))
                return INCOMPLETE if left < size else self._data(buf, i, size)
            if op == 0x56:  # GS V m [n]: cut, the end of a badge
                if left < 3:
                    return INCOMPLETE
                size = 4 if buf[i + 2] >= 65 else 3
                if left < size:
                    return INCOMPLETE
                self._data(buf, i, size)
                self._close_job()
                return size
            if op == 0x61:  # GS a n: Automatic Status Back
                if left < 3:
                    return INCOMPLETE
                self.asb = buf[i + 2] != 0
                if self.asb:
                    self.send(es.format_asb(self.fault))
                return 3
            size = 2 + _GS_ARGS.get(op, 0)
            return INCOMPLETE if left < size else self._data(buf, i, size)
        if byte == 0x1B:  # ESC
            if left < 2:
                return INCOMPLETE
            size = 2 + _ESC_ARGS.get(buf[i + 1], 0)
            return INCOMPLETE if left < size else self._data(buf, i, size)
        return self._data(buf, i, 1)

    def _data(self, buf: bytes, i: int, size: int) -> int:
        self._job += buf[i : i + size]
        return size

    def _close_job(self) -> None:
        if self._job.strip(b"\x1b@"):
            self.enqueue(Job(bytes(self._job)))
        self._job = bytearray()

    def _answer_in_turn(self, reply: bytes) -> None:
        """A buffered command's answer: sent once everything received before it has been processed."""
        self._close_job()
        self.enqueue(Job(b"", marker=None, zero_time=True, extra={"reply": reply}))

    def on_complete(self, job: Job) -> None:
        if job.zero_time:
            self.tell(job, job.extra["reply"])

    def decode(self, job: Job, image: Path | None = None) -> dict[str, Any]:
        return {"texts": [], **decode_graphics("drivers.render.escpos", "decode_escpos_raster", job.data, image)}
