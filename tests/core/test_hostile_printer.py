"""A hostile "printer" on the venue network, at the address an agent prints to (loopback here): one that takes the
connection and never answers, one that floods it with garbage, one that trickles bytes that never make a reply.
Each is declared down within seconds (its health says so for the board and the peers), and no badge is confirmed
on it or lost."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from redis.asyncio import Redis

from cli.redis_server import RedisServer
from protocol.keys import Keys
from protocol.store import Store
from tests.support.agents import enqueue_many, running_agent
from tests.support.waiting import wait_until

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def _silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while await reader.read(65536):  # takes every byte, answers none
        pass


async def _flood(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    # Framing bytes among the noise (ZPL's STX/ETX), so a reader that trusts frames meets some too.
    noise = os.urandom(64 * 1024) + b"\x02garbage\x03" * 100
    while True:
        writer.write(noise)
        await writer.drain()


async def _trickle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    # A reply that starts and never ends: one byte every 50 ms, well inside any per-read timeout.
    writer.write(b"\x02")
    while True:
        writer.write(b"0")
        await writer.drain()
        await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def hostile(handler: Handler) -> AsyncIterator[int]:
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, asyncio.CancelledError):
            await handler(reader, writer)
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(server.wait_closed(), 5)


@pytest.mark.parametrize("behaviour", [_silent, _flood, _trickle], ids=["silent", "flood", "trickle"])
async def test_a_hostile_printer_is_marked_down_within_seconds(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str, behaviour: Handler
) -> None:
    store = Store(redis, venue)
    k = Keys(venue)
    ids = await enqueue_many(store, 2, "hostile-", printer="desk-1")
    async with hostile(behaviour) as port:
        driver = {"language": "zpl", "transport": "tcp", "host": "127.0.0.1", "port": port, "io_timeout": 0.5}
        async with running_agent(tmp_path, venue, redis_server.url, printer__driver=driver) as agent:

            async def reported_down() -> bool:
                health = json.loads(await redis.get(k.health("desk-1")) or b"{}")
                return bool(agent.device.down and health.get("state") == "device_down")

            # Within seconds: three failed probes (down_after_failures) of at most io_timeout each, plus the start.
            await wait_until(reported_down, timeout=15)
            assert agent.printed == 0
    # Nothing was confirmed on it, and its badges still wait for a printer (handed on, or kept): none lost.
    for job_id in ids:
        assert await redis.exists(k.done(job_id)) == 0
        assert await redis.hget(k.job(job_id), "state") == b"queued"
    waiting = await redis.lrange(k.pool, 0, -1) + await redis.lrange(k.queue("desk-1"), 0, -1)
    assert sorted(w.decode() for w in waiting) == sorted(ids)
