"""Brother QL raster: render, read the 32-byte status, decide the outcome, cancel by invalidate + initialize.

Outcome policy (docs/printers.md): the printer reports each job itself. "Printing completed" => ``printed``.
Before a badge the printer is asked for its status, unless the notice that followed the last badge's "printing
completed" (phase back to waiting, with the error bits and the roll) is recent and the printer has said nothing
since (``LanguageDriver.settle``): then that notice is the answer.
"Error occurred" before the printing phase began => cancel (invalidate + ``ESC @``), then the printer must answer
a status request => ``failed``. An error after the printing phase began, a "turned off" notice, a lost link or
no "printing completed" within the timeout => ``unknown``.
"""

from __future__ import annotations

import time
from typing import Any

from drivers.base import Badge, DeviceState, DeviceStatus, DriverError, Outcome, PrintResult
from drivers.languages import brother_media
from drivers.languages import brother_status as bs
from drivers.languages.base import NO_ANSWER, LanguageDriver
from drivers.languages.rendering import render_for

#: 400 NULs: the QL-800 series' invalidate length, and more than enough for older models (200): it flushes a
#: half-sent raster line so the ``ESC @`` after it is read as a command, not as pixels.
INVALIDATE = b"\x00" * 400


class BrotherDriver(LanguageDriver):
    language = "brother_ql"

    def __init__(self, *args: Any, model: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.model = model or brother_media.DEFAULT_MODEL

    def render(self, badge: Badge) -> bytes:
        return render_for(self.language, badge, self.draw_label(), model=self.model, draw=self.draw)

    def _judge(self, st: bs.BrotherStatus) -> DeviceStatus:
        """The status, with a roll other than the configured stock as a media fault: the badge waits in the queue
        (the readiness check keeps the agent from taking jobs) until the right roll is in, instead of printing
        cropped or on the wrong labels and being reported printed.

        Every status names the roll: it becomes ``loaded``. When the venue's layouts draw the badges, the roll they
        need is theirs to judge (a variant for the loaded roll, else their media fault), not the config's."""
        status = bs.to_device_status(st)
        self.loaded = brother_media.loaded_label(st.media_width_mm, st.media_type, st.media_length_mm, self.label)
        wrong = brother_media.roll_mismatch(st.media_width_mm, st.media_type, st.media_length_mm, self.label)
        if wrong is None or status.faulted or (self.draw is not None and self.loaded is not None):
            return status
        return DeviceStatus(DeviceState.MEDIA_OUT, (f"wrong roll: {wrong}",), status.detail)

    async def _request(self) -> bs.BrotherStatus | None:
        # ask() first drops unprompted notices from the last job: they are not this answer.
        buf = await self.transport.ask(bs.STATUS_REQUEST, lambda b: len(bs.split_replies(b)[0]) > 0, self.io_timeout)
        replies, _ = bs.split_replies(buf)
        return bs.parse_status(replies[-1]) if replies else None

    async def _read_status(self) -> DeviceStatus | None:
        st = await self._request()
        return None if st is None else self._judge(st)

    async def _before_send(self) -> PrintResult | None:
        settled = self.settled()
        # Anything the printer said unprompted since (dropped here, without waiting) voids the kept notice.
        spoke = await self.transport.discard_input()
        before = settled if isinstance(settled, bs.BrotherStatus) and not spoke else None
        if before is None:
            before = await self._request()
        # A QL has no job buffer to queue behind: a busy or cooling printer is asked again later, not sent to.
        return self.refuse(None if before is None else self._judge(before), busy_is_refusal=True)

    async def _settle_after_completed(self, after: list[bytes], pending: bytes) -> None:
        """Keep the "back to waiting" notice that follows "printing completed", if it has arrived already and
        nothing else came with it: it says the printer is ready for the next badge (no error, which roll)."""
        try:
            pending += await self.transport.read_ready()
        except DriverError:
            return
        later, rest = bs.split_replies(pending)
        notices = [bs.parse_status(raw) for raw in [*after, *later]]
        if rest or len(notices) != 1:
            return
        st = notices[0]
        if st.status_type == bs.TYPE_PHASE and st.phase == bs.PHASE_WAITING and not self._judge(st).faulted:
            self.settle(st)

    async def _watch(self, deadline: float) -> PrintResult:
        printing = False
        pending = b""
        status = DeviceStatus(DeviceState.UNKNOWN, (NO_ANSWER,))
        while (left := deadline - time.monotonic()) > 0:
            try:
                pending += await self.transport.read(min(left, self.io_timeout))
            except DriverError as exc:
                return PrintResult(Outcome.UNKNOWN, f"link lost after the badge was sent: {exc}", status)
            replies, pending = bs.split_replies(pending)
            for n, raw in enumerate(replies):
                st = bs.parse_status(raw)
                status = bs.to_device_status(st)
                if st.status_type == bs.TYPE_COMPLETED:
                    await self._settle_after_completed(replies[n + 1 :], pending)
                    return PrintResult(Outcome.PRINTED, "printer reported printing completed", status)
                if st.status_type == bs.TYPE_PHASE and st.phase == bs.PHASE_PRINTING:
                    printing = True
                elif st.status_type == bs.TYPE_ERROR:
                    return await self._error(status, printing or st.phase == bs.PHASE_PRINTING)
                elif st.status_type == bs.TYPE_OFF:
                    return PrintResult(Outcome.UNKNOWN, "printer turned off after the badge was sent", status)
        why = "printing started but never completed" if printing else "no 'printing completed' from the printer"
        return PrintResult(Outcome.UNKNOWN, why, status)

    async def _error(self, status: DeviceStatus, printing: bool) -> PrintResult:
        if printing:
            return PrintResult(Outcome.UNKNOWN, f"{status.describe()} while the badge was printing", status)
        try:
            acknowledged = await self._cancel_acknowledged()
        except DriverError as exc:
            return PrintResult(Outcome.UNKNOWN, f"{status.describe()}; cancel failed: {exc}", status)
        if acknowledged:
            return PrintResult(Outcome.FAILED, f"{status.describe()} before printing; badge cancelled", status)
        return PrintResult(Outcome.UNKNOWN, f"{status.describe()}; the printer did not answer after cancel", status)

    async def _cancel_acknowledged(self) -> bool:
        await self.transport.write(INVALIDATE + bs.INITIALIZE)
        return await self._request() is not None

    async def cancel(self) -> None:
        async with self.lock:
            self.unsettle()
            await self._ensure_open()
            if not self.transport.can_read:
                await self.transport.write(INVALIDATE + bs.INITIALIZE)
                return
            if not await self._cancel_acknowledged():
                raise DriverError(f"{self.description}: sent invalidate + ESC @ but the printer did not answer")
