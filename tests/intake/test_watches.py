"""SSE streams and ?wait= long-polls: bounded, fed by one reader of the venue's events, and let go when the client is.

Real redis-server, real HTTP (aiohttp's test server, or a session of its own where more than 100 connections are
needed).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from redis.asyncio import Redis

from cli.redis_server import RedisServer
from intake.context import INTAKE, Intake
from intake.hub import Hub
from protocol.keys import Keys
from protocol.store import Store
from tests.support.agents import print_it
from tests.support.intake import Desk, start_desk

PROBLEM = "application/problem+json"


@pytest.fixture
async def tight(tmp_path: Path, redis_server: RedisServer, venue: str) -> AsyncIterator[Desk]:
    """An intake with small watch limits and a short keep-alive."""
    limits = "limits: {watch_per_token: 3, watch_total: 4, keepalive: 0.3, rate: 1000, burst: 1000}\n"
    d, redis = await start_desk(tmp_path, venue, redis_server.url, limits)
    try:
        yield d
    finally:
        await d.client.close()
        await redis.aclose()


def intake_of(desk: Desk) -> Intake:
    app = desk.client.server.app
    assert app is not None
    return app[INTAKE]


async def until(check: Any, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.05)


async def job(desk: Desk, attendee: str, role: str = "desk") -> str:
    made = await desk.client.post("/v1/jobs", json={"attendee_id": attendee, "name": "N"}, headers=desk.auth(role))
    assert made.status == 201
    return str((await made.json())["job_id"])


async def test_wait_on_a_final_job_answers_at_once(desk: Desk, redis: Redis, venue: str) -> None:
    await job(desk, "f1")
    await job(desk, "f2")
    store = Store(redis, venue)
    await print_it(store, "p1", "f1")
    await store.cancel("f2", "staff")
    for job_id, state in (("f1", "printed"), ("f2", "cancelled")):
        started = time.monotonic()
        resp = await desk.client.get(f"/v1/jobs/{job_id}?wait=25", headers=desk.auth("desk"))
        assert resp.status == 200 and (await resp.json())["state"] == state
        assert time.monotonic() - started < 2.0


async def test_streams_and_long_polls_are_bounded_per_token_and_in_total(tight: Desk) -> None:
    job_id = await job(tight, "b1")
    opened = [await tight.client.get(f"/v1/jobs/{job_id}/events", headers=tight.auth("desk")) for _ in range(3)]
    assert all(r.status == 200 for r in opened)
    over = await tight.client.get(f"/v1/jobs/{job_id}?wait=20", headers=tight.auth("desk"))
    assert over.status == 429 and over.content_type == PROBLEM and "Retry-After" in over.headers
    other = await tight.client.get(f"/v1/jobs/{job_id}/events", headers=tight.auth("staff"))
    assert other.status == 200  # another token has its own share ...
    full = await tight.client.get(f"/v1/jobs/{job_id}/events", headers=tight.auth("viewer"))
    assert full.status == 503 and "Retry-After" in full.headers  # ... until the process holds its total
    # A plain read is no watch: it is answered whatever the watches are.
    assert (await tight.client.get(f"/v1/jobs/{job_id}", headers=tight.auth("viewer"))).status == 200
    for resp in [*opened, other]:
        resp.close()
    await until(lambda: intake_of(tight).watches.count == 0)


async def test_a_gone_sse_client_is_noticed_within_seconds_without_any_event(tight: Desk) -> None:
    job_id = await job(tight, "g1")
    resp = await tight.client.get(f"/v1/jobs/{job_id}/events", headers=tight.auth("desk"))
    assert resp.status == 200
    await until(lambda: intake_of(tight).watches.count == 1)
    resp.close()
    await until(lambda: intake_of(tight).watches.count == 0, timeout=3.0)


async def test_a_long_poll_stops_when_its_client_leaves_and_does_not_poll_redis(
    tight: Desk, redis: Redis, venue: str
) -> None:
    job_id = await job(tight, "l1")
    await redis.config_resetstat()
    waiting = asyncio.create_task(tight.client.get(f"/v1/jobs/{job_id}?wait=30", headers=tight.auth("desk")))
    await until(lambda: intake_of(tight).watches.count == 1)
    await asyncio.sleep(2.0)  # the behaviour under test: two seconds of a held long-poll, Redis's counts over them
    stats = await redis.info("commandstats")
    reads = sum(stats.get(f"cmdstat_{c}", {}).get("calls", 0) for c in ("hget", "hmget", "get"))
    assert reads <= 4, stats  # the job read once or twice when the wait began, not 20 times a second
    waiting.cancel()  # the client gives up: its connection closes
    await until(lambda: intake_of(tight).watches.count == 0, timeout=3.0)


async def test_one_reader_feeds_every_stream_and_long_poll(
    tmp_path: Path, redis_server: RedisServer, venue: str
) -> None:
    limits = "limits: {watch_per_token: 400, watch_total: 400, rate: 10000, burst: 10000}\n"
    desk, redis = await start_desk(tmp_path, venue, redis_server.url, limits)
    session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))
    base = str(desk.client.make_url("/"))
    try:
        job_id = await job(desk, "r1")
        admin = Redis.from_url(redis_server.url)
        clients_before = (await admin.info("clients"))["connected_clients"]
        kiosk_job = await job(desk, "r2", role="kiosk")
        streams = [
            await session.get(f"{base}v1/jobs/{kiosk_job}/events", headers=desk.auth("kiosk")) for _ in range(120)
        ]
        assert {s.status for s in streams} == {200}
        polls = [
            asyncio.create_task(session.get(f"{base}v1/jobs/{kiosk_job}?wait=20", headers=desk.auth("kiosk")))
            for _ in range(150)
        ]
        await until(lambda: intake_of(desk).watches.count == 270, timeout=20)
        # A desk is answered at once.
        started = time.monotonic()
        for _ in range(10):
            assert (await desk.client.get(f"/v1/jobs/{job_id}", headers=desk.auth("desk"))).status == 200
        assert time.monotonic() - started < 2.0
        # Connections: at most the two lanes' worth (opened while the watches read their job once), never one a watch.
        limits = intake_of(desk).config.limits
        grown = (await admin.info("clients"))["connected_clients"] - clients_before
        assert grown <= limits.desk_lane + limits.public_lane + 1 < 270
        # One event reaches every stream and long-poll.
        store = Store(redis, venue)
        await print_it(store, "p1", job_id)  # the desk's job, first in the pool
        await store.take("p1")
        await store.begin("p1", "Hall A", kiosk_job)
        answered = await asyncio.wait_for(asyncio.gather(*polls), timeout=20)
        assert {(await r.json())["state"] for r in answered} == {"printing"}
        for stream in streams[:5]:
            seen = b""
            while b"event: printing" not in seen:
                seen += await asyncio.wait_for(stream.content.readline(), timeout=10)
        for r in [*streams, *answered]:
            r.close()
        await admin.aclose()
    finally:
        await session.close()
        await desk.client.close()
        await redis.aclose()


async def test_a_jobs_past_is_found_however_many_events_came_after_it(desk: Desk, redis: Redis, venue: str) -> None:
    job_id = await job(desk, "old")
    pipe = redis.pipeline(transaction=False)
    for i in range(12_000):
        pipe.xadd(Keys(venue).events, {"event": "enqueued", "job_id": f"other-{i}", "printer": ""})
    await pipe.execute()
    await until(lambda: intake_of(desk).hub.history("other-11999") != [], timeout=20)
    await redis.config_resetstat()
    resp = await desk.client.get(f"/v1/jobs/{job_id}/events", headers=desk.auth("desk"))
    line = await asyncio.wait_for(resp.content.readline(), timeout=5)
    while line.startswith(b":"):
        line = await asyncio.wait_for(resp.content.readline(), timeout=5)
    assert line.startswith(b"id: ")
    assert (await resp.content.readline()) == b"event: enqueued\n"
    resp.close()
    stats = await redis.info("commandstats")
    assert "cmdstat_xrevrange" not in stats and "cmdstat_xrange" not in stats  # no scan of the venue's stream


async def test_a_revoked_tokens_stream_ends(tight: Desk) -> None:
    job_id = await job(tight, "v1")
    resp = await tight.client.get(f"/v1/jobs/{job_id}/events", headers=tight.auth("viewer"))
    assert resp.status == 200
    assert tight.tokens.revoke("viewer-1")

    async def drain() -> None:
        while await resp.content.readline():
            pass

    await asyncio.wait_for(drain(), timeout=5)  # the server ended it: EOF
    await until(lambda: intake_of(tight).watches.count == 0)


async def test_a_kiosk_lane_full_of_work_does_not_hold_a_desk(tight: Desk) -> None:
    job_id = await job(tight, "q1")
    lanes = intake_of(tight).lanes
    held = [lanes.lane("kiosk") for _ in range(32)]
    for lane in held:
        await lane.__aenter__()
    try:
        started = time.monotonic()
        assert (await tight.client.get(f"/v1/jobs/{job_id}", headers=tight.auth("desk"))).status == 200
        assert time.monotonic() - started < 1.0
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.5):
                await tight.client.get("/v1/printers", headers=tight.auth("viewer"))
    finally:
        for lane in held:
            await lane.__aexit__(None, None, None)


def test_the_events_index_keeps_a_bounded_number_of_events() -> None:
    hub = Hub(Redis(), b"events", keep_events=10, per_job=3)
    for i in range(30):
        hub._add(f"{1000 + i}-0".encode(), {b"event": b"printing", b"job_id": f"job-{i % 6}".encode()})
    assert 0 < hub._kept <= 10
    assert hub.history("job-0") == []  # seen least recently: gone first
    assert hub.history("job-5")[-1].entry_id == "1029-0"
    roomy = Hub(Redis(), b"events", keep_events=100, per_job=3)
    for i in range(30):
        roomy._add(f"{1000 + i}-0".encode(), {b"event": b"printing", b"job_id": f"job-{i % 3}".encode()})
    assert [e.entry_id for e in roomy.history("job-2")] == ["1023-0", "1026-0", "1029-0"]  # its newest three
    assert [e.entry_id for e in roomy.history("job-2", after="1023-0")] == ["1026-0", "1029-0"]
    assert roomy._kept == 9
