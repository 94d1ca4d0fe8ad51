"""What every link to a printer offers the printer languages: explicit open/close, write, and a bounded read.

A read that times out returns ``b""`` (silence, which the languages treat as "possibly faulted", never "ready");
a broken link raises :class:`drivers.base.DriverError`. Nothing here retries a write: a half-sent badge must be
judged by the language layer, not silently sent twice.
"""

from __future__ import annotations

import abc
import time
from collections.abc import Callable


class Transport(abc.ABC):
    """One link to one device. Not safe for concurrent use: the driver above owns it behind one lock."""

    description: str = ""
    #: False when the link has no way back from the printer (no bulk IN endpoint, for instance).
    can_read: bool = True

    @property
    @abc.abstractmethod
    def is_open(self) -> bool: ...

    @abc.abstractmethod
    async def open(self) -> None:
        """Connect. Raises DriverError with a message that names the device."""

    @abc.abstractmethod
    async def aclose(self) -> None:
        """Disconnect. Safe to call twice and after a failed open."""

    @abc.abstractmethod
    async def write(self, data: bytes) -> None:
        """Send all of ``data`` within the io timeout, or raise DriverError (some of it may have gone out)."""

    @abc.abstractmethod
    async def read(self, within: float) -> bytes:
        """Return what arrives within ``within`` seconds (at least one byte), or ``b""`` on silence."""

    async def read_ready(self) -> bytes:
        """What has already arrived, without waiting for more. Links that cannot tell wait briefly (20 ms)."""
        return await self.read(0.02)

    async def discard_input(self) -> bool:
        """Drop stale replies (an answer that came after we stopped waiting must not be read as a new one); True
        when there was something to drop.

        Only what has already arrived is dropped: every query whose answer can be late is bounded by a read
        timeout, and the answer the languages wait for next is told apart by its content (``drivers/languages``).
        """
        dropped = False
        while self.is_open and await self.read_ready():
            dropped = True
        return dropped

    async def ask(self, question: bytes, complete: Callable[[bytes], bool], within: float) -> bytes:
        """Send a question and read its answer (``read_until``), after dropping what an earlier question's late
        answer left behind: that is never this one's."""
        await self.discard_input()
        await self.write(question)
        return await self.read_until(complete, within)

    async def read_until(self, complete: Callable[[bytes], bool], within: float) -> bytes:
        """Read until ``complete(buffer)`` is true or ``within`` seconds pass; returns what was read either way."""
        deadline = time.monotonic() + within
        buf = b""
        while not complete(buf):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            buf += await self.read(left)
        return buf
