"""Agents for tests and benches: their config on a simulated printer, one running in-process or as its own process,
jobs for them, and reading what Redis counted."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import yaml
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError

from agent.config import load_config
from agent.runtime import Agent
from drivers import build_driver
from protocol.jobs import parse_job
from protocol.keys import Keys
from protocol.store import Store
from tests.support.processes import ROOT


def agent_config(
    path: Path,
    venue: str,
    redis_url: str,
    name: str,
    print_time: float,
    print_log: bool = True,
    journal: bool = True,
    timing: dict[str, float] | None = None,
    http: str | None = None,
    log_level: str = "info",
    driver: dict[str, Any] | None = None,
    overrides: dict[str, object] | None = None,
) -> Path:
    """Write one agent's YAML on a simulated printer (or on ``driver``, a real one); its control file, print log
    and journal sit beside it. ``overrides``: any other setting by its path, parts joined by ``__``
    (``{"jobs__max_attempts": 1, "journal": "/dev/full"}``); a value of None removes the setting."""
    if driver is None:
        driver = {
            "language": "sim",
            "transport": "sim",
            "print_time": print_time,
            "control_file": str(path.parent / f"{name}.control.json"),
        }
        if print_log:
            driver["print_log"] = str(path.parent / f"{name}.prints.jsonl")
    config: dict[str, Any] = {
        "venue": venue,
        "printer": {"name": name, "location": f"desk of {name}", "driver": driver},
        "redis": {"url": redis_url},
        "timing": timing or {},
        "http": {"listen": http},
        "log": {"level": log_level},
    }
    if journal:
        config["journal"] = str(path.parent / f"{name}.journal")
    for dotted, value in (overrides or {}).items():
        node = config
        *parents, leaf = dotted.split("__")
        for part in parents:
            node = node.setdefault(part, {})
        if value is None:
            node.pop(leaf, None)
        else:
            node[leaf] = value
    path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    return path


def agent_process(config: Path) -> subprocess.Popen[bytes]:
    """``badge-agent run -c CONFIG`` as its own process, its log next to the config."""
    with config.with_suffix(".log").open("ab") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "agent", "run", "-c", str(config)],
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )


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
    """``badge-agent run -c CONFIG`` as its own process (``agent_process``), killed if still running."""
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
