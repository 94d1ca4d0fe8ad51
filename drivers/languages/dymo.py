"""DYMO LabelWriter: 4xx raster jobs with the one-byte ``ESC A`` status, 550 jobs with the 32-byte status.

Outcome policy (docs/printers.md, drivers/languages/polled.py): before a badge the printer must answer its status
with no fault and nothing under way. After it, the status is asked until it shows the badge under way and then
done: on a 4xx "top of form" clear (the label being fed) and then set (at the tear bar), on a 550 our job id
printing and then idle. A fault after sending, silence until the timeout or a lost link is ``unknown``; cancel is
85 ``ESC`` (resynchronise) and ``ESC @``, confirmed by a status answer.

The model (``driver.model``, else the USB product id) gives the head width and the protocol; a LabelWriter not
named either way is told apart by the length of its status reply (1 byte: 4xx, 32 bytes: 550).
"""

from __future__ import annotations

import itertools
import logging
import random
import struct
from typing import Any

from drivers.base import Badge, DeviceState, DeviceStatus, Outcome, PrintResult
from drivers.languages import dymo_status as ds
from drivers.languages.polled import PolledDriver
from drivers.languages.rendering import render_for

log = logging.getLogger(__name__)
#: How long a reply longer than one byte may take to be whole (a 550's 32 bytes may come in two reads).
_REST = 0.2


class DymoDriver(PolledDriver):
    language = "dymo"
    status_request = ds.STATUS_REQUEST
    cancel_bytes = ds.CANCEL

    def __init__(self, *args: Any, model: str | None = None, product_id: int | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.model: ds.Model | None = ds.model_named(model) if model else ds.model_for(product_id)
        #: "4xx" or "550": from the model, else learnt from the first status reply.
        self.generation: str | None = self.model.generation if self.model else None
        self._job_ids = itertools.count(random.randrange(1, 1 << 30))
        self._job_id = 0
        self._drawn_for = ds.GEN_4XX  # the protocol of the badge being printed

    @property
    def head_dots(self) -> int:
        return self.model.head_dots if self.model is not None else 672

    def render(self, badge: Badge) -> bytes:
        generation = self.generation or ds.GEN_4XX
        return render_for(
            self.language, badge, self.draw_label(), draw=self.draw, head_dots=self.head_dots, generation=generation
        )

    async def _after_open(self) -> None:
        if self.generation is None and self.transport.can_read:
            await self._status()  # its length says 4xx or 550, before the first badge is drawn

    def _learn(self, reply: bytes) -> None:
        generation = ds.GEN_550 if len(reply) >= ds.SIZE_550 else ds.GEN_4XX
        if self.generation is None:
            self.generation = generation
            log.info("%s: a LabelWriter %s (from its status reply)", self.printer_name or self.description, generation)

    async def _reply(self, asked: bool) -> bytes:
        want = ds.SIZE_550 if self.generation == ds.GEN_550 else 1
        if asked:
            buf = await self.transport.read_until(lambda b: len(b) >= want, self.io_timeout)
        else:
            buf = await self.transport.ask(self.status_request, lambda b: len(b) >= want, self.io_timeout)
        if self.generation is None and len(buf) == 1:
            buf += await self.transport.read_until(lambda b: len(buf) + len(b) >= ds.SIZE_550, _REST)
        if buf and self.generation is None:
            self._learn(buf)
        return buf

    def _parse(self, reply: bytes) -> DeviceStatus:
        if self.generation == ds.GEN_550:
            if len(reply) != ds.SIZE_550 or reply[7] or reply[31] or reply[0] > 5 or reply[10] > 10:
                return self.noise(reply, "a LabelWriter 550 status (32 bytes)")
            status = ds.to_device_status_550(ds.parse_550(reply))
        else:
            # Bit 0 is always 1 and bits 2 and 4 are reserved (0): anything else is not a LabelWriter talking.
            if len(reply) != 1 or not reply[0] & ds.READY or reply[0] & 0x14:
                return self.noise(reply, "a LabelWriter status byte")
            status = ds.parse_4xx(reply[0])
        return status

    def _under_way(self, status: DeviceStatus) -> bool:
        if self.generation == ds.GEN_550:
            return status.busy and status.detail.get("job_id") == self._job_id
        return status.detail.get("top_of_form") is False

    async def _before_send(self) -> PrintResult | None:
        refusal = await super()._before_send()
        if refusal is None and self._drawn_for != (self.generation or ds.GEN_4XX):
            # Drawn before the printer said which protocol it speaks: sent, it would be read as garbage. The agent
            # draws it again for the next attempt (nothing was sent, so the attempt does not count).
            why = f"the badge was drawn for a LabelWriter {self._drawn_for}, this one speaks {self.generation}"
            return PrintResult(Outcome.FAILED, f"nothing sent: {why}", DeviceStatus(DeviceState.READY), sent=False)
        return refusal

    async def print(self, data: bytes, badge: Badge, timeout: float) -> PrintResult:
        self._drawn_for = ds.GEN_550 if data.startswith(b"\x1bs") else ds.GEN_4XX
        return await super().print(data, badge, timeout)

    def _job_bytes(self, data: bytes) -> bytes:
        if self._drawn_for == ds.GEN_550:
            # Each job its own id: the status names the job it prints, which is how this badge is told from another.
            self._job_id = next(self._job_ids) & 0xFFFFFFFF or 1
            data = data[:2] + struct.pack("<I", self._job_id) + data[6:]
        return data + self.status_request
