"""Agents for tests: their config on a simulated printer, one running in-process or as its own process, jobs for
them, and reading what Redis counted."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError

from agent.config import load_config
from agent.runtime import Agent
from bench.common import agent_config, agent_process
from drivers import build_driver
from protocol.jobs import parse_job
from protocol.keys import Keys
from protocol.store import Store

#: Short timings, so a test sees a heartbeat, a probe and a blocking pop within a fraction of a second.
FAST = {"heartbeat_interval": 0.2, "probe_interval": 0.1, "block_timeout": 0.2}


def write_agent_config(
    path: Path,
    venue: str,
    redis_url: str,
    name: str,
    print_time: float = 0.05,
    **overrides: object,
) -> Path:
    """An agent config on a simulated printer whose control file and print log sit next to the config; HTTP off,
    short timings. ``overrides``: any setting by its path, parts joined by ``__`` (``jobs__max_attempts=1``)."""
    settings = {"printer__driver__io_timeout": 0.3, "http__listen": "off", **overrides}
    return agent_config(path, venue, redis_url, name, print_time, timing=dict(FAST), overrides=settings)


@asynccontextmanager
async def running_agent(
    tmp_path: Path, venue: str, url: str, name: str = "desk-1", **kw: object
) -> AsyncIterator[Agent]:
    """An agent in this process (``write_agent_config``'s, ``kw`` its overrides), stopped at the end of the block."""
    config = load_config(write_agent_config(tmp_path / f"{name}.yaml", venue, url, name, **kw))
    agent = Agent(config, build_driver(config.printer.driver, name))
    task = asyncio.create_task(agent.run())
    try:
        yield agent
    finally:
        agent.stop()
        await asyncio.wait_for(task, 30)


@contextmanager
def running_process(config: Path) -> Iterator[subprocess.Popen[bytes]]:
    """``badge-agent run -c CONFIG`` as its own process (bench.common.agent_process), killed if still running."""
    proc = agent_process(config)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


async def enqueue_many(store: Store, n: int, prefix: str = "a", printer: str | None = None) -> list[str]:
    """``n`` jobs (attendees ``<prefix>0`` ...), pinned to ``printer`` if given; their ids in order."""
    ids = []
    for i in range(n):
        job = parse_job({"attendee_id": f"{prefix}{i}", "name": f"Attendee {i}", "printer": printer})
        await store.enqueue(job.job_id, job.payload(), job.printer)
        ids.append(job.job_id)
    return ids


async def add(store: Store, attendee: str, printer: str | None = None) -> str:
    """Enqueue one job (which must be new); its id."""
    job = parse_job({"attendee_id": attendee, "name": f"Name {attendee}", "printer": printer})
    added, _ = await store.enqueue(job.job_id, job.payload(), job.printer)
    assert added
    return job.job_id


async def print_it(store: Store, me: str, job_id: str) -> tuple[str, str]:
    """Take, begin and confirm ``job_id`` as printer ``me`` would, without a printer; confirm's answer."""
    assert await store.take(me) is not None
    begun = await store.begin(me, f"{me} desk", job_id)
    assert begun.kind == "print", begun
    return await store.confirm(me, f"{me} desk", job_id, begun.epoch)


async def printed_count(redis: Redis, venue: str) -> int:
    """Badges the venue counted printed (its stats hash)."""
    return int(await redis.hget(Keys(venue).stats, "printed") or 0)


async def state_is(redis: Redis, k: Keys, job_id: str, state: bytes) -> bool:
    return await redis.hget(k.job(job_id), "state") == state


async def eq(value: object, expected: int) -> bool:
    """``await value == expected``, for ``wait_until(lambda: eq(printed_count(...), 3))``."""
    return await value == expected  # type: ignore[misc]


async def at_least(value: object, n: int) -> bool:
    """``await value >= n``; False while the test's own connection is down with the server (the next poll
    reconnects)."""
    try:
        return await value >= n  # type: ignore[misc,operator]
    except RedisConnectionError:
        return False
