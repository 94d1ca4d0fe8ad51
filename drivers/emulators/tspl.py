"""An emulated TSPL printer (a TSC TDP-247 with 4x6 in labels): command lines into a job, ``PRINT`` queues it;
``<ESC>!?`` answered at once with the status byte of TSC's TSPL/TSPL2 Programming Manual ("printing" while a label
is buffered or under the head, the fault bits while a fault lasts), ``<ESC>!R`` drops what it holds, ``~!T`` names
the model when the printer is ready (faulted, it does not answer). A fault stops the label; the label prints again
when the fault clears, unless the host reset the printer."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from drivers.emulators.core import EmulatedPrinter, Job
from drivers.emulators.decode import decode_graphics
from drivers.languages import tspl_status as ts

_BITMAP = re.compile(rb"BITMAP\s*[0-9]+\s*,\s*[0-9]+\s*,\s*([0-9]+)\s*,\s*([0-9]+)\s*,\s*[0-9]\s*,", re.I)
_PRINT = re.compile(rb"\s*PRINT\s*[0-9]", re.I)


class TsplPrinter(EmulatedPrinter):
    kind = "tspl"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: What ``~!T`` answers; tests change it.
        self.model = "TDP-247"
        self.reset_parser()

    def reset_parser(self) -> None:
        self._pending = b""
        self._job = bytearray()

    def feed(self, data: bytes) -> None:
        buf = self._pending + data
        i = 0
        while i < len(buf):
            if buf.startswith(b"\x1b!", i):  # immediate commands, answered even in error
                if len(buf) - i < 3:
                    break
                op = buf[i + 2]
                if op == ord("?"):
                    printing = bool(self.buffer) or self.printing is not None
                    self.send(bytes([ts.format_status(self.fault if self.blocked else None, printing)]))
                elif op == ord("R"):
                    self.clear_buffer()
                i += 3
                continue
            if (bitmap := _BITMAP.match(buf, i)) is not None:
                end = bitmap.end() + int(bitmap.group(1)) * int(bitmap.group(2))
                if end > len(buf):
                    break
                self._job += buf[i:end]
                i = end
                continue
            newline = buf.find(b"\n", i)
            if newline < 0:
                break  # the rest of the line (or of an immediate command) is still on the wire
            line = buf[i : newline + 1]
            i = newline + 1
            if line.startswith(b"~!T"):
                if self.fault is None:
                    self.send(self.model.encode("ascii") + b"\r")
                continue
            self._job += line
            if _PRINT.match(line):
                self.enqueue(Job(bytes(self._job)))
                self._job = bytearray()
        self._pending = buf[i:]

    def decode(self, job: Job, image: Path | None = None) -> dict[str, Any]:
        return {"texts": [], **decode_graphics("drivers.render.tspl", "decode_tspl", job.data, image)}
