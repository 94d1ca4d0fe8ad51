"""An agent drawing a badge never stops on a drawing failure: whatever drawing raises, and a badge that cannot be
drawn in time, is that job's fault, dead-lettered once with the reason while the printer goes on.

The layouts are written into the venue's Redis as a hostile or older tool could, without `layout set`'s checks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from redis.asyncio import Redis

from cli.redis_server import RedisServer
from drivers.emulators.fronts import TcpFront
from drivers.emulators.zpl import ZplPrinter
from layouts.draw import DRAW_SECONDS
from layouts.model import parse_layout
from layouts.store import LayoutStore
from protocol.jobs import parse_job
from protocol.keys import Keys
from protocol.store import Store
from tests.support.agents import eq, running_agent
from tests.support.waiting import wait_until

NAME = {"type": "text", "text": "{name}", "x": 5, "y": 5, "w": 91.6, "h": 20, "font_size": 36}


async def store_unchecked(
    redis: Redis, venue: str, name: str, elements: list[dict[str, Any]], files: dict[str, bytes]
) -> None:
    """A layout stored as it is, past `layout set`'s bounds (parse_layout's strict checks off)."""
    doc = {"size": {"width_mm": 101.6, "height_mm": 152.4}, "elements": [NAME, *elements]}
    await LayoutStore(redis, venue).set(name, [parse_layout(doc, name, files, strict=False)], by="test")


async def enqueue(store: Store, attendee: str, layout: str | None) -> str:
    job = parse_job({"attendee_id": attendee, "name": f"Person {attendee}", **({"layout": layout} if layout else {})})
    await store.enqueue(job.job_id, job.payload(), None)
    return job.job_id


async def run_jobs(tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str, layout: str) -> dict[str, str]:
    """One job in ``layout``, then one in the built-in design, on an agent of an emulated Zebra: the errors of the
    dead-lettered jobs, once the second has printed."""
    store, k = Store(redis, venue), Keys(venue)
    bad = await enqueue(store, "bad", layout)
    good = await enqueue(store, "good", None)
    printer = ZplPrinter("desk-1", print_time=0.05)
    await printer.start()
    front = TcpFront(printer)
    host, port = await front.start()
    driver = {"language": "zpl", "transport": "tcp", "host": host, "port": port, "io_timeout": 1.0}
    try:
        async with running_agent(tmp_path, venue, redis_server.url, printer__driver=driver):
            await wait_until(lambda: eq(redis.exists(k.done(good)), 1), timeout=60)
            await wait_until(lambda: eq(redis.llen(k.dlq), 1), timeout=60)
    finally:
        await front.stop()
        await printer.stop()
    assert [p["job"] for p in printer.printed()] == [good]
    assert await redis.lrange(k.dlq, 0, -1) == [bad.encode()]
    return {bad: (await redis.hget(k.job(bad), "error") or b"").decode()}


async def test_an_exception_from_drawing_dead_letters_the_job_and_the_agent_goes_on(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    # A PNG that Pillow cannot read (`layout set` would have refused it): drawing raises UnidentifiedImageError.
    logo = {"type": "image", "src": "logo.png", "x": 20, "y": 40, "w": 60, "h": 20}
    await store_unchecked(redis, venue, "broken", [logo], {"logo.png": b"\x89PNG\r\n\x1a\n" + b"\0" * 64})
    (error,) = (await run_jobs(tmp_path, redis, redis_server, venue, "broken")).values()
    assert "cannot be drawn" in error and "UnidentifiedImageError" in error, error


async def test_a_badge_that_cannot_be_drawn_in_time_is_dead_lettered(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    # Sixty texts of 2000 characters (the most one element draws), each shrunk, wrapped and cut in a box too small:
    # a fifth of a second each or more, over ten seconds in all, drawn in one badge.
    texts = [
        {"type": "text", "text": f"{i:02} " + "Wide words " * 181, "x": 5, "y": 30 + (i % 20) * 5, "w": 91.6,
         "h": 5, "font_size": 12, "max_lines": 2}
        for i in range(60)
    ]  # fmt: skip
    await store_unchecked(redis, venue, "slow", texts, {})
    (error,) = (await run_jobs(tmp_path, redis, redis_server, venue, "slow")).values()
    assert f"took over {DRAW_SECONDS:g} s to draw" in error, error
