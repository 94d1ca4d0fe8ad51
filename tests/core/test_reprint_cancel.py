"""reprint.lua and cancel.lua against a real redis-server: a reprint is a new round, a cancel only while queued."""

from __future__ import annotations

from pathlib import Path

from redis.asyncio import Redis

from cli.redis_server import RedisServer
from protocol.keys import Keys
from protocol.store import Store
from tests.support.agents import add, print_it, running_agent
from tests.support.processes import cli
from tests.support.venue import assert_each_unfinished_job_in_one_list
from tests.support.waiting import wait_until


async def events_of(redis: Redis, venue: str, job_id: str) -> list[dict[str, str]]:
    out = []
    for _, fields in await redis.xrange(Keys(venue).events):
        e = {k.decode(): v.decode() for k, v in fields.items()}
        if e.get("job_id") == job_id:
            out.append(e)
    return out


async def test_reprint_of_a_printed_job_prints_again_and_is_not_a_duplicate(redis: Redis, venue: str) -> None:
    store, k = Store(redis, venue), Keys(venue)
    job_id = await add(store, "a1")
    assert await print_it(store, "desk-1", job_id) == ("printed", "")
    assert await store.reprint(job_id, "coffee", "staff-anna", 2, False) == ("reprint", "1")
    assert not await redis.exists(k.done(job_id))
    assert await redis.hget(k.job(job_id), "state") == b"queued"
    assert await redis.hget(k.job(job_id), "last_printer") == b"desk-1"
    await assert_each_unfinished_job_in_one_list(redis, venue, [job_id])
    # The reprint is not skipped as already printed, and its copy is the round's first: printed, not duplicate.
    assert await print_it(store, "desk-2", job_id) == ("printed", "")
    job = await redis.hgetall(k.job(job_id))
    assert job[b"reprints"] == b"1" and job[b"maybe_duplicate"] == b"0" and job[b"printer"] == b"desk-2"
    stats = await redis.hgetall(k.stats)
    assert stats[b"reprint"] == b"1" and stats[b"printed"] == b"2"
    assert b"duplicate_print" not in stats and b"maybe_duplicate" not in stats
    reprint = [e for e in await events_of(redis, venue, job_id) if e["event"] == "reprint"]
    assert reprint == [reprint[0]] and reprint[0]["reason"] == "coffee" and reprint[0]["by"] == "staff-anna"
    await assert_each_unfinished_job_in_one_list(redis, venue, [job_id])


async def test_reprint_goes_to_the_front_of_the_pool(redis: Redis, venue: str) -> None:
    store = Store(redis, venue)
    job_id = await add(store, "a1")
    await print_it(store, "desk-1", job_id)
    await add(store, "b1")
    await store.reprint(job_id, "typo", "s", 2, False)
    assert await store.take("desk-1") == ("pool", job_id)


async def test_a_crash_during_a_reprint_round_is_flagged_like_any_other(redis: Redis, venue: str) -> None:
    store, k = Store(redis, venue), Keys(venue)
    job_id = await add(store, "a1")
    await print_it(store, "desk-1", job_id)
    await store.reprint(job_id, "typo", "s", 2, False)
    await store.take("desk-2")
    assert (await store.begin("desk-2", "desk-2 desk", job_id)).kind == "print"
    assert await store.release("desk-2", "desk-2 desk", job_id, "unknown", "power cut", 3) == "released"
    maybe = await print_it(store, "desk-3", job_id)
    assert maybe[0] == "printed" and "desk-2" in maybe[1] and "desk-1" not in maybe[1]
    assert await redis.hget(k.job(job_id), "maybe_duplicate") == b"1"
    assert int(await redis.hget(k.stats, "maybe_duplicate")) == 1


