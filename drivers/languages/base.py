"""What the three printer languages share: one transport, one I/O lock, explicit open/close, link errors as states.

The lock makes this driver the one I/O owner of its device: a probe never interleaves with a job that is still
streaming, and a status reply is always read by the request that asked for it.
"""

from __future__ import annotations

import abc
import asyncio

from drivers.base import Badge, DeviceState, DeviceStatus, Driver, DriverError
from drivers.config import LabelConfig
from drivers.languages.rendering import render_for
from drivers.transports.base import Transport

NO_ANSWER = "no status reply (printer busy, faulted or switched off?)"


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
        self.io_timeout = io_timeout
        self.poll_interval = poll_interval
        self.lock = asyncio.Lock()
        self.description = f"{self.language} over {transport.description}"

    @property
    def status_capable(self) -> bool:  # type: ignore[override]
        return self.transport.can_read

    async def open(self) -> None:
        async with self.lock:
            await self.transport.open()
            await self._after_open()

    async def _after_open(self) -> None:
        """A hook for one-time capability checks (label counter, completion replies)."""

    async def aclose(self) -> None:
        async with self.lock:
            await self.transport.aclose()

    async def _ensure_open(self) -> None:
        # Reconnect lazily, only at the start of an operation: never in the middle of a job's bytes.
        if not self.transport.is_open:
            await self.transport.open()
            await self._after_open()

    async def probe(self) -> DeviceStatus:
        async with self.lock:
            try:
                await self._ensure_open()
                if not self.transport.can_read:
                    return DeviceStatus(DeviceState.UNKNOWN, ("one-way link: status cannot be read",))
                status = await self._read_status()
            except DriverError as exc:
                return DeviceStatus(DeviceState.OFFLINE, (str(exc),))
            return status or DeviceStatus(DeviceState.UNKNOWN, (NO_ANSWER,))

    @abc.abstractmethod
    async def _read_status(self) -> DeviceStatus | None:
        """Ask for and parse the status; ``None`` when the printer stayed silent. The lock is held."""

    def render(self, badge: Badge) -> bytes:
        return render_for(self.language, badge, self.label, self.template_text)

    template_text: str | None = None
