"""Printers whose only word on a label is their status, asked again and again: DYMO LabelWriter and TSPL.

Neither has a "label done" notice or a job counter a host can read. What they do report is whether a label is on
its way: a LabelWriter 4xx clears "top of form" while it feeds a label and sets it again once the label is at the
tear bar; a 550 names the job it prints and goes back to idle; a TSPL printer sets "printing" while it prints.
So a badge is ``printed`` only when the status was seen to show it under way and then done, with no fault: a
status that says "done" without ever having said "under way" proves nothing (it may predate the badge) and leaves
the badge ``unknown`` once the time is up. A fault after the badge was sent is ``unknown`` too (these printers
print as the data arrives or hold no job count to say the badge is still whole): the printer is told to drop what
it holds, so a reloaded printer does not finish a badge the agent hands on.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import time

from drivers.base import DeviceState, DeviceStatus, DriverError, Outcome, PrintResult
from drivers.languages.base import NO_ANSWER, LanguageDriver
from drivers.languages.pace import CompletionPace


class PolledDriver(LanguageDriver):
    #: Asks the printer for its status; appended to every badge, so the first answer comes without a round trip.
    status_request: bytes = b""
    #: Drops what the printer holds (a badge not yet out).
    cancel_bytes: bytes = b""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.pace = CompletionPace(slow=max(self.poll_interval, 0.01))

    @abc.abstractmethod
    async def _reply(self, asked: bool) -> bytes:
        """Read one status reply (after asking, when ``asked`` is False); b"" on silence."""

    @abc.abstractmethod
    def _parse(self, reply: bytes) -> DeviceStatus:
        """The status a reply says; a reply that is no status of this language is an ``ERROR`` naming it."""

    @abc.abstractmethod
    def _under_way(self, status: DeviceStatus) -> bool:
        """The status shows this badge on its way (being fed, printed)."""

    def noise(self, reply: bytes, expected: str) -> DeviceStatus:
        """A reply that is not this language's status: a fault that names the printer and what it said."""
        shown = reply[:16].hex(" ") + (" ..." if len(reply) > 16 else "")
        who = self.printer_name or self.description
        return DeviceStatus(
            DeviceState.ERROR,
            (f"{who} answered {shown} ({len(reply)} bytes) to its status request, not {expected}",),
            {"reply": reply[:64].hex()},
        )

    async def _status(self, asked: bool = False) -> DeviceStatus | None:
        reply = await self._reply(asked)
        return self._parse(reply) if reply else None

    async def _read_status(self) -> DeviceStatus | None:
        return await self._status()

    async def _before_send(self) -> PrintResult | None:
        settled = self.settled()
        spoke = await self.transport.discard_input()
        before = settled if isinstance(settled, DeviceStatus) and not spoke else None
        if before is None:
            before = await self._read_status()
        # No job queue to wait behind: a badge goes only to an idle printer, so "under way" is this badge's.
        return self.refuse(before, busy_is_refusal=True)

    def _job_bytes(self, data: bytes) -> bytes:
        return data + self.status_request

    async def _watch(self, deadline: float) -> PrintResult:
        sent_at = time.monotonic()
        under_way = False
        status = DeviceStatus(DeviceState.UNKNOWN, (NO_ANSWER,))
        asked = True  # the request that followed the badge
        while (left := deadline - time.monotonic()) > 0:
            if not asked:
                await asyncio.sleep(min(self.pace.wait(time.monotonic() - sent_at), left))
            seen = await self._status(asked)
            asked = False
            if seen is None:
                continue  # silence: ask again; it becomes "unknown" only at the deadline
            status = seen
            if status.faulted:
                with contextlib.suppress(DriverError):  # a reloaded printer must not finish this badge
                    await self.transport.write(self.cancel_bytes)
                return PrintResult(Outcome.UNKNOWN, f"{status.describe()} after the badge was sent", status)
            if self._under_way(status):
                under_way = True
            elif under_way:
                self.pace.learn(time.monotonic() - sent_at)
                self.settle(status)
                return PrintResult(Outcome.PRINTED, "printer reported the badge under way, then done", status)
        why = "the printer never reported the badge done" if under_way else "the printer never reported the badge"
        return PrintResult(Outcome.UNKNOWN, why, status)

    async def cancel(self) -> None:
        async with self.lock:
            self.unsettle()
            await self._ensure_open()
            await self.transport.write(self.cancel_bytes)
            if not self.transport.can_read:
                return
            if await self._status() is None:
                raise DriverError(f"{self.description}: sent the reset but the printer did not answer")
