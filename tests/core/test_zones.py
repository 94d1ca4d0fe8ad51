"""A zone's badge jobs stay with the zone's printers after they are made (protocol/steal.lua, prelude.lua
``hand_on``): a printer outside the zone steals one only when none of the zone's printers can print; a dead, down or
drained zone printer's jobs go to another zone printer that can print, else the pool. Against a real redis-server,
with printers' health as their heartbeats write it."""

from __future__ import annotations

import json
from pathlib import Path

from redis.asyncio import Redis

from agent.config import load_config
from agent.runtime import Agent
from cli.redis_server import RedisServer
from drivers import build_driver
from protocol.jobs import parse_job
from protocol.keys import Keys
from protocol.store import ZONE_DEAD_AFTER_MS, Store
from tests.support.agents import add, write_agent_config
from tests.support.venue import assert_each_unfinished_job_in_one_list, where_is

HALL_A = ("hall-a", ("a1", "a2"))


async def zone_job(store: Store, attendee: str, printer: str | None) -> str:
    """A badge of Hall A's zone, pinned to ``printer`` (as the intake pins a zone token's badge)."""
    job = parse_job({"attendee_id": attendee, "name": attendee, "printer": printer, "zone": HALL_A[0],
                     "zone_printers": list(HALL_A[1])})  # fmt: skip
    assert job.zoned == HALL_A
    added, _ = await store.enqueue(job.job_id, job.payload(), job.printer, zone=job.zoned)
    assert added
    return job.job_id


async def beat(store: Store, printer: str, state: str) -> None:
    """One heartbeat of ``printer`` publishing ``state`` (protocol/state.py), as its agent's would."""
    await store.beat(printer, {"state": state, "location": f"{printer} desk"}, 60_000, first=False)


async def all_ready(store: Store) -> None:
    """Hall A's two printers and Hall B's one, idle and beating."""
    for printer in ("a1", "a2", "b1"):
        await beat(store, printer, "ready")


async def busy(store: Store, printer: str) -> str:
    """``printer`` takes a job of its own and starts printing it: busy, but able to print."""
    job_id = await add(store, f"own-{printer}", printer)
    assert await store.take(printer) == ("q", job_id)
    assert (await store.begin(printer, f"{printer} desk", job_id)).kind == "print"
    await beat(store, printer, "printing")
    return job_id


async def places(redis: Redis, venue: str, *job_ids: str) -> list[list[str]]:
    found = await where_is(redis, venue)
    return [found.get(job_id, []) for job_id in job_ids]


async def test_an_outsider_leaves_a_zone_job_while_a_zone_printer_is_busy_and_a_zone_mate_takes_it(
    redis: Redis, venue: str
) -> None:
    store = Store(redis, venue)
    await busy(store, "a1")
    held_by_a2 = await busy(store, "a2")
    zoned = await zone_job(store, "renee", "a1")
    plain = await add(store, "dimitris", "a2")  # newer, and of no zone
    await beat(store, "b1", "ready")  # after them: the steal look judges their age by the last beat's server time
    # b1 is idle, the zone job has waited its affinity window (0 here), both of Hall A's printers are busy printing:
    # b1 passes it by and takes the next oldest pinned job, of no zone (a job behind it in q:a1 would wait: a
    # steal takes the oldest job of a queue only).
    assert await store.steal("b1", 0) == plain
    assert await places(redis, venue, zoned) == [["q:a1"]]
    # Nothing else for b1; the zone job still waits for Hall A.
    await store.confirm("b1", "b1 desk", plain, (await store.begin("b1", "b1 desk", plain)).epoch)
    assert await store.steal("b1", 0) is None
    assert await places(redis, venue, zoned) == [["q:a1"]]
    # a2 finishes its badge: a zone mate, idle, steals it as any pinned job.
    await store.confirm("a2", "a2 desk", held_by_a2, (await store.begin("a2", "a2 desk", held_by_a2)).epoch)
    await beat(store, "a2", "ready")
    assert await store.steal("a2", 0) == zoned
    assert await places(redis, venue, zoned) == [["inflight:a2"]]
    await assert_each_unfinished_job_in_one_list(redis, venue, [zoned])


async def test_an_outsider_takes_a_zone_job_when_none_of_the_zone_can_print(redis: Redis, venue: str) -> None:
    store = Store(redis, venue)
    k = Keys(venue)
    await busy(store, "a1")
    await beat(store, "a2", "paused")  # out of labels
    await beat(store, "b1", "ready")
    zoned = await zone_job(store, "renee", "a1")
    await beat(store, "b1", "ready")
    assert await store.steal("b1", 0) is None  # a1 is printing: it can print
    # a1's device goes down: no printer of Hall A can print.
    await beat(store, "a1", "device_down")
    assert await store.steal("b1", 0) == zoned
    (stolen,) = [f for _, f in await redis.xrange(k.events) if f[b"event"] == b"stolen"]
    assert b"no printer of zone hall-a can print" in stolen[b"reason"]

    # Drained, and one not beating for longer than the dead-after window, count as unable too.
    other = await zone_job(store, "lee", "a2")
    await beat(store, "a1", "ready")
    await store.confirm("b1", "b1 desk", zoned, (await store.begin("b1", "b1 desk", zoned)).epoch)
    assert await store.steal("b1", 0) is None  # a1 is ready again
    await store.drain("a1", "drain", "ops")
    await beat(store, "a2", "ready")
    assert await store.steal("b1", 0) is None  # a2 can
    health = k.health("a2")
    stale = (await redis.get(health)).replace(b'"beat_ms":', b'"beat_ms":1,"was":')
    await redis.set(health, stale)  # its last beat long ago (a frozen agent's health lingers until it expires)
    assert await store.steal("b1", 0) == other
    await assert_each_unfinished_job_in_one_list(redis, venue, [zoned, other])


