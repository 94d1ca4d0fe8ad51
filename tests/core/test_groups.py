"""Groups of jobs one printer prints whole and in order (a box of pre-printed badges): claimed whole by a ready
printer, never stolen, released back into the box, handed on whole from a dead printer with a continuation label."""

from __future__ import annotations

import json
from pathlib import Path

from redis.asyncio import Redis

from cli.redis_server import RedisServer
from protocol.codec import dec, enc
from protocol.jobs import parse_job
from protocol.keys import Keys
from protocol.store import Store
from tests.support.agents import add, at_least, printed_count, running_agent
from tests.support.waiting import wait_until

CONT = json.dumps({"job_id": "", "attendee_id": "box-1", "name": "Box 1, continued", "company": "{first} - Z",
                   "role": "{count} badges"})  # fmt: skip


async def add_box(store: Store, gid: str, n: int, printers: tuple[str, ...] = ()) -> list[str]:
    """A group: a separator then ``n`` badges; its job ids in print order."""
    jobs = [(f"{gid}.sep", {"attendee_id": gid, "name": f"Box {gid}"}, "separator", "")]
    jobs += [(f"{gid}.{i}", {"attendee_id": f"{gid}-{i}", "name": f"Person {i}"}, "preprint", f"Person {i}")
             for i in range(n)]  # fmt: skip
    encoded = [
        (
            enc(job_id),
            enc(parse_job({"job_id": job_id, **fields}).payload()),
            enc(json.dumps({"kind": kind})),
            enc(label),
        )
        for job_id, fields, kind, label in jobs
    ]
    added = await store.add_group(gid, encoded, printers, CONT)
    assert added.kind == "added" and added.count == n + 1
    return [job_id for job_id, *_ in jobs]


async def take_begin_confirm(store: Store, me: str) -> str:
    taken = await store.take(me)
    assert taken is not None
    begun = await store.begin(me, "here", taken.job_id)
    assert begun.kind == "print"
    await store.confirm(me, "here", taken.job_id, begun.epoch)
    return taken.job_id


async def test_a_group_is_claimed_whole_and_taken_in_order_after_door_badges(redis: Redis, venue: str) -> None:
    store = Store(redis, venue)
    box1 = await add_box(store, "r.1", 3)
    box2 = await add_box(store, "r.2", 2)
    assert (await store.add_group("r.1", [], (), "")).kind == "exists"
    assert await store.take("p1") is None  # a group is nobody's before it is claimed
    claimed = await store.claim_group("p1")
    assert claimed is not None and claimed.kind == "claimed" and claimed.count == 4
    # One group at a time: the next waits for a printer with nothing of its own left.
    again = await store.claim_group("p1")
    assert again is not None and again.why == "busy"
    door = await add(store, "door-1")
    assert await take_begin_confirm(store, "p1") == door  # someone waiting goes before the box
    assert [await take_begin_confirm(store, "p1") for _ in box1] == box1
    assert await store.take("p1") is None
    claimed = await store.claim_group("p2")
    assert claimed is not None and claimed.count == 3
    assert [await take_begin_confirm(store, "p2") for _ in box2] == box2
    assert await store.claim_group("p1") is None


async def test_a_group_for_named_printers_is_claimed_by_none_other(redis: Redis, venue: str) -> None:
    store = Store(redis, venue)
    await add_box(store, "r.1", 1, printers=("p2",))
    assert await store.claim_group("p1") is None
    claimed = await store.claim_group("p2")
    assert claimed is not None and claimed.kind == "claimed"


async def test_a_claimed_groups_badges_are_never_stolen_and_a_failed_one_stays_first(redis: Redis, venue: str) -> None:
    store = Store(redis, venue)
    k = Keys(venue)
    await store.beat("p1", {"state": "ready"}, 60_000, first=True)
    await store.beat("p2", {"state": "ready"}, 60_000, first=True)
    box = await add_box(store, "r.1", 3)
    await store.claim_group("p1")
    # Long past any affinity wait: nothing of p1's box is in reach of steal.
    await redis.hset(k.job(box[0]), "enqueued_ms", 0)
    assert await store.steal("p2", 0) is None
    taken = await store.take("p1")
    assert taken is not None and taken.job_id == box[0]
    begun = await store.begin("p1", "here", box[0])
    released = await store.release("p1", "here", box[0], "failed", "out of labels", 5)
    assert begun.kind == "print" and released == "released"
    # Back at the front of p1's own rest of the box, not in the pool.
    assert await redis.llen(k.pool) == 0
    assert await redis.lrange(k.group_held("p1"), 0, -1) == [enc(i) for i in reversed(box)]


