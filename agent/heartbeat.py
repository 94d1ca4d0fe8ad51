"""The heartbeat: tell Redis this printer is alive, once a second, and learn what the venue says back.

Each beat publishes the agent's health (protocol/state.py) and refreshes its place in the venue's heartbeat set; the
answer says whether peers had declared this agent dead meanwhile (it was frozen or cut off) and whether an operator
drained it. What the beats learn is kept here, written by ``run`` only, and read by the gate (agent/gate.py), the
sweep (agent/sweep.py) and the snapshot:

- ``last_beat_ok``: when the last acknowledged beat was sent: the lease (``lease_ok``);
- ``beating_since``: since when beats are acknowledged without a break (None while they fail);
- ``declared_dead``: how often Redis answered that peers had declared us dead (each one means recovering);
- ``drained``: an operator ordered this printer out of service;
- ``redis_errors``: beats that failed;
- ``venue_fault``: a Redis error retrying cannot fix (its function missing from Redis, a refused command), named in
  the health until a beat succeeds (agent/venue_fault.py).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from redis.exceptions import RedisError

from agent.config import TimingConfig
from agent.venue_fault import VenueFaultBackoff, venue_fault_name
from core.logs import kv
from protocol.store import Store

log = logging.getLogger("agent")


class Heartbeat:
    def __init__(
        self,
        store: Store,
        me: str,
        timing: TimingConfig,
        health: Callable[[], dict[str, Any]],
        alive: Callable[[], None] = lambda: None,
    ) -> None:
        """``health``: the JSON each beat publishes; ``alive``: called as each beat starts (the watchdog's input)."""
        self.store = store
        self.me = me
        self.timing = timing
        self.health = health
        self.alive = alive
        self.last_beat_ok: float | None = None  # monotonic time the last acknowledged beat was sent
        self.beating_since: float | None = None
        self.declared_dead = 0
        self.drained = False
        self.redis_errors = 0
        self.venue_fault = VenueFaultBackoff()
        self.left = False  # set by the shutdown once it hands back: no beat may be published after it

    def lease_ok(self) -> bool:
        """True while our last heartbeat is recent enough that no peer can have declared us dead.

        A frozen or cut-off agent finds its lease expired when it wakes and does not print; its next beat then tells
        it whether peers took its work.
        """
        if self.last_beat_ok is None:
            return False
        margin = self.timing.heartbeat_interval
        return time.monotonic() - self.last_beat_ok < self.timing.dead_after - margin

    async def run(self) -> None:
        """Beat every ``heartbeat_interval`` until the shutdown sets ``left``."""
        interval = self.timing.heartbeat_interval
        ttl_ms = int(interval * (self.timing.dead_after_misses + 2) * 1000)
        first = True
        while not self.left:
            started = time.monotonic()
            self.alive()
            try:
                # asyncio.timeout, not wait_for: on 3.11 wait_for can swallow the shutdown's cancel (see
                # agent/gate.py, sleep_unless).
                async with asyncio.timeout(interval * 2):
                    beat = await self.store.beat(self.me, self.health(), ttl_ms, first)
            except (RedisError, OSError, TimeoutError) as exc:
                fault = venue_fault_name(exc) if isinstance(exc, RedisError) else None
                if fault is not None and isinstance(exc, RedisError):
                    self.venue_fault.failed(fault, exc)  # named in health, logged once per interval; beats go on
                elif self.beating_since is not None:
                    log.warning("heartbeat failed; retrying every %.1f s", interval, extra=kv(error=exc))
                self.beating_since = None
                self.redis_errors += 1
            else:
                self.venue_fault.clear()
                first = False
                self.last_beat_ok = started
                if self.beating_since is None:
                    self.beating_since = started
                    log.info("heartbeat ok", extra=kv(printer=self.me))
                if beat.was_declared_dead:
                    log.error("peers declared this agent dead (frozen or cut off); rejoining cleanly")
                    self.declared_dead += 1
                drained = beat.order == "drain"
                if drained != self.drained:
                    log.warning("drained by an operator" if drained else "back in service", extra=kv(printer=self.me))
                    self.drained = drained
            await asyncio.sleep(max(0.0, interval - (time.monotonic() - started)))
