"""The manual operations of docs/venue.md from the command line: drain, reclaim, dlq; and the demo end to end."""

from __future__ import annotations

import json
import re

from redis.asyncio import Redis

from cli.redis_server import RedisServer
from protocol.keys import Keys
from protocol.store import Store
from tests.support.agents import enqueue_many
from tests.support.processes import cli


async def test_drain_hands_back_pinned_jobs_and_resume_undoes_it(
    redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    store = Store(redis, venue)
    await store.beat("desk-1", {"state": "ready", "location": "Desk 1"}, 60_000, first=True)
    await enqueue_many(store, 4, "p", printer="desk-1")
    first = cli(redis_server, venue, "drain", "desk-1")
    assert first.returncode == 0 and "drained; 4 pinned job(s) handed on" in first.stdout
    second = cli(redis_server, venue, "drain", "desk-1")
    assert "drained; 0 pinned job(s)" in second.stdout
    assert await store.take("desk-1") == ("drained", "")
    assert cli(redis_server, venue, "drain", "desk-1", "--resume").returncode == 0
    assert await store.take("desk-1") == ("pool", "p0")
    unknown = cli(redis_server, venue, "drain", "nope")
    assert unknown.returncode == 1 and "no printer 'nope'" in unknown.stderr


async def test_reclaim_refuses_a_beating_printer_unless_forced(
    redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    store = Store(redis, venue)
    await store.beat("desk-1", {"state": "ready", "location": "Desk 1"}, 60_000, first=True)
    await enqueue_many(store, 2, "r", printer="desk-1")
    await store.take("desk-1")
    refused = cli(redis_server, venue, "reclaim", "desk-1")
    assert refused.returncode == 1 and "still beating" in refused.stderr
    forced = cli(redis_server, venue, "reclaim", "desk-1", "--force")
    assert forced.returncode == 0, forced.stderr
    assert "badge in hand: r0; 1 pinned job(s)" in forced.stdout
    again = cli(redis_server, venue, "reclaim", "desk-1")
    assert again.returncode == 0 and "badge in hand: none; 0 pinned" in again.stdout
    assert await redis.lrange(Keys(venue).pool, 0, -1) == [b"r1", b"r0"]


async def test_dlq_lists_reasons_and_requeues(redis: Redis, redis_server: RedisServer, venue: str) -> None:
    store = Store(redis, venue)
    k = Keys(venue)
    await enqueue_many(store, 1, "d")
    await store.take("desk-1")
    await store.begin("desk-1", "Desk 1", "d0")
    await store.dead_letter("desk-1", "d0", "name has characters no font covers (U+E0FFF)")
    await redis.lpush(k.dlq, "junk")
    listing = cli(redis_server, venue, "dlq", "list")
    assert re.search(r"d0\s+name has characters no font covers", listing.stdout)
    assert "2 job(s) in the DLQ" in listing.stdout
    result = cli(redis_server, venue, "dlq", "requeue", "--all")
    assert "d0: requeued" in result.stdout and "junk: no record" in result.stdout and result.returncode == 1
    job = await redis.hgetall(k.job("d0"))
    assert job[b"state"] == b"queued" and job[b"attempts"] == b"0" and b"no font" in job[b"last_error"]
    assert await redis.lrange(k.pool, -1, -1) == [b"d0"]
    events = [json.loads(line) for line in cli(redis_server, venue, "events", "--json").stdout.splitlines()]
    assert any(e["event"] == "requeued" and e["job_id"] == "d0" for e in events)


def test_the_demo_runs_to_the_end_with_nothing_lost(redis_server: RedisServer, venue: str) -> None:
    result = cli(redis_server, venue, "demo", "--badges", "24", "--speed", "0.4")
    assert result.returncode == 0, result.stderr[-2000:]
    summary = result.stdout[result.stdout.index("demo summary") :]
    counts = re.search(
        r"attendees 24 · printed 24 · lost 0 · reprints 0 \(intended\) · jobs cancelled 0 · "
        r"may exist twice (\d+) · printed twice (\d+)",
        summary,
    )
    assert counts, summary
    assert re.search(r"printers' logs: printed twice \d+ \(flagged for staff \d+, unflagged 0\)", summary)
    # Every badge staff are sent to look for is named with where, in the same words as the counts above.
    to_find = [line.strip() for line in summary.splitlines() if line.strip().startswith("staff:")]
    assert bool(to_find) == (int(counts[1]) + int(counts[2]) > 0), summary
    for line in to_find:
        assert re.fullmatch(r"staff: badge \S+ (may exist twice — look at|printed twice — pull one;) .+", line), line
    assert "dead-lettered 1" in summary and "Traceback" not in result.stdout + result.stderr
