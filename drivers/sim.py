"""An in-process simulated printer for rehearsals, the demo and the agent's tests.

It behaves like a buffered label printer: a job sent while the printer is faulted waits in its buffer and comes
out when the fault clears, unless it was cancelled. Faults are switched at run time through a small JSON control
file (``{"fault": "media_out"}``), so a rehearsal or a test can jam the printer of an agent running in another
process. Every badge that physically comes out is appended to the print log (JSON lines), which is what tests and
the demo judge "printed once" by.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
import unicodedata
from pathlib import Path
from typing import Any

from drivers.base import Badge, DeviceState, DeviceStatus, Driver, DriverError, Outcome, PrintResult, RenderError

#: Faults the control file may switch on, and the status each one shows.
FAULTS: dict[str, tuple[DeviceState, str]] = {
    "media_out": (DeviceState.MEDIA_OUT, "out of labels"),
    "head_open": (DeviceState.HEAD_OPEN, "print head open"),
    "jam": (DeviceState.JAM, "label jam"),
    "paused": (DeviceState.PAUSED, "paused at the printer"),
    "power_off": (DeviceState.OFFLINE, "no answer: printer off or unplugged"),
    "no_answer": (DeviceState.UNKNOWN, "printer accepts data but does not answer status"),
    # A call into the driver that never returns while the fault lasts (a wedged USB stack, a printer that holds the
    # link open and says nothing): what the agent's watchdog exists for.
    "hung": (DeviceState.UNKNOWN, "driver call does not return"),
}

_SLICE = 0.02  # how often a print in progress looks at the control file


class SimControl:
    """Reads (and, for rehearsals, writes) the fault switch of one simulated printer."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._cached: tuple[float, dict[str, Any]] = (-1.0, {})

    def read(self) -> dict[str, Any]:
        if self.path is None:
            return {}
        try:
            st = self.path.stat()
            mtime = float(st.st_mtime_ns + st.st_ino)
        except FileNotFoundError:
            return {}
        if mtime != self._cached[0]:
            try:
                data = json.loads(self.path.read_text(encoding="utf-8") or "{}")
            except (OSError, ValueError):
                data = {}  # a half-written control file reads as "no fault" until it is whole
            self._cached = (mtime, data if isinstance(data, dict) else {})
        return self._cached[1]

    def fails(self, attendee_id: str) -> bool:
        """Badges that jam on the way in (for rehearsing a badge that never prints while others do)."""
        return attendee_id in (self.read().get("fail_attendees") or ())

    def fault(self) -> str | None:
        fault = self.read().get("fault")
        return fault if fault in FAULTS else None

    def set_fault(self, fault: str | None, fail_attendees: list[str] | None = None) -> None:
        if self.path is None:
            raise ValueError("this simulated printer has no control_file")
        if fault is not None and fault not in FAULTS:
            raise ValueError(f"unknown fault {fault!r}; choose from {', '.join(FAULTS)}")
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"fault": fault, "fail_attendees": fail_attendees or []}), encoding="utf-8")
        os.replace(tmp, self.path)