async def test_a_second_confirm_within_a_reprint_round_is_a_duplicate(redis: Redis, venue: str) -> None:
    store, k = Store(redis, venue), Keys(venue)
    job_id = await add(store, "a1")
    await print_it(store, "desk-1", job_id)
    await store.reprint(job_id, "typo", "s", 2, False)
    await print_it(store, "desk-2", job_id)
    # A frozen peer that held the same round's copy confirms too: the round's gate is taken, so it is a duplicate.
    assert await store.confirm("desk-3", "desk-3 desk", job_id, 99) == ("duplicate", "desk-2")
    assert int(await redis.hget(k.stats, "duplicate_print")) == 1


async def test_reprint_refuses_unfinished_jobs_and_enforces_the_cap(redis: Redis, venue: str) -> None:
    store = Store(redis, venue)
    job_id = await add(store, "a1")
    assert await store.reprint(job_id, "x", "s", 2, False) == ("refused", "queued")
    assert await store.reprint("nope", "x", "s", 2, False) == ("no_job", "")
    await print_it(store, "desk-1", job_id)
    for n in (1, 2):
        assert await store.reprint(job_id, "x", "s", 2, False) == ("reprint", str(n))
        assert await store.reprint(job_id, "x", "s", 2, False) == ("refused", "queued")
        await print_it(store, "desk-1", job_id)
    assert await store.reprint(job_id, "x", "s", 2, False) == ("cap", "2")
    assert await store.reprint(job_id, "x", "s", 2, True) == ("reprint", "3")


async def test_reprint_of_a_dead_job_takes_it_out_of_the_dlq(redis: Redis, venue: str) -> None:
    store, k = Store(redis, venue), Keys(venue)
    job_id = await add(store, "a1")
    await store.take("desk-1")
    assert await store.dead_letter("desk-1", job_id, "cannot render") == "dead"
    assert await store.reprint(job_id, "fixed", "s", 2, False) == ("reprint", "1")
    assert await store.dlq() == []
    await assert_each_unfinished_job_in_one_list(redis, venue, [job_id])
    assert await redis.hget(k.job(job_id), "state") == b"queued"


async def test_cancel_a_queued_job_from_the_pool_and_from_a_pinned_queue(redis: Redis, venue: str) -> None:
    store, k = Store(redis, venue), Keys(venue)
    a = await add(store, "a1")
    b = await add(store, "b1", printer="desk-1")
    assert await store.cancel(a, "staff") == ("cancelled", "")
    assert await store.cancel(b, "staff") == ("cancelled", "")
    assert await redis.llen(k.pool) == 0 and await redis.llen(k.queue("desk-1")) == 0
    assert await redis.zcard(k.pinned) == 0
    assert await redis.hget(k.job(a), "state") == b"cancelled"
    assert int(await redis.hget(k.stats, "cancelled")) == 2
    assert [e["event"] for e in await events_of(redis, venue, a)] == ["enqueued", "cancelled"]
    await assert_each_unfinished_job_in_one_list(redis, venue, [a, b])
    # A cancelled job is final: cancelling again, reprinting, or enqueueing the id again changes nothing.
    assert await store.cancel(a, "staff") == ("refused", "cancelled")
    assert await store.reprint(a, "x", "s", 2, False) == ("refused", "cancelled")
    assert (await store.enqueue(a, "{}", None)) == (False, "cancelled")
    assert await store.take("desk-1") is None


async def test_cancel_refuses_a_job_taken_printing_or_printed(redis: Redis, venue: str) -> None:
    store = Store(redis, venue)
    job_id = await add(store, "a1")
    await store.take("desk-1")
    # Taken into desk-1's in-flight list, not begun: still "queued" on the hash, but a printer holds it.
    assert await store.cancel(job_id, "s") == ("refused", "taken")
    begun = await store.begin("desk-1", "d", job_id)
    assert await store.cancel(job_id, "s") == ("refused", "printing")
    await store.confirm("desk-1", "d", job_id, begun.epoch)
    assert await store.cancel(job_id, "s") == ("refused", "printed")
    assert await store.cancel("nope", "s") == ("no_job", "")
    await assert_each_unfinished_job_in_one_list(redis, venue, [job_id])


