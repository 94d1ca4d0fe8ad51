"""An emulated Zebra: ZPL formats into a buffer, ``~HS``/``~HQES``/``~JA`` and the SGD label counter answered as
the ZPL II guide publishes them. Like a real Zebra it reprints a label interrupted by a fault (``^JZY``, the
default) once the fault clears, unless ``~JA`` cancelled it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from drivers.emulators.core import EmulatedPrinter, Job
from drivers.emulators.decode import decode_graphics
from drivers.languages import zpl_status as zs
from drivers.languages.zpl_text import unescape_field

_TILDE_LEN = {b"~HS": 3, b"~JA": 3, b"~HQ": 5, b"~HI": 3}
_FIELD = re.compile(rb"\^FD(.*?)(?=\^FS|\^XZ|$)", re.S)
_MARKER = re.compile(rb"\^FXjob:([A-Za-z0-9._:@-]+)")
_HQES_BITS = {
    "media_out": 0x00000001,
    "ribbon_out": 0x00000002,
    "head_open": 0x00000004,
    "overheat": 0x00000010,
    "jam": 0x00001000,
    "paused": 0x00010000,
}


class ZplPrinter(EmulatedPrinter):
    kind = "zpl"

    def __init__(
        self, *args: Any, label_counter: bool = True, counter_after_status: bool = True, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.label_counter = label_counter  # Link-OS printers answer SGD (the counter among it); older ones do not
        #: False: like some firmware, an SGD query that follows ``~HS`` in the same write goes unanswered (asked
        #: alone, it is answered).
        self.counter_after_status = counter_after_status
        self._status_in_write = False
        self.counters_dropped = 0  # SGD queries left unanswered because ~HS came first in the same write
        self.labels_printed = 0
        #: The loaded stock as the printer measured it, in dots (a 4x6 in label at 203 dpi); tests change it.
        self.print_width = 812
        self.label_length = 1218
        # What ~HI and SGD device.unique_id report; tests set hostile values to check what detect shows of them.
        self.model = "ZT410-203dpi"
        self.firmware = "V75.20.01Z"
        self.serial_number = "52J162300042"
        self.reset_parser()

    def reset_parser(self) -> None:
        self._pending = b""
        self._format: bytearray | None = None

    def feed(self, data: bytes) -> None:
        self._status_in_write = False
        buf = self._pending + data
        i = 0
        while i < len(buf):
            if buf[i] == 0x7E:  # "~"
                cmd = buf[i : i + 3].upper()
                if cmd == b"~HQ":
                    cmd = buf[i : i + 5].upper()
                if len(cmd) < _TILDE_LEN.get(cmd[:3], 3):
                    break  # the rest of the command is still on the wire
                # Tilde commands act on arrival, even inside a format: why field data must never carry one.
                self._tilde(cmd)
                i += len(cmd)
            elif self._format is None:
                if buf[i : i + 3].upper() == b"^XA":
                    self._format = bytearray(b"^XA")
                    i += 3
                elif buf.startswith(b"! U1", i):
                    line_end = buf.find(b"\r\n", i)
                    if line_end < 0:
                        break
                    self._sgd(buf[i:line_end])
                    i = line_end + 2
                elif len(buf) - i < 4 and (b"^XA".startswith(buf[i:].upper()) or b"! U1".startswith(buf[i:])):
                    break
                else:
                    i += 1  # bytes between formats are ignored, as the printer does
            else:
                nxt = min((p for p in (buf.find(b"^", i), buf.find(b"~", i)) if p >= 0), default=len(buf))
                if nxt > i:
                    self._format += buf[i:nxt]
                    i = nxt
                    continue
                if buf[i] != 0x5E:
                    continue  # a tilde: handled at the top of the loop
                if len(buf) - i < 3:
                    break
                if buf[i : i + 3].upper() == b"^XZ":
                    self._format += b"^XZ"
                    self.enqueue(self._job(bytes(self._format)))
                    self._format = None
                    i += 3
                else:
                    self._format.append(buf[i])
                    i += 1
        self._pending = buf[i:]

    def _job(self, data: bytes) -> Job:
        marker = _MARKER.search(data)
        return Job(data, marker.group(1).decode() if marker else None)

    def _tilde(self, cmd: bytes) -> None:
        if cmd == b"~HS":
            self.send(zs.format_host_status(self.host_status()))
            self._status_in_write = True
        elif cmd == b"~HI":  # host identification, as a ZT410 answers it; detect reads model and firmware
            self.send(
                f"\x02{self.model},{self.firmware},8,8176KB\x03\r\n".encode("latin-1")
            )  # model,firmware,dots/mm,memory
        elif cmd == b"~HQES":
            fault = self.fault
            self.send(zs.format_hqes(_HQES_BITS.get(fault or "", 0), 0))
        elif cmd == b"~JA":
            self.clear_buffer()

    def _sgd(self, line: bytes) -> None:
        if not self.label_counter:
            return
        if self._status_in_write and not self.counter_after_status:
            self.counters_dropped += 1
            return
        values = {
            b"odometer.total_label_count": self.labels_printed,
            b"device.unique_id": self.serial_number,
            b"ezpl.print_width": self.print_width,
        }
        name = line.partition(b'getvar "')[2].partition(b'"')[0]
        self.send(f'"{values.get(name, "?")}"'.encode())  # a Link-OS printer answers "?" for a name it lacks

    def host_status(self) -> zs.HostStatus:
        fault = self.fault
        started = [j for j in self.buffer if j.started]
        return zs.HostStatus(
            interface=0,
            paper_out=fault == "media_out",
            paused=fault in ("paused", "jam"),  # a Zebra pauses on a jam; ~HS has no jam flag of its own
            label_length=self.label_length,
            formats_in_buffer=len(self.buffer) - len(started),
            buffer_full=False,
            comm_diag_mode=False,
            partial_format=self._format is not None,
            corrupt_ram=False,
            under_temperature=False,
            over_temperature=fault == "overheat",
            function_settings=0,
            head_up=fault == "head_open",
            ribbon_out=fault == "ribbon_out",
            thermal_transfer=False,
            print_mode="2",
            print_width_mode=0,
            label_waiting=False,
            labels_remaining=len(started),
            format_while_printing=True,
            graphics_stored=0,
            password=1234,
            static_ram=False,
        )

    def on_start(self, job: Job) -> None:
        job.started = True

    def on_complete(self, job: Job) -> None:
        self.labels_printed += 1

    def decode(self, job: Job, image: Path | None = None) -> dict[str, Any]:
        texts: list[str] = []
        qr: str | None = None
        for match in _FIELD.finditer(job.data):
            head = job.data[: match.start()]
            field_start = max(head.rfind(b"^FS"), head.upper().rfind(b"^XA"))
            params = head[field_start:].upper()
            text = unescape_field(match.group(1)) if b"^FH" in params else match.group(1).decode("utf-8", "replace")
            if b"^BQ" in params:
                qr = text.split(",", 1)[1] if "," in text else text  # "QA,<data>": error level, then data
            else:
                texts.append(text)
        result: dict[str, Any] = {"texts": texts}
        if b"^GF" in job.data.upper():
            result.update(decode_graphics("drivers.render.zpl", "decode_zpl_graphics", job.data, image))
        if qr is not None:
            result["attendee_id"] = qr
        result.setdefault("attendee_id", None)
        return result
