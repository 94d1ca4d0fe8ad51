"""The part every emulated printer shares: a receive buffer, a print engine with a print time, run-time faults,
and a print log of what physically came out.

A job sent while the printer is faulted waits in the buffer and prints when the fault clears, unless the host
cancels it: exactly the behaviour that makes a driver's cancel necessary. Faults come from an in-process call
(:meth:`EmulatedPrinter.set_fault`) or from the JSON control file of ``drivers.sim`` (``{"fault": "media_out"}``),
so a rehearsal can jam a printer served by another process. ``power_off`` drops the links and the buffer (RAM);
``no_answer`` takes data and prints it but never replies.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import functools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from drivers.sim import SimControl

FAULTS = ("media_out", "head_open", "ribbon_out", "jam", "overheat", "paused", "power_off", "no_answer")
SLICE = 0.01  # how often the print engine looks at the fault switch

Reply = Callable[[bytes], None]


@dataclass
class Job:
    """One badge (or one marker) in the printer's buffer."""

    data: bytes
    marker: str | None = None
    started: bool = False  # a label of it is (or was, before a fault) under the print head
    zero_time: bool = False  # a marker that "prints" instantly (ESC/POS process-ID requests)
    extra: dict[str, Any] = field(default_factory=dict)
    #: The link that sent the job: what the printer says about it unprompted (started, completed, failed) goes
    #: there, not to whichever host spoke last (set by :meth:`EmulatedPrinter.enqueue`).
    link: Reply | None = None


