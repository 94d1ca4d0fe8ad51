"""A real agent process, the Brother driver over TCP, the Brother emulator loaded with the wrong roll: the badge
stays queued (nothing sent, no attempt spent), /healthz and the health in Redis (what `badge-agent status` shows)
name the roll, and once the right roll is in, the badge prints exactly once."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import aiohttp
from redis.asyncio import Redis

from cli.redis_server import RedisServer, free_port
from drivers.emulators.brother import BrotherPrinter
from drivers.emulators.fronts import TcpFront
from protocol.keys import Keys
from protocol.store import Store
from tests.support.agents import enqueue_many, running_process, write_agent_config
from tests.support.waiting import wait_until

WRONG = "wrong roll: loaded 29 mm endless, config expects 62 mm endless"


async def _healthz(port: int) -> tuple[int, dict[str, object]]:
    try:
        async with aiohttp.ClientSession() as http, http.get(f"http://127.0.0.1:{port}/healthz") as resp:
            return resp.status, await resp.json()
    except aiohttp.ClientError:
        return 0, {}


async def test_wrong_roll_keeps_the_badge_queued_and_the_right_roll_prints_it_once(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    printer = BrotherPrinter("desk-1", print_time=0.05)
    printer.roll = (29, False, 0)  # a volunteer loaded DK-22210 (29 mm) instead of the event's 62 mm
    await printer.start()
    front = TcpFront(printer)
    host, port = await front.start()
    http_port = free_port()
    driver = {"language": "brother_ql", "transport": "tcp", "host": host, "port": port, "model": "QL-820NWB"}
    config = write_agent_config(
        tmp_path / "desk-1.yaml",
        venue,
        redis_server.url,
        "desk-1",
        printer__driver={**driver, "io_timeout": 1.0, "print_timeout": 10.0},
        http__listen=f"127.0.0.1:{http_port}",
    )
    k = Keys(venue)
    [job] = await enqueue_many(Store(redis, venue), 1, "roll-")
    try:
        with running_process(config):

            async def healthz_names_the_roll() -> bool:
                status, body = await _healthz(http_port)
                return status == 503 and WRONG in str(body.get("reason"))

            await wait_until(healthz_names_the_roll, timeout=30)
            health = json.loads(await redis.get(k.health("desk-1")) or b"{}")
            assert WRONG in json.dumps(health), health
            await asyncio.sleep(1.0)  # the behaviour under test: over many probe rounds, the badge must not move
            assert await redis.hget(k.job(job), "state") == b"queued"
            assert await redis.hget(k.job(job), "attempts") == b"0"
            assert await redis.lrange(k.pool, 0, -1) == [job.encode()]
            assert printer.log == [] and printer.printed() == []

            printer.roll = (62, False, 0)  # the right roll
            await wait_until(lambda: redis.exists(k.done(job)), timeout=30)
            await wait_until(lambda: _ok(http_port), timeout=15)
        assert await redis.hget(k.job(job), "state") == b"printed"
        assert await redis.hget(k.job(job), "attempts") == b"1"
        assert [e["attendee_id"] for e in printer.printed()] == ["roll-0"]
        assert printer.printed(complete=False) == []
        log = config.with_suffix(".log").read_text()
        assert "Traceback" not in log
    finally:
        await front.stop()
        await printer.stop()


async def _ok(port: int) -> bool:
    status, _ = await _healthz(port)
    return status == 200