async def test_a_dead_zone_printers_work_goes_to_a_zone_mate_that_can_print_else_the_pool(
    redis: Redis, venue: str
) -> None:
    store = Store(redis, venue)
    k = Keys(venue)
    await all_ready(store)
    held = await zone_job(store, "renee", "a1")
    queued = [await zone_job(store, f"z{i}", "a1") for i in range(2)]
    plain = await add(store, "dimitris", "a1")
    assert await store.take("a1") == ("q", held)
    assert (await store.begin("a1", "a1 desk", held)).kind == "print"
    await redis.zadd(k.hb, {"a1": await store.server_ms() - 10_000})  # silent for 10 s: dead
    result = await store.reclaim("a1", "b1", 3000)
    assert (result.kind, result.held, result.pinned, result.to_zone) == ("reclaimed", held, 3, 3)
    # Hall A's jobs to a2, in their order, the held one the very next; the job of no zone to the pool.
    assert await redis.lrange(k.queue("a2"), 0, -1) == [i.encode() for i in [*reversed(queued), held]]
    assert await redis.lrange(k.pool, 0, -1) == [plain.encode()]
    assert await redis.hget(k.job(held), "maybe_printed_where") == b"a1 (a1 desk)"
    assert await redis.hget(k.job(held), "pinned") == b"a2"  # where cancel looks for it
    await assert_each_unfinished_job_in_one_list(redis, venue, [held, *queued, plain])
    assert await store.take("a2") == ("q", held)
    # The kiosk's answer names the printer printing it: a2's location, not a1's.
    assert (await store.begin("a2", "a2 desk", held)).kind == "print"
    assert await redis.hget(k.job(held), "printer") == b"a2"
    assert (await store.cancel(queued[0], "desk")).kind == "cancelled"

    # a2 dies too, holding Hall A's last job: no printer of the zone can print, so the pool.
    await redis.zadd(k.hb, {"a2": await store.server_ms() - 10_000})
    result = await store.reclaim("a2", "b1", 3000)
    assert (result.kind, result.held, result.pinned, result.to_zone) == ("reclaimed", held, 1, 0)
    assert await redis.lrange(k.pool, 0, -1) == [plain.encode(), queued[1].encode(), held.encode()]
    await assert_each_unfinished_job_in_one_list(redis, venue, [held, queued[1], plain])


async def test_a_drained_or_down_zone_printer_hands_its_zone_jobs_to_a_zone_mate(redis: Redis, venue: str) -> None:
    store = Store(redis, venue)
    k = Keys(venue)
    await all_ready(store)
    first = await zone_job(store, "renee", "a1")
    plain = await add(store, "dimitris", "a1")
    assert await store.drain("a1", "drain", "ops") == 2
    assert await places(redis, venue, first, plain) == [["q:a2"], ["pool"]]
    (drained,) = [f for _, f in await redis.xrange(k.events) if f[b"event"] == b"drained"]
    assert (drained[b"handed_back"], drained[b"to_zone"]) == (b"2", b"1")
    # a2's device goes down: a1 is drained, so Hall A's job goes to the pool, for any printer.
    await beat(store, "a2", "device_down")
    assert await store.handback("a2", "printer down: out of labels") == 1
    assert await places(redis, venue, first) == [["pool"]]
    await assert_each_unfinished_job_in_one_list(redis, venue, [first, plain])


async def test_a_zone_job_names_its_zone_or_none(redis: Redis, venue: str) -> None:
    store = Store(redis, venue)
    zoned = await zone_job(store, "renee", None)  # none of the zone could print when it was made: the pool
    plain = await add(store, "dimitris")
    k = Keys(venue)
    assert await redis.hmget(k.job(zoned), "zone", "zone_printers") == [b"hall-a", b"a1 a2"]
    assert await redis.hmget(k.job(plain), "zone", "zone_printers") == [None, None]


