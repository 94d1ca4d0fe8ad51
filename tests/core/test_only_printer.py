"""A job for one printer alone (a test badge, which must prove that printer): no peer steals it, and every step
that would hand it on (release, reclaim, handback, drain) cancels it instead, so it never prints elsewhere."""

from __future__ import annotations

from redis.asyncio import Redis

from protocol.jobs import parse_job
from protocol.keys import Keys
from protocol.replies import StealKind
from protocol.store import Store
from tests.support.agents import add
from tests.support.venue import assert_pinned_index_exact


async def _only(store: Store, printer: str, attendee: str = "TEST-desk-1") -> str:
    job = parse_job({"attendee_id": attendee, "name": "Test badge", "printer": printer})
    added, _ = await store.enqueue(job.job_id, job.payload(), printer, only=True)
    assert added
    return job.job_id


async def _lists(redis: Redis, venue: str) -> dict[str, list[bytes]]:
    k = Keys(venue)
    return {
        "pool": await redis.lrange(k.pool, 0, -1),
        "q": await redis.lrange(k.queue("desk-1"), 0, -1),
        "peer": await redis.lrange(k.inflight("desk-2"), 0, -1),
    }


async def test_a_peer_never_steals_it_however_long_it_waits(redis: Redis, venue: str) -> None:
    store = Store(redis, venue)
    job = await _only(store, "desk-1")
    assert await redis.hget(Keys(venue).job(job), "only") == b"desk-1"
    assert await store.steal("desk-2", affinity_ms=0) is None
    assert (await _lists(redis, venue))["q"] == [job.encode()]
    # A job behind it is not stolen either (only a queue's oldest is), and the idle look moves on past that queue.
    other = await add(store, "a1", printer="desk-3")
    assert await store.steal("desk-2", affinity_ms=0) == other
    await assert_pinned_index_exact(redis, venue)


async def test_a_steal_of_it_is_refused_by_the_script_itself(redis: Redis, venue: str) -> None:
    from protocol import specs

    store = Store(redis, venue)
    job = await _only(store, "desk-1")
    k = store.encoded_keys
    stole = await store.scripts.run(
        specs.STEAL.call(k, k.printer("desk-2"), k.printer("desk-1"), job.encode(), 0, 100, 3000, ())
    )
    assert stole.kind is StealKind.ONLY


async def test_its_printer_failing_it_cancels_it_instead_of_handing_it_on(redis: Redis, venue: str) -> None:
    store = Store(redis, venue)
    k = Keys(venue)
    job = await _only(store, "desk-1")
    assert await store.take("desk-1") == ("q", job)
    await store.begin("desk-1", "Hall A", job)
    assert await store.release("desk-1", "Hall A", job, "unknown", "no 'printing completed'", 3) == "released"
    assert await redis.hget(k.job(job), "state") == b"cancelled"
    assert b"desk-1" in (await redis.hget(k.job(job), "error") or b"")
    assert await _lists(redis, venue) == {"pool": [], "q": [], "peer": []}
    assert await store.take("desk-2") is None


async def test_a_dead_printers_test_badge_is_cancelled_not_reclaimed(redis: Redis, venue: str) -> None:
    store = Store(redis, venue)
    k = Keys(venue)
    held = await _only(store, "desk-1", "TEST-1")
    await store.take("desk-1")
    await store.begin("desk-1", "Hall A", held)
    queued = await _only(store, "desk-1", "TEST-2")
    await store.beat("desk-1", {"state": "ready"}, 10_000, True)
    reclaimed = await store.reclaim("desk-1", "desk-2", None)
    assert reclaimed.kind == "reclaimed" and reclaimed.held == held
    assert [await redis.hget(k.job(j), "state") for j in (held, queued)] == [b"cancelled", b"cancelled"]
    assert await _lists(redis, venue) == {"pool": [], "q": [], "peer": []}
    await assert_pinned_index_exact(redis, venue)


async def test_handback_and_drain_cancel_it(redis: Redis, venue: str) -> None:
    store = Store(redis, venue)
    k = Keys(venue)
    first = await _only(store, "desk-1", "TEST-1")
    pinned = await add(store, "a1", printer="desk-1")
    assert await store.handback("desk-1", "printer down") == 1  # the pinned badge; the test badge is cancelled
    assert await redis.hget(k.job(first), "state") == b"cancelled"
    assert await redis.lrange(k.pool, 0, -1) == [pinned.encode()]
    second = await _only(store, "desk-1", "TEST-2")
    await store.drain("desk-1", "drain", "ops")
    assert await redis.hget(k.job(second), "state") == b"cancelled"
    await assert_pinned_index_exact(redis, venue)
