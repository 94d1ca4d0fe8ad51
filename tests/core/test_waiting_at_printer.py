"""The badge waiting at the printer, in the protocol: a printer that takes the next badge while one prints holds two
jobs in its in-flight list, and a reclaim hands both on flagged with the printer's place (docs/printers.md, "The
badge waiting at the printer")."""

from __future__ import annotations

from redis.asyncio import Redis

from protocol.fleet import fleet
from protocol.keys import Keys
from protocol.store import Store
from tests.support.agents import add
from tests.support.venue import assert_each_unfinished_job_in_one_list


async def test_take_hands_a_printer_with_room_for_two_its_second_job_and_no_third(redis: Redis, venue: str) -> None:
    store = Store(redis, venue)
    await redis.hset(Keys(venue).printers, "ipp-1", "Hall A")
    for a in ("a1", "a2", "a3"):
        await add(store, a)
    assert await store.take("ipp-1", room=2) == ("pool", "a1")
    assert await store.take("ipp-1", room=2) == ("pool", "a2")
    assert await store.take("ipp-1", room=2) == ("held", "a2")  # the newest of the two it holds
    assert await store.take("ipp-1") == ("held", "a2")  # a caller that holds one at a time never takes a second
    assert await store.inflight("ipp-1") == ["a2", "a1"]
    # The fleet view shows the badge the printer prints (the oldest it holds), not the one waiting behind it.
    (printer,) = (await fleet(redis, venue)).printers
    assert printer.inflight == "a1" and (await fleet(redis, venue)).counts["printing"] == 1


async def test_a_reclaim_hands_on_both_jobs_at_a_dead_printer_flagged_with_its_place(redis: Redis, venue: str) -> None:
    store, k = Store(redis, venue), Keys(venue)
    await redis.hset(k.printers, "ipp-1", "Hall A")
    for a in ("a1", "a2", "a3"):
        await add(store, a)
    await store.take("ipp-1", room=2)
    await store.take("ipp-1", room=2)
    for job_id in ("a1", "a2"):
        assert (await store.begin("ipp-1", "Hall A", job_id)).kind == "print"
    await redis.zadd(k.hb, {"ipp-1": 0})
    result = await store.reclaim("ipp-1", "desk-2", None)
    assert result.kind == "reclaimed" and result.held == "a2 a1"
    for job_id in ("a1", "a2"):
        job = await redis.hgetall(k.job(job_id))
        assert job[b"maybe_printed"] == b"1" and job[b"maybe_printed_where"] == b"ipp-1 (Hall A)", job
        assert job[b"state"] == b"queued" and job[b"printer"] == b""
    # The one the printer started comes out next, then the one that waited behind it, then the rest of the pool.
    assert [await store.take(f"desk-{i}") for i in (2, 3, 4)] == [("pool", "a1"), ("pool", "a2"), ("pool", "a3")]
    await assert_each_unfinished_job_in_one_list(redis, venue, ["a1", "a2", "a3"])
