"""TSPL (TSC and the many 4x6 in thermal printers that speak it): the badge as one BITMAP, ``<ESC>!?`` around it.

Outcome policy (docs/printers.md, drivers/languages/polled.py): before a badge the status byte must be 00 (no
fault, not printing). After it, ``<ESC>!?`` is asked until the "printing" bit has been seen set and then clear
with no fault: ``printed``. A fault after sending, silence until the timeout or a lost link: ``unknown``, and
``<ESC>!R`` drops what the printer holds. At open, ``~!T`` names the model (answered only by a ready printer).
"""

from __future__ import annotations

import logging

from drivers.base import DeviceStatus
from drivers.languages import tspl_status as ts
from drivers.languages.polled import PolledDriver

log = logging.getLogger(__name__)


class TsplDriver(PolledDriver):
    language = "tspl"
    status_request = ts.STATUS_REQUEST
    cancel_bytes = ts.RESET
    #: What ``~!T`` answered, or None until a ready printer said it.
    model: str | None = None

    async def _after_open(self) -> None:
        if not self.transport.can_read or self.model is not None:
            return
        status = await self._status()
        if status is None or status.faulted:
            return  # "~" commands wait for a ready printer: asked now, the answer would come among status bytes
        reply = await self.transport.ask(ts.MODEL_REQUEST, lambda b: b"\r" in b, min(self.io_timeout, 1.0))
        self.model = ts.parse_model(reply)
        if self.model:
            log.info("%s: %s", self.printer_name or self.description, self.model)

    async def _reply(self, asked: bool) -> bytes:
        if asked:
            return await self.transport.read_until(lambda b: len(b) >= 1, self.io_timeout)
        return await self.transport.ask(self.status_request, lambda b: len(b) >= 1, self.io_timeout)

    def _parse(self, reply: bytes) -> DeviceStatus:
        if len(reply) != 1:
            return self.noise(reply, "one <ESC>!? status byte")
        return ts.parse_status(reply[0])

    def _under_way(self, status: DeviceStatus) -> bool:
        return status.busy
