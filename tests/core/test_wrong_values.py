"""A wrong value in Redis, written by a role's own user (a kiosk's, the intake's, the pretix sync's HSET), never stops a
printer or loses a record: a job field the steps read as a number, a state or a list of printers dead-letters that
job with the field named, and the printer goes on; a stats counter that is not a number restarts with an event, and
the job, its owner and the printed record are written all the same."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from redis.asyncio import Redis

from cli.redis_server import RedisServer
from pretix_sync.keys import CONSUMER, PretixKeys
from pretix_sync.outbox import Outbox
from protocol.jobs import parse_job
from protocol.keys import Keys
from protocol.printed import PrintedRecord
from protocol.replies import BeginKind, ReleaseKind, RequeueKind
from protocol.store import Store
from tests.support.agents import enqueue_many, printed_count, running_agent
from tests.support.intake import start_desk
from tests.support.processes import create_user
from tests.support.waiting import wait_until


async def _role(redis_server: RedisServer, redis: Redis, venue: str, tmp_path: Path, role: str) -> Redis:
    """A connection as the venue's user of ``role`` (``badge-agent acl --role``): the attacker's own rights."""
    user = await create_user(redis, venue, tmp_path / f"{role}.pw", role=role)
    return Redis(port=redis_server.port, username=user, password=(tmp_path / f"{role}.pw").read_text().strip())


async def _events(redis: Redis, k: Keys, kind: bytes) -> list[dict[str, str]]:
    return [
        {f.decode(): v.decode() for f, v in fields.items()}
        for _, fields in await redis.xrange(k.events)
        if fields[b"event"] == kind
    ]


#: (field, the value a role user writes): a number, a state, a list of printers
JOB_FIELDS = [
    ("attempts", "many"),
    ("epoch", "1.5"),
    ("reclaims", "x"),
    ("round_epoch", "9" * 30),
    ("state", "haunted"),
    ("zone_printers", '["desk-1", "desk-2"]'),
]


@pytest.mark.parametrize(("field", "value"), JOB_FIELDS, ids=[field for field, _ in JOB_FIELDS])
async def test_a_job_field_of_a_wrong_value_dead_letters_that_job_and_the_printer_goes_on(
    tmp_path: Path, redis_server: RedisServer, redis: Redis, venue: str, field: str, value: str
) -> None:
    k = Keys(venue)
    store = Store(redis, venue)
    broken, *good = await enqueue_many(store, 3)
    kiosk = await _role(redis_server, redis, venue, tmp_path, "kiosk")
    try:
        await kiosk.hset(k.job(broken), field, value)
    finally:
        await kiosk.aclose()
    async with running_agent(tmp_path, venue, redis_server.url, print_time=0.01) as agent:
        # The agent's own count: it moves after the confirm's reply, so the stats may be ahead of it for a moment.
        await wait_until(lambda: agent.printed >= 2, timeout=20)
        assert agent.printed == 2 and agent.snapshot().venue_fault is None
        await wait_until(lambda: _dead(redis, k), timeout=10)
    for job_id in good:
        assert await redis.hget(k.job(job_id), "state") == b"printed"
    assert await redis.lrange(k.dlq, 0, -1) == [broken.encode()]
    assert await redis.lrange(k.inflight("desk-1"), 0, -1) == []
    assert await redis.hget(k.job(broken), "state") == b"dead"
    error = (await redis.hget(k.job(broken), "error") or b"").decode()
    assert error.startswith(f"integrity fault: {k.job(broken)} field {field} is "), error
    assert [e["reason"] for e in await _events(redis, k, b"dead")] == [error]
    assert int(await redis.hget(k.stats, "integrity_fault") or 0) == 1
    health = json.loads(await redis.get(k.health("desk-1")) or b"{}")
    assert "venue fault" not in json.dumps(health)


async def _dead(redis: Redis, k: Keys) -> bool:
    return await redis.llen(k.dlq) == 1


async def test_a_badge_confirmed_after_a_peer_dead_lettered_it_is_never_requeued_to_print_again(
    redis: Redis, venue: str
) -> None:
    """A printer freezes mid-badge and is reclaimed; a role user writes a wrong value into the job; the peer's begin
    dead-letters it; the frozen printer wakes and confirms the paper that came out. Staff requeueing the dead letter
    must not print it again (found by the protocol's model)."""
    k = Keys(venue)
    store = Store(redis, venue)
    [job_id] = await enqueue_many(store, 1)
    assert (taken := await store.take("desk-1")) is not None and taken.job_id == job_id
    begun = await store.begin("desk-1", "hall", job_id)
    assert begun.kind is BeginKind.PRINT
    assert (await store.reclaim("desk-1", "ops", None)).kind == "reclaimed"
    await redis.hset(k.job(job_id), "attempts", "lots")
    assert (await store.take("desk-2")) is not None
    assert (await store.begin("desk-2", "hall", job_id)).kind is BeginKind.DEAD
    assert await redis.lrange(k.dlq, 0, -1) == [job_id.encode()]
    assert (await store.confirm("desk-1", "hall", job_id, begun.epoch))[0] == "printed"

    assert await store.requeue(job_id, "ops") is RequeueKind.PRINTED_ALREADY
    assert await redis.lrange(k.dlq, 0, -1) == []
    assert await redis.lrange(k.pool, 0, -1) == []
    assert await redis.get(k.done(job_id)) == b"desk-1"
    assert (await redis.hget(k.job(job_id), "state")) == b"printed"


async def test_attempts_gone_wrong_while_printing_dead_letters_the_job_at_its_release(redis: Redis, venue: str) -> None:
    k = Keys(venue)
    store = Store(redis, venue)
    [job_id] = await enqueue_many(store, 1)
    taken = await store.take("desk-1")
    assert taken is not None and taken.job_id == job_id
    assert (await store.begin("desk-1", "hall", job_id)).kind is BeginKind.PRINT
    await redis.hset(k.job(job_id), "attempts", "lots")
    released = await store.release("desk-1", "hall", job_id, "failed", "paper jam", 3)
    assert released is ReleaseKind.DEAD
    assert await redis.lrange(k.dlq, 0, -1) == [job_id.encode()]
    assert await redis.lrange(k.inflight("desk-1"), 0, -1) == []
    error = (await redis.hget(k.job(job_id), "error") or b"").decode()
    assert error.startswith(f'integrity fault: {k.job(job_id)} field attempts is "lots"'), error


async def test_a_stats_counter_of_a_wrong_value_restarts_and_the_desk_job_is_created(
    tmp_path: Path, redis_server: RedisServer, redis: Redis, venue: str
) -> None:
    k = Keys(venue)
    kiosk = await _role(redis_server, redis, venue, tmp_path, "kiosk")
    try:
        await kiosk.hset(k.stats, "enqueued", "NaN")
    finally:
        await kiosk.aclose()
    desk, desk_redis = await start_desk(tmp_path, venue, redis_server.url)
    try:
        reply = await desk.client.post(
            "/v1/jobs", json={"attendee_id": "s1", "name": "Stats Guest"}, headers=desk.auth("desk")
        )
        assert reply.status == 201, await reply.text()
        job_id = (await reply.json())["job_id"]
    finally:
        await desk.client.close()
        await desk_redis.aclose()
    assert await redis.hget(k.job(job_id), "state") == b"queued"
    assert await redis.hget(k.job(job_id), "created_by") == b"desk-1"
    assert await redis.smembers(k.owned("desk-1")) == {job_id.encode()}
    assert await redis.hget(k.stats, "enqueued") == b"1"  # restarted, and told
    [fault] = await _events(redis, k, b"integrity_fault")
    assert fault["field"] == "enqueued" and '"NaN"' in fault["reason"], fault


async def test_the_kiosk_cap_holds_with_a_stats_counter_of_a_wrong_value(
    tmp_path: Path, redis_server: RedisServer, redis: Redis, venue: str
) -> None:
    k = Keys(venue)
    await redis.hset(k.stats, "enqueued", "oops")
    desk, desk_redis = await start_desk(tmp_path, venue, redis_server.url)  # a kiosk token: 5 outstanding
    statuses = []
    try:
        for i in range(7):
            reply = await desk.client.post(
                "/v1/jobs", json={"attendee_id": f"k{i}", "name": f"Kiosk {i}"}, headers=desk.auth("kiosk")
            )
            statuses.append(reply.status)
    finally:
        await desk.client.close()
        await desk_redis.aclose()
    assert statuses == [201] * 5 + [429] * 2
    owned = await redis.smembers(k.owned("kiosk-1"))
    assert len(owned) == 5
    for job_id in owned:
        assert await redis.hget(k.job(job_id.decode()), "created_by") == b"kiosk-1"


async def test_a_printed_pretix_job_reaches_the_outbox_with_a_stats_counter_of_a_wrong_value(
    tmp_path: Path, redis_server: RedisServer, redis: Redis, venue: str
) -> None:
    k = Keys(venue)
    store = Store(redis, venue)
    await PrintedRecord(redis, venue).join(CONSUMER)
    job = parse_job({"attendee_id": "p1", "name": "Pretix Guest"})
    await store.enqueue(job.job_id, job.payload(), None)
    await redis.hset(PretixKeys(venue).jobs, job.job_id, "42")
    sync = await _role(redis_server, redis, venue, tmp_path, "pretix-sync")
    try:
        await sync.hset(k.stats, "printed", "[]")
    finally:
        await sync.aclose()
    async with running_agent(tmp_path, venue, redis_server.url, print_time=0.01) as agent:
        await wait_until(lambda: _state(redis, k, job.job_id, b"printed"), timeout=20)
        assert agent.snapshot().venue_fault is None
    outbox = Outbox(redis, venue)
    assert await outbox.pump() == 1
    assert [(e.job_id, e.first) for e in await outbox.entries()] == [(job.job_id, True)]
    assert await printed_count(redis, venue) == 1
    assert [e["field"] for e in await _events(redis, k, b"integrity_fault")] == ["printed"]


async def _state(redis: Redis, k: Keys, job_id: str, state: bytes) -> bool:
    return await redis.hget(k.job(job_id), "state") == state
