"""The agent's connections pack commands with hiredis: the same bytes as redis-py's own packer, the same errors."""

from __future__ import annotations

import pytest
from redis.asyncio.connection import Connection
from redis.exceptions import DataError

from agent.config import RedisConfig
from agent.connection import make_redis
from agent.redis_server import RedisServer

ARGS: list[tuple[object, ...]] = [
    ("SET", b"badge:{v}:k", "naïve ☃", "PX", 1000),
    ("EVALSHA", "a" * 40, 2, b"k1", b"k2", 0, -3, 1.5e-7, 1e20, 10**20, 0.1),
    ("CONFIG GET", "maxmemory"),
    (b"CONFIG GET", b"maxmemory"),
    ("SET", b"k", memoryview(b"view")),
    ("SET", b"k", b"x" * 10_000),
]


@pytest.mark.parametrize("args", ARGS)
def test_the_same_bytes_as_redis_py(args: tuple[object, ...]) -> None:
    ours = make_redis(RedisConfig(url="redis://127.0.0.1:1"), 1.0).connection_pool.make_connection()
    theirs = Connection()
    assert type(ours) is not Connection
    assert b"".join(ours.pack_command(*args)) == b"".join(bytes(x) for x in theirs.pack_command(*args))


@pytest.mark.parametrize("bad", [None, True, object()])
def test_the_same_error_for_what_cannot_be_sent(bad: object) -> None:
    ours = make_redis(RedisConfig(url="redis://127.0.0.1:1"), 1.0).connection_pool.make_connection()
    with pytest.raises(DataError):
        ours.pack_command("SET", b"k", bad)


async def test_commands_and_pipelines_round_trip(redis_server: RedisServer) -> None:
    client = make_redis(RedisConfig(url=redis_server.url), 1.0)
    try:
        assert await client.set("packing:k", "naïve ☃")
        assert await client.get("packing:k") == "naïve ☃".encode()
        async with client.pipeline(transaction=False) as pipe:
            pipe.set(b"packing:n", 41)
            pipe.incrbyfloat(b"packing:n", 1.5)
            pipe.execute_command("CONFIG GET", "maxmemory")
            replies = await pipe.execute()
        assert replies[1] == 42.5 and {b"maxmemory", "maxmemory"} & set(replies[2])
    finally:
        await client.aclose()
