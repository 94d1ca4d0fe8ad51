"""One program drives a printer at a time: while the printer's agent beats, `test-print` (and `setup`) hand the test
badge to it as a job for that printer alone and wait for its outcome; with no agent they drive the printer
themselves. Brother QL emulators on loopback, read through the driver's own reading of the Brother status."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import yaml
from redis.asyncio import Redis

from agent.config import load_config
from cli.commands import printing
from cli.redis_server import RedisServer
from drivers import build_driver
from drivers.base import Outcome
from drivers.emulators.brother import BrotherPrinter
from drivers.emulators.fronts import TcpFront
from protocol.keys import Keys
from protocol.store import Store
from tests.support.agents import at_least, enqueue_many, eq, printed_count, running_agent
from tests.support.processes import ROOT
from tests.support.waiting import wait_until


@contextlib.asynccontextmanager
async def brother(name: str, print_time: float = 0.05) -> AsyncIterator[tuple[BrotherPrinter, dict[str, Any]]]:
    printer = BrotherPrinter(name, print_time=print_time)
    await printer.start()
    front = TcpFront(printer)
    host, port = await front.start()
    driver = {
        "language": "brother_ql",
        "transport": "tcp",
        "host": host,
        "port": port,
        "model": "QL-820NWB",
        "label": {"width_mm": 62, "height_mm": 100, "dpi": 300},
        "io_timeout": 0.5,
        "print_timeout": 5,
    }
    try:
        yield printer, driver
    finally:
        await front.stop()
        await printer.stop()


def _config(path: Path, venue: str, url: str, name: str, driver: dict[str, Any]) -> Path:
    config = {
        "venue": venue,
        "printer": {"name": name, "location": f"desk of {name}", "driver": driver},
        "redis": {"url": url},
        "http": {"listen": "off"},
    }
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


async def _test_print(config: Path) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "agent", "test-print", "-c", str(config), cwd=ROOT,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    out, _ = await asyncio.wait_for(proc.communicate(), 90)
    return proc.returncode or 0, out.decode()


async def test_test_print_beside_a_busy_agent_goes_through_it_and_never_to_a_peer(
    tmp_path: Path, redis_server: RedisServer, redis: Redis, venue: str
) -> None:
    k = Keys(venue)
    # The peer steals any pinned badge at once: a test badge it took would show in its print log.
    async with (
        brother("hall-b-1") as (b1, d1),
        brother("hall-b-2") as (b2, d2),
        running_agent(tmp_path, venue, redis_server.url, "hall-b-1", printer__driver=d1),
        running_agent(tmp_path, venue, redis_server.url, "hall-b-2", printer__driver=d2, timing__affinity_wait=0),
    ):
        await wait_until(lambda: at_least(redis.zcard(k.hb), 2))
        store = Store(redis, venue)
        await enqueue_many(store, 8, "att", printer="hall-b-1")
        config = _config(tmp_path / "hall-b-1-cli.yaml", venue, redis_server.url, "hall-b-1", d1)
        for _ in range(3):
            code, out = await _test_print(config)
            assert code == 0, out
            assert "the test badge goes through it" in out and "test badge: printed" in out, out
        await wait_until(lambda: eq(printed_count(redis, venue), 11))
    tests = [e for e in b1.printed() if str(e.get("attendee_id", "")).startswith("TEST-")]
    assert len(tests) == 3
    assert not [e for e in b2.printed() if str(e.get("attendee_id", "")).startswith("TEST-")]
    assert len(b1.printed()) + len(b2.printed()) == 11 and not b1.printed(False) and not b2.printed(False)
    flagged = [job for job in await redis.keys(f"{k.prefix}job:*") if await redis.hget(job, "maybe_printed") == b"1"]
    assert flagged == []


async def test_twenty_test_prints_in_a_row_beside_an_idle_agent_and_with_none(
    tmp_path: Path, redis_server: RedisServer, redis: Redis, venue: str
) -> None:
    async with brother("hall-b-1") as (printer, driver):
        config = load_config(_config(tmp_path / "cli.yaml", venue, redis_server.url, "hall-b-1", driver))
        said: list[str] = []
        for _ in range(20):
            outcome, reason = await printing.test_print_badge(
                config, build_driver(config.printer.driver, "x"), None, said.append
            )
            assert outcome is Outcome.PRINTED, reason
        assert said.count("no agent of hall-b-1 is running: printing directly") == 20
        async with running_agent(tmp_path, venue, redis_server.url, "hall-b-1", printer__driver=driver):
            await wait_until(lambda: at_least(redis.zcard(Keys(venue).hb), 1))
            for _ in range(20):
                outcome, reason = await printing.test_print_badge(
                    config, build_driver(config.printer.driver, "x"), None, said.append
                )
                assert outcome is Outcome.PRINTED, reason
                assert "the agent of hall-b-1 printed it" in reason
        assert len(printer.printed()) == 40 and not printer.printed(False)
