"""What the three printer languages share: one transport, one I/O lock, explicit open/close, link errors as states.

The lock makes this driver the one I/O owner of its device: a probe never interleaves with a job that is still
streaming, and a status reply is always read by the request that asked for it.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import time

from drivers.base import Badge, DeviceState, DeviceStatus, Driver, DriverError, Outcome, PrintResult, RenderError
from drivers.label import LabelConfig
from drivers.languages.rendering import render_for
from drivers.transports.base import Transport

NO_ANSWER = "no status reply (printer busy, faulted or switched off?)"
#: How long what the printer said as the last badge came out stands in for asking it again before the next one.
#: With badges waiting the next one follows within tens of milliseconds; after a longer pause the printer is asked.
SETTLED_FOR = 0.5
_WARM_UP = Badge(job_id="warm-up", attendee_id="WARM-UP", name="Warm Up Badge", company="Company", role="Role")


class LanguageDriver(Driver):
    language = ""

    def __init__(
        self,
        transport: Transport,
        *,
        printer_name: str = "",
        label: LabelConfig | None = None,
        io_timeout: float = 3.0,
        poll_interval: float = 0.1,
    ) -> None:
        self.transport = transport
        self.printer_name = printer_name
        self.label = label or LabelConfig()
        #: The stock the printer reports (see ``Driver.loaded``); each language fills it from its own replies.
        self.loaded: LabelConfig | None = None
        self.io_timeout = io_timeout
        self.poll_interval = poll_interval
        self.lock = asyncio.Lock()
        self.description = f"{self.language} over {transport.description}"
        self._warm = False
        self._settled: object | None = None  # see settle()
        self._settled_at = 0.0

    @property
    def status_capable(self) -> bool:  # type: ignore[override]
        return self.transport.can_read

    async def open(self) -> None:
        async with self.lock:
            self.unsettle()
            await self.transport.open()
            await self._after_open()
        await self.warm_up()

    async def warm_up(self) -> None:
        """Draw one throwaway badge (in a thread) so the first real one does not pay for imports and font loading.

        Without it the first badge of a process takes 0.1-0.3 s longer to draw (bench/duty.py, dispatch "first").
        """
        if self._warm:
            return
        self._warm = True
        with contextlib.suppress(RenderError):  # the real badge reports the same problem where it can be acted on
            await asyncio.to_thread(self.render, _WARM_UP)

    async def _after_open(self) -> None:
        """A hook for one-time capability checks (label counter, completion replies)."""

    def settle(self, state: object) -> None:
        """Keep what the printer reported as the badge just printed came out (its status, its label counter).

        The next print may use it instead of asking again (:meth:`settled`): nothing was sent to the printer in
        between, so it is what a query would have found, minus what changed since, which the watch after sending
        still catches (a fault with the badge in the buffer is cancelled and ``failed``).
        """
        self._settled, self._settled_at = state, time.monotonic()

    def settled(self) -> object | None:
        """What :meth:`settle` kept, once, if it is recent and nothing else was said to the printer since."""
        state, self._settled = self._settled, None
        return state if time.monotonic() - self._settled_at <= SETTLED_FOR else None

    def unsettle(self) -> None:
        """Something else talked to the printer (a probe, a cancel, a new connection): ask it afresh next time."""
        self._settled = None

    async def aclose(self) -> None:
        async with self.lock:
            self.unsettle()
            await self.transport.aclose()

    async def _ensure_open(self) -> None:
        # Reconnect lazily, only at the start of an operation: never in the middle of a job's bytes.
        if not self.transport.is_open:
            self.unsettle()
            await self.transport.open()
            await self._after_open()

    async def probe(self) -> DeviceStatus:
        async with self.lock:
            self.unsettle()
            try:
                await self._ensure_open()
                if not self.transport.can_read:
                    return DeviceStatus(DeviceState.UNKNOWN, ("one-way link: status cannot be read",))
                status = await self._read_status()
            except DriverError as exc:
                return DeviceStatus(DeviceState.OFFLINE, (str(exc),))
            return self._with_media_fault(status or DeviceStatus(DeviceState.UNKNOWN, (NO_ANSWER,)))

    def _with_media_fault(self, status: DeviceStatus) -> DeviceStatus:
        """A printer whose stock the venue's badges cannot be drawn for is out of the right media, as a wrong roll is:
        it takes no work until that changes."""
        reason = self.media_fault() if self.media_fault is not None else None
        if reason is None or status.faulted:
            return status
        return DeviceStatus(DeviceState.MEDIA_OUT, (reason,), status.detail)

    async def print(self, data: bytes, badge: Badge, timeout: float) -> PrintResult:
        """Check the printer can take a badge, send it, and watch until the outcome is known (lock held throughout).

        A link failure or a refusal before the first byte is ``failed`` (nothing was sent); a failure after it is
        ``unknown``.
        """
        async with self.lock:
            try:
                await self._ensure_open()
                if not self.transport.can_read:
                    await self.transport.write(data)
                    return PrintResult(Outcome.UNKNOWN, "one-way link: sent, but the printer cannot confirm it")
                refusal = await self._before_send()
            except DriverError as exc:
                offline = DeviceStatus(DeviceState.OFFLINE, (str(exc),))
                return PrintResult(Outcome.FAILED, f"nothing sent: {exc}", offline, sent=False)
            if refusal is not None:
                return refusal
            media = self.media_fault() if self.media_fault is not None else None
            if media is not None:
                status = DeviceStatus(DeviceState.MEDIA_OUT, (media,))
                return PrintResult(Outcome.FAILED, f"nothing sent: {media}", status, sent=False)
            try:
                await self.transport.write(self._job_bytes(data))
            except DriverError as exc:
                return PrintResult(Outcome.UNKNOWN, f"link failed while sending the badge: {exc}")
            try:
                return await self._watch(time.monotonic() + timeout)
            except DriverError as exc:
                return PrintResult(Outcome.UNKNOWN, f"link lost after the badge was sent: {exc}")

    @staticmethod
    def refuse(status: DeviceStatus | None, busy_is_refusal: bool = False) -> PrintResult | None:
        """The ``failed`` result for a printer that cannot take a badge now (silent, faulted), else None."""
        if status is None:
            silent = DeviceStatus(DeviceState.UNKNOWN, (NO_ANSWER,))
            return PrintResult(Outcome.FAILED, f"nothing sent: {NO_ANSWER}", silent, sent=False)
        if status.faulted or (busy_is_refusal and status.busy):
            return PrintResult(Outcome.FAILED, f"nothing sent: printer {status.describe()}", status, sent=False)
        return None

    @abc.abstractmethod
    async def _before_send(self) -> PrintResult | None:
        """Read the printer's status before a badge; a ``failed`` result when it cannot take one. The lock is held."""

    def _job_bytes(self, data: bytes) -> bytes:
        """What goes on the wire for one badge (a language may append a completion request)."""
        return data

    @abc.abstractmethod
    async def _watch(self, deadline: float) -> PrintResult:
        """After sending: read the printer until the badge's outcome is known or ``deadline`` passes."""

    @abc.abstractmethod
    async def _read_status(self) -> DeviceStatus | None:
        """Ask for and parse the status; ``None`` when the printer stayed silent. The lock is held."""

    def draw_label(self) -> LabelConfig:
        """The label a badge is drawn for: the stock the printer reports when the venue's layouts draw it (their
        variant for that stock is chosen), else the config's label (the built-in design, as configured)."""
        return self.loaded if self.draw is not None and self.loaded is not None else self.label

    def render(self, badge: Badge) -> bytes:
        return render_for(self.language, badge, self.draw_label(), self.template_text, draw=self.draw)

    template_text: str | None = None
