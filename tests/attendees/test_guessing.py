"""Trying codes at the intake over real HTTP on a real redis-server: the kiosk badge route is capped like job
creation, and failed lookups are limited per client address as well as per token."""

from __future__ import annotations

import asyncio
from pathlib import Path

from redis.asyncio import Redis

from attendees.importer import Importer
from attendees.store import AttendeeStore
from cli.redis_server import RedisServer
from intake.attendee_routes import MISSES
from protocol.keys import Keys
from tests.support.attendee_files import rows
from tests.support.intake import Desk, start_desk


async def test_the_26th_kiosk_badge_at_once_is_refused_at_the_tokens_cap(desk: Desk, redis: Redis, venue: str) -> None:
    people = [{"attendee_id": f"secret-code-{n:02d}", "name": f"Person {n}"} for n in range(26)]
    await Importer(AttendeeStore(redis, venue)).load(iter(rows(people)))
    kiosk = {"Authorization": f"Bearer {desk.tokens.add('kiosk-25', 'kiosk', 25)}"}
    answers = await asyncio.gather(
        *(desk.client.post(f"/v1/attendees/secret-code-{n:02d}/badge", headers=kiosk) for n in range(26))
    )
    statuses = sorted(a.status for a in answers)
    assert statuses == [201] * 25 + [429], statuses
    (refused,) = [a for a in answers if a.status == 429]
    problem = await refused.json()
    assert problem["max_outstanding"] == 25 and refused.headers["Retry-After"]
    assert await redis.scard(Keys(venue).owned("kiosk-25")) == 25
    assert await redis.llen(Keys(venue).pool) == 25
    # A second scan of a badge that exists makes nothing: answered at the cap too.
    made = next(n for n, a in enumerate(answers) if a.status == 201)
    again = await desk.client.post(f"/v1/attendees/secret-code-{made:02d}/badge", headers=kiosk)
    assert again.status == 200 and (await again.json())["duplicate"] is True


async def test_failed_lookups_from_one_address_are_limited_across_ten_tokens(
    tmp_path: Path, redis_server: RedisServer, venue: str
) -> None:
    # A bucket of 20 that refills one per 1000 s: what this test counts does not depend on how fast it runs.
    desk, redis = await start_desk(tmp_path, venue, redis_server.url, "limits:\n  miss_rate: 0.001\n")
    try:
        await Importer(AttendeeStore(redis, venue)).load(iter(rows([{"attendee_id": "100050", "name": "Real"}])))
        kiosks = [{"Authorization": f"Bearer {desk.tokens.add(f'kiosk-x{n}', 'kiosk')}"} for n in range(10)]
        statuses: list[int] = []
        for n in range(100):  # 100 sequential codes, each of ten kiosk tokens naming ten of them in turn
            resp = await desk.client.get(f"/v1/attendees/{100000 + n}", headers=kiosks[n % 10])
            statuses.append(resp.status)
            if resp.status == 429:
                assert int(resp.headers["Retry-After"]) >= 1 and "not on the list" in (await resp.json())["detail"]
        # The address's bucket, however many tokens share it (each token's own has 20 too: 10 tried by each).
        assert statuses == [404] * 20 + [429] * 80, statuses
        # Even the real code, from an eleventh token at the same address, waits until the address's bucket refills.
        fresh = {"Authorization": f"Bearer {desk.tokens.add('kiosk-fresh', 'kiosk')}"}
        assert (await desk.client.get("/v1/attendees/100050", headers=fresh)).status == 429
        assert (await desk.client.post("/v1/attendees/100050/badge", headers=fresh)).status == 429
    finally:
        await desk.client.close()
        await redis.aclose()


async def test_failed_lookups_of_one_token_are_limited_whatever_its_address(
    tmp_path: Path, redis_server: RedisServer, venue: str
) -> None:
    desk, redis = await start_desk(tmp_path, venue, redis_server.url, "limits:\n  miss_rate: 0.001\n")
    try:
        await Importer(AttendeeStore(redis, venue)).load(iter(rows([{"attendee_id": "100050", "name": "Real"}])))
        app = desk.client.app
        assert app is not None
        misses = app[MISSES]
        # Twenty misses of the kiosk's token, as from other addresses (the token's bucket is what is left).
        for _ in range(20):
            misses.take("token:kiosk-1")
        assert (await desk.client.get("/v1/attendees/100050", headers=desk.auth("kiosk"))).status == 429
        assert (await desk.client.get("/v1/attendees/100050", headers=desk.auth("kiosk-2"))).status == 200
    finally:
        await desk.client.close()
        await redis.aclose()
