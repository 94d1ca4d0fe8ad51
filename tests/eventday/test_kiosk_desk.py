"""The kiosk says about how long a badge waits once its zone's expected wait passes ``kiosk.say_wait_after``; the
desk's settings carry the day's counts its page shows at the top. Through the intake, against a real redis-server."""

from __future__ import annotations

from pathlib import Path

from redis.asyncio import Redis

from cli.redis_server import RedisServer
from eventday.counts import MINUTE_MS, zone_waits
from protocol.codec import enc
from protocol.keys import Keys
from protocol.store import Store
from tests.eventday.test_counts import zone_job
from tests.support.attendee_files import listed
from tests.support.intake import start_desk

ZONES = "zones:\n  hall-a: {printers: [a1, a2], tokens: [kiosk-1]}\n"


async def beat(redis: Redis, venue: str) -> None:
    """Hall A's printers beat, busy: the intake counts on a printer only while its last beat is a few seconds old."""
    for printer in ("a1", "a2"):
        await Store(redis, venue).beat(printer, {"state": "printing", "location": f"Hall A, {printer}"}, 60_000, True)


async def rushed(redis: Redis, venue: str, waiting: int, per_minute: int) -> None:
    """Hall A with ``waiting`` badges in line, having printed ``per_minute`` a minute for the last two minutes."""
    store = Store(redis, venue)
    await beat(redis, venue)
    for n in range(waiting):
        await zone_job(store, f"queue-{n}")
    sec, _ = await redis.time()
    now = int(sec) * 1000
    m = now // MINUTE_MS
    counts = {f"b|hall-a|{minute}": per_minute for minute in range(m - 2, m + 1)}
    await redis.hset(enc(Keys(venue).minutes), mapping={**counts, "f|hall-a": now - 2 * MINUTE_MS, "l|hall-a": now})


async def test_the_kiosk_says_about_how_long_once_the_zones_wait_passes_the_threshold(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    await listed(redis, venue)
    await rushed(redis, venue, waiting=20, per_minute=2)
    desk, client = await start_desk(tmp_path, venue, redis_server.url, ZONES + "kiosk:\n  say_wait_after: 5\n")
    try:
        await beat(redis, venue)
        resp = await desk.client.post("/v1/attendees/secret-renee/badge", headers=desk.auth("kiosk"))
        assert resp.status == 201, await resp.text()
        badge = (await resp.json())["badge"]
        (hall,) = await zone_waits(redis, venue)
        assert badge["state"] == "queued" and hall.wait_minutes is not None and hall.wait_minutes > 5
        assert badge["wait_minutes"] == round(hall.wait_minutes)
        # The desk's counts: the list's expected, arrived (checked in) and still to come.
        settings = await (await desk.client.get("/desk/settings.json", headers=desk.auth("desk"))).json()
        day = settings["day"]
        assert day["arrived"] == 0 and day["to_come"] == day["expected"] > 0
    finally:
        await desk.client.close()
        await client.aclose()


async def test_a_short_wait_is_not_said(tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str) -> None:
    await listed(redis, venue)
    await rushed(redis, venue, waiting=3, per_minute=6)
    desk, client = await start_desk(tmp_path, venue, redis_server.url, ZONES)
    try:
        await beat(redis, venue)
        resp = await desk.client.post("/v1/attendees/secret-renee/badge", headers=desk.auth("kiosk"))
        badge = (await resp.json())["badge"]
        assert badge["state"] == "queued" and "wait_minutes" not in badge
    finally:
        await desk.client.close()
        await client.aclose()


async def test_a_name_typed_at_the_kiosk_says_the_wait_as_a_scanned_ticket_does(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    """No list: the kiosk types a name (``POST /v1/jobs``); its queued job carries ``wait_minutes`` by the same rule,
    when made and when followed, and a short wait is not said."""
    await rushed(redis, venue, waiting=20, per_minute=2)
    desk, client = await start_desk(tmp_path, venue, redis_server.url, ZONES + "kiosk:\n  say_wait_after: 5\n")
    try:
        await beat(redis, venue)
        resp = await desk.client.post(
            "/v1/jobs", json={"attendee_id": "walk-1", "name": "Ana Walk"}, headers=desk.auth("kiosk")
        )
        assert resp.status == 201, await resp.text()
        job = await resp.json()
        # A typed name is not pinned by the zone (docs/intake.md, "Zones"); the kiosk says its zone's wait, as for a
        # scanned ticket.
        hall = next(w for w in await zone_waits(redis, venue) if w.zone == "hall-a")
        assert job["state"] == "queued" and hall.wait_minutes is not None and hall.wait_minutes > 5
        assert job["wait_minutes"] == round(hall.wait_minutes)
        followed = await (await desk.client.get(f"/v1/jobs/{job['job_id']}", headers=desk.auth("kiosk"))).json()
        assert followed["state"] == "queued" and followed["wait_minutes"] == round(hall.wait_minutes)
        # Only a kiosk is told: a desk's answer is unchanged.
        made = await desk.client.post("/v1/jobs", json={"attendee_id": "d-1", "name": "D"}, headers=desk.auth("desk"))
        assert made.status == 201 and "wait_minutes" not in await made.json()
    finally:
        await desk.client.close()
        await client.aclose()


async def test_a_short_wait_is_not_said_for_a_typed_name_either(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    await rushed(redis, venue, waiting=3, per_minute=6)
    desk, client = await start_desk(tmp_path, venue, redis_server.url, ZONES)
    try:
        await beat(redis, venue)
        resp = await desk.client.post("/v1/jobs", json={"attendee_id": "w-2", "name": "W"}, headers=desk.auth("kiosk"))
        job = await resp.json()
        assert job["state"] == "queued" and "wait_minutes" not in job
    finally:
        await desk.client.close()
        await client.aclose()