class SimDriver(Driver):
    """A simulated printer: ``print_time`` seconds per badge, faults from the control file."""

    render_is_cheap = True  # one json.dumps

    def __init__(
        self,
        printer_name: str,
        print_time: float,
        control_file: Path | None = None,
        print_log: Path | None = None,
        status_timeout: float = 1.0,
    ) -> None:
        self.printer_name = printer_name
        self.print_time = print_time
        self.control = SimControl(control_file)
        self.print_log = print_log
        self.status_timeout = status_timeout
        self.description = f"simulated printer ({print_time:g} s a badge)"
        self._buffer: list[Badge] = []
        self._printing = False
        self._open = False
        # The driver is its device's one I/O owner (drivers/base.py): a probe never overlaps a badge in progress.
        self._lock = asyncio.Lock()

    async def open(self) -> None:
        if self.control.fault() == "power_off":
            raise DriverError("simulated printer is powered off")
        self._open = True

    async def aclose(self) -> None:
        self._open = False

    def render(self, badge: Badge) -> bytes:
        for field, text in (("name", badge.name), ("company", badge.company), ("role", badge.role)):
            missing = [ch for ch in text if unicodedata.category(ch) == "Cn"]
            if missing:
                codes = ", ".join(f"U+{ord(ch):04X}" for ch in missing[:3])
                raise RenderError(f"{field} has characters no font covers ({codes})")
        # JSON keeps every field data, never a command, whatever characters it holds.
        return json.dumps(badge.__dict__, ensure_ascii=False).encode("utf-8")

    async def probe(self) -> DeviceStatus:
        async with self._lock:
            return await self._probe()

    async def _probe(self) -> DeviceStatus:
        while self.control.fault() == "hung":  # noqa: ASYNC110 - the fault lives in a file another process writes
            await asyncio.sleep(_SLICE)
        fault = self.control.fault()
        if fault is None:
            self._flush_buffer()
            state = DeviceState.PRINTING if self._printing else DeviceState.READY
            return DeviceStatus(state, detail={"buffered": len(self._buffer)})
        if fault == "no_answer":
            await asyncio.sleep(self.status_timeout)  # a real printer that stays silent costs the read timeout
        state, reason = FAULTS[fault]
        return DeviceStatus(state, (reason,), {"buffered": len(self._buffer)})

    async def print(self, data: bytes, badge: Badge, timeout: float) -> PrintResult:
        async with self._lock:
            return await self._print(badge, timeout)

    async def _print(self, badge: Badge, timeout: float) -> PrintResult:
        fault = self.control.fault()
        if fault == "power_off":
            state, reason = FAULTS[fault]
            return PrintResult(
                Outcome.FAILED, f"{reason}: nothing was sent", DeviceStatus(state, (reason,)), sent=False
            )
        if self.control.fails(badge.attendee_id):
            return PrintResult(
                Outcome.FAILED, "label jammed at the feed: nothing printed", DeviceStatus(DeviceState.READY)
            )
        self._buffer.append(badge)
        if fault == "no_answer":
            # It takes the data and prints it, but never says so: only "unknown" is honest.
            await asyncio.sleep(min(timeout, self.print_time + self.status_timeout))
            self._flush_buffer()
            return PrintResult(Outcome.UNKNOWN, "printer did not answer status after the badge was sent")
        if fault is not None:
            # The job waits in the printer's buffer; clearing it is the proof it will never print.
            self._clear()
            state, reason = FAULTS[fault]
            return PrintResult(
                Outcome.FAILED, f"{reason}: badge cancelled before printing", DeviceStatus(state, (reason,))
            )
        self._printing = True
        started = time.time()
        try:
            deadline = time.monotonic() + self.print_time
            # Without a control file no fault can come mid-print: one sleep, not a look every slice (hundreds of
            # simulated printers share one process in bench/scale.py).
            slice_ = _SLICE if self.control.path is not None else self.print_time
            while (left := deadline - time.monotonic()) > 0:
                await asyncio.sleep(min(slice_, left))
                fault = self.control.fault()
                if fault is not None:
                    # The label is half out of the printer: it may be usable, it may not.
                    self._buffer.remove(badge)
                    self._log(badge, complete=False, started=started)
                    state, reason = FAULTS[fault]
                    return PrintResult(Outcome.UNKNOWN, f"{reason} while printing", DeviceStatus(state, (reason,)))
            self._buffer.remove(badge)
            self._log(badge, complete=True, started=started)
            return PrintResult(Outcome.PRINTED, "printer reported the label out", DeviceStatus(DeviceState.READY))
        finally:
            self._printing = False

    async def cancel(self) -> None:
        async with self._lock:
            self._clear()

    def _clear(self) -> None:
        if self.control.fault() == "power_off":
            raise DriverError("printer unreachable: cannot clear its buffer")
        self._buffer.clear()

    def _flush_buffer(self) -> None:
        """A printer whose fault cleared prints what it still holds: the reason cancel() exists."""
        while self._buffer:
            self._log(self._buffer.pop(0), complete=True)

    def _log(self, badge: Badge, complete: bool, started: float | None = None) -> None:
        if self.print_log is None:
            return
        now = time.time()
        entry = {
            "t": now,
            "started": now if started is None else started,  # when the first byte reached the printer
            "printer": self.printer_name,
            "job_id": badge.job_id,
            "attendee_id": badge.attendee_id,
            "name": badge.name,
            "complete": complete,
        }
        with self.print_log.open("a", encoding="utf-8") as log:
            log.write(json.dumps(entry, ensure_ascii=False) + "\n")
