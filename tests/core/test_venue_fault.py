"""A Redis error retrying cannot fix (a key of the wrong type): named in health, backed off, logged once."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path

import pytest
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ReadOnlyError, ResponseError

from agent.liveness import problems
from agent.venue_fault import venue_fault_name
from cli.redis_server import RedisServer
from protocol.keys import Keys
from protocol.library import default_library
from protocol.scripts import LibraryMissing
from protocol.store import Store
from tests.support.agents import enqueue_many, printed_count, running_agent
from tests.support.waiting import wait_until


def test_only_errors_retrying_cannot_fix_are_venue_faults() -> None:
    assert venue_fault_name(ResponseError("WRONGTYPE Operation against a key holding the wrong kind of value")) == (
        "wrong_type"
    )
    assert venue_fault_name(ResponseError("ERR user_script:12: WRONGTYPE Operation against ...")) == "wrong_type"
    assert venue_fault_name(ResponseError("NOPERM User x has no permissions")) == "no_permission"
    assert venue_fault_name(LibraryMissing(default_library())) == "library_missing"
    for transient in (ReadOnlyError("READONLY You can't write"), ResponseError("LOADING"), RedisConnectionError()):
        assert venue_fault_name(transient) is None


async def _commands(redis: Redis) -> int:
    info = await redis.info("stats")
    return int(info["total_commands_processed"])


async def test_a_key_of_the_wrong_type_is_a_named_venue_fault_not_a_busy_loop(
    tmp_path: Path, redis_server: RedisServer, redis: Redis, venue: str, caplog: pytest.LogCaptureFixture
) -> None:
    k = Keys(venue)
    store = Store(redis, venue)
    async with running_agent(tmp_path, venue, redis_server.url, print_time=0.01) as agent:
        await enqueue_many(store, 1, prefix="before")
        await wait_until(lambda: printed_count(redis, venue), 15)
        caplog.clear()
        caplog.set_level(logging.INFO)
        await redis.set(k.pool, "oops")
        await wait_until(lambda: agent.snapshot().venue_fault is not None, 10)
        before = await _commands(redis)
        await asyncio.sleep(2.0)  # the behaviour under test: what the faulted agent sends Redis in two seconds
        spent = await _commands(redis) - before
        # A busy loop sends thousands in 2 s; heartbeats and a backed-off retry send a few dozen.
        assert spent < 300, f"{spent} Redis commands in 2 s"
        assert any("wrong_type" in p for p in problems(agent.snapshot()))  # /healthz answers 503 with this reason
        health = json.loads(await redis.get(k.health("desk-1")))
        assert health["state"] == "venue_fault" and "wrong_type" in " ".join(health["reasons"])
        faults = [r for r in caplog.records if "venue fault" in r.getMessage()]
        assert len(faults) == 1, [r.getMessage() for r in caplog.records]
        assert not [r for r in caplog.records if "redis unavailable" in r.getMessage()]
        # Fixed by staff: the agent comes back by itself and prints.
        await redis.delete(k.pool)
        await enqueue_many(store, 1, prefix="after")
        await wait_until(lambda: _at_least(printed_count(redis, venue), 2), 30)
        await wait_until(lambda: agent.snapshot().venue_fault is None, 10)
        assert any("cleared" in r.getMessage() for r in caplog.records)


async def _at_least(value: object, n: int) -> bool:
    return await value >= n  # type: ignore[misc,operator]
