"""The intake's /metrics exports the event day's numbers (eventday/metrics.py) the alerts and dashboards read."""

from __future__ import annotations

from redis.asyncio import Redis

from eventday.rolls import mark_roll
from protocol.store import Store
from tests.eventday.test_counts import print_one, zone_job
from tests.support.agents import add
from tests.support.intake import Desk


async def test_metrics_say_a_zones_wait_labels_left_prints_and_a_faults_age(
    desk: Desk, redis: Redis, venue: str
) -> None:
    store = Store(redis, venue)
    await store.beat("a1", {"state": "ready", "location": "A"}, 60_000, first=True)
    await store.beat("a2", {"state": "paused", "reasons": ["out of labels"]}, 60_000, first=True)
    await mark_roll(redis, venue, "a1", 100)
    await print_one(store, "a1", await zone_job(store, "renee"))
    await print_one(store, "a1", await add(store, "plain", "a1"))
    await zone_job(store, "waiting-1")
    text = await (await desk.client.get("/metrics")).text()
    assert 'badge_zone_waiting{zone="hall-a"} 1.0' in text
    assert 'badge_zone_arrivals_recent{zone="hall-a"} 1.0' in text
    assert 'badge_printer_labels_left{printer="a1",source="roll"} 98.0' in text
    assert 'badge_printer_prints_last_hour{printer="a1"} 2.0' in text
    assert 'badge_zone_rate_per_minute{zone="hall-a"}' in text
    # The intake's own user may not note a fault's first sighting; here (a full user) it does, and the age shows.
    assert 'badge_printer_fault_age_seconds{printer="a2"}' in text
    assert 'badge_printer_fault_age_seconds{printer="a1"}' not in text
