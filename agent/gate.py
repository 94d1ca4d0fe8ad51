"""The gate: may this printer take a badge now? One rule, read by the pull loop before a take and after one.

It reads facts other parts write and writes none of them: ``stopping`` (the shutdown), the lease and the drain order
(the heartbeat, agent/heartbeat.py), whether the printer can take a badge (the device monitor, agent/device.py), and
how often the Redis master moved (the connection, protocol/connection.py). Its own state is what recovery last
settled (``settled``): a master change or a "peers declared you dead" since then is lost track, which only a
recovery clears.
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Callable
from dataclasses import dataclass

from agent.heartbeat import Heartbeat


class Blocked(enum.Enum):
    """Why this printer may not take a badge now (``Gate.blocked``)."""

    STOPPING = "stopping"
    LOST_TRACK = "lost track"  # the master moved or peers declared us dead: recover before anything else
    NO_LEASE = "no lease"  # our heartbeat is too old: a peer may be taking our work
    DRAINED = "drained by an operator"
    NOT_READY = "printer not ready"


@dataclass(frozen=True)
class Track:
    """The counters that tell whether we lost track of our in-flight list, as read at one moment."""

    master_changes: int
    declared_dead: int


class Gate:
    def __init__(
        self,
        stopping: asyncio.Event,
        heartbeat: Heartbeat,
        printer_ready: asyncio.Event,
        master_changes: Callable[[], int] = lambda: 0,
    ) -> None:
        self.stopping = stopping
        self.heartbeat = heartbeat
        self.printer_ready = printer_ready
        self.master_changes = master_changes
        self._settled = Track(0, 0)  # written by ``settled`` only (the pull loop, after a recovery)

    def track(self) -> Track:
        return Track(self.master_changes(), self.heartbeat.declared_dead)

    def settled(self, track: Track) -> None:
        """Recovery settled the in-flight list as of ``track`` (read before it started)."""
        self._settled = track

    def lost_track(self) -> bool:
        """True when the master moved (Sentinel) or peers declared us dead since the last recovery."""
        return self.track() != self._settled

    def lease_ok(self) -> bool:
        return self.heartbeat.lease_ok()

    def blocked(self, drained_by_take: bool = False) -> Blocked | None:
        """The one "may this printer take another badge now" rule; None when it may.

        ``drained_by_take``: the last take answered that an operator drained this printer (before the heartbeat did).
        """
        if self.stopping.is_set():
            return Blocked.STOPPING
        if self.lost_track():
            return Blocked.LOST_TRACK
        if not self.heartbeat.lease_ok():
            return Blocked.NO_LEASE
        if self.heartbeat.drained or drained_by_take:
            return Blocked.DRAINED
        if not self.printer_ready.is_set():
            return Blocked.NOT_READY
        return None

    async def sleep(self, seconds: float) -> None:
        """Sleep up to ``seconds``, waking at once when a stop is asked."""
        await sleep_unless(self.stopping, seconds)

    async def wait_ready(self, timeout: float) -> None:
        """Wait up to ``timeout`` for the printer to be ready, waking at once when a stop is asked."""
        ready = asyncio.create_task(self.printer_ready.wait())
        stop = asyncio.create_task(self.stopping.wait())
        try:
            await asyncio.wait([ready, stop], timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:  # also when the shutdown cancels us here: no waiter outlives the loop
            ready.cancel()
            stop.cancel()


async def sleep_unless(event: asyncio.Event, seconds: float) -> None:
    """Sleep up to ``seconds``, waking at once when ``event`` is set.

    ``asyncio.wait`` rather than ``wait_for``: on Python 3.11 ``wait_for`` swallows a cancellation that arrives as the
    awaited thing completes (fixed in 3.12), and a task that ignores its cancel hangs the shutdown.
    """
    waiter = asyncio.ensure_future(event.wait())
    try:
        await asyncio.wait({waiter}, timeout=seconds)
    finally:
        waiter.cancel()
