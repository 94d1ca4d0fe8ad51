"""ESC/POS receipt printers: render as raster bands, read ``DLE EOT`` status, cancel with ``DLE DC4`` fn=8.

ESC/POS has no "label done" notice of its own. The evidence we use is Epson's process ID (``GS ( H`` fn=48): the
printer answers ``37 22 <id> 00`` only once everything sent before it has been printed. Outcome policy
(docs/printers.md): that answer => ``printed``; a fault before sending => ``failed`` (nothing sent); a fault after
sending => clear the buffer and ``unknown`` (a receipt printer starts printing as data arrives, so part of the
badge may be out); a printer that never answers process IDs (many clones) => ``unknown`` for every badge.

At open (while the printer is online) the driver asks the printer's model, firmware and paper width
(drivers/languages/escpos_info.py). Paper narrower than the configured badge would crop it: the printer is then
reported faulted ("wrong paper: ...") and takes no badge until it reports paper the badge fits, asked again at
every probe. Paper wider than the badge is only a warning.
"""

from __future__ import annotations

import itertools
import logging
import time

from drivers.base import DeviceState, DeviceStatus, DriverError, Outcome, PrintResult
from drivers.label import LabelConfig
from drivers.languages import escpos_info as ei
from drivers.languages import escpos_status as es
from drivers.languages.base import NO_ANSWER, LanguageDriver

log = logging.getLogger(__name__)


class EscposDriver(LanguageDriver):
    language = "escpos"
    #: None until learned at open: does this printer answer GS ( H process IDs?
    completion_replies: bool | None = None
    #: What the printer said about itself (GS I, paper width); None until asked while it was online.
    info: ei.PrinterInfo | None = None
    #: Why no badge is sent (paper narrower than the badge), or None.
    paper_refusal: str | None = None
    _paper_note: str | None = None
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
        if rt is None:
            return None
        status = es.to_device_status(rt)
        if self.paper_refusal is not None and not status.faulted:
            await self._learn_paper()  # the crew may have changed the setting: a fixed printer prints on by itself
        return self._judge(status)

    def _judge(self, status: DeviceStatus) -> DeviceStatus:
        # Drawn by the venue's layouts, a badge is drawn for the paper the printer reports (their variant for it,
        # else their media fault): the configured width no longer decides.
        if self.paper_refusal is None or status.faulted or (self.draw is not None and self.loaded is not None):
            return status
        return DeviceStatus(DeviceState.MEDIA_OUT, (self.paper_refusal,), status.detail)

    async def _learn_printer(self) -> None:
        """Model, firmware and paper width (asked only while the printer is online: an offline one would answer
        these buffered commands later, in the middle of the status replies)."""
        self._paper_note = None
        self.info = await ei.read_info(self.transport.ask, min(self.io_timeout, 1.0))
        self._judge_paper(self.info.paper_mm)

    async def _learn_paper(self) -> None:
        try:
            paper: int | None = ei.parse_paper_width(
                await self.transport.ask(ei.PAPER_WIDTH_REQUEST, ei.paper_width_complete, min(self.io_timeout, 1.0))
            )
        except ValueError:
            paper = None
        self._judge_paper(paper)

    def _judge_paper(self, paper_mm: int | None) -> None:
        if paper_mm is not None:
            # A receipt is as long as the badge is drawn: the width is the printer's, the length the config's.
            width = float(ei.printable_mm(paper_mm))
            self.loaded = LabelConfig(width_mm=width, height_mm=self.label.height_mm, dpi=self.label.dpi)
        check = None if paper_mm is None else ei.check_paper(paper_mm, self.label.width_mm)
        note = None if check is None else check.message
        if note is not None and note != self._paper_note:  # once per open, not at every probe
            log.warning("%s: %s", self.printer_name or self.description, note)
        elif note is None and self.paper_refusal is not None:
            log.warning("%s: paper now fits the badge (%s mm)", self.printer_name or self.description, paper_mm)
        self._paper_note = note
        self.paper_refusal = note if check is not None and check.crops else None

    async def _after_open(self) -> None:
        if not self.transport.can_read:
            return
        rt = await self._status()
        if rt is None or es.to_device_status(rt).faulted:
            return  # an offline printer holds buffered requests back: learn it before the first badge, or later
        await self._learn_printer()
        if self.completion_replies is not None:
            return
        await self.transport.write(es.process_id_request(b"0000"))
        replies = es.Replies()
        buf = await self.transport.read_until(lambda b: b"\x37\x22" in b, min(self.io_timeout, 1.0))
        es.split_replies(buf, replies)
        self.completion_replies = b"0000" in replies.process_ids

    async def _before_send(self) -> PrintResult | None:
        before = await self._status()
        status = None if before is None else es.to_device_status(before)
        if status is not None and not status.faulted and self.info is None:
            await self._learn_printer()  # opened while offline: the paper is checked before the first badge
        return self.refuse(None if status is None else self._judge(status))

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
            if token in replies.process_ids:
                # It came while the status was asked (the reads there keep it): waiting for the next read first
                # would leave the printer idle for up to a poll interval.
                return PrintResult(Outcome.PRINTED, "printer confirmed the badge's process ID after printing it")
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
