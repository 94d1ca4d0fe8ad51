"""The agent's side of its printer: drawing off the event loop, a backstop on every print, clearing the buffer.

The driver is the one owner of the device's I/O (it serialises its own operations, drivers/languages/base.py);
these only add what the agent needs around it: the CPU work of drawing in a thread, and a bound on a driver that
hangs.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

from core.logs import kv
from drivers.base import Badge, DeviceStatus, Driver, DriverError, Handed, Outcome, PrintResult, RenderError

log = logging.getLogger("agent")

T = TypeVar("T")

BACKSTOP = 5.0  # seconds past the driver's own print timeout before the agent gives up on it


async def render(driver: Driver, badge: Badge) -> bytes:
    """The badge drawn for the printer.

    Raises:
        RenderError: it cannot be drawn, for whatever reason. Anything drawing raises (Pillow's DecompressionBombError
            or MemoryError, a ValueError from a font) comes from this badge and its layout, not from the agent: as a
            RenderError the job is dead-lettered once with the reason, where an uncaught one would end the agent and
            hand the same badge to a peer after the next, again and again.
    """
    try:
        if driver.render_is_cheap:
            return driver.render(badge)
        return await asyncio.to_thread(driver.render, badge)  # drawing a badge is CPU work: off the loop
    except RenderError:
        raise
    except Exception as exc:
        raise RenderError(f"the badge cannot be drawn: {type(exc).__name__}: {exc}") from exc


async def print_badge(driver: Driver, data: bytes, badge: Badge, timeout: float) -> PrintResult:
    """Print one badge; a driver that neither answers nor fails within its timeout (plus a backstop) is UNKNOWN."""
    try:
        # The driver watches its own timeout; ours is the backstop for a driver that hangs.
        async with asyncio.timeout(timeout + BACKSTOP):
            return await driver.print(data, badge, timeout)
    except TimeoutError:
        return PrintResult(Outcome.UNKNOWN, f"printer gave no outcome within {timeout + BACKSTOP:g} s")
    except DriverError as exc:
        return PrintResult(Outcome.UNKNOWN, f"printer link failed while sending: {exc}")


async def clear_buffer(driver: Driver, io_timeout: float) -> None:
    """Clear the printer's buffer before a badge leaves it, so it never prints a job handed to a peer."""
    try:
        async with asyncio.timeout(io_timeout + 2):
            await driver.cancel()
    except (DriverError, TimeoutError) as exc:
        log.error("could not clear the printer's buffer; it may print a released badge later", extra=kv(error=exc))


async def _ignore(status: DeviceStatus) -> None:
    return None


class Printer:
    """The driver with the agent's bounds around it (the print timeout and its backstop, the I/O timeout), and who
    hears what the printer reports about itself while printing (the device monitor, agent/device.py)."""

    def __init__(
        self,
        driver: Driver,
        print_timeout: float,
        io_timeout: float,
        observe: Callable[[DeviceStatus], Awaitable[None]] = _ignore,
    ) -> None:
        self.driver = driver
        self.print_timeout = print_timeout
        self.io_timeout = io_timeout
        self.observe = observe

    async def print(self, data: bytes, badge: Badge) -> PrintResult:
        return await print_badge(self.driver, data, badge, self.print_timeout)

    async def clear_buffer(self) -> None:
        await clear_buffer(self.driver, self.io_timeout)

    # -- the badge waiting at the printer (``driver.holds`` 2; agent/pull.py, ``_print_held``) -------------------

    async def hand(self, data: bytes, badge: Badge) -> Handed | PrintResult:
        """Hand the printer a badge to hold; a driver that hangs or whose link fails gives ``unknown``."""
        return await _bounded(self.driver.hand(data, badge), self.io_timeout + BACKSTOP, "handing the badge over")

    async def outcome(self, handed: Handed) -> PrintResult:
        return await _bounded(
            self.driver.outcome(handed, self.print_timeout), self.print_timeout + BACKSTOP, "printing"
        )

    async def withdraw(self, handed: Handed) -> PrintResult:
        return await _bounded(self.driver.withdraw(handed), self.io_timeout + BACKSTOP, "withdrawing the badge")


async def _bounded(step: Awaitable[T], seconds: float, what: str) -> T | PrintResult:
    """One step of a handed badge with the agent's backstop: a step that hangs or fails is ``unknown``."""
    try:
        async with asyncio.timeout(seconds):
            return await step
    except TimeoutError:
        return PrintResult(Outcome.UNKNOWN, f"printer gave no answer {what} within {seconds:g} s")
    except DriverError as exc:
        return PrintResult(Outcome.UNKNOWN, f"printer link failed {what}: {exc}")