async def test_a_dead_printers_box_goes_on_whole_from_its_first_unconfirmed_badge(redis: Redis, venue: str) -> None:
    store = Store(redis, venue)
    k = Keys(venue)
    await store.beat("p1", {"state": "ready", "location": "Hall A"}, 60_000, first=True)
    box = await add_box(store, "r.1", 4)
    later = await add_box(store, "r.2", 1)
    await store.claim_group("p1")
    assert [await take_begin_confirm(store, "p1") for _ in range(2)] == box[:2]
    # The third badge is under the head when p1's agent dies.
    taken = await store.take("p1")
    assert taken is not None and (await store.begin("p1", "Hall A", taken.job_id)).kind == "print"
    reclaimed = await store.reclaim("p1", "p2", None)
    assert reclaimed.kind == "reclaimed" and reclaimed.held == ""  # the box took its badge along
    held = await redis.hgetall(k.job(box[2]))
    assert held[b"maybe_printed"] == b"1" and b"p1 (Hall A)" in held[b"maybe_printed_where"]
    assert held[b"state"] == b"queued"
    # The rest of the box is claimed next, before box 2, by one printer, opened by "continued".
    claimed = await store.claim_group("p2")
    assert claimed is not None and claimed.count == 4
    rest = [await take_begin_confirm(store, "p2") for _ in range(4)]
    assert rest == ["r.1:c1", *box[2:]]
    label = json.loads(await redis.hget(k.job("r.1:c1"), "payload"))
    assert label["job_id"] == "r.1:c1" and label["company"] == "Person 1 - Z" and label["role"] == "3 badges"
    assert await redis.hget(k.job("r.1:c1"), "kind") == b"separator"
    # The badge possibly printed at p1 printed again here: flagged for staff.
    assert await redis.hget(k.job(box[2]), "maybe_duplicate") == b"1"
    assert (await store.claim_group("p2")) is not None
    assert [await take_begin_confirm(store, "p2")] == later[:1]
    # Reclaimed twice: nothing moves again.
    assert (await store.group_back("p1", "p3", None, "again")).kind == "none"


async def test_a_printer_holding_two_has_one_of_its_box_and_its_death_hands_both_on_flagged(
    redis: Redis, venue: str
) -> None:
    """An IPP printer may hold the next badge while one prints (take's room 2), but never a second of its box: a
    door badge may wait behind the box's badge. When it dies holding both, the box goes on whole from the badge it
    held, and the door badge to the pool, each flagged with its place."""
    store = Store(redis, venue)
    k = Keys(venue)
    await store.beat("p1", {"state": "ready", "location": "Hall A"}, 60_000, first=True)
    box = await add_box(store, "r.1", 3)
    await store.claim_group("p1")
    assert await take_begin_confirm(store, "p1") == box[0]  # the separator
    taken = await store.take("p1", room=2)
    assert taken is not None and taken.job_id == box[1]
    assert (await store.begin("p1", "Hall A", box[1])).kind == "print"
    # Room for a second, but the box's next badge does not wait at the printer behind its own.
    assert await store.take("p1", room=2) is None
    door = await add(store, "door-1")
    taken = await store.take("p1", room=2)
    assert taken is not None and taken.job_id == door
    assert (await store.begin("p1", "Hall A", door)).kind == "print"  # handed to the printer, waiting
    assert await redis.lrange(k.inflight("p1"), 0, -1) == [enc(door), enc(box[1])]
    reclaimed = await store.reclaim("p1", "p2", None)
    assert reclaimed.kind == "reclaimed" and reclaimed.held == door  # the box took its own badge along
    for job_id in (box[1], door):
        held = await redis.hgetall(k.job(job_id))
        assert held[b"maybe_printed"] == b"1" and b"p1 (Hall A)" in held[b"maybe_printed_where"], job_id
        assert held[b"state"] == b"queued"
    assert await redis.lrange(k.pool, 0, -1) == [enc(door)]
    # The rest of the box, whole and in order, opened by "continued", claimed by one printer.
    assert await take_begin_confirm(store, "p2") == door
    claimed = await store.claim_group("p2")
    assert claimed is not None and claimed.count == 4
    assert [await take_begin_confirm(store, "p2") for _ in range(4)] == ["r.1:c1", *box[1:]]


async def test_a_box_given_back_before_its_label_printed_gets_no_second_label(redis: Redis, venue: str) -> None:
    store = Store(redis, venue)
    box = await add_box(store, "r.1", 2)
    await store.claim_group("p1")
    back = await store.group_back("p1", "p1", None, "printer out of labels")
    assert back.kind == "back" and back.count == 3 and back.continued == ""
    await store.claim_group("p2")
    assert [await take_begin_confirm(store, "p2") for _ in box] == box


async def test_a_drained_printer_hands_the_rest_of_its_box_on_whole_at_once(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    store = Store(redis, venue)
    k = Keys(venue)
    box = await add_box(store, "r.1", 30)
    async with running_agent(tmp_path, venue, redis_server.url, name="p1", print_time=0.05):
        await wait_until(lambda: at_least(printed_count(redis, venue), 3), timeout=20)
        await store.drain("p1", "drain", "ops")
        await wait_until(lambda: _waiting(redis, k, "r.1"), timeout=20)
    # Not one badge of the box went to the pool, and what is left waits whole, opened by its continued label.
    assert await redis.llen(k.pool) == 0
    rest = [dec(j) for j in reversed(await redis.lrange(k.group_queue("r.1"), 0, -1))]
    assert rest[0] == "r.1:c1" and rest[1:] == box[-(len(rest) - 1) :]


async def _waiting(redis: Redis, k: Keys, gid: str) -> bool:
    return await redis.hget(k.group(gid), "state") == b"waiting" and await redis.llen(k.groups) == 1
