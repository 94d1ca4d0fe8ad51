"""The agent in-process, on a simulated printer, against a real redis-server."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path

import pytest
from redis.asyncio import Redis

from cli.redis_server import RedisServer
from drivers.sim import SimControl
from protocol.jobs import parse_job
from protocol.keys import Keys
from protocol.library import default_library
from protocol.store import Store
from tests.support.agents import enqueue_many, eq, printed_count, running_agent, state_is
from tests.support.metrics import samples as metric_samples
from tests.support.prints import print_log_copies
from tests.support.redis_traffic import Monitor, RoundTrips
from tests.support.venue import assert_each_unfinished_job_in_one_list, assert_pinned_index_exact
from tests.support.waiting import wait_until


async def test_prints_every_job_once_and_confirms_it(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    store = Store(redis, venue)
    ids = await enqueue_many(store, 12)
    async with running_agent(tmp_path, venue, redis_server.url, print_time=0.01):
        await wait_until(lambda: printed_count(redis, venue), 15)
        await wait_until(lambda: eq(printed_count(redis, venue), 12))
    copies = print_log_copies(tmp_path / "desk-1.prints.jsonl")
    assert copies == {i: 1 for i in ids}
    k = Keys(venue)
    for job_id in ids:
        assert await redis.get(k.done(job_id)) == b"desk-1"
        assert await redis.hget(k.job(job_id), "state") == b"printed"
    await assert_each_unfinished_job_in_one_list(redis, venue, ids)
    health = json.loads(await redis.get(k.health("desk-1")))
    assert health["state"] == "stopped" and health["printed"] == 12
    assert await redis.zscore(k.hb, "desk-1") is None


async def test_garbage_and_bad_jobs_go_to_the_dlq_while_printing_goes_on(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    store = Store(redis, venue)
    k = Keys(venue)
    ids = await enqueue_many(store, 3, "before")
    await redis.lpush(k.pool, "pushed-by-hand")  # no job record
    await redis.hset(k.job("badjson"), mapping={"payload": "{not json", "state": "queued"})
    await redis.lpush(k.pool, "badjson")
    await redis.hset(k.job("noname"), mapping={"payload": json.dumps({"attendee_id": "x"}), "state": "queued"})
    await redis.lpush(k.pool, "noname")
    huge = json.dumps({"attendee_id": "huge", "name": "x" * 17000})  # past the size enqueue allows
    await redis.hset(k.job("huge"), mapping={"payload": huge, "state": "queued"})
    await redis.lpush(k.pool, "huge")
    # A name with a character no font has: cannot be rendered, never retried.
    unrenderable = parse_job({"attendee_id": "norender", "name": "Ghost \U000e0fff"})
    await store.enqueue(unrenderable.job_id, unrenderable.payload(), None)
    ids += await enqueue_many(store, 3, "after")
    async with running_agent(tmp_path, venue, redis_server.url, print_time=0.01):
        await wait_until(lambda: eq(printed_count(redis, venue), 6))
        await wait_until(lambda: eq(redis.llen(k.dlq), 5))
    bad = ("pushed-by-hand", "badjson", "noname", "norender", "huge")
    reasons = {j: (await redis.hget(k.job(j), "error")).decode() for j in bad}
    assert "no job record" in reasons["pushed-by-hand"]
    assert "not valid JSON" in reasons["badjson"]
    assert "name is required" in reasons["noname"]
    assert "U+E0FFF" in reasons["norender"]
    assert "larger than 16384" in reasons["huge"]
    assert print_log_copies(tmp_path / "desk-1.prints.jsonl") == {i: 1 for i in ids}


async def test_a_job_that_keeps_failing_is_dead_lettered_after_max_attempts(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    store = Store(redis, venue)
    k = Keys(venue)
    SimControl(tmp_path / "desk-1.control.json").set_fault(None, fail_attendees=["a1"])
    ids = await enqueue_many(store, 4)
    async with running_agent(tmp_path, venue, redis_server.url, print_time=0.01, jobs__max_attempts=3):
        await wait_until(lambda: eq(redis.llen(k.dlq), 1))
        await wait_until(lambda: eq(printed_count(redis, venue), 3))
    assert await redis.lrange(k.dlq, 0, -1) == [b"a1"]
    assert await redis.hget(k.job("a1"), "attempts") == b"3"
    assert b"jammed" in await redis.hget(k.job("a1"), "error")
    assert print_log_copies(tmp_path / "desk-1.prints.jsonl") == {i: 1 for i in ids if i != "a1"}


async def test_a_printer_out_of_labels_releases_and_hands_back_and_prints_nothing_twice(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    store = Store(redis, venue)
    k = Keys(venue)
    control = SimControl(tmp_path / "desk-1.control.json")
    control.set_fault("media_out")
    pinned = await enqueue_many(store, 3, "pin", printer="desk-1")
    async with running_agent(tmp_path, venue, redis_server.url, print_time=0.01):
        # Declared down after 3 failed probes: its pinned jobs go to the pool for any printer.
        await wait_until(lambda: eq(redis.llen(k.pool), 3))
        assert await redis.llen(k.queue("desk-1")) == 0
        await assert_pinned_index_exact(redis, venue)  # handed back: out of the index too
        control.set_fault(None)
        await wait_until(lambda: eq(printed_count(redis, venue), 3))
    kinds = [f[b"event"] for _, f in await redis.xrange(k.events)]
    assert b"handed_back" in kinds and b"device_down" in kinds and b"device_up" in kinds
    assert print_log_copies(tmp_path / "desk-1.prints.jsonl") == {i: 1 for i in pinned}


async def test_a_job_cut_short_by_a_jam_is_released_as_maybe_printed(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    store = Store(redis, venue)
    k = Keys(venue)
    control = SimControl(tmp_path / "desk-1.control.json")
    await enqueue_many(store, 1)
    async with running_agent(tmp_path, venue, redis_server.url, print_time=1.0):
        await wait_until(lambda: state_is(redis, k, "a0", b"printing"))
        await asyncio.sleep(0.2)
        control.set_fault("jam")
        await wait_until(lambda: state_is(redis, k, "a0", b"queued"))
        job = await redis.hgetall(k.job("a0"))
        assert job[b"maybe_printed"] == b"1" and b"desk-1 (desk of desk-1)" in job[b"maybe_printed_where"]
        control.set_fault(None)
        await wait_until(lambda: state_is(redis, k, "a0", b"printed"))
    assert await redis.hget(k.job("a0"), "maybe_duplicate") == b"1"


async def test_the_happy_path_costs_two_round_trips_and_three_commands_per_badge(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    """begin, then confirm with the next take riding in its round trip: 2 round trips, 3 commands a badge."""
    store = Store(redis, venue)
    sha = {name: default_library().function(name) for name in ("beat", "sweep", "begin", "confirm")}
    control = SimControl(tmp_path / "desk-1.control.json")
    n = 20
    async with running_agent(tmp_path, venue, redis_server.url, print_time=0.0) as agent:
        trips = RoundTrips(agent.redis)  # before the agent's first connection: it counts them all
        # One badge first: a server may lack the library once (then FUNCTION LOAD); that is not the hot path,
        # and without this warm-up the count would depend on which tests ran before on the same server.
        await enqueue_many(store, 1, "warm-up")
        await wait_until(lambda: eq(printed_count(redis, venue), 1))
        # All badges wait in the pool before the printer is ready again, so every take finds one.
        control.set_fault("paused")
        await wait_until(lambda: not agent.device.ready.is_set())
        ids = await enqueue_many(store, n)
        monitor = Monitor(redis_server.port)
        await asyncio.sleep(0.1)
        mark = len(trips.sent)
        control.set_fault(None)
        await wait_until(lambda: eq(printed_count(redis, venue), n + 1))
        await asyncio.sleep(0.1)
        seen = monitor.close()
    own = (await redis.client_info())["addr"]
    once_a_second = (sha["beat"], sha["sweep"])  # heartbeats and the sweep run once a second, not once a badge
    commands = [
        (command, first_arg)
        for _, client, command, first_arg in seen
        # Lua-internal calls are not sent by a client; our own client is the test.
        if client not in ("lua", own) and first_arg not in once_a_second
    ]
    begins = [i for i, c in enumerate(commands) if c[1] == sha["begin"]]
    confirms = [i for i, c in enumerate(commands) if c[1] == sha["confirm"]]
    assert len(begins) == n and len(confirms) == n
    # From the first begin to the last confirm: take, begin, confirm a badge, less the take of the first one.
    assert len(commands[begins[0] : confirms[-1] + 1]) == 3 * n - 1, commands
    # Round trips over the same stretch, counted at the agent's socket: begin, then confirm + the next take.
    sends = [head for _, head in trips.sent[mark:] if not any(s.encode() in head for s in once_a_second)]
    first = next(i for i, head in enumerate(sends) if sha["begin"].encode() in head)
    last = max(i for i, head in enumerate(sends) if sha["confirm"].encode() in head)
    assert last - first + 1 == 2 * n, [head[:80] for head in sends[first : last + 1]]
    assert print_log_copies(tmp_path / "desk-1.prints.jsonl") == {i: 1 for i in ["warm-up0", *ids]}


async def test_a_printer_that_is_off_burns_no_attempts_and_kills_no_job(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    """Nothing reached the printer: the printer failed, not the badge. Jobs wait for a printer, never die of it."""
    store = Store(redis, venue)
    k = Keys(venue)
    control = SimControl(tmp_path / "desk-1.control.json")
    ids = await enqueue_many(store, 2)
    async with running_agent(tmp_path, venue, redis_server.url, print_time=0.01, jobs__max_attempts=1):
        # Both printed before the power goes: a badge cut short mid-print did reach the printer, and is not this test.
        await wait_until(lambda: eq(printed_count(redis, venue), 2))
        control.set_fault("power_off")
        more = await enqueue_many(store, 3, "later")
        await asyncio.sleep(1.0)  # the behaviour under test: many probe intervals with the power off burn nothing
        assert await redis.llen(k.dlq) == 0
        for job_id in more:
            assert await redis.hget(k.job(job_id), "attempts") == b"0"
        control.set_fault(None)
        await wait_until(lambda: eq(printed_count(redis, venue), 5))
    assert print_log_copies(tmp_path / "desk-1.prints.jsonl") == {i: 1 for i in ids + more}


async def test_each_printed_badge_is_closed_counted_and_logged_once(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Back to back, a badge's bookkeeping rides along with the next badge's begin; none is lost or doubled, and
    the last one is done when the queue runs dry, not when the next badge comes."""
    ids = await enqueue_many(Store(redis, venue), 25, "bk")
    with caplog.at_level(logging.INFO, logger="agent"):
        async with running_agent(tmp_path, venue, redis_server.url, print_time=0.0) as agent:
            await wait_until(lambda: agent.printed == 25)
            assert metric_samples(agent.metrics.text()[0].decode())[("badge_jobs_printed_total", ())] == 25
            assert not agent.journal.open_entries()
            logged = [getattr(r, "fields", {}).get("job") for r in caplog.records if r.getMessage() == "printed"]
            assert sorted(logged) == sorted(ids)
    records = [json.loads(line) for line in (tmp_path / "desk-1.journal").read_text(encoding="utf-8").splitlines()]
    closed = [r["job"] for r in records if r.get("stage") == "closed"]
    assert sorted(closed) == sorted(ids)
