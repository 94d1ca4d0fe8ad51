"""The sweep: reclaim the work of peers that stopped beating. One agent per half interval sweeps (a short lease)."""

from __future__ import annotations

import asyncio
import logging
import time

from redis.exceptions import RedisError

from agent.config import TimingConfig
from agent.heartbeat import Heartbeat
from core.logs import kv
from protocol.replies import ReclaimKind
from protocol.store import Store

log = logging.getLogger("agent")


class Sweep:
    def __init__(self, store: Store, me: str, timing: TimingConfig, heartbeat: Heartbeat, stopping: asyncio.Event):
        self.store = store
        self.me = me
        self.timing = timing
        self.heartbeat = heartbeat
        self.stopping = stopping
        self.reclaimed = 0  # dead peers whose work this agent reclaimed; written by ``run`` only

    async def run(self) -> None:
        """Sweep twice per heartbeat interval until cancelled.

        Only an agent that has itself beaten without a break for the whole dead-after window sweeps: after a Redis
        restart every heartbeat looks old at once, and live peers need that long to beat again (no reclaim storm).
        """
        # Twice per heartbeat interval: a silent peer is found at most half an interval after its dead-after window
        # ends, so detection stays within dead-after + 1 s even when sweeps and deaths fall badly (bench/scale.py).
        interval = self.timing.heartbeat_interval / 2
        dead_ms = int(self.timing.dead_after * 1000)
        while True:
            await asyncio.sleep(interval)
            since = self.heartbeat.beating_since
            if since is None or time.monotonic() - since < self.timing.dead_after or self.stopping.is_set():
                continue
            try:
                for victim in await self.store.sweep(self.me, dead_ms, int(interval * 1000)):
                    if victim == self.me:
                        continue
                    result = await self.store.reclaim(victim, self.me, dead_ms)
                    if result.kind is ReclaimKind.RECLAIMED:
                        self.reclaimed += 1
                        log.warning(
                            "reclaimed the work of a dead agent",
                            extra=kv(victim=victim, held=result.held, pinned=result.pinned),
                        )
            except (RedisError, OSError) as exc:
                log.warning("sweep failed", extra=kv(error=exc))
