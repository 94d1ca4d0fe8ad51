"""The agent end to end on real printer protocols: ZPL, Brother QL and ESC/POS emulators over TCP and a serial pty."""

from __future__ import annotations

from pathlib import Path

import pytest
from redis.asyncio import Redis

from agent.runtime import Agent
from cli.redis_server import RedisServer
from drivers.emulators import EMULATORS
from drivers.emulators.fronts import PtyFront, TcpFront
from protocol.keys import Keys
from protocol.store import Store
from tests.support.agents import enqueue_many, eq, printed_count, running_agent
from tests.support.metrics import samples as metric_samples
from tests.support.waiting import wait_until


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
            await wait_until(lambda: eq(printed_count(redis, venue), 3), timeout=60)
    finally:
        await front.stop()
        await printer.stop()
    # The emulator read each badge's QR code back from the graphic it received.
    assert sorted(entry["attendee_id"] for entry in printer.printed()) == sorted(ids)
    k = Keys(venue)
    for job_id in ids:
        assert await redis.get(k.done(job_id)) == b"desk-1"


def _drawn_ahead(agent: Agent, result: str) -> float:
    return metric_samples(agent.metrics.text()[0].decode()).get(("badge_drawn_ahead_total", (("result", result),)), 0.0)


async def test_the_next_badge_is_drawn_while_one_prints_and_a_wrong_guess_is_never_printed(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    """While A prints, the agent draws B (the pool's next). B is cancelled before it is taken: C comes next, and
    the printer must get C's own drawing, never B's. Later badges are drawn while the one before them prints."""
    printer = EMULATORS["zpl"]("desk-1", print_time=0.6)
    await printer.start()
    front = TcpFront(printer, "127.0.0.1", 0)
    host, port = await front.start()
    driver = {"language": "zpl", "transport": "tcp", "host": host, "port": port, "io_timeout": 2.0}
    store = Store(redis, venue)
    try:
        a, b, c, *rest = await enqueue_many(store, 6, "ahead-")
        async with running_agent(tmp_path, venue, redis_server.url, printer__driver=driver) as agent:
            await wait_until(lambda: agent.pull.printing == a, timeout=30)
            await wait_until(agent.pull.ahead.has_drawing)  # B, drawn while A prints
            assert (await store.cancel(b, "test"))[0] == "cancelled"
            await wait_until(lambda: eq(printed_count(redis, venue), 5), timeout=60)
            # B's drawing was not C's: wasted, and C drawn at its turn. The rest were drawn near the end of the
            # print before them (one drawing too late is drawn at its turn: it only costs time).
            assert _drawn_ahead(agent, "wasted") == 1
            assert _drawn_ahead(agent, "used") >= 1
    finally:
        await front.stop()
        await printer.stop()
    # The emulator read each badge's QR code back from the graphic it received: all but B, in order.
    assert [entry["attendee_id"] for entry in printer.printed()] == [a, c, *rest]
