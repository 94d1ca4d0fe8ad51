"""The agent end to end on real printer protocols: ZPL, Brother QL and ESC/POS emulators over TCP and a serial pty."""

from __future__ import annotations

from pathlib import Path

import pytest
from redis.asyncio import Redis

from agent.protocol.keys import Keys
from agent.protocol.store import Store
from agent.redis_server import RedisServer
from drivers.emulators import EMULATORS
from drivers.emulators.fronts import PtyFront, TcpFront
from tests.core.test_agent import _eq, enqueue_many, printed_count, running_agent, wait_until


@pytest.mark.parametrize(
    ("language", "transport"), [("zpl", "tcp"), ("zpl", "serial"), ("brother_ql", "tcp"), ("escpos", "serial")]
)
async def test_agent_prints_and_confirms_on_an_emulated_printer(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str, language: str, transport: str
) -> None:
    printer = EMULATORS[language]("desk-1", print_time=0.05)
    await printer.start()
    front: TcpFront | PtyFront
    if transport == "tcp":
        front = TcpFront(printer, "127.0.0.1", 0)
        host, port = await front.start()
        link: dict[str, object] = {"transport": "tcp", "host": host, "port": port}
    else:
        front = PtyFront(printer)
        link = {"transport": "serial", "device": await front.start(), "baudrate": 115200}
    driver = {"language": language, "io_timeout": 2.0, "print_timeout": 20.0, **link}
    store = Store(redis, venue)
    try:
        ids = await enqueue_many(store, 3, f"{language}-")
        async with running_agent(tmp_path, venue, redis_server.url, printer__driver=driver):
            await wait_until(lambda: _eq(printed_count(redis, venue), 3), timeout=60)
    finally:
        await front.stop()
        await printer.stop()
    # The emulator read each badge's QR code back from the graphic it received.
    assert sorted(entry["attendee_id"] for entry in printer.printed()) == sorted(ids)
    k = Keys(venue)
    for job_id in ids:
        assert await redis.get(k.done(job_id)) == b"desk-1"
