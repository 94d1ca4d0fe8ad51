"""Shared fixtures: a real redis-server per test session (never a mock), a fresh venue per test."""

from __future__ import annotations

import itertools
import os
from collections.abc import AsyncIterator, Iterator

import pytest
from redis.asyncio import Redis

from agent.redis_server import RedisServer

_venues = itertools.count()


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("redis"), appendonly=True)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def venue() -> str:
    return f"t{os.getpid()}-{next(_venues)}"


@pytest.fixture
async def redis(redis_server: RedisServer) -> AsyncIterator[Redis]:
    client = Redis.from_url(redis_server.url, decode_responses=False)
    yield client
    await client.aclose()