async def test_cli_reprint_and_cancel(redis: Redis, redis_server: RedisServer, venue: str) -> None:
    store = Store(redis, venue)
    printed = await add(store, "a1")
    await print_it(store, "desk-1", printed)
    queued = await add(store, "b1")
    ok = cli(redis_server, venue, "reprint", printed, "--reason", "coffee")
    assert ok.returncode == 0 and "reprint 1 queued" in ok.stdout
    again = cli(redis_server, venue, "reprint", printed, "--reason", "coffee")
    assert again.returncode == 1 and "is queued: only a printed or dead job" in again.stderr
    assert cli(redis_server, venue, "cancel", queued).returncode == 0
    refused = cli(redis_server, venue, "cancel", queued)
    assert refused.returncode == 1 and "is cancelled" in refused.stderr
    missing = cli(redis_server, venue, "cancel", "nope")
    assert missing.returncode == 1 and "no job 'nope'" in missing.stderr
    status = cli(redis_server, venue, "status")
    assert "reprints 1 (intended) · jobs cancelled 1 · may exist twice 0 · printed twice 0" in status.stdout
    assert "to find" not in status.stdout  # an intended reprint is nothing staff must look for
    job = cli(redis_server, venue, "job", printed)
    assert "reprints 1 (intended)" in job.stdout and "may exist twice" not in job.stdout


async def test_a_reprint_on_the_printer_that_printed_it_prints_a_second_copy(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    """The agent's journal remembers it printed the job; the new round's epoch tells it that was the last round."""
    async with running_agent(tmp_path, venue, redis_server.url, print_time=0.01) as agent:
        store = Store(redis, venue)
        job_id = await add(store, "a1")
        await wait_until(lambda: agent.printed == 1)
        assert (await store.reprint(job_id, "coffee", "s", 2, False))[0] == "reprint"
        await wait_until(lambda: agent.printed == 2)
        job = await redis.hgetall(Keys(venue).job(job_id))
        assert job[b"state"] == b"printed" and job[b"maybe_duplicate"] == b"0" and job[b"reprints"] == b"1"


async def test_a_confirm_replayed_from_before_a_reprint_changes_nothing(redis: Redis, venue: str) -> None:
    """After a failover an agent confirms its recent prints again: the reprint round must not be taken for done."""
    store, k = Store(redis, venue), Keys(venue)
    job_id = await add(store, "a1")
    await store.take("desk-1")
    epoch = (await store.begin("desk-1", "d1", job_id)).epoch
    await store.confirm("desk-1", "d1", job_id, epoch)
    await store.reprint(job_id, "typo", "s", 2, False)
    assert await store.confirm("desk-1", "d1", job_id, epoch) == ("printed", "")
    assert await redis.hget(k.job(job_id), "state") == b"queued"
    assert not await redis.exists(k.done(job_id)) and await redis.lrange(k.pool, 0, -1) == [job_id.encode()]
    assert await print_it(store, "desk-2", job_id) == ("printed", "")
    assert await store.confirm("desk-1", "d1", job_id, epoch) == ("printed", "")  # and again, after round 1
    assert b"duplicate_print" not in await redis.hgetall(k.stats)


async def test_a_copy_begun_before_a_reprint_and_confirmed_late_is_a_duplicate(redis: Redis, venue: str) -> None:
    store, k = Store(redis, venue), Keys(venue)
    job_id = await add(store, "a1")
    await store.take("desk-3")
    zombie = (await store.begin("desk-3", "d3", job_id)).epoch
    await store.reclaim("desk-3", "desk-1", None)  # reclaimed while desk-3 was frozen
    await print_it(store, "desk-1", job_id)
    await store.reprint(job_id, "typo", "s", 2, False)
    # desk-3 wakes up: its copy is a second one of round 0, not the reprint.
    assert await store.confirm("desk-3", "d3", job_id, zombie) == ("duplicate", "desk-1")
    job = await redis.hgetall(k.job(job_id))
    assert job[b"maybe_duplicate"] == b"1" and job[b"state"] == b"queued"
    await assert_each_unfinished_job_in_one_list(redis, venue, [job_id])
