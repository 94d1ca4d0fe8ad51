"""Watches the agent's own printer: probes it between jobs and decides when it is down and when it is back.

A single failed probe pauses pulling until the next good one (never send a badge to a printer that just said it
is out of labels), but only ``down_after`` failures in a row declare the device down, which hands its work to the
peers: a two-second network blip must not reroute the backlog (docs/venue.md, "When a printer dies"). A down
printer rejoins after ``up_after`` good probes in a row, plus a test print where configured.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from drivers.base import DeviceState, DeviceStatus, Driver, DriverError

log = logging.getLogger(__name__)

Hook = Callable[[DeviceStatus], Awaitable[None]]


class DeviceMonitor:
    def __init__(
        self,
        driver: Driver,
        probe_interval: float,
        down_after: int,
        up_after: int,
        on_down: Hook,
        on_up: Hook,
        test_print: Callable[[], Awaitable[bool]] | None = None,
    ) -> None:
        self.driver = driver
        self.probe_interval = probe_interval
        self.down_after = down_after
        self.up_after = up_after
        self.on_down = on_down
        self.on_up = on_up
        self.test_print = test_print
        self.down = False
        self.status = DeviceStatus(DeviceState.UNKNOWN, ("not probed yet",))
        self.failures = 0
        self.successes = 0
        self.opened = False
        #: monotonic time of the first of the faulted readings in a row (None after a good one): the fault's age,
        #: which /metrics exports so an alert can wait for a fault nobody clears
        self.faulted_since: float | None = None
        self.ready = asyncio.Event()  # set while the printer may be sent a badge
        # Readings come from two tasks (the probe task and the pull loop, with a print's outcome) and ``observe``
        # awaits inside (the down and up hooks, a test print): one reading is folded in at a time, whole, in the
        # order they arrive (asyncio.Lock wakes its waiters first come, first served). A lock rather than one owner
        # task fed by a queue: each caller needs its reading applied before it goes on (the pull loop reads
        # ``ready`` next, the agent's start its first probe), which a queue would need a reply for as well.
        self._observing = asyncio.Lock()

    async def probe_once(self) -> DeviceStatus:
        """Open the printer if needed and ask its status. Each driver call is exclusive by itself (drivers/base.py):
        a badge sent between two of them finds the link open, or fails as a link error that recovery handles."""
        if not self.opened:
            try:
                await self.driver.open()
                self.opened = True
            except DriverError as exc:
                return DeviceStatus(DeviceState.OFFLINE, (str(exc),))
        status = await self.driver.probe()
        if status.state is DeviceState.OFFLINE:
            # Reopen next time: a printer that was power-cycled needs a fresh connection.
            await self.driver.aclose()
            self.opened = False
        return status

    async def observe(self, status: DeviceStatus) -> None:
        """Fold one reading (from a probe or from a print's outcome) into the up/down decision, after any reading
        already being folded in: the counts, ``down``, ``ready`` and the hooks see one reading at a time. The hooks
        and the test print must not observe themselves (they would wait for their own reading)."""
        async with self._observing:
            await self._apply(status)

    async def _apply(self, status: DeviceStatus) -> None:
        self.status = status
        good = not status.faulted
        if good:
            self.successes += 1
            self.failures = 0
            self.faulted_since = None
        else:
            if self.faulted_since is None:
                self.faulted_since = time.monotonic()
            self.failures += 1
            self.successes = 0
            self.ready.clear()
            if self.failures == 1:
                log.warning("printer status: %s", status.describe())
        if not self.down and self.failures >= self.down_after:
            self.down = True
            log.error("printer declared down after %d failed probes: %s", self.failures, status.describe())
            await self.on_down(status)
        elif self.down and self.successes >= self.up_after:
            if self.test_print is not None and not await self.test_print():
                self.successes = 0
                return
            self.down = False
            log.warning("printer is back after %d good probes", self.successes)
            await self.on_up(status)
        if good and not self.down:
            self.ready.set()

    async def run(self, busy: Callable[[], bool]) -> None:
        """The probe task. Skips probing while a badge streams: the print itself reports the device's state."""
        while True:
            if not busy():
                await self.observe(await self.probe_once())
            await asyncio.sleep(self.probe_interval)
