"""ESC/POS receipt printers: render as raster bands, read ``DLE EOT`` status, cancel with ``DLE DC4`` fn=8.

ESC/POS has no "label done" notice of its own. The evidence we use is Epson's process ID (``GS ( H`` fn=48): the
printer answers ``37 22 <id> 00`` only once everything sent before it has been printed. Outcome policy
(docs/printers.md): that answer => ``printed``; a fault before sending => ``failed`` (nothing sent); a fault after
sending => clear the buffer and ``unknown`` (a receipt printer starts printing as data arrives, so part of the
badge may be out); a printer that never answers process IDs (many clones) => ``unknown`` for every badge.
"""

from __future__ import annotations

import itertools
import time

from drivers.base import DeviceState, DeviceStatus, DriverError, Outcome, PrintResult
from drivers.languages import escpos_status as es
from drivers.languages.base import NO_ANSWER, LanguageDriver


class EscposDriver(LanguageDriver):
    language = "escpos"
    #: None until learned at open: does this printer answer GS ( H process IDs?
    completion_replies: bool | None = None
    _tokens = itertools.cycle(range(1, 10000))
    _token = b"0000"  # the process ID sent after the badge in progress

    async def _realtime(self, replies: es.Replies, pending: bytes) -> tuple[es.RealtimeStatus | None, bytes]:
        """Ask all four DLE EOT statuses; other messages that arrive meanwhile stay in ``replies``."""
        have = len(replies.realtime)
        await self.transport.write(es.STATUS_REQUESTS)
        deadline = time.monotonic() + self.io_timeout
        while len(replies.realtime) < have + 4 and (left := deadline - time.monotonic()) > 0:
            pending = es.split_replies(pending + await self.transport.read(left), replies)
        if len(replies.realtime) < have + 4:
            return None, pending
        return es.parse_realtime(replies.realtime[have : have + 4]), pending

    async def _status(self) -> es.RealtimeStatus | None:
        await self.transport.discard_input()
        status, _ = await self._realtime(es.Replies(), b"")
        return status

    async def _read_status(self) -> DeviceStatus | None:
        rt = await self._status()
        return None if rt is None else es.to_device_status(rt)

    async def _after_open(self) -> None:
        if not self.transport.can_read or self.completion_replies is not None:
            return
        rt = await self._status()
        if rt is None or es.to_device_status(rt).faulted:
            return  # an offline printer holds the request back: learn it on a later open
        await self.transport.write(es.process_id_request(b"0000"))
        replies = es.Replies()
        buf = await self.transport.read_until(lambda b: b"\x37\x22" in b, min(self.io_timeout, 1.0))
        es.split_replies(buf, replies)
        self.completion_replies = b"0000" in replies.process_ids

    async def _before_send(self) -> PrintResult | None:
        before = await self._status()
        return self.refuse(None if before is None else es.to_device_status(before))

    def _job_bytes(self, data: bytes) -> bytes:
        # The process ID asked after the badge is answered only once everything before it has printed.
        self._token = f"{next(self._tokens):04d}".encode()
        return data + es.process_id_request(self._token)

    async def _watch(self, deadline: float) -> PrintResult:
        token = self._token
        replies, pending = es.Replies(), b""
        status = DeviceStatus(DeviceState.UNKNOWN, (NO_ANSWER,))
        while (left := deadline - time.monotonic()) > 0:
            pending = es.split_replies(pending + await self.transport.read(min(left, self.poll_interval)), replies)
            if token in replies.process_ids:
                return PrintResult(Outcome.PRINTED, "printer confirmed the badge's process ID after printing it")
            rt, pending = await self._realtime(replies, pending)
            if rt is None:
                continue  # silence: keep waiting; it only becomes "unknown" at the deadline
            status = es.to_device_status(rt)
            if status.faulted:
                await self.transport.write(es.CLEAR_BUFFERS)  # a reloaded printer must not finish this badge
                return PrintResult(Outcome.UNKNOWN, f"{status.describe()} after the badge was sent", status)
            if self.completion_replies is False:
                return PrintResult(Outcome.UNKNOWN, "printer has no completion reply (no GS ( H support)", status)
        return PrintResult(Outcome.UNKNOWN, "printer never confirmed the badge's process ID", status)

    async def cancel(self) -> None:
        async with self.lock:
            await self._ensure_open()
            await self.transport.write(es.CLEAR_BUFFERS)
            if not self.transport.can_read:
                return
            replies = es.Replies()
            buf = await self.transport.read_until(lambda b: es.CLEAR_RESPONSE in b, self.io_timeout)
            es.split_replies(buf, replies)
            if not replies.cleared:
                raise DriverError(f"{self.description}: sent DLE DC4 8 but the printer did not confirm the clear")