async def test_a_zone_job_a_printer_gives_back_goes_to_a_zone_mate_that_can_print(redis: Redis, venue: str) -> None:
    store = Store(redis, venue)
    k = Keys(venue)
    await all_ready(store)
    zoned = await zone_job(store, "renee", "a1")
    plain = await add(store, "dimitris", "a1")
    assert await store.take("a1") == ("q", zoned)
    assert (await store.begin("a1", "a1 desk", zoned)).kind == "print"
    # The label jammed before anything came out: a2, idle in the same hall, gets it next, not b1 from the pool.
    assert await store.release("a1", "a1 desk", zoned, "failed", "jam", 3) == "released"
    assert await places(redis, venue, zoned) == [["q:a2"]]
    (released,) = [f for _, f in await redis.xrange(k.events) if f[b"event"] == b"released"]
    assert released[b"to"] == b"a2"
    assert await store.take("a1") == ("q", plain)
    assert await store.release("a1", "a1 desk", plain, "unsent", "printer paused", 3) == "released"
    assert await places(redis, venue, plain) == [["pool"]]  # of no zone: the pool, as ever
    # a2 cannot print either (paused): a zone job given back goes to the pool.
    assert await store.take("a2") == ("q", zoned)
    await beat(store, "a2", "paused")
    await beat(store, "a1", "paused")
    assert await store.release("a2", "a2 desk", zoned, "unsent", "printer paused", 3) == "released"
    assert await places(redis, venue, zoned) == [["pool"]]
    await assert_each_unfinished_job_in_one_list(redis, venue, [zoned, plain])


async def test_a_late_confirm_voids_the_copy_a_reclaim_handed_to_a_zone_mate(redis: Redis, venue: str) -> None:
    # Found by the protocol model (tests/model): a1 froze with a zone's badge at its printer, a peer reclaimed it and
    # handed it to a2's queue; a1 wakes, its printer proved the badge came out, and it confirms late. The copy waiting
    # in q:a2 is void: it must leave the queue and the pinned index, as a pool copy does, or a printed job would also
    # wait in a queue.
    store = Store(redis, venue)
    k = Keys(venue)
    await all_ready(store)
    held = await zone_job(store, "renee", "a1")
    assert await store.take("a1") == ("q", held)
    begun = await store.begin("a1", "a1 desk", held)
    await redis.zadd(k.hb, {"a1": await store.server_ms() - 10_000})
    assert (await store.reclaim("a1", "b1", 3000)).to_zone == 1
    assert await places(redis, venue, held) == [["q:a2"]]
    assert await store.confirm("a1", "a1 desk", held, begun.epoch) == ("printed", "a1 (a1 desk)")
    assert await redis.get(k.done(held)) == b"a1"
    assert await places(redis, venue, held) == [[]]
    assert await redis.zrange(k.pinned, 0, -1) == []
    # The same late confirm replayed (a lost reply) asks nothing more and changes nothing.
    assert await store.confirm("a1", "a1 desk", held, begun.epoch) == ("printed", "")
    assert await store.take("a2") is None


async def beat_ago(redis: Redis, venue: str, printer: str, ms: int) -> None:
    """``printer``'s last heartbeat ``ms`` ago by the server's clock (a frozen agent's health lingers until it
    expires)."""
    health = Keys(venue).health(printer)
    seconds, micros = await redis.time()
    record = json.loads(await redis.get(health))
    record["beat_ms"] = seconds * 1000 + micros // 1000 - ms
    await redis.set(health, json.dumps(record), keepttl=True)


async def test_a_store_judges_zone_printers_by_the_window_it_was_built_with(redis: Redis, venue: str) -> None:
    """Each process states its zone window once, building its store; every step that hands a zone's job on goes by
    it. a2 last beat 5 s ago: able to print by a 10 s window, not by the default 3 s one."""
    default, wide = Store(redis, venue), Store(redis, venue, zone_dead_after_ms=10_000)
    assert default.zone_dead_after_ms == ZONE_DEAD_AFTER_MS == 3000 and wide.zone_dead_after_ms == 10_000
    await all_ready(default)
    await beat(default, "a1", "device_down")
    zoned = await zone_job(default, "renee", "a1")
    await beat_ago(redis, venue, "a2", 5000)
    for store in (default, wide):  # after the job: the steal look judges its age by the last beat's server time
        await beat(store, "b1", "ready")
    assert await wide.steal("b1", 0) is None  # a2 can print: Hall B leaves it
    assert await default.steal("b1", 0) == zoned  # none of Hall A can print
    other = await zone_job(default, "lee", "a1")
    assert await wide.handback("a1", "printer down: out of labels") == 1
    assert await places(redis, venue, other) == [["q:a2"]]  # to a2, which can print by the wide window
    await assert_each_unfinished_job_in_one_list(redis, venue, [zoned, other])


async def test_an_agents_store_judges_zone_printers_by_its_heartbeat_window(
    tmp_path: Path, redis_server: RedisServer, venue: str
) -> None:
    path = write_agent_config(tmp_path / "a1.yaml", venue, redis_server.url, "a1", timing__dead_after_misses=5)
    config = load_config(path)
    agent = Agent(config, build_driver(config.printer.driver, "a1"))
    try:
        assert agent.store.zone_dead_after_ms == int(config.timing.dead_after * 1000) == 1000  # 0.2 s x 5
    finally:
        await agent.redis.aclose()
