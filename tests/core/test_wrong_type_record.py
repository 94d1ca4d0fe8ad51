"""A key of one job holding the wrong type (written by hand or a tool) dead-letters that job with the reason; the
printer that takes it goes on printing instead of stalling in a venue fault until someone deletes the key."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from redis.asyncio import Redis

from cli.redis_server import RedisServer
from protocol.keys import Keys
from protocol.replies import RequeueKind
from protocol.store import Store
from tests.support.agents import enqueue_many, printed_count, running_agent
from tests.support.waiting import wait_until

Corrupt = Callable[[Redis, Keys, str], Awaitable[object]]

#: (which key, its type after the hand edit, how the hand wrote it)
CASES: list[tuple[str, str, Corrupt]] = [
    ("job", "string", lambda r, k, j: _replace(r, k.job(j), r.set(k.job(j), "oops"))),
    ("job", "list", lambda r, k, j: _replace(r, k.job(j), r.rpush(k.job(j), "oops"))),
    ("done", "list", lambda r, k, j: r.rpush(k.done(j), "p9")),
    ("done", "hash", lambda r, k, j: r.hset(k.done(j), "by", "p9")),
]


async def _replace(redis: Redis, key: str, write: Awaitable[object]) -> None:
    await redis.delete(key)
    await write


@pytest.mark.parametrize(("key", "kind", "corrupt"), CASES, ids=[f"{key}-{kind}" for key, kind, _ in CASES])
async def test_a_key_of_the_wrong_type_dead_letters_its_job_and_the_printer_goes_on(
    tmp_path: Path, redis_server: RedisServer, redis: Redis, venue: str, key: str, kind: str, corrupt: Corrupt
) -> None:
    k = Keys(venue)
    store = Store(redis, venue)
    broken, good = await enqueue_many(store, 2)
    await corrupt(redis, k, broken)
    async with running_agent(tmp_path, venue, redis_server.url, print_time=0.01) as agent:
        await wait_until(lambda: printed_count(redis, venue), timeout=20)
        assert agent.printed == 1 and await redis.hget(k.job(good), "state") == b"printed"
        assert agent.snapshot().venue_fault is None
    bad_key = k.job(broken) if key == "job" else k.done(broken)
    assert await redis.type(bad_key) == kind.encode()  # left as it was, for staff to look at
    assert await redis.lrange(k.dlq, 0, -1) == [broken.encode()]
    assert await redis.lrange(k.inflight("desk-1"), 0, -1) == []
    reason = f"integrity fault: {bad_key} is a {kind}, not a {'hash' if key == 'job' else 'string'}"
    dead = [
        {f.decode(): v.decode() for f, v in fields.items()}
        for _, fields in await redis.xrange(k.events)
        if fields[b"event"] == b"dead"
    ]
    assert [(e["job_id"], e["reason"].startswith(reason)) for e in dead] == [(broken, True)], dead
    if key == "done":  # the record itself is readable: it says why
        assert await redis.hget(k.job(broken), "state") == b"dead"
        assert (await redis.hget(k.job(broken), "error") or b"").decode().startswith(reason)
    assert int(await redis.hget(k.stats, "integrity_fault") or 0) == 1
    health = json.loads(await redis.get(k.health("desk-1")) or b"{}")
    assert "venue fault" not in json.dumps(health)
    # Staff can send it back once the key is fixed; until then a record that is not a hash stays in the DLQ.
    expected = RequeueKind.NO_RECORD if key == "job" else RequeueKind.REQUEUED  # requeue clears the done gate
    assert await store.requeue(broken, "staff") is expected
