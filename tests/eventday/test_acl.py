"""The event day's numbers under the venue's generated Redis users: the webhooks sender's notes a fault's first
sighting and a roll change a printer showed; the intake's only reads, and is still answered."""

from __future__ import annotations

from pathlib import Path

from redis.asyncio import Redis

from cli.redis_server import RedisServer
from eventday.counts import event_day
from eventday.rolls import mark_roll
from protocol.store import Store
from tests.eventday.test_counts import print_one
from tests.support.agents import add
from tests.support.processes import create_user


async def test_the_webhooks_user_notes_faults_and_roll_changes_and_the_intake_user_reads_them(
    tmp_path: Path, redis_server: RedisServer, redis: Redis, venue: str
) -> None:
    users = {}
    for role in ("intake", "webhooks"):
        name = await create_user(redis, venue, tmp_path / f"{role}.pw", role=role)
        users[role] = Redis(
            port=redis_server.port, username=name, password=(tmp_path / f"{role}.pw").read_text().strip()
        )
    try:
        store = Store(redis, venue)
        await store.beat("a1", {"state": "ready"}, 60_000, first=True)
        await mark_roll(redis, venue, "a1", 5)
        await print_one(store, "a1", await add(store, "one", "a1"))
        await store.beat("a1", {"state": "paused", "device": "media_out", "reasons": ["out of labels"]}, 60_000, False)
        (seen_by_intake,) = (await event_day(users["intake"], venue)).printers
        assert seen_by_intake.fault_since_ms is None  # the intake's user may not note it
        (noted,) = (await event_day(users["webhooks"], venue)).printers
        assert noted.fault_since_ms is not None and noted.labels_left == 4
        (read,) = (await event_day(users["intake"], venue)).printers
        assert read.fault_since_ms == noted.fault_since_ms
        await store.beat("a1", {"state": "ready", "device": "ready"}, 60_000, first=False)
        assert (await event_day(users["intake"], venue)).printers[0].labels_left == 4  # it cannot mark the new roll
        (back,) = (await event_day(users["webhooks"], venue)).printers
        assert (back.labels_left, back.fault_since_ms) == (5, None)
    finally:
        for client in users.values():
            await client.aclose()
