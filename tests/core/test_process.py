"""The agent as a real process: signals, and a Redis that is killed and restarted under it."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

from redis.asyncio import Redis

from cli.redis_server import RedisServer
from protocol.keys import Keys
from protocol.store import Store
from tests.support.agents import at_least, enqueue_many, printed_count, running_process, state_is, write_agent_config
from tests.support.prints import print_log_copies
from tests.support.venue import assert_each_unfinished_job_in_one_list
from tests.support.waiting import wait_until


async def test_sigterm_lets_the_badge_in_progress_finish_and_exits_zero(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    store = Store(redis, venue)
    k = Keys(venue)
    ids = await enqueue_many(store, 3)
    config = write_agent_config(tmp_path / "desk-1.yaml", venue, redis_server.url, "desk-1", print_time=1.5)
    with running_process(config) as proc:
        await wait_until(lambda: state_is(redis, k, ids[0], b"printing"))
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.to_thread(proc.wait, 15) == 0
    assert await redis.hget(k.job(ids[0]), "state") == b"printed"
    assert print_log_copies(tmp_path / "desk-1.prints.jsonl") == {ids[0]: 1}
    # The rest were never taken: still queued, each in exactly one list, in order.
    assert await redis.lrange(k.pool, 0, -1) == [ids[2].encode(), ids[1].encode()]
    await assert_each_unfinished_job_in_one_list(redis, venue, ids)
    log = config.with_suffix(".log").read_text()
    assert "Traceback" not in log and "agent stopped" in log


async def test_sigterm_past_the_grace_period_releases_the_badge_as_maybe_printed(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    store = Store(redis, venue)
    k = Keys(venue)
    ids = await enqueue_many(store, 2)
    config = write_agent_config(
        tmp_path / "desk-1.yaml", venue, redis_server.url, "desk-1", print_time=30, timing__shutdown_grace=0.5
    )
    with running_process(config) as proc:
        await wait_until(lambda: state_is(redis, k, ids[0], b"printing"))
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.to_thread(proc.wait, 15) == 0
    job = await redis.hgetall(k.job(ids[0]))
    assert job[b"state"] == b"queued" and job[b"maybe_printed"] == b"1"
    # Released to the front: the next printer takes it first, and will be told it may exist already.
    assert (await redis.lrange(k.pool, -1, -1)) == [ids[0].encode()]
    await assert_each_unfinished_job_in_one_list(redis, venue, ids)


async def test_redis_killed_and_restarted_mid_run_loses_nothing(tmp_path: Path, venue: str) -> None:
    server = RedisServer(tmp_path / "redis", appendonly=True)
    server.start()
    redis = Redis.from_url(server.url)
    try:
        store = Store(redis, venue)
        ids = await enqueue_many(store, 40)
        config = write_agent_config(tmp_path / "desk-1.yaml", venue, server.url, "desk-1", print_time=0.05)
        with running_process(config) as proc:
            await wait_until(lambda: at_least(printed_count(redis, venue), 10))
            server.kill()
            # Redis stays down until the agent has noticed and is waiting for it, however long that takes here.
            await wait_until(lambda: "waiting for redis" in config.with_suffix(".log").read_text())
            server.start()
            await wait_until(lambda: at_least(printed_count(redis, venue), 40), timeout=30)
            proc.send_signal(signal.SIGTERM)
            assert await asyncio.to_thread(proc.wait, 15) == 0
        copies = print_log_copies(tmp_path / "desk-1.prints.jsonl")
        assert copies == {i: 1 for i in ids}
        await assert_each_unfinished_job_in_one_list(redis, venue, ids)
        log = config.with_suffix(".log").read_text()
        assert "redis unavailable" in log or "heartbeat failed" in log
        assert "Traceback" not in log
    finally:
        await redis.aclose()
        server.stop()


async def test_redis_unreachable_at_start_is_retried_until_it_comes(tmp_path: Path, venue: str) -> None:
    server = RedisServer(tmp_path / "redis")  # not started yet: the agent starts first
    config = write_agent_config(tmp_path / "desk-1.yaml", venue, server.url, "desk-1", print_time=0.01)
    with running_process(config) as proc:
        # Redis comes only once the agent has found it missing and is waiting for it.
        await wait_until(lambda: "waiting for redis" in config.with_suffix(".log").read_text())
        assert proc.poll() is None  # still running, retrying
        server.start()
        redis = Redis.from_url(server.url)
        try:
            ids = await enqueue_many(Store(redis, venue), 3)
            await wait_until(lambda: at_least(printed_count(redis, venue), 3), timeout=20)
            proc.send_signal(signal.SIGTERM)
            assert await asyncio.to_thread(proc.wait, 15) == 0
        finally:
            await redis.aclose()
            server.stop()
    assert print_log_copies(tmp_path / "desk-1.prints.jsonl") == {i: 1 for i in ids}
    log = config.with_suffix(".log").read_text()
    assert "waiting for redis" in log and "Connect call failed" in log
    assert "Traceback" not in log