class EmulatedPrinter(abc.ABC):
    kind = ""

    def __init__(
        self,
        name: str = "emulator",
        *,
        print_time: float = 0.2,
        control_file: Path | None = None,
        print_log: Path | None = None,
        read_back: bool = True,
    ) -> None:
        self.name = name
        self.print_time = print_time
        self.control = SimControl(control_file)
        self.print_log = print_log
        #: Decode each label for the log (its QR code, its texts). It costs the emulator 10-20 ms of CPU a label,
        #: time a real printer does not spend: timing benches turn it off (bench/printers.py).
        self.read_back = read_back
        self.log: list[dict[str, Any]] = []  # the same entries as the print log file, for tests
        self._labels: int | None = None  # labels in the print log, counted at the first one
        self.buffer: list[Job] = []
        self.printing: Job | None = None
        self.received = bytearray()  # every byte that reached the printer, for tests
        self._fault: str | None = None
        self._reply: Reply = _drop
        self._task: asyncio.Task[None] | None = None
        self._was_off = False
        self._queued = asyncio.Event()  # a real engine starts a buffered label at once, not at its next look

    # -- fault switch -------------------------------------------------------------------------------------------
    @property
    def fault(self) -> str | None:
        if self._fault is not None:
            return self._fault
        fault = self.control.read().get("fault")
        return fault if fault in FAULTS else None

    def set_fault(self, fault: str | None) -> None:
        if fault is not None and fault not in FAULTS:
            raise ValueError(f"unknown fault {fault!r}; choose from {', '.join(FAULTS)}")
        self._fault = fault

    @property
    def blocked(self) -> bool:
        """True while the engine cannot print (the buffer holds its jobs)."""
        return self.fault not in (None, "no_answer")

    # -- data from the host -------------------------------------------------------------------------------------
    def receive(self, data: bytes, reply: Reply) -> None:
        """Bytes from one host link; ``reply`` sends bytes back on the same link."""
        fault = self.fault
        if fault == "power_off":
            return
        self._reply = _drop if fault == "no_answer" else reply
        self.received += data
        self.feed(data)

    def send(self, data: bytes) -> None:
        """Answer the host whose bytes are being read (a status reply goes to the host that asked)."""
        if self.fault not in ("power_off", "no_answer"):
            self._reply(data)

    def tell(self, job: Job, data: bytes) -> None:
        """Say something about ``job`` unprompted, to the host that sent it. Another host's status request in the
        meantime must not divert it: that host would read a notice it never asked for, and the sender would wait
        for a "printing completed" that went elsewhere."""
        if self.fault not in ("power_off", "no_answer"):
            (job.link or self._reply)(data)

    @abc.abstractmethod
    def feed(self, data: bytes) -> None:
        """Parse the language: answer status at once, queue jobs with :meth:`enqueue`."""

    def enqueue(self, job: Job) -> None:
        if job.link is None:
            job.link = self._reply
        self.buffer.append(job)
        self._queued.set()
        self.on_queued(job)

    def clear_buffer(self) -> int:
        """What a cancel command does: every job not yet out is dropped (a label under the head stops)."""
        dropped = len(self.buffer)
        self.buffer.clear()
        self.reset_parser()
        return dropped

    def reset_parser(self) -> None:
        """Forget a half-received job (cancel, power loss)."""
        return None

    # -- hooks for the languages ----------------------------------------------------------------------------------
    def on_queued(self, job: Job) -> None:
        return None

    def on_start(self, job: Job) -> None:
        return None

    def on_complete(self, job: Job) -> None:
        return None

    def on_interrupted(self, job: Job, fault: str) -> bool:
        """A fault stopped a label half way; return True to keep the job for a reprint when the fault clears."""
        return True

    @abc.abstractmethod
    def decode(self, job: Job, image: Path | None = None) -> dict[str, Any]:
        """``attendee_id`` (from the QR code) and ``texts`` of what a job prints, for the print log; with ``image``,
        its graphics are written there as a PNG too."""

    # -- the print engine ---------------------------------------------------------------------------------------
    async def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name=f"{self.name}-engine")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self) -> None:
        while True:
            if not self.buffer or self.blocked:
                self._queued.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._queued.wait(), SLICE)
            if self.fault == "power_off":
                if not self._was_off:
                    self._was_off = True
                    self.clear_buffer()  # the buffer is RAM: power loss empties it
                continue
            self._was_off = False
            if self.blocked or not self.buffer:
                continue
            await self._print(self.buffer[0])

    async def _print(self, job: Job) -> None:
        self.printing = job
        started_t = time.time()
        reprint = job.started
        job.started = True
        self.on_start(job)
        try:
            deadline = time.monotonic() + (0.0 if job.zero_time else self.print_time)
            while (left := deadline - time.monotonic()) > 0:
                await asyncio.sleep(min(SLICE, left))
                if job not in self.buffer:  # cancelled under the head
                    self._log(job, complete=False, note="cancelled while printing")
                    return
                fault = self.fault
                if fault is not None and fault != "no_answer":
                    self._log(job, complete=False, note=f"{fault} while printing")
                    if not self.on_interrupted(job, fault) and job in self.buffer:
                        self.buffer.remove(job)
                    return
            if job in self.buffer:
                self.buffer.remove(job)
            if not job.zero_time:
                # Decoding the label for the log is the emulator's cost, not the printer's: run it after the
                # engine has started the next buffered label (call_soon), so it never shows as idle time.
                note = "reprint after error" if reprint else ""
                asyncio.get_running_loop().call_soon(
                    functools.partial(self._log, job, True, note, started_t, time.time())
                )
            self.on_complete(job)
        finally:
            self.printing = None

    def _log(
        self, job: Job, complete: bool, note: str = "", started_t: float | None = None, t: float | None = None
    ) -> None:
        entry: dict[str, Any] = {
            "t": time.time() if t is None else t,
            "printer": self.name,
            "kind": self.kind,
            "job": job.marker,
            "complete": complete,
        }
        if started_t is not None:
            entry["started_t"] = started_t  # when the label went under the head: the duty-cycle bench needs it
        if self.read_back:
            entry.update(self.decode(job, self._image_path()))
        if note:
            entry["note"] = note
        self.log.append(entry)
        if self.print_log is not None:
            with self.print_log.open("a", encoding="utf-8") as out:
                out.write(json.dumps(entry, ensure_ascii=False) + "\n")

    def _image_path(self) -> Path | None:
        """Where the next label's PNG goes: beside the print log, numbered on from the entries already in it (so a
        sim restarted on the same log does not overwrite the labels it printed before)."""
        if self.print_log is None:
            return None
        if self._labels is None:
            try:
                with self.print_log.open("rb") as existing:
                    self._labels = sum(1 for _ in existing)
            except FileNotFoundError:
                self._labels = 0
        self._labels += 1
        return self.print_log.with_name(f"{self.print_log.stem}.{self._labels:05d}.png")

    def printed(self, complete: bool = True) -> list[dict[str, Any]]:
        return [e for e in self.log if e["complete"] is complete]


#: What ``CommandStream._command`` answers when the command at the offset is not whole yet.
INCOMPLETE = -1


class CommandStream(EmulatedPrinter):
    """A printer language read as a stream of commands: bytes that end mid-command wait for the next chunk."""

    _pending: bytes

    def feed(self, data: bytes) -> None:
        buf = self._pending + data
        i = 0
        while i < len(buf):
            size = self._command(buf, i)
            if size == INCOMPLETE:
                break
            i += size
        self._pending = buf[i:]

    @abc.abstractmethod
    def _command(self, buf: bytes, i: int) -> int:
        """Act on the command at ``i``; return its length, or INCOMPLETE when more bytes are needed."""


def _drop(_: bytes) -> None:
    """Where replies go when nobody listens."""
