"""The printed record (protocol/printed.py): confirm writes one entry per confirmed print while any consumer reads
it, each consumer reads what it has not taken, and an entry is gone once every consumer has taken it."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

from redis.asyncio import Redis

from cli.redis_server import RedisServer
from protocol.fleet import tail_events
from protocol.keys import Keys
from protocol.printed import START, PrintedRecord
from protocol.store import Store
from tests.support.agents import add, print_it, running_agent, state_is
from tests.support.processes import cli
from tests.support.waiting import wait_until


async def _printed(store: Store, me: str, attendee: str) -> str:
    job_id = await add(store, attendee)
    await print_it(store, me, job_id)
    return job_id


async def test_without_a_consumer_confirm_writes_no_record(redis: Redis, venue: str) -> None:
    store = Store(redis, venue)
    await store.beat("p1", {"state": "ready"}, 60_000, first=True)
    await _printed(store, "p1", "a1")
    assert await redis.exists(Keys(venue).printed) == 0


async def test_each_confirmed_print_is_one_entry_and_a_reprint_says_so(redis: Redis, venue: str) -> None:
    store, record = Store(redis, venue), PrintedRecord(redis, venue)
    await store.beat("p1", {"state": "ready"}, 60_000, first=True)
    assert await record.join("crm") and not await record.join("crm")  # joining twice keeps the cursor
    job_id = await _printed(store, "p1", "a1")
    assert (await store.reprint(job_id, "coffee", "staff", 2, False)).kind == "reprint"
    await print_it(store, "p1", job_id)
    first, again = await record.after("crm", 10)
    assert (first.kind, first.job_id, first.printer, first.location) == ("badge", job_id, "p1", "p1 desk")
    assert (again.kind, again.job_id) == ("reprint", job_id) and int(again.epoch) > int(first.epoch)
    assert first.printed_ms > 0 and again.id > first.id
    assert await record.cursor("crm") == START and await record.cursor("nobody") is None
    assert await record.after("nobody", 10) == []


async def test_an_entry_is_deleted_once_every_consumer_has_taken_it(redis: Redis, venue: str) -> None:
    store, record = Store(redis, venue), PrintedRecord(redis, venue)
    await store.beat("p1", {"state": "ready"}, 60_000, first=True)
    await record.join("crm")
    await record.join("chat")
    for attendee in ("a1", "a2", "a3"):
        await _printed(store, "p1", attendee)
    one, two, three = await record.after("crm", 10)
    stream = Keys(venue).printed
    assert await record.took("crm", three.id)  # crm took all three; chat none: all stay
    assert await record.after("crm", 10) == [] and await redis.xlen(stream) == 3
    assert await record.took("chat", one.id)  # both took the first: it is deleted, the rest wait for chat
    assert [e.id for e in await record.after("chat", 10)] == [two.id, three.id] and await redis.xlen(stream) == 2
    assert not await record.took("chat", one.id)  # a cursor never moves back
    assert not await record.took("nobody", three.id)  # not a consumer: nothing changes
    assert await record.took("chat", three.id) and await redis.xlen(stream) == 0


async def test_a_cursor_written_by_hand_counts_as_the_start(redis: Redis, venue: str) -> None:
    """A consumer's cursor that is not a stream id (a hand-written value) is read as the start: its reader is
    given every entry again (each consumer's send is safe to repeat), never stopped."""
    store, record = Store(redis, venue), PrintedRecord(redis, venue)
    await store.beat("p1", {"state": "ready"}, 60_000, first=True)
    await record.join("crm")
    await _printed(store, "p1", "a1")
    (entry,) = await record.after("crm", 10)
    await redis.hset(Keys(venue).printed_consumers, "crm", "yesterday")
    assert await record.took("crm", entry.id) and await redis.xlen(Keys(venue).printed) == 0


async def test_a_print_says_whose_word_it_is_on_in_the_event_the_job_the_record_and_the_cli(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    # A simulated printer reads its own state, as every native driver does: its prints are on the device's word.
    store, record, k = Store(redis, venue), PrintedRecord(redis, venue), Keys(venue)
    await record.join("crm")
    job_id = await add(store, "a1")
    async with running_agent(tmp_path, venue, redis_server.url, print_time=0.01):
        await wait_until(lambda: state_is(redis, k, job_id, b"printed"))
        await wait_until(lambda: redis.exists(k.health("desk-1")))
        health = json.loads(await redis.get(k.health("desk-1")))
        assert health["confirmed_by"] == "device"
        # In a thread: the agent's heartbeat runs on this event loop meanwhile.
        status = await asyncio.to_thread(cli, redis_server, venue, "status", "--json")
        assert json.loads(status.stdout)["printers"][0]["confirmed_by"] == "device"
        table = (await asyncio.to_thread(cli, redis_server, venue, "status")).stdout
        assert "confirmed by the device" in table, table
    assert await redis.hget(k.job(job_id), "confirmed_by") == b"device"
    (entry,) = await record.after("crm", 10)
    assert entry.confirmed_by == "device"
    printed = [e for e in await tail_events(redis, venue, 100) if e.get("event") == "printed"]
    assert [e.get("confirmed_by") for e in printed] == ["device"]
    job = cli(redis_server, venue, "job", job_id).stdout
    assert re.search(r"confirmed_by\s+device", job) and "confirmed_by=device" in job
